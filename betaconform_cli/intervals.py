"""The interval helpers every estimate shares (issue 28, item 2): each is written once here, and the estimators call it.

- `equal_tailed`: the equal-tailed interval of draws (a posterior's or a bootstrap's), at `confidence_level`.
- `z_value`, `t_value`: the two-sided normal and Student-t quantiles, 1 - (1 - level) / 2; `normal_half_width`,
  `t_half_width`: a half-width from a variance.
- `wilson`: Wilson's score interval of a proportion at an (effective) number of items, clipped to [0, 1] (as
  scipy.stats.binomtest(...).proportion_ci(method="wilson")).
- `enclose`, `enclose_value`: an interval stretched to hold its own estimate (arrays and plain numbers: Python's
  min and max keep their NaN rule for plain numbers, numpy's for arrays, so that no number moves).

numpy is imported here; scipy.stats where a quantile is computed (it costs ~0.3 s at a first import).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def equal_tailed(draws: Any, confidence_level: float, axis: int | None = 0) -> tuple[Any, Any]:
    """(low, high): the (1 - level) / 2 and 1 - (1 - level) / 2 quantiles of `draws` along `axis` (numpy's linear
    interpolation)."""
    tail = (1 - confidence_level) / 2
    return np.quantile(draws, tail, axis=axis), np.quantile(draws, 1 - tail, axis=axis)


def z_value(confidence_level: float) -> float:
    """The two-sided normal quantile of `confidence_level` (1.645 at 0.9)."""
    from scipy import stats

    return float(stats.norm.ppf(0.5 + confidence_level / 2))


def t_value(confidence_level: float, dof: float) -> float:
    """The two-sided Student-t quantile of `confidence_level` with `dof` degrees of freedom."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence_level / 2, dof))


def normal_half_width(variance: np.ndarray, confidence_level: float) -> np.ndarray:
    """z * sqrt(variance): the normal interval's half-width of each variance."""
    half: np.ndarray = z_value(confidence_level) * np.sqrt(variance)
    return half


def t_half_width(variance: float, confidence_level: float, dof: float) -> float:
    """t * sqrt(max(variance, 0)): the t interval's half-width."""
    return t_value(confidence_level, dof) * math.sqrt(max(variance, 0.0))


def wilson(p: float, n: float, confidence_level: float) -> tuple[float, float]:
    """Wilson's score interval of the proportion `p` observed on `n` items (n may be an effective number: a design
    effect's or a finite population's), clipped to [0, 1]."""
    z = z_value(confidence_level)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def enclose(estimate: Any, low: Any, high: Any) -> tuple[Any, Any]:
    """Arrays: the interval [low, high] stretched, where it misses its estimate, to hold it (numpy's minimum and
    maximum: a NaN anywhere gives NaN)."""
    return np.minimum(low, estimate), np.maximum(high, estimate)


def enclose_value(estimate: float, low: float, high: float) -> tuple[float, float]:
    """Plain numbers: `enclose` with Python's min and max (a NaN estimate leaves the bounds as they are)."""
    return min(low, estimate), max(high, estimate)
