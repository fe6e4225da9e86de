"""The "agreement" model's offset: P(plurality wrong) per split from a one-coin Dawid-Skene model of the judges.

Each judge j has one accuracy a_j (P(its verdict is the gold class)); a wrong verdict is any other class, equally
likely; the judges err independently given the gold class, whose prior is pi. Fitted by EM to every item's
verdicts, gold ignored (`split_offsets`; `fit_one_coin` can fix labeled items), with add-one smoothing of each
accuracy and class share. An item's P(plurality wrong) is then 1 - P(gold is a top class | its
verdicts), computed without its own gold, and a split's offset is the log odds of the mean of its items'.
"""

from __future__ import annotations

import numpy as np

from ..distributions import logsumexp

_ITERATIONS = 200
_TOL = 1e-8


def _log_posterior(votes: np.ndarray, acc: np.ndarray, pi: np.ndarray, classes: int) -> np.ndarray:
    """log P(gold = c | verdicts) per item and class, under accuracies `acc` and class prior `pi`."""
    has = votes >= 0
    hit = np.log(acc)
    miss = np.log((1.0 - acc) / (classes - 1))
    base = (has * miss[None, :]).sum(axis=1)
    out = np.empty((votes.shape[0], classes))
    for c in range(classes):
        out[:, c] = np.log(pi[c]) + base + ((votes == c) * (hit - miss)[None, :]).sum(axis=1)
    norm: np.ndarray = out - logsumexp(out, axis=1)[:, None]
    return norm


def fit_one_coin(votes: np.ndarray, gold: np.ndarray, weight: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """EM for the one-coin Dawid-Skene model: (each judge's accuracy, the class prior). Deterministic: it starts
    from the items' vote shares and stops when no accuracy moves by more than 1e-8 (at most 200 rounds)."""
    has = votes >= 0
    lab = gold >= 0
    counts = np.stack([(votes == c).sum(axis=1) for c in range(classes)], axis=1).astype(float)
    q = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    onehot = np.zeros_like(q)
    onehot[np.nonzero(lab)[0], gold[lab]] = 1.0
    acc = np.full(votes.shape[1], 0.5)
    pi = np.full(classes, 1.0 / classes)
    for _ in range(_ITERATIONS):
        q = np.where(lab[:, None], onehot, q)
        right = np.zeros(votes.shape[1])
        for c in range(classes):
            right += ((votes == c) * (weight * q[:, c])[:, None]).sum(axis=0)
        new_acc = np.clip((right + 1.0) / ((has * weight[:, None]).sum(axis=0) + 2.0), 1e-6, 1 - 1e-6)
        pi = (weight @ q + 1.0) / (weight.sum() + classes)
        q = np.exp(_log_posterior(votes, new_acc, pi, classes))
        done = float(np.max(np.abs(new_acc - acc))) < _TOL
        acc = new_acc
        if done:
            break
    return acc, pi


def split_offsets(votes: np.ndarray, counts: np.ndarray, weight: np.ndarray, classes: int, item_split: np.ndarray,
                  n_splits: int) -> np.ndarray:
    """Per split, log P(wrong) - log P(right) of the mean over its items of the one-coin model's P(plurality wrong),
    each item's computed from its verdicts alone (clipped to +-30)."""
    # the EM runs on the distinct verdict rows: 10^5 items of a few judges are a few thousand rows
    # fitted to the verdicts alone, gold ignored: the labels then enter once, in the likelihood that calibrates
    # (b0, b1) and weighs the models (with the labeled items' gold in the EM, the labels were used twice and
    # verdicts independent of the gold passed the guard: tests/test_fit_unlabeled.py)
    rows, inv = np.unique(votes, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    acc, pi = fit_one_coin(rows, np.full(len(rows), -1), np.bincount(inv, weights=weight, minlength=len(rows)), classes)
    logq = _log_posterior(rows, acc, pi, classes)[inv]
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
