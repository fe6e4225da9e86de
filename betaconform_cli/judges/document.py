"""`judges`' document (schema betaconform/1) as types: `judges_document` builds it from results.JudgesResult,
report/judges.py encodes it, and docs/schema/judges.json is generated from it (`make schema`).

Rates that may be undefined (a pair with no shared item, a test on too few items) are `float | None`; the unlabeled
items' record is UNSET when the input has none, so that the JSON keeps exactly its keys in their order.
results.JudgesResult.to_dict is this document's body (without where it came from)."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType

from .. import __version__
from ..documents import Count, Fraction, K, Level
from ..settings import TIE_RULE
from .results import INTERVAL_METHOD, SELECTION_NOTE, JudgesResult

Json = Any  # fit's own error row, and the vote model's record (typed where they are published: docs/schema/fit.json)
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
    fit: dict[str, Json]  # fit's error row (fit.ErrorRow.document, documents.row_type) as JSON values


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


# Named for what they are, not documents.py's Settings / Interval / Model / Unlabeled (fit's, other shapes); no
# docstring is added or changed here: msgspec publishes docstrings as the schema's descriptions (docs/schema/judges.json).
class JudgesSettingsUsed(Struct, kw_only=True, frozen=True):  # results.JudgesSettings.to_dict, with the ks and level
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
    """The latent-class posterior's occupied classes (model.ClassPosterior.to_dict)."""

    family: Literal["latent_class"]
    classes: list[LatentClass]
    judge_spread_concentration: float
    draws: Count


class JudgesUnlabeled(Struct, kw_only=True, frozen=True):
    """Whether and how the items without gold were used (every.Every.record)."""

    method: Literal["every_item", "labels_only"]
    used: bool
    reason: str
    labeled_items: Count
    unlabeled_items: Count
    model: dict[str, Json] | None
    choice: str


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
    ensembles: list[Ensemble]
    ensemble: NamedEnsemble | None
    cost: Cost | None
    model: LatentClassModel
    random_numbers: str


def _unlabeled(r: JudgesResult) -> dict[str, Any]:
    if r.unlabeled is None:
        return {}
    return {"unlabeled_items": r.unlabeled["unlabeled_items"], "unlabeled": JudgesUnlabeled(**r.unlabeled)}


def judges_document(dataset: str, source: str, seed: int, r: JudgesResult, random_numbers: str) -> JudgesDocument:
    """The document of one dataset: where it came from, the result, and how its random numbers were seeded."""
    posterior = r.models.posterior.to_dict()
    settings = r.settings.to_dict()
    return JudgesDocument(
        schema="betaconform/1", command="judges", tool_version=__version__, dataset=dataset, source=source, seed=seed,
        items=r.scope.items, **_unlabeled(r), dropped_items=r.scope.dropped_items, judge_names=list(r.names),
        target=r.target, population=r.scope.population,
        settings=JudgesSettingsUsed(**{**settings, "model": ModelSettings(**settings["model"])}, ks=list(r.ks),
                                    confidence_level=r.confidence_level),
        interval=JudgesInterval(confidence_level=r.confidence_level, method=INTERVAL_METHOD), selection=SELECTION_NOTE,
        tie_rule=TIE_RULE,
        judges=[Judge(**j.to_dict()) for j in r.judges], pairs=[Pair(**p.to_dict()) for p in r.pairs],
        pairs_without_data=[[p.a, p.b] for p in r.pairs if p.items == 0],
        top_pairs=[[p.a, p.b] for p in r.top_pairs()], exchangeability=Exchangeability(**r.exchangeability.to_dict()),
        ensembles=[Ensemble(**e.to_dict()) for e in r.ensembles],
        ensemble=None if r.picks.named is None else NamedEnsemble(**r.picks.named.to_dict()),
        cost=None if r.picks.cost is None else Cost(**r.picks.cost.to_dict()),
        model=LatentClassModel(**{**posterior, "classes": [LatentClass(**c) for c in posterior["classes"]]}),
        random_numbers=random_numbers,
    )
