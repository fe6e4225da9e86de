"""Step 3 of the default method: the labels' evidence for each candidate, and the posterior weights.

Every evidence is the probability of the labeled items' cells, in order, under a proper prior, so all are on
one footing:

- *no transfer* (`no_transfer_evidence: dirichlet`, the default): a Dirichlet with kappa pseudo-items around a
  Beta-Binomial, kappa in `strengths` and the Beta-Binomial's mean and concentration uniform on a grid
  (`grid_means` x `grid_concentrations`): as flexible as a source's shifted copies, so a source must fit the
  labels' shape better than any Beta-Binomial to earn weight; `beta-binomial`: the Beta-Binomial alone (the
  previous rule, under which a Dirichlet around any centre near the labels beat it by flexibility alone);
- *a centre q at strength kappa*: the Dirichlet-multinomial marginal likelihood of the counts under
  Dirichlet(kappa q + flat u), for each kappa in `strengths` (the labels also decide how much to trust a centre).

Posterior weight = prior x evidence; the prior of a centre is split evenly over the kappas, except that a source as
it is takes only the kappas of at least `as_is_min_strength` (`strength_prior`). The prior conflict
check compares the similarity-weighted sources as they are (their prior predictive) with no transfer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln, logsumexp

from ..counts import CountTable
from ..distributions import log_beta_binomial
from .candidates import Candidates, Cells


def no_transfer_log_evidence(table: CountTable, grid_means: int, grid_concentrations: Sequence[float]) -> float:
    """log P(the labeled items, in order | no transfer): a single Beta-Binomial whose (mean, concentration) has
    a uniform prior over a grid (means (i + 1/2) / grid_means, the given concentrations a + b).

    A proper, vague model that adapts to the labels, as the no-transfer fit does; the sources must predict
    the labels better than it to earn weight (its Occam factor is the grid's size).
    """
    big_k, s, n = table.cells()
    m = (np.arange(grid_means) + 0.5) / grid_means
    c = np.asarray(grid_concentrations, dtype=float)
    a = (m[:, None] * c[None, :]).ravel()
    b = ((1 - m)[:, None] * c[None, :]).ravel()
    ll = log_beta_binomial(s[None, :], big_k[None, :], a[:, None], b[:, None])  # pmf of S, as the cells
    per_grid = ll @ n.astype(float)
    return float(logsumexp(per_grid) - math.log(len(per_grid)))


def no_transfer_dirichlet_log_evidence(
    cells: Cells, grid_means: int, grid_concentrations: Sequence[float], kappas: Sequence[float] | np.ndarray, flat: float
) -> float:
    """log P(the labeled items, in order | no transfer) with the sources' own flexibility: a Dirichlet with
    kappa pseudo-items (each kappa in `strengths`, plus the flat pseudo-item) around a Beta-Binomial whose (mean,
    concentration) is uniform on the grid. A source's shifted copies are the same family around its shape at every
    location, so they win only when that shape fits the labels better than every Beta-Binomial does, not because
    a Dirichlet around anything near the labels fits ten items well."""
    m = (np.arange(grid_means) + 0.5) / grid_means
    c = np.asarray(grid_concentrations, dtype=float)
    a = (m[:, None] * c[None, :]).ravel()
    b = ((1 - m)[:, None] * c[None, :]).ravel()
    q = np.exp(log_beta_binomial(cells.correct[None, :], cells.judges[None, :], a[:, None], b[:, None])) * cells.share
    k = np.asarray(kappas, dtype=float)
    alphas = k[None, :, None] * q[:, None, :] + flat * cells.flat[None, None, :]
    lml = dirichlet_multinomial_log_ml_many(cells.counts, alphas)
    return float(logsumexp(lml) - math.log(lml.size))


def dirichlet_multinomial_log_ml_many(counts: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """`dirichlet_multinomial_log_ml` for every Dirichlet parameter along the last axis of `alphas`."""
    n = np.asarray(counts, dtype=float)
    total = alphas.sum(axis=-1)
    out: np.ndarray = gammaln(total) - gammaln(total + n.sum()) + np.sum(gammaln(alphas + n) - gammaln(alphas), axis=-1)
    return out


def dirichlet_multinomial_log_ml(counts: np.ndarray, alpha: np.ndarray) -> float:
    """log P(the labeled items, in order | Dirichlet(alpha) over cells): the Dirichlet-multinomial evidence.

    log Gamma(A) - log Gamma(A + N) + sum_c [log Gamma(alpha_c + n_c) - log Gamma(alpha_c)].
    """
    return float(dirichlet_multinomial_log_ml_many(counts, np.asarray(alpha, dtype=float)))


@dataclass(frozen=True)
class Posterior:
    """Posterior over {no transfer} + {(centre, kappa)}: weights[0] is no transfer, then centre-major, kappa-minor."""

    weights: np.ndarray = field(repr=False)
    log_ml: np.ndarray = field(repr=False)  # centre x kappa: log evidence
    concentration: np.ndarray = field(repr=False)  # centre x kappa x cell: the Dirichlet posterior parameters
    log_ml0: float = 0.0
    strength_prior: np.ndarray | None = field(default=None, repr=False)  # centre x kappa: strength_prior (None: even)

    @property
    def no_transfer(self) -> float:
        return float(self.weights[0])

    def by_centre(self) -> np.ndarray:
        """Posterior weight of each centre (summed over the kappas)."""
        n_c = self.log_ml.shape[0]
        return self.weights[1:].reshape(n_c, -1).sum(axis=1) if n_c else np.zeros(0)


def as_is_strengths(kappas: Sequence[float] | np.ndarray, as_is_min_strength: float) -> np.ndarray:
    """Which kappas a source as it is takes: those of at least `as_is_min_strength` (the largest when none is)."""
    k = np.asarray(kappas, dtype=float)
    keep: np.ndarray = k >= min(as_is_min_strength, float(k.max()))
    return keep


def strength_prior(cands: Candidates, kappas: Sequence[float] | np.ndarray, as_is_min_strength: float) -> np.ndarray:
    """centre x kappa: how a centre's prior mass splits over the kappas. Evenly, except that a source as it is
    (alone, between two, or pooled) takes only the kappas of at least `as_is_min_strength` (the largest kappa when
    none is that large): with fewer pseudo-items the Dirichlet around a source fits any ten labels near it, so its
    evidence would be the labels', not the source's (shifted copies keep every kappa: the labels choose their
    location anyway)."""
    k = np.asarray(kappas, dtype=float)
    out = np.full((len(cands.prior), len(k)), 1.0 / len(k))
    keep = as_is_strengths(k, as_is_min_strength)
    if as_is_min_strength > 0:
        as_is = np.array([c in ("source", "pair", "pool") for c in cands.kind], dtype=bool).reshape(-1)
        out[as_is] = keep / keep.sum()
    return out


def posterior_weights(
    cells: Cells, cands: Candidates, kappas: Sequence[float] | np.ndarray, flat: float, no_transfer_prior: float, log_ml0: float,
    as_is_min_strength: float = 0.0,
) -> Posterior:
    """Posterior weights: prior x evidence, normalised (module docstring)."""
    k = np.asarray(kappas, dtype=float)
    alphas = k[None, :, None] * cands.centres[:, None, :] + flat * cells.flat[None, None, :]  # centre x kappa x cell
    lml = dirichlet_multinomial_log_ml_many(cells.counts, alphas) if len(cands.prior) else np.zeros((0, len(k)))
    split = strength_prior(cands, k, as_is_min_strength)
    with np.errstate(divide="ignore"):
        log_k = np.log(split)
    log_post = np.concatenate((
        [math.log(no_transfer_prior + 1e-300) + log_ml0],
        (np.log(cands.prior + 1e-300)[:, None] + log_k + lml).ravel(),
    ))
    w = np.exp(log_post - log_post.max())
    return Posterior(w / w.sum(), lml, alphas + cells.counts[None, None, :], log_ml0, split)


def prior_conflict(single_log_ml: np.ndarray, text_shares: np.ndarray, log_ml0: float, factor: float) -> tuple[bool, str]:
    """Prior conflict: the sources as they are (similarity-weighted, averaged over the kappas) predict the labels
    at most `factor` times as well as no transfer does. single_log_ml: source x kappa."""
    n_k = single_log_ml.shape[1]
    log_pred = float(logsumexp(single_log_ml - log_ml0, b=text_shares[:, None] / n_k))
    if log_pred >= math.log(factor):
        return False, ""
    return True, (f"the target's labels are {math.exp(-log_pred):.3g} times more likely without the sources' prior "
                  "than with it (similarity-weighted); the sources describe judges that behave differently here")
