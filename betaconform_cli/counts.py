"""The sufficient statistic of every estimator: how many items had K judges of which S were correct."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class CountTable:
    """counts[K, S]: number of items with K judges of which S were correct (a sufficient statistic)."""

    counts: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        c = np.asarray(self.counts, dtype=np.int64)
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] < 2:
            raise ValueError("counts must be a square (K+1, K+1) array with K >= 1")
        if (c < 0).any() or np.triu(c, 1).any():
            raise ValueError("counts must be non-negative with S <= K")
        c.setflags(write=False)
        object.__setattr__(self, "counts", c)

    @classmethod
    def from_pairs(cls, judges: np.ndarray | list[int], correct: np.ndarray | list[int]) -> CountTable:
        judges = np.asarray(judges, dtype=np.int64)
        correct = np.asarray(correct, dtype=np.int64)
        top = max(int(judges.max(initial=1)), 1)
        counts = np.zeros((top + 1, top + 1), dtype=np.int64)
        np.add.at(counts, (judges, correct), 1)
        return cls(counts)

    @classmethod
    def from_histogram(cls, histogram: list[int] | np.ndarray, judges: int | None = None) -> CountTable:
        """A table in which every item has `judges` = len(histogram) - 1 judges."""
        h = np.asarray(histogram, dtype=np.int64)
        big_k = len(h) - 1 if judges is None else judges
        counts = np.zeros((big_k + 1, big_k + 1), dtype=np.int64)
        counts[big_k, : len(h)] = h
        return cls(counts)

    @property
    def items(self) -> int:
        return int(self.counts.sum())

    @property
    def max_judges(self) -> int:
        rows = np.nonzero(self.counts.sum(axis=1))[0]
        return int(rows.max()) if len(rows) else 0

    @property
    def min_judges(self) -> int:
        rows = np.nonzero(self.counts.sum(axis=1))[0]
        return int(rows.min()) if len(rows) else 0

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, S, n) for each non-empty cell."""
        big_k, s = np.nonzero(self.counts)
        return big_k, s, self.counts[big_k, s]

    def histogram_by_judges(self) -> dict[int, list[int]]:
        return {int(k): [int(v) for v in self.counts[k, : k + 1]] for k in np.nonzero(self.counts.sum(axis=1))[0]}

    def single_judge_accuracy(self) -> float:
        big_k, s, n = self.cells()
        return float((s * n).sum() / (big_k * n).sum())



@dataclass(frozen=True)
class ItemClusters:
    """The labeled items' cells and clusters, for inputs whose items are not independent (an inspect-ai log's
    epochs: the same sample scored several times is one cluster). `judges[i]`, `correct[i]`: item i's cell (as in
    the CountTable), `cluster[i]`: its cluster's code (0..clusters-1)."""

    judges: np.ndarray = field(repr=False)
    correct: np.ndarray = field(repr=False)
    cluster: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        for name in ("judges", "correct", "cluster"):
            arr = np.asarray(getattr(self, name), dtype=np.int64).reshape(-1)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if not len(self.judges) == len(self.correct) == len(self.cluster):
            raise ValueError("judges, correct and cluster need one entry per item")

    @property
    def clusters(self) -> int:
        return len(np.unique(self.cluster))

    def design_effects(self, values: np.ndarray) -> np.ndarray:
        """Kish's design effect of the mean of each column of `values` (items, m): the cluster-robust variance of
        the mean (clusters' summed residuals, G/(G-1)) over the variance the items would give if independent
        (s^2/n). Kept within [1, the largest cluster's size]: clusters never make a mean surer than independent
        items (a negative within-cluster correlation, mostly noise at these sizes, is not trusted), and no mean is
        less sure than one item per cluster. A column without spread has design effect 1."""
        y = np.asarray(values, dtype=float).reshape(len(self.cluster), -1)
        n = len(y)
        _, code = np.unique(self.cluster, return_inverse=True)
        g = int(code.max()) + 1 if n else 0
        largest = float(np.bincount(code).max()) if n else 1.0
        if n < 2 or g < 2:
            return np.full(y.shape[1], largest)
        resid = y - y.mean(axis=0)
        sums = np.zeros((g, y.shape[1]))
        np.add.at(sums, code, resid)
        clustered = g / (g - 1) * (sums**2).sum(axis=0) / n**2
        independent = (resid**2).sum(axis=0) / (n - 1) / n
        with np.errstate(divide="ignore", invalid="ignore"):
            deff = np.where(independent > 0, clustered / np.where(independent > 0, independent, 1.0), 1.0)
        out: np.ndarray = np.clip(deff, 1.0, largest)
        return out
