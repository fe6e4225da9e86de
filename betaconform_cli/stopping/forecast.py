"""`plan`: how many labels a target half-width needs, forecast before labeling (or between rounds), from the
judges' verdicts on every item and the labels so far (docs/PLAN.md).

The model is the judges' class-conditional Dawid-Skene model of every item's verdicts, the gold clamped where a
label exists and the likelihood tempered by the labels (judges.unlabeled.fit_classes: judges who err together
are fewer independent witnesses than their number). Each draw gives every unlabeled item a gold from its
posterior, so a draw is a whole labeled pool, and on it:

- the error at k: `sample`'s own precision rule (stopping.rules.PrecisionRule, the rule of the live loop, at the
  same target, level, minimum and patience) is replayed on that pool: the items labeled so far first, then the
  others in a random order, and the rule stops at the first r from the labels so far on (or not within the
  pool);
- the score: the score's half-width at n labels is the shipped interval's (score.ppi.anchored_interval, round 4's
  eq. 6: the residual variance V at the estimate, the Bernoulli part moved to theta0, solved by the same
  ppi.anchored_bounds) at the pool's pass rate and residual variance (the gold drawn against the model's
  prediction), and n is the fewest labels that bring it under the target (docs/PLAN.md measures it).

The forecast is the median over the draws; its interval is the draws' equal-tailed quantiles at the confidence
level. Each draw refits the model on a Bayesian bootstrap of the items (Gamma(counts) weights per pattern), so
the model's own uncertainty is in the interval too. What no draw can see: with no labels, judges that err together
look like a confident majority, and the forecast is low (benchmarks/plan.py measures the forecast against the
labels sample's loop actually needed, docs/PLAN.md; the output says so below 10 labels).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from ..errors import ParameterError
from ..inputs.dataset import Votes
from ..parameters import CONFIDENCE_LEVEL, check
from .rules import PrecisionRule, _first_run

if TYPE_CHECKING:
    from ..judges.unlabeled import Verdicts

MAX_ITEMS = 200_000  # items replayed per draw; a larger pool is subsampled (the forecast is then scaled: docs/PLAN.md)


class Forecast(msgspec.Struct, frozen=True, kw_only=True):
    """Labels needed for one target, in all (the labels so far included): the median over the draws, its interval
    at the confidence level, the share of draws whose pool was enough (`reached`); None where most draws never
    reached the target within the pool."""

    what: str  # "error" or "score"
    k: int | None  # the ensemble size (error at k; None: every checked k, as sample's rule; score: None)
    labels: float | None
    low: float | None
    high: float | None
    reached: float


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """The forecasts of one dataset and what they rest on."""

    forecasts: tuple[Forecast, ...]
    items: int
    labeled: int
    target: float
    confidence_level: float
    draws: int
    positive: str | None  # the score's pass class (None: no score forecast)
    notes: tuple[str, ...] = ()


class PlanDocument(msgspec.Struct, frozen=True, kw_only=True):
    """`plan -f json`: one dataset's plan (docs/schema/plan.json)."""

    schema: str = "betaconform/1"
    command: str = "plan"
    tool_version: str
    dataset: str
    source: str
    label_cost: float | None  # per label (--label-cost): each forecast costs its labels times this
    plan: Plan


def _check(target: float, confidence_level: float, draws: int) -> None:
    check("target", target)
    check("confidence_level", confidence_level)
    check("draws", draws)


