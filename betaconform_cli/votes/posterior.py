"""The posterior over (model, b0, b1) on a grid, with a random effect per split."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..distributions import logsumexp
from .model import Hyperprior, SplitPrior

# --- the grid posterior ------------------------------------------------------------------------------

# the "tempered" model's scale c of the agreement model's log odds: uniform on [0, 1.5] (c = 1: the judges err
# independently, as the one-coin model assumes; c < 1: they share errors, fewer independent judges in effect; c = 0:
# the split says nothing); its b0 (a shift of every split's log odds) ~ N(0, sd0^2), centred on the model being right
TEMPER_GRID = (0.0, 1.5, 31)
# the models in that tempered form: the one-coin model's log odds, and the difficulty model's (votes/difficulty.py)
TEMPERED = ("tempered", "difficulty")
# the "saturated" model: one common level b0 and each split's own P(wrong) around it, u_j ~ N(0, 2^2) (given an even
# level, 95% of the splits' P(wrong) anywhere in 0.02-0.98: close to a uniform prior per split); no shape assumed, so
# where the shape models miss (a step at unanimity, judges fooled together) its posterior stays as wide as the labels
SATURATED_TAU = 2.0


def _grid(prior: SplitPrior, slope: bool = True, tempered: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid points (b0, b1) and their log prior, normalised to total mass 1; slope=False: b1 = 0 only; tempered:
    b1 is the scale c of the agreement model's log odds (TEMPER_GRID, uniform) and b0 is centred on 0. With a
    hyperprior over the widths' scale s (round 5), the log prior is the mixture over s of the prior with widths
    (sd0 s, sd1 s), each normalised on the grid first."""
    b0 = np.linspace(*prior.grid0[:2], int(prior.grid0[2]))
    b1 = np.linspace(*TEMPER_GRID[:2], int(TEMPER_GRID[2])) if tempered else (
        np.linspace(*prior.grid1[:2], int(prior.grid1[2])) if slope else np.zeros(1))
    B0, B1 = np.meshgrid(b0, b1, indexing="ij")
    scales = prior.tau.scales if isinstance(prior.tau, Hyperprior) else ((1.0, 1.0),)
    total = sum(m for _, m in scales)
    parts = []
    for s, mass in scales:
        lp = -0.5 * ((B0 - (0.0 if tempered else prior.mean0)) / (prior.sd0 * s)) ** 2
        if slope and not tempered:
            lp = lp - 0.5 * ((B1 - prior.mean1) / (prior.sd1 * s)) ** 2
        parts.append(lp - float(logsumexp(lp.ravel())) + math.log(mass / total))
    logprior = np.logaddexp.reduce(np.array(parts), axis=0) if len(parts) > 1 else parts[0]
    return B0.ravel(), B1.ravel(), logprior.ravel()


def _taus(prior: SplitPrior) -> list[tuple[float, float]]:
    """The random effect's sd values with their log prior mass: the fixed tau (log mass 0), or the hyperprior's."""
    if not isinstance(prior.tau, Hyperprior):
        return [(float(prior.tau), 0.0)]
    total = sum(m for _, m in prior.tau.taus)
    return [(float(v), math.log(m / total)) for v, m in prior.tau.taus]


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = -np.logaddexp(0.0, -z)
    return out


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * z))
    return out



