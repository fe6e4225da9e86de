"""An evaluation's results: per (dataset, r or rule setting) cells of per-draw estimates, and their summaries."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np
from msgspec.structs import replace

from ..mixtures import error_margin
from ..settings import TIE_RULE
from ..version import __version__
from .document import (
    AverageResult,
    CellResult,
    EvaluateDocument,
    EvaluateSettingsUsed,
    IntervalUsed,
    MethodResult,
    SkippedCell,
)
from .settings import MARGIN_DEFINITION, EvaluateSettings


def _se(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


@dataclass(frozen=True)
class MethodSummary:
    """One estimator on one dataset at one r, over the draws (fractions; margins in [0, 1])."""

    method: str
    margin_mean: float
    margin_sd: float
    margin_se: float
    margin_by_k: tuple[float | None, ...]
    estimate_mean: tuple[float | None, ...]
    estimate_sd: tuple[float | None, ...]
    coverage: float | None = None
    coverage_by_k: tuple[float | None, ...] | None = None
    width_mean: float | None = None

    def document(self) -> MethodResult:
        return MethodResult(
            method=self.method, margin_mean=self.margin_mean, margin_sd=self.margin_sd, margin_se=self.margin_se,
            margin_by_k=list(self.margin_by_k), estimate_mean=list(self.estimate_mean), estimate_sd=list(self.estimate_sd),
            coverage=self.coverage, coverage_by_k=None if self.coverage_by_k is None else list(self.coverage_by_k),
            width_mean=self.width_mean,
        )


@dataclass(frozen=True)
class CellDraws:
    """A cell's draws: estimates[run, method, k]; low/high[run, k] (the default's interval); the fits that did not
    converge."""

    estimates: np.ndarray = field(repr=False)
    low: np.ndarray = field(repr=False)
    high: np.ndarray = field(repr=False)
    not_converged: int = 0


@dataclass(frozen=True)
class CellFigure:
    """What the figures draw beside the errors: the whole dataset's histogram of correct judges, and the Binomial and
    MAP mixture pmfs fitted to the draws, averaged over them (empty where the draws' judges differ)."""

    histogram: tuple[int, ...] = ()
    pmf_binomial: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    pmf_mixture: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)


@dataclass(frozen=True)
class RuleRuns:
    """An adaptive cell's stopping setting ('xi=0.03'), the labels each run stopped at, and how many runs stopped."""

    condition: str
    samples: np.ndarray = field(repr=False)
    stopped: int


@dataclass(frozen=True)
class Cell:
    """One dataset at one number of labeled items r (or one stopping setting): the raw per-draw estimates and their
    summaries. actual[k]: the whole dataset's error (NaN where undefined); `rule`: None at a fixed r."""

    dataset: str
    items: int
    judges: int
    size: int
    methods: tuple[str, ...]
    ks: tuple[int, ...]
    confidence_level: float
    actual: np.ndarray = field(repr=False)
    draws: CellDraws = field(repr=False)
    figure: CellFigure = CellFigure()
    rule: RuleRuns | None = None

    @property
    def key(self) -> str:
        """'r=10' (fixed r) or the stopping rule's setting, e.g. 'xi=0.03' (adaptive)."""
        return self.rule.condition if self.rule is not None else f"r={self.size}"

    @property
    def title(self) -> str:
        if self.rule is None:
            return f"r = {self.size}"
        return f"{self.rule.condition.replace('=', ' = ')}, mean r = {float(np.mean(self.rule.samples)):.0f}"

    @property
    def runs(self) -> int:
        return int(self.draws.estimates.shape[0])

    @property
    def margin_ks(self) -> tuple[int, ...]:
        """The odd k over which the margin is averaged."""
        return tuple(k for i, k in enumerate(self.ks) if k % 2 == 1 and np.isfinite(self.actual[i]))

    def _odd(self) -> np.ndarray:
        return np.array([k % 2 == 1 and np.isfinite(a) for k, a in zip(self.ks, self.actual)])

    def margins(self) -> np.ndarray:
        """margins[run, method]: the error margin of each draw (a fraction)."""
        return error_margin(self.draws.estimates, self.actual, self.ks)

    def summary(self, method: str) -> MethodSummary:
        j = self.methods.index(method)
        m = self.margins()[:, j]
        e = self.draws.estimates[:, j, :]
        defined = np.isfinite(self.actual)
        by_k = np.where(defined, np.abs(e - self.actual).mean(axis=0), np.nan)
        cover = cover_k = width = None
        if method == "default":
            odd = self._odd()
            low, high = self.draws.low, self.draws.high
            inside = (low <= self.actual + 1e-12) & (self.actual - 1e-12 <= high)
            cover_k = tuple(_num(x) for x in np.where(defined, inside.mean(axis=0), np.nan))
            cover = float(inside[:, odd].mean())
            width = float((high - low)[:, odd].mean())
        return MethodSummary(
            method=method,
            margin_mean=float(m.mean()),
            margin_sd=float(np.std(m, ddof=1)),
            margin_se=_se(m),
            margin_by_k=tuple(_num(x) for x in by_k),
            estimate_mean=tuple(_num(x) for x in e.mean(axis=0)),
            estimate_sd=tuple(_num(x) for x in e.std(axis=0, ddof=1)),
            coverage=cover,
            coverage_by_k=cover_k,
            width_mean=width,
        )

    def summaries(self) -> tuple[MethodSummary, ...]:
        return tuple(self.summary(m) for m in self.methods)

    def document(self, per_run: bool = False) -> CellResult:
        cell = CellResult(
            dataset=self.dataset, items=self.items, judges=self.judges, r=self.size if self.rule is None else None,
            condition=self.key, runs=self.runs, margin_ks=list(self.margin_ks), actual=[_num(a) for a in self.actual],
            not_converged_fits=self.draws.not_converged, methods=[s.document() for s in self.summaries()],
        )
        if self.rule is not None:
            samples = self.rule.samples
            cell = replace(cell, samples=[int(x) for x in samples], samples_mean=float(np.mean(samples)),
                           samples_sd=float(np.std(samples, ddof=1)), stopped=self.rule.stopped)
        if per_run:
            cell = replace(cell, margins_per_run={m: [float(x) for x in self.margins()[:, j]] for j, m in enumerate(self.methods)})
        return cell


