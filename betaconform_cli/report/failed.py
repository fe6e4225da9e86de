"""A batch's result with the inputs that failed (failed_inputs.py, issue 26): the command's own result for the good
inputs, and each bad one as an error row in every output -- one more JSON document, a CSV row with its error in an
`error` column (added only then), a table of the failed inputs (terminal, Markdown, HTML), a failing JUnit case
and job-summary line -- and its one-line error on stderr after the output.

The exit code is 2 when an input failed, whatever the gates said of the others: 2 says "an input was not
analysed", and no gate verdict on the rest can stand for it (a CI job must not read a passing gate on three files
as a pass on four); a gate that failed on a good input is still printed and still in the JUnit file and the
summary, so both failures are seen. Everything else (saved fits, `interval()`, `documents`) is the inner result's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from ..escape import csv_cell
from ..failed_inputs import InputFailure
from . import Results, Verdict, verdicts
from .render import to_json
from .views import Block, TableView

FAILED_EXIT = 2  # bad input, as for one bad file (the CLI's usage and input errors)
R = TypeVar("R")


def with_failures(report: R, failed: Sequence[InputFailure]) -> R:
    """`report` as it is when nothing failed, else wrapped with its failed inputs: it answers every attribute of
    the inner result (a script's `result.interval()`, `result.documents`), so it is typed as one."""
    return report if not failed else cast(R, WithFailures(report, tuple(failed)))


@dataclass(frozen=True)
class WithFailures(Results):
    """The inner result (every attribute not defined here is its own) and the inputs that failed."""

    inner: Any
    failed_inputs: tuple[InputFailure, ...]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def blocks(self, markdown: bool = False) -> list[Block]:
        rows = tuple((f.source, f.error) for f in self.failed_inputs)
        table = TableView(title=f"inputs that failed ({len(rows)}): not analysed, exit code {FAILED_EXIT}",
                          columns=("input", "error"), rows=rows, align="ll", summary=True)
        return [*self.inner.blocks(markdown), table]

    def json(self) -> str:
        import msgspec
        import orjson

        text = self.inner.json().strip()
        try:
            docs: list[Any] = [orjson.loads(text)] if text else []
        except orjson.JSONDecodeError:  # several documents, one a line
            docs = [orjson.loads(line) for line in text.splitlines() if line.strip()]
        return to_json([*docs, *(msgspec.to_builtins(f) for f in self.failed_inputs)])

    def csv(self) -> str:
        """The inner CSV with an `error` column: empty on its rows, the error on one row per failed input (its
        dataset in the first column)."""
        from ..formats import output_table_of

        rows = list(csv.reader(io.StringIO(self.inner.csv())))
        header = [*(rows[0] if rows else ["dataset"]), "error"]
        if output_table_of(header) is None:
            raise ValueError(f"CSV header {','.join(header)!r} is not a registered output table")
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        w.writerows([*r, ""] for r in rows[1:])
        blank = [""] * (len(header) - 2)
        w.writerows([csv_cell(f.dataset), *blank, csv_cell(f.error)] for f in self.failed_inputs)
        return buf.getvalue()

    def verdicts(self) -> tuple[Verdict, ...]:
        """The inner result's, and a failing case per failed input (the JUnit file, the job summary, HTML)."""
        return (*verdicts(self.inner), *(Verdict(f.dataset, "input", False, f.error) for f in self.failed_inputs))

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(self.inner.notes)

    @property
    def failures(self) -> tuple[str, ...]:
        """Stderr after the output: the inner result's (a failed gate), then each failed input's one-line error."""
        return (*self.inner.failures, *(f"error: {f.error}" for f in self.failed_inputs))

    @property
    def exit_code(self) -> int:
        return FAILED_EXIT
