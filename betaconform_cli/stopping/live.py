"""Live mode of `sample`: decide on the items labeled so far, and propose the next ones from the pool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, ParameterError
from ..inputs import Item, PoolItem
from ..inputs.dataset import Votes
from .rules import PrecisionRule, Rule, RulePath, rule_path

if TYPE_CHECKING:
    from ..fit import FitResult
    from ..settings import FitSettings
    from ..votes import VoteEstimate


def check_ids(items: Sequence[Item], source: str, need_ids: bool = True, id_field: str = "id") -> None:
    """Duplicate or missing ids are an InputError naming the file and line."""
    seen: dict[str, int] = {}
    for it in items:
        if it.id is None:
            if need_ids:
                raise InputError(source, "item has no id (every item needs one; name its field with `id_field`)",
                                 line=it.line, field=id_field)
            continue
        if it.id in seen:
            raise InputError(source, f"id {it.id!r} appears again (first on line {seen[it.id]}); keep the first or the last "
                                     "with `duplicates`", line=it.line, field=id_field)
        seen[it.id] = it.line


def check_labeled_in_pool(labeled: Sequence[Item], pool: Sequence[PoolItem], source: str, id_field: str = "id") -> None:
    ids = {p.id for p in pool}
    for it in labeled:
        if it.id not in ids:
            raise InputError(source, f"labeled id {it.id!r} is not in the pool", line=it.line, field=id_field)


@dataclass(frozen=True)
class Decision:
    """The live verdict on the items labeled so far. `stopped_by`: "rule", "pool exhausted" (every pool item is
    labeled but the rule is not met), or None (keep labeling)."""

    stopped_by: str | None
    samples: int
    stop_at: int | None
    more: int
    statistic: float | None
    path: RulePath = field(repr=False)

    @property
    def stopped(self) -> bool:
        return self.stopped_by is not None


def decide(rule: Rule, items: Sequence[Item], rng: np.random.Generator, pool_size: int | None = None) -> Decision:
    judges = np.array([it.judges for it in items], dtype=np.int64)
    correct = np.array([it.correct for it in items], dtype=np.int64)
    p = rule_path(rule, judges, correct, rng, pool_size)
    if p.stop_at is not None:
        stopped_by: str | None = "rule"
    elif pool_size is not None and len(items) >= pool_size:
        stopped_by = "pool exhausted"
    else:
        stopped_by = None
    last = p.statistic[-1] if len(p.statistic) else np.nan
    more = 0 if stopped_by else rule.more_needed(p)
    if pool_size is not None and not stopped_by:
        more = min(more, pool_size - len(items))
    return Decision(stopped_by, len(items), p.stop_at, more, None if np.isnan(last) else float(last), p)


def next_items(pool: Sequence[PoolItem], labeled_ids: set[str], batch: int, rng: np.random.Generator) -> list[PoolItem]:
    """The next `batch` unlabeled pool items in a seeded random order of the whole pool (stable across calls).

    The order is drawn over the pool sorted by id, so the same pool in any line order gives the same items."""
    pool = sorted(pool, key=lambda p: p.id)
    order = rng.permutation(len(pool))
    fresh = [pool[i] for i in order if pool[i].id not in labeled_ids]
    return fresh[:batch]


def next_pool_items(pool: Sequence[PoolItem], labeled_ids: set[str], batch: int, rng: np.random.Generator,
                    joined: PoolVerdicts | None = None, check: VoteCheck | None = None) -> list[PoolItem]:
    """The next `batch` pool items: with the pool's verdicts joined to the labels (`joined`, and the last `check`),
    by vote split (`select.next_by_split`: where a label lowers the estimate's variance most, at the checked k where
    the interval is widest), the pool items without verdicts after them in the seeded random order; without, the
    seeded random order of the whole pool (`next_items`)."""
    from .select import next_by_split

    if joined is None or check is None:
        return next_items(pool, labeled_ids, batch, rng)
    by_id = {p.id: p for p in pool}
    picks = next_by_split(list(joined.ids), joined.verdicts, joined.gold, joined.n_classes, batch, check.at_k, rng,
                          check.estimate.model)
    out = [by_id[joined.ids[i]] for i in picks if joined.ids[i] in by_id]
    if len(out) < batch:
        taken = labeled_ids | {p.id for p in out}
        out += next_items(pool, taken, batch - len(out), np.random.default_rng(rng.integers(2**63)))
    return out


# --- the pool's verdicts (issue 17): the precision rule on every pool item, labeled or not -----------------


@dataclass(frozen=True)
class VoteCheck:
    """The precision rule checked on the vote-split estimate over the whole pool (`votes.estimate_errors`):
    `half_width` the widest half-width over the checked ks of its interval at the rule's monitoring level,
    `at_k` where it is widest, `estimate` the estimate itself (its `method` says whether the guard fell back to
    the labels only)."""

    half_width: float
    at_k: int
    estimate: VoteEstimate = field(repr=False)


def uses_pool_votes(rule: Rule) -> bool:
    """Only the calibrated precision rule can use the pool's verdicts: its statistic is an interval for the pool's
    error, which the vote-split estimate gives too. The sequential method's promise is a theorem about a
    confidence sequence of the labels, and the conformal and variance rules watch statistics of the labels only.
    With patience above 1 the rule needs its statistic at earlier numbers of labels, which the live loop did not
    keep for the pool's verdicts: that rule stays on the labels."""
    return isinstance(rule, PrecisionRule) and rule.method == "calibrated" and rule.patience == 1


