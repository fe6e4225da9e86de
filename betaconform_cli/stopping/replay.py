"""Replays of a stopping rule on a fully labeled pool: random orders, stopped by the rule, scored against the
pool's actual error (the paper's Tables 1 and 3 protocol)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..counts import CountTable
from ..fit import FitResult, analyse
from ..inputs import Item
from ..mixtures import empirical_errors, error_margin
from ..settings import FitSettings
from .document import MeanSd, Summary
from .rules import Rule, rule_path


@dataclass(frozen=True)
class ReplayRun:
    """One replay: the order drawn, where the rule stopped, the fit on what was drawn, the pool's actual error."""

    run: int
    stopped: bool
    samples: int
    labeled_ids: list[str | None]
    result: FitResult
    actual: dict[int, float | None]
    margin: float | None
    statistic: float | None
    intervals: dict[int, tuple[float, float]] | None = None  # the precision rule's (low, high) at k where it stopped


def replay_one(
    rule: Rule,
    items: list[Item] | tuple[Item, ...],
    settings: FitSettings,
    rng: np.random.Generator,
    run: int = 0,
    full_table: CountTable | None = None,
    actual: dict[int, float | None] | None = None,
    arrays: tuple[np.ndarray, np.ndarray] | None = None,
) -> ReplayRun:
    """Draw the pool in random order, stop by the rule (or at the pool's end), fit on the drawn items.

    arrays: the pool's (judges, correct) in item order, built once for many replays (pool_arrays(items)).
    """
    n_pool = len(items)
    order = rng.permutation(n_pool)
    pool_judges, pool_correct = arrays if arrays is not None else pool_arrays(items)
    judges, correct = pool_judges[order], pool_correct[order]
    if full_table is None:
        full_table = CountTable.from_pairs(judges, correct)
    if actual is None:
        actual = empirical_errors(full_table, settings.ks)
    p = rule_path(rule, judges, correct, rng, pool_size=n_pool, until_stop=True)
    stopped = p.stop_at is not None
    r = p.stop_at if p.stop_at is not None else n_pool  # p.stop_at is not None exactly when stopped
    table = CountTable.from_pairs(judges[:r], correct[:r])
    result = analyse(table, settings, rng)
    est = np.array([row.estimate for row in result.rows])
    act = np.array([np.nan if actual.get(k) is None else actual[k] for k in settings.ks], dtype=float)
    ivs = None
    if "intervals" in p.extra:
        ivs = {k: (float(lo[r - 1]), float(hi[r - 1])) for k, (lo, hi) in p.extra["intervals"].items()}
    stat = p.statistic[r - 1]
    return ReplayRun(
        run=run,
        stopped=stopped,
        samples=int(r),
        labeled_ids=[items[i].id for i in order[:r]],
        result=result,
        actual=actual,
        margin=None if np.isnan(m := float(error_margin(est, act, settings.ks))) else 100 * m,
        statistic=None if np.isnan(stat) else float(stat),
        intervals=ivs,
    )


def pool_arrays(items: list[Item] | tuple[Item, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(judges, correct) of every item, in item order, as int64 arrays."""
    judges = np.fromiter((it.judges for it in items), dtype=np.int64, count=len(items))
    correct = np.fromiter((it.correct for it in items), dtype=np.int64, count=len(items))
    return judges, correct


def summarize(runs: list[ReplayRun]) -> Summary:
    """Mean and sd of samples and margins over replays (--replay's summary document carries it as it is)."""
    samples = np.array([r.samples for r in runs], dtype=float)
    margins = np.array([r.margin for r in runs if r.margin is not None], dtype=float)

    def ms(a: np.ndarray) -> MeanSd:
        if not len(a):
            return MeanSd(mean=None, sd=None)
        return MeanSd(mean=float(a.mean()), sd=float(a.std(ddof=1)) if len(a) > 1 else 0.0)

    return Summary(runs=len(runs), stopped=int(sum(r.stopped for r in runs)), samples=ms(samples), margin=ms(margins))
