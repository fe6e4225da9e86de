"""Alternatives measured for issue 26 (benchmarks/judges_loco.py), not shipped: the picked ensemble's error on every
item, rectified by the labels and corrected for the pick.

Prediction-powered (AIPW) estimate of a subset S's majority error on the N items read (labeled and unlabeled, a
finite population), over the items on which every member gave a verdict:

    theta_S = ( sum_lab e_S(i) + sum_unl p_S(i) + N_u * rbar_S ) / N,    rbar_S = mean_lab (e_S(i) - p_S(i))

e_S(i): the exact majority error on a labeled item (ties half); p_S(i): the Dawid-Skene model's expected error
given the item's verdicts alone, gold hidden (unlabeled.py, `PatternErrors.predicted`). For a FIXED S and labeled
items drawn at random from the N, theta_S is unbiased for S's error on the N items whatever the model (the model
only narrows the interval: with p = 0 it is the labels' own error). Its error theta_S - truth is
(N_u / N) (rbar_lab - rbar_unl), whose variance under sampling without replacement is (N_u / N)^2 s^2 (1/r + 1/N_u)
with s^2 the residuals' variance: the interval's normal half-width (no tuned constant).

The pick breaks that: the ensemble picked for its low error on the labels has, on those labels, luckier residuals
than on the other items (the winner's curse; the naive pick's own labeled error was 5 points too low at r = 30).
The selection's effect on rbar is estimated by the bootstrap of the whole pick (Efron's optimism): B resamples of
the labeled items, the pick made again on each (the same rule, `pick_order`), and the mean over resamples of the
resampled pick's rbar on the resample minus its rbar on the labeled items is subtracted; its spread over the
resamples is added to the variance. Also: cross-fitting (the pick made on K - 1 folds, its rectifier on the held-out
fold) and the rectifier pooled over every candidate. Measured leave-one-collection-out (docs/JUDGES.md, "Issue 26:
LOCO"): every variant that rectifies with the picked ensemble's own labels stays optimistic (the luck of the pick is
in its residuals), and none beat the issue-17 all-items estimate, which `judges` ships. `outside_split`: the
vote split with its strata also split by the judges outside the candidate, measured the same way (worse).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from betaconform_cli.judges.unlabeled import ClassModel, Verdicts, pattern_errors

BOOTSTRAP = 200  # resamples of the labeled items for the pick's optimism


@dataclass(frozen=True)
class LabeledErrors:
    """Each candidate's exact and predicted majority error on each labeled item (rows: candidates; NaN where a
    member gave no verdict), and the unlabeled part's sums."""

    exact: np.ndarray  # (n, r)
    predicted: np.ndarray  # (n, r)
    unlabeled_sum: np.ndarray  # (n,) sum of p_S over the unlabeled items with every member's verdict
    unlabeled_items: np.ndarray  # (n,) those items


def labeled_errors(v: Verdicts, model: ClassModel, members: np.ndarray) -> LabeledErrors:
    """The labeled patterns expanded to items (one column each), the unlabeled ones summed."""
    pe = pattern_errors(v, model, members)
    lab = v.labeled
    cols = np.repeat(np.flatnonzero(lab), v.counts[lab])
    done = pe.complete[:, cols]
    w_unl = v.counts[None, :] * pe.complete * ~lab[None, :]
    return LabeledErrors(np.where(done, pe.posterior[:, cols], np.nan), np.where(done, pe.predicted[:, cols], np.nan),
                         (w_unl * pe.predicted).sum(axis=1), w_unl.sum(axis=1).astype(float))


def pick_order(errors: np.ndarray, tiebreak: np.ndarray) -> int:
    """The naive pick: the lowest error on the labels (NaN: none), ties to the lowest `tiebreak`, then the first."""
    score = np.where(np.isnan(errors), np.inf, errors)
    return int(np.lexsort((np.arange(len(score)), tiebreak, np.round(score, 12)))[0])


