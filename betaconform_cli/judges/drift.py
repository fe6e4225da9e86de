"""`drift`: have the same judges changed between two runs (issue 27 item 3)? docs/DRIFT.md.

Two runs of the same judges (an old one, a new one), each a set of items with every judge's verdict and gold on
some items. Judges are matched by name, classes by their text; items by id.

With labels, per judge and for the panel (the plurality of all judges: right when the gold has more votes than
every other class, so a tie is wrong): accuracy on each run's labeled items, and the change new - old with an
interval. Paired when the runs share most of their labeled items (the same id with the same gold in both, at least
PAIRED_SHARE of the smaller run's labeled items): Newcombe's (1998) hybrid score interval for paired proportions,
his method 10 (Wilson intervals of each margin, combined with the phi correlation of the 2x2 table), on the shared
items where the judge gave a verdict in both runs. Otherwise unpaired: Newcombe's (1998) hybrid score interval for
two independent proportions (his method 10 too: statsmodels' confint_proportions_2indep(method='newcomb')).

The gate's false-alarm rate, alpha = 1 - level, is split between the two parts when both runs have labels: the
intervals are simultaneous over the judges and the panel at 1 - alpha / 2 (Bonferroni: each at
1 - alpha / (2 (J + 1))), and the label-free test is Holm's at alpha / 2; without labels in a run, the test has all
of alpha. So the gate (either part) false-alarms at most alpha.

Without labels (every item, gold or not): a permutation test per judge and for the panel of "the two runs' vote
patterns come from the same distribution". Judge j's statistic: Pearson's chi-square of the 2 x K table run x
(j's verdict or none, whether it agrees with the plurality of the other judges' verdicts: agrees, disagrees, no
plurality); the panel's: the same over whole verdict patterns. Its null distribution by permuting which run each
item belongs to (an item in both runs, by id, is swapped with its twin or not, each with probability 1/2; the
others shuffled among themselves), p = (1 + #{T* >= T}) / (1 + B); Holm over the judges and the panel. Valid by
construction, whatever the judges' dependence: a parametric bootstrap from a Dawid-Skene model fitted on the old
run (judges/unlabeled.py) would also reject when that model misfits the old run (judges that err together), which
is not drift, and would need the model refitted on every replicate to account for its estimation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..parameters import DRIFT_CONFIDENCE_LEVEL, check
from .descriptive import wilson_interval

PAIRED_SHARE = 0.5  # pair the runs when the shared labeled items are at least this share of the smaller run's
PERMUTATIONS = 999
BLOCK = 64  # permutations per block (memory: BLOCK x items)
PANEL = "panel"


@dataclass(frozen=True)
class Run:
    """One run: each item's verdicts (class codes shared by both runs, -1 none) in the judges' order, gold (-1
    unlabeled) and id (None: items cannot be matched)."""

    verdicts: np.ndarray  # (n, J) int
    gold: np.ndarray  # (n,) int
    ids: tuple[str, ...] | None = None

    @property
    def labeled(self) -> int:
        return int((self.gold >= 0).sum())


@dataclass(frozen=True)
class Accuracy:
    right: int
    items: int

    @property
    def value(self) -> float | None:
        return self.right / self.items if self.items else None


@dataclass(frozen=True)
class Change:
    """new - old accuracy and its interval (None: too few items); `pairs`: the shared items it used (paired)."""

    old: Accuracy
    new: Accuracy
    paired: bool
    pairs: int
    estimate: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class PatternTest:
    statistic: float
    p_value: float
    p_holm: float
    items: tuple[int, int]  # (old, new) items in the test


@dataclass(frozen=True)
class DriftRow:
    """One judge (or the panel): its change on the labels, its pattern test, and whether either says it drifted."""

    name: str
    change: Change
    test: PatternTest
    drifted_labels: bool
    drifted_patterns: bool

    @property
    def drifted(self) -> bool:
        return self.drifted_labels or self.drifted_patterns


@dataclass(frozen=True)
class DriftResult:
    rows: tuple[DriftRow, ...]
    shared_items: int  # items (by id) in both runs
    shared_labeled: int  # of them, labeled in both with the same gold
    paired: bool
    permutations: int
    interval_level: float  # each interval's own level (simultaneous over the rows)
    test_alpha: float  # the label-free test's family-wise level (Holm)


def newcombe_unpaired(x1: int, n1: int, x2: int, n2: int, level: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval of p1 - p2 for independent samples (1998, method 10)."""
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = wilson_interval(x1, n1, level)
    l2, u2 = wilson_interval(x2, n2, level)
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def newcombe_paired(both: int, first_only: int, second_only: int, neither: int, level: float) -> tuple[float, float]:
    """Newcombe's (1998) interval of p1 - p2 for paired proportions, method 10: p1 = (both + first_only) / n,
    p2 = (both + second_only) / n, Wilson intervals of each, combined with the phi coefficient of the 2x2 table
    (0 where a margin is empty)."""
    a, b, c, d = both, first_only, second_only, neither
    n = a + b + c + d
    x1, x2 = a + b, a + c
    p1, p2 = x1 / n, x2 / n
    l1, u1 = wilson_interval(x1, n, level)
    l2, u2 = wilson_interval(x2, n, level)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(margins) if margins > 0 else 0.0
    dl1, du1, dl2, du2 = p1 - l1, u1 - p1, p2 - l2, u2 - p2
    diff = p1 - p2
    low = diff - math.sqrt(max(dl1 * dl1 - 2 * phi * dl1 * du2 + du2 * du2, 0.0))
    high = diff + math.sqrt(max(du1 * du1 - 2 * phi * du1 * dl2 + dl2 * dl2, 0.0))
    return max(low, -1.0), min(high, 1.0)