def _items(counts: np.ndarray, pattern_gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each item's pattern (an index into the patterns) and gold (-1 unlabeled), labeled items first."""
    rows = np.repeat(np.arange(len(counts)), np.asarray(counts, dtype=np.int64))
    gold = np.asarray(pattern_gold)[rows]
    order = np.argsort(gold < 0, kind="stable")  # labeled first, each group in pattern order
    return rows[order], gold[order]


def _summary(what: str, k: int | None, needed: np.ndarray, level: float) -> Forecast:
    """Median and equal-tailed interval of the draws' labels; a draw that never reached the target is +inf."""
    reached = float(np.isfinite(needed).mean())
    if reached < 0.5:
            return Forecast(what=what, k=k, labels=None, low=None, high=None, reached=reached)
    lo, mid, hi = (float(x) for x in np.quantile(needed, [(1 - level) / 2, 0.5, (1 + level) / 2], method="inverted_cdf"))
    return Forecast(what=what, k=k, labels=mid, low=lo, high=hi if math.isfinite(hi) else None, reached=reached)


def _score_half_widths(y: np.ndarray, f: np.ndarray, level: float, n: np.ndarray) -> np.ndarray:
    """The score's half-width at each n of `n` labels (n >= 3) on a pool whose gold is y and prediction f, with
    the shipped interval (score.ppi.anchored_interval, eq. 6 since round 4: docs/SCORE.md) at the pool's pass rate:
    eq. 2's residual variance with 3 pseudo-items of p (1 - p) and 2 fitted parameters, the finite-population
    correction, slope fpc / n, t_{n-2}; half of its width clipped to [0, 1], as `score` reports it."""
    from scipy import stats

    from ..score.ppi import PSEUDO_ITEMS, anchored_bounds

    big_n, theta = len(y), float(y.mean())
    fpc = np.maximum(1 - n / big_n, 0.0)
    residual = (n * float((y - f).var()) + PSEUDO_ITEMS * theta * (1 - theta)) / (n - 2 + PSEUDO_ITEMS)
    low, high = anchored_bounds(theta, fpc * residual / n, fpc / n, stats.t.ppf(0.5 + level / 2, n - 2) ** 2)
    out: np.ndarray = (np.minimum(high, 1.0) - np.maximum(low, 0.0)) / 2
    return out


def _score_labels(y: np.ndarray, f: np.ndarray, target: float, level: float, labeled: int) -> float:
    """The fewest n (at least the `labeled` so far) whose score interval is at most `target` half-wide on a pool
    whose gold is y and prediction f (`_score_half_widths`)."""
    n = np.arange(max(3, labeled), len(y) + 1, dtype=float)
    hit = np.flatnonzero(_score_half_widths(y, f, level, n) <= target)
    return float(n[hit[0]]) if len(hit) else math.inf


def _score_classes(v: Verdicts, rows: np.ndarray, positive: int) -> np.ndarray:
    """Each item's class responsibilities in the score's latent-class model of pass / not-pass verdicts
    (latent_classes.fit_latent_classes, label-free): the score's prediction is these times the classes' pass
    rates (eq. 5), which a draw's gold gives."""
    from ..score.latent_classes import fit_latent_classes

    binary = np.where(v.patterns < 0, -1, (v.patterns == positive).astype(np.int64))
    out: np.ndarray = fit_latent_classes(binary, v.counts.astype(float)).responsibilities[rows]
    return out


def _error_stop(rule: PrecisionRule, judges: np.ndarray, correct: np.ndarray, labeled: int, pool: int) -> float:
    """The first r, from the labels so far on, at which `rule` stops on items in this order (inf: not in the pool)."""
    passed = rule.path(judges, correct, pool_size=pool).passed.copy()
    passed[: max(labeled - 1, 0)] = False  # from now on: a stop among the labels so far is not a forecast
    stop = _first_run(passed, rule.patience)
    return float(stop) if stop is not None else math.inf


def _usable(ks: Sequence[int], judges: np.ndarray) -> tuple[tuple[int, ...], list[str]]:
    usable = tuple(k for k in sorted(set(ks)) if k <= int(judges.min()))
    if len(usable) == len(set(ks)):
        return usable, []
    fewest = int(judges.min())
    why = f"every item has {fewest} judges" if fewest == int(judges.max()) else f"some item has only {fewest} judges"
    return usable, [f"k above {fewest} left out: {why} with a verdict"]


def forecast(
    votes: Votes,
    target: float,
    ks: Sequence[int] = tuple(range(1, 12)),
    confidence_level: float = CONFIDENCE_LEVEL,
    draws: int = 200,
    positive: int | None = None,
    rng: np.random.Generator | None = None,
    rule: PrecisionRule | None = None,
) -> Plan:
    """The labels `sample --rule precision --target TARGET` will need (error at each k of `ks` that every item's
    judges reach, and at every such k together), and the labels the score's interval needs (`positive`: the pass
    class's code; None: no score forecast). `rule`: the live loop's own rule, whose minimum, patience and method
    the replays keep (default: sample's). Deterministic for a given `rng` and the same data in any order."""
    import dataclasses

    from ..judges.unlabeled import from_votes

    _check(target, confidence_level, draws)
    rng = rng if rng is not None else np.random.default_rng(0)
    v = from_votes(votes, votes.judges)
    if not len(v.counts):
        raise ParameterError("votes", "holds no item with a verdict: plan forecasts from the judges' verdicts")
    rows, gold = _items(v.counts, v.gold)
    if len(rows) > MAX_ITEMS:
        raise ParameterError("votes", f"holds {len(rows):,} items; plan replays at most {MAX_ITEMS:,} (label a sample)")
    judges = (v.patterns[rows] >= 0).sum(axis=1)
    usable, notes = _usable(ks, judges)
    labeled = int((gold >= 0).sum())
    if labeled < 10:
        notes.append(f"{labeled} labels: the forecast assumes the judges err independently given the gold; where they "
                     "err together it is low (0.5x-0.8x the labels needed on two of three collections, docs/PLAN.md): "
                     "label 10 first and plan again")
    keys: list[tuple[str, int | None]] = [("error", k) for k in usable] + ([("error", None)] if len(usable) > 1 else [])
    classes = _score_classes(v, rows, positive) if positive is not None else None
    keys += [("score", None)] if classes is not None else []
    out: dict[tuple[str, int | None], list[float]] = {key: [] for key in keys}
    for g in _gold_draws(v, rows, gold, draws, rng):
        order = np.concatenate([np.arange(labeled), labeled + rng.permutation(len(rows) - labeled)])
        correct = ((v.patterns[rows] == g[:, None]) & (v.patterns[rows] >= 0)).sum(axis=1)
        for what, k in keys:
            if what == "error":
                replay = dataclasses.replace(rule or PrecisionRule(), target=target, ks=usable, at_k=k,
                                             confidence_level=confidence_level)
                out[(what, k)].append(_error_stop(replay, judges[order], correct[order], labeled, len(rows)))
            elif classes is not None:
                y = (g == positive).astype(float)
                f = classes @ ((classes.T @ y) / np.maximum(classes.sum(axis=0), 1e-12))  # eq. (5) at this gold
                out[(what, k)].append(_score_labels(y, f, target, confidence_level, labeled))
    forecasts = tuple(_summary(what, k, np.asarray(x), confidence_level) for (what, k), x in out.items())
    name = None if positive is None else str(votes.classes[positive])
    return Plan(forecasts=forecasts, items=len(rows), labeled=labeled, target=target, confidence_level=confidence_level,
                draws=draws, positive=name, notes=tuple(notes))


def _gold_draws(v: Verdicts, rows: np.ndarray, gold: np.ndarray, draws: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`draws` golds of every item: the labels where they exist, else a draw from the judges' model refitted on a
    Bayesian bootstrap of the patterns (Gamma(count) weights), so the model's uncertainty is drawn too."""
    from ..judges.unlabeled import fit_classes

    unl = np.flatnonzero(gold < 0)
    for _ in range(draws):
        g = gold.copy()
        boot = type(v)(v.patterns, v.gold, rng.gamma(v.counts.astype(float)), v.classes)
        cum = np.cumsum(fit_classes(boot).posterior[rows[unl]], axis=1)
        g[unl] = np.minimum((cum < rng.random(len(unl))[:, None]).sum(axis=1), v.classes - 1)
        yield g
