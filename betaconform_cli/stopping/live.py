"""Live mode of `sample`: decide on the items labeled so far, and propose the next ones from the pool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..inputs import Item, PoolItem
from .rules import Rule, RulePath, rule_path


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