BANDS = ("widest", "simultaneous")
# how the check's interval counts the unlabeled items' own outcomes (votes.estimate_errors' `outcomes`): exactly, as
# binomial draws per split. Same variance as the normal approximation ("normal", fit's), but the draws fall on
# whole items, so the interval is a little narrower where few unlabeled pluralities can be wrong (docs/STOPPING.md:
# 57.5 -> 56.1 labels at the stop against 63.6 with ids only, the promise kept in every collection)
CHECK_OUTCOMES = "binomial"


def vote_check(rule: Rule, verdicts: np.ndarray, gold: np.ndarray, rng: np.random.Generator,
               n_classes: int | None = None, counts: np.ndarray | None = None, level: float | None = None,
               band: str = "widest", outcomes: str = CHECK_OUTCOMES) -> VoteCheck:
    """The calibrated precision rule's statistic from every pool item: `verdicts` (items x judges class codes, -1 no
    verdict) and `gold` (-1 for the items not labeled yet), for the error over the pool's items (the labeled items'
    own error is exact, so it narrows as the pool gets labeled). band "widest": the widest half-width over the
    checked ks of the vote-split interval at the rule's monitoring level (the level the labels-only check uses
    after every label, rules.PrecisionRule); "simultaneous": `simultaneous_half_width` of the estimate's draws at
    `level` (default: the rule's monitoring level). `outcomes`: votes.estimate_errors' ("binomial": the unlabeled
    items' own outcomes drawn exactly)."""
    from ..votes import estimate_errors

    if not (isinstance(rule, PrecisionRule) and uses_pool_votes(rule)):
        raise ValueError("only the calibrated precision rule checks the pool's verdicts")
    if band not in BANDS:
        raise ValueError(f"band must be one of {BANDS}; got {band!r}")
    n = (np.asarray(verdicts) >= 0).sum(axis=1)
    lab = np.asarray(gold) >= 0
    top = int(n[lab].min()) if lab.any() else 0
    ks = rule.checked_ks(np.array([top]))
    level = rule.monitoring_level if level is None else level
    est = estimate_errors(verdicts, gold, ks, level, rng, n_classes=n_classes, counts=counts, outcomes=outcomes,
                          keep_draws=band == "simultaneous")
    if band == "simultaneous" and est.used_unlabeled:
        half, i = simultaneous_half_width(est.draws, np.array([row.estimate for row in est.rows]), level)
        return VoteCheck(half, est.rows[i].k, est)
    halves = [(row.high - row.low) / 2 for row in est.rows]
    i = int(np.argmax(halves))
    return VoteCheck(float(halves[i]), est.rows[i].k, est)


