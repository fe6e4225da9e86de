"""Prior transfer: borrow strength from fitted source datasets when a target has only a few labels.

Pure core: no printing, no typer/rich; randomness through a numpy Generator. See docs/TRANSFER.md.

Both methods start from the paper's transfer weight (eq. 14),

    lambda_i = log(r_i) * sigmoid(a * (CosSim(E0, Ei) - b)),

with index 0 the target itself (its own few labels; similarity to itself 1), and the Table 5 ablations as
settings: `size_weight="linear"` (log r_i -> r_i), `similarity="inverse-euclidean"` (cosine -> 1 / |E0 - Ei|),
`sigmoid=False` (lambda_i = size(r_i) * similarity).

- `paper`: eq. 15, the lambda-weighted average of (w, alpha_j, beta_j) over the target's own fit and every
  source's fit, each by the paper's two-component EM; the error table is the averaged mixture's, plug-in.
- `default` (ours): Bayesian model averaging. Candidate 0 is no transfer: the target's own default estimate
  (fit.analyse), whose evidence is the marginal likelihood of the labels under a vague, adaptive model (one
  Beta-Binomial with (mean, concentration) uniform on a grid). Candidate (q, kappa) puts a Dirichlet prior with
  mean q and kappa pseudo-items (plus the flat pseudo-item) on the (judges, correct) cells, for each kappa in
  `strengths`. The centres q: each source (its histogram smoothed by `histogram_smoothing` pseudo-items of its
  fitted pmf, or the pmf alone), points t q_i + (1 - t) q_j between two sources (`interpolation`, `pair_prior`
  of the sources' mass), the pool of all sources (`pool_prior`), and each source at another location
  (`shift_prior` of the sources' mass): its mixture with every judge's log-odds moved by delta, for delta on a
  grid (the labels estimate delta; the source lends its shape). Prior weights: `no_transfer_prior` for no
  transfer, the rest split over sources by lambda_i ** `similarity_power` (eq. 14) and evenly over the kappas.
  Posterior weight = prior times the Dirichlet-multinomial evidence of the target's labels: the labels, not the
  text, decide which source to trust and how much. The estimate is the posterior-weighted mean of the
  candidates' posterior means; the interval the quantiles of the pooled posterior draws (candidate 0 with the
  no-transfer interval's spread). Hyper-parameters chosen by benchmarks/transfer.py --tune (docs/TRANSFER.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import betainc, expit, gammaln, logsumexp

from .counts import CountTable
from .distributions import (
    Mixture,
    binomial_pmf,
    error_rates,
    item_error_table,
    log_beta_binomial,
    majority_error_weights,
)
from .errors import EmbeddingError, ParamsError, UsageError
from .fit import (
    ErrorRow,
    FitResult,
    MixtureFit,
    analyse,
    cell_posterior,
    fit_paper_em,
    mixture_log_likelihood,
)
from .settings import FitSettings

METHODS = ("default", "paper")
SIZE_WEIGHTS = ("log", "linear")
SIMILARITIES = ("cosine", "inverse-euclidean")
METHOD_DESCRIPTIONS = {
    "default": "Bayesian transfer: each source a Dirichlet prior weighted by lambda_i times the marginal "
    "likelihood of the target's labels, plus a no-transfer candidate",
    "paper": "the paper's transfer (eq. 14-15): lambda-weighted average of the EM mixture parameters, plug-in",
}


@dataclass(frozen=True)
class TransferSettings:
    """Hyper-parameters of the transfer (configs/transfer.yaml documents each)."""

    method: str = "default"
    sigmoid_a: float = 10.0
    sigmoid_b: float = 0.5
    size_weight: str = "log"
    similarity: str = "cosine"
    sigmoid: bool = True
    strengths: tuple[float, ...] = (5.0, 20.0, 100.0)
    grid_means: int = 20
    grid_concentrations: tuple[float, ...] = (1.0, 4.0, 16.0, 64.0)
    conflict_bayes_factor: float = 0.1
    no_transfer_prior: float | None = 0.1
    shift_prior: float = 0.5
    shift_max: float = 4.0
    shift_step: float = 0.25
    pool_prior: float = 0.4
    pair_prior: float = 0.3
    interpolation: tuple[float, ...] = (0.25, 0.5, 0.75)
    histogram_smoothing: float | None = 1.0
    similarity_power: float = 3.0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise UsageError(f"transfer method must be one of {', '.join(METHODS)}; got {self.method!r}")
        if self.size_weight not in SIZE_WEIGHTS:
            raise UsageError(f"size_weight must be one of {', '.join(SIZE_WEIGHTS)}; got {self.size_weight!r}")
        if self.similarity not in SIMILARITIES:
            raise UsageError(f"similarity must be one of {', '.join(SIMILARITIES)}; got {self.similarity!r}")
        if not math.isfinite(self.sigmoid_a) or not math.isfinite(self.sigmoid_b):
            raise UsageError("sigmoid_a and sigmoid_b must be finite numbers")
        if not self.strengths or any(not (s > 0 and math.isfinite(s)) for s in self.strengths):
            raise UsageError(f"strengths must be a non-empty list of positive numbers; got {list(self.strengths)}")
        if not isinstance(self.grid_means, int) or isinstance(self.grid_means, bool) or not 2 <= self.grid_means <= 1000:
            raise UsageError(f"grid_means must be an integer between 2 and 1000; got {self.grid_means!r}")
        if not self.grid_concentrations or any(not (c > 0 and math.isfinite(c)) for c in self.grid_concentrations):
            raise UsageError(f"grid_concentrations must be positive numbers; got {list(self.grid_concentrations)}")
        if self.no_transfer_prior is not None and not 0 < self.no_transfer_prior < 1:
            raise UsageError(f"no_transfer_prior must be strictly between 0 and 1 (or null); got {self.no_transfer_prior}")
        if not 0 <= self.shift_prior < 1:
            raise UsageError(f"shift_prior must be in [0, 1); got {self.shift_prior}")
        if not (math.isfinite(self.shift_max) and math.isfinite(self.shift_step) and 0 < self.shift_step <= self.shift_max <= 10):
            raise UsageError(f"shift_step and shift_max must satisfy 0 < shift_step <= shift_max <= 10; got {self.shift_step}, {self.shift_max}")
        if self.shift_max / self.shift_step > 200:
            raise UsageError(f"shift_max / shift_step must be at most 200 (grid points per side); got {self.shift_max / self.shift_step:g}")
        if not 0 <= self.pool_prior < 1:
            raise UsageError(f"pool_prior must be in [0, 1); got {self.pool_prior}")
        if not 0 <= self.pair_prior < 1 or self.pool_prior + self.pair_prior >= 1:
            raise UsageError(f"pair_prior must be in [0, 1) with pool_prior + pair_prior < 1; got {self.pair_prior}")
        if any(not 0 < t < 1 for t in self.interpolation):
            raise UsageError(f"interpolation points must lie strictly between 0 and 1; got {list(self.interpolation)}")
        if self.histogram_smoothing is not None and not (self.histogram_smoothing >= 0 and math.isfinite(self.histogram_smoothing)):
            raise UsageError(f"histogram_smoothing must be a non-negative number (or null); got {self.histogram_smoothing}")
        if not (self.similarity_power >= 0 and math.isfinite(self.similarity_power)):
            raise UsageError(f"similarity_power must be a non-negative number; got {self.similarity_power}")
        if not 0 < self.conflict_bayes_factor < 1:
            raise UsageError(f"conflict_bayes_factor must be strictly between 0 and 1; got {self.conflict_bayes_factor}")

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["strengths"] = list(self.strengths)
        d["grid_concentrations"] = list(self.grid_concentrations)
        d["interpolation"] = list(self.interpolation)
        return d


CONFIG_KEYS = {f.name for f in fields(TransferSettings)} - {"method"}


def settings_from_config(config: Mapping[str, Any], where: str = "config", **overrides: Any) -> TransferSettings:
    """TransferSettings from a configs/transfer.yaml mapping, then keyword overrides (None: keep)."""
    if not isinstance(config, Mapping):
        raise ParamsError(f"{where}: expected a mapping of transfer settings")
    unknown = set(config) - CONFIG_KEYS
    if unknown:
        raise ParamsError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; allowed: {', '.join(sorted(CONFIG_KEYS))}")
    values: dict[str, Any] = {}
    for k, v in config.items():
        if k in ("strengths", "grid_concentrations", "interpolation"):
            if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
                raise ParamsError(f"{where}: field '{k}': expected a list of numbers")
            v = tuple(float(x) for x in v)
        elif k == "grid_means" and (not isinstance(v, int) or isinstance(v, bool)):
            raise ParamsError(f"{where}: field 'grid_means': expected an integer, got {v!r}")
        elif k in ("no_transfer_prior", "histogram_smoothing") and v is None:
            pass
        elif k in ("sigmoid_a", "sigmoid_b", "conflict_bayes_factor", "no_transfer_prior", "pool_prior", "pair_prior",
                   "histogram_smoothing", "similarity_power", "shift_prior", "shift_max", "shift_step"):
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise ParamsError(f"{where}: field '{k}': expected a number, got {v!r}")
            v = float(v)
        elif k == "sigmoid" and not isinstance(v, bool):
            raise ParamsError(f"{where}: field 'sigmoid': expected true or false, got {v!r}")
        values[k] = v
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return TransferSettings(**values)
    except UsageError as exc:
        raise ParamsError(f"{where}: {exc}") from None


# --- sources ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A fitted source dataset: its histogram, fitted mixture and mean text embedding."""

    name: str
    table: CountTable
    mixture: Mixture
    embedding: np.ndarray = field(repr=False)
    model: str
    origin: str = ""

    @property
    def items(self) -> int:
        return self.table.items

    @classmethod
    def from_saved(cls, doc: Mapping[str, Any], origin: str) -> Source:
        """From a validated saved fit (params.load_fit); it must carry an embedding (fit --save --embed)."""
        emb = doc.get("embedding")
        if emb is None:
            raise EmbeddingError(f"{origin}: source has no text embedding; refit it with `fit DATA --save FILE --embed`")
        hist = doc["histogram"]
        top = max(int(k) for k in hist)
        counts = np.zeros((top + 1, top + 1), dtype=np.int64)
        for k, row in hist.items():
            counts[int(k), : int(k) + 1] = row
        if counts.sum() == 0:
            raise ParamsError(f"{origin}: field 'histogram': no items")
        return cls(
            name=str(doc["dataset"]),
            table=CountTable(counts),
            mixture=Mixture.from_dict(doc["model"]),
            embedding=np.asarray(emb["mean"], dtype=np.float64),
            model=str(emb["model"]),
            origin=origin,
        )


