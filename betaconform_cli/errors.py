"""The exception tree. The CLI catches `BetaConformError`, prints one line, exits 2."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def quote(value: object) -> str:
    """A name from the user's data (a judge, a dataset, an id) as a message quotes it: in quotes, with newlines,
    control characters and ANSI escapes written as escapes (Python's repr), so that it stays one visible token."""
    return repr(str(value))


def quote_all(values: Iterable[object]) -> str:
    """Several names, each quoted (a name holding ', ' stays one name)."""
    return ", ".join(quote(v) for v in values)


class BetaConformError(Exception):
    """Base class for every error a user can cause and fix."""


class InputError(BetaConformError):
    """A judgment file (or one line of it) cannot be read or does not validate.

    The message names the file, the line or row (1-based) and the field or column.
    """

    def __init__(self, path: str, message: str, line: int | None = None, field: str | None = None, unit: str = ""):
        self.path = path
        self.line = line
        self.field = field
        self.unit = unit
        self.reason = message
        where = path if line is None else (f"{path}:{line}" if not unit else f"{path}: {unit} {line}")
        if field is not None:
            where = f"{where}: {'column' if unit in ('row', 'column') else 'field'} '{field}'"
        super().__init__(f"{where}: {message}")


class ParamsError(BetaConformError):
    """A saved-fit or configuration YAML file is missing, unsafe or does not match its schema."""


class UsageError(BetaConformError):
    """An option value is out of its allowed range or options contradict each other."""


def placeholder(index: int) -> str:
    """The mark a ParameterError message puts where its `index`-th parameter's name goes. Not a format field: user
    text (an option's value, a file or judge name) is part of the message, and is never read as a template. The mark
    holds NUL, which no command-line argument and no file name can hold."""
    return f"\x00{index}\x00"


P0, P1, P2, P3 = (placeholder(i) for i in range(4))


class ParameterError(UsageError):
    """A parameter is out of its allowed range, or parameters contradict each other. The core names parameters as
    the library spells them (`confidence_level`); the CLI shows the option that sets each (`--confidence-level`).

    `message` names the parameters as P0, P1, ... (f"{P0}: cannot read {text!r}"); without P0 it follows the first
    one's name. The names are put in by plain replacement, never by str.format: braces and percent signs in the
    user's text stay what they are.
    """

    def __init__(self, params: str | tuple[str, ...], message: str):
        self.params = (params,) if isinstance(params, str) else tuple(params)
        self.template = message if P0 in message else f"{P0} {message}"
        super().__init__(self.render(str))

    @property
    def param(self) -> str:
        return self.params[0]

    def render(self, name: Callable[[str], str]) -> str:
        """The message with each parameter called `name(parameter)` (an option flag, a config field)."""
        text = self.template
        for i, p in enumerate(self.params):
            text = text.replace(placeholder(i), name(p))
        return text


class OutputError(BetaConformError):
    """An output cannot be written where asked (a directory, an input file, a special file)."""


class EmbeddingError(BetaConformError):
    """The embedding model cannot be loaded or embeddings do not match."""


class FitWarning(UserWarning):
    """An optimiser did not converge; the result is still returned, marked converged=False."""


def fault_text(exc: BaseException, where: str | None = None) -> str | None:
    """What went wrong outside this program, as one line, for an exception raised by the environment: a file or
    stream that cannot be opened, read or written (permissions, a full disk, a closed pipe), a truncated or corrupt
    compressed stream, bytes that are not UTF-8, memory that ran out. None for anything else: a bug, which keeps its
    traceback. Readers turn these into an InputError naming the file; the CLI's boundary is the net for the rest.

    An EOFError is a truncated file here, never Ctrl-C (click would read it as one: "interrupted", exit 130).
    `where`: the file the caller's message names already (its name is then not repeated)."""
    import zlib

    if isinstance(exc, OSError):
        what = exc.strerror or str(exc) or type(exc).__name__
        if type(exc).__name__ == "BadGzipFile":
            what = f"not a valid gzip stream ({exc})"
        named = exc.filename if exc.filename not in (None, "") and str(exc.filename) != where else None
        return f"{named}: {what}" if named is not None and str(named) not in what else what
    if isinstance(exc, EOFError):
        return f"the data ends too early: a truncated or empty file ({exc})" if str(exc) else \
            "the data ends too early: a truncated or empty file"
    if isinstance(exc, zlib.error):
        return f"corrupt compressed data ({exc})"
    if type(exc).__name__ == "LZMAError":
        return f"corrupt compressed data ({exc})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at offset {exc.start})"
    if isinstance(exc, MemoryError):
        return "out of memory: this input or these options need more memory than this process may use"
    return None
