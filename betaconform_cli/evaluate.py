"""`evaluate`: the paper's accuracy experiments on fully-labeled judge data.

Fixed-r mode (the paper's figures 3-4 and the accuracy tables of METHOD.md): for each dataset and each
number of labeled items r, `runs` paired random draws of r items *without replacement*; on every draw every
estimator is fitted on the same items and compared with the whole dataset's actual error (exact
hypergeometric, `fit.empirical_errors`). The error margin of a draw is the mean over odd k (those k for which
the actual error is defined) of |estimate - actual| (METHOD.md). A dataset with fewer than r + 1 items is
skipped at that r (a draw of all items would have no sampling error) and listed in `Evaluation.skipped`.

Estimators (`ESTIMATORS`):
- default:       the default estimate of `fit.analyse` (Dirichlet posterior centred on the MAP mixture), with
                 its interval (coverage and width are reported for it);
- plugin:        the MAP mixture of the same fit, plug-in;
- paper:         the paper's EM as printed (`fit.fit_paper_em`), plug-in;
- binomial:      Bin(k, p) with the pooled single-judge accuracy;
- beta_binomial: a single Beta-Binomial (MAP);
- empirical:     the drawn items' own exact majority error.

Randomness: draw `run` of dataset `name` at size r uses `numpy.random.default_rng([seed, crc32(name), r, run])`
for the draw, the fit's random starts and the interval, so a dataset's numbers do not depend on which other
datasets or sizes are evaluated with it.

Adaptive mode (`evaluate_adaptive`, the paper's Tables 1 and 3 and Fig. 6): each run labels the dataset in a
random order until a stopping rule (`stopping.py`) fires, then the same estimators on the labeled items; the
samples used are recorded. Transfer mode (`evaluate_transfer`, Table 2): leave-one-out inside each group of
datasets, no transfer against the default and the paper's transfer (`transfer.py`).

Pure: no printing; progress is reported through a callback. Also the format-neutral renderings (table views,
JSON, CSV, Markdown) of an `Evaluation`.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import orjson

from . import __version__
from .data import CountTable
from .distributions import TIE_RULE, error_rates
from .errors import FitWarning, UsageError
from .fit import FitSettings, analyse, empirical_errors, fit_binomial, fit_paper_em
from .report import TableView

ESTIMATORS = ("default", "plugin", "paper", "binomial", "beta_binomial", "empirical")
TRANSFER_METHODS = ("default", "transfer", "paper_transfer", "empirical")
ESTIMATOR_LABELS = {
    "transfer": "transfer",
    "paper_transfer": "paper transfer",
    "default": "default",
    "plugin": "MAP mixture",
    "paper": "paper EM",
    "binomial": "Binomial",
    "beta_binomial": "single BB",
    "empirical": "empirical",
}
SCHEMA = "betaconform-evaluate/1"
MARGIN_DEFINITION = (
    "error margin: mean over odd k (k <= every item's number of judges) of |estimate - actual|, in percentage "
    "points; actual = the whole dataset's exact (hypergeometric) majority error; draws of r items without "
    "replacement, the same items for every estimator"
)

Progress = Callable[[int, int, str], None]


MAX_RUNS = 100_000  # draws per dataset and setting (the paper uses 30)


@dataclass(frozen=True)
class EvaluateSettings:
    """Everything that decides the numbers of an evaluation (the seed aside)."""

    sizes: tuple[int, ...] = (10, 30, 56)
    runs: int = 30
    methods: tuple[str, ...] = ESTIMATORS
    ks: tuple[int, ...] = tuple(range(1, 12))
    confidence_level: float = 0.9
    n_draws: int = FitSettings().n_draws  # the same interval as `fit`

    def __post_init__(self) -> None:
        if not self.sizes or any(not isinstance(r, int) or r < 2 for r in self.sizes):
            raise UsageError(f"--r: numbers of labeled items must be integers >= 2; got {list(self.sizes)}")
        if not isinstance(self.runs, int) or self.runs < 2:
            raise UsageError(f"--runs must be an integer >= 2 (a standard error needs two draws); got {self.runs}")
        if self.runs > MAX_RUNS:  # the per-run arrays are allocated up front: 1e11 runs asked numpy for 48 TiB
            raise UsageError(f"--runs must be at most {MAX_RUNS}; got {self.runs}")
        if not self.methods:
            raise UsageError("--methods: name at least one estimator")
        bad = [m for m in self.methods if m not in ESTIMATORS and m not in TRANSFER_METHODS]
        if bad:
            raise UsageError(f"--methods: unknown estimator {bad[0]!r}; choose from {', '.join(ESTIMATORS)}")
        if len(set(self.methods)) != len(self.methods):
            raise UsageError(f"--methods: an estimator is named twice in {list(self.methods)}")
        if not any(k % 2 == 1 for k in self.ks):
            raise UsageError(f"--ks: the error margin averages over odd k; got no odd k in {list(self.ks)}")
        # the fit's own checks (ks range, confidence level, n_draws)
        self.fit_settings()

    def fit_settings(self) -> FitSettings:
        return FitSettings(
            method="default", ks=self.ks, confidence_level=self.confidence_level, n_draws=self.n_draws
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "sizes": list(self.sizes),
            "runs": self.runs,
            "methods": list(self.methods),
            "ks": list(self.ks),
            "confidence_level": self.confidence_level,
            "n_draws": self.n_draws,
        }


def _check_plain_methods(settings: EvaluateSettings) -> None:
    extra = [m for m in settings.methods if m not in ESTIMATORS]
    if extra:
        raise UsageError(f"--methods: {extra[0]} exists only in transfer mode (--transfer)")


def run_rng(seed: int, dataset: str, size: int, run: int) -> np.random.Generator:
    """The generator of one draw: independent of the other datasets and sizes evaluated alongside."""
    return np.random.default_rng([seed, zlib.crc32(dataset.encode("utf-8")), size, run])


def item_arrays(table: CountTable) -> tuple[np.ndarray, np.ndarray]:
    """(judges, correct) per item, in a fixed order (items sorted by cell)."""
    big_k, s, n = table.cells()
    return np.repeat(big_k, n), np.repeat(s, n)


def draw_table(judges: np.ndarray, correct: np.ndarray, size: int, rng: np.random.Generator) -> CountTable:
    """r items drawn without replacement."""
    idx = rng.choice(len(judges), size=size, replace=False)
    return CountTable.from_pairs(judges[idx], correct[idx])


def estimate_draw(
    sample: CountTable, settings: EvaluateSettings, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Every requested estimator on one drawn sample.

    Returns (estimates[method, k], low[k], high[k], binomial pmf, mixture pmf, non-converged fits); the pmfs
    are at the sample's largest number of judges. Entries an estimator cannot give are NaN.
    """
    ks = settings.ks
    est = np.full((len(settings.methods), len(ks)), np.nan)
    low = np.full(len(ks), np.nan)
    high = np.full(len(ks), np.nan)
    top = sample.max_judges
    pmf_bin = np.full(top + 1, np.nan)
    pmf_mix = np.full(top + 1, np.nan)
    columns: dict[str, list[float]] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FitWarning)
        if {"default", "plugin", "beta_binomial"} & set(settings.methods):
            result = analyse(sample, settings.fit_settings(), rng)
            columns["default"] = [r.estimate for r in result.rows]
            columns["plugin"] = [r.mixture for r in result.rows]
            columns["beta_binomial"] = [r.beta_binomial for r in result.rows]
            low = np.array([r.low for r in result.rows])
            high = np.array([r.high for r in result.rows])
            pmf_mix = result.fit.mixture.pmf(top)
        if "paper" in settings.methods:
            # the same numbers as analyse(method="paper").estimate, without its unused baselines and interval
            paper = error_rates(fit_paper_em(sample).mixture, ks)
            columns["paper"] = [paper[k] for k in ks]
    # the same numbers as analyse's binomial and empirical columns, without a mixture fit
    binomial = fit_binomial(sample)
    bin_err = error_rates(binomial, ks)
    columns["binomial"] = [bin_err[k] for k in ks]
    pmf_bin = binomial.pmf(top)
    emp = empirical_errors(sample, ks)
    columns["empirical"] = [np.nan if emp[k] is None else float(emp[k]) for k in ks]  # type: ignore[arg-type]
    for i, m in enumerate(settings.methods):
        est[i] = columns[m]
    failures = sum(1 for w in caught if issubclass(w.category, FitWarning))
    return est, low, high, np.asarray(pmf_bin), np.asarray(pmf_mix), failures


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "margin_mean": self.margin_mean,
            "margin_sd": self.margin_sd,
            "margin_se": self.margin_se,
            "margin_by_k": list(self.margin_by_k),
            "estimate_mean": list(self.estimate_mean),
            "estimate_sd": list(self.estimate_sd),
            "coverage": self.coverage,
            "coverage_by_k": None if self.coverage_by_k is None else list(self.coverage_by_k),
            "width_mean": self.width_mean,
        }


