"""Which pool items to label next when the pool carries the judges' verdicts (issue 17 item 5), and the estimate
that stays honest under that choice.

Selection (`next_by_split`): the pool is stratified by vote split (an item's sorted class counts: how many judges
gave the plurality class, the next class, ...). A label in split h is worth most where the error of the split's
unlabeled items is most uncertain: each such item's error is e_right if its plurality is right and e_wrong if not,
so its variance is S_h^2 = p_h (1 - p_h) (e_wrong - e_right)^2 at the checked k, with p_h = P(plurality wrong | h).
The variance of the stratified estimate of the pool's total error is sum_h N_h^2 (1/n_h - 1/N_h) S_h^2, and a
batch is allocated one label at a time to the split whose label lowers it most (Neyman allocation, n_h ~ N_h S_h,
reached greedily; n_h + 1 in place of n_h so that a split with no label yet gets a finite, large priority).
Within a split the items come in a seeded random order of the whole pool (drawn over the pool sorted by id), so
the labeled items of each split are a random sample of that split, and the same pool in any line order gives
the same picks.

Why the estimate stays honest: the choice depends only on the verdicts (which every pool item shows) and on gold
already seen, never on an unlabeled item's gold. The vote-split model (votes.py) is a likelihood conditional on
the split, so the choice is ignorable for it (selection on a covariate). The labels-only estimate is not: it
reads the labeled items as a random sample of the pool. When the vote-split guard falls back, the decision uses
`stratified_check` instead: the post-stratified estimate over the same splits (within a split the labels are a
random sample of it), which is design-unbiased whatever the allocation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..distributions import item_error_table
from ..intervals import z_value
from ..votes import SplitModel, SplitPrior, class_counts, distinct_patterns


@dataclass(frozen=True)
class SplitTable:
    """Per vote split h (rows: sorted class counts): pool items N_h, labeled items n_h, labeled items whose plurality
    was wrong; `split` maps each pool item to its h; `correct` each item's count of judges giving its gold (-1 unlabeled)."""

    rows: np.ndarray
    size: np.ndarray
    labeled: np.ndarray
    wrong: np.ndarray
    split: np.ndarray
    judges: np.ndarray
    correct: np.ndarray


def split_table(verdicts: np.ndarray, gold: np.ndarray, n_classes: int) -> SplitTable:
    """The pool's vote splits (items with no verdict form the empty split), with the labeled counts per split."""
    counts = class_counts(np.asarray(verdicts), n_classes)
    gold = np.asarray(gold)
    rows, size, split = distinct_patterns(counts, inverse=True)
    lab = gold >= 0
    correct = np.where(lab, counts[np.arange(len(gold)), np.maximum(gold, 0)], -1)
    wrong_item = lab & (correct < counts.max(axis=1))
    labeled = np.bincount(split[lab], minlength=len(rows))
    wrong = np.bincount(split[wrong_item], minlength=len(rows))
    return SplitTable(rows, np.asarray(size), labeled, wrong, split, counts.sum(axis=1), correct)


def _worth(t: SplitTable, k: int, model: SplitModel | None) -> np.ndarray:
    """S_h per split: sqrt(p_h (1 - p_h)) |e_wrong - e_right| at k (k thinned to the split's judges when it has
    fewer). e_wrong: the gold class is the largest other voted class (none voted: a class nobody gave, S = 0).
    p_h is the fitted curve's P(wrong | margin), pooled over every split, never the split's own labeled rate:
    allocating on its own rate gives fewer labels to a split whose first labels came out low, which keeps its
    post-stratified mean low (measured: -0.008 at k = 9, 3 standard errors, tests/test_sample_select.py's pool)."""
    b0, b1 = (model.b0, model.b1) if model is not None else (SplitPrior().mean0, SplitPrior().mean1)
    out = np.zeros(len(t.rows))
    for h, row in enumerate(t.rows):
        n, m = int(row.sum()), int(row[0])
        tied = int((row == m).sum())
        if n == 0 or tied >= len(row):
            continue
        e = item_error_table(n, min(k, n))
        other = int(row[tied]) if tied < len(row) else 0
        curve = 1.0 / (1.0 + math.exp(-(b0 + b1 * (2 * m - n) / n)))  # P(plurality wrong | margin)
        out[h] = math.sqrt(curve * (1 - curve)) * abs(float(e[other] - e[m]))
    return out


ALLOCATIONS = ("neyman", "uncertainty")


def allocate(t: SplitTable, worth: np.ndarray, batch: int, allocation: str = "neyman") -> np.ndarray:
    """How many of the next `batch` labels go to each split: "neyman" (default), greedy Neyman allocation, one label
    at a time to the split with the largest drop N_h^2 S_h^2 / ((n_h + 1)(n_h + 2)) that still has unlabeled items;
    "uncertainty" (uncertainty sampling, measured beside it), to the split whose single item is most uncertain
    (largest S_h^2) while it has items. Ties: the first split in row order. Splits worth nothing (S_h = 0) get
    labels only when no other split has items left."""
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}; got {allocation!r}")
    free = t.size - t.labeled
    got = np.zeros(len(t.rows), dtype=np.int64)
    for _ in range(min(batch, int(free.sum()))):
        n = t.labeled + got
        drop = (t.size * worth) ** 2 / ((n + 1.0) * (n + 2.0)) if allocation == "neyman" else worth**2
        gain = np.where(got < free, drop, -1.0)
        if gain.max() <= 0:  # only splits worth nothing are left: fill them by size of what remains
            gain = np.where(got < free, (free - got).astype(float), -1.0)
        got[int(np.argmax(gain))] += 1
    return got


