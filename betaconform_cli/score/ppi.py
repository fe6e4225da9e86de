"""The prediction-powered estimator of `score` on pass / not-pass arrays (score/estimator.py's module docstring
gives the equations): the tuned weight lambda, the labeled items' residuals, their (clustered, finite-population)
variance with pseudo-items, t intervals, Wilson's interval with the finite-population correction, and the
limited-translation shrinkage of the estimate toward what the judges say."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..intervals import t_half_width, t_value, wilson

LAMBDA_RANGE = (-1.0, 1.0)  # a negative weight uses judges that are worse than chance (benchmarks/score.py)
PSEUDO_ITEMS = 3.0  # pseudo-items of labels-only variance added to the residuals' (benchmarks/score.py --alternatives)
SHRINK_LIMIT = 0.5  # at most this many standard errors between the estimate and PPI++'s (benchmarks/score.py)


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval at `confidence_level`."""

    estimate: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def wmean(x: np.ndarray, w: np.ndarray) -> float:
    return float(w @ x / w.sum())


def tuned_lambda(y: np.ndarray, f: np.ndarray, w: np.ndarray) -> float:
    """Cov(y, f) / Var(f) on the labeled items (w: items per row), clipped to LAMBDA_RANGE; 0 when f does not vary
    there."""
    if w.sum() < 2:
        return 0.0
    fc = f - wmean(f, w)
    var_f = float(w @ fc**2)
    if var_f <= 1e-12 * w.sum():
        return 0.0
    cov = float(w @ ((y - wmean(y, w)) * fc))
    return float(np.clip(cov / var_f, *LAMBDA_RANGE))


