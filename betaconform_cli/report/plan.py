"""`plan` results: per dataset, the labels each target needs (the error at k, the score), with an interval and a
cost; the JSON is the typed document (stopping/forecast.PlanDocument: docs/schema/plan.json)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..document_types import plain
from ..formats import output_columns
from ..stopping.forecast import Forecast, PlanDocument
from . import Verdictless
from .render import to_csv, to_json
from .views import BLANK, Block, Lines, TableView

CSV_COLUMNS = output_columns("plan")  # registered in formats.py, so that a folder skips the report


def _what(f: Forecast) -> str:
    if f.what == "score":
        return "score"
    return "error, every k" if f.k is None else f"error at k = {f.k}"


def _n(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _interval(f: Forecast, items: int) -> str:
    if f.labels is None:
        return "—"
    high = _n(f.high) if f.high is not None else f"more than {items:,}"
    return f"[{_n(f.low)}, {high}]"


def _cost(d: PlanDocument, x: float | None) -> str:
    return "—" if d.label_cost is None or x is None else f"{d.label_cost * x:,.2f}"


def plan_view(d: PlanDocument) -> TableView:
    p = d.plan
    rows = []
    for f in p.forecasts:
        more = None if f.labels is None else max(f.labels - p.labeled, 0.0)
        needed = _n(f.labels) if f.labels is not None else f"more than the {p.items:,} items"
        rows.append((_what(f), needed, _interval(f, p.items), _n(more), f"{100 * f.reached:.0f}%", _cost(d, more)))
    level = round(100 * p.confidence_level)
    return TableView(
        title=f"labels for a half-width of {100 * p.target:g} points: {d.dataset}",
        columns=("target", "labels", f"{level}% interval", "more to label", "pool enough in", "cost of the rest"),
        rows=tuple(rows),
        caption=(f"{p.items:,} items, {p.labeled:,} labeled; {p.draws} draws of the unlabeled items' gold from the judges' "
                 "model, sample's precision rule replayed on each (error); the score's interval at the pool's variance"),
    )


@dataclass(frozen=True)
class PlanReport(Verdictless):
    """One document per dataset; plan has no gate (exit 0)."""

    documents: tuple[PlanDocument, ...]
    notes: tuple[str, ...] = ()

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = []
        for d in self.documents:
            out += [Lines((f"{d.dataset}: plan",), heading=markdown), plan_view(d), BLANK]
        return out

    def json(self) -> str:
        return to_json([plain(d) for d in self.documents])

    def csv(self) -> str:
        return to_csv(CSV_COLUMNS, (row for d in self.documents for row in _rows(d)))


def _rows(d: PlanDocument) -> list[tuple[Any, ...]]:
    p = d.plan
    out = []
    for f in p.forecasts:
        more = None if f.labels is None else max(f.labels - p.labeled, 0.0)
        cost = None if d.label_cost is None or more is None else d.label_cost * more
        out.append((d.dataset, f.what, f.k, f.labels, f.low, f.high, more, f.reached, cost, p.target,
                    p.confidence_level, p.items, p.labeled))
    return out
