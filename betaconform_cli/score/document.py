"""`score`'s documents (schema betaconform/1) as types: api.score builds them from score.ScoreResult and
score.ComparisonResult (`score_document`, `compare_document`), report/score.py encodes them, and docs/schema/score.json
is generated from them (`make schema`).

A dataset's document and a comparison's (--compare: the difference a - b and each system's own document) are two
types; the published schema accepts either (`anyOf`). The gate's check is UNSET without --min-score, so that the
JSON keeps exactly its keys in their order. The key `lambda` (a Python keyword) is the field `lambda_`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType
from msgspec.structs import replace

from ..document_types import SCHEMA, Count, Fraction, Level, document_schema
from ..gate import ScoreCheck
from ..version import __version__
from .estimator import TARGET_TEXT, ComparisonResult, ScoreResult
from .ppi import Interval
from .strata import note

Signed = Annotated[float, Meta(ge=-1, le=1, description="a difference of two fractions, from -1 to 1")]


class Estimate(Struct, kw_only=True, frozen=True):
    """A pass rate and its interval (ppi.Interval)."""

    estimate: Fraction
    low: Fraction
    high: Fraction


class Difference(Struct, kw_only=True, frozen=True):
    """A difference of two pass rates (the judges' bias; a - b) and its interval."""

    estimate: Signed
    low: Signed
    high: Signed


class JudgesSay(Struct, kw_only=True, frozen=True):
    """The judges' majority pass rate over all items, and its bias: judges say - corrected."""

    estimate: Fraction
    bias: Difference


class ScoreGateResult(Struct, kw_only=True, frozen=True):
    """The --min-score gate's check (gate.ScoreCheck)."""

    min_score: float
    on: Literal["lower", "estimate"]
    value: float
    passed: bool


class ScoreDocument(Struct, kw_only=True, frozen=True):
    """One system's corrected pass rate, what the judges alone say, and what the labels alone say."""

    schema: Literal["betaconform/1"]
    command: Literal["score"]
    tool_version: str
    dataset: str
    source: str
    score: Estimate
    judges_say: JudgesSay
    labels_only: Estimate
    positive: str | int | float | bool  # the class that passes, as written
    labeled_items: Count
    unlabeled_items: Count
    no_verdict_items: Count  # of all items, those no judge gave a verdict on (strata.py)
    no_verdict_labeled: Count
    judges: Count
    clusters: Count | None
    confidence_level: Level
    target: Literal["set", "new"]
    target_text: str
    method: str
    lambda_: Annotated[float, Meta(ge=-1, le=1)] = msgspec.field(name="lambda")
    ppi_estimate: Fraction
    no_verdict_note: str | UnsetType = UNSET  # how the items without a verdict were estimated (strata.note)
    gate: ScoreGateResult | UnsetType = UNSET


class CompareDocument(Struct, kw_only=True, frozen=True):
    """--compare: the difference a - b on the shared items (paired by id), and each system's own document there."""

    schema: Literal["betaconform/1"]
    command: Literal["score"]
    tool_version: str
    dataset: str  # "a - b"
    a: ScoreDocument
    b: ScoreDocument
    difference: Difference
    shared_items: Count
    labeled_both: Count
    confidence_level: Level
    target: Literal["set", "new"]
    gate: ScoreGateResult | UnsetType = UNSET


def _estimate(iv: Interval) -> Estimate:
    return Estimate(estimate=iv.estimate, low=iv.low, high=iv.high)


def _difference(iv: Interval) -> Difference:
    return Difference(estimate=iv.estimate, low=iv.low, high=iv.high)


def _gate(check: ScoreCheck | None) -> ScoreGateResult | UnsetType:
    if check is None:
        return UNSET
    return ScoreGateResult(min_score=check.min_score, on=check.on, value=check.value, passed=check.passed)  # type: ignore[arg-type]


def score_document(name: str, source: str, r: ScoreResult, check: ScoreCheck | None = None) -> ScoreDocument:
    """The document of one dataset: the core's result with where it came from, and its gate check."""
    return ScoreDocument(
        schema="betaconform/1", command="score", tool_version=__version__, dataset=name, source=source, score=_estimate(r.score),
        judges_say=JudgesSay(estimate=r.judges_say, bias=_difference(r.judges_bias)), labels_only=_estimate(r.labels_only),
        positive=r.positive, labeled_items=r.sizes.labeled_items, unlabeled_items=r.sizes.unlabeled_items,
        no_verdict_items=r.sizes.no_verdict, no_verdict_labeled=r.sizes.no_verdict_labeled, judges=r.sizes.judges, clusters=r.sizes.clusters, confidence_level=r.confidence_level, target=r.target,  # type: ignore[arg-type]
        target_text=TARGET_TEXT[r.target], method=r.method, lambda_=r.lambda_, ppi_estimate=r.ppi_estimate,
        no_verdict_note=note(r.sizes.no_verdict, r.sizes.no_verdict_labeled) if r.sizes.no_verdict else UNSET, gate=_gate(check),
    )


def compare_document(a: ScoreDocument, b: ScoreDocument, c: ComparisonResult) -> CompareDocument:
    """The document of a comparison: the difference a - b on shared items, and each system's own document there."""
    return CompareDocument(
        schema="betaconform/1", command="score", tool_version=__version__, dataset=f"{a.dataset} - {b.dataset}", a=a, b=b,
        difference=_difference(c.difference), shared_items=c.shared_items, labeled_both=c.labeled_both,
        confidence_level=c.confidence_level, target=c.target,  # type: ignore[arg-type]
    )


def with_gate(doc: CompareDocument, check: ScoreCheck | None) -> CompareDocument:
    return replace(doc, gate=_gate(check))


def score_schema() -> dict[str, Any]:
    """docs/schema/score.json: a dataset's document or a comparison's."""
    (score, compare), defs = msgspec.json.schema_components([ScoreDocument, CompareDocument])
    schema = document_schema(ScoreDocument, f"BetaConform score document ({SCHEMA}): score -f json, with or without --compare",
                             "score/document")
    del schema["$ref"]
    return {**schema, "anyOf": [score, compare], "$defs": defs}