def next_by_split(ids: list[str], verdicts: np.ndarray, gold: np.ndarray, n_classes: int, batch: int, k: int,
                  rng: np.random.Generator, model: SplitModel | None = None, allocation: str = "neyman") -> list[int]:
    """The next `batch` pool items to label (positions in `ids`/`verdicts`), by split (module docstring): `gold` -1
    for the unlabeled items, `k` the checked k where the interval is widest, `model` the vote-split fit (its curve
    P(wrong | margin) shrinks each split's rate; None: the prior's curve)."""
    t = split_table(verdicts, gold, n_classes)
    got = allocate(t, _worth(t, k, model), batch, allocation)
    by_id = sorted(range(len(ids)), key=lambda i: ids[i])
    order = [by_id[i] for i in rng.permutation(len(ids))]
    picks: list[int] = []
    for i in order:
        h = int(t.split[i])
        if gold[i] < 0 and got[h] > 0:
            picks.append(i)
            got[h] -= 1
    return picks


@dataclass(frozen=True)
class StratifiedCheck:
    """The post-stratified estimate of the pool's error at each k (labeled items exact, each split's unlabeled items
    at its labeled items' mean error) with a normal interval at `level`: `half_width` the widest over ks, `at_k`."""

    ks: tuple[int, ...]
    estimate: np.ndarray
    half: np.ndarray
    level: float

    @property
    def half_width(self) -> float:
        return float(self.half.max())

    @property
    def at_k(self) -> int:
        return self.ks[int(np.argmax(self.half))]


def stratified_check(verdicts: np.ndarray, gold: np.ndarray, n_classes: int, ks: tuple[int, ...],
                     level: float) -> StratifiedCheck:
    """Post-stratification by vote split: sum over splits of (the labeled items' errors + (N_h - n_h) times their
    mean), over N; variance sum_h N_h^2 (1 - n_h/N_h) s_h^2 / n_h with s_h^2 = (sum of squares + 1/4) / n_h (one
    pseudo-item at the largest variance of a 0-1 error, so that a split of identical errors is not certain). A split
    with no label borrows the labeled split nearest in margin with as many judges (or any judges). Items judged
    by fewer than k judges are thinned to their own number (the rule checks k up to the fewest judges); items with
    no verdict are left out, as the vote-split estimate leaves them out."""
    voted = (np.asarray(verdicts) >= 0).any(axis=1)
    verdicts, gold = np.asarray(verdicts)[voted], np.asarray(gold)[voted]
    t = split_table(verdicts, gold, n_classes)
    lab = np.nonzero(np.asarray(gold) >= 0)[0]
    err = np.array([[item_error_table(int(t.judges[i]), min(k, int(t.judges[i])))[int(t.correct[i])] for k in ks]
                    for i in lab]).reshape(len(lab), len(ks))
    h_of = t.split[lab]
    sums = np.zeros((len(t.rows), len(ks)))
    squares = np.zeros((len(t.rows), len(ks)))
    np.add.at(sums, h_of, err)
    n = t.labeled.astype(float)
    mean = np.divide(sums, n[:, None], out=np.zeros_like(sums), where=n[:, None] > 0)
    np.add.at(squares, h_of, (err - mean[h_of]) ** 2)
    var_h = np.divide(squares + 0.25, n[:, None] ** 2, out=np.zeros_like(sums), where=n[:, None] > 0)
    donor = _donors(t)
    total = sums.copy()
    var = np.zeros(len(ks))
    for h in range(len(t.rows)):
        d = int(donor[h])
        rest = t.size[h] - t.labeled[h]
        total[h] += rest * mean[d]
        if t.labeled[h] == 0:  # the donor's mean and each item's own spread around it
            var += rest**2 * var_h[d] + rest * var_h[d] * n[d]
        else:
            var += t.size[h] ** 2 * (1 - t.labeled[h] / t.size[h]) * var_h[h]
    big_n = float(t.size.sum())
    z = z_value(level)
    return StratifiedCheck(tuple(ks), total.sum(axis=0) / big_n, z * np.sqrt(var) / big_n, level)


def _donors(t: SplitTable) -> np.ndarray:
    """Each split's own index when it has labels, else the labeled split nearest in margin (same number of judges
    first; ties: the first in row order)."""
    n = t.rows.sum(axis=1)
    x = np.where(n > 0, (2 * t.rows[:, 0] - n) / np.maximum(n, 1), 0.0)
    has = np.nonzero(t.labeled > 0)[0]
    out = np.arange(len(t.rows))
    for h in np.nonzero(t.labeled == 0)[0]:
        dist = np.abs(x[has] - x[h]) + 10.0 * (n[has] != n[h])
        out[h] = has[int(np.argmin(dist))]
    return out
