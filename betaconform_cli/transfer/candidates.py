"""Step 2 of the default method: the candidates, each a centre q over the target's (judges, correct) cells.

The target's cells are `posterior.cell_posterior`'s: every S = 0..K of every number of judges K its items carry, each
K weighted by the target's share of items with K judges. A candidate puts a Dirichlet prior with mean q and
kappa pseudo-items (plus `fit`'s flat pseudo-item) on those cells (step 3 weighs it). Its centres:

- *a source as it is*: its histogram at K smoothed by `histogram_smoothing` pseudo-items of its fitted mixture,
  (h + m pmf) / (n_K + m) (the pmf alone where it has no item with K judges, or with smoothing null);
- *a point between two sources*, t q_i + (1 - t) q_j for t in `interpolation`, and *the pool* of all of them
  (the share-weighted mixture): the target may sit between sources;
- *a source's shape at another location*: its fitted mixture with every judge's log-odds of being right moved by
  delta, logit(p') = logit(p) + delta, for delta on a grid of `shift_step` up to +-`shift_max`. The labels
  estimate delta; the source lends only its shape (how item difficulty spreads, one peak or two). The shifted
  density of u = logit(p) is discretised into 600 bins with their exact masses (regularised incomplete beta),
  times Bin(s | K, p).

"As it is" says the target's judges are the source's judges on a like task, so (with `match_judge_count`) it is
offered only for the target's items whose number of judges K the source also has: a source that saw only other
numbers of judges is another ensemble and lends its shape alone.

Each cell's majority error at k <= K is the hypergeometric error of its S of K judges, the same for every
candidate; for k > K (judges the item does not have) it is the candidate's predictive: the missing judges drawn
from the item's posterior under the source's mixture (shifted by delta for a shifted copy), and for a point
between sources the same t-weighted average (an approximation: the exact predictive of a mixture of mixtures
reweights components by the cell). Only those extrapolated (cell, k) entries are stored per candidate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy.special import betainc, expit

from ..counts import CountTable
from ..distributions import Mixture, binomial_pmf, item_error_table, majority_error_weights
from ..posterior import cell_posterior
from .settings import TransferSettings
from .similarity import SourcePrior
from .sources import Source


@dataclass(frozen=True)
class Cells:
    """The target's cells in `cell_posterior`'s order: K and S per cell, the labeled counts, each cell's share of
    items with its K, `fit`'s flat pseudo-item, and each cell's majority error at each k <= K (`extrapolated` marks
    the (cell, k) with k > K, whose error depends on the candidate)."""

    ks: tuple[int, ...]
    judges: np.ndarray = field(repr=False)
    correct: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    share: np.ndarray = field(repr=False)
    flat: np.ndarray = field(repr=False)
    errors: np.ndarray = field(repr=False)
    extrapolated: np.ndarray = field(repr=False)

    @property
    def rows(self) -> tuple[int, ...]:
        return tuple(int(k) for k in np.unique(self.judges))

    @property
    def items(self) -> float:
        return float(self.counts.sum())


def target_cells(table: CountTable, ks: tuple[int, ...]) -> Cells:
    """The cells of a target table (see Cells)."""
    rows = np.nonzero(table.counts.sum(axis=1))[0]
    share_k = table.counts.sum(axis=1)[rows] / table.items
    judges = np.concatenate([np.full(int(k) + 1, int(k)) for k in rows])
    correct = np.concatenate([np.arange(int(k) + 1) for k in rows])
    share = np.concatenate([np.full(int(k) + 1, sh) for k, sh in zip(rows, share_k)])
    counts = np.concatenate([table.counts[int(k), : int(k) + 1] for k in rows]).astype(float)
    errors = np.zeros((len(judges), len(ks)))
    for i, k in enumerate(ks):
        for big_k in rows:
            if k <= big_k:
                errors[judges == big_k, i] = item_error_table(int(big_k), k)
    extrapolated = np.asarray(judges)[:, None] < np.asarray(ks)[None, :]
    return Cells(tuple(ks), judges, correct, counts, share, share / (judges + 1), errors, extrapolated)


@dataclass(frozen=True)
class Candidates:
    """The centres q (rows) over the target's cells, with their prior mass, the extrapolated errors, how much of
    each centre is each source (`membership`, for the sources' final weights), and each centre's kind and shift."""

    kind: tuple[str, ...]  # "source", "pair", "pool" or "shifted"
    prior: np.ndarray = field(repr=False)
    centres: np.ndarray = field(repr=False)
    extrapolated: np.ndarray = field(repr=False)  # centre x (cell, k) entry with k > K
    membership: np.ndarray = field(repr=False)  # centre x source
    shift: np.ndarray = field(repr=False)  # centre: delta of a shifted copy, nan otherwise

    def errors(self, cells: Cells, c: int) -> np.ndarray:
        """The full cell x k error table of centre c."""
        e = cells.errors.copy()
        e[cells.extrapolated] = self.extrapolated[c]
        return e


def source_centre(table: CountTable, cells: Cells, source: Source, smoothing: float | None) -> tuple[np.ndarray, np.ndarray]:
    """A source as it is, over the target's cells: q (sums to 1) and its extrapolated errors (module docstring)."""
    parts = []
    hist = source.table.counts
    for k in cells.rows:
        q = np.asarray(source.mixture.pmf(k), dtype=float)
        if smoothing is not None and k < hist.shape[0] and hist[k].sum() > 0:
            h = hist[k, : k + 1].astype(float)
            q = (h + smoothing * q) / (h.sum() + smoothing)
        parts.append(q * cells.share[cells.judges == k][0])
    ext = np.zeros(0)
    if cells.extrapolated.any():
        ext = cell_posterior(table, source.mixture, cells.ks, 0.0, 0.0).errors[cells.extrapolated]
    return np.concatenate(parts), ext


# --- a source's shape at another location: its judges' log-odds shifted by delta ------------------------

# bins of u = logit(p) for the shifted densities: 600 of width 0.04 on [-12, 12], and the two tails (p = 0, 1)
EDGES = np.concatenate(([-np.inf], np.linspace(-12.0, 12.0, 601), [np.inf]))
BIN_P = np.concatenate(([0.0], expit(0.5 * (EDGES[1:-2] + EDGES[2:-1])), [1.0]))


def shift_grid(settings: TransferSettings) -> tuple[float, ...]:
    """The shifts delta: -shift_max..shift_max in steps of shift_step (0 included)."""
    n = int(math.floor(settings.offers.shift_max / settings.offers.shift_step + 1e-9))
    return tuple(float(i * settings.offers.shift_step) for i in range(-n, n + 1))


def component_masses(alpha: float, beta: float, shifts: np.ndarray) -> np.ndarray:
    """masses[d, bin] = P(logit(p) + shifts[d] in bin) for p ~ Beta(alpha, beta): exact bin masses (the
    regularised incomplete beta function at the shifted edges)."""
    cdf = betainc(alpha, beta, expit(EDGES[None, :] - np.asarray(shifts, dtype=float)[:, None]))
    out: np.ndarray = np.maximum(np.diff(cdf, axis=1), 0.0)
    return out


@lru_cache(maxsize=256)
def shifted_cells(mixture: Mixture, shifts: tuple[float, ...], big_k: int, ks: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The source mixture with every judge's log-odds of being correct moved by delta, for each delta in shifts:

    q[d, s]: P(S = s of big_k correct), and errors[d, s, i]: majority error at ks[i] of an item with s of big_k
    correct (hypergeometric thinning for k <= big_k; for k > big_k the k - big_k missing judges drawn from the
    item's posterior under the shifted density, an even k taking the k - 1 error: the tie rule, as
    posterior._predictive_error explains). delta = 0 is the source's mixture itself (to the bins' precision).
    """
    d = np.asarray(shifts, dtype=float)
    masses = sum(w * component_masses(a, b, d) for w, a, b in zip(mixture.weights, mixture.alphas, mixture.betas))
    masses = np.asarray(masses) / np.asarray(masses).sum(axis=1, keepdims=True)
    lik = binomial_pmf(big_k, BIN_P)  # bin x s
    q = masses @ lik
    errors = np.empty((len(d), big_k + 1, len(ks)))
    post = None
    for i, k in enumerate(ks):
        if k <= big_k:
            errors[:, :, i] = np.asarray(item_error_table(big_k, k))[None, :]
            continue
        if k % 2 == 0:  # the tie rule, as posterior._predictive_error: an even k beyond the item's judges is k - 1
            k -= 1
            if k <= big_k:
                errors[:, :, i] = np.asarray(item_error_table(big_k, k))[None, :]
                continue
        if post is None:  # only for k > big_k: delta x bin x s, the unnormalised posterior of the bin given s
            post = masses[:, :, None] * lik[None, :, :]
            total = post.sum(axis=1)  # delta x s  (= q)
        m = k - big_k
        e = majority_error_weights(k)
        extra = binomial_pmf(m, BIN_P)  # bin x x: the missing judges
        per_bin = extra @ e[np.arange(m + 1)[:, None] + np.arange(big_k + 1)[None, :]]  # bin x s: error of s + x correct
        num = np.einsum("dbs,bs->ds", post, per_bin)
        errors[:, :, i] = np.where(total > 0, num / np.maximum(total, 1e-300), per_bin.mean(axis=0)[None, :])
    q.setflags(write=False)
    errors.setflags(write=False)
    return q, errors


def shifted_centres(cells: Cells, mixture: Mixture, deltas: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """`shifted_cells` over the target's cells: q[d, cell] (each K weighted by its share) and the extrapolated
    errors [d, (cell, k) entry]."""
    qs, errs = [], []
    for k in cells.rows:
        q, e = shifted_cells(mixture, deltas, k, cells.ks)
        qs.append(q * cells.share[cells.judges == k][0])
        errs.append(e)
    errors = np.concatenate(errs, axis=1)
    return np.concatenate(qs, axis=1), errors[:, cells.extrapolated]


def shifted_mixture(mixture: Mixture, shift: float) -> Mixture:
    """A Beta mixture that summarises the shifted density: each component's shifted density moment-matched by a
    Beta (for the transferred fit's mixture column and saved model; the estimate never uses it)."""
    if shift == 0:
        return mixture
    alphas, betas = [], []
    for a, b in zip(mixture.alphas, mixture.betas):
        w = component_masses(a, b, np.array([shift]))[0]
        w = w / w.sum()
        mean = float(w @ BIN_P)
        a_new, b_new = beta_from_moments(mean, float(w @ BIN_P**2) - mean**2)
        alphas.append(a_new)
        betas.append(b_new)
    return Mixture(mixture.weights, tuple(alphas), tuple(betas)).sorted()


def beta_from_moments(mean: float, var: float) -> tuple[float, float]:
    """(alpha, beta) of the Beta with this mean and variance (clipped to a valid Beta)."""
    mean = min(max(mean, 1e-9), 1 - 1e-9)
    conc = max(mean * (1 - mean) / max(var, 1e-12) - 1, 1e-6)
    return mean * conc, (1 - mean) * conc


# --- the candidate set ------------------------------------------------------------------------------------


def build_candidates(
    cells: Cells,
    sources: list[Source],
    singles: list[tuple[np.ndarray, np.ndarray]],
    prior: SourcePrior,
    match: np.ndarray,
    settings: TransferSettings,
) -> tuple[Candidates, float]:
    """Every centre with its prior mass, and the prior mass left to no transfer (prior.no_transfer plus the mass of
    "as it is" that no source with the target's judge count can take when there are no shifted copies).

    A source's mass splits into "as it is" (1 - `shift_prior`, times its share of the target's items whose K it
    has) and its shifted copies (the rest, uniform over the shift grid). "As it is" is shared by the single
    sources, the points between two (`pair_prior`, over pairs by the product of their shares, evenly over the
    t) and the pool (`pool_prior`)."""
    n = len(sources)
    deltas = shift_grid(settings) if settings.offers.shift_prior > 0 else ()
    fam = prior.family
    as_is = fam * (1 - settings.offers.shift_prior) * match
    shifted = fam * (settings.offers.shift_prior + (1 - settings.offers.shift_prior) * (1 - match)) if deltas else np.zeros(n)
    left = float(prior.no_transfer + fam.sum() - as_is.sum() - shifted.sum())
    out = _CandidateList(n)
    _add_as_is(out, as_is, singles, settings)
    for i, s in enumerate(sources):
        if shifted[i] <= 0:
            continue
        q_d, e_d = shifted_centres(cells, s.mixture, deltas)
        for j, d in enumerate(deltas):
            out.add("shifted", shifted[i] / len(deltas), q_d[j], e_d[j], np.eye(n)[i], d)
    return out.freeze(cells), left


class _CandidateList:
    """The candidates as they are added, one centre at a time; `freeze` makes them Candidates."""

    def __init__(self, sources: int):
        self.sources = sources
        self.kind: list[str] = []
        self.prior: list[float] = []
        self.centres: list[np.ndarray] = []
        self.extrapolated: list[np.ndarray] = []
        self.membership: list[np.ndarray] = []
        self.shift: list[float] = []

    def add(self, kind: str, prior: float, q: np.ndarray, e: np.ndarray, member: np.ndarray, shift: float = math.nan) -> None:
        self.kind.append(kind)
        self.prior.append(prior)
        self.centres.append(q)
        self.extrapolated.append(e)
        self.membership.append(member)
        self.shift.append(shift)

    def freeze(self, cells: Cells) -> Candidates:
        m = len(self.kind)
        return Candidates(
            kind=tuple(self.kind),
            prior=np.asarray(self.prior, dtype=float),
            centres=np.asarray(self.centres, dtype=float).reshape(m, len(cells.counts)),
            extrapolated=np.asarray(self.extrapolated, dtype=float).reshape(m, int(cells.extrapolated.sum())),
            membership=np.asarray(self.membership, dtype=float).reshape(m, self.sources),
            shift=np.asarray(self.shift, dtype=float),
        )


def _add_as_is(
    out: _CandidateList, as_is: np.ndarray, singles: list[tuple[np.ndarray, np.ndarray]], settings: TransferSettings
) -> None:
    """The mass of "as it is" shared by the single sources, the points between two and the pool."""
    n = len(as_is)
    eye = np.eye(n)
    mass = float(as_is.sum())
    idx = [i for i in range(n) if as_is[i] > 0]
    if not idx:
        return
    sa = as_is / mass
    pair = settings.offers.pair_prior if len(idx) > 1 and settings.offers.interpolation else 0.0
    pool = settings.offers.pool_prior if len(idx) > 1 else 0.0
    for i in idx:
        out.add("source", (1 - pair - pool) * mass * sa[i], singles[i][0], singles[i][1], eye[i])
    if pair:
        pairs = [(i, j) for a, i in enumerate(idx) for j in idx[a + 1:]]
        pw = np.array([sa[i] * sa[j] for i, j in pairs])
        pw = pw / pw.sum()
        for (i, j), w in zip(pairs, pw):
            for t in settings.offers.interpolation:
                m = np.zeros(n)
                m[i], m[j] = t, 1 - t
                out.add("pair", pair * mass * w / len(settings.offers.interpolation), t * singles[i][0] + (1 - t) * singles[j][0],
                        t * singles[i][1] + (1 - t) * singles[j][1], m)
    if pool:
        out.add("pool", pool * mass, sum(sa[i] * singles[i][0] for i in idx), sum(sa[i] * singles[i][1] for i in idx), sa.copy())