def check_embeddings(sources: Sequence[Source], model: str, dimension: int) -> None:
    """Every source must be embedded by the same model, at the same dimension, as the targets."""
    for s in sources:
        if s.model != model or len(s.embedding) != dimension:
            raise EmbeddingError(
                f"{s.origin or s.name}: embedded with model {s.model!r} (dimension {len(s.embedding)}), but the targets use "
                f"{model!r} (dimension {dimension}); refit the source with the same --embedding-model, or pass that model"
            )


# --- eq. 14: transfer weights -------------------------------------------------------------------------


def similarities(target: np.ndarray, sources: Sequence[np.ndarray], kind: str) -> np.ndarray:
    """CosSim(E0, Ei), or 1 / |E0 - Ei|_2 (Table 5 ablation)."""
    e0 = np.asarray(target, dtype=float)
    out = []
    for e in sources:
        e = np.asarray(e, dtype=float)
        if kind == "cosine":
            denom = float(np.linalg.norm(e0) * np.linalg.norm(e))
            out.append(float(e0 @ e) / denom if denom > 0 else 0.0)
        else:
            d = float(np.linalg.norm(e0 - e))
            out.append(1.0 / max(d, 1e-12))
    return np.array(out)


def self_similarity(source_similarities: np.ndarray, kind: str) -> float:
    """Index 0's similarity to itself: 1 for cosine; for 1/distance (infinite) the largest source value."""
    if kind == "cosine":
        return 1.0
    return float(source_similarities.max()) if len(source_similarities) else 1.0


