"""The "agreement" model's offset: P(plurality wrong) per split from a one-coin Dawid-Skene model of the judges.

Each judge j has one accuracy a_j (P(its verdict is the gold class)); a wrong verdict is any other class, equally
likely; the judges err independently given the gold class, whose prior is pi. Fitted by EM to every item's
verdicts, gold ignored (`split_offsets`; `fit_one_coin` can fix labeled items), with add-one smoothing of each
accuracy and class share. An item's P(plurality wrong) is then 1 - P(gold is a top class | its
verdicts), computed without its own gold, and a split's offset is the log odds of the mean of its items'.
"""

from __future__ import annotations

import math

import numpy as np

from .. import em
from ..dawid_skene import OneCoin, coded, log_likelihood, vote_shares
from ..distributions import logsumexp

_ITERATIONS = 200
_TOL = 1e-8


def _log_posterior(votes: np.ndarray, acc: np.ndarray, pi: np.ndarray, classes: int) -> np.ndarray:
    """log P(gold = c | verdicts) per item and class, under accuracies `acc` and class prior `pi`."""
    joint = log_likelihood(coded(votes, classes), acc) + np.log(pi)[None, :]
    return em.log_normalise(joint)[0]


def fit_one_coin(votes: np.ndarray, gold: np.ndarray, weight: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The one Dawid-Skene model's one-coin variant (dawid_skene.OneCoin: add-one smoothing of each accuracy and
    class share), labeled items clamped: (each judge's accuracy, the class prior). Deterministic: it starts from the
    items' vote shares and stops when no accuracy moves by more than 1e-8 (at most 200 rounds)."""
    x = coded(votes, classes, weight, gold)
    # unlike score's model it stops on the accuracies (round 0's all 0.5), not on the likelihood, and does not warn
    # at the cap: the rule this model was benchmarked with, kept so that its offsets and every number after them
    # stay the same (the offsets are one input of a fit whose calibration (b0, b1) the labels then make)
    fit = OneCoin().fit(x, [vote_shares(x, 0.0)], max_iter=_ITERATIONS, tol=_TOL, watch_accuracy=True,
                        watch_start=np.full(votes.shape[1], 0.5))
    prior, acc = fit.params
    return acc, prior


def label_free_posterior(votes: np.ndarray, weight: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The one-coin model fitted to every item's verdicts with the gold ignored (on the distinct verdict rows: 10^5
    items of a few judges are a few thousand rows): (items x classes log P(gold = c | the item's verdicts), each
    judge's accuracy)."""
    rows, inv = np.unique(votes, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    acc, pi = fit_one_coin(rows, np.full(len(rows), -1), np.bincount(inv, weights=weight, minlength=len(rows)), classes)
    return _log_posterior(rows, acc, pi, classes)[inv], acc


# judges count as distinct when they disagree at least 80% as often as independent judges of their accuracies would
# (stated before measuring: docs/UNLABELED.md, "round 4")
DISTINCT_D = 0.2


def dependence_share(votes: np.ndarray, weight: np.ndarray, classes: int, acc: np.ndarray) -> float:
    """D = 1 - (observed disagreements) / (disagreements implied by conditional independence), summed over every
    pair of judges on the items both judged (label-free; docs/UNLABELED.md, "round 4"): under the one-coin model
    with accuracies `acc`, judges j and l disagree with probability 1 - a_j a_l - (1 - a_j)(1 - a_l) / (C - 1).
    Independent judges give D near 0; judges that share mistakes (near copies, one model under several prompts,
    items that fool all) give D > 0; 0.0 when no pair of judges has an item in common."""
    has = (votes >= 0).astype(float) * weight[:, None]
    present = (votes >= 0).astype(float)
    agree = np.zeros((votes.shape[1],) * 2)
    for c in range(classes):
        said = (votes == c).astype(float)
        agree += (said * weight[:, None]).T @ said
    both = has.T @ present  # items (weighted) each pair judged together
    a = np.asarray(acc, dtype=float)
    p_dis = 1.0 - np.outer(a, a) - np.outer(1 - a, 1 - a) / max(classes - 1, 1)
    off = ~np.eye(len(a), dtype=bool)
    implied = float((both * p_dis)[off].sum())
    observed = float((both - agree)[off].sum())
    return 1.0 - observed / implied if implied > 0 else 0.0


def split_offsets(votes: np.ndarray, counts: np.ndarray, weight: np.ndarray, classes: int, item_split: np.ndarray,
                  n_splits: int, logq: np.ndarray | None = None) -> np.ndarray:
    """Per split, log P(wrong) - log P(right) of the mean over its items of the one-coin model's P(plurality wrong),
    each item's computed from its verdicts alone (clipped to +-30); `logq`: label_free_posterior's, if computed."""
    # the EM runs on the distinct verdict rows: 10^5 items of a few judges are a few thousand rows
    # fitted to the verdicts alone, gold ignored: the labels then enter once, in the likelihood that calibrates
    # (b0, b1) and weighs the models (with the labeled items' gold in the EM, the labels were used twice and
    # verdicts independent of the gold passed the guard: tests/test_fit_unlabeled.py)
    if logq is None:
        logq = label_free_posterior(votes, weight, classes)[0]
    top = counts == counts.max(axis=1, keepdims=True)
    log_right = logsumexp(np.where(top, logq, -np.inf), axis=1)
    p_right = np.exp(np.minimum(log_right, 0.0))
    p_wrong = -np.expm1(np.minimum(log_right, 0.0))
    right = np.bincount(item_split, weights=weight * p_right, minlength=n_splits)
    wrong = np.bincount(item_split, weights=weight * p_wrong, minlength=n_splits)
    with np.errstate(divide="ignore"):
        out = np.log(wrong) - np.log(right)
    clipped: np.ndarray = np.clip(np.nan_to_num(out, nan=0.0, posinf=30.0, neginf=-30.0), -30.0, 30.0)
    return clipped


# the guard's one-sided test: the judges agree beyond chance at this level of the normal quantile (5% false alarms)
CHANCE_Z = 1.6448536269514722


def agreement_z(votes: np.ndarray, weight: np.ndarray, classes: int) -> float:
    """How far the judges agree beyond chance, as a z statistic (label-free; the guard reads it). Per item with at
    least two verdicts: the share of its pairs of judges that give the same class, minus the share expected if every
    judge voted independently at its own class rates (estimated over all items); z = the weighted mean of that
    excess over its standard error (items independent). Judges whose verdicts carry no common signal (independent
    of the gold and of each other) give z ~ N(0, 1); judges that track the gold agree beyond chance, z grows with
    the number of items."""
    has = votes >= 0
    onehot = np.stack([(votes == c) for c in range(classes)], axis=2).astype(float)  # items x judges x classes
    rates = (onehot * weight[:, None, None]).sum(axis=0) / np.maximum((has * weight[:, None]).sum(axis=0), 1e-12)[:, None]
    n = has.sum(axis=1).astype(float)
    pairs = n * (n - 1) / 2
    counts = onehot.sum(axis=1)
    observed = (counts * (counts - 1) / 2).sum(axis=1)
    shares = has.astype(float) @ rates  # items x classes: the sum of present judges' rates
    expected = ((shares**2).sum(axis=1) - has.astype(float) @ (rates**2).sum(axis=1)) / 2
    ok = pairs > 0
    if not ok.any():
        return 0.0
    d, w = (observed[ok] - expected[ok]) / pairs[ok], weight[ok]
    total = float(w.sum())
    mean = float(w @ d) / total
    var = float(w @ (d - mean) ** 2) / max(total - 1.0, 1.0)
    return mean / math.sqrt(var / total) if var > 0 else (math.inf if mean > 0 else 0.0)


# round 5 (docs/UNLABELED.md): the judges count as interchangeable unless Cochran's Q rejects, at this level, that every
# judge gives the item's plurality class at the same rate (stated before the statistic was computed on any data)
EXCHANGEABLE_P = 0.05


def chi2_sf(x: float, df: int) -> float:
    """P(chi-squared with `df` degrees of freedom > x), exact for integer df (the closed forms of the regularised
    upper incomplete gamma function at df / 2, integer or half-integer)."""
    if x <= 0:
        return 1.0
    half = x / 2.0
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, df // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    total, term = math.erfc(math.sqrt(half)), math.sqrt(2.0 * x / math.pi) * math.exp(-half)
    for i in range(1, (df - 1) // 2 + 1):
        total += term
        term *= x / (2 * i + 1)
    return min(1.0, total)


def plurality_cochran(votes: np.ndarray, weight: np.ndarray, classes: int) -> tuple[float, float]:
    """Cochran's Q (Cochran 1950) for "every judge gives the item's plurality class at the same rate", label-free:
    per item that every judge judged and whose top class is not tied, the indicator that judge j gave the top class;
    Q = (K - 1)(K sum_j C_j^2 - N^2) / (K N - sum_i R_i^2) with C_j the judges' (weighted) totals, R_i the items'
    and N their sum; unanimous items add nothing. Under interchangeable judges (within each item, whatever they
    share) Q ~ chi-squared with K - 1 degrees of freedom: (Q, its p-value); (0, 1) when no item or judge can tell."""
    k = votes.shape[1]
    counts = np.stack([(votes == c).sum(axis=1) for c in range(classes)], axis=1)
    top = counts.argmax(axis=1)
    tied = (counts == counts.max(axis=1, keepdims=True)).sum(axis=1) > 1
    keep = (votes >= 0).all(axis=1) & ~tied & (weight > 0)
    if k < 2 or not keep.any():
        return 0.0, 1.0
    x = (votes[keep] == top[keep, None]).astype(float)
    w = weight[keep].astype(float)
    col, row = w @ x, x.sum(axis=1)
    n = float(col.sum())
    denom = k * n - float(w @ row**2)
    if denom <= 0:
        return 0.0, 1.0
    q = (k - 1) * (k * float(col @ col) - n * n) / denom
    return q, chi2_sf(q, k - 1)
