"""`score` results: per dataset the judge-corrected pass rate with its interval, what the judges alone say (and how
far off they are), what the labels alone say; with --compare the difference a - b of two systems on shared items.

Each dataset's document is built once, typed (score/document.py: docs/schema/score.json), with its gate check;
the JSON encodes it, and the table, Markdown, CSV, the chart and the gate's lines read its typed attributes (so that
mypy checks every field they read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..document_types import plain
from ..formats import output_columns
from ..gate import ScoreCheck
from ..score.document import CompareDocument, Difference, Estimate, ScoreDocument, ScoreGateResult
from . import Gated, Verdict, gate_verdicts
from .render import to_csv, to_json
from .views import BLANK, Block, Chart, Lines, Series, TableView, pct

CSV_COLUMNS = output_columns("score")  # registered in formats.py, so that a folder skips the report
COMPARE_CSV_COLUMNS = output_columns("score --compare")


def _level(d: ScoreDocument | CompareDocument) -> str:
    return f"{100 * float(d.confidence_level):.4g}"  # 90, 97.5 (--by's Bonferroni level), never rounded to 98


def _iv(iv: Estimate | Difference) -> str:
    return f"[{pct(iv.low)}, {pct(iv.high)}]"


def _points(x: float) -> str:
    return f"{100 * x:+.1f} pts"


def _points_iv(iv: Difference) -> str:
    return f"[{100 * iv.low:+.1f}, {100 * iv.high:+.1f}]"


def heading(d: ScoreDocument) -> str:
    clusters = f", {d.clusters} labeled clusters" if d.clusters is not None else ""
    return (f"{d.dataset}: {d.labeled_items} labeled + {d.unlabeled_items} unlabeled items, {d.judges} judges"
            f"{clusters}; pass = {d.positive!s}")


def _dataset_blocks(d: ScoreDocument, markdown: bool) -> list[Block]:
    """A dataset's heading, its note on the items without a verdict (when it has some), table and chart."""
    note = [Lines((d.no_verdict_note,))] if isinstance(d.no_verdict_note, str) else []
    return [Lines((heading(d),), heading=markdown), *note, score_view(d), score_chart(d)]


def score_view(d: ScoreDocument) -> TableView:
    """Corrected pass rate, the judges' majority and its bias, labels only: estimate and interval each."""
    bias = d.judges_say.bias
    rows = (
        ("corrected pass rate", pct(d.score.estimate), _iv(d.score), "judges + labels"),
        ("judges say (majority)", pct(d.judges_say.estimate), "—",
         f"the {d.labeled_items + d.unlabeled_items - d.no_verdict_items} judged items" if d.no_verdict_items else "all items, no labels"),
        ("  off by (judges - corrected)", _points(bias.estimate), _points_iv(bias),
         "the judges' bias on the judged items" if d.no_verdict_items else "the judges' bias"),
        ("labels only", pct(d.labels_only.estimate), _iv(d.labels_only), "Wilson, labeled items"),
    )
    return TableView(
        title=f"pass rate of {d.dataset}",
        columns=("", "estimate", f"{_level(d)}% interval", "from"),
        rows=rows,
        caption=f"interval for {d.target_text} (--target {d.target}); method: {d.method}, lambda = {d.lambda_:.2f}",
        align="lrrl",
    )


def score_chart(d: ScoreDocument) -> Chart:
    """Judges say vs corrected vs labels only, as bars with their intervals (HTML)."""
    s, lo = d.score, d.labels_only
    return Chart(
        kind="hbars",
        title=f"{d.dataset}: pass rate",
        rows=("judges say", "corrected", "labels only"),
        series=(Series("pass rate", (d.judges_say.estimate, s.estimate, lo.estimate),
                       (None, s.low, lo.low), (None, s.high, lo.high)),),
        x_label=f"pass rate ({d.positive!s}), {_level(d)}% intervals",
        caption="judges say: the majority of the judges over all items (no interval: it is what they said)",
    )