@dataclass(frozen=True)
class Cell:
    """One dataset at one number of labeled items r: the raw per-draw estimates and their summaries.

    estimates[run, method, k]; low/high[run, k] (the default's interval); actual[k] (NaN where undefined).
    """

    dataset: str
    items: int
    judges: int
    size: int
    methods: tuple[str, ...]
    ks: tuple[int, ...]
    confidence_level: float
    actual: np.ndarray = field(repr=False)
    estimates: np.ndarray = field(repr=False)
    low: np.ndarray = field(repr=False)
    high: np.ndarray = field(repr=False)
    histogram: tuple[int, ...] = ()
    pmf_binomial: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    pmf_mixture: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    not_converged: int = 0
    condition: str = ""
    samples: np.ndarray | None = field(default=None, repr=False)
    stopped: int | None = None

    @property
    def key(self) -> str:
        """'r=10' (fixed r) or the stopping rule's setting, e.g. 'xi=0.03' (adaptive)."""
        return self.condition or f"r={self.size}"

    @property
    def title(self) -> str:
        if self.samples is None:
            return f"r = {self.size}"
        return f"{self.condition.replace('=', ' = ')}, mean r = {float(np.mean(self.samples)):.0f}"

    @property
    def runs(self) -> int:
        return int(self.estimates.shape[0])

    @property
    def margin_ks(self) -> tuple[int, ...]:
        """The odd k over which the margin is averaged."""
        return tuple(k for i, k in enumerate(self.ks) if k % 2 == 1 and np.isfinite(self.actual[i]))

    def _odd(self) -> np.ndarray:
        return np.array([k % 2 == 1 and np.isfinite(a) for k, a in zip(self.ks, self.actual)])

    def margins(self) -> np.ndarray:
        """margins[run, method]: the error margin of each draw (a fraction)."""
        odd = self._odd()
        margins: np.ndarray = np.abs(self.estimates[:, :, odd] - self.actual[odd]).mean(axis=2)
        return margins

    def summary(self, method: str) -> MethodSummary:
        j = self.methods.index(method)
        m = self.margins()[:, j]
        e = self.estimates[:, j, :]
        defined = np.isfinite(self.actual)
        by_k = np.where(defined, np.abs(e - self.actual).mean(axis=0), np.nan)
        cover = cover_k = width = None
        if method == "default":
            odd = self._odd()
            inside = (self.low <= self.actual + 1e-12) & (self.actual - 1e-12 <= self.high)
            cover_k = tuple(_num(x) for x in np.where(defined, inside.mean(axis=0), np.nan))
            cover = float(inside[:, odd].mean())
            width = float((self.high - self.low)[:, odd].mean())
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

    def to_dict(self, per_run: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "dataset": self.dataset,
            "items": self.items,
            "judges": self.judges,
            "r": self.size if self.samples is None else None,
            "condition": self.key,
            "runs": self.runs,
            "margin_ks": list(self.margin_ks),
            "actual": [_num(a) for a in self.actual],
            "not_converged_fits": self.not_converged,
            **(
                {}
                if self.samples is None
                else {
                    "samples": [int(x) for x in self.samples],
                    "samples_mean": float(np.mean(self.samples)),
                    "samples_sd": float(np.std(self.samples, ddof=1)),
                    "stopped": self.stopped,
                }
            ),
            "methods": [s.to_dict() for s in self.summaries()],
        }
        if per_run:
            d["margins_per_run"] = {m: [float(x) for x in self.margins()[:, j]] for j, m in enumerate(self.methods)}
        return d


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "condition": self.condition,
            "datasets": self.datasets,
            "margin_mean": self.margin_mean,
            "margin_se": self.margin_se,
            "diff_vs_default": self.diff_vs_default,
            "diff_se": self.diff_se,
            "default_wins": self.default_wins,
        }


