"""The error table: every estimator's majority-vote error for k judges (`analyse`), the default estimate and its
interval from `posterior.cell_posterior` (see docs/METHOD.md of this repository), and the fields of the fit document
that the fit decides (`FitResult.fields`).

The leaf fitters (the MAP mixture, the paper's EM, the Binomial, the empirical error, the error margin) are in
mixtures.py and the fit's settings in settings.py: import them from there (this module does not re-export them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from msgspec import UNSET

from .counts import CountTable, ItemClusters
from .distributions import Binomial
from .errors import UsageError
from .estimators import Fitted, fit_method, method_description, row_columns
from .fit_document import Baselines, BinomialModel, Component, FitRecord, Interval, Model, Settings, row_type
from .intervals import enclose_value
from .mixtures import MixtureFit, default_starts, fit_binomial, fit_candidates, fit_mixture
from .posterior import CellPosterior, cell_posterior, mixture_cells
from .settings import INTERVAL_METHOD, TIE_RULE, FitSettings

if TYPE_CHECKING:
    from .votes import VoteEstimate

__all__ = ["ErrorRow", "FitResult", "analyse", "cluster_interval", "fit_models", "model_document", "settings_document"]


def model_document(fit: MixtureFit) -> Model:
    """The fitted mixture and how the fit went, as the fit document and a saved fit carry it."""
    m = fit.mixture
    return Model(family="beta_binomial_mixture",
                 components=[Component(weight=w, alpha=a, beta=b, mean=a / (a + b)) for w, a, b in zip(m.weights, m.alphas, m.betas)],
                 method=fit.method, log_likelihood=fit.log_likelihood, log_posterior=fit.log_posterior, bic=fit.bic,
                 converged=fit.converged, n_iter=fit.n_iter, n_starts=fit.n_starts)


def settings_document(s: FitSettings) -> Settings:
    """The fit's settings as the fit document and a saved fit carry them."""
    return Settings(method=s.method, components=s.components, ks=list(s.ks), confidence_level=s.confidence_level,
                    prior={"log_param_sd": s.prior.log_param_sd, "weight_concentration": s.prior.weight_concentration},
                    strength=s.strength, flat=s.flat, n_draws=s.n_draws)


# --- one call: every estimator's error rates for k = ks ---------------------------------------------

@dataclass(frozen=True)
class ErrorRow:
    """Majority-vote error at k judges: the estimate and its interval, and every other estimator's error
    (`columns`: estimators.row_columns(), by column name, in the registry's order; fractions in [0, 1])."""

    k: int
    estimate: float
    low: float
    high: float
    columns: Mapping[str, float | None]
    # with unlabeled items (votes.analyse_with_votes): the labels-only estimate [low, high] that `estimate`
    # replaced, and whether some item, labeled or not, has fewer than k judges
    labels_only: tuple[float, float, float] | None = None
    extrapolated_all: bool | None = None
    beyond_data: bool = False  # k above the most judges any item has: widened (extrapolation.py)

    def column(self, name: str) -> float | None:
        return self.columns[name]

    def document(self) -> Any:
        """The row as the documents carry it (fit_document.row_type(): the fit document's error_rates, a replay run's,
        judges --ensemble's fit)."""
        # some item has fewer than k judges: the mixture extrapolates its missing judges, and the interval
        # carries the items' sampling uncertainty but not the mixture's own
        extrapolated = self.columns.get("empirical", 0.0) is None if self.extrapolated_all is None else self.extrapolated_all
        own, own_low, own_high = (UNSET, UNSET, UNSET) if self.labels_only is None else self.labels_only
        # the columns are the registry's estimators (estimators.row_columns), named at run time as row_type() is
        return row_type()(k=self.k, estimate=self.estimate, low=self.low, high=self.high, **self.columns,
                          extrapolated=extrapolated, beyond_data=self.beyond_data, labels_only=own,
                          labels_only_low=own_low, labels_only_high=own_high)


@dataclass(frozen=True)
class FitResult:
    """The fitted model, the baselines and the error table."""

    settings: FitSettings
    fit: MixtureFit
    binomial: Binomial
    beta_binomial: MixtureFit
    rows: tuple[ErrorRow, ...]
    unlabeled: VoteEstimate | None = None  # set by votes.analyse_with_votes when the data has unlabeled items

    def row(self, k: int) -> ErrorRow:
        for r in self.rows:
            if r.k == k:
                return r
        raise UsageError(f"k = {k} is not among the computed ks {list(self.settings.ks)}")

    def record(self) -> FitRecord:
        """The fit document's keys that the fit decides (fit_document.fit_document adds where the data came from)."""
        u = self.unlabeled
        return FitRecord(
            method=self.settings.method,
            method_description=method_description(self.settings.method),
            settings=settings_document(self.settings),
            model=model_document(self.fit),
            baselines=Baselines(binomial=BinomialModel(family="binomial", p=self.binomial.p),
                                beta_binomial=model_document(self.beta_binomial)),
            interval=Interval(confidence_level=self.settings.confidence_level, method=INTERVAL_METHOD),
            tie_rule=TIE_RULE,
            error_rates=[r.document() for r in self.rows],
            unlabeled_items=UNSET if u is None else u.unlabeled_items,
            unlabeled=UNSET if u is None else u.fit_record(),
        )


