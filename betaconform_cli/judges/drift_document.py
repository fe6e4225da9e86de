"""`drift`'s document (schema betaconform/1) as types: api.drift builds it from judges.drift.DriftResult
(`drift_document`), report/drift.py encodes it, and docs/schema/drift.json is generated from it (`make schema`).

`gate` is UNSET without --fail-on-drift, so that the JSON keeps exactly its keys."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from ..document_types import Count, Fraction, Level
from ..version import __version__
from .drift import Accuracy, Change, DriftResult, DriftRow

Signed = Annotated[float, Meta(ge=-1, le=1, description="a difference of two fractions, from -1 to 1")]
Probability = Annotated[float, Meta(ge=0, le=1)]

METHOD = ("labels: accuracy on each run's labeled items; the change new - old with Newcombe's hybrid score interval "
          "(paired, method 10, on the items labeled alike in both runs when they are at least half of the smaller "
          "run's labeled items; else for independent samples), simultaneous over the judges and the panel (Bonferroni). "
          "Label-free: a permutation test per judge (its verdict and whether it agrees with the other judges' "
          "plurality) and for the panel (whole verdict patterns), Pearson's chi-square of run x category, items "
          "permuted between the runs (shared items swapped with their twin), Holm over the judges and the panel. The "
          "gate's false-alarm rate 1 - level is split in half between the two parts when both runs have labels.")


class RunAccuracy(Struct, kw_only=True, frozen=True):
    """Accuracy on one run's labeled items where the judge (or the panel) gave a verdict; null without any."""

    right: Count
    items: Count
    accuracy: Fraction | None


class LabelChange(Struct, kw_only=True, frozen=True):
    """new - old accuracy and its simultaneous interval (null: no items to compare)."""

    old: RunAccuracy
    new: RunAccuracy
    paired: bool
    pairs: Count  # shared items the paired interval used (0 when unpaired)
    change: Signed | None
    low: Signed | None
    high: Signed | None
    drifted: bool


class PatternTestResult(Struct, kw_only=True, frozen=True):
    """The label-free permutation test: Pearson's chi-square, its permutation p-value and Holm's adjusted one."""

    statistic: Annotated[float, Meta(ge=0)]
    p_value: Probability
    p_holm: Probability
    items_old: Count
    items_new: Count
    drifted: bool


class DriftRowResult(Struct, kw_only=True, frozen=True):
    """One judge, or the panel (name "panel": the plurality of all judges)."""

    name: str
    kind: Literal["judge", "panel"]
    labels: LabelChange
    patterns: PatternTestResult
    drifted: bool


class DriftGateResult(Struct, kw_only=True, frozen=True):
    """--fail-on-drift: passed when nothing drifted; `drifted` names what did."""

    max_change: Annotated[float, Meta(ge=0, lt=1)]
    drifted: list[str]
    passed: bool


class RunSummary(Struct, kw_only=True, frozen=True):
    source: str
    items: Count
    labeled_items: Count


class DriftSettings(Struct, kw_only=True, frozen=True):
    confidence_level: Level
    false_alarm: Annotated[float, Meta(gt=0, lt=1, description="1 - confidence level: the gate's family-wise rate")]
    interval_level: Level  # each interval's own level (Bonferroni over the judges and the panel)
    test_alpha: Annotated[float, Meta(gt=0, lt=1, description="the label-free test's family-wise level (Holm)")]
    max_change: Annotated[float, Meta(ge=0, lt=1)]
    permutations: Count
    seed: Count


class DriftDocument(Struct, kw_only=True, frozen=True):
    """Two runs of the same judges: per judge and for the panel, the change of accuracy on the labels and the
    label-free test of their vote patterns."""

    schema: Literal["betaconform/1"]
    command: Literal["drift"]
    version: str
    dataset: str  # "old -> new"
    runs: list[RunSummary]  # old, new
    shared_items: Count
    shared_labeled: Count  # shared items labeled alike in both runs
    paired: bool
    settings: DriftSettings
    method: str
    rows: list[DriftRowResult]
    gate: DriftGateResult | UnsetType = UNSET


def _accuracy(a: Accuracy) -> RunAccuracy:
    return RunAccuracy(right=a.right, items=a.items, accuracy=a.value)


def _labels(ch: Change, drifted: bool) -> LabelChange:
    return LabelChange(old=_accuracy(ch.old), new=_accuracy(ch.new), paired=ch.paired, pairs=ch.pairs,
                       change=ch.estimate, low=ch.low, high=ch.high, drifted=drifted)


def _row(r: DriftRow, panel: bool) -> DriftRowResult:
    t = r.test
    patterns = PatternTestResult(statistic=t.statistic, p_value=t.p_value, p_holm=t.p_holm, items_old=t.items[0],
                                 items_new=t.items[1], drifted=r.drifted_patterns)
    return DriftRowResult(name=r.name, kind="panel" if panel else "judge", labels=_labels(r.change, r.drifted_labels),
                          patterns=patterns, drifted=r.drifted)


def drift_document(runs: tuple[RunSummary, RunSummary], names: tuple[str, str], result: DriftResult,
                   settings: DriftSettings, gate: bool) -> DriftDocument:
    """The document of one comparison old -> new; with the gate's outcome when `gate`."""
    rows = [_row(r, i == len(result.rows) - 1) for i, r in enumerate(result.rows)]
    drifted = [r.name for r in rows if r.drifted]
    verdict = DriftGateResult(max_change=settings.max_change, drifted=drifted, passed=not drifted) if gate else UNSET
    return DriftDocument(schema="betaconform/1", command="drift", version=__version__, dataset=f"{names[0]} -> {names[1]}",
                         runs=list(runs), shared_items=result.shared_items, shared_labeled=result.shared_labeled,
                         paired=result.paired, settings=settings, method=METHOD, rows=rows, gate=verdict)