def simultaneous_half_width(draws: np.ndarray, centre: np.ndarray, level: float) -> tuple[float, int]:
    """The smallest h with P(|E_k - centre_k| <= h at every k) >= `level` under the posterior draws of the pool's
    error E (draws x ks): the `level` quantile of max_k |draw_k - centre_k|; and the k whose own `level` quantile
    of |draw_k - centre_k| is largest (where the band binds). h <= target is the rule's promise itself (the
    estimate within the target at every checked k) with posterior probability at least `level`."""
    dev = np.abs(np.asarray(draws, dtype=float) - np.asarray(centre, dtype=float)[None, :])
    half = float(np.quantile(dev.max(axis=1), level))
    return half, int(np.argmax(np.quantile(dev, level, axis=0)))


def decide_with_votes(rule: Rule, items: Sequence[Item], verdicts: np.ndarray, gold: np.ndarray,
                      rng: np.random.Generator, n_classes: int | None = None,
                      level: float | None = None, by_split: bool = False, band: str = "widest",
                      outcomes: str = CHECK_OUTCOMES) -> tuple[Decision, VoteCheck]:
    """`decide` for the calibrated precision rule with the pool's verdicts (every pool item in `verdicts`, the
    labeled ones with their gold): stop when the vote-split interval over the pool is at most the target half-wide
    (after at least `min_samples` labels), else ask for about (half-width / target)^2 times the labels so far.
    When the vote-split estimate falls back to the labels only (its guard: the labels cannot vouch for the split),
    the decision is the labels-only rule's (`decide`, with its finite-pool correction), as without the verdicts;
    `by_split` (the items were chosen by split, `select.next_by_split`): the post-stratified check's instead
    (`select.stratified_check`), since the labels are then no random sample of the pool."""
    from .select import stratified_check

    if not (isinstance(rule, PrecisionRule) and uses_pool_votes(rule)):
        raise ValueError("only the calibrated precision rule checks the pool's verdicts")
    pool_size = len(gold)
    base = decide(rule, items, rng, pool_size)
    check = vote_check(rule, verdicts, gold, rng, n_classes, level=level, band=band, outcomes=outcomes)
    half = check.half_width
    if not check.estimate.used_unlabeled:
        if not by_split:
            return base, check
        classes = classes_of(verdicts, gold, n_classes)
        strat = stratified_check(verdicts, gold, classes, check.estimate.ks, check.estimate.confidence_level)
        half = strat.half_width
    r = len(items)
    fired = half <= rule.target and r >= rule.min_samples
    if fired:
        stopped_by: str | None = "rule"
    elif r >= pool_size:
        stopped_by = "pool exhausted"
    else:
        stopped_by = None
    more = 0 if stopped_by else _forecast_more(rule, verdicts, gold, classes_of(verdicts, gold, n_classes), rng)
    if not stopped_by:
        more = min(more, pool_size - r)
    return Decision(stopped_by, r, r if fired else None, more, half, base.path), check


FORECAST_DRAWS = 50  # draws of plan's forecast behind "label about N more" (stopping/forecast.py)


def classes_of(verdicts: np.ndarray, gold: np.ndarray, n_classes: int | None) -> int:
    return n_classes or max(int(np.max(verdicts)) + 1, int(np.max(gold)) + 1, 2)


def _forecast_more(rule: PrecisionRule, verdicts: np.ndarray, gold: np.ndarray, classes: int,
                   rng: np.random.Generator) -> int:
    """"Label about N more" from plan's forecast (the judges' model of every pool item, sample's rule replayed
    on pools drawn from it: stopping/forecast.py), so that the number moves with the evidence, not with the noise
    of the running half-width: the upper end of plan's interval at the rule's level, not its median. A median
    forecast is right on average but jumps where the labels first show the judges erring together (the model
    could not see it before: +67% in one round on LLMBar); the upper end already holds that chance, so it moved
    at most 4-29% in a round on every collection and simulation, at 1.02-1.34x the labels the rule needed
    (docs/PLAN.md). The labels-only rule's need, so an upper bound where the vote split stops sooner."""
    from .forecast import forecast

    r = int((gold >= 0).sum())
    votes = Votes(tuple(f"j{j}" for j in range(verdicts.shape[1])), tuple(str(c) for c in range(classes)), verdicts,
                  gold, np.ones(len(gold), dtype=np.int64))
    ks = (rule.at_k,) if rule.at_k is not None else rule.ks
    try:
        plan = forecast(votes, rule.target, ks, rule.confidence_level, FORECAST_DRAWS,
                        rng=np.random.default_rng(rng.integers(2**63)), rule=rule)
    except ParameterError:  # no k every pool item's judges reach: the labels-only rule decides alone
        return max(1, rule.min_samples - r)
    rows = [f for f in plan.forecasts if f.what == "error"]
    row = next((f for f in rows if f.k is None), rows[0] if rows else None)
    if row is None or row.high is None:
        return len(gold) - r  # the interval's upper end is not reached within the pool
    return max(1, int(round(row.high)) - r, rule.min_samples - r)