def plurality(verdicts: np.ndarray, classes: int) -> np.ndarray:
    """Each row's class with more votes than every other (-1: no verdict or a tie)."""
    counts = (verdicts[:, :, None] == np.arange(classes)[None, None, :]).sum(axis=1)  # (n, C)
    top = counts.max(axis=1, initial=0)
    unique = (counts == top[:, None]).sum(axis=1) == 1
    return np.where(unique & (top > 0), counts.argmax(axis=1), -1)


def correctness(run: Run, classes: int) -> np.ndarray:
    """(n, J + 1): 1 right, 0 wrong, -1 no verdict or no gold; the last column the panel's plurality (a tie wrong)."""
    lab = run.gold >= 0
    judges = np.where((run.verdicts >= 0) & lab[:, None], (run.verdicts == run.gold[:, None]).astype(int), -1)
    panel_said = (run.verdicts >= 0).any(axis=1) & lab
    panel = np.where(panel_said, (plurality(run.verdicts, classes) == run.gold).astype(int), -1)
    out: np.ndarray = np.column_stack([judges, panel])
    return out


def _shared(old: Run, new: Run) -> tuple[np.ndarray, np.ndarray]:
    """Indices (in old, in new) of the items in both runs by id, in old's order."""
    if old.ids is None or new.ids is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    where = {i: n for n, i in enumerate(new.ids)}
    pairs = [(k, where[i]) for k, i in enumerate(old.ids) if i in where]
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ia, ib = np.asarray(pairs, dtype=np.int64).T
    return ia, ib


def _change(co: np.ndarray, cn: np.ndarray, paired: tuple[np.ndarray, np.ndarray] | None, level: float) -> Change:
    """One column of each run's correctness: accuracies on all labeled items, the change paired or not."""
    old = Accuracy(int((co == 1).sum()), int((co >= 0).sum()))
    new = Accuracy(int((cn == 1).sum()), int((cn >= 0).sum()))
    if paired is not None:
        a, b = co[paired[0]], cn[paired[1]]
        keep = (a >= 0) & (b >= 0)
        a, b = a[keep], b[keep]
        n = int(keep.sum())
        if n == 0:
            return Change(old, new, True, 0, None, None, None)
        both, new_only = int(((a == 1) & (b == 1)).sum()), int(((a == 0) & (b == 1)).sum())
        old_only, neither = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 0)).sum())
        low, high = newcombe_paired(both, new_only, old_only, neither, level)
        return Change(old, new, True, n, (new_only - old_only) / n, low, high)
    if old.items == 0 or new.items == 0:
        return Change(old, new, False, 0, None, None, None)
    low, high = newcombe_unpaired(new.right, new.items, old.right, old.items, level)
    return Change(old, new, False, 0, new.right / new.items - old.right / old.items, low, high)


def _judge_categories(verdicts: np.ndarray, classes: int) -> np.ndarray:
    """(n, J) category of judge j on each item: (its verdict + 1) * 3 + (0 agrees with the other judges'
    plurality, 1 disagrees, 2 no plurality among the others)."""
    onehot = verdicts[:, :, None] == np.arange(classes)[None, None, :]
    total = onehot.sum(axis=1)  # (n, C)
    out = np.zeros(verdicts.shape, dtype=np.int64)
    for j in range(verdicts.shape[1]):
        rest = total - onehot[:, j, :]
        top = rest.max(axis=1)
        unique = ((rest == top[:, None]).sum(axis=1) == 1) & (top > 0)
        maj = np.where(unique, rest.argmax(axis=1), -1)
        rel = np.where(maj < 0, 2, np.where(verdicts[:, j] == maj, 0, 1))
        out[:, j] = (verdicts[:, j] + 1) * 3 + rel
    return out


def chi_square(cats: np.ndarray, new: np.ndarray, n_cats: int) -> np.ndarray:
    """Pearson's chi-square of the 2 x K table (run x category) for each row of `new` (B, N) 0/1 memberships."""
    total = np.bincount(cats, minlength=n_cats).astype(float)
    onehot = np.zeros((len(cats), n_cats))
    onehot[np.arange(len(cats)), cats] = 1.0
    observed = new @ onehot  # (B, K) items of the new run in each category
    n = float(len(cats))
    n_new = new.sum(axis=1, keepdims=True)
    expected = total[None, :] * n_new / n
    used = total > 0
    scale = n * n / (total[None, used] * n_new * (n - n_new))
    out: np.ndarray = ((observed[:, used] - expected[:, used]) ** 2 * scale).sum(axis=1)
    return out


