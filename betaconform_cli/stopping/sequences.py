"""Confidence sequences and intervals checked after every label (the precision rule's two methods).

- `confidence_sequence`: the predictable-plug-in empirical-Bernstein confidence sequence of Waudby-Smith & Ramdas
  (JRSSB 2024, Thm 2), in its sampling-without-replacement form (Waudby-Smith & Ramdas 2020) when the pool size is
  known. It holds uniformly over time, so checking after every label keeps its level.
- `calibrated_half_width`: the normal approximation of `fit`'s own interval; honest by a calibration benchmark only.
"""

from __future__ import annotations

import math

import numpy as np

from ..intervals import normal_half_width


def _psi_e(lam: np.ndarray) -> np.ndarray:
    psi: np.ndarray = (-np.log1p(-lam) - lam) / 4
    return psi


def confidence_sequence(
    x: np.ndarray, alpha: float, pool_size: int | None = None, c: float = 0.5, tune_half_width: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) after each of t = 1..n observations in [0, 1]: a (1 - alpha) confidence sequence for their mean.

    Predictable-plug-in empirical Bernstein (Waudby-Smith & Ramdas 2024, Thm 2): lambda_t =
    min(sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1+t))), c), v_t = 4 (x_t - mu_{t-1})^2,
    psi_E(l) = (-log(1-l) - l) / 4. With `tune_half_width` h, lambda_t = min(h / sigma2_{t-1}, c) instead: the
    lambda that makes the half-width smallest at the time it first reaches h (still predictable, so still
    valid; it only moves where the sequence is tight). With `pool_size` N, the without-replacement form (Waudby-Smith & Ramdas
    2020): the target is the mean of the N pool values, each term is re-weighted by 1 + (t-1)/(N-t+1) and
    shifted by the already drawn sum / (N-t+1). Running intersection, clipped to [0, 1].
    """
    x = np.asarray(x, dtype=float)
    n = len(x)
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    sig2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    mu_prev = np.concatenate([[0.5], mu[:-1]])
    sig2_prev = np.concatenate([[0.25], sig2[:-1]])
    log_term = math.log(2 / alpha)
    if tune_half_width is None:
        lam = np.minimum(np.sqrt(2 * log_term / (sig2_prev * t * np.log1p(t))), c)
    else:
        lam = np.minimum(tune_half_width / sig2_prev, c)
    v = 4 * (x - mu_prev) ** 2
    if pool_size is None:
        weight = np.ones(n)
        shift = np.zeros(n)
    else:
        if n > pool_size:
            raise ValueError("more observations than the pool holds")
        drawn_before = np.concatenate([[0.0], np.cumsum(x)[:-1]])
        remaining = pool_size - t + 1
        weight = 1 + (t - 1) / remaining
        shift = drawn_before / remaining
    denom = np.cumsum(lam * weight)
    centre = np.cumsum(lam * (x + shift)) / denom
    half = (log_term + np.cumsum(v * _psi_e(lam))) / denom
    low = np.maximum.accumulate(np.clip(centre - half, 0, 1))
    high = np.minimum.accumulate(np.clip(centre + half, 0, 1))
    high = np.maximum(high, low)
    return low, high


def calibrated_half_width(
    x: np.ndarray, flat_mean: np.ndarray, flat_sq: np.ndarray, confidence_level: float, pool_size: int | None = None, flat: float = 1.0
) -> np.ndarray:
    """Half-width after each r = 1..n of the normal approximation to fit's default interval for the mean of x.

    fit's interval (posterior.CellPosterior.interval_scaled) is the equal-tailed interval of sum_c p_c e_c with p a
    Dirichlet over the observed cells of total mass r + flat; its variance is Var_p(e) / (r + flat + 1). Here p
    is the observed shares plus the flat prior (`flat` items spread evenly over S = 0..K, whose errors have
    mean flat_mean[r-1] and mean square flat_sq[r-1]); the mixture pseudo-counts that move fit's centre are left
    out. Half-width z_{(1+level)/2} sd, times the finite-pool correction sqrt((N - r) / (N - 1)) when the pool
    size N is known. A fixed-sample interval: checked after every label it is NOT always-valid; its stopping
    honesty rests on the calibration benchmark (docs/STOPPING.md).
    """

    x = np.asarray(x, dtype=float)
    n = len(x)
    r = np.arange(1, n + 1, dtype=float)
    mass = r + flat
    m1 = (np.cumsum(x) + flat * flat_mean) / mass
    m2 = (np.cumsum(x * x) + flat * flat_sq) / mass
    var = np.maximum(m2 - m1**2, 0.0) / (mass + 1)
    half = normal_half_width(var, confidence_level)
    if pool_size is not None:
        if n > pool_size:
            raise ValueError("more observations than the pool holds")
        half = half * np.sqrt(np.maximum(pool_size - r, 0.0) / max(pool_size - 1, 1))
    return half


