"""The fit document's types and builders: one set of msgspec Structs checks a saved fit on read (savedfit.load_fit)
and on write, is the JSON document that `fit`, `report`, `transfer` (and `sample`, live) print (schema
betaconform/1), built here (`fit_document`, `report_document`) and encoded by the report as it is, and is the source
of the published JSON schema (docs/schema/fit.json: `make schema`).

The types list their keys in the order the documents print them; a key a document may lack is UNSET where absent, so
the JSON (and `report` of a hand-written fit) keeps exactly its keys. An error row's columns come from
estimators.REGISTRY, so the row type is built from it (`row_type`): a registered estimator's column is a field of
the row, in the saved fit and in the schema. Transfer's `sources` and `transfer` records are typed
(TransferSource, TransferRecord); mappings that carry records of their own (`provenance`, `reading`, transfer's
settings) are typed as mappings of JSON values. What a type cannot say (weights that sum to 1, a mean that
is alpha / (alpha + beta), counts that match the histogram) savedfit checks after the types.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct

from .document_types import SCHEMA, Count, Fraction, Json, Judges, K, Level, Opt, document_schema
from .estimators import row_columns
from .settings import TIE_RULE

if TYPE_CHECKING:
    from .counts import CountTable
    from .distributions import Mixture
    from .gate import GateCheck

SAVED_SCHEMA = "betaconform/fit/1"  # the saved-fit YAML
MAX_COMPONENTS = 10


class Component(Struct, kw_only=True):
    """One Beta-Binomial component: its share of the items, alpha and beta, and its mean accuracy."""

    weight: Annotated[float, Meta(ge=0)]
    alpha: Annotated[float, Meta(gt=0)]
    beta: Annotated[float, Meta(gt=0)]
    mean: Annotated[float, Meta(ge=0, le=1)] | None = None  # alpha / (alpha + beta); a hand-written prior may omit it


class Model(Struct, kw_only=True):
    """A fitted Beta-Binomial mixture (mixtures.MixtureFit.model; a baseline's too)."""

    family: str | None | Opt = UNSET
    components: Annotated[list[Component], Meta(min_length=1, max_length=MAX_COMPONENTS)]
    method: str | None | Opt = UNSET
    log_likelihood: float | None | Opt = UNSET
    log_posterior: float | None | Opt = UNSET
    bic: float | None | Opt = UNSET
    converged: bool | None | Opt = UNSET
    n_iter: Count | None | Opt = UNSET
    n_starts: Count | None | Opt = UNSET

    def mixture(self) -> Mixture:
        """The mixture this record describes (distributions.Mixture), read from its components."""
        from .distributions import Mixture

        comps = self.components
        return Mixture(tuple(c.weight for c in comps), tuple(c.alpha for c in comps), tuple(c.beta for c in comps))


class BinomialModel(Struct, kw_only=True):
    """The Binomial baseline: every judge right with the same probability p, independently."""

    family: str | None | Opt = UNSET
    p: Fraction


class Baselines(Struct, kw_only=True):
    """The fit's baselines (fit.FitResult.fields): the Binomial and the single Beta-Binomial."""

    binomial: BinomialModel | None | Opt = UNSET
    beta_binomial: Model | None | Opt = UNSET


class Interval(Struct, kw_only=True):
    confidence_level: Level | None | Opt = UNSET
    method: str | None | Opt = UNSET


class Settings(Struct, kw_only=True):
    """The fit's settings (settings.FitSettings); the views read the confidence level."""

    method: str | None | Opt = UNSET
    components: str | int | None | Opt = UNSET
    ks: list[int] | None | Opt = UNSET
    confidence_level: Level | None | Opt = UNSET
    prior: dict[str, Json] | None | Opt = UNSET
    strength: float | None | Opt = UNSET
    flat: float | None | Opt = UNSET
    n_draws: Count | None | Opt = UNSET


class Embedding(Struct, kw_only=True):
    """The labeled texts' mean embedding (`fit --embed`): transfer's similarity to other datasets."""

    model: str
    dimension: Count | None | Opt = UNSET
    texts: Count | None | Opt = UNSET
    mean: Annotated[list[float], Meta(min_length=1)]


class EmbeddingShown(Struct, kw_only=True):
    """A saved fit's embedding as `report` shows it: without the vector."""

    model: str
    dimension: Count | None | Opt = UNSET
    texts: Count | None | Opt = UNSET


class JudgeProfile(Struct, kw_only=True):
    """How an ensemble's judges behave on a dataset (transfer.JudgeProfile): judges per item, accuracy, overdispersion."""

    judges: list[Judges]
    accuracy: Fraction | None
    overdispersion: Fraction | None


class TransferSource(Struct, kw_only=True):
    """One source's row in a transfer (transfer.SourceWeight.record): its eq. 14 terms, its prior, the labels'
    evidence for it, its final weight and shift, and its judge profile."""

    name: str
    items: Count
    similarity: float
    lambda_: float | None | Opt = msgspec.field(default=UNSET, name="lambda")
    prior_weight: float
    log_evidence: float | None | Opt = UNSET
    log_bayes_factor: float | None | Opt = UNSET
    weight: float
    shift: float | None | Opt = UNSET
    judges: list[Judges] | None | Opt = UNSET
    accuracy: Fraction | None | Opt = UNSET
    overdispersion: Fraction | None | Opt = UNSET
    same_judge_count: Fraction | None | Opt = UNSET


class TransferRecord(Struct, kw_only=True):
    """How a transfer weighted no transfer against the sources (transfer.TransferResult.record)."""

    settings: dict[str, Json] | Opt = UNSET  # the transfer's settings by their flat names (configs/transfer.yaml)
    target_weight: float
    target_prior_weight: float
    no_source_applies: bool | Opt = UNSET
    no_source_reason: str | Opt = UNSET
    limited_at_k: list[K] | Opt = UNSET
    target_profile: JudgeProfile | None | Opt = UNSET
    prior_conflict: bool
    prior_conflict_reason: str | Opt = UNSET


class Unlabeled(Struct, kw_only=True):
    """How the estimate used the items without gold (votes.VoteEstimate.fit_record)."""

    method: Literal["vote_split", "labels_only"]
    reason: str
    used: bool | Opt = UNSET
    labeled_items: Count | Opt = UNSET
    unlabeled_items: Count | Opt = UNSET
    dropped_items: Count | Opt = UNSET
    prior: dict[str, Json] | Opt = UNSET
    model: dict[str, Json] | None | Opt = UNSET


class GateResult(Struct, kw_only=True):
    """The gate's check (gate.GateCheck)."""

    k: K
    max_error: float
    on: Literal["upper", "estimate"]
    value: float
    passed: bool
    extrapolated: bool | Opt = UNSET  # k beyond the most judges any item has (gate.GateCheck.beyond)


def gate_result(check: GateCheck) -> GateResult:
    """The gate's record in a fit document, read from the check."""
    return GateResult(k=check.k, max_error=check.max_error, on=check.on,  # type: ignore[arg-type]  # Gate checks `on`
                      value=check.value, passed=check.passed, extrapolated=bool(check.beyond))


@functools.cache
def _row_type(columns: tuple[tuple[str, bool], ...]) -> type[Struct]:
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [("k", K), ("estimate", Fraction), ("low", Fraction), ("high", Fraction)]
    fields += [(name, Fraction | None) if shown else (name, Fraction | None | Opt, UNSET) for name, shown in columns]
    fields += [("extrapolated", bool | None | Opt, UNSET), ("beyond_data", bool | None | Opt, UNSET),
               ("labels_only", Fraction | None | Opt, UNSET),
               ("labels_only_low", Fraction | None | Opt, UNSET), ("labels_only_high", Fraction | None | Opt, UNSET)]
    return msgspec.defstruct("ErrorRate", fields, kw_only=True, module=__name__)


def row_type() -> type[Struct]:
    """One row of the error table: the estimate and its interval, and each registered estimator's column (the
    table shows those with a heading: the others may be absent from a saved fit)."""
    return _row_type(tuple((str(e.column), e.heading is not None) for e in row_columns()))


def _fields(row: type[Struct]) -> list[tuple[str, Any] | tuple[str, Any, Any]]:
    """The fit document's keys in the order it prints them (`fit`, and a saved fit's YAML)."""
    return [
        ("command", str | None | Opt, UNSET),
        ("tool_version", str | int | float | None | Opt, UNSET),
        ("dataset", str),
        ("source", str | None | Opt, UNSET),
        ("items", Count),
        ("unlabeled_items", Count | None | Opt, UNSET),
        ("judges", Count),
        ("skipped_lines", Count | None | Opt, UNSET),
        ("seed", Count | None | Opt, UNSET),
        ("histogram", Annotated[dict[Judges, list[Count]], Meta(min_length=1)]),
        ("method", str),
        ("method_description", str | None | Opt, UNSET),
        ("settings", Settings | None | Opt, UNSET),
        ("model", Model),
        ("baselines", Baselines | None | Opt, UNSET),
        ("interval", Interval | None | Opt, UNSET),
        ("tie_rule", str | None | Opt, UNSET),
        ("error_rates", Annotated[list[row], Meta(min_length=1)]),  # type: ignore[valid-type]
        ("unlabeled", Unlabeled | None | Opt, UNSET),
        ("provenance", dict[str, Json] | None | Opt, UNSET),
        ("reading", dict[str, Json] | None | Opt, UNSET),
        ("sources", list[TransferSource] | None | Opt, UNSET),
        ("without_transfer", list[row] | None | Opt, UNSET),  # type: ignore[valid-type]
        ("transfer", TransferRecord | None | Opt, UNSET),
    ]


_SCHEMA_FIELD = ("schema", Literal["betaconform/1"])
_REPORT = [("fitted_by", str | None | Opt, UNSET), ("saved_fit", str | None | Opt, UNSET), ("gate", GateResult | None | Opt, UNSET)]


@functools.cache
def _document_type(row: type[Struct], kind: Literal["saved", "printed", "report"]) -> type[Struct]:
    """The fit document in its three key orders: a saved fit (YAML: schema first, the embedding last), the printed
    document of `fit`, `transfer` and `sample` (schema first, the gate last), and `report`'s (schema first, as every
    JSON document this tool writes, which is how a folder knows it for an output: inputs/paths.tool_output; then the
    saved fit's keys in this order, whatever order a hand-written file has; its embedding last and without the
    vector; then fitted_by, saved_fit and gate). One set of fields: only the order
    and the schema's name differ."""
    body = _fields(row)
    if kind == "saved":
        return msgspec.defstruct("SavedFit", [("schema", Literal["betaconform/fit/1"]), *body,
                                              ("embedding", Embedding | None | Opt, UNSET)], kw_only=True, module=__name__)
    if kind == "report":
        return msgspec.defstruct("ReportDocument", [_SCHEMA_FIELD, *body, ("embedding", EmbeddingShown | None | Opt, UNSET),
                                                    *_REPORT], kw_only=True, module=__name__)
    return msgspec.defstruct("FitDocument", [_SCHEMA_FIELD, *body, ("embedding", Embedding | None | Opt, UNSET), *_REPORT],
                             kw_only=True, module=__name__)


def saved_fit_type() -> type[Struct]:
    """A saved fit (YAML, schema betaconform/fit/1)."""
    return _document_type(row_type(), "saved")


def fit_document_type() -> type[Struct]:
    """The JSON document of `fit` and `transfer` (schema betaconform/1), the published one (`report`'s has the same
    fields); other keys a command adds pass."""
    return _document_type(row_type(), "printed")


def report_document_type() -> type[Struct]:
    """`report`'s JSON document: a saved fit's keys in the fit document's order, then where it came from and the
    gate."""
    return _document_type(row_type(), "report")


class FitRecord(Struct, kw_only=True, frozen=True):
    """The fit document's keys that the fit decides (fit.FitResult.record: read from the typed result);
    `fit_document` adds where the data came from. Transfer replaces the method and its description."""

    method: str
    method_description: str | None
    settings: Settings
    model: Model
    baselines: Baselines
    interval: Interval
    tie_rule: str
    error_rates: list[Any]  # fit_document.row_type() rows
    unlabeled_items: Count | Opt = UNSET  # set with `unlabeled`: the items without gold the estimate saw
    unlabeled: Unlabeled | Opt = UNSET


def fit_document(
    command: str, name: str, source: str, table: CountTable, fit: FitRecord, seed: int, skipped: int = 0,
    gate: GateCheck | None = None, unlabeled: int | None = None, transfer: tuple[list[TransferSource], list[Any],
                                                                                TransferRecord] | None = None,
) -> Any:
    """The printed fit document of one dataset (fit_document_type(), schema betaconform/1), from the fit's record
    and the data's table: `items` is the labeled count; `unlabeled` (when given: `fit`) the items read with
    verdicts and no gold, where the record has no count of its own; `transfer`: the sources, the rows without
    transfer and the transfer's record."""
    from .version import __version__

    count = fit.unlabeled_items if fit.unlabeled_items is not UNSET else UNSET if unlabeled is None else unlabeled
    sources, without, record = transfer if transfer is not None else (UNSET, UNSET, UNSET)
    return fit_document_type()(
        schema=SCHEMA, command=command, tool_version=__version__, dataset=name, source=source, items=table.items,
        unlabeled_items=count, judges=table.max_judges, skipped_lines=skipped, seed=seed,
        histogram=table.histogram_by_judges(), method=fit.method, method_description=fit.method_description,
        settings=fit.settings, model=fit.model, baselines=fit.baselines, interval=fit.interval, tie_rule=fit.tie_rule,
        error_rates=fit.error_rates, unlabeled=fit.unlabeled, sources=sources, without_transfer=without,
        transfer=record, gate=UNSET if gate is None else gate_result(gate))


def report_document(saved: Any, path: str, gate: GateCheck | None = None) -> Any:
    """A saved fit (saved_fit_type(), checked by savedfit) as `report` prints it (report_document_type()): the keys
    it has, in the fit document's order (the embedding last, without its vector), then where it came from and the
    gate."""
    shown = {f: getattr(saved, f) for f in saved.__struct_fields__ if f not in ("schema", "embedding")}
    emb = saved.embedding
    return report_document_type()(
        **{**shown, "command": "report", "source": path if saved.source is UNSET else saved.source,
           "seed": None if saved.seed is UNSET else saved.seed, "tie_rule": TIE_RULE if saved.tie_rule is UNSET else saved.tie_rule},
        embedding=emb if not emb else EmbeddingShown(model=emb.model, dimension=emb.dimension, texts=emb.texts),
        schema=SCHEMA, fitted_by="fit" if saved.command is UNSET else saved.command, saved_fit=path,
        gate=UNSET if gate is None else gate_result(gate))


def fields() -> tuple[str, ...]:
    """A saved fit's keys: what load_fit keeps."""
    return saved_fit_type().__struct_fields__


def json_schema() -> dict[str, Any]:
    """The published JSON schema of the fit document (docs/schema/fit.json): `fit`'s and `transfer`'s printed
    document or `report`'s (`anyOf`; report's embedding has no vector, the printed one's must); schemas.py adds
    the document of an input of `fit`'s batch that failed (failed_inputs.InputFailure)."""
    refs, defs = msgspec.json.schema_components([fit_document_type(), report_document_type()])
    schema = document_schema(fit_document_type(), f"BetaConform fit document ({SCHEMA}): fit, report and transfer -f json",
                             "fit_document")
    del schema["$ref"]
    return {**schema, "anyOf": list(refs), "$defs": defs}


def schema_text(schema: dict[str, Any] | None = None) -> str:
    """A schema as written in docs/schema/ (the fit document's by default): indented, keys in the types' order."""
    return json.dumps(json_schema() if schema is None else schema, indent=2) + "\n"


_BUILT = {"FitDocument": fit_document_type, "SavedFit": saved_fit_type, "ReportDocument": report_document_type,
          "ErrorRate": row_type}  # the types built at run time (defstruct), by the name each carries


def __getattr__(name: str) -> Any:
    """The types built at run time by their names, as pickle looks a class up (module, then name): a result holding
    a fit document pickles and unpickles (a notebook's cache, multiprocessing)."""
    if name in _BUILT:
        return _BUILT[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
