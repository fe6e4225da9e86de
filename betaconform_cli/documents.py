"""The fit document's types: one set of msgspec Structs checks a saved fit on read (savedfit.load_fit) and on write,
checks the JSON document that `fit`, `report` and `transfer` print (schema betaconform/1), and is the source of
the published JSON schema (docs/schema/fit.json: `make schema`).

An error row's columns come from estimators.REGISTRY, so the row type is built from it (`row_type`): a registered
estimator's column is a field of the row, in the saved fit and in the schema. Mappings that carry settings of
their own (`settings`, `provenance`, `transfer`, ...) are typed as mappings of JSON values; the fields the views
read from them (a confidence level) are typed. What a type cannot say (weights that sum to 1, a mean that is
alpha / (alpha + beta), counts that match the histogram) savedfit checks after the types.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from .estimators import row_columns
from .inputs.dataset import MAX_JUDGES  # the most judges a histogram entry may have
from .settings import MAX_K

SCHEMA = "betaconform/1"  # the JSON documents
SAVED_SCHEMA = "betaconform/fit/1"  # the saved-fit YAML
MAX_COMPONENTS = 10
SLACK = 1e-9  # a fraction computed in floating point may pass 0 or 1 by this much

Count = Annotated[int, Meta(ge=0, lt=2**53, description="a count: a non-negative integer below 2^53")]
Fraction = Annotated[float, Meta(ge=-SLACK, le=1 + SLACK, description="a fraction from 0 to 1")]
Level = Annotated[float, Meta(gt=0, lt=1, description="a confidence level strictly between 0 and 1")]
K = Annotated[int, Meta(ge=1, le=MAX_K, description=f"an ensemble size from 1 to {MAX_K}")]
Judges = Annotated[int, Meta(ge=1, le=MAX_JUDGES)]
Json = Any  # a JSON value (savedfit checks that a saved fit's are ones JSON carries exactly)


class Component(Struct, kw_only=True):
    """One Beta-Binomial component: its share of the items, alpha and beta, and its mean accuracy."""

    weight: Annotated[float, Meta(ge=0)]
    alpha: Annotated[float, Meta(gt=0)]
    beta: Annotated[float, Meta(gt=0)]
    mean: Annotated[float, Meta(ge=0, le=1)] | None = None  # alpha / (alpha + beta); a hand-written prior may omit it


class Model(Struct, kw_only=True):
    """A fitted Beta-Binomial mixture (fit.MixtureFit.to_dict)."""

    components: Annotated[list[Component], Meta(min_length=1, max_length=MAX_COMPONENTS)]
    family: str | None = None
    method: str | None = None
    log_likelihood: float | None = None
    log_posterior: float | None = None
    bic: float | None = None
    converged: bool | None = None
    n_iter: Count | None = None
    n_starts: Count | None = None


class Interval(Struct, kw_only=True):
    confidence_level: Level | None = None
    method: str | None = None


class Settings(Struct, kw_only=True):
    """The fit's settings (FitSettings.to_dict); the views read the confidence level."""

    confidence_level: Level | None = None


class Embedding(Struct, kw_only=True):
    """The labeled texts' mean embedding (`fit --embed`): transfer's similarity to other datasets."""

    model: str
    mean: Annotated[list[float], Meta(min_length=1)]
    dimension: Count | None = None
    texts: Count | None = None


class Unlabeled(Struct, kw_only=True):
    """How the estimate used the items without gold (votes.VoteEstimate.fit_keys)."""

    method: Literal["vote_split", "labels_only"]
    reason: str
    model: dict[str, Json] | None = None


class GateResult(Struct, kw_only=True):
    """The gate's check (gate.GateCheck.to_dict)."""

    k: K
    max_error: float
    on: Literal["upper", "estimate"]
    value: float
    passed: bool


@functools.cache
def _row_type(columns: tuple[tuple[str, bool], ...]) -> type[Struct]:
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [("k", K), ("estimate", Fraction), ("low", Fraction), ("high", Fraction)]
    fields += [(name, Fraction | None) for name, shown in columns if shown]  # the table reads these
    fields += [(name, Fraction | None, None) for name, shown in columns if not shown]
    fields += [("extrapolated", bool | None, None), ("labels_only", Fraction | None, None),
               ("labels_only_low", Fraction | None, None), ("labels_only_high", Fraction | None, None)]
    return msgspec.defstruct("ErrorRate", fields, kw_only=True, module=__name__)


def row_type() -> type[Struct]:
    """One row of the error table: the estimate and its interval, and each registered estimator's column."""
    return _row_type(tuple((str(e.column), e.heading is not None) for e in row_columns()))


