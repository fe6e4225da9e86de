"""The posterior over (model, b0, b1) on a grid, with a random effect per split."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..distributions import logsumexp
from .model import SplitPrior

# --- the grid posterior ------------------------------------------------------------------------------

# the "tempered" model's scale c of the agreement model's log odds: uniform on [0, 1.5] (c = 1: the judges err
# independently, as the one-coin model assumes; c < 1: they share errors, fewer independent judges in effect; c = 0:
# the split says nothing); its b0 (a shift of every split's log odds) ~ N(0, sd0^2), centred on the model being right
TEMPER_GRID = (0.0, 1.5, 31)


def _grid(prior: SplitPrior, slope: bool = True, tempered: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid points (b0, b1) and their log prior, normalised to total mass 1; slope=False: b1 = 0 only; tempered:
    b1 is the scale c of the agreement model's log odds (TEMPER_GRID, uniform) and b0 is centred on 0."""
    b0 = np.linspace(*prior.grid0[:2], int(prior.grid0[2]))
    b1 = np.linspace(*TEMPER_GRID[:2], int(TEMPER_GRID[2])) if tempered else (
        np.linspace(*prior.grid1[:2], int(prior.grid1[2])) if slope else np.zeros(1))
    B0, B1 = np.meshgrid(b0, b1, indexing="ij")
    logprior = -0.5 * ((B0 - (0.0 if tempered else prior.mean0)) / prior.sd0) ** 2
    if slope and not tempered:
        logprior = logprior - 0.5 * ((B1 - prior.mean1) / prior.sd1) ** 2
    logprior = logprior - float(logsumexp(logprior.ravel()))
    return B0.ravel(), B1.ravel(), logprior.ravel()


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = -np.logaddexp(0.0, -z)
    return out


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * z))
    return out



