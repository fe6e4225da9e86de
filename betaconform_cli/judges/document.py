"""`judges`' document (schema betaconform/1) as types: `judges_document` builds it from results.JudgesResult,
report/judges.py encodes it, and docs/schema/judges.json is generated from it (`make schema`).

Rates that may be undefined (a pair with no shared item, a test on too few items) are `float | None`; the unlabeled
items' record is UNSET when the input has none, so that the JSON keeps exactly its keys in their order.
Built from the typed result's attributes (`judges_document`), never from a dict; `judges_body` is its body."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType

from ..document_types import Count, Fraction, K, Level
from ..settings import TIE_RULE
from ..version import __version__
from .gold import METHODS, Agreement, Figures
from .model import ClassPosterior
from .results import (
    INTERVAL_METHOD,
    SELECTION_NOTE,
    CostChoice,
    EnsembleRow,
    JudgeRow,
    JudgesResult,
    JudgesUnlabeled,
    PairRow,
)
from .results import Exchangeability as ExchangeabilityTest
from .results import NamedEnsemble as NamedEnsembleRow

Json = Any  # fit's own error row, and the vote model's record (typed where they are published: docs/schema/fit.json)
COCHRAN_HYPOTHESIS = "all judges have the same accuracy (matched items)"
HEADER = ("schema", "command", "tool_version", "dataset", "source", "seed", "random_numbers")  # not in the body


class Judge(Struct, kw_only=True, frozen=True):
    """One judge: accuracy on the items it judged (Wilson interval), and how far it sits from the others."""

    name: str
    accuracy: Fraction
    low: Fraction
    high: Fraction
    items: Count
    deviation: float
    mean_excess: float | None


class Pair(Struct, kw_only=True, frozen=True):
    """Two judges' shared mistakes against what independence predicts (null where no item was judged by both)."""

    a: str
    b: str
    items: Count
    both_wrong: Fraction | None
    expected_if_independent: Fraction | None
    excess: float | None
    p_value: Fraction | None
    note: str | None


class Exchangeability(Struct, kw_only=True, frozen=True):
    test: Literal["cochran_q"]
    hypothesis: str
    statistic: float | None
    df: Count
    p_value: Fraction | None
    items: Count
    note: str


class Ensemble(Struct, kw_only=True, frozen=True):
    """The ensemble chosen for size k, its majority error and interval, and the baselines."""

    k: K
    members: list[str]
    estimate: Fraction
    low: Fraction
    high: Fraction
    empirical: Fraction | None
    items: Count
    random_k: Fraction | None
    all_judges: Fraction | None
    search: Literal["exact", "beam"]


class NamedEnsemble(Struct, kw_only=True, frozen=True):
    """--ensemble: the named members' error, and fit's error row at their k."""

    members: list[str]
    k: K
    estimate: Fraction
    low: Fraction
    high: Fraction
    empirical: Fraction | None
    items: Count
    fit: dict[str, Json]  # fit's error row (fit.ErrorRow.document, fit_document.row_type) as JSON values


class Cost(Struct, kw_only=True, frozen=True):
    """--max-error: the cheapest ensemble meeting it (met), else the one with the lowest upper bound."""

    max_error: Fraction
    met: bool
    members: list[str]
    cost: float
    estimate: Fraction
    low: Fraction
    high: Fraction
    candidates: Count
    search: Literal["exact", "beam"]
    prices: dict[str, float]


class ModelSettings(Struct, kw_only=True, frozen=True):
    classes: Count
    weight_concentration: float
    sweeps: Count
    burn_in: Count
    thin: Count


# Named for what they are, not fit_document.py's Settings / Interval / Model / Unlabeled (fit's, other shapes); no
# docstring is added or changed here: msgspec publishes docstrings as the schema's descriptions (docs/schema/judges.json).
class JudgesSettingsUsed(Struct, kw_only=True, frozen=True):  # results.JudgesSettings, with the ks and level
    pseudo_items: float
    interval_widening: float
    ranking: Literal["maxent", "latent"]
    maxent_penalty: list[float]
    model: ModelSettings
    exact_max_judges: Count
    beam_width: Count
    ks: list[K]
    confidence_level: Level


class JudgesInterval(Struct, kw_only=True, frozen=True):  # how the ensembles' intervals were made
    confidence_level: Level
    method: str


class LatentClass(Struct, kw_only=True, frozen=True):
    weight: Fraction
    mean_accuracy: Fraction


class LatentClassModel(Struct, kw_only=True, frozen=True):
    """The latent-class posterior's occupied classes (mean weight at least 1%), ordered by mean accuracy: posterior means."""

    family: Literal["latent_class"]
    classes: list[LatentClass]
    judge_spread_concentration: float
    draws: Count


class AgreementEstimate(Struct, kw_only=True, frozen=True):
    """A figure and its interval at the document's confidence level."""

    estimate: float
    low: float
    high: float