_COMMON: list[tuple[str, Any] | tuple[str, Any, Any]] = [
    ("tool_version", str | int | float | None, None),
    ("source", str | None, None),
    ("command", str | None, None),
    ("skipped_lines", Count | None, None),
    ("seed", Count | None, None),
    ("method_description", str | None, None),
    ("settings", Settings | None, None),
    ("baselines", dict[str, Json] | None, None),
    ("interval", Interval | None, None),
    ("tie_rule", str | None, None),
    ("embedding", Embedding | None, None),
    ("provenance", dict[str, Json] | None, None),
    ("sources", list[dict[str, Json]] | None, None),
    ("without_transfer", list[dict[str, Json]] | None, None),
    ("transfer", dict[str, Json] | None, None),
    ("reading", dict[str, Json] | None, None),
    ("unlabeled_items", Count | None, None),
    ("unlabeled", Unlabeled | None, None),
]


@functools.cache
def _document_type(row: type[Struct], saved: bool) -> type[Struct]:
    required: list[tuple[str, Any] | tuple[str, Any, Any]] = [
        ("schema", Literal["betaconform/fit/1"] if saved else Literal["betaconform/1"]),
        ("dataset", str),
        ("items", Count),
        ("judges", Count),
        ("histogram", Annotated[dict[Judges, list[Count]], Meta(min_length=1)]),
        ("method", str),
        ("model", Model),
        ("error_rates", Annotated[list[row], Meta(min_length=1)]),  # type: ignore[valid-type]
    ]
    extra: list[tuple[str, Any] | tuple[str, Any, Any]] = [] if saved else [
        ("gate", GateResult | None, None), ("fitted_by", str | None, None), ("saved_fit", str | None, None)]
    name = "SavedFit" if saved else "FitDocument"
    return msgspec.defstruct(name, [*required, *_COMMON, *extra], kw_only=True, module=__name__)


def saved_fit_type() -> type[Struct]:
    """A saved fit (YAML, schema betaconform/fit/1)."""
    return _document_type(row_type(), True)


def fit_document_type() -> type[Struct]:
    """The JSON document of `fit`, `report` and `transfer` (schema betaconform/1); other keys a command adds pass."""
    return _document_type(row_type(), False)


def fields() -> tuple[str, ...]:
    """A saved fit's keys: what load_fit keeps."""
    return saved_fit_type().__struct_fields__


def document_schema(type_: type[Struct], title: str, module: str = "documents") -> dict[str, Any]:
    """A document type's published JSON schema (docs/schema/*.json), generated from `type_` (betaconform_cli/`module`.py)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": f"generated from betaconform_cli/{module}.py by `make schema`; do not edit",
        **msgspec.json.schema(type_),
    }


def json_schema() -> dict[str, Any]:
    """The published JSON schema of the fit document (docs/schema/fit.json)."""
    return document_schema(fit_document_type(), f"BetaConform fit document ({SCHEMA}): fit, report and transfer -f json")


def schema_text(schema: dict[str, Any] | None = None) -> str:
    """A schema as written in docs/schema/ (the fit document's by default): indented, keys in the types' order."""
    return json.dumps(json_schema() if schema is None else schema, indent=2) + "\n"


class TypeProblem(ValueError):
    """A value that does not have its field's type: `field` as written in a message (`error_rates[2].k`)."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"field '{field}': {problem}" if field else problem)
        self.field = field


_AT = re.compile(r"^(?P<problem>.*?)(?: - at `\$\.?(?P<path>[^`]*)`)?$")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")


def check(doc: Any, type_: type[Struct]) -> Any:
    """`doc` (plain Python values) converted to `type_`; a TypeProblem naming the field when it does not fit."""
    try:
        return msgspec.convert(doc, type_)
    except msgspec.ValidationError as exc:
        m = _AT.match(str(exc))
        problem, path = (m.group("problem"), m.group("path") or "") if m else (str(exc), "")
        missing = _MISSING.match(problem)
        if missing:
            path, problem = ".".join(p for p in (path, missing.group("name")) if p), "missing"
        raise TypeProblem(path, problem.replace("`", "").replace("Expected", "expected")) from None


def _number(value: Any) -> Any:
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    raise NotImplementedError(f"not a JSON value: {type(value).__name__}")


def plain(doc: Struct) -> Any:
    """A typed document as plain values, as the report's views and the JSON encoder read it (numpy scalars as
    Python numbers; NaN stays NaN, the encoder writes null)."""
    return msgspec.to_builtins(doc, enc_hook=_number)
