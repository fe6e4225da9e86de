"""`judges --max-error [--cost ...]`: the cheapest ensemble whose interval's upper end meets the limit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .results import CostChoice
from .subsets import SubsetTable


def cheapest(
    tables: Mapping[int, SubsetTable],
    targets: Mapping[int, Any],  # analysis._Target
    names: Sequence[str],
    costs: Mapping[str, float] | None,
    max_error: float,
    exact: bool,
) -> CostChoice:
    """Among candidates made only of priced judges: the cheapest with high <= max_error (ties: lower estimate,
    then fewer judges, then lexicographic); if none, the candidate with the lowest upper bound."""
    prices = {n: 1.0 for n in names} if not costs else {n: float(v) for n, v in costs.items()}
    price = np.array([prices.get(n, np.nan) for n in names])
    best: tuple[Any, ...] | None = None
    lowest: tuple[Any, ...] | None = None
    candidates = 0
    for k, t in tables.items():
        tg = targets[k]
        total = price[t.members].sum(axis=1)
        ok = ~np.isnan(total)
        candidates += int(ok.sum())
        for i in np.flatnonzero(ok):
            row = (float(total[i]), float(tg.estimate[i]), k, tuple(t.members[i]), float(tg.low[i]), float(tg.high[i]))
            if tg.high[i] <= max_error and (best is None or row[:4] < best[:4]):
                best = row
            key = (row[5], row[0], row[1], k, row[3])
            if lowest is None or key < (lowest[5], lowest[0], lowest[1], lowest[2], lowest[3]):
                lowest = row
    chosen = best if best is not None else lowest
    assert chosen is not None
    return CostChoice(
        max_error=max_error,
        met=best is not None,
        members=tuple(names[j] for j in chosen[3]),
        cost=chosen[0],
        estimate=chosen[1],
        low=chosen[4],
        high=chosen[5],
        candidates=candidates,
        search="exact" if exact else "beam",
        prices={n: prices[n] for n in names if n in prices},
    )
