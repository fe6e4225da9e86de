"""Beta-Binomial pmfs, mixtures, hypergeometric thinning and majority-vote error rates.

Conventions (METHOD.md):
- a pmf over S, the number of correct judges among n, is a 1-D array of length n + 1;
- the majority of k judges errs when fewer than ceil(k/2) are correct; for even k a tie (S = k/2) counts as
  half an error (a fair coin breaks it);
- every model is evaluated at some N >= k judges and thinned to k by one routine, `thin`; a Beta-Binomial
  thinned from N to k is exactly BB(k, a, b), a Binomial thinned is Bin(k, p).

No scipy here (the default `fit` loads none, docs/SPEED.md): counts are integers, so the log-gamma differences are
sums, exactly: log Gamma(v + x) - log Gamma(v) = sum_{i<x} log(v + i) (`rising_sums`, which gives the digamma and
trigamma differences likewise), and log C(n, s) comes from a table of log factorials (math.lgamma).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np


def logsumexp(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    """log sum exp along an axis; scipy's version costs ~100 us of array-API overhead per call, which
    dominated the optimiser's objective."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out: np.ndarray = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out.squeeze(axis=axis) if axis is not None else out.reshape(())


def counts(x: np.ndarray | int) -> np.ndarray:
    """`x` as int64, refused (ValueError) unless every value is a whole number: the exact sums below need counts."""
    arr = np.asarray(x)
    out = arr.astype(np.int64)
    if arr.dtype.kind not in "iub" and not np.array_equal(out, arr):
        raise ValueError("counts of judges must be whole numbers")
    return out


@lru_cache(maxsize=8)
def _log_factorials(size: int) -> np.ndarray:
    table = np.array([math.lgamma(i + 1.0) for i in range(size)])
    table.setflags(write=False)
    return table


def log_factorials(top: int) -> np.ndarray:
    """log i! for i = 0..top (at least), from math.lgamma (correctly rounded to ~1 ulp); cached by powers of two."""
    return _log_factorials(1 << max(int(top), 15).bit_length())


def log_comb(n: np.ndarray | int, s: np.ndarray | int) -> np.ndarray:
    """log C(n, s) for whole numbers (broadcasting); -inf outside 0 <= s <= n."""
    n, s = np.broadcast_arrays(counts(n), counts(s))
    valid = (s >= 0) & (s <= n)
    lf = log_factorials(int(n.max(initial=0)))
    n0 = np.where(valid, n, 0)
    s0 = np.where(valid, s, 0)
    result: np.ndarray = np.where(valid, lf[n0] - lf[s0] - lf[n0 - s0], -np.inf)
    return result


def rising_sums(v: np.ndarray, top: int, orders: int = 1) -> np.ndarray:
    """T[d, j, x] = sum_{i<x} f_d(v_j + i) for x = 0..top, with f_0 = log, f_1 = 1/v, f_2 = 1/v^2 (d < orders).

    For whole x: T[0] = log Gamma(v + x) - log Gamma(v), T[1] = digamma(v + x) - digamma(v), T[2] = trigamma(v) -
    trigamma(v + x), exactly (no cancellation between two large log-gammas when v is large)."""
    v = np.asarray(v, dtype=float).reshape(-1)
    grid = v[:, None] + np.arange(top)
    terms = np.empty((orders, v.size, top + 1))
    terms[:, :, 0] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        np.log(grid, out=terms[0, :, 1:])
        if orders > 1:
            np.divide(1.0, grid, out=terms[1, :, 1:])
        if orders > 2:
            np.square(terms[1, :, 1:], out=terms[2, :, 1:])
    out: np.ndarray = np.cumsum(terms, axis=2)
    return out


def log_rising(v: np.ndarray | float, x: np.ndarray | int) -> np.ndarray:
    """log Gamma(v + x) - log Gamma(v) = sum_{i<x} log(v + i) for v > 0 and whole x >= 0 (broadcasting)."""
    v, x = np.broadcast_arrays(np.asarray(v, dtype=float), counts(x))
    values, at = np.unique(v.reshape(-1), return_inverse=True)
    table = rising_sums(values, int(x.max(initial=0)))[0]
    out: np.ndarray = table[at.reshape(-1), x.reshape(-1)].reshape(v.shape)
    return out


def log_beta_binomial(
    s: np.ndarray, n: np.ndarray | int, a: np.ndarray | float, b: np.ndarray | float
) -> np.ndarray:
    """log BB(s | n, a, b) = log C(n, s) + log B(s + a, n - s + b) - log B(a, b) for whole s and n (broadcasting);
    -inf outside 0 <= s <= n. The Beta functions' ratio is exact sums: log (a)_s + log (b)_(n-s) - log (a+b)_n."""
    s = counts(s)
    n = counts(n)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    s_in = np.clip(s, 0, np.maximum(n, 0))
    n_in = np.maximum(n, 0)
    result: np.ndarray = (log_comb(n, s) + log_rising(a, s_in) + log_rising(b, n_in - s_in)
                          - log_rising(a + b, n_in))
    return result


