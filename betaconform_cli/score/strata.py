"""Items no judge gave a verdict on, in `score`'s population (issue 26): the pass rate of ALL N items as a mixture
over two strata whose sizes are known -- the N1 items with a verdict (estimator.py's estimator) and the N0 items with
none, which the judges cannot predict and the labels alone estimate.

With w1 = N1 / N and w0 = N0 / N (known: counts, not estimates):

    theta = w1 theta1 + w0 theta0                                                                          eq. (7)

- **Some items without a verdict are labeled** (n0 >= 1 of them, s0 passing): theta0 is their pass rate s0 / n0,
  the labels-only estimate of that stratum, with the variance of a mean of n0 labels drawn from N0 items
      V0 = fpc0 (sum (y - ybar)^2 + k v0) / (n0 - 1 + k) / n0,   fpc0 = 1 - n0 / N0 (target "set"; 1 for "new"),
  k = 3 pseudo-items of v0 = p (1 - p), p = (s0 + 1) / (n0 + 2), as ppi.mean_variance does for the judged items
  (a single label gives a finite, wide variance, not zero). The strata's labels are independent samples, so
      V = w1^2 V1 + w0^2 V0,                                                                               eq. (8)
  on Welch-Satterthwaite's degrees of freedom.
- **None of them is labeled**: under the assumption that verdicts are missing at random (an item's pass/fail does
  not depend on whether a judge answered it), theta0 is predicted by the judged items' pass rate, and the best
  estimate of that is theta1 itself, so theta = theta1. Its error is theta1's plus what the two strata's own
  pass rates differ by, w0 (theta1_set - theta0_set), whose variance for target "set" is
      w0^2 p (1 - p) (1 / N1 + 1 / N0)                                                                     eq. (9)
  (two independent sets of Bernoulli(p) items); for target "new" the two strata have one pass rate and nothing is
  added. (The labeled items' plain pass rate, the other candidate, estimates the same number under the same
  assumption with more variance.)

The interval is estimator.py's eq. (6) (ppi.anchored_interval) on the mixture: the variance V at theta, and the
part of it a hypothesis theta0 moves -- the judged stratum's, whose slope in theta0 (1 - theta0) is w1^2 a1; the
unjudged stratum's w0^2 V0 stays as it is (its labels-only variance carries Wilson's pseudo-items instead). With
no label among the unjudged items, eq. (9)'s coefficient joins the slope (one pass rate for both strata is the
assumption there). The judged stratum's moving part keeps the far end honest near 0 or 1 (estimator.py).

The reported estimate is w1 times the judged stratum's moved estimate (eq. 4) plus w0 times the unjudged items'
own rate s0 / n0 moved toward the judged estimate as eq. (4) moves theta toward the judges (ppi.shrink_toward: by
min(|D|, V0 / |D|, 0.5 sqrt(V0)), D their difference), clipped into the interval:                      eq. (10)
a few labels there are noisy, and under missing at random the judged rate estimates the same number; a difference
the labels show (verdicts missing NOT at random: the items a judge balks at fail more often) leaves their rate
nearly alone, and the move is never more than half a standard error. The judges' majority and its bias stay the
judged items' own (the judges say nothing about the others).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .ppi import PSEUDO_ITEMS, shrink_toward


@dataclass(frozen=True)
class Unjudged:
    """The items no judge gave a verdict on: how many, how many of them labeled, how many of those pass."""

    items: float
    labeled: float
    passes: float


@dataclass(frozen=True)
class Judged:
    """What estimator.py's estimator gives on the items with a verdict: eq. (1)'s theta and eq. (4)'s estimate, the
    variance and the slope of eq. (6), its degrees of freedom, how many items, and v0 = p (1 - p) of all labels."""

    theta: float
    estimate: float
    variance: float
    slope: float
    dof: int
    items: float
    v0: float


@dataclass(frozen=True)
class Mixture:
    """eq. (7)-(9): the population's pass rate over both strata, the interval's pieces for ppi.anchored_interval."""

    theta: float
    estimate: float
    variance: float
    slope: float
    dof: int


def stratum_variance(n: float, passes: float, items: float, target: str) -> float:
    """V0 of the module docstring: the variance of the mean of n binary labels (`passes` of them 1) drawn from
    `items` items, with PSEUDO_ITEMS pseudo-items of p (1 - p), p = (passes + 1) / (n + 2)."""
    p, fpc = passes / n, (1.0 - n / items if target == "set" else 1.0)
    smoothed = (passes + 1.0) / (n + 2.0)
    squares = passes * (1.0 - p)  # sum (y - ybar)^2 for 0/1 labels: n p (1 - p)
    return fpc * (squares + PSEUDO_ITEMS * smoothed * (1.0 - smoothed)) / (n - 1.0 + PSEUDO_ITEMS) / n


def mix(judged: Judged, unjudged: Unjudged, target: str) -> Mixture:
    """The pass rate of all items from the judged stratum's estimate and the unjudged items (module docstring)."""
    total = judged.items + unjudged.items
    w1, w0 = judged.items / total, unjudged.items / total
    if unjudged.labeled <= 0:  # eq. (9): predicted at the judged items' pass rate (missing at random)
        extra = w0 * w0 * (1.0 / judged.items + 1.0 / unjudged.items) if target == "set" else 0.0
        return Mixture(judged.theta, judged.estimate, judged.variance + extra * judged.v0, judged.slope + extra, judged.dof)
    n0 = unjudged.labeled
    p0 = unjudged.passes / n0
    v0 = stratum_variance(n0, unjudged.passes, unjudged.items, target)
    moved = shrink_toward(p0, math.sqrt(v0), judged.estimate)  # eq. (10): toward the judged rate, <= 0.5 sd
    u1, u0 = w1 * w1 * judged.variance, w0 * w0 * v0
    return Mixture(w1 * judged.theta + w0 * p0, w1 * judged.estimate + w0 * moved, u1 + u0, w1 * w1 * judged.slope,
                   satterthwaite(u1, judged.dof, u0, max(n0 - 1.0, 1.0)))


def satterthwaite(u1: float, d1: float, u0: float, d0: float) -> int:
    """Welch-Satterthwaite's degrees of freedom of u1 + u0 (u_i on d_i), at least 1 and at most d1 + d0."""
    if not (math.isfinite(u1) and math.isfinite(u0)) or u1 + u0 <= 0 or d1 < 1:
        return max(1, int(d1))
    denominator = u1 * u1 / d1 + u0 * u0 / d0
    dof = (u1 + u0) ** 2 / denominator if denominator > 0 else d1 + d0
    return max(1, min(int(d1 + d0), int(dof)))


def note(items: int, labeled: int) -> str:
    """What the output says of the items without a verdict: how many, and how their pass rate was estimated."""
    if labeled:
        return (f"{items} items had no verdict: estimated from their own {labeled} label{'s' if labeled > 1 else ''} "
                "(labels only), mixed by count with the judged items")
    return (f"{items} items had no verdict: predicted from the labels (at the judged items' corrected pass rate, "
            "assuming verdicts are missing at random), their uncertainty in the interval")
