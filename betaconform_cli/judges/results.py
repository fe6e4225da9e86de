"""Settings and result dataclasses of `judges` (judges/document.py types its JSON document; docs/JUDGES.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from msgspec import Struct

from ..document_types import Count
from ..errors import UsageError
from ..fit import FitResult
from .model import ClassPosterior, ModelSettings

EXACT_MAX_JUDGES = 12
INTERVAL_WIDENING = 1.15  # chosen on JudgeBench, reported on LLMBar (benchmarks/judges.py --calibrate)
RANKINGS = ("maxent", "latent")
INTERVAL_METHOD = ("equal-tailed latent-class posterior (predictive, for the unlabeled part of a known set), widened by "
                   "interval_widening")
SELECTION_NOTE = (
    "chosen by the labels' own error blended with a ranking model (pairwise maximum entropy; latent classes with "
    "more than 12 judges) worth pseudo_items items; estimate and interval: the latent-class posterior of the chosen "
    "ensemble's error, not the minimised score; the interval widened by interval_widening (calibrated held out)"
)


@dataclass(frozen=True)
class JudgesSettings:
    """Everything that decides the numbers of `analyse_judges` (the seed aside)."""

    pseudo_items: float = 20.0
    interval_widening: float = INTERVAL_WIDENING  # the posterior interval stretched about the estimate (>= 1)
    ranking: str = "maxent"  # the model that ranks candidates: "maxent" (pairwise, J <= 14) or "latent"
    maxent_penalty: tuple[float, float] = (0.1, 0.3)  # (lam_h, lam_pair) of maxent.fit_maxent
    model: ModelSettings = ModelSettings()
    exact_max_judges: int = EXACT_MAX_JUDGES
    beam_width: int = 50
    top_pairs: int = 5

    def __post_init__(self) -> None:
        if self.ranking not in RANKINGS:
            raise UsageError(f"ranking must be one of {', '.join(RANKINGS)}; got {self.ranking!r}")
        if not (self.pseudo_items >= 0 and math.isfinite(self.pseudo_items)):
            raise UsageError(f"pseudo_items must be a finite number >= 0; got {self.pseudo_items}")
        if not (1.0 <= self.interval_widening <= 10.0):
            raise UsageError(f"interval_widening must be between 1 and 10; got {self.interval_widening}")
        if not 1 <= self.model.classes <= 20:
            raise UsageError(f"classes must be between 1 and 20; got {self.model.classes}")
        if self.model.burn_in >= self.model.sweeps or self.model.thin < 1 or self.model.burn_in < 0:
            raise UsageError("sampler: need 0 <= burn_in < sweeps and thin >= 1")
        if not 1 <= self.exact_max_judges <= 16:
            raise UsageError(f"exact_max_judges must be between 1 and 16; got {self.exact_max_judges}")
        if self.beam_width < 1:
            raise UsageError(f"beam_width must be at least 1; got {self.beam_width}")


# the unlabeled items' record is the judges document's own type (judges/document.py publishes it: judges.json)
class JudgesUnlabeled(Struct, kw_only=True, frozen=True):
    """Whether and how the items without gold were used (every.Every.record)."""

    method: Literal["every_item", "labels_only"]
    used: bool
    reason: str
    labeled_items: Count
    unlabeled_items: Count
    model: dict[str, Any] | None
    choice: str  # which rule picked each size's ensemble (every.Every.choice)
    report_method: Literal["every_item", "labels_only"]  # the ensembles' errors on every item read, or the labels'
    report: str  # how the ensembles' errors were estimated (every.Every.report)


# --- result rows ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeRow:
    """One judge: accuracy on the items it judged (Wilson interval), and how far it sits from the others."""

    name: str
    accuracy: float
    low: float
    high: float
    items: int
    deviation: float  # accuracy minus the mean accuracy of all judges
    mean_excess: float | None  # mean over its pairs of (both wrong - expected if independent)


@dataclass(frozen=True)
class PairRow:
    """Two judges: how often both erred on the items both judged, against what independence predicts."""

    a: str
    b: str
    items: int
    both_wrong: float | None
    expected_if_independent: float | None
    p_value: float | None  # one-sided Fisher exact: more shared mistakes than independence

    @property
    def excess(self) -> float | None:
        if self.both_wrong is None or self.expected_if_independent is None:
            return None
        return self.both_wrong - self.expected_if_independent

    @property
    def note(self) -> str | None:
        return None if self.items else "no item judged by both"


@dataclass(frozen=True)
class Exchangeability:
    """Cochran's Q test of equal accuracy on the items every judge judged."""

    statistic: float | None
    df: int
    p_value: float | None
    items: int
    note: str


