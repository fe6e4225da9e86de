"""`drift` results: per judge and for the panel, the change of accuracy between two runs (labels) and the
label-free test of their vote patterns; with --fail-on-drift, exit 1 and one line per drifted judge on stderr.

The document is built once, typed (judges/drift_document.py: docs/schema/drift.json); the table, Markdown, CSV and
the gate's lines read its typed attributes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..document_types import plain
from ..formats import output_columns
from ..judges.drift_document import DriftDocument, DriftGateResult, DriftRowResult
from . import Gated, Verdict
from .render import to_csv, to_json
from .views import BLANK, Block, Chart, Lines, Series, TableView, pct

CSV_COLUMNS = output_columns("drift")


def _points(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f}"


def _why(r: DriftRowResult, max_change: float) -> str:
    """What says the judge (or the panel) drifted, in words."""
    parts = []
    lab = r.labels
    if lab.drifted and lab.low is not None and lab.high is not None:
        beyond = f" beyond ±{100 * max_change:g} pts" if max_change else ""
        parts.append(f"accuracy changed by {_points(lab.change)} pts, interval [{_points(lab.low)}, {_points(lab.high)}] "
                     f"excludes 0{beyond}")
    if r.patterns.drifted:
        parts.append(f"vote patterns differ (permutation p = {r.patterns.p_value:.4f}, Holm {r.patterns.p_holm:.4f})")
    return "; ".join(parts)


def drift_view(d: DriftDocument) -> TableView:
    level = round(100 * d.settings.confidence_level)
    rows = []
    for r in d.rows:
        lab, t = r.labels, r.patterns
        iv = "—" if lab.low is None else f"[{_points(lab.low)}, {_points(lab.high)}]"
        rows.append((r.name, f"{pct(lab.old.accuracy)} ({lab.old.items})", f"{pct(lab.new.accuracy)} ({lab.new.items})",
                     _points(lab.change), iv, f"{t.p_holm:.3f}", "DRIFT" if r.drifted else "ok"))
    how = (f"paired on {d.shared_labeled} items labeled alike in both runs" if d.paired
           else "unpaired (fewer than half of the labeled items are in both runs with the same gold)")
    st = d.settings
    caption = (f"change new - old in points, {how}; intervals simultaneous over the judges and the panel (each at "
               f"{100 * st.interval_level:.2f}%); p: the label-free permutation test on all items, Holm-adjusted, drift "
               f"when p <= {st.test_alpha:g} ({st.permutations} permutations, seed {st.seed}); the gate's false-alarm rate "
               f"is at most {pct(st.false_alarm)} in all. panel: the plurality of all judges (a tie is wrong)")
    return TableView(title=f"drift {d.dataset}: {d.runs[0].items} items ({d.runs[0].labeled_items} labeled) -> "
                           f"{d.runs[1].items} items ({d.runs[1].labeled_items} labeled), {d.shared_items} shared",
                     columns=("judge", "old accuracy (items)", "new accuracy (items)", "change", f"{level}% interval (joint)",
                              "p (label-free)", ""),
                     rows=tuple(rows), caption=caption, align="lrrrrrl")


def drift_chart(d: DriftDocument) -> Chart:
    """The change of accuracy per judge and the panel, with its interval (HTML; a row without labels: none)."""
    rows = d.rows
    return Chart(kind="hbars", title=f"{d.dataset}: change of accuracy (new - old)", rows=tuple(r.name for r in rows),
                 series=(Series("change", tuple(r.labels.change for r in rows), tuple(r.labels.low for r in rows),
                                tuple(r.labels.high for r in rows)),),
                 x_label=f"change of accuracy, {round(100 * d.settings.confidence_level)}% simultaneous intervals",
                 caption="the label-free test's p-values are in the table")


def _gate_lines(d: DriftDocument) -> Lines | None:
    g = d.gate
    if not isinstance(g, DriftGateResult):
        return None
    return Lines((f"gate: {'ok, nothing drifted' if g.passed else 'FAIL, drifted: ' + ', '.join(g.drifted)}",))


def _row(d: DriftDocument, r: DriftRowResult) -> tuple[Any, ...]:
    lab, t = r.labels, r.patterns
    return (d.runs[0].source, d.runs[1].source, r.name, r.kind, lab.old.accuracy, lab.old.items, lab.new.accuracy,
            lab.new.items, lab.paired, lab.pairs, lab.change, lab.low, lab.high, lab.drifted, t.statistic, t.p_value,
            t.p_holm, t.drifted, r.drifted)


@dataclass(frozen=True)
class DriftReport(Gated):
    """One comparison old -> new; exit 1 when --fail-on-drift and anything drifted."""

    document: DriftDocument
    notes: tuple[str, ...] = ()

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = [drift_view(self.document), drift_chart(self.document)]
        gate = _gate_lines(self.document)
        return out + ([gate] if gate is not None else []) + [BLANK]

    def json(self) -> str:
        return to_json([plain(self.document)])

    def csv(self) -> str:
        return to_csv(CSV_COLUMNS, (_row(self.document, r) for r in self.document.rows))

    def _drifted(self) -> list[DriftRowResult]:
        gate = self.document.gate
        return [r for r in self.document.rows if r.drifted] if isinstance(gate, DriftGateResult) else []

    def verdicts(self) -> tuple[Verdict, ...]:
        """One per judge and the panel under --fail-on-drift (a JUnit case each); one passing case without it."""
        d = self.document
        if not isinstance(d.gate, DriftGateResult):
            return (Verdict(d.dataset, "", True),)
        m = d.settings.max_change
        return tuple(Verdict(f"{d.dataset}: {r.name}", "fail-on-drift", not r.drifted, _why(r, m) or "no drift")
                     for r in d.rows)

    @property
    def failures(self) -> tuple[str, ...]:
        """Lines for stderr at the end: each judge (or the panel) that drifted, when gated."""
        m = self.document.settings.max_change
        return tuple(f"gate failed: {self.document.dataset}: {r.name} drifted: {_why(r, m)}" for r in self._drifted())