def _all_grids(prior: SplitPrior) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every model's grid, one per random-effect sd (a fixed tau: one; a hyperprior: one per value, its log mass
    added): (b0, b1, model index, each point's random-effect sd, log prior with mass 1 / len(models) per model).
    The "saturated" model keeps SATURATED_TAU."""
    taus = _taus(prior)
    grids, which, sds = [], [], []
    for i, m in enumerate(prior.models):
        g = _grid(prior, slope=m not in ("constant", "saturated"), tempered=m in TEMPERED)
        for tau, log_mass in ([(SATURATED_TAU, 0.0)] if m == "saturated" else taus):
            grids.append((g[0], g[1], g[2] + log_mass))
            which.append(np.full(len(g[0]), i))
            sds.append(np.full(len(g[0]), tau))
    lp = np.concatenate([g[2] for g in grids]) - math.log(len(prior.models))
    return (np.concatenate([g[0] for g in grids]), np.concatenate([g[1] for g in grids]), np.concatenate(which),
            np.concatenate(sds), lp)


def _stacking_weights(loo: np.ndarray, n_items: np.ndarray) -> np.ndarray:
    """The models' stacking weights (Yao, Vehtari, Simpson and Gelman 2018): the weights on the simplex that maximise
    the sum over labeled items of log sum_m w_m p_m(item's outcome | the other labeled items), from the leave-one-out
    log densities `loo` (outcomes x models) and each outcome's count. Unlike the marginal likelihood, it does not
    reward a model for a prior that the labels only fail to contradict (the constant model's Occam factor at r = 10),
    only for predicting held-out labels."""
    n_models = loo.shape[1]
    dens = np.exp(loo - loo.max(axis=1, keepdims=True))
    weights = np.full(n_models, 1.0 / n_models)
    for _ in range(2000):  # EM for mixture weights of fixed components: each round raises the objective
        new = weights * ((n_items / (dens @ weights)) @ dens) / n_items.sum()
        done = float(np.abs(new - weights).max()) < 1e-10
        weights = new
        if done:
            break
    return weights


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
        self.b0, self.b1, self.model, self.tau, lp = _all_grids(prior)
        self.models = prior.models
        # per model, the covariate that b1 multiplies: the margin x, or for "tempered" the agreement model's log odds
        # (passed as that model's offset; its offset is then 0)
        # ("unanimous": b1 multiplies 1 where every verdict is one class, 0 elsewhere)
        tempered = np.array([m in TEMPERED for m in prior.models])
        step = np.array([m == "unanimous" for m in prior.models])
        xf = np.asarray(x, dtype=float)
        self.xs = np.where(tempered[:, None], offsets, np.where(step[:, None], (xf >= 1.0 - 1e-9)[None, :] * 1.0, xf[None, :]))
        self.offsets = np.where(tempered[:, None], 0.0, offsets)
        self.x, self.wrong, self.trials = x, wrong, trials
        if self.tau.max(initial=0.0) > 0:
            nodes, weights = np.polynomial.hermite_e.hermegauss(prior.nodes)
            self.u = nodes
            self.log_omega = np.log(weights / weights.sum())
        else:
            self.u, self.log_omega = np.zeros(1), np.zeros(1)
        labeled = [int(j) for j in np.nonzero((trials > 0) & can_err)[0]]
        per_split = [self._log_marginal(j, slice(None)) for j in labeled]
        for lm in per_split:
            lp += lm
        if prior.weighting != "evidence" and n_models > 1 and labeled:
            log_z = np.array([logsumexp(lp[self.model == i]) for i in range(n_models)])
            loo, n_items = self._loo_densities(lp, log_z, labeled, per_split)
            if prior.weighting == "stacking":
                log_weights = np.log(np.maximum(_stacking_weights(loo, n_items), 1e-300))
            else:  # pseudo-BMA: each model's summed leave-one-label-out log predictive density
                elpd = n_items @ loo
                log_weights = elpd - float(logsumexp(elpd))
            # each model's own posterior over its grid, the models weighed by the leave-one-out weights, not evidence
            lp = lp - log_z[self.model] + log_weights[self.model]
        w = np.exp(lp - lp.max())
        # every model's posterior probability (the guard reads it); models named in prior.guard_models weigh in here
        # only, and the estimate averages the others
        self._probabilities = {m: float(w[self.model == i].sum() / w.sum()) for i, m in enumerate(self.models)}
        if prior.guard_models and not set(prior.models) <= set(prior.guard_models):
            w = np.where(np.isin(self.model, [i for i, m in enumerate(self.models) if m in prior.guard_models]), 0.0, w)
        # keep the grid points that carry posterior mass (the rest weigh < 1e-12 of the largest): every later step
        # costs grid x splits x nodes
        live = w > 1e-12
        self.b0, self.b1, self.model, self.tau = self.b0[live], self.b1[live], self.model[live], self.tau[live]
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

    def _log_lik_nodes(self, j: int, g: Any, leave_out: float | None = None) -> np.ndarray:
        """log P(split j's labeled outcomes | grid point, node); leave_out 1.0 / 0.0: without one of its labeled items
        whose plurality was wrong / right."""
        trials, wrong = self.trials[j], self.wrong[j]
        if leave_out is not None:
            trials, wrong = trials - 1.0, wrong - leave_out
        zu = self._z(j, g)[:, None] + self.tau[g][:, None] * self.u[None, :]
        # log sigmoid(-z) = log sigmoid(z) - z: one logaddexp over the grid x nodes instead of two (the hot spot)
        out: np.ndarray = trials * _log_sigmoid(zu) - (trials - wrong) * zu
        return out

    def _loo_densities(self, lp: np.ndarray, log_z: np.ndarray, labeled: list[int],
                       per_split: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Each model's leave-one-label-out log predictive density of a labeled item's outcome given the other labeled
        items, exact on its grid (a ratio of its marginal likelihoods with and without the item): (outcomes x models,
        how many labeled items share each outcome row)."""
        n_models = len(log_z)
        rows, counts = [], []
        for j, lm in zip(labeled, per_split):
            for out, n in ((1.0, self.wrong[j]), (0.0, self.trials[j] - self.wrong[j])):
                if n <= 0:
                    continue
                rest = lp - lm + logsumexp(self.log_omega[None, :] + self._log_lik_nodes(j, slice(None), out), axis=1)
                rows.append([log_z[i] - logsumexp(rest[self.model == i]) for i in range(n_models)])
                counts.append(n)
        return np.array(rows), np.array(counts, dtype=float)

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
            p = _sigmoid(self._z(j, slice(None))[:, None] + self.tau[:, None] * self.u[None, :])
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
        if tempered:
            sel = (self.model == self.models.index("tempered")) if "tempered" in self.models else np.zeros(len(self.w), bool)
        else:  # the curves in the margin x (the "unanimous" step's b1 is not a slope)
            sel = ~np.isin(self.model, [i for i, m in enumerate(self.models) if m in (*TEMPERED, "unanimous", "saturated")])
        mass = float(self.w[sel].sum())
        if mass <= 0:
            return None
        return float(self.w[sel] @ self.b0[sel]) / mass, float(self.w[sel] @ self.b1[sel]) / mass

    def model_probabilities(self) -> dict[str, float]:
        """Each model's posterior probability given the labels, or its stacking weight (prior.weighting "stacking"),
        before `prior.guard_models` are set aside."""
        return dict(self._probabilities)

