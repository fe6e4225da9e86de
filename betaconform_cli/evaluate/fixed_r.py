"""Fixed-r mode: every estimator on paired random draws of r items, against the whole dataset's actual error."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..blas import one_thread
from ..counts import CountTable
from ..errors import FitWarning, ParameterError
from ..estimators import REGISTRY, Fitted
from ..fit import analyse
from ..mixtures import fit_binomial
from ..seeds import check_seed
from .results import Cell, CellDraws, CellFigure, Evaluation, Skipped
from .settings import (
    EvaluateSettings,
    Progress,
    check_names,
    check_plain_methods,
    draw_table,
    item_arrays,
    run_rng,
    truth,
)


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
    pmf_mix = np.full(top + 1, np.nan)
    columns: dict[str, list[float]] = {}
    chosen = [REGISTRY[m] for m in settings.methods]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FitWarning)
        if any(e.needs_fit for e in chosen):  # the estimators that read fit.analyse's mixtures: its rows
            result = analyse(sample, settings.fit_settings(), rng)
            for e in chosen:
                if e.needs_fit:
                    columns[e.name] = [r.estimate if e.column == "estimate" else _nan(r.column(str(e.column))) for r in result.rows]
            low = np.array([r.low for r in result.rows])
            high = np.array([r.high for r in result.rows])
            pmf_mix = result.fit.mixture.pmf(top)
        fitted = Fitted(sample, ks)  # the others without a mixture fit: the same numbers as analyse's columns
        for e in chosen:
            if not e.needs_fit and e.errors is not None:
                errors = e.errors(fitted)
                columns[e.name] = [_nan(errors[k]) for k in ks]
    pmf_bin = fit_binomial(sample).pmf(top)  # Fig. 3's Binomial
    for i, m in enumerate(settings.methods):
        est[i] = columns[m]
    failures = sum(1 for w in caught if issubclass(w.category, FitWarning))
    return est, low, high, np.asarray(pmf_bin), np.asarray(pmf_mix), failures


def _nan(x: float | None) -> float:
    return np.nan if x is None else float(x)


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
    actual, histogram = truth(table, settings.ks)
    top = table.max_judges
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
        draws = Draws(settings, top)
        for run in range(settings.runs):
            rng = run_rng(seed, name, size, run)
            draws.add(run, draw_table(judges, correct, size, rng), rng)
            done += 1
            if progress is not None:
                progress(done, total, f"{name} r={size}")
        cells.append(draws.cell(name, table.items, size, actual, histogram))
    return cells, skipped


class Draws:
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
            draws=CellDraws(self.est, self.low, self.high, self.failures),
            figure=CellFigure(histogram, self.pmf_b, self.pmf_m),
            **extra,
        )


def evaluate(
    datasets: Sequence[tuple[str, CountTable]],
    settings: EvaluateSettings = EvaluateSettings(),
    seed: int = 0,
    progress: Progress | None = None,
) -> Evaluation:
    """Fixed-r evaluation of every dataset (name, full table) at every size in settings.sizes."""
    check_seed(seed)
    check_names([n for n, _ in datasets])
    check_plain_methods(settings)
    total = settings.runs * len(settings.sizes) * len(datasets)
    cells: list[Cell] = []
    skipped: list[Skipped] = []
    with one_thread():
        for i, (name, table) in enumerate(datasets):
            c, s = evaluate_table(name, table, settings, seed, progress, i * settings.runs * len(settings.sizes), total)
            cells.extend(c)
            skipped.extend(s)
    if not cells:
        sizes = ", ".join(map(str, settings.sizes))
        small = "; ".join(f"{d} ({n} items)" for d, n in dict.fromkeys((s.dataset, s.items) for s in skipped))  # once each
        raise ParameterError("sizes", f"{sizes}: every dataset has fewer than r + 1 items, nothing to evaluate: {small}")
    return Evaluation(settings=settings, seed=seed, cells=tuple(cells), skipped=tuple(skipped))


