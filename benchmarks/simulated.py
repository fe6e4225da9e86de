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


def two_group_correctness(n_items: int, n_judges: int, seed: int = 0) -> np.ndarray:
    """benchmarks/judges.py's latent model: four item classes, two judge groups failing on different items.

    Returns correct[item, judge] in {0, 1}.
    """
    rng = np.random.default_rng(seed)
    z = rng.choice(4, n_items, p=[0.55, 0.15, 0.15, 0.15])
    group = np.arange(n_judges) % 3 == 0
    p = np.tile(np.array([0.93, 0.75, 0.75, 0.2])[:, None], (1, n_judges))
    p[1, group] = 0.35
    p[2, ~group] = 0.35
    p = np.clip(p + rng.normal(0, 0.05, p.shape), 0.02, 0.98)
    return (rng.random((n_items, n_judges)) < p[z]).astype(int)
