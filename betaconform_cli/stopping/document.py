"""`sample`'s documents (schema betaconform/1) as types, published in docs/schema/sample.json (`make schema`).

--replay prints one document per run and a summary: `replay_documents` builds them (Structs) from the replays, and
report/sample.py encodes them; a run's error rows are the fit's (fit.ErrorRow.document: fit_document.row_type). The live document is the fit document (fit_document.fit_document_type) plus the live
keys (`live_document_type`, built by `live_document` from fit_document.fit_document's). Keys that only some documents have (the stopping rule's intervals, the
pool's verdicts) are UNSET, or absent, where they are absent, so the JSON keeps exactly its keys in their order."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType

from ..document_types import Count, Fraction, K, document_schema
from ..fit_document import fit_document_type, row_type

if TYPE_CHECKING:
    from .rules import Rule

Json = Any  # a rule's own settings (rules.Rule.describe: each rule has its own)


class Actual(Struct, kw_only=True, frozen=True):
    """The pool's actual majority error at k (null where some item has too few judges)."""

    k: K
    error: Fraction | None


class StoppingInterval(Struct, kw_only=True, frozen=True):
    """The interval the rule watched at k when it decided (the precision rule's; the pool check adds the estimate)."""

    k: K
    low: Fraction
    high: Fraction
    estimate: Fraction | UnsetType = UNSET


class MeanSd(Struct, kw_only=True, frozen=True):
    mean: float | None
    sd: float | None


class Summary(Struct, kw_only=True, frozen=True):
    runs: Count
    stopped: Count
    samples: MeanSd
    margin: MeanSd


class ReplaySummary(Struct, kw_only=True, frozen=True):
    """--replay's last document: samples and margins over the runs."""

    schema: Literal["betaconform/1"]
    command: Literal["sample"]
    mode: Literal["replay"]
    summary: Summary
    dataset: str
    rule: str
    rule_settings: dict[str, Json]
    theoretical_samples: Count | None
    seed: Count


_RULE = [("rule", str), ("rule_settings", dict[str, Json]), ("theoretical_samples", Count | None)]


@functools.cache
def _run_type(row: type[Struct]) -> type[Struct]:
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [
        ("schema", Literal["betaconform/1"]), ("command", Literal["sample"]), ("mode", Literal["replay"]),
        ("dataset", str), ("source", str), ("pool_items", Count), ("seed", Count), *_RULE,
        ("run", Count), ("stopped", bool), ("samples", Count), ("labeled_ids", list[str | None]),
        ("statistic", float | None), ("error_rates", list[row]),  # type: ignore[valid-type]
        ("actual", list[Actual]), ("margin", float | None),
        ("stopping_intervals", list[StoppingInterval] | UnsetType, UNSET),
    ]
    return msgspec.defstruct("ReplayRunDocument", fields, kw_only=True, frozen=True, module=__name__)


def run_type() -> type[Struct]:
    """One --replay run's document: where the rule stopped, the fit there, the pool's actual error (ReplayRun)."""
    return _run_type(row_type())


class PoolVerdicts(Struct, kw_only=True, frozen=True):
    """Whether the live decision used the pool's verdicts (the vote split), and if not why."""

    used: bool
    method: str | UnsetType = UNSET
    reason: str
    labeled_items: Count | UnsetType = UNSET
    unlabeled_items: Count | UnsetType = UNSET
    half_width: float | None | UnsetType = UNSET
    at_k: K | None | UnsetType = UNSET
    monitoring_level: float | UnsetType = UNSET
    next_by: Literal["vote split", "random"]
    decided_by: str | UnsetType = UNSET


_LIVE: list[tuple[str, Any] | tuple[str, Any, Any]] = [
    ("command", Literal["sample"]), ("mode", Literal["live"]), *_RULE, ("stopped", bool),
    ("stopped_by", Literal["rule", "pool exhausted"] | None), ("samples", Count), ("stop_at", Count | None),
    ("more_needed", Count), ("statistic", float | None), ("labeled_ids", list[str | None]),
    ("pool_verdicts", PoolVerdicts | UnsetType, UNSET), ("stopping_intervals", list[StoppingInterval] | UnsetType, UNSET),
    ("message", str), ("next_ids", list[str | None]),
]  # in the order they print, after the fit document's keys


@functools.cache
def _live_type(fit: type[Struct]) -> type[Struct]:
    live = {f[0]: f for f in _LIVE}
    shared = [live[f.name] if f.name in live else (f.name, f.type) if f.required else (f.name, f.type, f.default)
              for f in msgspec.structs.fields(fit)]  # the fit document's keys, `command` narrowed in its place
    names = {f[0] for f in shared}
    return msgspec.defstruct("SampleLiveDocument", shared + [f for f in _LIVE if f[0] not in names],
                             kw_only=True, module=__name__)


def live_document_type() -> type[Struct]:
    """The live document (`sample` without --replay): the fit document of the labels so far, plus the decision."""
    return _live_type(fit_document_type())