def transfer_weights(sizes: np.ndarray, sims: np.ndarray, settings: TransferSettings) -> np.ndarray:
    """lambda_i = size(r_i) * sigmoid(a (sim_i - b))  (eq. 14); size = log r (or r); no sigmoid: size * sim."""
    sizes = np.asarray(sizes, dtype=float)
    size = np.log(np.maximum(sizes, 1.0)) if settings.size_weight == "log" else sizes
    if settings.sigmoid:
        g = expit(settings.sigmoid_a * (np.asarray(sims, dtype=float) - settings.sigmoid_b))
    else:
        g = np.maximum(np.asarray(sims, dtype=float), 0.0)
    return np.asarray(size * g)


# --- eq. 15: the paper's parameter averaging ----------------------------------------------------------


def average_mixtures(mixtures: Sequence[Mixture], lambdas: np.ndarray) -> Mixture:
    """w, alpha_j, beta_j averaged with weights lambda (eq. 15); components matched by their order (by mean)."""
    lam = np.asarray(lambdas, dtype=float)
    if lam.sum() <= 0:
        raise UsageError("every transfer weight is zero: nothing to average")
    c = mixtures[0].n_components
    if any(m.n_components != c for m in mixtures):
        raise UsageError("the paper's averaging needs mixtures with the same number of components")
    lam = lam / lam.sum()
    w = sum(li * np.asarray(m.weights) for li, m in zip(lam, mixtures))
    a = sum(li * np.asarray(m.alphas) for li, m in zip(lam, mixtures))
    b = sum(li * np.asarray(m.betas) for li, m in zip(lam, mixtures))
    w = np.asarray(w) / np.sum(w)
    return Mixture(tuple(map(float, w)), tuple(map(float, a)), tuple(map(float, b)))


