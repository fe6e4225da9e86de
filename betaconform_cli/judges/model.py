"""The latent-class model of named judges and the majority-vote error of every subset of them.

Model (docs/JUDGES.md, "Model"). Each labeled item i belongs to one of C latent classes (z_i ~ Categorical(w));
given its class c, judge j agrees with the gold label with probability p[c, j], independently of the other
judges. Who errs *together* is carried by the classes: an item class on which judges a and b both fail makes
their mistakes coincide. Accuracies are shrunk within each class, p[c, j] ~ Beta(m_c tau, (1 - m_c) tau), with
the class means m_c uniform and the concentration tau log-uniform on a grid, so that the data decide how much
judges differ; w ~ Dirichlet(a0, ..., a0) with a0 = 1/C lets unneeded classes empty out (an overfitted mixture).
When every judge has the same accuracy in every class (tau -> infinity), the count of correct judges is a mixture
of C Binomials: the exchangeable picture of `fit` (a discrete version of its Beta-Binomial mixture).

Inference: Gibbs sampling (z | p, w; p | z, m, tau conjugate Beta; w | z Dirichlet; m_c and tau on grids).
A missing verdict (NaN) simply drops out of its item's likelihood.

Every subset's majority error then follows exactly, per posterior draw: within a class the number of correct
members is Poisson-binomial (a product of independent Bernoullis, computed by the usual convolution), and the
error mixes the classes by w. Majority rule as METHOD.md: k members err when fewer than ceil(k/2) are correct;
for even k a tie counts as half an error. All subsets up to a size are computed level by level, each subset's
pmf from its prefix's (one convolution per subset instead of k).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy.special import betaln

from ..distributions import majority_error_weights

MEAN_GRID = np.linspace(0.01, 0.99, 50)
CONCENTRATION_GRID = np.exp(np.linspace(np.log(0.5), np.log(1000.0), 24))
_LOG_BETA_GRID = betaln(MEAN_GRID[:, None] * CONCENTRATION_GRID[None, :], (1 - MEAN_GRID[:, None]) * CONCENTRATION_GRID[None, :])
P_CLIP = 1e-6


@dataclass(frozen=True)
class ModelSettings:
    """Latent-class model and sampler settings (the defaults were chosen in benchmarks/judges.py, held out)."""

    classes: int = 6
    weight_concentration: float | None = None  # Dirichlet a0 on the class weights; None: 1 / classes
    sweeps: int = 600
    burn_in: int = 200
    thin: int = 2

    @property
    def a0(self) -> float:
        return 1.0 / self.classes if self.weight_concentration is None else self.weight_concentration

    @property
    def draws(self) -> int:
        return len(range(self.burn_in, self.sweeps, self.thin))


@dataclass(frozen=True)
class ClassPosterior:
    """Posterior draws: weights[t, c] (class shares) and accuracy[t, c, j] (P(judge j right | class c))."""

    weights: np.ndarray = field(repr=False)
    accuracy: np.ndarray = field(repr=False)
    concentration: np.ndarray = field(repr=False)

    @property
    def draws(self) -> int:
        return int(self.weights.shape[0])

    def marginal_accuracy(self) -> np.ndarray:
        """(T, J): each judge's accuracy on a random item, per draw."""
        out: np.ndarray = np.einsum("tc,tcj->tj", self.weights, self.accuracy)
        return out