def beta_binomial_pmf(n: int, a: float, b: float) -> np.ndarray:
    """pmf of BB(n, a, b) over s = 0..n."""
    s = np.arange(n + 1)
    pmf: np.ndarray = np.exp(log_beta_binomial(s, n, a, b))
    return pmf


def binomial_pmf(n: int, p: float | np.ndarray) -> np.ndarray:
    """pmf of Bin(n, p) over s = 0..n (exact at p = 0 and p = 1); for an array of p, one row per p."""
    s = np.arange(n + 1)
    pp = np.asarray(p, dtype=float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 log 0 = 0, as scipy's xlogy and xlog1py
        right = np.where(s == 0, 0.0, s * np.log(pp))
        wrong = np.where(n - s == 0, 0.0, (n - s) * np.log1p(-pp))
    pmf: np.ndarray = np.exp(log_comb(n, s) + right + wrong)
    return pmf


@lru_cache(maxsize=512)
def thinning_matrix(big_n: int, k: int) -> np.ndarray:
    """H[S, s] = P(s correct among k judges drawn without replacement from N = big_n, S of them correct).

    The hypergeometric kernel C(S, s) C(N - S, k - s) / C(N, k); rows sum to 1. Read-only.
    """
    if not 0 <= k <= big_n:
        raise ValueError(f"cannot thin {big_n} judges to {k}")
    S = np.arange(big_n + 1)[:, None]
    s = np.arange(k + 1)[None, :]
    logh = log_comb(S, s) + log_comb(big_n - S, k - s) - log_comb(big_n, k)
    h: np.ndarray = np.exp(logh)
    h.setflags(write=False)
    return h


def thin(pmf: np.ndarray, k: int) -> np.ndarray:
    """Thin a pmf over S at N judges to a pmf at k <= N judges (hypergeometric)."""
    thinned: np.ndarray = np.asarray(pmf) @ thinning_matrix(len(pmf) - 1, k)
    return thinned


@lru_cache(maxsize=512)
def majority_error_weights(k: int) -> np.ndarray:
    """e[s] = probability that a k-judge majority errs when s judges are correct (ties count half)."""
    s = np.arange(k + 1)
    e = np.where(2 * s < k, 1.0, np.where(2 * s == k, 0.5, 0.0))
    e.setflags(write=False)
    return e


def majority_error(pmf_k: np.ndarray) -> float:
    """Majority-vote error of a pmf over S at k = len(pmf_k) - 1 judges."""
    return float(np.dot(pmf_k, majority_error_weights(len(pmf_k) - 1)))


@lru_cache(maxsize=512)
def item_error_table(big_n: int, k: int) -> np.ndarray:
    """t[S] = exact majority error of k judges drawn at random from an item with S of N = big_n correct."""
    t: np.ndarray = thinning_matrix(big_n, k) @ majority_error_weights(k)
    t.setflags(write=False)
    return t


class JudgmentModel(Protocol):
    """Anything that gives a pmf over the number of correct judges among n."""

    def pmf(self, n: int) -> np.ndarray: ...


def error_rates(model: JudgmentModel, ks: tuple[int, ...]) -> dict[int, float]:
    """Majority-vote error for each k: the model's pmf at max(ks), thinned to each k."""
    top = max(ks)
    pmf_top = model.pmf(top)
    return {k: majority_error(thin(pmf_top, k)) for k in ks}


@dataclass(frozen=True)
class Binomial:
    """Every judge independently correct with probability p on every item."""

    p: float

    def pmf(self, n: int) -> np.ndarray:
        return binomial_pmf(n, self.p)


@dataclass(frozen=True)
class Mixture:
    """sum_j w_j BB(n, alpha_j, beta_j); components ordered by mean alpha / (alpha + beta)."""

    weights: tuple[float, ...]
    alphas: tuple[float, ...]
    betas: tuple[float, ...]

    def __post_init__(self) -> None:
        if not (len(self.weights) == len(self.alphas) == len(self.betas) >= 1):
            raise ValueError("weights, alphas and betas must have the same positive length")

    @property
    def n_components(self) -> int:
        return len(self.weights)

    @property
    def means(self) -> tuple[float, ...]:
        return tuple(a / (a + b) for a, b in zip(self.alphas, self.betas))

    def component_log_pmf(self, s: np.ndarray, n: np.ndarray) -> np.ndarray:
        """log BB(s | n, alpha_j, beta_j) for each component j: shape (components, *s.shape)."""
        a = np.asarray(self.alphas)[(...,) + (None,) * np.ndim(s)]
        b = np.asarray(self.betas)[(...,) + (None,) * np.ndim(s)]
        return log_beta_binomial(np.asarray(s)[None], np.asarray(n)[None], a, b)

    def pmf(self, n: int) -> np.ndarray:
        s = np.arange(n + 1)
        comp = np.exp(self.component_log_pmf(s, np.full_like(s, n)))
        pmf: np.ndarray = np.asarray(self.weights) @ comp
        return pmf

    def sorted(self) -> Mixture:
        order = np.argsort(self.means, kind="stable")
        return Mixture(
            tuple(float(self.weights[i]) for i in order),
            tuple(float(self.alphas[i]) for i in order),
            tuple(float(self.betas[i]) for i in order),
        )