# --- the default: Bayesian model averaging over sources -----------------------------------------------


def cell_counts(table: CountTable) -> np.ndarray:
    """The table's counts in `cell_posterior`'s cell order (each K with items, then S = 0..K)."""
    rows = np.nonzero(table.counts.sum(axis=1))[0]
    return np.concatenate([table.counts[int(k), : int(k) + 1] for k in rows]).astype(float)


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


def dirichlet_multinomial_log_ml(counts: np.ndarray, alpha: np.ndarray) -> float:
    """log P(the labeled items, in order | Dirichlet(alpha) over cells): the Dirichlet-multinomial evidence.

    log Gamma(A) - log Gamma(A + N) + sum_c [log Gamma(alpha_c + n_c) - log Gamma(alpha_c)].
    """
    return float(_dirichlet_multinomial_log_ml_many(counts, np.asarray(alpha, dtype=float)))


@dataclass(frozen=True)
class SourceWeight:
    """One source's place in a transfer."""

    name: str
    items: int
    similarity: float
    transfer_weight: float  # lambda_i (eq. 14)
    prior_weight: float  # lambda_i / sum_j lambda_j, index 0 included
    log_evidence: float | None  # default method: log marginal likelihood of the target's labels (best kappa)
    weight: float  # final weight: posterior weight (default) or normalised lambda (paper)
    shift: float | None = None  # default method: the labels' estimate of delta (posterior mean over its shifted centres)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "items": self.items,
            "similarity": self.similarity,
            "lambda": self.transfer_weight,
            "prior_weight": self.prior_weight,
            "log_evidence": self.log_evidence,
            "weight": self.weight,
            "shift": self.shift,
        }


@dataclass(frozen=True)
class TransferResult:
    """The transferred estimate, the no-transfer estimate of the same labels, and how sources were weighted."""

    settings: TransferSettings
    result: FitResult
    without: FitResult
    sources: tuple[SourceWeight, ...]
    target_weight: float  # final weight of index 0 (no transfer / the target's own fit)
    target_prior_weight: float
    conflict: bool
    conflict_reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_dict(),
            "target_weight": self.target_weight,
            "target_prior_weight": self.target_prior_weight,
            "prior_conflict": self.conflict,
            "prior_conflict_reason": self.conflict_reason,
        }


def _rows(
    ks: tuple[int, ...], centre: np.ndarray, low: np.ndarray, high: np.ndarray, mixture: Mixture, base: FitResult
) -> tuple[ErrorRow, ...]:
    mix_err = error_rates(mixture, ks)
    out = []
    for i, k in enumerate(ks):
        b = base.row(k)
        out.append(
            ErrorRow(
                k=k,
                estimate=float(centre[i]),
                low=float(min(low[i], centre[i])),
                high=float(max(high[i], centre[i])),
                mixture=mix_err[k],
                binomial=b.binomial,
                beta_binomial=b.beta_binomial,
                empirical=b.empirical,
            )
        )
    return tuple(out)


def _combined(mixtures: Sequence[Mixture], weights: Sequence[float], floor: float = 0.01, max_components: int = 3) -> Mixture:
    """sum_i weights_i * mixture_i summarised as one mixture of at most `max_components` Betas: components under
    `floor` dropped (the largest always kept), then the two with the closest means merged, keeping the mean and
    variance of p of the pair, until few enough remain. A description for tables and saved fits; the estimates
    never use it."""
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
        comps[i : i + 2] = [(w, *_beta_from_moments(mean, (w1 * (v1 + m1**2) + w2 * (v2 + m2**2)) / w - mean**2))]
    total = sum(c[0] for c in comps)
    return Mixture(tuple(c[0] / total for c in comps), tuple(c[1] for c in comps), tuple(c[2] for c in comps)).sorted()