class BinaryRates(Struct, kw_only=True, frozen=True):
    """Two classes, one the pass class: sensitivity (pass given pass), specificity, false-pass rate (pass given not
    pass: 1 - specificity), false-fail rate (not pass given pass: 1 - sensitivity)."""

    positive: str
    sensitivity: AgreementEstimate | None
    specificity: AgreementEstimate | None
    false_pass_rate: AgreementEstimate | None
    false_fail_rate: AgreementEstimate | None


class AgreementFigures(Struct, kw_only=True, frozen=True):
    """A judge against the gold: accuracy, each class's recall (in the classes' order), the binary rates,
    Cohen's kappa, Gwet's AC1 and Krippendorff's alpha (null where undefined: every item one class)."""

    items: Count
    accuracy: AgreementEstimate | None
    recall: list[AgreementEstimate | None]
    binary: BinaryRates | None
    kappa: AgreementEstimate | None
    ac1: AgreementEstimate | None
    alpha: AgreementEstimate | None


class JudgeVsGold(Struct, kw_only=True, frozen=True):
    """One judge: its confusion table on the labeled items (rows gold, columns its verdict), the labels-only figures
    and the model-based ones (null where not used)."""

    name: str
    confusion: list[list[Count]]
    labels: AgreementFigures
    model: AgreementFigures | None


class PanelAgreement(Struct, kw_only=True, frozen=True):
    """The judges among themselves: Fleiss' kappa (items every judge judged), Krippendorff's alpha (items with two
    verdicts or more), and the pairs that err together beyond their accuracies (Holm at 1 - confidence level)."""

    items: Count
    complete_items: Count
    fleiss_kappa: AgreementEstimate | None
    alpha: AgreementEstimate | None
    dependent_pairs: list[list[str]]


class AgreementRecord(Struct, kw_only=True, frozen=True):
    """Agreement with the gold per judge and among the judges (judges/gold.py; docs/AGREEMENT.md)."""

    classes: list[str]
    positive: str | None
    confidence_level: Level
    methods: dict[str, str]
    model_used: bool
    model_note: str
    judges: list[JudgeVsGold]
    panel: PanelAgreement


class JudgesDocument(Struct, kw_only=True, frozen=True):
    """One dataset's judges, their shared mistakes, the best ensemble of each size, and the model behind them."""

    schema: Literal["betaconform/1"]
    command: Literal["judges"]
    tool_version: str
    dataset: str
    source: str
    seed: Count
    items: Count
    unlabeled_items: Count | UnsetType = UNSET
    unlabeled: JudgesUnlabeled | UnsetType = UNSET
    dropped_items: Count
    judge_names: list[str]
    target: str
    population: Count | None
    settings: JudgesSettingsUsed
    interval: JudgesInterval
    selection: str
    tie_rule: str
    judges: list[Judge]
    pairs: list[Pair]
    pairs_without_data: list[list[str]]
    top_pairs: list[list[str]]
    exchangeability: Exchangeability
    agreement: AgreementRecord | None
    ensembles: list[Ensemble]
    ensemble: NamedEnsemble | None
    cost: Cost | None
    model: LatentClassModel
    random_numbers: str


EVERY_INTERVAL = ("the mean of the bounds of two normal intervals on the items read: the Dawid-Skene posterior's (with "
                  "the model's misfit on the labels) and the vote split's (judges/every.py)")


def _selection(r: JudgesResult) -> tuple[str, str]:
    """(how the ensembles were chosen and estimated, the interval's method): the labels-only notes, or what the
    unlabeled items' record says where the ensembles' errors cover every item read."""
    u = r.unlabeled
    if u is None or u.report_method != "every_item":
        return SELECTION_NOTE, INTERVAL_METHOD
    return f"chosen by {u.choice}; estimate and interval: {u.report}", EVERY_INTERVAL


def _estimate(x: Any) -> AgreementEstimate | None:
    return None if x is None else AgreementEstimate(estimate=x.estimate, low=x.low, high=x.high)


def _figures(f: Figures) -> AgreementFigures:
    b = f.binary
    binary = None if b is None else BinaryRates(
        positive=b.positive, sensitivity=_estimate(b.sensitivity), specificity=_estimate(b.specificity),
        false_pass_rate=_estimate(b.false_pass), false_fail_rate=_estimate(b.false_fail))
    return AgreementFigures(items=f.items, accuracy=_estimate(f.accuracy), recall=[_estimate(x) for x in f.recall],
                            binary=binary, kappa=_estimate(f.kappa), ac1=_estimate(f.ac1), alpha=_estimate(f.alpha))


def agreement_record(a: Agreement | None) -> AgreementRecord | None:
    """The "agreement" record of the document (None: the input carries no verdicts, only correctness)."""
    if a is None:
        return None
    p = a.panel
    return AgreementRecord(
        classes=list(a.classes), positive=a.positive, confidence_level=a.confidence_level, methods=dict(METHODS),
        model_used=a.model_used, model_note=a.model_note,
        judges=[JudgeVsGold(name=j.name, confusion=[list(r) for r in j.confusion], labels=_figures(j.labels),
                            model=None if j.model is None else _figures(j.model)) for j in a.judges],
        panel=PanelAgreement(items=p.items, complete_items=p.complete_items, fleiss_kappa=_estimate(p.fleiss_kappa),
                             alpha=_estimate(p.alpha), dependent_pairs=[list(x) for x in p.dependent_pairs]))


