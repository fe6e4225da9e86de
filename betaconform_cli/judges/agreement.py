"""Chance-corrected agreement (issue 27): a judge against the gold, and the panel of judges among themselves.

Pure functions on counts, vectorised over leading axes so that a bootstrap is one call on many tables:

- a judge against the gold: its confusion table t[g, v] (rows the gold class, columns the judge's verdict; counts or
  probabilities: every function normalises by the total). Cohen's kappa (po - pe) / (1 - pe) with pe = sum_c
  p(g = c) p(v = c); Gwet's AC1 (pa - pe) / (1 - pe) with pe = sum_c pi_c (1 - pi_c) / (C - 1), pi_c the mean of
  the two margins (Gwet 2008); Krippendorff's alpha (nominal) of two coders, 1 - (n - 1) D_o / D_e on the
  coincidence matrix o = t + t' (n = 2N; Krippendorff 2011).
- the panel: per item (a verdict pattern, `counts` items each) the number of judges giving each class. Fleiss'
  kappa (Fleiss 1971) on the items every judge judged; Krippendorff's alpha (nominal) on every item with at least
  two verdicts, o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1).

Intervals (`delta_interval`, `coefficient_interval`, `bootstrap_interval`): the delta method on a multinomial
table's cell probabilities (for kappa this is Fleiss, Cohen and Everitt's 1969 variance, for AC1 Gwet's; the tests
check both), made on the Fisher z scale with the variance taken at the table plus half an item per cell (small
samples); and the percentile bootstrap over items (resampling items is a multinomial draw of the pattern or cell
counts).
Undefined values (a table where every item is one class: pe = 1) are NaN here and null in the document.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import intervals
from ..intervals import enclose_value, equal_tailed, z_value
from ..score.ppi import Interval

Stat = Callable[[np.ndarray], np.ndarray]  # (..., C, C) tables -> (...) values
BOOTSTRAP_DRAWS = 1000
STEP = 1e-6  # the numerical gradient's step (on probabilities)


def _probs(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    total = t.sum(axis=(-2, -1), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = t / total
    return out


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(np.abs(den) > 1e-12, num / np.where(den == 0, 1.0, den), np.nan)
    return out


def accuracy(t: np.ndarray) -> np.ndarray:
    """The share of items on which the verdict is the gold class."""
    out: np.ndarray = np.trace(_probs(t), axis1=-2, axis2=-1)
    return out


def recall(t: np.ndarray, c: int) -> np.ndarray:
    """P(verdict c | gold c): sensitivity for the pass class, specificity for the other of two."""
    t = np.asarray(t, dtype=float)
    return _ratio(t[..., c, c], t[..., c, :].sum(axis=-1))


def cohen_kappa(t: np.ndarray) -> np.ndarray:
    """Cohen's kappa of the judge against the gold."""
    p = _probs(t)
    po = np.trace(p, axis1=-2, axis2=-1)
    pe = (p.sum(axis=-1) * p.sum(axis=-2)).sum(axis=-1)
    return _ratio(po - pe, 1.0 - pe)


def gwet_ac1(t: np.ndarray) -> np.ndarray:
    """Gwet's AC1 of the judge against the gold."""
    p = _probs(t)
    c = p.shape[-1]
    pa = np.trace(p, axis1=-2, axis2=-1)
    pi = (p.sum(axis=-1) + p.sum(axis=-2)) / 2
    pe = (pi * (1 - pi)).sum(axis=-1) / max(c - 1, 1)
    return _ratio(pa - pe, 1.0 - pe)


def _alpha_from_coincidences(o: np.ndarray) -> np.ndarray:
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    observed = n - np.trace(o, axis1=-2, axis2=-1)  # sum of o_ck over c != k
    expected = n * n - (n_c * n_c).sum(axis=-1)  # sum of n_c n_k over c != k
    return 1.0 - _ratio((n - 1) * observed, expected)