@dataclass(frozen=True)
class PoolVerdicts:
    """Every pool item's verdicts (pool order, the pool's judges) with gold only where the labeled file gives it:
    `verdicts` items x judges class codes (-1 no verdict), `gold` (-1 not labeled yet), `n_classes`, `ids` (the pool
    items' ids, in the same order)."""

    verdicts: np.ndarray
    gold: np.ndarray
    n_classes: int
    ids: tuple[str, ...] = ()


def pool_verdicts(pool: Votes, labeled: Votes | None) -> tuple[PoolVerdicts | None, str]:
    """Join the pool's verdicts to the labeled file's gold by item id: (the pool's verdicts with gold, why) or (None,
    why not). Classes are matched by name; a pool item counts as labeled only when the labeled file holds
    it with gold (gold the pool itself carries is not a label yet: the labeled file is the loop's state). None when
    the pool or the labeled file carries no verdicts by item id, or no pool item is labeled with gold."""
    if pool.ids is None:
        return None, "the pool carries no item ids with its verdicts"
    if labeled is None or labeled.ids is None:
        return None, "the labeled items carry correctness only, not the judges' verdicts and gold"
    classes = list(pool.classes)
    code = {c: i for i, c in enumerate(classes)}
    for c in labeled.classes:
        if c not in code:
            code[c] = len(classes)
            classes.append(c)
    verdicts, _ = pool.per_item()
    verdicts = np.array(verdicts, dtype=np.int64)
    _, lab_gold = labeled.per_item()
    gold_by_id = {i: int(code[labeled.classes[g]]) for i, g in zip(labeled.ids, lab_gold) if g >= 0}
    gold = np.array([gold_by_id.get(i, -1) for i in pool.ids], dtype=np.int64)
    if not (gold >= 0).any():
        return None, "no pool item is labeled with gold yet"
    return PoolVerdicts(verdicts, gold, max(len(classes), 2), tuple(pool.ids)), f"{int((gold >= 0).sum())} labeled and {int((gold < 0).sum())} unlabeled pool items"


def pool_result(result: FitResult, verdicts: np.ndarray, gold: np.ndarray, n_classes: int, settings: FitSettings,
                rng: np.random.Generator) -> FitResult:
    """The live report's estimate when the pool's verdicts are joined (and the items may have been chosen by split):
    `result` is the labels-only fit of the labeled items; each row's estimate and interval become the vote-split
    estimate's over the pool (`votes.estimate_errors`, at `settings`' level, the unlabeled items' outcomes counted
    as the check counts them: `CHECK_OUTCOMES`), or, where its guard falls back, the
    post-stratified one's, so that a choice by split never reaches the report through the labels-only fit. Each
    row keeps the labels-only estimate beside it (`labels_only`)."""
    from dataclasses import replace

    from ..votes import estimate_errors
    from .select import stratified_check

    ks = tuple(settings.ks)
    est = estimate_errors(verdicts, gold, ks, settings.confidence_level, rng, n_classes=n_classes, labels_only=result,
                          outcomes=CHECK_OUTCOMES)
    if est.used_unlabeled:
        new = [(v.estimate, v.low, v.high) for v in est.rows]
    else:
        strat = stratified_check(verdicts, gold, n_classes, ks, settings.confidence_level)
        new = [(float(c), float(max(c - h, 0.0)), float(min(c + h, 1.0))) for c, h in zip(strat.estimate, strat.half)]
    rows = tuple(replace(r, estimate=e, low=lo, high=hi, labels_only=(r.estimate, r.low, r.high))
                 for r, (e, lo, hi) in zip(result.rows, new))
    return replace(result, rows=rows, unlabeled=est)