def judges_document(dataset: str, source: str, seed: int, r: JudgesResult, random_numbers: str,
                    agreement: Agreement | None = None) -> JudgesDocument:
    """The document of one dataset: where it came from, the result (read from its typed rows, no dict between),
    how its random numbers were seeded, and the agreement with the gold (judges/gold.py; None without verdicts)."""
    selection, interval = _selection(r)
    return JudgesDocument(
        schema="betaconform/1", command="judges", tool_version=__version__, dataset=dataset, source=source, seed=seed,
        items=r.scope.items, unlabeled_items=UNSET if r.unlabeled is None else r.unlabeled.unlabeled_items,
        unlabeled=UNSET if r.unlabeled is None else r.unlabeled, dropped_items=r.scope.dropped_items, judge_names=list(r.names),
        target=r.target, population=r.scope.population, settings=_settings(r),
        interval=JudgesInterval(confidence_level=r.confidence_level, method=interval), selection=selection,
        tie_rule=TIE_RULE, judges=[_judge(j) for j in r.judges], pairs=[_pair(p) for p in r.pairs],
        pairs_without_data=[[p.a, p.b] for p in r.pairs if p.items == 0],
        top_pairs=[[p.a, p.b] for p in r.top_pairs()], exchangeability=_exchangeability(r.exchangeability),
        agreement=agreement_record(agreement), ensembles=[_ensemble(e) for e in r.ensembles],
        ensemble=None if r.picks.named is None else _named(r.picks.named),
        cost=None if r.picks.cost is None else _cost(r.picks.cost), model=_model(r.models.posterior),
        random_numbers=random_numbers,
    )


def _settings(r: JudgesResult) -> JudgesSettingsUsed:
    s, m = r.settings, r.settings.model
    return JudgesSettingsUsed(
        pseudo_items=s.pseudo_items, interval_widening=s.interval_widening, ranking=s.ranking,  # type: ignore[arg-type]
        maxent_penalty=list(s.maxent_penalty),
        model=ModelSettings(classes=m.classes, weight_concentration=m.a0, sweeps=m.sweeps, burn_in=m.burn_in, thin=m.thin),
        exact_max_judges=s.exact_max_judges, beam_width=s.beam_width, ks=list(r.ks), confidence_level=r.confidence_level)


def _judge(j: JudgeRow) -> Judge:
    return Judge(name=j.name, accuracy=j.accuracy, low=j.low, high=j.high, items=j.items, deviation=j.deviation,
                 mean_excess=j.mean_excess)


def _pair(p: PairRow) -> Pair:
    return Pair(a=p.a, b=p.b, items=p.items, both_wrong=p.both_wrong, expected_if_independent=p.expected_if_independent,
                excess=p.excess, p_value=p.p_value, note=p.note)


def _exchangeability(x: ExchangeabilityTest) -> Exchangeability:
    return Exchangeability(test="cochran_q", hypothesis=COCHRAN_HYPOTHESIS, statistic=x.statistic, df=x.df,
                           p_value=x.p_value, items=x.items, note=x.note)


def _ensemble(e: EnsembleRow) -> Ensemble:
    return Ensemble(k=e.k, members=list(e.members), estimate=e.estimate, low=e.low, high=e.high, empirical=e.empirical,
                    items=e.items, random_k=e.random_k, all_judges=e.all_judges, search=e.search)  # type: ignore[arg-type]


def _named(n: NamedEnsembleRow) -> NamedEnsemble:
    from ..document_types import plain

    return NamedEnsemble(members=list(n.members), k=len(n.members), estimate=n.estimate, low=n.low, high=n.high,
                         empirical=n.empirical, items=n.items, fit=plain(n.fit))  # judges.json keeps fit's row as JSON


def _cost(c: CostChoice) -> Cost:
    return Cost(max_error=c.max_error, met=c.met, members=list(c.members), cost=c.cost, estimate=c.estimate, low=c.low,
                high=c.high, candidates=c.candidates, search=c.search, prices=dict(c.prices))  # type: ignore[arg-type]


def _model(posterior: ClassPosterior) -> LatentClassModel:
    """The latent-class posterior's occupied classes (mean weight >= 1%), ordered by mean accuracy: posterior means."""
    import numpy as np

    w = posterior.weights.mean(axis=0)
    acc = posterior.accuracy.mean(axis=0)
    keep = [c for c in np.argsort(acc.mean(axis=1)) if w[c] >= 0.01]
    return LatentClassModel(family="latent_class",
                            classes=[LatentClass(weight=float(w[c]), mean_accuracy=float(acc[c].mean())) for c in keep],
                            judge_spread_concentration=float(np.median(posterior.concentration)), draws=posterior.draws)


def judges_body(r: JudgesResult) -> dict[str, Any]:
    """The JSON document's body: the document without where it came from (the result does
    not build its own document, so results.py need not import this module)."""
    from ..document_types import plain

    doc = plain(judges_document("", "", 0, r, ""))
    return {k: v for k, v in doc.items() if k not in HEADER}