def krippendorff_alpha_pair(t: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (nominal) of two coders, the judge and the gold, from their table of counts."""
    t = np.asarray(t, dtype=float)
    return _alpha_from_coincidences(t + np.swapaxes(t, -1, -2))


# --- the panel: class counts per item ----------------------------------------------------------------------


def class_counts(patterns: np.ndarray, classes: int) -> np.ndarray:
    """(m, C) the number of judges giving each class on each pattern (-1: no verdict)."""
    p = np.asarray(patterns)
    out: np.ndarray = (p[:, :, None] == np.arange(classes)[None, None, :]).sum(axis=1).astype(float)
    return out


def panel_alpha(n_uc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (nominal) of the panel: n_uc (m, C) class counts per pattern, weights (..., m) items per
    pattern; patterns with fewer than two verdicts are not pairable and count for nothing."""
    m_u = n_uc.sum(axis=1)
    pairable = m_u >= 2
    n = n_uc[pairable]
    per_unit = (n[:, :, None] * n[:, None, :] - np.eye(n.shape[1])[None] * n[:, :, None]) / (m_u[pairable] - 1)[:, None, None]
    o = np.tensordot(np.asarray(weights, dtype=float)[..., pairable], per_unit, axes=([-1], [0]))
    return _alpha_from_coincidences(o)


def fleiss_kappa(n_uc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of the panel on the patterns every judge judged (the same number of verdicts, the largest);
    weights (..., m) items per pattern."""
    m_u = n_uc.sum(axis=1)
    raters = m_u.max() if len(m_u) else 0
    full = m_u == raters
    n, w = n_uc[full], np.asarray(weights, dtype=float)[..., full]
    if raters < 2 or not full.any():
        return np.full(w.shape[:-1], np.nan)
    items = w.sum(axis=-1)
    p_i = ((n * n).sum(axis=1) - raters) / (raters * (raters - 1))
    p_bar = _ratio(w @ p_i, items)
    p_c = _ratio(w @ n, (items * raters)[..., None])
    pe = (p_c * p_c).sum(axis=-1)
    return _ratio(p_bar - pe, 1.0 - pe)


# --- intervals ---------------------------------------------------------------------------------------------


def _z(confidence_level: float) -> float:
    return z_value(confidence_level)


def gradient(stat: Stat, p: np.ndarray) -> np.ndarray:
    """The numerical gradient of stat at the probability table p (central differences, one call)."""
    flat = p.reshape(-1)
    eye = np.eye(len(flat)) * STEP
    up, down = (flat[None, :] + eye).reshape(-1, *p.shape), (flat[None, :] - eye).reshape(-1, *p.shape)
    out: np.ndarray = (stat(up) - stat(down)) / (2 * STEP)
    return out


def multinomial_covariance(t: np.ndarray) -> np.ndarray:
    """Covariance of the cell shares of a table of counts (flattened): (diag(p) - p p') / N."""
    n = float(np.sum(t))
    p = np.asarray(t, dtype=float).reshape(-1) / n
    out: np.ndarray = (np.diag(p) - np.outer(p, p)) / n
    return out


def delta_variance(stat: Stat, p: np.ndarray, covariance: np.ndarray) -> float:
    """Var stat(p) ~ g' Sigma g (the delta method), g the gradient at the cell probabilities p."""
    g = gradient(stat, p)
    return float(g @ covariance @ g)


def delta_interval(stat: Stat, p: np.ndarray, covariance: np.ndarray, confidence_level: float,
                   lo: float = -1.0, hi: float = 1.0, at: np.ndarray | None = None,
                   fisher_z: bool = False, wilson: float | None = None) -> Interval | None:
    """stat(p) +- z sd, kept in [lo, hi]; None where stat is undefined. `at`: the table where the gradient is taken
    (default p); `fisher_z`: the interval made on the atanh scale (sd / (1 - est^2)) and mapped back, for a
    coefficient in [-1, 1] whose distribution is skewed near its ends; `wilson` (the number of items N): for a
    proportion, Wilson's interval at the effective number of items e (1 - e) / var, e kept in [1/N, 1 - 1/N]."""
    est = float(stat(p))
    if not np.isfinite(est):
        return None
    var = delta_variance(stat, p if at is None else at, covariance)
    sd = float(np.sqrt(max(var, 0.0))) if np.isfinite(var) else np.inf
    z = _z(confidence_level)
    if fisher_z:
        e = est
        if abs(e) >= 1 - 1e-9 and at is not None and np.isfinite(stat(at)):  # at +-1 atanh is infinite: the interval
            e = float(stat(at))  # is centred at the table where the variance is taken (and still holds the estimate)
        e = min(max(e, -1 + 1e-9), 1 - 1e-9)
        low, high = np.tanh(np.arctanh(e) - z * sd / (1 - e * e)), np.tanh(np.arctanh(e) + z * sd / (1 - e * e))
    elif wilson is not None:  # Wilson's interval at the effective number of items p (1 - p) / var
        e = min(max(est, 1 / wilson), 1 - 1 / wilson)
        m = e * (1 - e) / max(sd * sd, 1e-300)
        low, high = intervals.wilson(est, m, confidence_level)  # (`wilson` here: the number of items)
    else:
        low, high = est - z * sd, est + z * sd
    low, high = enclose_value(est, low, high)
    return Interval(est, float(max(lo, low)), float(min(hi, high)))


SMOOTHING = 0.5  # added to every cell where a labels-only coefficient's variance is taken (Haldane-Anscombe)


def coefficient_interval(stat: Stat, t: np.ndarray, confidence_level: float, deff: float = 1.0) -> Interval | None:
    """A chance-corrected coefficient of a table of counts with its interval: the delta method (the multinomial
    covariance), taken at the table plus SMOOTHING per cell and on the Fisher z scale. Measured (docs/AGREEMENT.md):
    the plain delta interval covered 71-86% at 20 items where the classes are unequal; this one 86-97%. `deff`:
    the coefficient's design effect where items are clustered (judges/clustered.design_effect), its variance's factor."""
    t = np.asarray(t, dtype=float)
    n = float(t.sum())
    smooth = t + SMOOTHING
    cov = multinomial_covariance(smooth) * float(smooth.sum()) / n * deff
    return delta_interval(stat, t / n, cov, confidence_level, at=smooth / smooth.sum(), fisher_z=True)


def bootstrap_interval(estimate: float, draws: np.ndarray, confidence_level: float) -> Interval | None:
    """The percentile interval of bootstrap draws (undefined draws left out); None where the estimate is."""
    if not np.isfinite(estimate):
        return None
    ok = draws[np.isfinite(draws)]
    if len(ok) == 0:
        return Interval(estimate, estimate, estimate)
    low, high = enclose_value(estimate, *equal_tailed(ok, confidence_level, axis=None))
    return Interval(float(estimate), float(low), float(high))


def resample(counts: np.ndarray, rng: np.random.Generator, draws: int = BOOTSTRAP_DRAWS) -> np.ndarray:
    """(draws, *counts.shape) counts of items resampled with replacement (a multinomial draw over the cells)."""
    c = np.asarray(counts, dtype=float)
    total = int(round(c.sum()))
    if total == 0:
        return np.zeros((draws, *c.shape))
    out: np.ndarray = rng.multinomial(total, c.reshape(-1) / c.sum(), size=draws).reshape(draws, *c.shape).astype(float)
    return out


def holm(p_values: np.ndarray, level: float) -> np.ndarray:
    """Holm's step-down rejections at family-wise error `level` (NaN p-values never rejected)."""
    p = np.asarray(p_values, dtype=float)
    reject = np.zeros(len(p), dtype=bool)
    order = [i for i in np.argsort(np.where(np.isnan(p), np.inf, p)) if np.isfinite(p[i])]
    m = len(order)
    for rank, i in enumerate(order):
        if p[i] > level / (m - rank):
            break
        reject[i] = True
    return reject
