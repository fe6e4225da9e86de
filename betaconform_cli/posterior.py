"""The default estimate: a Dirichlet posterior over the (judges, correct) cells, centred on the fitted mixture.

Dirichlet(n_cell + strength * q_cell + flat * u_cell) over the cells of the labeled items: q the fitted mixture's
pmf (worth `strength` items, 20 by default), u a flat pseudo-item. Each cell's majority error at k is exact
hypergeometric thinning for k <= K, and for k > K the mixture's posterior predictive for the missing judges
(docs/METHOD.md of this repository; fit.analyse combines them into the error table).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .counts import CountTable
from .distributions import Mixture, item_error_table, log_beta_binomial, logsumexp, majority_error_weights
from .intervals import equal_tailed


@dataclass(frozen=True)
class CellPosterior:
    """Dirichlet posterior over the (judges K, correct S) cells and each cell's majority error at each k.

    cells: (K, S) for every S = 0..K of every K seen in the data; concentration: the Dirichlet parameter;
    errors[cell, i]: majority error at ks[i] of an item in that cell (hypergeometric thinning when k <= K,
    the mixture's posterior predictive for the k - K missing judges when k > K).
    """

    ks: tuple[int, ...]
    judges: np.ndarray = field(repr=False)
    correct: np.ndarray = field(repr=False)
    concentration: np.ndarray = field(repr=False)
    errors: np.ndarray = field(repr=False)

    def mean(self) -> np.ndarray:
        mean: np.ndarray = (self.concentration / self.concentration.sum()) @ self.errors
        return mean

    def interval_scaled(
        self, rng: np.random.Generator, confidence_level: float, effective_items: float, n_draws: int = 4000,
        mean: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed interval of a Dirichlet with `effective_items` in total around this posterior's mean (or
        around `mean`, cell shares: a plug-in estimate's own cells, so that the interval belongs to it).

        The mixture pseudo-counts move the centre but were fitted on the same items, so they add no
        information: the interval keeps the spread of the labeled items alone (plus the flat prior).
        """
        mean = self.concentration / self.concentration.sum() if mean is None else np.asarray(mean) / np.sum(mean)
        g = rng.gamma(mean * effective_items, size=(n_draws, len(mean)))
        g /= g.sum(axis=1, keepdims=True)
        d = g @ self.errors
        return equal_tailed(d, confidence_level)


def _predictive_error(mixture: Mixture, big_k: int, s: int, k: int) -> float:
    """Majority error at k > K for an item with s of K correct: the missing k - K judges drawn from the
    item's posterior under the mixture (component j: Beta(alpha_j + s, beta_j + K - s)). An even k takes the
    error at k - 1 (the tie rule; see below).

    Why the even k is the k - 1 value, exactly. For any k = 2m exchangeable judges, counting a tie as half an
    error gives exactly the error of k - 1 of them: drop one of the 2m at random; the 2m - 1 left have a wrong
    majority when the 2m had fewer than m correct, and, when they had exactly m (a tie), with probability 1/2
    (the dropped judge was a correct one). So P(S_{2m-1} < m) = P(S_2m < m) + P(S_2m = m) / 2. The rows k <= K
    (random subsets of the item's own judges, hypergeometric) obey this cell by cell. Beyond K, the ensemble is
    the K observed judges plus k - K drawn ones; given the item's labels the drawn judges are exchangeable with
    each other but not with the observed ones, so computing k and k - 1 separately drops a drawn judge, not a
    random one, and the two differ by up to 1.4 points. What the row estimates is the error of k judges of an
    item from the population, and under the model (items drawn from the mixture, judges exchangeable given the
    item) those k judges are exchangeable, so that error at k = 2m equals the one at 2m - 1 exactly. The k - 1
    value is therefore an estimate of the same quantity, and using it keeps the identity that METHOD.md promises
    for every column, interval ends included.
    """
    if k % 2 == 0:
        if k - 1 <= big_k:
            return float(item_error_table(big_k, k - 1)[s])
        k -= 1
    m = k - big_k
    logw = np.log(np.asarray(mixture.weights)) + mixture.component_log_pmf(np.array(s), np.array(big_k))
    post = np.exp(logw - logsumexp(logw))
    e = majority_error_weights(k)
    x = np.arange(m + 1)
    total = 0.0
    for wj, a, b in zip(post, mixture.alphas, mixture.betas):
        pmf = np.exp(log_beta_binomial(x, m, a + s, b + big_k - s))
        total += wj * float(pmf @ e[s + x])
    return total


def cell_errors(big_k: int, mixture: Mixture, ks: tuple[int, ...]) -> np.ndarray:
    """e[S, i]: majority error at ks[i] of an item with S of K = big_k judges correct (hypergeometric thinning when
    k <= K, the mixture's posterior predictive for the k - K missing judges when k > K)."""
    s = np.arange(big_k + 1)
    cols = []
    for k in ks:
        if k <= big_k:
            cols.append(np.asarray(item_error_table(big_k, k)))
        else:
            cols.append(np.array([_predictive_error(mixture, big_k, int(v), k) for v in s]))
    return np.column_stack(cols)


def mixture_cells(table: CountTable, mixture: Mixture) -> np.ndarray:
    """The mixture's pmf over the table's cells (each K with items, S = 0..K), weighted by the share of items with
    K judges: a plug-in estimate's cell shares, in `cell_posterior`'s cell order."""
    rows = np.nonzero(table.counts.sum(axis=1))[0]
    share = table.counts.sum(axis=1)[rows] / table.items
    return np.concatenate([sh * mixture.pmf(int(k)) for k, sh in zip(rows, share)])


def cell_posterior(
    table: CountTable, mixture: Mixture, ks: tuple[int, ...], strength: float, flat: float
) -> CellPosterior:
    """Dirichlet(n_cell + strength * q_cell + flat * u_cell) over cells.

    q: the fitted mixture's pmf at each K, weighted by the share of items with K judges; u: uniform over
    S = 0..K at each K, same weighting. `strength` and `flat` are totals in items.
    """
    rows = np.nonzero(table.counts.sum(axis=1))[0]
    share = table.counts.sum(axis=1)[rows] / table.items
    judges, correct, conc, errs = [], [], [], []
    for row, sh in zip(rows, share):
        big_k = int(row)
        s = np.arange(big_k + 1)
        q = mixture.pmf(big_k)
        judges.append(np.full(big_k + 1, big_k))
        correct.append(s)
        conc.append(table.counts[big_k, : big_k + 1] + strength * sh * q + flat * sh / (big_k + 1))
        errs.append(cell_errors(big_k, mixture, ks))
    return CellPosterior(
        ks=tuple(ks),
        judges=np.concatenate(judges),
        correct=np.concatenate(correct),
        concentration=np.concatenate(conc),
        errors=np.vstack(errs),
    )