class _SplitPosterior:
    """Posterior over (model, b0, b1) on a grid, with a random effect u ~ N(0, tau^2) per split integrated by
    Gauss-Hermite quadrature: P(wrong | split j) = sigmoid(b0 + b1 x_j + offset_model[j] + u_j). Each model
    ("flat": offset 0; "folded": the folded Beta-Binomial's log odds; "agreement": the one-coin Dawid-Skene
    model's log odds; "constant": offset 0 and b1 = 0, the split
    says nothing about correctness) has prior mass 1 / len(models), so the weights average the models by the
    labels' marginal likelihood."""

    def __init__(self, x: np.ndarray, offsets: np.ndarray, wrong: np.ndarray, trials: np.ndarray, can_err: np.ndarray,
                 prior: SplitPrior):
        n_models = offsets.shape[0]
        grids = [_grid(prior, slope=m != "constant", tempered=m == "tempered") for m in prior.models]
        self.b0 = np.concatenate([g[0] for g in grids])
        self.b1 = np.concatenate([g[1] for g in grids])
        self.model = np.concatenate([np.full(len(g[0]), i) for i, g in enumerate(grids)])
        self.models = prior.models
        # per model, the covariate that b1 multiplies: the margin x, or for "tempered" the agreement model's log odds
        # (passed as that model's offset; its offset is then 0)
        tempered = np.array([m == "tempered" for m in prior.models])
        self.xs = np.where(tempered[:, None], offsets, np.asarray(x, dtype=float)[None, :])
        self.offsets = np.where(tempered[:, None], 0.0, offsets)
        self.x, self.wrong, self.trials = x, wrong, trials
        if prior.tau > 0:
            nodes, weights = np.polynomial.hermite_e.hermegauss(prior.nodes)
            self.u = prior.tau * nodes
            self.log_omega = np.log(weights / weights.sum())
        else:
            self.u, self.log_omega = np.zeros(1), np.zeros(1)
        lp = np.concatenate([g[2] for g in grids]) - math.log(n_models)
        for j in np.nonzero((trials > 0) & can_err)[0]:
            lp += self._log_marginal(int(j), slice(None))
        w = np.exp(lp - lp.max())
        # every model's posterior probability (the guard reads it); models named in prior.guard_models weigh in here
        # only, and the estimate averages the others
        self._probabilities = {m: float(w[self.model == i].sum() / w.sum()) for i, m in enumerate(self.models)}
        if prior.guard_models and not set(prior.models) <= set(prior.guard_models):
            w = np.where(np.isin(self.model, [i for i, m in enumerate(self.models) if m in prior.guard_models]), 0.0, w)
        # keep the grid points that carry posterior mass (the rest weigh < 1e-12 of the largest): every later step
        # costs grid x splits x nodes
        live = w > 1e-12
        self.b0, self.b1, self.model = self.b0[live], self.b1[live], self.model[live]
        self.w = w[live] / w[live].sum()
        self._live = np.nonzero(live)[0]
        self._w_full = np.where(live, w, 0.0) / w[live].sum()

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` posterior draws (positions in the kept grid), sampled over the whole grid with the dropped points at
        weight 0: a point whose weight sits at the 1e-12 cut and falls on the other side on another CPU's BLAS
        kernel then moves the draws by ~1e-12, instead of shifting every later index (the intervals differed in
        their 4th digit between OpenBLAS kernels)."""
        full: np.ndarray = rng.choice(len(self._w_full), size=n, p=self._w_full)
        return np.searchsorted(self._live, full)

    def _z(self, j: int, g: Any) -> np.ndarray:
        z: np.ndarray = self.b0[g] + self.b1[g] * self.xs[self.model[g], j] + self.offsets[self.model[g], j]
        return z

    def _log_lik_nodes(self, j: int, g: Any) -> np.ndarray:
        zu = self._z(j, g)[:, None] + self.u[None, :]
        # log sigmoid(-z) = log sigmoid(z) - z: one logaddexp over the grid x nodes instead of two (the hot spot)
        out: np.ndarray = self.trials[j] * _log_sigmoid(zu) - (self.trials[j] - self.wrong[j]) * zu
        return out

    def _log_marginal(self, j: int, g: Any) -> np.ndarray:
        out: np.ndarray = logsumexp(self.log_omega[None, :] + self._log_lik_nodes(j, g), axis=1)
        return out

    def p_wrong(self, splits: np.ndarray, idx: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(posterior mean of P(wrong) per split, one draw per posterior draw `idx` and split)."""
        mean = np.zeros(len(splits))
        draws = np.zeros((len(idx), len(splits)))
        omega = np.exp(self.log_omega)
        cum_prior = np.cumsum(omega)
        for c, j in enumerate(splits):
            p = _sigmoid(self._z(j, slice(None))[:, None] + self.u[None, :])
            if self.trials[j] > 0:
                ln = self.log_omega[None, :] + self._log_lik_nodes(j, slice(None))
                cond = np.exp(ln - logsumexp(ln, axis=1)[:, None])  # grid x nodes: the u posterior given (model, b0, b1)
                mean[c] = float(self.w @ (cond * p).sum(axis=1))
                cum = np.cumsum(cond[idx], axis=1)
                q = np.minimum((cum < rng.random(len(idx))[:, None] * cum[:, -1:]).sum(axis=1), len(self.u) - 1)
            else:  # no labeled item with this split: u keeps its prior, the same node weights on every grid point
                mean[c] = float(self.w @ (p @ omega))
                # (cum < t).sum() of the row-wise cumsum, as one search in the shared cumsum: the same draws
                q = np.minimum(np.searchsorted(cum_prior, rng.random(len(idx)) * cum_prior[-1], side="left"), len(self.u) - 1)
            draws[:, c] = p[idx, q]
        return mean, draws

    def means(self, tempered: bool) -> tuple[float, float] | None:
        """Posterior means of (b0, b1) given the "tempered" model (tempered=True: b1 is its scale c) or given the
        other models (b1 their slope in the margin); None when those models hold no posterior mass."""
        sel = (self.model == self.models.index("tempered")) if "tempered" in self.models else np.zeros(len(self.w), bool)
        sel = sel if tempered else ~sel
        mass = float(self.w[sel].sum())
        if mass <= 0:
            return None
        return float(self.w[sel] @ self.b0[sel]) / mass, float(self.w[sel] @ self.b1[sel]) / mass

    def model_probabilities(self) -> dict[str, float]:
        """Each model's posterior probability given the labels (before `prior.guard_models` are set aside)."""
        return dict(self._probabilities)