@dataclass(frozen=True)
class Skipped:
    dataset: str
    items: int
    size: int
    reason: str = ""

    @property
    def why(self) -> str:
        return self.reason or "fewer than r + 1 items"

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "items": self.items, "r": self.size, "reason": self.why}


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

    def to_dict(self, per_run: bool = False) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "command": "evaluate",
            "mode": self.mode,
            **({} if self.rule is None else {"transfer" if self.mode == "transfer" else "rule": self.rule}),
            "tool_version": __version__,
            "seed": self.seed,
            "settings": self.settings.to_dict(),
            "margin_definition": MARGIN_DEFINITION,
            "tie_rule": TIE_RULE,
            "interval": {"method": "default", "confidence_level": self.settings.confidence_level},
            "skipped": [s.to_dict() for s in self.skipped],
            "averages": [a.to_dict() for key in self.keys for a in self.averages(key)],
            "cells": [c.to_dict(per_run) for c in self.cells],
        }


def evaluate_table(
    name: str,
    table: CountTable,
    settings: EvaluateSettings,
    seed: int,
    progress: Progress | None = None,
    done: int = 0,
    total: int | None = None,
) -> tuple[list[Cell], list[Skipped]]:
    """All sizes of one dataset."""
    judges, correct = item_arrays(table)
    ks = settings.ks
    actual_d = empirical_errors(table, ks)
    actual = np.array([np.nan if actual_d[k] is None else actual_d[k] for k in ks])
    top = table.max_judges
    histogram = tuple(int(v) for v in table.counts[top, : top + 1])
    total = total if total is not None else settings.runs * len(settings.sizes)
    cells: list[Cell] = []
    skipped: list[Skipped] = []
    for size in settings.sizes:
        if table.items < size + 1:
            skipped.append(Skipped(name, table.items, size))
            done += settings.runs
            if progress is not None:
                progress(done, total, f"{name} r={size} skipped")
            continue
        draws = _Draws(settings, top)
        for run in range(settings.runs):
            rng = run_rng(seed, name, size, run)
            draws.add(run, draw_table(judges, correct, size, rng), rng)
            done += 1
            if progress is not None:
                progress(done, total, f"{name} r={size}")
        cells.append(draws.cell(name, table.items, size, actual, histogram))
    return cells, skipped


