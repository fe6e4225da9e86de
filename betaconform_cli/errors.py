"""The exception tree. The CLI catches `BetaConformError`, prints one line, exits 2."""

from __future__ import annotations


class BetaConformError(Exception):
    """Base class for every error a user can cause and fix."""


class InputError(BetaConformError):
    """A judgment file (or one line of it) cannot be read or does not validate.

    The message names the file, the line (1-based) and the field.
    """

    def __init__(self, path: str, message: str, line: int | None = None, field: str | None = None):
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        where = path if line is None else f"{path}:{line}"
        if field is not None:
            where = f"{where}: field '{field}'"
        super().__init__(f"{where}: {message}")


class ParamsError(BetaConformError):
    """A saved-fit YAML file is missing, unsafe or does not match its schema."""


class UsageError(BetaConformError):
    """An option value is out of its allowed range or options contradict each other."""


class EmbeddingError(BetaConformError):
    """The embedding model cannot be loaded or embeddings do not match."""


class FitWarning(UserWarning):
    """An optimiser did not converge; the result is still returned, marked converged=False."""
