"""Clustered labeled items in `judges` (an inspect-ai log's epochs: a sample scored several times is one cluster):
the intervals count each quantity's effective number of items, n / deff (Kish), with deff the design effect of
its mean (counts.ItemClusters.design_effects; docs/FORMATS.md, "Epochs").

- a judge's accuracy: Wilson's interval at its labeled count over the design effect of its marks;
- the baseline table (random k judges): fit.analyse with the items' clusters;
- each ensemble's interval: widened about its estimate by sqrt(deff), deff the largest design effect among the
  judges' marks and the items' share of correct judges (one conservative factor for every candidate: a posterior's
  spread of a mean scales as 1 / sqrt(its effective items));
- the agreement figures (gold.py): the panel's bootstrap resamples clusters, not items (`Compositions`); a judge's
  figures against the gold take the delta method's variance times the statistic's design effect, the
  cluster-robust variance of its cell shares (clusters' summed residuals) over the multinomial one
  (`cell_covariance`, `design_effect`). With every item its own cluster both are exactly today's item figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..counts import ItemClusters

if TYPE_CHECKING:
    from ..inputs.dataset import Votes
    from .unlabeled import Verdicts


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


@dataclass(frozen=True)
class Compositions:
    """Clusters as the agreement figures resample them: each kind of cluster (how many of its items have each
    pattern of a Verdicts, a row of `rows`) and how many clusters are of that kind (`weights`). Every item its own
    cluster is the identity with the patterns' counts: resampling clusters is then resampling items."""

    rows: np.ndarray = field(repr=False)  # (kinds, patterns)
    weights: np.ndarray = field(repr=False)  # (kinds,)
    largest: int = 1  # the most items in one cluster
    clusters: int = 0


def compositions(votes: Votes, names: Any) -> tuple[Verdicts, Compositions | None]:
    """The votes as Verdicts (unlabeled.from_votes) with their clusters' compositions (None: the votes carry no
    cluster ids). Items with no verdict of these judges belong to no pattern."""
    from .unlabeled import indexed_votes

    v, index = indexed_votes(votes, names)
    if votes.clusters is None or votes.item_pattern is None:
        return v, None
    rows = index[np.asarray(votes.item_pattern)]
    ids = np.asarray(votes.clusters, dtype=object)[rows >= 0]
    rows = rows[rows >= 0]
    _, code = np.unique(ids.astype(str), return_inverse=True)
    per = np.zeros((int(code.max(initial=-1)) + 1, len(v.counts)))
    np.add.at(per, (code.reshape(-1), rows), 1.0)
    size = per.sum(axis=1)
    if not len(size):
        return v, None
    if size.max() <= 1:  # every item its own cluster: each pattern is a kind, as many as its items
        return v, Compositions(np.eye(len(v.counts)), v.counts.astype(float), 1, len(size))
    kinds, weights = np.unique(per, axis=0, return_counts=True)
    return v, Compositions(kinds, weights.astype(float), int(size.max()), len(size))


def resample_clusters(comp: Compositions, rng: np.random.Generator, draws: int) -> np.ndarray:
    """(draws, patterns) item counts of clusters resampled with replacement: as many clusters as there are, each
    kind drawn in proportion to its clusters (agreement.resample's multinomial, over clusters)."""
    total = int(round(comp.weights.sum()))
    drawn = rng.multinomial(total, comp.weights / comp.weights.sum(), size=draws).astype(float)
    out: np.ndarray = drawn @ comp.rows
    return out


def cell_covariance(v: Verdicts, j: int, comp: Compositions) -> np.ndarray:
    """The cluster-robust covariance of judge j's confusion shares t[gold, verdict] / n (flattened): sum over
    clusters of (s_g - m_g p)(s_g - m_g p)' / n^2, s_g the cluster's cells, m_g its items, p the shares. With every
    item its own cluster this is the multinomial covariance (diag(p) - p p') / n."""
    c = v.classes
    ok = v.labeled & (v.patterns[:, j] >= 0)
    cell = np.where(ok, v.gold * c + np.where(ok, v.patterns[:, j], 0), -1)
    onto = np.zeros((len(cell), c * c))
    onto[np.flatnonzero(ok), cell[ok]] = 1.0
    s = comp.rows @ onto  # (kinds, cells)
    n = float((s.sum(axis=1) * comp.weights).sum())
    if n <= 0:
        return np.zeros((c * c, c * c))
    p = (s * comp.weights[:, None]).sum(axis=0) / n
    r = s - s.sum(axis=1, keepdims=True) * p[None, :]
    out: np.ndarray = (r * comp.weights[:, None]).T @ r / n**2
    return out


def design_effect(stat: Any, t: np.ndarray, covariance: np.ndarray | None, largest: int) -> float:
    """The design effect of a statistic of a confusion table t: g' C g over g' M g, C the clusters' covariance of
    its shares (cell_covariance), M the multinomial one, g the gradient at the shares; kept within [1, the largest
    cluster], as counts.ItemClusters.design_effects keeps a mean's. 1 without clusters."""
    from . import agreement as ag

    n = float(np.sum(t))
    if covariance is None or n <= 0:
        return 1.0
    g = ag.gradient(stat, np.asarray(t, dtype=float) / n)
    base = float(g @ ag.multinomial_covariance(t) @ g)
    robust = float(g @ covariance @ g)
    if not (np.isfinite(base) and np.isfinite(robust)) or base <= 0:
        return 1.0
    return float(min(max(robust / base, 1.0), largest))