class _Draws:
    """The runs of one (dataset, size or stopping rule) cell as they are estimated; `cell` freezes them."""

    def __init__(self, settings: EvaluateSettings, top: int):
        runs, n_m, n_k = settings.runs, len(settings.methods), len(settings.ks)
        self.settings = settings
        self.top = top
        self.est = np.full((runs, n_m, n_k), np.nan)
        self.low = np.full((runs, n_k), np.nan)
        self.high = np.full((runs, n_k), np.nan)
        self.pmf_b = np.zeros(top + 1)
        self.pmf_m = np.zeros(top + 1)
        self.failures = 0

    def add(self, run: int, sample: CountTable, rng: np.random.Generator) -> None:
        e, lo, hi, pb, pm, f = estimate_draw(sample, self.settings, rng)
        self.est[run], self.low[run], self.high[run] = e, lo, hi
        if len(pb) == self.top + 1:
            self.pmf_b += pb / self.settings.runs
            self.pmf_m += pm / self.settings.runs
        self.failures += f

    def cell(self, name: str, items: int, size: int, actual: np.ndarray, histogram: tuple[int, ...], **extra: Any) -> Cell:
        return Cell(
            dataset=name,
            items=items,
            judges=self.top,
            size=size,
            methods=self.settings.methods,
            ks=self.settings.ks,
            confidence_level=self.settings.confidence_level,
            actual=actual,
            estimates=self.est,
            low=self.low,
            high=self.high,
            histogram=histogram,
            pmf_binomial=self.pmf_b,
            pmf_mixture=self.pmf_m,
            not_converged=self.failures,
            **extra,
        )


