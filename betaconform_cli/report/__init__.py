"""The output layer: every result offers its views (format-neutral blocks), its JSON and its CSV; the CLI's one
emitter renders any of them as a table, JSON, CSV or Markdown, to stdout or a file.

views.py (blocks), render.py (the one JSON, CSV and Markdown writer), and a module per result: fit.py (fit,
report), transfer.py, sample.py, evaluate.py, judges.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from .results import Results as Results
from .views import Block


@dataclass(frozen=True)
class Verdict:
    """One dataset against one gate (fit/report --max-error, judges --max-error, score --min-score, sample's
    stopping rule), or a dataset with no gate (`gate` empty, passed). A JUnit test case; a line of the job
    summary. `reason`: the gate's own line (why it passed or failed)."""

    dataset: str
    gate: str
    passed: bool
    reason: str = ""


def gate_verdicts(datasets: Iterable[str], checks: Iterable[Any],
                  describe: Callable[[Any], str]) -> tuple[Verdict, ...]:
    """One per document (`datasets`: their names): its gate check (`describe(check)` names the gate), or a passing
    case when it has none. A check has `dataset`, `passed` and `line()` ("ok: ..." or "FAIL: ...", as gate.py
    writes it)."""
    by = {c.dataset: c for c in checks}
    out = []
    for name in datasets:
        c = by.get(str(name))
        if c is None:
            out.append(Verdict(str(name), "", True))
        else:
            out.append(Verdict(c.dataset, describe(c), c.passed, c.line()[5:] if not c.passed else c.line()[3:]))
    return tuple(out)


def gate_failures(checks: Iterable[Any]) -> tuple[str, ...]:
    """Lines for stderr at the end: each check that failed its gate."""
    return tuple(f"gate failed: {c.line()[5:]}" for c in checks if not c.passed)


def verdicts(report: Any) -> tuple[Verdict, ...]:
    """A result's verdicts: its own `verdicts()` where it has a gate; else one passing case per dataset it
    reports on (or, for a result that failed without saying which dataset, one case per dataset carrying its
    failure lines)."""
    own = getattr(report, "verdicts", None)
    if callable(own):
        return tuple(own())
    names = dataset_names(report)
    failures = tuple(getattr(report, "failures", ()))
    failed = bool(failures) or getattr(report, "exit_code", 0) != 0
    return tuple(Verdict(n, "", not failed, "; ".join(failures)) for n in names)


def dataset_names(report: Any) -> list[str]:
    """The datasets a result reports on, in order, each once."""
    names: list[str] = []
    docs = getattr(report, "documents", None)
    if docs is None and getattr(report, "document", None) is not None:
        docs = [report.document]
    for d in docs or ():
        name = d.get("dataset") if isinstance(d, dict) else getattr(d, "dataset", None)  # a dict, or a typed document
        if name is not None and str(name) not in names:
            names.append(str(name))
    ev = getattr(report, "evaluation", None)
    for name in getattr(ev, "datasets", ()) or ():
        if str(name) not in names:
            names.append(str(name))
    return names


class Verdictless(Results):
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


class Gated(Results):
    """For results that act on a verdict: exit code 1 when there is a failure line (a failed gate), else 0. The
    failure lines are, unless a result says otherwise, each of its `checks` (gate.py's) that failed its gate."""

    @property
    def failures(self) -> tuple[str, ...]:
        return gate_failures(getattr(self, "checks", ()))

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0


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

    # optional: `verdicts() -> tuple[Verdict, ...]`, one per dataset and gate, for a result with a gate (see
    # `verdicts` above); the JUnit file, the job summary and the HTML page read them

