"""The search for each size's ensemble (the method: analysis.py's docstring, docs/JUDGES.md): every subset or a
beam's candidates (subsets.py), each with its target's posterior (estimate, interval widened about it) and its
choice score, and the canonical order of the data that makes the draws the same for any line order.
analysis.py (the entry point), clustered.py (clusters widen the intervals) and every.py (every item's estimate)
use it."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..intervals import enclose, equal_tailed
from .maxent import MAX_JUDGES as MAXENT_MAX_JUDGES
from .maxent import fit_maxent
from .model import ClassPosterior
from .results import INTERVAL_WIDENING, JudgesSettings
from .subsets import SubsetTable, beam_tables, exact_tables


def canonical_order(correct: np.ndarray, names: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """Judges sorted by name, items sorted by their row of verdicts: the same data in any line or column order gives
    the same matrix, so the same random draws and the same tie-breaks (the analysis never uses item ids)."""
    col = sorted(range(len(names)), key=lambda j: names[j])
    return tuple(names[j] for j in col), correct[:, col][canonical_rows(correct, names)]


def canonical_rows(correct: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """canonical_order's order of the items (rows)."""
    arr = correct[:, sorted(range(len(names)), key=lambda j: names[j])]
    code = np.where(np.isnan(arr), 2, arr).astype(np.int8)
    return np.lexsort(code.T[::-1]) if arr.size else np.arange(len(arr))


# --- the pieces -------------------------------------------------------------------------------------------


def _interval(samples: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    return equal_tailed(samples, confidence_level)


def widen(estimate: np.ndarray, low: np.ndarray, high: np.ndarray, floor: np.ndarray, ceiling: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval [low, high] stretched about the estimate by `factor` on each side, kept in [floor, ceiling].

    floor and ceiling are the target's range: 0 and 1 for new items; with a known population the labeled share's
    known error f emp_S and f emp_S + (1 - f) (the unlabeled rest all wrong).
    """
    lo = np.maximum(estimate - factor * (estimate - low), floor)
    hi = np.minimum(estimate + factor * (high - estimate), ceiling)
    return enclose(estimate, lo, hi)


@dataclass(frozen=True)
class _Target:
    """Posterior of each candidate's target error: mean and (widened) interval, the choice score, and the
    target's range (floor, ceiling) within which the interval is kept."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    score: np.ndarray
    floor: np.ndarray
    ceiling: np.ndarray


def _score(table: SubsetTable, n_labeled: int, population: int | None, pseudo_items: float) -> np.ndarray:
    """The choice score: the labels' own error blended with the ranking model's (on the target's scale)."""
    rank = table.ranking_error
    emp = np.nan_to_num(table.empirical, nan=0.0)
    n = table.items.astype(float)
    if math.isinf(pseudo_items):  # the model alone (benchmarks only)
        blend = rank
    else:
        blend = np.where(n > 0, (n * emp + pseudo_items * rank) / np.maximum(n + pseudo_items, 1e-300), rank)
    if population is None:
        return blend
    f = n_labeled / population
    known = np.where(n > 0, f * emp, 0.0)
    share = np.where(n > 0, 1 - f, 1.0)
    out: np.ndarray = known + share * blend
    return out


def _target(
    table: SubsetTable,
    n_labeled: int,
    population: int | None,
    pseudo_items: float,
    confidence_level: float,
    rng: np.random.Generator,
    widening: float = INTERVAL_WIDENING,
) -> _Target:
    m = table.model_mean
    emp = np.nan_to_num(table.empirical, nan=0.0)
    n = table.items.astype(float)
    score = _score(table, n_labeled, population, pseudo_items)
    if population is None:
        low, high = _interval(table.draws, confidence_level)
        zero, one = np.zeros_like(m), np.ones_like(m)
        return _Target(m, *widen(m, low, high, zero, one, widening), score, zero, one)
    f = n_labeled / population
    rest = np.round((population - n_labeled) * n / max(n_labeled, 1)).astype(np.int64)  # unlabeled items with all members
    known = np.where(n > 0, f * emp, 0.0)
    share = np.where(n > 0, 1 - f, 1.0)
    unlabeled = rng.binomial(rest[None, :], np.clip(table.draws, 0.0, 1.0)) / np.maximum(rest, 1)[None, :]
    unlabeled = np.where(rest[None, :] > 0, unlabeled, table.draws)
    samples = known[None, :] + share[None, :] * unlabeled
    low, high = _interval(samples, confidence_level)
    estimate = known + share * m
    low, high = widen(estimate, low, high, known, known + share, widening)
    return _Target(estimate, low, high, score, known, known + share)


def pick_lowest(score: np.ndarray) -> int:
    """Lowest score; ties to the first subset in lexicographic order."""
    return int(np.lexsort((np.arange(len(score)), score))[0])


@dataclass(frozen=True)
class Search:
    """Candidate subsets of every size with their target posterior (estimate, interval) and choice score."""

    tables: dict[int, SubsetTable]
    targets: dict[int, _Target]
    exact: bool

    def pick(self, k: int) -> int:
        """Index (in tables[k]) of the chosen ensemble of size k: lowest score, ties to the first subset."""
        return pick_lowest(self.targets[k].score)


def search_ensembles(
    correct: np.ndarray,
    posterior: ClassPosterior,
    n_labeled: int,
    population: int | None,
    confidence_level: float,
    rng: np.random.Generator,
    settings: JudgesSettings = JudgesSettings(),
    progress: Callable[[int], None] | None = None,
) -> Search:
    """Every subset (J <= exact_max_judges) or a beam's candidates, scored and with the target's posterior.

    progress(k): called after the candidates of each size k."""
    n_judges = correct.shape[1]
    exact = n_judges <= settings.exact_max_judges

    def score_of(t: SubsetTable) -> np.ndarray:
        return _score(t, n_labeled, population, settings.pseudo_items)

    if exact:
        probs = None
        if settings.ranking == "maxent" and n_judges <= MAXENT_MAX_JUDGES:
            probs = fit_maxent(correct, *settings.maxent_penalty)
        tables = exact_tables(correct, posterior, n_judges, probs)
        if progress is not None:
            progress(n_judges)
    else:
        tables = beam_tables(correct, posterior, n_judges, settings.beam_width, score_of, progress=progress)
    return rescore(tables, n_labeled, population, settings.pseudo_items, confidence_level, rng, exact, settings.interval_widening)


def rescore(
    tables: dict[int, SubsetTable],
    n_labeled: int,
    population: int | None,
    pseudo_items: float,
    confidence_level: float,
    rng: np.random.Generator,
    exact: bool = True,
    widening: float = INTERVAL_WIDENING,
) -> Search:
    """Targets and choice scores of given candidate tables (for another pseudo_items, population or widening)."""
    targets = {k: _target(t, n_labeled, population, pseudo_items, confidence_level, rng, widening) for k, t in tables.items()}
    return Search(tables, targets, exact)
