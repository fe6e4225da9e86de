"""`sample` results: a live decision (stop, or keep labeling and which items next) and replays of a rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from ..document_types import plain
from ..formats import output_columns
from . import Results, Verdict, Verdictless
from .fit import FitReport
from .render import to_csv, to_json
from .views import Block, Lines, TableView

if TYPE_CHECKING:  # the stopping package imports the fit (scipy): not at the CLI's start
    from ..stopping.document import ReplaySummary

REPLAY_COLUMNS = output_columns("sample --replay")  # registered in formats.py, so that a folder skips the report


@dataclass(frozen=True)
class ReplayReport(Verdictless):
    """Replays of a stopping rule on one fully labeled pool: one document per run, then a summary document
    (stopping/document.py builds them; the views read their attributes)."""

    runs: tuple[Struct, ...]  # stopping.document.run_type(): one per run
    overall: ReplaySummary  # the replays' summary document (summary() is the table as text, as every result's)

    @property
    def documents(self) -> list[Struct]:
        return [*self.runs, self.overall]

    @property
    def rule(self) -> dict[str, Any]:
        s = self.overall
        return {"rule": s.rule, "rule_settings": s.rule_settings, "theoretical_samples": s.theoretical_samples}

    def blocks(self, markdown: bool = False) -> list[Block]:
        runs: list[Any] = list(self.runs)  # stopping.document.run_type(): built from the registry's columns
        pool_items = runs[0].pool_items if runs else 0
        view = TableView(
            title=f"{self.overall.dataset}: {len(runs)} replay(s) of the {self.overall.rule} rule ({pool_items} items in the pool)",
            columns=("run", "stopped", "samples", "margin (pts)"),
            rows=tuple((str(r.run), "yes" if r.stopped else "pool exhausted", str(r.samples),
                        "—" if r.margin is None else f"{r.margin:.2f}") for r in runs),
        )
        s = self.overall.summary
        lines = [f"samples: mean {s.samples.mean:.1f}, sd {s.samples.sd:.1f}"]
        if s.margin.mean is not None:
            lines.append(f"margin: mean {s.margin.mean:.2f} points, sd {s.margin.sd:.2f}")
        if self.overall.theoretical_samples is not None:
            lines.append(f"Proposition 4.1: {self.overall.theoretical_samples}")
        return [view, Lines(tuple(lines))]

    @property
    def notes(self) -> tuple[str, ...]:
        return theory_note(self.rule)

    def json(self) -> str:
        return to_json([plain(d) for d in self.documents], lines=True)

    def csv(self) -> str:
        runs: list[Any] = list(self.runs)
        return to_csv(REPLAY_COLUMNS, ([r.run, r.stopped, r.samples, r.margin] for r in runs))


def theory_note(rule: Mapping[str, Any]) -> tuple[str, ...]:
    theory = rule.get("theoretical_samples")
    if theory is None:
        return ()
    settings = rule["rule_settings"]
    return (f"Proposition 4.1: r >= {theory} for xi = {settings['xi']:g}, tau = {settings['tau']:g}",)


@dataclass(frozen=True)
class LiveReport(Results):
    """A live decision: the fit on the labels so far, whether to stop (and why), and the next items to label."""

    document: Any  # stopping.document.live_document_type()
    next_lines: tuple[bytes, ...] = ()  # the next pool items, as their raw lines
    show_next: bool = True  # list the next ids on the terminal (not when they go to a file)

    @property
    def stopped(self) -> bool:
        return bool(self.document.stopped)

    @property
    def message(self) -> str:
        return str(self.document.message)

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = [Lines((self.message,))]
        if self.stopped:
            out += FitReport((self.document,), chart=False).blocks(markdown)
        elif self.document.next_ids and self.show_next:
            out.append(Lines(("next: " + " ".join(self.document.next_ids),), terminal_only=True))
        return out

    @property
    def notes(self) -> tuple[str, ...]:
        d = self.document
        return theory_note({"theoretical_samples": d.theoretical_samples, "rule_settings": d.rule_settings})

    def json(self) -> str:
        return to_json([plain(self.document)])

    def csv(self) -> str:
        return FitReport((self.document,), chart=False).csv()

    @property
    def failures(self) -> tuple[str, ...]:
        return ()

    def verdicts(self) -> tuple[Verdict, ...]:
        """The stopping rule as a gate: passed when it says stop (exit 0), failed with its message when it says
        continue (exit 1)."""
        rule = str(self.document.rule or "stopping")
        return (Verdict(str(self.document.dataset), f"{rule} rule", self.stopped, self.message),)

    @property
    def exit_code(self) -> int:
        return 0 if self.stopped else 1