def single_threaded_blas() -> contextlib.AbstractContextManager[Any]:
    """Limit OpenBLAS to one thread while fitting.

    The fits are many tiny L-BFGS-B problems; with OpenBLAS's default thread pool on a loaded machine each
    call spin-waits on its threads: measured 21 s against 1.3 s for the same 5-draw evaluation on a 2-core
    machine under load. threadpoolctl ships with the scientific stack; without it nothing changes.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - depends on the environment
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[Any] = threadpool_limits(limits=1, user_api="blas")
    return limits


def evaluate(
    datasets: Sequence[tuple[str, CountTable]],
    settings: EvaluateSettings = EvaluateSettings(),
    seed: int = 0,
    progress: Progress | None = None,
) -> Evaluation:
    """Fixed-r evaluation of every dataset (name, full table) at every size in settings.sizes."""
    if seed < 0:
        raise UsageError(f"--seed must be a non-negative integer; got {seed}")
    names = [n for n, _ in datasets]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UsageError(f"two inputs are both named {dup!r}; rename one file")
    _check_plain_methods(settings)
    total = settings.runs * len(settings.sizes) * len(datasets)
    cells: list[Cell] = []
    skipped: list[Skipped] = []
    with single_threaded_blas():
        for i, (name, table) in enumerate(datasets):
            c, s = evaluate_table(name, table, settings, seed, progress, i * settings.runs * len(settings.sizes), total)
            cells.extend(c)
            skipped.extend(s)
    return Evaluation(settings=settings, seed=seed, cells=tuple(cells), skipped=tuple(skipped))


# --- adaptive mode: the stopping rules on random orders (the paper's Tables 1 and 3, Fig. 6) ------------


def evaluate_adaptive(
    datasets: Sequence[tuple[str, CountTable]],
    rules: Sequence[tuple[str, Any]],
    settings: EvaluateSettings = EvaluateSettings(),
    seed: int = 0,
    progress: Progress | None = None,
    rule_info: dict[str, Any] | None = None,
) -> Evaluation:
    """Each run labels the dataset in a random order until the rule stops (or the pool runs out), then every
    estimator is fitted on the items labeled so far, as in fixed-r mode; the samples used are recorded.

    rules: (condition label, rule) pairs, e.g. ('xi=0.03', ConformalRule(xi=0.03)); a rule is anything that
    `stopping.rule_path` accepts. settings.sizes is not used. Run `run` of condition c uses
    run_rng(seed, name, crc32(c), run) for the order, the rule and the fits.
    """
    from .stopping import rule_path

    _check_plain_methods(settings)
    if seed < 0:
        raise UsageError(f"--seed must be a non-negative integer; got {seed}")
    if not rules:
        raise UsageError("adaptive mode needs at least one rule setting")
    labels = [c for c, _ in rules]
    if len(set(labels)) != len(labels):
        raise UsageError(f"a stopping setting is given twice: {labels}")
    names = [n for n, _ in datasets]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UsageError(f"two inputs are both named {dup!r}; rename one file")
    ks = settings.ks
    total = settings.runs * len(rules) * len(datasets)
    done = 0
    cells: list[Cell] = []
    with single_threaded_blas():
        for name, table in datasets:
            judges, correct = item_arrays(table)
            n = len(judges)
            actual_d = empirical_errors(table, ks)
            actual = np.array([np.nan if actual_d[k] is None else actual_d[k] for k in ks])
            top = table.max_judges
            histogram = tuple(int(v) for v in table.counts[top, : top + 1])
            for label, rule in rules:
                draws = _Draws(settings, top)
                samples = np.zeros(settings.runs, dtype=np.int64)
                stopped = 0
                for run in range(settings.runs):
                    rng = run_rng(seed, name, zlib.crc32(label.encode("utf-8")), run)
                    order = rng.permutation(n)
                    j_run, c_run = judges[order], correct[order]
                    path = rule_path(rule, j_run, c_run, rng, pool_size=n)
                    r = int(path.stop_at) if path.stop_at is not None else n
                    stopped += path.stop_at is not None
                    samples[run] = r
                    draws.add(run, CountTable.from_pairs(j_run[:r], c_run[:r]), rng)
                    done += 1
                    if progress is not None:
                        progress(done, total, f"{name} {label}")
                cells.append(
                    draws.cell(
                        name, table.items, int(round(float(samples.mean()))), actual, histogram,
                        condition=label, samples=samples, stopped=stopped,
                    )
                )
    return Evaluation(
        settings=settings,
        seed=seed,
        cells=tuple(cells),
        skipped=(),
        mode="adaptive",
        conditions=tuple(labels),
        rule=rule_info,
    )


# --- leave-one-out transfer (the paper's Table 2) --------------------------------------------------------


@dataclass(frozen=True)
class TransferData:
    """One fully labeled dataset for the transfer mode: its items' counts and text embeddings, and its group
    (the datasets of a group are each other's sources: same judges, same domain)."""

    name: str
    group: str
    judges: np.ndarray = field(repr=False)
    correct: np.ndarray = field(repr=False)
    embeddings: np.ndarray = field(repr=False)
    model: str = ""

    @property
    def table(self) -> CountTable:
        return CountTable.from_pairs(self.judges, self.correct)


def evaluate_transfer(
    datasets: Sequence[TransferData],
    settings: EvaluateSettings = EvaluateSettings(sizes=(10,)),
    seed: int = 0,
    progress: Progress | None = None,
    transfer_settings: Any = None,
) -> Evaluation:
    """Leave-one-out transfer: each dataset of a group is the target once, the group's other datasets (fitted
    on all their items by the default fit, embedded by the mean of their texts) are its sources.

    Per target and r, `runs` draws of r items (as in fixed-r mode); the target's embedding is the mean over the
    drawn items' texts. Estimators: default (no transfer), transfer (the default transfer: Bayesian model
    averaging over sources), paper_transfer (eq. 14-15), empirical. Coverage and width: the no-transfer
    interval. A dataset alone in its group is skipped and listed (reason: no source).
    """
    from .transfer import Source, TransferSettings, transfer

    if seed < 0:
        raise UsageError(f"--seed must be a non-negative integer; got {seed}")
    names = [d.name for d in datasets]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UsageError(f"two inputs are both named {dup!r}; rename one file")
    base = transfer_settings if transfer_settings is not None else TransferSettings()
    ours = replace(base, method="default")
    paper = replace(base, method="paper")
    fit_settings = settings.fit_settings()
    ks = settings.ks
    methods = TRANSFER_METHODS
    total = settings.runs * len(settings.sizes) * len(datasets)
    done = 0
    cells: list[Cell] = []
    skipped: list[Skipped] = []
    with single_threaded_blas():
        sources: dict[str, Any] = {}
        em: dict[str, Any] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)
            for d in datasets:
                table = d.table
                fitted = analyse(table, fit_settings, np.random.default_rng([seed, zlib.crc32(d.name.encode("utf-8"))]))
                sources[d.name] = Source(d.name, table, fitted.fit.mixture, d.embeddings.mean(axis=0), d.model)
                em[d.name] = fit_paper_em(table).mixture
        for d in datasets:
            table = d.table
            n = len(d.judges)
            group_sources = [sources[o.name] for o in datasets if o.group == d.group and o.name != d.name]
            actual_d = empirical_errors(table, ks)
            actual = np.array([np.nan if actual_d[k] is None else actual_d[k] for k in ks])
            top = table.max_judges
            histogram = tuple(int(v) for v in table.counts[top, : top + 1])
            for size in settings.sizes:
                if not group_sources or n < size + 1:
                    skipped.append(Skipped(d.name, n, size, "no other dataset in its group" if not group_sources else ""))
                    done += settings.runs
                    if progress is not None:
                        progress(done, total, f"{d.name} r={size} skipped")
                    continue
                est = np.full((settings.runs, len(methods), len(ks)), np.nan)
                low = np.full((settings.runs, len(ks)), np.nan)
                high = np.full((settings.runs, len(ks)), np.nan)
                failures = 0
                for run in range(settings.runs):
                    rng = run_rng(seed, d.name, size, run)
                    pick = rng.choice(n, size=size, replace=False)
                    sample = CountTable.from_pairs(d.judges[pick], d.correct[pick])
                    e0 = d.embeddings[pick].mean(axis=0)
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always", FitWarning)
                        without = analyse(sample, fit_settings, rng)
                        ours_r = transfer(sample, e0, group_sources, ours, fit_settings, rng, without, em)
                        paper_r = transfer(sample, e0, group_sources, paper, fit_settings, rng, without, em)
                    failures += sum(1 for w in caught if issubclass(w.category, FitWarning))
                    emp = empirical_errors(sample, ks)
                    est[run, 0] = [r.estimate for r in without.rows]
                    est[run, 1] = [r.estimate for r in ours_r.result.rows]
                    est[run, 2] = [r.estimate for r in paper_r.result.rows]
                    est[run, 3] = [np.nan if emp[k] is None else float(emp[k]) for k in ks]  # type: ignore[arg-type]
                    low[run] = [r.low for r in without.rows]
                    high[run] = [r.high for r in without.rows]
                    done += 1
                    if progress is not None:
                        progress(done, total, f"{d.name} r={size}")
                cells.append(
                    Cell(
                        dataset=d.name,
                        items=n,
                        judges=top,
                        size=size,
                        methods=methods,
                        ks=ks,
                        confidence_level=settings.confidence_level,
                        actual=actual,
                        estimates=est,
                        low=low,
                        high=high,
                        histogram=histogram,
                        not_converged=failures,
                    )
                )
    return Evaluation(
        settings=replace(settings, methods=methods),
        seed=seed,
        cells=tuple(cells),
        skipped=tuple(skipped),
        mode="transfer",
        rule={"transfer": base.to_dict(), "groups": sorted({d.group for d in datasets})},
    )


