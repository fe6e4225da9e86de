"""The chosen ensemble's error from its vote splits, calibrated by the labels and shrunk across candidates (issue 17).

The Dawid-Skene estimate (unlabeled.py) predicts each unlabeled item's gold from an independence model that the
labels only temper; where judges err together it is off by what the labels alone would show. `fit`'s estimator
(votes/) calibrates instead P(plurality wrong | vote split) on the labeled items; but for an ensemble chosen on
those same labels, its own labeled items are the lucky ones (the winner's curse): measured, that estimate at the
pick was 2-8 points too low (benchmarks/judges.py --unlabeled --alternatives, "vote split at the pick").

Here, for each candidate S of one size and each stratum m (the number of members that give the plurality class,
when one class leads alone), on the items where every member gave a verdict:

    q[S, m] = (w[S, m] + a pool[m]) / (n[S, m] + a),   pool[m] = (sum_S w[S, m] + 1/2) / (sum_S n[S, m] + 1)

n: S's labeled items in stratum m, w: those whose plurality is not gold, a = `pseudo_items` (20, the weight
`judges` gives its model against the labels, JudgesSettings.pseudo_items). The pool over every candidate of the
size carries no selection (every subset is in it); the pick's own counts pull it toward the pick. An unlabeled item
in stratum m errs with err(m) if its plurality is gold and with e_alt otherwise (the majority error of the gold
class's count; with more than two classes, averaged over the other classes by the Dawid-Skene posterior), so its
expected error is (1 - q) err(m) + q e_alt; items whose top class is tied keep the Dawid-Skene expectation;
labeled items their exact error. Variance: q's Beta(w + a pool, n - w + a (1 - pool)) variance plus the pool's own
(its weight (a / (n + a))^2 times pool (1 - pool) / (the mean labeled items per candidate in the stratum + 1)), and
the items' Bernoulli spread given q.

`judges` reports the mean of this estimate and the Dawid-Skene one, with the mean of their bounds (the standard
deviation of a mean of two estimates is at most the mean of theirs, whatever their correlation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dawid_skene import one_hot
from ..distributions import majority_error_weights
from ..intervals import enclose, normal_half_width
from .unlabeled import CHUNK_CELLS, ClassModel, SubsetEstimates, Verdicts, pattern_errors

SPLIT_PSEUDO_ITEMS = 20.0  # a: the pool's weight against a candidate's own labeled items per stratum


@dataclass(frozen=True)
class _Strata:
    """Per candidate and pattern: stratum (members giving the lone plurality class; -1 tied top or incomplete),
    the error if the plurality is gold and if it is not, and whether the plurality is wrong on labeled patterns."""

    stratum: np.ndarray  # (n, m) int
    err_top: np.ndarray  # (n, m)
    err_alt: np.ndarray  # (n, m)
    wrong: np.ndarray  # (n, m) bool (labeled patterns)


def _strata(v: Verdicts, model: ClassModel, members: np.ndarray) -> _Strata:
    n_sub, k = members.shape
    onehot, m = one_hot(v.patterns, v.classes), len(v.gold)
    said = v.patterns >= 0
    out = _Strata(np.full((n_sub, m), -1), np.zeros((n_sub, m)), np.zeros((n_sub, m)), np.zeros((n_sub, m), bool))
    err = majority_error_weights(k)  # by the number of members giving the gold class
    step = max(1, CHUNK_CELLS // max(m * v.classes, 1))
    for lo in range(0, n_sub, step):
        chunk = members[lo : lo + step]
        counts = onehot[:, chunk, :].sum(axis=2).transpose(1, 0, 2).astype(np.intp)  # (s, m, C)
        top = counts.argmax(axis=2)
        lead = counts.max(axis=2)
        alone = (counts == lead[:, :, None]).sum(axis=2) == 1
        complete = said[:, chunk].all(axis=2).T
        other = model.posterior[None, :, :] * (np.arange(v.classes)[None, None, :] != top[:, :, None])
        mass = other.sum(axis=2, keepdims=True)
        flat = (np.arange(v.classes)[None, None, :] != top[:, :, None]) / max(v.classes - 1, 1)
        share = np.where(mass > 1e-12, other / np.maximum(mass, 1e-300), flat)
        sl = slice(lo, lo + len(chunk))
        out.stratum[sl] = np.where(alone & complete, lead, -1)
        out.err_top[sl] = err[lead]
        out.err_alt[sl] = (share * err[counts]).sum(axis=2)
        out.wrong[sl] = (top != v.gold[None, :]) & v.labeled[None, :]
    return out


def _by_stratum(values: np.ndarray, stratum: np.ndarray, k: int) -> np.ndarray:
    """(n, k + 1) sums of values[n, m] by stratum (-1: left out)."""
    n = values.shape[0]
    keep = stratum >= 0
    index = (np.arange(n)[:, None] * (k + 1) + stratum)[keep]
    out: np.ndarray = np.bincount(index, weights=values[keep], minlength=n * (k + 1)).reshape(n, k + 1)
    return out


def split_estimates(v: Verdicts, model: ClassModel, members: np.ndarray, confidence_level: float,
                    pseudo_items: float = SPLIT_PSEUDO_ITEMS) -> SubsetEstimates:
    """Each candidate's error on the items read from its vote splits (module docstring); members[n, k] are all
    the candidates of one size (the pool is over them)."""
    members = np.asarray(members, dtype=np.int64)
    k = members.shape[1]
    pe = pattern_errors(v, model, members)
    st = _strata(v, model, members)
    lab = v.labeled[None, :]
    w = v.counts[None, :] * pe.complete  # items per pattern that count
    total = w.sum(axis=1).astype(float)
    safe = np.maximum(total, 1.0)
    floor = (w * pe.posterior * lab).sum(axis=1) / safe
    share = (w * ~lab).sum(axis=1) / safe
    n_lab = _by_stratum(w * lab, st.stratum, k)
    n_wrong = _by_stratum(w * lab * st.wrong, st.stratum, k)
    pool = (n_wrong.sum(axis=0) + 0.5) / (n_lab.sum(axis=0) + 1.0)  # (k + 1,)
    a, b = n_wrong + pseudo_items * pool, n_lab - n_wrong + pseudo_items * (1.0 - pool)
    q = a / (a + b)
    var_q = a * b / ((a + b) ** 2 * (a + b + 1.0))
    var_q += (pseudo_items / (n_lab + pseudo_items)) ** 2 * pool * (1.0 - pool) / (n_lab.mean(axis=0) + 1.0)
    q_item = np.take_along_axis(q, np.maximum(st.stratum, 0), axis=1)  # (n, m)
    unl = w * ~lab
    strat = st.stratum >= 0
    e_split = (1.0 - q_item) * st.err_top + q_item * st.err_alt
    e_unl = np.where(strat, e_split, pe.posterior)
    estimate = ((w * pe.posterior * lab).sum(axis=1) + (unl * e_unl).sum(axis=1)) / safe
    gap = (st.err_alt - st.err_top) * strat
    slope = _by_stratum(unl * gap, st.stratum, k)  # d(unlabeled error sum) / d q[m]
    bern = np.where(strat, q_item * (1.0 - q_item) * gap**2, pe.variance)
    var = ((slope**2 * var_q).sum(axis=1) + (unl * bern).sum(axis=1)) / safe**2
    half = normal_half_width(var, confidence_level)
    low = np.clip(estimate - half, floor, floor + share)
    high = np.clip(estimate + half, floor, floor + share)
    return SubsetEstimates(estimate, *enclose(estimate, low, high), floor, floor + share, total.astype(np.int64))


def combined_estimates(ds: SubsetEstimates, split: SubsetEstimates) -> SubsetEstimates:
    """The mean of the Dawid-Skene and the vote-split estimates, with the mean of their bounds."""
    estimate = 0.5 * (ds.estimate + split.estimate)
    low = np.clip(0.5 * (ds.low + split.low), ds.floor, ds.ceiling)
    high = np.clip(0.5 * (ds.high + split.high), ds.floor, ds.ceiling)
    return SubsetEstimates(estimate, *enclose(estimate, low, high), ds.floor, ds.ceiling, ds.items)
