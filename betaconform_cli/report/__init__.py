"""The output layer: every result offers its views (format-neutral blocks), its JSON and its CSV; the CLI's one
emitter renders any of them as a table, JSON, CSV or Markdown, to stdout or a file.

views.py (blocks), render.py (the one JSON, CSV and Markdown writer), and a module per result: fit.py (fit,
report), transfer.py, sample.py, evaluate.py, judges.py.
"""

from __future__ import annotations

from typing import Protocol

from .views import Block

FORMATS = ("table", "json", "csv", "markdown")
EXTENSIONS = {".json": "json", ".jsonl": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".txt": "table"}


class Verdictless:
    """For results with no verdict to act on: no messages before or after, exit code 0."""

    @property
    def notes(self) -> tuple[str, ...]:
        return ()

    @property
    def failures(self) -> tuple[str, ...]:
        return ()

    @property
    def exit_code(self) -> int:
        return 0


class Report(Protocol):
    """What every result offers the emitter."""

    def blocks(self, markdown: bool = False) -> list[Block]: ...

    def json(self) -> str: ...

    def csv(self) -> str: ...

    @property
    def notes(self) -> tuple[str, ...]: ...  # messages for stderr, before the output

    @property
    def failures(self) -> tuple[str, ...]: ...  # messages for stderr, after the output (a failed gate)

    @property
    def exit_code(self) -> int: ...
