"""Transfer results (`transfer`): `fit`'s document plus the sources' weights and the no-transfer fit, and views
that show the estimate with and without transfer side by side."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..counts import CountTable
from .fit import Doc, FitReport, confidence, describe, fit_document
from .views import BLANK, TIE_NOTE, Block, Lines, TableView, k_label, pct

if TYPE_CHECKING:
    from ..transfer import TransferResult


def transfer_document(
    name: str, source: str, table: CountTable, res: TransferResult, seed: int, skipped: int = 0
) -> dict[str, Any]:
    """The JSON object of one target: `fit`'s, plus "sources", "without_transfer" and "transfer"."""
    from ..transfer import METHOD_DESCRIPTIONS

    doc = fit_document("transfer", name, source, table, res.result, seed, skipped)
    doc["method"] = f"transfer-{res.settings.method}"
    doc["method_description"] = METHOD_DESCRIPTIONS[res.settings.method]
    doc["sources"] = [s.to_dict() for s in res.sources]
    doc["without_transfer"] = [r.to_dict() for r in res.without.rows]
    doc["transfer"] = res.to_dict()
    return doc


def sources_view(d: Mapping[str, Any]) -> TableView:
    """The sources: similarity, lambda (eq. 14), prior and final weight, and the labels' estimate of the shift."""
    t = d["transfer"]
    rows = [("(no transfer)", str(d["items"]), "1.000", "—", f"{t['target_prior_weight']:.3f}", f"{t['target_weight']:.3f}", "—")]
    for s in d["sources"]:
        shift = s.get("shift")
        rows.append((s["name"], str(s["items"]), f"{s['similarity']:.3f}", f"{s['lambda']:.3f}", f"{s['prior_weight']:.3f}",
                     f"{s['weight']:.3f}", "—" if shift is None else f"{shift:+.2f}"))
    return TableView(
        title=f"{d['dataset']}: sources ({d['method']})",
        columns=("source", "items", "similarity", "lambda", "prior", "weight", "shift"),
        rows=tuple(rows),
        caption="shift: how much higher (+) or lower (-) a judge's log-odds of being right are here than in the "
        "source, as the labels estimate it",
    )


def errors_view(d: Mapping[str, Any]) -> TableView:
    """The error table with transfer beside the no-transfer fit of the same labels."""
    cl = round(100 * confidence(d))
    without = {r["k"]: r for r in d["without_transfer"]}
    rows = []
    for r in d["error_rates"]:
        w = without[r["k"]]
        rows.append((k_label(r["k"]), f"{pct(r['estimate'])} [{pct(r['low'])}, {pct(r['high'])}]",
                     f"{pct(w['estimate'])} [{pct(w['low'])}, {pct(w['high'])}]", pct(r["empirical"])))
    return TableView(
        title=f"{d['dataset']}: majority-vote error by number of judges k",
        columns=("k", f"with transfer [{cl}%]", f"without transfer [{cl}%]", "empirical"),
        rows=tuple(rows),
        caption=TIE_NOTE + ("; WARNING: prior conflict (see stderr)" if d["transfer"]["prior_conflict"] else ""),
    )


def transfer_blocks(d: Doc, markdown: bool = False) -> list[Block]:
    if markdown:
        return [Lines((str(d["dataset"]),), heading=True), Lines((describe(d),)), sources_view(d), errors_view(d)]
    return [sources_view(d), errors_view(d), Lines((describe(d),)), BLANK]


@dataclass(frozen=True)
class TransferReport(FitReport):
    """The result of `transfer`: one document per target; its CSV and JSON are `fit`'s."""

    def blocks(self, markdown: bool = False) -> list[Block]:
        return [b for d in self.documents for b in transfer_blocks(d, markdown)]
