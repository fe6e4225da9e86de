"""The exception tree. The CLI catches `BetaConformError`, prints one line, exits 2."""

from __future__ import annotations

from collections.abc import Callable


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


class ParameterError(UsageError):
    """A parameter is out of its allowed range, or parameters contradict each other. The core names parameters as
    the library spells them (`confidence_level`); the CLI shows the option that sets each (`--confidence-level`).

    `message` names the parameters as {0}, {1}, ...; without any placeholder it follows the first one's name.
    """

    def __init__(self, params: str | tuple[str, ...], message: str):
        self.params = (params,) if isinstance(params, str) else tuple(params)
        self.template = message if "{0}" in message else "{0} " + message.replace("{", "{{").replace("}", "}}")
        super().__init__(self.render(str))

    @property
    def param(self) -> str:
        return self.params[0]

    def render(self, name: Callable[[str], str]) -> str:
        """The message with each parameter called `name(parameter)` (an option flag, a config field)."""
        return self.template.format(*(name(p) for p in self.params))


class OutputError(BetaConformError):
    """An output cannot be written where asked (a directory, an input file, a special file)."""


class EmbeddingError(BetaConformError):
    """The embedding model cannot be loaded or embeddings do not match."""


class FitWarning(UserWarning):
    """An optimiser did not converge; the result is still returned, marked converged=False."""