def _categorical(logw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row from the categorical distribution with log-weights logw[..., c]."""
    w = np.exp(logw - logw.max(axis=-1, keepdims=True))
    cum = np.cumsum(w, axis=-1)
    u = rng.random(w.shape[:-1] + (1,)) * cum[..., -1:]
    idx: np.ndarray = np.minimum((cum < u).sum(axis=-1), w.shape[-1] - 1)
    return idx


def sample_posterior(
    correct: np.ndarray, rng: np.random.Generator, settings: ModelSettings = ModelSettings(),
    progress: Callable[[int], None] | None = None,
) -> ClassPosterior:
    """Gibbs sampler of the latent-class model for correct[i, j] in {0, 1, NaN} (NaN: no verdict).

    progress(sweeps done): called every 50 sweeps and at the end."""
    n, n_judges = correct.shape
    c = settings.classes
    seen = ~np.isnan(correct)
    right = np.where(seen, correct, 0.0)
    wrong = np.where(seen, 1.0 - correct, 0.0)
    # start: classes by quantiles of each item's share of correct judges
    share = (right.sum(axis=1) + 0.5) / (seen.sum(axis=1) + 1.0)
    order = np.argsort(share + 1e-9 * rng.random(n), kind="stable")
    z = np.empty(n, dtype=np.int64)
    z[order] = (np.arange(n) * c) // max(n, 1)
    means = np.full(c, 0.5)
    tau = 10.0
    keep_w, keep_p, keep_tau = [], [], []
    rows = np.arange(n)
    for sweep in range(settings.sweeps):
        onehot = np.zeros((n, c))
        onehot[rows, z] = 1.0
        s = onehot.T @ right  # (C, J) correct verdicts per class and judge
        f = onehot.T @ wrong
        p = rng.beta(means[:, None] * tau + s, (1 - means[:, None]) * tau + f)
        p = np.clip(p, P_CLIP, 1 - P_CLIP)
        w = rng.dirichlet(settings.a0 + onehot.sum(axis=0))
        w = np.maximum(w, 1e-300)
        log_p, log_q = np.log(p), np.log1p(-p)
        # (m_c, tau) | p on the grids: tau from its marginal over the m grid, then each m_c given tau
        a_sum, b_sum = log_p.sum(axis=1), log_q.sum(axis=1)
        mt = MEAN_GRID[None, :, None] * CONCENTRATION_GRID[None, None, :]
        dens = (mt - 1) * a_sum[:, None, None] + (CONCENTRATION_GRID[None, None, :] - mt - 1) * b_sum[:, None, None] - n_judges * _LOG_BETA_GRID[None]
        top = dens.max(axis=1, keepdims=True)
        per_tau = (np.log(np.exp(dens - top).sum(axis=1)) + top[:, 0]).sum(axis=0)  # log-uniform prior on tau
        t_idx = int(_categorical(per_tau[None], rng)[0])
        tau = float(CONCENTRATION_GRID[t_idx])
        means = MEAN_GRID[_categorical(dens[:, :, t_idx], rng)]
        # classes | p, w
        z = _categorical(right @ log_p.T + wrong @ log_q.T + np.log(w)[None], rng)
        if sweep >= settings.burn_in and (sweep - settings.burn_in) % settings.thin == 0:
            keep_w.append(w)
            keep_p.append(p)
            keep_tau.append(tau)
        if progress is not None and ((sweep + 1) % 50 == 0 or sweep + 1 == settings.sweeps):
            progress(sweep + 1)
    return ClassPosterior(np.array(keep_w), np.array(keep_p), np.array(keep_tau))


# --- majority error of subsets ---------------------------------------------------------------------------


def _convolve(pmf: np.ndarray, p: np.ndarray) -> np.ndarray:
    """pmf[..., s] of a count, plus one Bernoulli(p[...]) -> pmf[..., s] with one more trial."""
    out = np.zeros(pmf.shape[:-1] + (pmf.shape[-1] + 1,))
    q = p[..., None]
    out[..., :-1] = pmf * (1 - q)
    out[..., 1:] += pmf * q
    return out


def poisson_binomial_pmf(p: np.ndarray) -> np.ndarray:
    """pmf over the number of successes of independent Bernoulli(p[..., j]) trials: shape (..., k + 1)."""
    pmf = np.ones(p.shape[:-1] + (1,))
    for j in range(p.shape[-1]):
        pmf = _convolve(pmf, p[..., j])
    return pmf


def subset_error_draws(posterior: ClassPosterior, members: np.ndarray) -> np.ndarray:
    """(T, n) majority error of each subset members[n, k] (judge indices), per posterior draw."""
    members = np.asarray(members, dtype=np.int64)
    k = members.shape[1]
    pmf = poisson_binomial_pmf(posterior.accuracy[:, :, members])  # (T, C, n, k + 1)
    per_class = pmf @ majority_error_weights(k)
    out: np.ndarray = np.einsum("tc,tcn->tn", posterior.weights, per_class)
    return out


def all_subsets(n_judges: int, size: int) -> np.ndarray:
    """Every subset of `size` judges, lexicographic, as rows of judge indices."""
    return np.array(list(combinations(range(n_judges), size)), dtype=np.int64).reshape(-1, size)


def all_subset_error_draws(posterior: ClassPosterior, max_size: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{k: (subsets[n_k, k], draws[T, n_k])} for every subset of 1..max_size judges, level by level.

    A subset's count pmf is its prefix's (the subset without its last judge) convolved with the last judge's
    Bernoulli, so each level costs one convolution per subset. Only counts 0..max_size // 2 are kept: an error
    needs fewer than ceil(k/2) correct (or exactly k/2), and adding judges never lowers a count. Arrays are
    (count, subset, draw x class), float32, so that every operation runs over contiguous draws.
    """
    t, c, n_judges = posterior.accuracy.shape
    acc = posterior.accuracy.reshape(t * c, n_judges).T.astype(np.float32)  # (J, T*C)
    bins = max_size // 2 + 1
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    prev_index: dict[tuple[int, ...], int] = {(): 0}
    prev = np.ones((1, 1, t * c), dtype=np.float32)  # pmf[count, subset, draw*class] of the empty subset
    for k in range(1, max_size + 1):
        subs = all_subsets(n_judges, k)
        parent = np.array([prev_index[tuple(row[:-1])] for row in subs], dtype=np.int64)
        old = prev[:, parent, :]
        p = acc[subs[:, -1]]
        width = min(k + 1, bins)
        pmf = np.empty((width,) + old.shape[1:], dtype=np.float32)
        pmf[: old.shape[0]] = old * (1 - p)
        if old.shape[0] < width:
            pmf[width - 1] = 0.0
        pmf[1:] += old[: width - 1] * p
        e = majority_error_weights(k)[:width]
        lose = np.tensordot(e[e > 0].astype(np.float32), pmf[: len(e)][e > 0], axes=(0, 0))  # (n_k, T*C)
        draws = np.einsum("tc,ntc->tn", posterior.weights, lose.reshape(len(subs), t, c).astype(np.float64))
        out[k] = (subs, draws)
        prev_index = {tuple(row): i for i, row in enumerate(subs)}
        prev = pmf
    return out
