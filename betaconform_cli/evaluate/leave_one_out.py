"""Leave-one-out transfer (the paper's Table 2): each dataset of a group the target once, the group's other
datasets its sources."""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..blas import one_thread
from ..counts import CountTable
from ..errors import P0, FitWarning, ParameterError
from ..fit import analyse
from ..mixtures import empirical_errors, fit_paper_em
from ..seeds import check_seed
from .results import Cell, CellDraws, CellFigure, Evaluation, Skipped
from .settings import TRANSFER_METHODS, EvaluateSettings, Progress, Ticker, check_names, run_rng, truth


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


def check_transfer_cells(datasets: Sequence[tuple[str, str, int]], sizes: Sequence[int]) -> None:
    """Refuse, before any text is embedded, a leave-one-out run with nothing to evaluate: (name, group, items) of
    each dataset; a cell needs another dataset in its group and more than r items."""
    groups: dict[str, int] = {}
    for _, group, _ in datasets:
        groups[group] = groups.get(group, 0) + 1
    if any(groups[g] > 1 and n >= r + 1 for _, g, n in datasets for r in sizes):
        return
    alone = [name for name, g, _ in datasets if groups[g] == 1]
    if len(alone) == len(datasets):
        raise ParameterError("transfer", f"{P0} needs at least two datasets in one folder (each is the target once, the "
                                         f"others of its folder its sources); {', '.join(alone)} {'is' if len(alone) == 1 else 'are each'} alone in its folder")
    small = "; ".join(f"{name} ({n} items)" for name, g, n in datasets if groups[g] > 1)
    raise ParameterError("sizes", f"{','.join(map(str, sizes))}: every dataset with sources has fewer than r + 1 items, "
                                  f"nothing to evaluate: {small}")


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
    from ..transfer import TransferSettings

    check_seed(seed)
    check_names([d.name for d in datasets])
    check_transfer_cells([(d.name, d.group, len(d.judges)) for d in datasets], settings.sizes)
    base = transfer_settings if transfer_settings is not None else TransferSettings()
    ticker = Ticker(progress, settings.runs * len(settings.sizes) * len(datasets))
    cells: list[Cell] = []
    skipped: list[Skipped] = []
    with one_thread():
        sources, em = _fit_sources(datasets, settings, seed)
        for d in datasets:
            group_sources = [sources[o.name] for o in datasets if o.group == d.group and o.name != d.name]
            for size in settings.sizes:
                if not group_sources or len(d.judges) < size + 1:
                    reason = "no other dataset in its group" if not group_sources else ""
                    skipped.append(Skipped(d.name, len(d.judges), size, reason))
                    ticker.tick(f"{d.name} r={size} skipped", settings.runs)
                    continue
                cells.append(_transfer_cell(d, size, group_sources, em, base, settings, seed, ticker))
    return Evaluation(
        settings=replace(settings, methods=TRANSFER_METHODS),
        seed=seed,
        cells=tuple(cells),
        skipped=tuple(skipped),
        mode="transfer",
        rule={"transfer": base.to_dict(), "groups": sorted({d.group for d in datasets})},
    )


def _fit_sources(
    datasets: Sequence[TransferData], settings: EvaluateSettings, seed: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every dataset as a source (the default fit on all its items, the mean of its texts' embeddings) and its
    paper-EM mixture, by name."""
    from ..transfer import Source

    sources: dict[str, Any] = {}
    em: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)
        for d in datasets:
            table = d.table
            fitted = analyse(table, settings.fit_settings(), np.random.default_rng([seed, zlib.crc32(d.name.encode("utf-8"))]))
            sources[d.name] = Source(d.name, table, fitted.fit.mixture, d.embeddings.mean(axis=0), d.model)
            em[d.name] = fit_paper_em(table).mixture
    return sources, em


def _transfer_cell(
    d: TransferData, size: int, sources: list[Any], em: dict[str, Any], base: Any, settings: EvaluateSettings,
    seed: int, ticker: Ticker,
) -> Cell:
    """One target at one r: `runs` draws of r items, each estimated without transfer, with the default transfer
    and with the paper's (TRANSFER_METHODS' order), and by the drawn items' own empirical error."""
    ks = settings.ks
    est = np.full((settings.runs, len(TRANSFER_METHODS), len(ks)), np.nan)
    low = np.full((settings.runs, len(ks)), np.nan)
    high = np.full((settings.runs, len(ks)), np.nan)
    failures = 0
    for run in range(settings.runs):
        rng = run_rng(seed, d.name, size, run)
        est[run], low[run], high[run], failed = _transfer_run(d, size, sources, em, base, settings, rng)
        failures += failed
        ticker.tick(f"{d.name} r={size}")
    actual, histogram = truth(d.table, ks)
    return Cell(
        dataset=d.name,
        items=len(d.judges),
        judges=d.table.max_judges,
        size=size,
        methods=TRANSFER_METHODS,
        ks=ks,
        confidence_level=settings.confidence_level,
        actual=actual,
        draws=CellDraws(est, low, high, failures),
        figure=CellFigure(histogram),
    )


def _transfer_run(
    d: TransferData, size: int, sources: list[Any], em: dict[str, Any], base: Any, settings: EvaluateSettings,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[float], list[float], int]:
    """One draw of r items: (estimates[method, k], the no-transfer interval's low and high, fits that warned)."""
    from ..transfer import transfer

    fit_settings = settings.fit_settings()
    pick = rng.choice(len(d.judges), size=size, replace=False)
    sample = CountTable.from_pairs(d.judges[pick], d.correct[pick])
    e0 = d.embeddings[pick].mean(axis=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FitWarning)
        without = analyse(sample, fit_settings, rng)
        ours = transfer(sample, e0, sources, replace(base, method="default"), fit_settings, rng, without, em)
        paper = transfer(sample, e0, sources, replace(base, method="paper"), fit_settings, rng, without, em)
    failures = sum(1 for w in caught if issubclass(w.category, FitWarning))
    emp = empirical_errors(sample, settings.ks)
    est: np.ndarray = np.array([
        [r.estimate for r in without.rows],
        [r.estimate for r in ours.result.rows],
        [r.estimate for r in paper.result.rows],
        [np.nan if emp[k] is None else float(emp[k]) for k in settings.ks],  # type: ignore[arg-type]
    ], dtype=np.float64)
    return est, [r.low for r in without.rows], [r.high for r in without.rows], failures