@dataclass(frozen=True)
class EnsembleRow:
    """The ensemble chosen for size k, its estimated majority error and interval, and the baselines."""

    k: int
    members: tuple[str, ...]
    estimate: float
    low: float
    high: float
    empirical: float | None  # the labels' own majority error of these members
    items: int  # labeled items on which all members gave a verdict
    random_k: float | None  # fit's estimate for k judges drawn at random
    all_judges: float | None  # fit's estimate for the vote of all judges
    search: str  # "exact" or "beam"


@dataclass(frozen=True)
class NamedEnsemble:
    """One ensemble named by the user: our estimate, and fit's table for its members treated as exchangeable."""

    members: tuple[str, ...]
    estimate: float
    low: float
    high: float
    empirical: float | None
    items: int
    fit: Any  # fit's error row at k = len(members) (fit.ErrorRow.document: fit_document.row_type())


@dataclass(frozen=True)
class CostChoice:
    """The cheapest ensemble whose interval's upper end is at most max_error (met=False: none is)."""

    max_error: float
    met: bool
    members: tuple[str, ...]
    cost: float
    estimate: float
    low: float
    high: float
    candidates: int
    search: str
    prices: dict[str, float]


@dataclass(frozen=True)
class JudgesScope:
    """The labeled items used, those dropped (a judge's verdict missing), and the set they were drawn from (None:
    the error is for new items like them)."""

    items: int
    dropped_items: int = 0
    population: int | None = None


@dataclass(frozen=True)
class Picks:
    """The ensembles asked for by name: --ensemble's error table, and --cost's cheapest (None when not asked)."""

    named: NamedEnsemble | None = None
    cost: CostChoice | None = None


@dataclass(frozen=True)
class JudgesModels:
    """The fitted models behind the tables: the latent-class posterior, and the judge-blind baseline fit."""

    posterior: ClassPosterior = field(repr=False)
    baseline: FitResult = field(repr=False)


@dataclass(frozen=True)
class JudgesResult:
    """Everything `judges` reports (the JSON body; the CLI adds schema, command and dataset)."""

    names: tuple[str, ...]
    scope: JudgesScope
    confidence_level: float
    ks: tuple[int, ...]
    settings: JudgesSettings
    judges: tuple[JudgeRow, ...]
    pairs: tuple[PairRow, ...]
    exchangeability: Exchangeability
    ensembles: tuple[EnsembleRow, ...]
    picks: Picks
    models: JudgesModels = field(repr=False)
    unlabeled: JudgesUnlabeled | None = None  # every.Every.record(): the unlabeled items and how they were used

    @property
    def used_unlabeled(self) -> bool:
        return self.unlabeled is not None and self.unlabeled.used

    @property
    def target(self) -> str:
        population, items = self.scope.population, self.scope.items
        if self.unlabeled is not None and population is not None:
            n_unl = self.unlabeled.unlabeled_items
            every = self.unlabeled.report_method == "every_item"
            how = "by the judges' verdicts" if every else "unknown (labels only)"
            return (f"error on the {population} items read: the {items} labeled ones exact, the {n_unl} "
                    f"unlabeled ones {how}")
        if population is None:
            return "error on new items like the labeled ones"
        return f"error on the whole set of {population} items, the {items} labeled ones included"

    def top_pairs(self, n: int | None = None) -> list[PairRow]:
        """Pairs with the most shared mistakes beyond independence (largest excess first)."""
        with_data = [p for p in self.pairs if p.excess is not None]
        ranked = sorted(with_data, key=lambda p: (-(p.excess or 0.0), p.a, p.b))
        return ranked[: self.settings.top_pairs if n is None else n]