def compare_view(d: CompareDocument) -> TableView:
    a, b = d.a, d.b
    rows = (
        (f"a: {a.dataset}", pct(a.score.estimate), _iv(a.score)),
        (f"b: {b.dataset}", pct(b.score.estimate), _iv(b.score)),
        ("a - b", _points(d.difference.estimate), _points_iv(d.difference)),
    )
    return TableView(
        title=f"a - b on {d.shared_items} shared items ({d.labeled_both} labeled in both), paired by item id",
        columns=("", "corrected pass rate", f"{_level(d)}% interval"),
        rows=rows,
        caption=f"interval for {a.target_text} (--target {d.target}); pass = {a.positive!s}",
        align="lrr",
    )


def _gate_line(d: ScoreDocument | CompareDocument) -> Lines | None:
    g = d.gate
    if not isinstance(g, ScoreGateResult):
        return None
    what = "difference" if isinstance(d, CompareDocument) else "score"
    on = "corrected " + what if g.on == "estimate" else f"lower end of the corrected {what}'s interval"
    return Lines((f"gate: {on} {pct(g.value, 2)} {'>=' if g.passed else '<'} minimum {pct(g.min_score, 2)}: "
                  f"{'ok' if g.passed else 'FAIL'}",))


def _score_row(d: ScoreDocument) -> tuple[Any, ...]:
    s, say, lo = d.score, d.judges_say, d.labels_only
    return (d.dataset, d.positive, s.estimate, s.low, s.high, say.estimate, say.bias.estimate, say.bias.low,
            say.bias.high, lo.estimate, lo.low, lo.high, d.labeled_items, d.unlabeled_items, d.judges, d.clusters,
            d.target, d.confidence_level, d.method, d.lambda_, d.no_verdict_items, d.no_verdict_labeled)


def _compare_row(d: CompareDocument) -> tuple[Any, ...]:
    diff = d.difference
    return (d.a.dataset, d.b.dataset, d.a.positive, diff.estimate, diff.low, diff.high, d.a.score.estimate,
            d.b.score.estimate, d.shared_items, d.labeled_both, d.target, d.confidence_level)


@dataclass(frozen=True)
class ScoreReport(Gated):
    """One document per dataset (or one comparison); exit 1 when a --min-score gate fails."""

    documents: tuple[ScoreDocument | CompareDocument, ...]
    checks: tuple[ScoreCheck, ...] = ()
    notes: tuple[str, ...] = ()

    def interval(self, dataset: str | None = None) -> tuple[float, float, float]:
        """(estimate, low, high): the judge-corrected pass rate of the one dataset (or `dataset`), or with
        `compare` the difference a - b, at the level `score` was given (`confidence_level=`)."""
        from .fit import one_document

        d = one_document(self.documents, dataset)
        e = d.difference if isinstance(d, CompareDocument) else d.score
        return float(e.estimate), float(e.low), float(e.high)

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = []
        for d in self.documents:
            if isinstance(d, CompareDocument):
                out.append(compare_view(d))
                for side in (d.a, d.b):
                    out += _dataset_blocks(side, markdown)
            else:
                out += _dataset_blocks(d, markdown)
            gate = _gate_line(d)
            if gate is not None:
                out.append(gate)
            out.append(BLANK)
        return out

    def json(self) -> str:
        return to_json([plain(d) for d in self.documents])

    def csv(self) -> str:
        documents = self.documents
        if documents and isinstance(documents[0], CompareDocument):
            return to_csv(COMPARE_CSV_COLUMNS, (_compare_row(d) for d in documents if isinstance(d, CompareDocument)))
        return to_csv(CSV_COLUMNS, (_score_row(d) for d in documents if isinstance(d, ScoreDocument)))

    def verdicts(self) -> tuple[Verdict, ...]:
        """One per dataset (or comparison): its --min-score gate, or a passing case when there is no gate."""
        return gate_verdicts([d.dataset for d in self.documents], self.checks,
                             lambda c: f"min-score {100 * c.min_score:g}%" + (" on the estimate" if c.on == "estimate" else ""))