def residuals(y: np.ndarray, f: np.ndarray, lam: float, labeled: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per row (all): y_i - lam f_i - mean_L(y - lam f) on labeled rows, 0 elsewhere."""
    out = np.zeros(len(labeled))
    if labeled.any():
        e = y[labeled] - lam * f[labeled]
        out[labeled] = e - wmean(e, w[labeled])
    return out


def mean_variance(
    residuals: np.ndarray,
    cluster: np.ndarray | None,
    labeled: np.ndarray,
    w: np.ndarray,
    ddof: int = 1,
    pseudo_variance: float = 0.0,
) -> tuple[float, int]:
    """Variance of the labeled items' mean of a quantity from its centred residuals (eq. 2 without fpc): the sums
    within the G clusters holding a labeled item, squared, with `ddof` parameters fitted and PSEUDO_ITEMS pseudo-
    items of variance `pseudo_variance` (0: none)
        V = G / n^2 * (sum_g S_g^2 + k v0 n / G) / (G - ddof + k).
    Without clusters (G = n: every item its own; a row of w items adds w r^2) and k = 0 this is S^2 / n."""
    n = float(w[labeled].sum())
    if cluster is None:
        g = int(round(n))
        sum_sq = float(w @ residuals**2)
    else:
        g = int(len(np.unique(cluster[labeled]))) if n else 0
        sum_sq = float((np.bincount(cluster, weights=residuals * w) ** 2).sum())
    if g <= ddof:
        return float("nan"), g
    k = PSEUDO_ITEMS if pseudo_variance > 0 else 0.0
    return float(g / n**2 * (sum_sq + k * pseudo_variance * n / g) / (g - ddof + k)), g


def labeled_mean_variance(values: np.ndarray, cluster: np.ndarray | None, labeled: np.ndarray, w: np.ndarray) -> float:
    """Cluster-robust variance of the labeled items' mean of `values` (for eq. 3)."""
    resid = np.zeros(len(labeled))
    resid[labeled] = values[labeled] - wmean(values[labeled], w[labeled])
    return mean_variance(resid, cluster, labeled, w)[0]


def pseudo_variance(y: np.ndarray, w: np.ndarray) -> float:
    """v0 = p (1 - p) at p = (passes + 1) / (n + 2): the labels-only variance, what a residual's variance is at
    most worth when lambda = 0; PSEUDO_ITEMS of it keep a small sample whose residuals happen to be all zero from
    a zero-width interval (Wilson's remedy for the same failure of the plain binomial interval)."""
    p = (float(w @ y) + 1.0) / (float(w.sum()) + 2.0)
    return p * (1.0 - p)


def t_interval(estimate: float, variance: float, dof: int, confidence_level: float, lo: float, hi: float) -> Interval:
    if not math.isfinite(variance) or dof < 1:
        return Interval(estimate, lo, hi)
    half = t_half_width(variance, confidence_level, dof)
    return Interval(estimate, min(hi, max(lo, estimate - half)), max(lo, min(hi, estimate + half)))


def anchored_interval(
    estimate: float,
    variance: float,
    slope: float,
    dof: int,
    confidence_level: float,
    lo: float = 0.0,
    hi: float = 1.0,
) -> Interval:
    """The score's interval, eq. (6): the t interval of a pass rate whose variance moves with the hypothesis, anchored
    on the labels' residuals (docs/SCORE.md, "Round 4"). Every theta0 with
        (estimate - theta0)^2 <= t^2 * (variance + slope * (theta0 (1 - theta0) - estimate (1 - estimate))),
    clipped to [lo, hi]: `variance` is what the residuals say at the estimate (eqs. 2-3), and only the part a
    hypothesis fixes, Var(y) = theta0 (1 - theta0) of a binary outcome reached by an additive shift of every item's
    pass probability, moves with theta0 (`slope`: fpc / n, plus 1 / N for target "new"). A sample that has not met
    the rare disagreements that make theta0 differ from the estimate has a small residual variance exactly when
    the estimate is off (the Wald interval's failure near 0 or 1); the term at theta0 keeps the far end honest.
    With lambda = 0 and the labels' plain variance p (1 - p) fpc / n it is Wilson's interval with the finite-
    population correction (at t's quantile); with slope 0 it is `t_interval`. Nothing in it is tuned."""
    if not (math.isfinite(estimate) and math.isfinite(slope) and slope > 0):
        return t_interval(estimate, variance, dof, confidence_level, lo, hi)
    if not math.isfinite(variance) or dof < 1:
        return Interval(estimate, lo, hi)
    low, high = anchored_bounds(estimate, variance, slope, t_value(confidence_level, dof) ** 2)
    return Interval(estimate, min(hi, max(lo, float(low))), max(lo, min(hi, float(high))))


def anchored_bounds(estimate: ArrayLike, variance: ArrayLike, slope: ArrayLike, q2: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (6)'s ends, unclipped, element by element (the one solver of `anchored_interval`, and of plan's score
    forecast at every n at once): the roots in theta0 of (estimate - theta0)^2 = q2 (variance + slope (theta0
    (1 - theta0) - estimate (1 - estimate))), q2 the squared t quantile; where the discriminant is not positive (no
    variance at the estimate and none gained anywhere) both ends are the estimate."""
    e, s, q = (np.asarray(x, dtype=float) for x in (estimate, slope, q2))
    b = s * e * (1.0 - e) - np.maximum(np.asarray(variance, dtype=float), 0.0)
    # (estimate - x)^2 = q2 (slope x (1 - x) - b):  (1 + q2 slope) x^2 - (2 estimate + q2 slope) x + estimate^2 + q2 b = 0
    qa, qb, qc = 1.0 + q * s, -(2.0 * e + q * s), e * e + q * b
    disc = qb * qb - 4.0 * qa * qc
    root = np.sqrt(np.maximum(disc, 0.0))
    low = np.where(disc > 0, (-qb - root) / (2.0 * qa), e)
    high = np.where(disc > 0, (-qb + root) / (2.0 * qa), e)
    return low, high


def wilson_fpc(successes: int, n: int, confidence_level: float, population: int | None = None) -> Interval:
    """Wilson's score interval for successes / n; with `population` N, n is replaced by n / (1 - n/N), the
    finite-population correction of the variance (all items labeled: the exact rate)."""
    if n == 0:
        return Interval(float("nan"), 0.0, 1.0)
    p = successes / n
    fpc = 1.0 if population is None else 1.0 - n / population
    if fpc <= 0:
        return Interval(p, p, p)
    return Interval(p, *wilson(p, n / fpc, confidence_level))


def shrink_toward(theta: float, sd: float, judges: float, limit: float = SHRINK_LIMIT) -> float:
    """The estimate moved from the PPI++ estimate `theta` (standard error `sd`) toward what the judges say, eq. (4):
    the empirical-Bayes combination judges + c (theta - judges), c = max(0, 1 - sd^2 / D^2), D = theta - judges
    (the judges' bias b has the prior N(0, tau^2), tau^2 estimated by D^2 - sd^2), with Efron and Morris's limited
    translation: never more than `limit` standard errors from theta. Closed form: theta moves toward the judges by
        min(|D|, sd^2 / |D|, limit * sd).
    When the labels cannot tell the judges' bias from zero (|D| <= sd) the estimate is pulled most; a bias the labels
    see (|D| >> sd) leaves theta nearly alone. The interval stays theta's, so its coverage is unchanged and the
    estimate never leaves its middle (limit < the t quantile)."""
    d = judges - theta
    if not (math.isfinite(sd) and sd > 0 and math.isfinite(d)) or d == 0:
        return theta
    return theta + math.copysign(min(abs(d), sd * sd / abs(d), limit * sd), d)
