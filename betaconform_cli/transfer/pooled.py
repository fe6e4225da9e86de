"""Steps 4-5 of the default method: the pooled estimate, its limit, the pooled interval, and the summary mixture.

- Estimate: the posterior-weighted mean of the candidates' estimates (no transfer: `fit`'s estimate of the same
  labels; a centre at kappa: its Dirichlet posterior mean).
- Limit (the labels have the last word): the estimate at each k stays within `max_move` posterior standard
  deviations of the no-transfer estimate, the standard deviation read off the no-transfer interval on each side
  (half-width / z of the confidence level). A limited-translation estimator (Efron and Morris, 1971, "Limiting
  the risk of Bayes and empirical Bayes estimators"): the sources can refine what the labels say, never
  overrule it, so a source that predicts the labels well but describes other judges costs at most that much.
- Interval: quantiles of the pooled posterior draws, each candidate drawn in proportion to its weight (no
  transfer with the no-transfer interval's spread); it always holds the estimate.
- Summary mixture (the table's mixture column and a saved transfer's model): no transfer, each source and each
  source at its estimated shift, merged to at most three Betas keeping the mean and variance of p. The estimate
  and interval never use it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..distributions import Mixture, error_rates
from ..fit import ErrorRow, FitResult
from ..intervals import enclose_value, equal_tailed, z_value
from ..posterior import CellPosterior
from .candidates import Candidates, Cells, beta_from_moments
from .evidence import Posterior


def candidate_means(cells: Cells, cands: Candidates, post: Posterior) -> np.ndarray:
    """Each (centre, kappa)'s Dirichlet posterior mean error at each k: centre-major, kappa-minor rows."""
    p = post.concentration / post.concentration.sum(axis=-1, keepdims=True)  # centre x kappa x cell
    means: np.ndarray = p @ cells.errors  # centre x kappa x k
    if cells.extrapolated.any() and len(cands.prior):
        cell_idx, k_idx = np.nonzero(cells.extrapolated)
        contrib = p[:, :, cell_idx] * cands.extrapolated[:, None, :]  # centre x kappa x entry
        for j in np.unique(k_idx):
            means[:, :, j] += contrib[:, :, k_idx == j].sum(axis=-1)
    return means.reshape(-1, len(cells.ks))


def pooled_estimate(without: FitResult, means: np.ndarray, post: Posterior) -> np.ndarray:
    """The posterior-weighted mean of the candidates' estimates, no transfer first."""
    own = np.array([r.estimate for r in without.rows])
    return np.asarray(post.weights[0] * own + post.weights[1:] @ means if len(means) else own)


def limit_move(estimate: np.ndarray, without: FitResult, max_move: float | None, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """The estimate held within `max_move` no-transfer posterior standard deviations of the no-transfer estimate
    (module docstring); returns it and, per k, whether the limit held it back."""
    if max_move is None:
        return estimate, np.zeros(len(estimate), dtype=bool)
    z = z_value(confidence_level)
    own = np.array([r.estimate for r in without.rows])
    lo = own - max_move * (own - np.array([r.low for r in without.rows])) / z
    hi = own + max_move * (np.array([r.high for r in without.rows]) - own) / z
    held = np.clip(estimate, lo, hi)
    return held, np.abs(held - estimate) > 1e-12


def pooled_interval(
    rng: np.random.Generator, cells: Cells, cands: Candidates, post: Posterior, own: CellPosterior, own_items: float,
    n_draws: int, level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed interval of the pooled posterior draws (module docstring); no transfer is drawn from a
    Dirichlet with the no-transfer posterior's mean and `own_items` (the labeled items plus the flat pseudo-item)
    in total, as `fit`'s interval is."""
    alloc = rng.multinomial(n_draws, post.weights)
    draws = []
    if alloc[0]:
        m0 = own.concentration / own.concentration.sum()
        g = rng.gamma(m0 * own_items, size=(alloc[0], len(m0)))
        draws.append((g / g.sum(axis=1, keepdims=True)) @ own.errors)
    n_k = post.log_ml.shape[1] if post.log_ml.ndim == 2 else 1
    conc = post.concentration.reshape(-1, len(cells.counts))
    for c in np.nonzero(alloc[1:])[0]:
        g = rng.gamma(conc[c], size=(int(alloc[c + 1]), len(cells.counts)))
        draws.append((g / g.sum(axis=1, keepdims=True)) @ cands.errors(cells, int(c // n_k)))
    d = np.vstack(draws)
    return equal_tailed(d, level)


def combined(mixtures: Sequence[Mixture], weights: Sequence[float], floor: float = 0.01, max_components: int = 3) -> Mixture:
    """sum_i weights_i * mixture_i summarised as one mixture of at most `max_components` Betas: components under
    `floor` dropped (the largest always kept), then the two with the closest means merged, keeping the mean and
    variance of p of the pair, until few enough remain."""
    parts = [(p * wj, aj, bj) for m, p in zip(mixtures, weights) for wj, aj, bj in zip(m.weights, m.alphas, m.betas)]
    kept = [c for c in parts if c[0] >= floor] or [max(parts)]
    comps = sorted(kept, key=lambda c: c[1] / (c[1] + c[2]))
    while len(comps) > max_components:
        means = [a / (a + b) for _, a, b in comps]
        i = int(np.argmin(np.diff(means)))
        (w1, a1, b1), (w2, a2, b2) = comps[i], comps[i + 1]
        w = w1 + w2
        m1, m2 = means[i], means[i + 1]
        v1 = m1 * (1 - m1) / (a1 + b1 + 1)
        v2 = m2 * (1 - m2) / (a2 + b2 + 1)
        mean = (w1 * m1 + w2 * m2) / w
        comps[i : i + 2] = [(w, *beta_from_moments(mean, (w1 * (v1 + m1**2) + w2 * (v2 + m2**2)) / w - mean**2))]
    total = sum(c[0] for c in comps)
    return Mixture(tuple(c[0] / total for c in comps), tuple(c[1] for c in comps), tuple(c[2] for c in comps)).sorted()


def error_rows(ks: tuple[int, ...], centre: np.ndarray, low: np.ndarray, high: np.ndarray, mixture: Mixture,
               base: FitResult) -> tuple[ErrorRow, ...]:
    """The transferred error table: estimate inside its interval, the summary mixture's column, and the
    no-transfer fit's other columns (binomial, Beta-Binomial, empirical, ...) of the same labels."""
    mix_err = error_rates(mixture, ks)
    out = []
    for i, k in enumerate(ks):
        b = base.row(k)
        lo, hi = enclose_value(centre[i], low[i], high[i])
        out.append(ErrorRow(k=k, estimate=float(centre[i]), low=float(lo), high=float(hi), columns={**b.columns, "mixture": mix_err[k]}))
    from ..extrapolation import beyond_rows  # rows beyond the target's judges: marked and widened as fit's are

    most = max((r.k for r in base.rows if not r.beyond_data), default=0)
    return beyond_rows(out, most, ks) if any(r.beyond_data for r in base.rows) else tuple(out)
