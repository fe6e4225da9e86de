"""The one table of estimators: every place that lists estimators (fit's --method and its error rows, JSON keys,
CSV columns and table headings; evaluate's --methods, its tables and figures) reads `REGISTRY`.

An estimator gives the majority-vote error at each k from a `Fitted` sample (the labeled histogram, the ks, and
the mixtures `fit.analyse` fitted). Adding one is one entry here (and its test): `fit` then shows its column in
JSON, CSV and (with a `heading`) the table, and `evaluate --methods NAME` benchmarks it.

Light on purpose (no numpy or scipy at import): the CLI builds its --method choices from `METHODS` before any
heavy import; the error functions import what they compute with when they are called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import ParameterError

if TYPE_CHECKING:
    from .counts import CountTable
    from .distributions import JudgmentModel
    from .mixtures import MixtureFit

Errors = Mapping[int, "float | None"]  # the majority-vote error at each k; None where the estimator has none


@dataclass(frozen=True)
class Fitted:
    """What an estimator may use: the labeled histogram, the ks, and the mixtures fit.analyse fitted on it (the
    chosen fit's mixture and the single Beta-Binomial; None where nothing was fitted)."""

    table: CountTable
    ks: tuple[int, ...]
    mixture: JudgmentModel | None = None
    single: JudgmentModel | None = None

    def errors_of(self, model: JudgmentModel | None) -> Errors:
        """A model's majority-vote error at each k (its pmf thinned to each k: distributions.error_rates)."""
        from .distributions import error_rates

        if model is None:
            raise ValueError("this estimator needs a fitted mixture: compute it through fit.analyse")
        return error_rates(model, self.ks)


@dataclass(frozen=True)
class Style:
    """How the paper's figures draw an estimator: a matplotlib colour, marker and line style."""

    colour: str
    marker: str
    dash: str | tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class Estimator:
    """One estimator and everything that shows it.

    `column`: its key in fit's error rows (JSON) and CSV; None when it has none (the paper's EM: in `fit` it is a
    --method, which changes the estimate). `heading`: its column in fit's table and error chart (None: JSON and
    CSV only). `method`: the description `fit --method NAME` prints (None: not a --method); as a method, `model`
    fits the mixture its estimate rests on (None: the MAP mixture, fit.fit_models) and `posterior` says whether the
    estimate is the cell posterior's mean (the default) or the model's plug-in error. `errors`: its error
    at each k from a fitted sample (None: computed elsewhere: the default estimate by fit.analyse, the transfer
    estimators by evaluate's leave-one-out). `needs_fit`: it reads the mixtures of fit.analyse. `plain`: evaluate
    offers it outside transfer mode; `curve`: evaluate's error figure draws it."""

    name: str
    label: str
    style: Style
    column: str | None = None
    heading: str | None = None
    method: str | None = None
    model: Callable[[CountTable], MixtureFit] | None = None
    posterior: bool = False
    errors: Callable[[Fitted], Errors] | None = None
    needs_fit: bool = False
    plain: bool = True
    curve: bool = True


def _plugin(f: Fitted) -> Errors:
    return f.errors_of(f.mixture)


def _paper_em(table: CountTable) -> MixtureFit:
    from .mixtures import fit_paper_em

    return fit_paper_em(table)


def _paper(f: Fitted) -> Errors:
    return f.errors_of(_paper_em(f.table).mixture)  # the same numbers as analyse(method="paper").estimate


def _binomial(f: Fitted) -> Errors:
    from .mixtures import fit_binomial

    return f.errors_of(fit_binomial(f.table))


def _beta_binomial(f: Fitted) -> Errors:
    return f.errors_of(f.single)


def _empirical(f: Fitted) -> Errors:
    from .mixtures import empirical_errors

    return empirical_errors(f.table, f.ks)


# The order is the order everywhere: fit's JSON row keys, evaluate's --methods all, tables and figures; fit's CSV
# lists the columns with a heading (the table's) first, then the others.
REGISTRY: dict[str, Estimator] = {e.name: e for e in (
    Estimator("default", "default", Style("#1f77b4", "o", "-"), column="estimate", needs_fit=True, posterior=True,
              method="Dirichlet posterior over correct counts centred on the MAP Beta-Binomial mixture"),
    Estimator("plugin", "MAP mixture", Style("#17becf", "v", "-"), column="mixture", errors=_plugin, needs_fit=True,
              curve=False, method="MAP Beta-Binomial mixture, plug-in"),
    Estimator("paper", "paper EM", Style("#ff7f0e", "s", "--"), errors=_paper, model=_paper_em,
              method="the paper's EM as printed (a mixture of two near-Binomials), plug-in"),
    Estimator("binomial", "Binomial", Style("#d62728", "^", ":"), column="binomial", heading="binomial", errors=_binomial),
    Estimator("beta_binomial", "single BB", Style("#9467bd", "D", "-."), column="beta_binomial", heading="beta-binomial",
              errors=_beta_binomial, needs_fit=True, curve=False),
    Estimator("empirical", "empirical", Style("#2ca02c", "x", (0, (5, 1, 1, 1))), column="empirical", heading="empirical",
              errors=_empirical),
    Estimator("transfer", "transfer", Style("#8c564b", "P", "-"), plain=False),
    Estimator("paper_transfer", "paper transfer", Style("#e377c2", "*", "--"), plain=False),
)}


def methods() -> tuple[str, ...]:
    """fit's --method choices."""
    return tuple(e.name for e in REGISTRY.values() if e.method is not None)


def plain_estimators() -> tuple[str, ...]:
    """evaluate's estimators outside transfer mode (--methods all)."""
    return tuple(e.name for e in REGISTRY.values() if e.plain)


def row_columns() -> tuple[Estimator, ...]:
    """The estimators with a column of their own in fit's error rows, besides the estimate (JSON order)."""
    return tuple(e for e in REGISTRY.values() if e.column is not None and e.errors is not None)


def csv_columns() -> tuple[str, ...]:
    """fit's CSV row columns after dataset and k: the estimate and its interval, the table's columns, the rest."""
    cols = row_columns()
    return ("estimate", "low", "high", *(str(e.column) for e in cols if e.heading), *(str(e.column) for e in cols if not e.heading))


def fit_method(name: str) -> Estimator:
    """The estimator `fit --method NAME` names; a ParameterError for a name that is not a method."""
    e = REGISTRY.get(name)
    if e is None or e.method is None:
        raise ParameterError("method", f"must be one of {', '.join(methods())}; got {name!r}")
    return e


def method_description(name: str) -> str:
    """What `fit --method NAME` estimates."""
    return str(fit_method(name).method)


METHODS = methods()  # as the registry stands at import: the CLI's --method enum
ESTIMATORS = plain_estimators()
