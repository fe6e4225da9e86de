"""Beta-Binomial pmfs, mixtures, hypergeometric thinning and majority-vote error rates.

Conventions (METHOD.md):
- a pmf over S, the number of correct judges among n, is a 1-D array of length n + 1;
- the majority of k judges errs when fewer than ceil(k/2) are correct; for even k a tie (S = k/2) counts as
  half an error (a fair coin breaks it);
- every model is evaluated at some N >= k judges and thinned to k by one routine, `thin`; a Beta-Binomial
  thinned from N to k is exactly BB(k, a, b), a Binomial thinned is Bin(k, p).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
from scipy.special import betaln, gammaln, xlog1py, xlogy


def logsumexp(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    """log sum exp along an axis; scipy's version costs ~100 us of array-API overhead per call, which
    dominated the optimiser's objective."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out: np.ndarray = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out.squeeze(axis=axis) if axis is not None else out.reshape(())


def log_comb(n: np.ndarray | int, s: np.ndarray | int) -> np.ndarray:
    """log C(n, s), vectorised; -inf outside 0 <= s <= n."""
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    valid = (s >= 0) & (s <= n)
    with np.errstate(invalid="ignore"):
        out = gammaln(n + 1) - gammaln(np.where(valid, s, 0) + 1) - gammaln(np.where(valid, n - s, 0) + 1)
    result: np.ndarray = np.where(valid, out, -np.inf)
    return result


def log_beta_binomial(
    s: np.ndarray, n: np.ndarray | int, a: np.ndarray | float, b: np.ndarray | float
) -> np.ndarray:
    """log BB(s | n, a, b) = log C(n, s) + log B(s + a, n - s + b) - log B(a, b) (broadcasting)."""
    s = np.asarray(s, dtype=float)
    n = np.asarray(n, dtype=float)
    result: np.ndarray = log_comb(n, s) + betaln(s + a, n - s + b) - betaln(a, b)
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
    pmf: np.ndarray = np.exp(log_comb(n, s) + xlogy(s, pp) + xlog1py(n - s, -pp))
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
