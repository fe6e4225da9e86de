"""Input checks and vote splits: items' class counts, their distinct sorted rows, and per split what a wrong
plurality means (which correct counts it may have, and the folded model's offset)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..distributions import log_beta_binomial, logsumexp
from ..errors import P0, P1, ParameterError
from ..parameters import check

# --- input checks -------------------------------------------------------------------------------------

def _check(votes: Any, gold: Any, ks: tuple[int, ...], confidence_level: float, n_classes: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    v = np.asarray(votes)
    g = np.asarray(gold)
    if v.ndim != 2:
        raise ParameterError("votes", f"must be a 2-D array (items x judges); got {v.ndim} dimension(s)")
    if g.ndim != 1 or g.shape[0] != v.shape[0]:
        raise ParameterError(("gold", "votes"), f"{P0} must hold one entry per item of {P1} ({v.shape[0]}); got shape {g.shape}")
    for name, a in (("votes", v), ("gold", g)):
        if a.size and not np.issubdtype(a.dtype, np.integer):
            if not (np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a)) and np.all(a == np.round(a))):
                raise ParameterError(name, "must hold integer class codes (-1 = none)")
        if a.size and int(a.min()) < -1:
            raise ParameterError(name, f"holds {int(a.min())}; class codes are >= 0 and -1 means none")
    v = v.astype(np.int64, copy=False)
    g = g.astype(np.int64, copy=False)
    check("ks", ks)  # parameters.py: the one range of each shared parameter
    check("confidence_level", confidence_level)
    seen = max(int(v.max()) if v.size else -1, int(g.max()) if g.size else -1) + 1
    classes = max(seen, 2) if n_classes is None else int(n_classes)
    if classes < seen or classes < 2:
        raise ParameterError("n_classes", f"must be at least 2 and cover every class code (largest {seen - 1}); got {n_classes}")
    return v, g, classes


def _check_counts(counts: Any, rows: int) -> np.ndarray:
    if counts is None:
        return np.ones(rows, dtype=np.int64)
    c = np.asarray(counts)
    if c.shape != (rows,):
        raise ParameterError(("counts", "votes"), f"{P0} must hold one entry per row of {P1} ({rows}); got shape {c.shape}")
    if c.size and (not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(c != np.round(c))):
        raise ParameterError("counts", "must be non-negative whole numbers (items per row)")
    return c.astype(np.int64)


# --- patterns -----------------------------------------------------------------------------------------

def class_counts(votes: np.ndarray, n_classes: int) -> np.ndarray:
    """counts[item, c] = how many judges gave class c (no verdict, -1, is not counted)."""
    items = votes.shape[0]
    flat = (np.arange(items)[:, None] * n_classes + votes)[votes >= 0]
    return np.bincount(flat, minlength=items * n_classes).reshape(items, n_classes)


def distinct_patterns(
    counts: np.ndarray, inverse: bool = False, extra: np.ndarray | None = None, weights: np.ndarray | None = None
) -> Any:
    """The distinct rows of class counts sorted in descending order (the vote splits), how many items have each,
    and (inverse=True) each item's row; `weights`: how many items each input row stands for.

    Rows are encoded as one integer each (base: largest count + 1) so that 10^5 items aggregate in milliseconds;
    np.unique over rows is the fallback when the code would not fit in 63 bits.
    """
    srt = np.sort(counts, axis=1)[:, ::-1]
    if extra is not None:  # a further non-negative integer key per item, kept as the last column
        srt = np.column_stack([srt, extra])
    if srt.shape[0] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return (srt, empty, empty) if inverse else (srt, empty)
    width = srt.shape[1]
    base = int(srt.max()) + 1
    if width * math.log2(base) < 62:
        powers = base ** np.arange(width, dtype=np.int64)
        _codes, first, inv, how_many = np.unique(srt @ powers, return_index=True, return_inverse=True, return_counts=True)
        rows = srt[first]
    else:
        rows, inv, how_many = np.unique(srt, axis=0, return_inverse=True, return_counts=True)
    inv = np.asarray(inv).ravel()
    if weights is not None:  # rows that stand for several items each
        how_many = np.bincount(inv, weights=weights, minlength=len(rows)).astype(np.int64)
    return (rows, how_many, inv) if inverse else (rows, how_many)


@dataclass(frozen=True)
class Splits:
    """Per vote split (a row of sorted class counts): its margin x, the offset of the logit of a wrong plurality,
    whether the plurality is right whatever the gold class, and, when wrong, the correct counts S it may have and
    their probabilities."""

    x: np.ndarray
    offset: np.ndarray
    always_right: np.ndarray
    alternatives: tuple[tuple[np.ndarray, np.ndarray], ...]


def _splits(rows: np.ndarray, n_classes: int, bb: tuple[float, float] | None) -> Splits:
    """Without `bb`: the gold class of a wrong plurality is another voted class in proportion to its votes, or a
    class nobody gave (S = 0) when no other class has votes; offset 0. With `bb` = (a, b): each candidate gold
    class is weighted by BB(its count | n, a, b) (a class nobody gave: BB(0), once per such class), and the
    offset is log P(gold not at the top) - log P(gold at the top) under that Beta-Binomial."""
    xs, offs, right, alts = [], [], [], []
    for row in rows:
        n = int(row.sum())
        m = int(row[0])
        t = int((row == m).sum())
        voted = int((row > 0).sum())
        others = row[t:][row[t:] > 0].astype(np.int64)
        unvoted = n_classes - voted
        xs.append((2 * m - n) / n)
        if t >= n_classes:
            right.append(True)
            offs.append(0.0)
            alts.append((np.zeros(0, dtype=np.int64), np.zeros(0)))
            continue
        right.append(False)
        if bb is None:
            if others.size:
                alts.append((others, others / others.sum()))
            else:
                alts.append((np.zeros(1, dtype=np.int64), np.ones(1)))
            offs.append(0.0)
            continue
        a, b = bb
        cand = np.concatenate([others, np.zeros(1 if unvoted > 0 else 0, dtype=np.int64)])
        logw = log_beta_binomial(cand, n, a, b) + np.concatenate([np.zeros(others.size), np.log([unvoted] if unvoted > 0 else [])])
        top = math.log(t) + float(log_beta_binomial(np.array(m), n, a, b))
        lse = float(logsumexp(logw))
        alts.append((cand, np.exp(logw - lse)))
        offs.append(float(np.clip(lse - top, -30.0, 30.0)))
    return Splits(np.round(np.array(xs, dtype=float), 12), np.array(offs, dtype=float), np.array(right, dtype=bool), tuple(alts))



_STEPS = 50  # the weighted margin is kept to 1/50


def _weighted_margin_code(votes: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per item, the plurality's margin with each judge weighted by its log odds of agreeing with the other judges'
    plurality (over every item, labeled or not: no gold needed), coded as an integer 0..2 * _STEPS.

    x = (sum of the weights of the judges in the plurality - those of the others) / (those of all who voted)."""
    items, judges = votes.shape
    top = counts.argmax(axis=1)
    agree = np.zeros(judges)
    voted = np.zeros(judges)
    for j in range(judges):
        vj = votes[:, j]
        has = vj >= 0
        others = counts[has].copy()
        others[np.arange(int(has.sum())), vj[has]] -= 1
        best = others.max(axis=1)
        n_best = (others == best[:, None]).sum(axis=1)
        mine = others[np.arange(int(has.sum())), vj[has]]
        agree[j] = float(np.sum(weights[has] * np.where(mine == best, 1.0 / n_best, 0.0)))
        voted[j] = float(weights[has].sum())
    acc = (agree + 1.0) / (voted + 2.0)
    w = np.maximum(np.log(acc / (1 - acc)), 0.05)
    valid = votes >= 0
    sign = np.where(votes == top[:, None], 1.0, -1.0) * valid
    x = (sign * w).sum(axis=1) / np.maximum((valid * w).sum(axis=1), 1e-12)
    code: np.ndarray = np.rint((np.clip(x, -1.0, 1.0) + 1.0) * _STEPS).astype(np.int64)
    return code

