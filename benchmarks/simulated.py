"""Simulated verdicts shared by the benchmarks and the tests: one generator, not a copy in each."""

from __future__ import annotations

import numpy as np


def binary_votes(
    rng: np.random.Generator, items: int, judges: int, labeled: int, a: float = 5.0, b: float = 2.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exchangeable judges on binary items: per-item accuracy ~ Beta(a, b); a verdict is the gold side when the
    judge is correct, the other side when not; gold kept on `labeled` items drawn at random.

    Returns (votes[item, judge] in {0, 1}, gold per item with -1 where unlabeled, correct judges per item).
    """
    acc = rng.beta(a, b, size=items)
    correct = rng.random((items, judges)) < acc[:, None]
    side = rng.integers(0, 2, size=items)
    votes = np.where(correct, side[:, None], 1 - side[:, None])
    gold = np.full(items, -1)
    pick = rng.choice(items, size=labeled, replace=False)
    gold[pick] = side[pick]
    return votes, gold, correct.sum(axis=1)