def _means(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted means over the labeled items (columns) of every candidate, per resample: (B, n)."""
    seen = ~np.isnan(values)
    num = weights @ np.where(seen, values, 0.0).T
    den = weights @ seen.T.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan)
    return out


def optimism(le: LabeledErrors, tiebreak: np.ndarray, rng: np.random.Generator,
             resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """(mean, variance) over bootstrap resamples of the labeled items of rbar(pick on the resample) on the
    resample minus the same subset's rbar on the labeled items: the naive pick's optimism in its rectifier."""
    r = le.exact.shape[1]
    if r < 2:
        return 0.0, 0.0
    weights = rng.multinomial(r, np.full(r, 1.0 / r), size=resamples).astype(float)
    emp = _means(le.exact, weights)
    resid = le.exact - le.predicted
    rb = _means(resid, weights)
    r0 = _means(resid, np.ones((1, r)))[0]
    picks = np.array([pick_order(e, tiebreak) for e in emp])
    diffs = rb[np.arange(resamples), picks] - r0[picks]
    diffs = diffs[np.isfinite(diffs)]
    if len(diffs) == 0:
        return 0.0, 0.0
    return float(diffs.mean()), float(diffs.var())


def _rbar(le: LabeledErrors, weights: np.ndarray) -> np.ndarray:
    out: np.ndarray = _means(le.exact - le.predicted, weights)
    return out


def cross_fit(le: LabeledErrors, pick: int, tiebreak: np.ndarray, rng: np.random.Generator,
              folds: int = 5) -> tuple[float, float]:
    """The correction (mean, variance) that replaces the pick's own rectifier by a cross-fitted one: the labeled
    items in `folds` random folds; on each, the naive pick made on the other folds, its rectifier on the fold
    (held out: no selection); their mean over the folds."""
    r = le.exact.shape[1]
    if r < folds:
        return 0.0, 0.0
    fold = rng.permutation(np.arange(r) % folds)
    held = [(fold == f).astype(float)[None, :] for f in range(folds)]
    emp = [_means(le.exact, 1.0 - h)[0] for h in held]
    rects = np.array([_rbar(le, h)[0, pick_order(e, tiebreak)] for h, e in zip(held, emp, strict=True)])
    rects = rects[np.isfinite(rects)]
    if len(rects) == 0:
        return 0.0, 0.0
    own = float(_rbar(le, np.ones((1, r)))[0, pick])
    return own - float(rects.mean()), float(rects.var(ddof=1) / len(rects)) if len(rects) > 1 else 0.0


def pooled(le: LabeledErrors, pick: int) -> tuple[float, float]:
    """The correction that replaces the pick's own rectifier by the mean of every candidate's (no selection:
    every candidate of the size weighs the same)."""
    rb = _rbar(le, np.ones((1, le.exact.shape[1])))[0]
    return float(rb[pick] - np.nanmean(rb)), 0.0


@dataclass(frozen=True)
class Rectified:
    """One candidate's rectified all-items error: the estimate, its interval, the optimism subtracted."""

    estimate: float
    low: float
    high: float
    optimism: float
    floor: float  # the labeled items' known share of the error
    ceiling: float


def rectified(le: LabeledErrors, i: int, confidence_level: float, correction: tuple[float, float] = (0.0, 0.0),
              ) -> Rectified:
    """Candidate i's estimate theta (module docstring) with the pick's optimism `correction` (mean, variance)
    subtracted from its rectifier, and the finite-population normal interval (kept within the known range)."""
    e, p = le.exact[i], le.predicted[i]
    seen = ~np.isnan(e)
    r = int(seen.sum())
    n_u = float(le.unlabeled_items[i])
    n = r + n_u
    if r == 0 or n == 0:
        return Rectified(float("nan"), 0.0, 1.0, 0.0, 0.0, 1.0)
    resid = e[seen] - p[seen]
    rbar = float(resid.mean()) - correction[0]
    estimate = (float(e[seen].sum()) + float(le.unlabeled_sum[i]) + n_u * rbar) / n
    s2 = float(resid.var(ddof=1)) if r > 1 else 0.25
    var = (n_u / n) ** 2 * (s2 * (1.0 / r + 1.0 / max(n_u, 1.0)) + correction[1])
    half = float(stats.norm.ppf(0.5 + confidence_level / 2)) * float(np.sqrt(var))
    floor = float(e[seen].sum()) / n
    ceiling = floor + n_u / n
    estimate = min(max(estimate, floor), ceiling)
    return Rectified(estimate, max(estimate - half, floor), min(estimate + half, ceiling), correction[0], floor, ceiling)


def outside_split(v: Verdicts, model: ClassModel, members: np.ndarray, confidence_level: float,
                  pseudo_items: float = 20.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """splits.split_estimates with each stratum (members giving the lone plurality class) split three ways by the
    judges OUTSIDE the candidate: their plurality agrees with the candidate's, disagrees, or is tied / absent
    (binary verdicts). (estimate, low, high) per candidate; the same pool over candidates and pseudo-items."""
    from betaconform_cli.judges.splits import _by_stratum, _strata

    members = np.asarray(members, dtype=np.int64)
    k = members.shape[1]
    pe = pattern_errors(v, model, members)
    st = _strata(v, model, members)
    said = v.patterns >= 0
    ones = (v.patterns == 1) & said
    n_j = said.sum(axis=1)[None, :] - said[:, members].sum(axis=2).T  # outside judges with a verdict (n, m)
    n1 = ones.sum(axis=1)[None, :] - ones[:, members].sum(axis=2).T
    top_in = ((v.patterns[:, members] == 1).sum(axis=2).T * 2 > (said[:, members].sum(axis=2).T)).astype(int)
    out_top = np.where(2 * n1 > n_j, 1, np.where(2 * n1 < n_j, 0, -1))
    o = np.where(out_top < 0, 2, np.where(out_top == top_in, 0, 1))
    kk = 3 * (k + 1) - 1
    stratum = np.where(st.stratum >= 0, st.stratum * 3 + o, -1)
    lab = v.labeled[None, :]
    w = v.counts[None, :] * pe.complete
    total = w.sum(axis=1).astype(float)
    safe = np.maximum(total, 1.0)
    floor = (w * pe.posterior * lab).sum(axis=1) / safe
    share = (w * ~lab).sum(axis=1) / safe
    n_lab = _by_stratum(w * lab, stratum, kk)
    n_wrong = _by_stratum(w * lab * st.wrong, stratum, kk)
    pool = (n_wrong.sum(axis=0) + 0.5) / (n_lab.sum(axis=0) + 1.0)
    a, b = n_wrong + pseudo_items * pool, n_lab - n_wrong + pseudo_items * (1.0 - pool)
    q = a / (a + b)
    var_q = a * b / ((a + b) ** 2 * (a + b + 1.0))
    var_q += (pseudo_items / (n_lab + pseudo_items)) ** 2 * pool * (1.0 - pool) / (n_lab.mean(axis=0) + 1.0)
    q_item = np.take_along_axis(q, np.maximum(stratum, 0), axis=1)
    unl = w * ~lab
    strat = stratum >= 0
    e_unl = np.where(strat, (1.0 - q_item) * st.err_top + q_item * st.err_alt, pe.posterior)
    estimate = ((w * pe.posterior * lab).sum(axis=1) + (unl * e_unl).sum(axis=1)) / safe
    gap = (st.err_alt - st.err_top) * strat
    slope = _by_stratum(unl * gap, stratum, kk)
    bern = np.where(strat, q_item * (1.0 - q_item) * gap**2, pe.variance)
    var = ((slope**2 * var_q).sum(axis=1) + (unl * bern).sum(axis=1)) / safe**2
    half = float(stats.norm.ppf(0.5 + confidence_level / 2)) * np.sqrt(var)
    low = np.clip(estimate - half, floor, floor + share)
    high = np.clip(estimate + half, floor, floor + share)
    return estimate, np.minimum(low, estimate), np.maximum(high, estimate)