@dataclass(frozen=True)
class AverageRow:
    """One estimator at one r, averaged over the evaluated datasets (each dataset weighs the same).

    margin_se: standard error of that average from the draws (sqrt(sum se_d^2) / D); diff_*: the paired
    difference margin(method) - margin(default), its standard error, and on how many datasets the default
    had the lower mean margin.
    """

    method: str
    condition: str
    datasets: int
    margin_mean: float
    margin_se: float
    diff_vs_default: float | None
    diff_se: float | None
    default_wins: int | None

    def document(self) -> AverageResult:
        return AverageResult(method=self.method, condition=self.condition, datasets=self.datasets, margin_mean=self.margin_mean,
                             margin_se=self.margin_se, diff_vs_default=self.diff_vs_default, diff_se=self.diff_se,
                             default_wins=self.default_wins)


@dataclass(frozen=True)
class Skipped:
    dataset: str
    items: int
    size: int
    reason: str = ""

    @property
    def why(self) -> str:
        return self.reason or "fewer than r + 1 items"

    def document(self) -> SkippedCell:
        return SkippedCell(dataset=self.dataset, items=self.items, r=self.size, reason=self.why)


@dataclass(frozen=True)
class Evaluation:
    """The result of a fixed-r evaluation."""

    settings: EvaluateSettings
    seed: int
    cells: tuple[Cell, ...]
    skipped: tuple[Skipped, ...]
    mode: str = "fixed-r"
    conditions: tuple[str, ...] = ()
    rule: dict[str, Any] | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        """The table groups in order: 'r=10', ... (fixed r) or the rule settings (adaptive)."""
        return self.conditions if self.mode == "adaptive" else tuple(f"r={r}" for r in self.settings.sizes)

    @property
    def datasets(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for c in self.cells:
            seen.setdefault(c.dataset, None)
        for s in self.skipped:
            seen.setdefault(s.dataset, None)
        return tuple(seen)

    def cell(self, dataset: str, key: int | str) -> Cell | None:
        key = f"r={key}" if isinstance(key, int) else key
        return next((c for c in self.cells if c.dataset == dataset and c.key == key), None)

    def averages(self, key: int | str) -> tuple[AverageRow, ...]:
        key = f"r={key}" if isinstance(key, int) else key
        cells = [c for c in self.cells if c.key == key]
        if not cells:
            return ()
        methods = self.settings.methods
        out = []
        for j, m in enumerate(methods):
            means = np.array([c.margins()[:, j].mean() for c in cells])
            ses = np.array([_se(c.margins()[:, j]) for c in cells])
            diff = diff_se = wins = None
            if "default" in methods and m != "default":
                d0 = methods.index("default")
                diffs = [c.margins()[:, j] - c.margins()[:, d0] for c in cells]
                diff = float(np.mean([d.mean() for d in diffs]))
                diff_se = float(math.sqrt(sum(_se(d) ** 2 for d in diffs)) / len(diffs))
                wins = int(sum(d.mean() > 0 for d in diffs))
            out.append(
                AverageRow(
                    method=m,
                    condition=key,
                    datasets=len(cells),
                    margin_mean=float(means.mean()),
                    margin_se=float(math.sqrt(float((ses**2).sum())) / len(cells)),
                    diff_vs_default=diff,
                    diff_se=diff_se,
                    default_wins=wins,
                )
            )
        return tuple(out)

    def settings_label(self) -> str:
        return str(self.rule.get("rule", "stopping")) if self.rule else "stopping"

    def document(self, per_run: bool = False) -> EvaluateDocument:
        """The JSON document (schema betaconform-evaluate/1; docs/schema/evaluate.json); `per_run` adds each cell's
        per-run margins."""
        doc = EvaluateDocument(
            schema="betaconform-evaluate/1", command="evaluate", mode=self.mode, tool_version=__version__, seed=self.seed,
            settings=_settings(self.settings), margin_definition=MARGIN_DEFINITION, tie_rule=TIE_RULE,
            interval=IntervalUsed(method="default", confidence_level=self.settings.confidence_level),
            skipped=[s.document() for s in self.skipped],
            averages=[a.document() for key in self.keys for a in self.averages(key)],
            cells=[c.document(per_run) for c in self.cells],
        )
        if self.rule is None:
            return doc
        return replace(doc, transfer=self.rule) if self.mode == "transfer" else replace(doc, rule=self.rule)

    def to_dict(self, per_run: bool = False) -> dict[str, Any]:
        """The document as plain values (what the JSON holds; NaN where it holds null)."""
        out: dict[str, Any] = msgspec.to_builtins(self.document(per_run))
        return out


def _settings(s: EvaluateSettings) -> EvaluateSettingsUsed:
    """The document's record of the settings, read from them."""
    return EvaluateSettingsUsed(sizes=list(s.sizes), runs=s.runs, methods=list(s.methods), ks=list(s.ks),
                                confidence_level=s.confidence_level, n_draws=s.n_draws)