def live_document(fit: Any, rule: Rule, decision: Any, check: Any, labeled_ids: list[str | None],
                  pool_unused: str | None, next_ids: list[str | None]) -> Any:
    """The live document: `fit` (fit_document.fit_document of the labels so far) plus the rule (its name, settings
    and Proposition 4.1's size), its decision (stopping.live.Decision), the pool check (`check`, or None)
    and the message; `pool_unused`: why the pool's verdicts were not used (None without a pool)."""
    if decision.stopped_by == "pool exhausted":
        message = f"stop: pool exhausted (r = {decision.samples}): every pool item is labeled and the target was missed"
    elif decision.stopped:
        message = f"stop: enough labels (r = {decision.samples})"
    else:
        message = f"continue: label about {decision.more} more"
    pool: Any = UNSET
    intervals: Any = UNSET
    if check is not None:
        est = check.estimate
        pool = PoolVerdicts(used=True, method=est.method, reason=est.reason, labeled_items=est.labeled_items,
                            unlabeled_items=est.unlabeled_items, half_width=decision.statistic, at_k=check.at_k,
                            monitoring_level=est.confidence_level, next_by="vote split",
                            decided_by="vote split" if est.used_unlabeled else "post-stratified by split")
        intervals = [StoppingInterval(k=r.k, low=r.low, high=r.high, estimate=r.estimate) for r in est.rows]
        message += f" (precision checked on all {est.labeled_items + est.unlabeled_items} pool items' verdicts)"
    else:
        if pool_unused is not None:
            pool = PoolVerdicts(used=False, reason=pool_unused, next_by="random")
        if "intervals" in decision.path.extra:  # the precision rule's, after the last label
            intervals = [StoppingInterval(k=k, low=float(lo[-1]), high=float(hi[-1]))
                         for k, (lo, hi) in decision.path.extra["intervals"].items()]
    fields = {f: getattr(fit, f) for f in fit.__struct_fields__}
    return live_document_type()(**fields, mode="live", rule=rule.name, rule_settings=rule.describe(),
                                theoretical_samples=rule.theoretical_samples(), stopped=decision.stopped,
                                stopped_by=decision.stopped_by, samples=decision.samples, stop_at=decision.stop_at,
                                more_needed=decision.more, statistic=decision.statistic, labeled_ids=labeled_ids,
                                pool_verdicts=pool, stopping_intervals=intervals, message=message, next_ids=next_ids)


def replay_documents(dataset: str, source: str, pool_items: int, seed: int, rule: Rule,
                     runs: list[Any], summary: Summary) -> tuple[tuple[Struct, ...], ReplaySummary]:
    """--replay's documents: one per run (`runs`: replay.ReplayRun, which imports this module; `rule`: its name,
    settings and Proposition 4.1's size), and the summary (stopping.replay.summarize)."""
    run_doc = run_type()
    settings, size = rule.describe(), rule.theoretical_samples()
    docs = tuple(run_doc(
        schema="betaconform/1", command="sample", mode="replay", dataset=dataset, source=source, pool_items=pool_items,
        seed=seed, rule=rule.name, rule_settings=settings, theoretical_samples=size, run=r.run, stopped=r.stopped, samples=r.samples, labeled_ids=r.labeled_ids,
        statistic=r.statistic, error_rates=[e.document() for e in r.result.rows],
        actual=[Actual(k=k, error=v) for k, v in r.actual.items()], margin=r.margin,
        stopping_intervals=UNSET if r.intervals is None else [StoppingInterval(k=k, low=lo, high=hi) for k, (lo, hi) in r.intervals.items()],
    ) for r in runs)
    last = ReplaySummary(schema="betaconform/1", command="sample", mode="replay",
                         summary=summary, dataset=dataset, rule=rule.name, rule_settings=settings,
                         theoretical_samples=size, seed=seed)
    return docs, last


def sample_type(doc: Any) -> type[Struct]:
    """Which of sample's three documents `doc` (plain values) is: a live decision, a replay's summary, or a run."""
    if doc.get("mode") == "live":
        return live_document_type()
    return ReplaySummary if "summary" in doc else run_type()


def sample_schema(title: str) -> dict[str, Any]:
    """docs/schema/sample.json: a run of --replay, its summary, or the live document (`anyOf`)."""
    types = [run_type(), ReplaySummary, live_document_type()]
    refs, defs = msgspec.json.schema_components(types)
    schema: dict[str, Any] = document_schema(ReplaySummary, title, "stopping/document")
    del schema["$ref"]
    return {**schema, "anyOf": list(refs), "$defs": defs}


def __getattr__(name: str) -> Any:
    """The documents built at run time by their names, as pickle looks a class up: a sample result pickles."""
    built = {"ReplayRunDocument": run_type, "SampleLiveDocument": live_document_type}
    if name in built:
        return built[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
