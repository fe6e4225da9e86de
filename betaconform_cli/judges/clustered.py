"""Clustered labeled items in `judges` (an inspect-ai log's epochs: a sample scored several times is one cluster):
the intervals count each quantity's effective number of items, n / deff (Kish), with deff the design effect of
its mean (counts.ItemClusters.design_effects; docs/FORMATS.md, "Epochs").

- a judge's accuracy: Wilson's interval at its labeled count over the design effect of its marks;
- the baseline table (random k judges): fit.analyse with the items' clusters;
- each ensemble's interval: widened about its estimate by sqrt(deff), deff the largest design effect among the
  judges' marks and the items' share of correct judges (one conservative factor for every candidate: a posterior's
  spread of a mean scales as 1 / sqrt(its effective items)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..counts import ItemClusters


@dataclass(frozen=True)
class Clustered:
    """The labeled items' clusters as judges needs them: the cells for fit, each judge's design effect and the one
    factor of the ensembles."""

    cells: ItemClusters
    judges: np.ndarray
    ensemble: float


def clustered(arr: np.ndarray, codes: np.ndarray) -> Clustered:
    """arr[i, j]: 1.0 / 0.0 / NaN (no verdict), codes[i]: item i's cluster."""
    seen = ~np.isnan(arr)
    cells = ItemClusters(seen.sum(axis=1), np.nansum(arr, axis=1).astype(np.int64), codes)
    per_judge = np.array([float(ItemClusters(np.zeros(int(s.sum())), np.zeros(int(s.sum())), codes[s])
                                .design_effects(arr[s, j])[0]) if s.sum() else 1.0 for j, s in enumerate(seen.T)])
    share = cells.correct / np.maximum(cells.judges, 1)
    return Clustered(cells, per_judge, float(max(per_judge.max(initial=1.0), cells.design_effects(share)[0])))


def clustered_items(correct: np.ndarray, names: Any, clusters: np.ndarray, arr: np.ndarray) -> Clustered:
    """`clustered` of the prepared matrix `arr`, the cluster codes given for the rows of `correct` taken in the order
    analysis._prepare sorts and keeps them (canonical_rows, items with a verdict)."""
    from .search import canonical_rows

    full = np.asarray(correct, dtype=float)
    order = canonical_rows(full, names)
    return clustered(arr, np.asarray(clusters)[order][~np.isnan(full[order]).all(axis=1)])


def widened(target: Any, deff: float) -> Any:
    """A candidate's target (analysis._Target) with its interval widened about the estimate by sqrt(deff), kept in
    the target's range."""
    from .search import widen

    low, high = widen(target.estimate, target.low, target.high, target.floor, target.ceiling, math.sqrt(deff))
    return replace(target, low=low, high=high)


def widened_search(search: Any, deff: float) -> Any:
    """An ensemble search (analysis.Search) with every candidate's interval widened by sqrt(deff)."""
    return replace(search, targets={k: widened(t, deff) for k, t in search.targets.items()})
