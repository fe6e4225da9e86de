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