def _beta_from_moments(mean: float, var: float) -> tuple[float, float]:
    """(alpha, beta) of the Beta with this mean and variance (clipped to a valid Beta)."""
    mean = min(max(mean, 1e-9), 1 - 1e-9)
    conc = max(mean * (1 - mean) / max(var, 1e-12) - 1, 1e-6)
    return mean * conc, (1 - mean) * conc


def _weighted_quantiles(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1 - level) / 2
    return np.quantile(draws, tail, axis=0), np.quantile(draws, 1 - tail, axis=0)


def transfer(
    target: CountTable,
    target_embedding: np.ndarray,
    sources: Sequence[Source],
    settings: TransferSettings = TransferSettings(),
    fit_settings: FitSettings = FitSettings(),
    rng: np.random.Generator | None = None,
    without: FitResult | None = None,
    source_fits: Mapping[str, Mixture] | None = None,
) -> TransferResult:
    """Transfer from `sources` to a target with a few labels (its histogram and mean text embedding).

    `without`: the target's no-transfer fit when already computed; `source_fits`: the paper method's EM fit
    of each source by name (computed here when missing; pass them to reuse across many targets).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    if not sources:
        raise UsageError("transfer needs at least one source")
    if target.items < 1:
        raise UsageError("the target has no labeled items")
    ks = tuple(fit_settings.ks)
    base_settings = replace(fit_settings, method="default")
    without = without if without is not None else analyse(target, base_settings, rng)
    sims = similarities(target_embedding, [s.embedding for s in sources], settings.similarity)
    sizes = np.array([target.items] + [s.items for s in sources], dtype=float)
    all_sims = np.concatenate(([self_similarity(sims, settings.similarity)], sims))
    lam = transfer_weights(sizes, all_sims, settings)
    prior = lam / lam.sum() if lam.sum() > 0 else np.full(len(lam), 1 / len(lam))
    counts = cell_counts(target)
    log_ml0 = no_transfer_log_evidence(target, settings.grid_means, settings.grid_concentrations)
    flat = fit_settings.flat
    kappas = np.asarray(settings.strengths, dtype=float)
    n_k = len(kappas)
    u = _flat_cells(target)

    # every source as a centre over the target's cells (its fitted pmf, or its histogram smoothed by it)
    centres = [_source_cells(target, s, ks, settings.histogram_smoothing) for s in sources]
    log_mls = np.array([[dirichlet_multinomial_log_ml(counts, k * q + flat * u) for k in kappas] for q, _ in centres])
    # prior predictive of the labels under the similarity-weighted sources, against the vague prior
    src_prior = prior[1:] / prior[1:].sum() if prior[1:].sum() > 0 else np.full(len(sources), 1 / len(sources))
    log_pred_sources = float(
        np.log(np.sum(src_prior[:, None] / n_k * np.exp(log_mls - log_ml0)) + 1e-300)
    )
    conflict = log_pred_sources < math.log(settings.conflict_bayes_factor)
    reason = (
        f"the target's labels are {math.exp(-log_pred_sources):.3g} times more likely without the sources' prior "
        f"than with it (similarity-weighted); the sources describe judges that behave differently here"
        if conflict
        else ""
    )

    if settings.method == "paper":
        fits = dict(source_fits or {})
        mixtures = [fit_paper_em(target).mixture]
        for s in sources:
            if s.name not in fits:
                fits[s.name] = fit_paper_em(s.table).mixture
            mixtures.append(fits[s.name])
        avg = average_mixtures(mixtures, lam)
        mix_err = error_rates(avg, ks)
        centre = np.array([mix_err[k] for k in ks])
        post = cell_posterior(target, avg, ks, fit_settings.strength, flat)
        low, high = post.interval_scaled(rng, fit_settings.confidence_level, target.items + flat, fit_settings.n_draws)
        fit = MixtureFit(avg, "paper-transfer", mixture_log_likelihood(target, avg), True, 0, 1, target.items)
        result = FitResult(base_settings, fit, without.binomial, without.beta_binomial, _rows(ks, centre, low, high, avg, without))
        weights = prior
        src = tuple(
            SourceWeight(s.name, s.items, float(sims[i]), float(lam[i + 1]), float(prior[i + 1]), None, float(weights[i + 1]))
            for i, s in enumerate(sources)
        )
        return TransferResult(settings, result, without, src, float(weights[0]), float(prior[0]), conflict, reason)

    # default: posterior weights over {no transfer} + {(centre c, kappa)}; centres: each source, points between
    # two sources (t q_i + (1 - t) q_j), and the similarity-weighted pool of all sources
    if settings.no_transfer_prior is not None:
        prior = np.concatenate(([settings.no_transfer_prior], (1 - settings.no_transfer_prior) * src_prior))
    share = src_prior ** settings.similarity_power
    share = share / share.sum() if share.sum() > 0 else np.full(len(sources), 1 / len(sources))
    n = len(sources)
    pair_mass = settings.pair_prior if n > 1 and settings.interpolation else 0.0
    pool_mass = settings.pool_prior if n > 1 else 0.0
    src_mass = prior[1:].sum()
    # membership[c, i]: how much of centre c is source i (for the sources' final weights)
    cand_prior = list((1 - pair_mass - pool_mass) * share)
    qs = [q for q, _ in centres]
    errs = [e for _, e in centres]
    membership = list(np.eye(n))
    if pair_mass:
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        pw = np.array([share[i] * share[j] for i, j in pairs])
        pw = pw / pw.sum() if pw.sum() > 0 else np.full(len(pairs), 1 / len(pairs))
        for (i, j), w in zip(pairs, pw):
            for t in settings.interpolation:
                cand_prior.append(pair_mass * w / len(settings.interpolation))
                qs.append(t * qs[i] + (1 - t) * qs[j])
                errs.append(t * errs[i] + (1 - t) * errs[j])
                m = np.zeros(n)
                m[i], m[j] = t, 1 - t
                membership.append(m)
    if pool_mass:
        cand_prior.append(pool_mass)
        qs.append(np.sum(share[:, None] * np.array(qs[:n]), axis=0))
        errs.append(np.sum(share[:, None, None] * np.array(errs[:n]), axis=0))
        membership.append(share.copy())
    # every source's shape at another location: its judges' log-odds shifted by delta (uniform over the grid)
    n_unshifted = len(qs)
    deltas = shift_grid(settings) if settings.shift_prior > 0 else ()
    cand_prior = [(1 - settings.shift_prior) * c for c in cand_prior] if deltas else cand_prior
    for i, s in enumerate(sources):
        if not deltas:
            break
        q_i, e_i = _shifted_source_cells(target, s.mixture, deltas, ks)
        cand_prior.extend([settings.shift_prior * share[i] / len(deltas)] * len(deltas))
        qs.extend(q_i)
        errs.extend(e_i)
        membership.extend([np.eye(n)[i]] * len(deltas))
    cp = np.asarray(cand_prior) * src_mass
    alphas = kappas[None, :, None] * np.array(qs)[:, None, :] + flat * u[None, None, :]  # centre x kappa x cell
    lml = _dirichlet_multinomial_log_ml_many(counts, alphas)
    log_post = np.concatenate(([math.log(prior[0] + 1e-300) + log_ml0], (np.log(cp + 1e-300)[:, None] - math.log(n_k) + lml).ravel()))
    pw = np.exp(log_post - log_post.max())
    pw /= pw.sum()
    post_conc = (alphas + counts[None, None, :]).reshape(-1, len(counts))
    cand_errs = [e for e in errs for _ in range(n_k)]
    means = [np.array([r.estimate for r in without.rows])]
    means.extend((c / c.sum()) @ e for c, e in zip(post_conc, cand_errs))
    centre = np.sum(pw[:, None] * np.vstack(means), axis=0)
    # interval: pooled posterior draws, each candidate drawn in proportion to its weight
    own = cell_posterior(target, without.fit.mixture, ks, fit_settings.strength, flat)
    alloc = rng.multinomial(fit_settings.n_draws, pw)
    draws = []
    if alloc[0]:
        m0 = own.concentration / own.concentration.sum()
        g = rng.gamma(m0 * (target.items + flat), size=(alloc[0], len(m0)))
        draws.append((g / g.sum(axis=1, keepdims=True)) @ own.errors)
    for c in np.nonzero(alloc[1:])[0]:
        g = rng.gamma(post_conc[c], size=(int(alloc[c + 1]), len(counts)))
        draws.append((g / g.sum(axis=1, keepdims=True)) @ cand_errs[c])
    low, high = _weighted_quantiles(np.vstack(draws), fit_settings.confidence_level)
    cand_w = pw[1:].reshape(len(qs), n_k).sum(axis=1)
    src_w = cand_w @ np.array(membership)  # a source's final weight: its share of every centre's weight
    # the labels' estimate of each source's shift, and the weight of its shifted and unshifted centres
    shifts: list[float | None] = [None] * n
    shifted_w = np.zeros(n)
    if deltas:
        by_source = cand_w[n_unshifted:].reshape(n, len(deltas))
        shifted_w = by_source.sum(axis=1)
        shifts = [float(row @ np.asarray(deltas) / row.sum()) if row.sum() > 0 else 0.0 for row in by_source]
    unshifted_w = cand_w[:n_unshifted] @ np.array(membership[:n_unshifted])
    summary = [without.fit.mixture] + [s.mixture for s in sources]
    summary_w = [pw[0], *unshifted_w]
    if deltas:
        summary += [shifted_mixture(s.mixture, float(d or 0.0)) for s, d in zip(sources, shifts)]
        summary_w += list(shifted_w)
    mixture = _combined(summary, summary_w)
    fit = MixtureFit(mixture, "transfer", mixture_log_likelihood(target, mixture), True, 0, 1, target.items)
    result = FitResult(base_settings, fit, without.binomial, without.beta_binomial, _rows(ks, centre, low, high, mixture, without))
    src = tuple(
        SourceWeight(
            s.name, s.items, float(sims[i]), float(lam[i + 1]), float(prior[i + 1]), float(log_mls[i].max()), float(src_w[i]),
            shifts[i],
        )
        for i, s in enumerate(sources)
    )
    return TransferResult(settings, result, without, src, float(pw[0]), float(prior[0]), conflict, reason)


def _dirichlet_multinomial_log_ml_many(counts: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """`dirichlet_multinomial_log_ml` for every Dirichlet parameter along the last axis of `alphas`."""
    n = np.asarray(counts, dtype=float)
    total = alphas.sum(axis=-1)
    out: np.ndarray = gammaln(total) - gammaln(total + n.sum()) + np.sum(gammaln(alphas + n) - gammaln(alphas), axis=-1)
    return out


def _shifted_source_cells(
    table: CountTable, mixture: Mixture, deltas: tuple[float, ...], ks: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """`shifted_cells` over the target's cells (each K weighted by the target's share of items with K judges):
    q[d, cell] and errors[d, cell, i], in `cell_posterior`'s cell order."""
    rows = np.nonzero(table.counts.sum(axis=1))[0]
    share = table.counts.sum(axis=1)[rows] / table.items
    parts = [shifted_cells(mixture, deltas, int(k), ks) for k in rows]
    q = np.concatenate([sh * p[0] for sh, p in zip(share, parts)], axis=1)
    errors = np.concatenate([p[1] for p in parts], axis=1)
    return q, errors


