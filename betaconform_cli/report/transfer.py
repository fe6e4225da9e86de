"""Transfer results (`transfer`): `fit`'s document plus the sources' weights and the no-transfer fit, and views
that show the estimate with and without transfer side by side."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from msgspec import UNSET

from .fit import Doc, FitReport, beyond, confidence, describe
from .views import BLANK, Block, Lines, TableView, beyond_note, caption_of, k_label, pct, tie_note


def _judges(ks: Any) -> str:
    if not ks:
        return "—"
    return str(ks[0]) if len(ks) == 1 else f"{min(ks)}-{max(ks)}"


def _num(x: Any, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _given(x: Any, absent: Any = None) -> Any:
    """A record's optional value: `absent` where the key is missing (UNSET) or null."""
    return absent if x is UNSET or x is None else x


def _bayes_factor(log_bf: Any) -> str:
    if log_bf is None:
        return "—"
    return f"{math.exp(log_bf):.2g}" if -50 < log_bf < 50 else f"e^{log_bf:.0f}"


def sources_view(d: Doc) -> TableView:
    """The sources: judge profile (judges per item, accuracy, overdispersion), similarity, prior, the labels' Bayes
    factor against no transfer, final weight and the labels' estimate of the shift; the caption says whether any
    source applies."""
    t = d.transfer
    tp = _given(t.target_profile)
    rows = [("(no transfer)", str(d.items), _judges(tp.judges if tp else None), _num(tp.accuracy if tp else None, ".2f"),
             _num(tp.overdispersion if tp else None, ".2f"), "1.000", f"{t.target_prior_weight:.3f}",
             "1" if d.method == "transfer-default" else "—",
             f"{t.target_weight:.3f}", "—")]
    shape_only = False
    for s in d.sources:
        shift = _given(s.shift)
        other = _given(s.same_judge_count, 1.0) < 1.0 and d.method == "transfer-default"
        shape_only = shape_only or other
        rows.append((s.name, str(s.items), _judges(_given(s.judges)) + ("†" if other else ""),
                     _num(_given(s.accuracy), ".2f"), _num(_given(s.overdispersion), ".2f"), f"{s.similarity:.3f}",
                     f"{s.prior_weight:.3f}", _bayes_factor(_given(s.log_bayes_factor)), f"{s.weight:.3f}",
                     "—" if shift is None else f"{shift:+.2f}"))
    notes = []
    if d.method == "transfer-default":
        notes.append(t.no_source_reason if t.no_source_applies else
                     f"sources apply: no transfer keeps posterior probability {t.target_weight:.2f}")
        if t.limited_at_k:
            notes.append("the labels held the estimate back at k = " + ", ".join(map(str, t.limited_at_k)))
    notes.append("overdisp.: how often judges err together (0 independent, 1 always together); BF: how much better "
                 "the labels are explained with the source than without; shift: how much higher (+) or lower (-) a "
                 "judge's log-odds of being right are here than in the source, as the labels estimate it")
    if shape_only:
        notes.append("†: another number of judges than the target: another ensemble, it lends only its shape")
    return TableView(
        title=f"{d.dataset}: sources ({d.method})",
        columns=("source", "items", "judges", "accuracy", "overdisp.", "similarity", "prior", "BF", "weight", "shift"),
        rows=tuple(rows),
        caption="; ".join(notes),
    )


def errors_view(d: Doc) -> TableView:
    """The error table with transfer beside the no-transfer fit of the same labels."""
    cl = round(100 * confidence(d))
    without = {r.k: r for r in d.without_transfer}
    rows = []
    for r in d.error_rates:
        w = without[r.k]
        rows.append((k_label(r.k, beyond=beyond(r, d)), f"{pct(r.estimate)} [{pct(r.low)}, {pct(r.high)}]",
                     f"{pct(w.estimate)} [{pct(w.low)}, {pct(w.high)}]", pct(r.empirical)))
    past = [r.k for r in d.error_rates if not beyond(r, d)]
    return TableView(
        title=f"{d.dataset}: majority-vote error by number of judges k",
        columns=("k", f"with transfer [{cl}%]", f"without transfer [{cl}%]", "empirical"),
        rows=tuple(rows),
        caption=caption_of(tie_note(r.k for r in d.error_rates),
                           "WARNING: prior conflict (see stderr)" if d.transfer.prior_conflict else "",
                           beyond_note(max([d.judges or 0, *past])) if any(beyond(r, d) for r in d.error_rates) else "", sep="; "),
    )


def transfer_blocks(d: Doc, markdown: bool = False) -> list[Block]:
    if markdown:
        return [Lines((str(d.dataset),), heading=True), Lines((describe(d),)), sources_view(d), errors_view(d)]
    return [sources_view(d), errors_view(d), Lines((describe(d),)), BLANK]


@dataclass(frozen=True)
class TransferReport(FitReport):
    """The result of `transfer`: one document per target; its CSV and JSON are `fit`'s."""

    def blocks(self, markdown: bool = False) -> list[Block]:
        return [b for d in self.documents for b in transfer_blocks(d, markdown)]