# --- renderings ---------------------------------------------------------------------------------------


def _pts(x: float | None, digits: int = 2) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}"


def _known(x: float | None) -> float:
    """x where it cannot be None: the default method's summary always has coverage and width."""
    if x is None:
        raise AssertionError("internal error: the default method's summary lacks coverage or width")
    return x


def _pm(mean: float | None, se: float | None, compact: bool = False) -> str:
    return f"{_pts(mean)}±{_pts(se)}" if compact else f"{_pts(mean)} ± {_pts(se)}"


def _label(ev: Evaluation, method: str) -> str:
    return "no transfer" if ev.mode == "transfer" and method == "default" else ESTIMATOR_LABELS[method]


def margin_views(ev: Evaluation, compact: bool = False) -> list[TableView]:
    """Per r: rows datasets (plus their average), columns estimators; cells 'mean ± SE' of the margin.

    compact (terminal): no items column, no spaces around ±, no win counts.
    """
    pm = (lambda m, s: _pm(m, s, True)) if compact else _pm
    views = []
    methods = ev.settings.methods
    show_cov = "default" in methods
    for key in ev.keys:
        cells = [c for c in ev.cells if c.key == key]
        if not cells:
            continue
        adaptive = cells[0].samples is not None
        lead = ("dataset",) if compact else ("dataset", "items")
        cols = lead + tuple(_label(ev, m) for m in methods)
        if show_cov:
            cols += ("cov.", "width") if compact else ("coverage", "width")
        if adaptive:
            cols += ("samples", "stopped")
        rows = []
        for c in cells:
            sm = {s.method: s for s in c.summaries()}
            first = (c.dataset,) if compact else (c.dataset, str(c.items))
            row = first + tuple(pm(sm[m].margin_mean, sm[m].margin_se) for m in methods)
            if show_cov:
                d = sm["default"]
                row += (_pts(d.coverage, 0) + "%", _pts(d.width_mean, 1))
            if adaptive and c.samples is not None:
                row += (f"{np.mean(c.samples):.1f} ± {np.std(c.samples, ddof=1):.1f}", f"{c.stopped}/{c.runs}")
            rows.append(row)
        blank = () if compact else ("",)
        avg = ev.averages(key)
        if len(cells) > 1:
            row = ("mean" if compact else "mean over datasets",) + blank + tuple(pm(a.margin_mean, a.margin_se) for a in avg)
            if show_cov:
                covs = [_known(c.summary("default").coverage) for c in cells]
                widths = [_known(c.summary("default").width_mean) for c in cells]
                row += (_pts(float(np.mean(covs)), 0) + "%", _pts(float(np.mean(widths)), 1))
            if adaptive:
                row += (f"{np.mean([np.mean(c.samples) for c in cells if c.samples is not None]):.1f}", "")
            rows.append(row)
        if "default" in methods and len(methods) > 1:
            row = (f"minus {_label(ev, 'default')}" + ("" if compact else " (paired)"),) + blank + tuple(
                ""
                if a.method == "default"
                else pm(a.diff_vs_default, a.diff_se) + ("" if compact else f" ({a.default_wins}/{a.datasets})")
                for a in avg
            )
            if show_cov:
                row += ("", "")
            if adaptive:
                row += ("", "")
            rows.append(row)
        runs = cells[0].runs
        if adaptive:
            what = f"{runs} random orders, each labeled until the {ev.settings_label()} rule stops ({key})"
        else:
            what = f"{runs} paired draws of {key.replace('=', ' = ')} items"
        caption = (
            f"Error margin in points, mean ± SE over {what}, odd k. "
            f"'minus {_label(ev, 'default')}': paired difference, positive = {_label(ev, 'default')} better"
            + ("" if compact else f" (datasets where {_label(ev, 'default')} is better)")
        )
        if show_cov:
            caption += f". Coverage and mean width (points) of the {_label(ev, 'default')} estimate's {ev.settings.confidence_level:.0%} interval"
        if adaptive:
            caption += "; samples: labeled items used (mean ± sd); stopped: runs where the rule fired before the pool ran out"
        title = f"{ev.settings_label()} rule, {key.replace('=', ' = ')}" if adaptive else f"{key.replace('=', ' = ')} labeled items"
        if ev.mode == "transfer":
            title += " of the target; the other datasets of its group are the sources (leave-one-out)"
        views.append(TableView(title=title, columns=cols, rows=tuple(rows), caption=caption))
    return views


