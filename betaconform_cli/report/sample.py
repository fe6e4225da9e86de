"""`sample` results: a live decision (stop, or keep labeling and which items next) and replays of a rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import Verdict, Verdictless
from .fit import SCHEMA, FitReport
from .render import to_csv, to_json
from .views import Block, Lines, TableView

REPLAY_COLUMNS = ("run", "stopped", "samples", "margin")


@dataclass(frozen=True)
class ReplayReport(Verdictless):
    """Replays of a stopping rule on one fully labeled pool: one document per run, then a summary document."""

    dataset: str
    source: str
    pool_items: int
    seed: int
    rule: Mapping[str, Any]  # {"rule", "rule_settings", "theoretical_samples"}
    runs: tuple[dict[str, Any], ...]  # ReplayRun.to_dict() of each run
    summary: Mapping[str, Any]

    @property
    def documents(self) -> list[dict[str, Any]]:
        head = {"schema": SCHEMA, "command": "sample", "mode": "replay", "dataset": self.dataset, "source": self.source,
                "pool_items": self.pool_items, "seed": self.seed, **self.rule}
        last = {"schema": SCHEMA, "command": "sample", "mode": "replay", "summary": dict(self.summary),
                "dataset": self.dataset, **self.rule, "seed": self.seed}
        return [{**head, **r} for r in self.runs] + [last]

    def blocks(self, markdown: bool = False) -> list[Block]:
        name = self.rule["rule"]
        view = TableView(
            title=f"{self.dataset}: {len(self.runs)} replay(s) of the {name} rule ({self.pool_items} items in the pool)",
            columns=("run", "stopped", "samples", "margin (pts)"),
            rows=tuple((str(r["run"]), "yes" if r["stopped"] else "pool exhausted", str(r["samples"]),
                        "—" if r["margin"] is None else f"{r['margin']:.2f}") for r in self.runs),
        )
        s = self.summary
        lines = [f"samples: mean {s['samples']['mean']:.1f}, sd {s['samples']['sd']:.1f}"]
        if s["margin"]["mean"] is not None:
            lines.append(f"margin: mean {s['margin']['mean']:.2f} points, sd {s['margin']['sd']:.2f}")
        if self.rule.get("theoretical_samples") is not None:
            lines.append(f"Proposition 4.1: {self.rule['theoretical_samples']}")
        return [view, Lines(tuple(lines))]

    @property
    def notes(self) -> tuple[str, ...]:
        return theory_note(self.rule)

    def json(self) -> str:
        return to_json(self.documents, lines=True)

    def csv(self) -> str:
        return to_csv(REPLAY_COLUMNS, ([r["run"], r["stopped"], r["samples"], r["margin"]] for r in self.runs))



def theory_note(rule: Mapping[str, Any]) -> tuple[str, ...]:
    theory = rule.get("theoretical_samples")
    if theory is None:
        return ()
    settings = rule["rule_settings"]
    return (f"Proposition 4.1: r >= {theory} for xi = {settings['xi']:g}, tau = {settings['tau']:g}",)


@dataclass(frozen=True)
class LiveReport:
    """A live decision: the fit on the labels so far, whether to stop (and why), and the next items to label."""

    document: dict[str, Any]
    next_lines: tuple[bytes, ...] = ()  # the next pool items, as their raw lines
    show_next: bool = True  # list the next ids on the terminal (not when they go to a file)

    @property
    def stopped(self) -> bool:
        return bool(self.document["stopped"])

    @property
    def message(self) -> str:
        return str(self.document["message"])

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = [Lines((self.message,))]
        if self.stopped:
            out += FitReport((self.document,), chart=False).blocks(markdown)
        elif self.document["next_ids"] and self.show_next:
            out.append(Lines(("next: " + " ".join(self.document["next_ids"]),), terminal_only=True))
        return out

    @property
    def notes(self) -> tuple[str, ...]:
        return theory_note(self.document)

    def json(self) -> str:
        return to_json([self.document])

    def csv(self) -> str:
        return FitReport((self.document,), chart=False).csv()

    @property
    def failures(self) -> tuple[str, ...]:
        return ()

    def verdicts(self) -> tuple[Verdict, ...]:
        """The stopping rule as a gate: passed when it says stop (exit 0), failed with its message when it says
        continue (exit 1)."""
        rule = str(self.document.get("rule") or "stopping")
        return (Verdict(str(self.document.get("dataset", "")), f"{rule} rule", self.stopped, self.message),)

    @property
    def exit_code(self) -> int:
        return 0 if self.stopped else 1