def fit_models(table: CountTable, settings: FitSettings, rng: np.random.Generator) -> tuple[MixtureFit, MixtureFit]:
    """(the mixture that the chosen method rests on, the single Beta-Binomial baseline)."""
    own = fit_method(settings.method).model  # a method's own model (the paper's EM); None: the MAP mixture
    if settings.components == "auto" and own is None:
        fits = fit_candidates(table, 3, settings.prior, rng)
        return min(fits.values(), key=lambda f: f.bic), fits[1]
    bb = fit_mixture(table, 1, settings.prior, n_init=default_starts(1), rng=rng)
    if own is not None:
        return own(table), bb
    c = int(settings.components)
    return (bb if c == 1 else fit_mixture(table, c, settings.prior, n_init=default_starts(c), rng=rng)), bb


def analyse(
    table: CountTable,
    settings: FitSettings = FitSettings(),
    rng: np.random.Generator | None = None,
    fit: MixtureFit | None = None,
    clusters: ItemClusters | None = None,
) -> FitResult:
    """Fit (unless `fit` is given), then every estimator's majority error for each k in settings.ks. `clusters`
    (items that are not independent: an inspect-ai log's epochs) shrink the interval's items to their effective
    number (`cluster_interval`); the estimate is unchanged. Rows beyond the most judges of an item are marked and
    their intervals widened (extrapolation.py: the row at that many judges is computed as their reference, and left
    out when not asked for; the draws are the same either way)."""
    from dataclasses import replace

    from .extrapolation import beyond_rows, reference_ks

    most = table.max_judges
    run = reference_ks(settings.ks, most)
    result = _analyse(table, settings if run == tuple(settings.ks) else replace(settings, ks=run), rng, fit, clusters)
    return replace(result, settings=settings, rows=beyond_rows(result.rows, most, settings.ks))


def _analyse(table: CountTable, settings: FitSettings, rng: np.random.Generator | None, fit: MixtureFit | None = None,
             clusters: ItemClusters | None = None) -> FitResult:
    rng = rng if rng is not None else np.random.default_rng(0)
    method = fit_method(settings.method)  # an unknown method is refused before anything is fitted
    ks = tuple(settings.ks)
    if fit is None:
        fit, bb = fit_models(table, settings, rng)
    else:
        bb = fit if (fit.components == 1 and fit.method == "map") else fit_mixture(table, 1, settings.prior, n_init=default_starts(1), rng=rng)
    binomial = fit_binomial(table)
    # every estimator's column (estimators.REGISTRY), each model's pmf at max(ks) thinned to each k by one routine
    fitted = Fitted(table, ks, fit.mixture, bb.mixture)
    columns = {e.column: e.errors(fitted) for e in row_columns() if e.column and e.errors}
    post = cell_posterior(table, fit.mixture, ks, settings.strength, settings.flat)
    if method.posterior:
        centre = post.mean()
        low, high = cluster_interval(post, rng, settings, table.items, clusters)
    else:  # a plug-in estimate: the mixture's own cells, and an interval around them (it belongs to the estimate)
        cells = mixture_cells(table, fit.mixture)
        centre = cells @ post.errors
        low, high = cluster_interval(post, rng, settings, table.items, clusters, cells)
    inside = [enclose_value(centre[i], low[i], high[i]) for i in range(len(ks))]
    rows = tuple(
        ErrorRow(k=k, estimate=float(centre[i]), low=float(inside[i][0]), high=float(inside[i][1]),
                 columns={name: errors[k] for name, errors in columns.items()})
        for i, k in enumerate(ks)
    )
    return FitResult(settings=settings, fit=fit, binomial=binomial, beta_binomial=bb, rows=rows)


def cluster_interval(
    post: CellPosterior, rng: np.random.Generator, settings: FitSettings, items: int, clusters: ItemClusters | None,
    mean: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The interval of each k's error: the posterior's Dirichlet with `items` in total (plus the flat prior), or, with
    clusters, with the items' effective number at each k, items / deff_k, where deff_k is the design effect of the
    mean of the items' majority errors at k (counts.ItemClusters.design_effects; Kish's effective sample size:
    a Dirichlet's spread of a mean scales as 1 / its total). docs/FORMATS.md ("Epochs") and
    benchmarks/epochs_coverage.py measure its coverage."""
    level, flat, draws = settings.confidence_level, settings.flat, settings.n_draws
    plain = post.interval_scaled(rng, level, items + flat, draws, mean)
    if clusters is None:
        return plain
    # common random numbers: `rng` advanced as without clusters, the clustered draws from a child generator, so that
    # whatever draws from `rng` next (judges' model) is the same as for independent items: clusters move intervals only
    rng = rng.spawn(1)[0]
    cell = {(int(k), int(s)): i for i, (k, s) in enumerate(zip(post.judges, post.correct))}
    per_item = post.errors[[cell[(int(k), int(s))] for k, s in zip(clusters.judges, clusters.correct)]]
    effective = items / clusters.design_effects(per_item)
    low, high = np.empty(len(post.ks)), np.empty(len(post.ks))
    for e in np.unique(effective):
        lo, hi = post.interval_scaled(rng, level, float(e) + flat, draws, mean)
        at = effective == e
        low[at], high[at] = lo[at], hi[at]
    return low, high
