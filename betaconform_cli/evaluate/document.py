"""`evaluate`'s document (schema betaconform-evaluate/1) as types: results.Evaluation.document builds it, the report
encodes it, and docs/schema/evaluate.json is generated from it (`make schema`).

Margins, standard errors and estimates are fractions that may be undefined (a standard error from one draw, an
actual error where some item has too few judges): NaN in the structure, null in the JSON, so they are typed
`float | None`. A key that only some documents have (adaptive runs' samples, the per-run margins of --per-run, the
rule or transfer settings) is UNSET where it is absent, so the JSON keeps exactly its keys in their order."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType

from ..document_types import Count, K, Level

Number = float | None  # NaN (null in the JSON) where undefined


class MethodResult(Struct, kw_only=True, frozen=True):
    """One estimator on one dataset at one condition, over the draws."""

    method: str
    margin_mean: Number
    margin_sd: Number
    margin_se: Number
    margin_by_k: list[Number]
    estimate_mean: list[Number]
    estimate_sd: list[Number]
    coverage: Number
    coverage_by_k: list[Number] | None
    width_mean: Number


class CellResult(Struct, kw_only=True, frozen=True):
    """One dataset at one r (fixed r) or one rule setting (adaptive: `r` is null, `samples` each run's)."""

    dataset: str
    items: Count
    judges: Count
    r: Count | None
    condition: str
    runs: Count
    margin_ks: list[Count]
    actual: list[Number]
    not_converged_fits: Count
    samples: list[Count] | UnsetType = UNSET
    samples_mean: Number | UnsetType = UNSET
    samples_sd: Number | UnsetType = UNSET
    stopped: Count | None | UnsetType = UNSET
    methods: list[MethodResult]
    margins_per_run: dict[str, list[Number]] | UnsetType = UNSET


class AverageResult(Struct, kw_only=True, frozen=True):
    """One estimator at one condition averaged over the datasets, and its paired difference from the default."""

    method: str
    condition: str
    datasets: Count
    margin_mean: Number
    margin_se: Number
    diff_vs_default: Number
    diff_se: Number
    default_wins: Count | None


class SkippedCell(Struct, kw_only=True, frozen=True):
    dataset: str
    items: Count
    r: Count
    reason: str


class EvaluateSettingsUsed(Struct, kw_only=True, frozen=True):
    """The settings that decide an evaluation's numbers (evaluate.settings.EvaluateSettings), the seed aside."""

    sizes: list[Count]
    runs: Count
    methods: list[str]
    ks: list[K]
    confidence_level: Level
    n_draws: Count


class IntervalUsed(Struct, kw_only=True, frozen=True):
    method: str
    confidence_level: Level


class EvaluateDocument(Struct, kw_only=True, frozen=True):
    """An evaluation: its settings, the per-condition averages over datasets, and each dataset's cells."""

    schema: Literal["betaconform-evaluate/1"]
    command: Literal["evaluate"]
    mode: str
    rule: dict[str, Any] | UnsetType = UNSET  # adaptive: the stopping rule's settings
    transfer: dict[str, Any] | UnsetType = UNSET  # leave-one-out transfer: its settings
    tool_version: str
    seed: Count
    settings: EvaluateSettingsUsed
    margin_definition: str
    tie_rule: str
    interval: IntervalUsed
    skipped: list[SkippedCell]
    averages: list[AverageResult]
    cells: list[CellResult]
