"""Independent computations shared by several test files (scipy, not the package)."""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy import stats


@cache
def hyper_error(n: int, s: int, k: int) -> float:
    """Majority error of k judges drawn without replacement from n with s correct (ties half), from scipy's
    hypergeometric pmf. Cached: simulations ask for the same few (n, s, k) thousands of times, and each frozen scipy
    distribution costs milliseconds to build (it formats its docstring anew): 37 000 calls were 170 s of one test."""
    pmf = stats.hypergeom(n, s, k).pmf(np.arange(k + 1))
    return float(sum(p * (1.0 if 2 * c < k else 0.5 if 2 * c == k else 0.0) for c, p in enumerate(pmf)))