def _memberships(n_old: int, n_new: int, pairs: tuple[np.ndarray, np.ndarray], count: int,
                 rng: np.random.Generator) -> np.ndarray:
    """`count` permuted memberships (count, n_old + n_new): a shared item swapped with its twin or not, the rest
    shuffled among themselves (as many in the new run as before)."""
    n = n_old + n_new
    twin_old, twin_new = pairs[0], pairs[1] + n_old
    single = np.setdiff1d(np.arange(n), np.concatenate([twin_old, twin_new]))
    single_new = int((single >= n_old).sum())
    out = np.zeros((count, n))
    swap = rng.random((count, len(twin_old))) < 0.5
    out[:, twin_old] = swap
    out[:, twin_new] = ~swap
    if len(single):
        keys = rng.random((count, len(single)))
        ranks = np.argsort(keys, axis=1)
        chosen = np.zeros((count, len(single)))
        np.put_along_axis(chosen, ranks[:, :single_new], 1.0, axis=1)
        out[:, single] = chosen
    return out


def pattern_tests(old: Run, new: Run, classes: int, permutations: int, rng: np.random.Generator,
                  pairs: tuple[np.ndarray, np.ndarray]) -> list[tuple[float, float, tuple[int, int]]]:
    """(statistic, permutation p-value, items) of each judge, then the panel (module docstring)."""
    verdicts = np.concatenate([old.verdicts, new.verdicts])
    n_old = len(old.verdicts)
    cats = _judge_categories(verdicts, classes)
    _, panel = np.unique(verdicts, axis=0, return_inverse=True)
    columns = [cats[:, j] for j in range(cats.shape[1])] + [panel.reshape(-1)]
    sizes = [(classes + 1) * 3] * cats.shape[1] + [int(panel.max()) + 1]
    observed = np.zeros((1, len(verdicts)))
    observed[0, n_old:] = 1.0
    stat = np.array([chi_square(c, observed, k)[0] for c, k in zip(columns, sizes, strict=True)])
    exceed = np.zeros(len(columns))
    done = 0
    while done < permutations:
        step = min(BLOCK, permutations - done)
        member = _memberships(n_old, len(new.verdicts), pairs, step, rng)
        for i, (c, k) in enumerate(zip(columns, sizes, strict=True)):
            exceed[i] += int((chi_square(c, member, k) >= stat[i] * (1 - 1e-9) - 1e-12).sum())
        done += step
    items = (n_old, len(new.verdicts))
    return [(float(s), float((1 + e) / (1 + permutations)), items) for s, e in zip(stat, exceed, strict=True)]


def holm(values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values."""
    p = np.asarray(values, dtype=float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.maximum.accumulate(np.minimum((m - np.arange(m)) * p[order], 1.0))
    out = np.empty(m)
    out[order] = adjusted
    return out


def check_options(confidence_level: float, max_change: float, permutations: int) -> None:
    check("drift.confidence_level", confidence_level)
    check("max_change", max_change)
    check("permutations", permutations)


def drift(old: Run, new: Run, names: Sequence[str], classes: int, confidence_level: float = DRIFT_CONFIDENCE_LEVEL,
          max_change: float = 0.0, permutations: int = PERMUTATIONS,
          rng: np.random.Generator | None = None) -> DriftResult:
    """Per judge and for the panel: the labels' change and the label-free test (module docstring)."""
    check_options(confidence_level, max_change, permutations)
    rng = np.random.default_rng(0) if rng is None else rng
    rows = len(names) + 1
    ia, ib = _shared(old, new)
    same_gold = (old.gold[ia] >= 0) & (old.gold[ia] == new.gold[ib])
    paired = bool(same_gold.sum()) and same_gold.sum() >= PAIRED_SHARE * min(old.labeled, new.labeled)
    alpha = 1 - confidence_level
    labels_alpha = alpha / 2 if old.labeled and new.labeled else 0.0  # the gate's false alarm split between the parts
    simultaneous = 1 - (labels_alpha or alpha) / rows
    co, cn = correctness(old, classes), correctness(new, classes)
    pairs = (ia[same_gold], ib[same_gold]) if paired else None
    changes = [_change(co[:, j], cn[:, j], pairs, simultaneous) for j in range(rows)]
    tests = pattern_tests(old, new, classes, permutations, rng, (ia, ib))
    adjusted = holm([t[1] for t in tests])
    test_alpha = alpha - labels_alpha
    out = []
    for name, ch, (s, p, items), ph in zip([*names, PANEL], changes, tests, adjusted, strict=True):
        by_labels = ch.low is not None and ch.high is not None and (ch.low > max_change or ch.high < -max_change)
        out.append(DriftRow(name, ch, PatternTest(s, p, float(ph), items), bool(by_labels), bool(ph <= test_alpha)))
    return DriftResult(tuple(out), len(ia), int(same_gold.sum()), paired, permutations, simultaneous, test_alpha)

