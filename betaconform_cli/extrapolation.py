"""Rows past the data: an error row at k above the most judges any item has (K) is *beyond the data*. No item was
judged by k judges, so the row is the fitted model's extrapolation alone, and its interval must carry that: it is
never narrower than the interval at K (docs/EXTRAPOLATION.md). Every output marks these rows (`beyond_data`), and a
gate at such a k says so.

The rule, in one place (fit.analyse and the vote-split estimate both apply it through `beyond_rows`): the row at K is
the reference; a row at k > K keeps its estimate, and an interval narrower than the reference's is widened to the
reference's width, by the same amount on each side, moved inside [0, 1] where it would cross a bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from .intervals import enclose_value


class Row(Protocol):
    """What the rule reads of an error row (fit.ErrorRow): a dataclass with these fields."""

    @property
    def k(self) -> int: ...
    @property
    def estimate(self) -> float: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...


R = TypeVar("R", bound=Row)


def widened(estimate: float, low: float, high: float, width: float) -> tuple[float, float]:
    """[low, high] widened to at least `width` (equal parts on each side, shifted inside [0, 1]), still holding the
    estimate; unchanged when already as wide."""
    width = min(max(width, 0.0), 1.0)
    if high - low >= width:
        return low, high
    extra = (width - (high - low)) / 2
    lo, hi = low - extra, high + extra
    if lo < 0.0:
        lo, hi = 0.0, hi - lo
    if hi > 1.0:
        lo, hi = max(lo - (hi - 1.0), 0.0), 1.0
    return enclose_value(estimate, lo, hi)


def reference_ks(ks: Sequence[int], most: int) -> tuple[int, ...]:
    """The ks to compute: the asked ones, and K itself when some k is beyond it (the reference row)."""
    ks = tuple(ks)
    if most >= 1 and any(k > most for k in ks) and most not in ks:
        return tuple(sorted({*ks, most}))
    return ks


def beyond_rows(rows: Sequence[R], most: int, asked: Sequence[int]) -> tuple[R, ...]:
    """The rows at the asked ks, each with `beyond_data` (k > most) and, past the data, the interval widened to at
    least the row at `most`'s width (`most`'s row must be among the rows whenever one is beyond it: reference_ks;
    without it the rows are only marked)."""
    ref = next((r for r in rows if r.k == most), None)
    out = []
    for r in rows:
        if r.k not in asked:
            continue
        if r.k <= most or ref is None:
            out.append(replace(r, beyond_data=r.k > most))  # type: ignore[type-var]
            continue
        lo, hi = widened(float(r.estimate), float(r.low), float(r.high), float(ref.high) - float(ref.low))
        out.append(replace(r, low=lo, high=hi, beyond_data=True))  # type: ignore[type-var]
    return tuple(out)