# --- a source's shape at another location: its judges' log-odds shifted by delta ------------------------

# bins of u = logit(p) for the shifted densities: 600 of width 0.04 on [-12, 12], and the two tails (p = 0, 1)
_EDGES = np.concatenate(([-np.inf], np.linspace(-12.0, 12.0, 601), [np.inf]))
_P = np.concatenate(([0.0], expit(0.5 * (_EDGES[1:-2] + _EDGES[2:-1])), [1.0]))


def shift_grid(settings: TransferSettings) -> tuple[float, ...]:
    """The shifts delta: -shift_max..shift_max in steps of shift_step (0 included)."""
    n = int(math.floor(settings.shift_max / settings.shift_step + 1e-9))
    return tuple(float(i * settings.shift_step) for i in range(-n, n + 1))


def _component_masses(alpha: float, beta: float, shifts: np.ndarray) -> np.ndarray:
    """masses[d, bin] = P(logit(p) + shifts[d] in bin) for p ~ Beta(alpha, beta): exact bin masses (the
    regularised incomplete beta function at the shifted edges)."""
    cdf = betainc(alpha, beta, expit(_EDGES[None, :] - np.asarray(shifts, dtype=float)[:, None]))
    out: np.ndarray = np.maximum(np.diff(cdf, axis=1), 0.0)
    return out