def skipped_note(ev: Evaluation) -> str:
    if not ev.skipped:
        return ""
    groups: dict[str, list[str]] = {}
    for s in ev.skipped:
        groups.setdefault(s.why, []).append(f"{s.dataset} ({s.items} items) at r = {s.size}")
    return ". ".join(f"skipped, {why}: " + "; ".join(parts) for why, parts in groups.items())


def to_json(ev: Evaluation, per_run: bool = False) -> str:
    return orjson.dumps(ev.to_dict(per_run), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n"


CSV_COLUMNS = ("dataset", "items", "r", "runs", "method", "margin_mean", "margin_sd", "margin_se", "coverage", "width_mean")


def to_csv(ev: Evaluation) -> str:
    """One row per (dataset, r, estimator); margins in points; per-k margins as margin_k<k> columns."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    ks = ev.settings.ks
    w.writerow(CSV_COLUMNS + tuple(f"margin_k{k}" for k in ks) + ("condition", "samples_mean", "samples_sd"))
    for c in ev.cells:
        for s in c.summaries():
            w.writerow(
                [c.dataset, c.items, c.size if c.samples is None else "", c.runs, s.method]
                + [f"{100 * x:.4f}" for x in (s.margin_mean, s.margin_sd, s.margin_se)]
                + ["" if s.coverage is None else f"{s.coverage:.4f}", "" if s.width_mean is None else f"{100 * s.width_mean:.4f}"]
                + ["" if x is None else f"{100 * x:.4f}" for x in s.margin_by_k]
                + [c.key]
                + (["", ""] if c.samples is None else [f"{np.mean(c.samples):.2f}", f"{np.std(c.samples, ddof=1):.2f}"])
            )
    return buf.getvalue()


def markdown_table(view: TableView) -> str:
    lines = [f"**{view.title}**", "", "| " + " | ".join(view.columns) + " |"]
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(view.columns))) + "|")
    lines += ["| " + " | ".join(r) + " |" for r in view.rows]
    if view.caption:
        lines += ["", view.caption]
    return "\n".join(lines) + "\n"


def to_markdown(ev: Evaluation) -> str:
    parts = [
        f"Evaluation (seed {ev.seed}, {ev.settings.runs} "
        + ("random orders per dataset and stopping setting" if ev.mode == "adaptive" else "draws per dataset and r")
        + f", betaconform {__version__}). "
        + MARGIN_DEFINITION
        + ".\n"
    ]
    parts += [markdown_table(v) for v in margin_views(ev)]
    note = skipped_note(ev)
    if note:
        parts.append(note + "\n")
    return "\n".join(parts)