@lru_cache(maxsize=64)
def shifted_cells(mixture: Mixture, shifts: tuple[float, ...], big_k: int, ks: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The source mixture with every judge's log-odds of being correct moved by delta, for each delta in shifts:

    q[d, s]: P(S = s of big_k correct), and errors[d, s, i]: majority error at ks[i] of an item with s of big_k
    correct (hypergeometric thinning for k <= big_k; for k > big_k the k - big_k missing judges drawn from the
    item's posterior under the shifted density). The density of u = logit(p) is discretised into fine bins with
    their exact masses; delta = 0 is the source's mixture itself (to the bins' precision; tested).
    """
    d = np.asarray(shifts, dtype=float)
    masses = sum(w * _component_masses(a, b, d) for w, a, b in zip(mixture.weights, mixture.alphas, mixture.betas))
    masses = np.asarray(masses) / np.asarray(masses).sum(axis=1, keepdims=True)
    lik = binomial_pmf(big_k, _P)  # bin x s
    q = masses @ lik
    errors = np.empty((len(d), big_k + 1, len(ks)))
    post = None
    for i, k in enumerate(ks):
        if k <= big_k:
            errors[:, :, i] = np.asarray(item_error_table(big_k, k))[None, :]
            continue
        if post is None:  # only for k > big_k: delta x bin x s, the unnormalised posterior of the bin given s
            post = masses[:, :, None] * lik[None, :, :]
            total = post.sum(axis=1)  # delta x s  (= q)
        m = k - big_k
        e = majority_error_weights(k)
        extra = binomial_pmf(m, _P)  # bin x x: the missing judges
        per_bin = extra @ e[np.arange(m + 1)[:, None] + np.arange(big_k + 1)[None, :]]  # bin x s: error of s + x correct
        num = np.einsum("dbs,bs->ds", post, per_bin)
        errors[:, :, i] = np.where(total > 0, num / np.maximum(total, 1e-300), per_bin.mean(axis=0)[None, :])
    q.setflags(write=False)
    errors.setflags(write=False)
    return q, errors


def shifted_mixture(mixture: Mixture, shift: float) -> Mixture:
    """A Beta mixture that summarises the shifted density: each component's shifted density moment-matched
    by a Beta (for the transferred fit's mixture column and saved model; the estimate never uses it)."""
    if shift == 0:
        return mixture
    alphas, betas = [], []
    for a, b in zip(mixture.alphas, mixture.betas):
        w = _component_masses(a, b, np.array([shift]))[0]
        w = w / w.sum()
        mean = float(w @ _P)
        a_new, b_new = _beta_from_moments(mean, float(w @ _P**2) - mean**2)
        alphas.append(a_new)
        betas.append(b_new)
    return Mixture(mixture.weights, tuple(alphas), tuple(betas)).sorted()


def _flat_cells(table: CountTable) -> np.ndarray:
    """`cell_posterior`'s flat pseudo-item per cell: uniform over S = 0..K, weighted by the share of items with K judges."""
    rows = np.nonzero(table.counts.sum(axis=1))[0]
    share = table.counts.sum(axis=1)[rows] / table.items
    return np.concatenate([np.full(int(k) + 1, sh / (int(k) + 1)) for k, sh in zip(rows, share)])


def _source_cells(
    table: CountTable, source: Source, ks: tuple[int, ...], smoothing: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """A source as a centre over the target's cells: q (sums to 1; each K weighted by the target's share of
    items with K judges) and each cell's majority error at each k (the source's mixture predicts missing judges).

    smoothing None: q at K is the source's fitted mixture pmf. A number m: the source's own histogram at K
    smoothed by m pseudo-items of that pmf, (h + m pmf) / (n_K + m); the pmf alone where the source has no
    items with K judges.
    """
    post = cell_posterior(table, source.mixture, ks, 0.0, 0.0)
    rows = np.nonzero(table.counts.sum(axis=1))[0]
    share = table.counts.sum(axis=1)[rows] / table.items
    parts = []
    for row, sh in zip(rows, share):
        k = int(row)
        q = np.asarray(source.mixture.pmf(k), dtype=float)
        hist = source.table.counts
        if smoothing is not None and k < hist.shape[0] and hist[k].sum() > 0:
            h = hist[k, : k + 1].astype(float)
            q = (h + smoothing * q) / (h.sum() + smoothing)
        parts.append(sh * q)
    return np.concatenate(parts), post.errors


# --- many targets, documents and views ------------------------------------------------------------------


def transfer_many(
    targets: Sequence[tuple[CountTable, np.ndarray]],
    sources: Sequence[Source],
    settings: TransferSettings = TransferSettings(),
    fit_settings: FitSettings = FitSettings(),
    seed: int = 0,
) -> list[TransferResult]:
    """`transfer` for each (table, mean embedding); source fits are shared; target i draws with seed [seed, i]."""
    from .blas import one_thread

    with one_thread():
        fits = {s.name: fit_paper_em(s.table).mixture for s in sources} if settings.method == "paper" else None
        out = []
        for i, (t, e) in enumerate(targets):
            # the no-transfer fit with `fit --seed seed`'s generator: identical to what `fit` prints
            without = analyse(t, replace(fit_settings, method="default"), np.random.default_rng(seed))
            out.append(transfer(t, e, sources, settings, fit_settings, np.random.default_rng([seed, i]), without, fits))
        return out
