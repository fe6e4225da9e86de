"""From a reader's marks (one per item and judge) or histograms to Datasets: shared by the table, promptfoo and
inspect readers, so that every format splits datasets, names judges, skips items and reports it the same way."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..counts import ItemClusters
from ..errors import InputError
from .dataset import MAX_JUDGES, Dataset, Item, Reading, Skip, Votes, count_table
from .options import Keep

NO_GOLD = "no gold label"
NO_VERDICT = "no judge gave a verdict"


@dataclass(frozen=True)
class Mark:
    """One judge's mark on one item: 1 agreed with gold, 0 did not, None no verdict."""

    item: str
    judge: str
    mark: int | None
    row: int = 0
    dataset: str | None = None
    text: str | None = None
    no_gold: bool = False
    verdict: str | None = None  # the verdict's class (patterns.class_text), for Votes (from_marks(with_votes=True))
    gold: str | None = None  # the gold's class
    cluster: str | None = None  # items that share it are not independent (an inspect-ai sample's epochs)


@dataclass
class _Acc:
    """What is gathered for one dataset: items in order of appearance, judges in order of appearance."""

    judges: dict[str, int] = field(default_factory=dict)
    items: dict[str, dict[str, int | None]] = field(default_factory=dict)
    first_row: dict[str, int] = field(default_factory=dict)
    text: dict[str, str | None] = field(default_factory=dict)
    no_gold: set[str] = field(default_factory=set)
    verdicts: dict[str, dict[str, str | None]] = field(default_factory=dict)
    gold: dict[str, str | None] = field(default_factory=dict)
    cluster: dict[str, str] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)  # judges with a verdict on some item, labeled or not


def from_marks(
    marks: Iterable[Mark], name: str, source: str, reading: Reading, keep: Keep, unit: str = "row",
    judge_order: Sequence[str] | None = None, empty_judge: str | None = None, with_votes: bool = False,
) -> list[Dataset]:
    """Datasets from marks (several when marks name datasets). A repeated (item, judge) is an InputError; items
    without gold or without any verdict are skipped and counted; `empty_judge`: the field named when a judge has no
    verdict on any item (an InputError), None to allow it. Judges are in `judge_order` (when known, as a wide
    table's columns) or in order of appearance."""
    accs: dict[str | None, _Acc] = {}
    for m in marks:
        acc = accs.get(m.dataset)
        if acc is None:
            acc = accs[m.dataset] = _Acc({j: i for i, j in enumerate(judge_order or ())})
        row = acc.items.setdefault(m.item, {})
        if m.item not in acc.first_row:
            acc.first_row[m.item] = m.row
            acc.text[m.item] = m.text
        if m.judge in row:
            raise InputError(source, f"item {m.item!r} and judge {m.judge!r} appear again (first at {unit} "
                                     f"{acc.first_row[m.item]}); keep the first or the last with `duplicates`",
                             line=m.row or None, unit=unit)
        acc.judges.setdefault(m.judge, len(acc.judges))
        row[m.judge] = m.mark
        if m.mark is not None or m.verdict is not None:
            acc.answered.add(m.judge)
        if m.no_gold:
            acc.no_gold.add(m.item)
        if m.cluster is not None:
            acc.cluster[m.item] = m.cluster
        if with_votes:
            acc.verdicts.setdefault(m.item, {})[m.judge] = m.verdict
            acc.gold[m.item] = m.gold
    out = []
    for ds, acc in sorted(accs.items(), key=lambda kv: (kv[0] is not None, str(kv[0]))):
        d = _dataset(acc, name if ds is None else str(ds), source, reading, keep, unit, empty_judge)
        if with_votes:
            d = _with_votes(d, acc, keep)
        out.append(d)
    if not out:
        raise InputError(source, "no items")
    return out


def _dataset(acc: _Acc, name: str, source: str, reading: Reading, keep: Keep, unit: str, empty_judge: str | None) -> Dataset:
    names = tuple(acc.judges)
    given = [0] * len(names)
    counts: dict[tuple[int, int], int] = {}
    items: list[Item] = []
    cells: list[tuple[int, int, str]] = []  # each labeled item's cell and cluster, when its reader gave clusters
    skips: dict[str, list[int]] = {}
    for item, row in acc.items.items():
        vec = tuple(row.get(j) for j in names)
        judges = sum(v is not None for v in vec)
        reason = NO_GOLD if item in acc.no_gold and judges == 0 else (NO_VERDICT if judges == 0 else None)
        if reason:
            entry = skips.setdefault(reason, [0, acc.first_row[item]])
            entry[0] += 1
            continue
        if judges > MAX_JUDGES:
            raise InputError(source, f"{judges} judges on item {item!r}; at most {MAX_JUDGES} are supported",
                             line=acc.first_row[item] or None, unit=unit)
        correct = sum(v == 1 for v in vec)
        counts[(judges, correct)] = counts.get((judges, correct), 0) + 1
        if acc.cluster:
            cells.append((judges, correct, acc.cluster.get(item, item)))
        for j, v in enumerate(vec):
            given[j] += v is not None
        if keep is not Keep.COUNTS:
            items.append(Item(judges, correct, item, acc.text.get(item), acc.first_row[item],
                              vec if keep is Keep.JUDGMENTS else None))
    if empty_judge is not None:
        for judge, n in zip(names, given):
            if n == 0 and judge not in acc.answered:  # a verdict on an unlabeled item is a verdict
                raise InputError(source, f"judge {judge!r} gave no verdict on any item", field=judge if unit == "row" else empty_judge,
                                 unit="row" if unit == "row" else "")
    if not counts and not skips:
        raise InputError(source, f"no items in {name!r}")  # with skips: checks.labels_problem says why, or the
        # items without gold are unlabeled items (a pool; doctor reads it)
    info = Reading(reading.source_format, reading.roles, tuple(zip(names, given)),
                   reading.skips + tuple(Skip(r, n, first) for r, (n, first) in skips.items()), unit, reading.notes)
    return Dataset(name, source, count_table(counts.items()), reading.source_format, sum(n for n, _ in skips.values()),
                   tuple(items) if keep is not Keep.COUNTS else None, names if keep is Keep.JUDGMENTS else (), info,
                   clusters=item_clusters(cells) if cells else None)


def item_clusters(cells: Sequence[tuple[int, int, str]]) -> ItemClusters:
    """counts.ItemClusters from each labeled item's (judges, correct, cluster id)."""
    codes: dict[str, int] = {}
    return ItemClusters(np.array([c[0] for c in cells]), np.array([c[1] for c in cells]),
                        np.array([codes.setdefault(c[2], len(codes)) for c in cells]))


def _with_votes(d: Dataset, acc: _Acc, keep: Keep) -> Dataset:
    """A dataset with the Votes of its marks: every item with a verdict, labeled or not (items kept with their ids
    unless only counts are asked for)."""
    from dataclasses import replace

    from .patterns import build

    judges = tuple(acc.judges)
    rows = [(tuple(acc.verdicts[i].get(j) for j in judges), acc.gold.get(i)) for i in acc.items]
    if acc.cluster:  # items are kept with their clusters (score's cluster variance), whatever was asked for
        votes = build(judges, {}, rows, list(acc.items), [acc.cluster.get(i, i) for i in acc.items])
    elif keep is Keep.COUNTS:
        tally: dict[tuple[tuple[str | None, ...], str | None], int] = {}
        for r in rows:
            tally[r] = tally.get(r, 0) + 1
        votes = build(judges, tally)
    else:
        votes = build(judges, {}, rows, list(acc.items))
    return without_gold_skips(replace(d, votes=votes), votes.unlabeled_items)


def from_histograms(rows: Sequence[tuple[str | None, int, int, int, int]], name: str, source: str, reading: Reading,
                    keep: Keep) -> list[Dataset]:
    """Datasets from (dataset, judges, correct, items, items without gold) cells; cells with no verdict are skipped."""
    by: dict[str | None, dict[tuple[int, int], int]] = {}
    skipped: dict[str | None, dict[str, int]] = {}
    for ds, judges, correct, n, no_gold in rows:
        if judges == 0:
            sk = skipped.setdefault(ds, {})
            if no_gold:
                sk[NO_GOLD] = sk.get(NO_GOLD, 0) + no_gold
            if n - no_gold:
                sk[NO_VERDICT] = sk.get(NO_VERDICT, 0) + n - no_gold
            continue
        if judges > MAX_JUDGES:
            raise InputError(source, f"an item has {judges} judges; at most {MAX_JUDGES} are supported")
        if n == 0:
            continue  # a counts table's cell with count 0
        cells = by.setdefault(ds, {})
        cells[(judges, correct)] = cells.get((judges, correct), 0) + n
    out = []
    for ds in sorted(dict.fromkeys([r[0] for r in rows]), key=lambda d: (d is not None, str(d))):
        sk = skipped.get(ds, {})
        if ds not in by and not sk:
            raise InputError(source, f"no usable items in {name if ds is None else ds!r} (every count is 0)")
        cells = by.get(ds, {})  # none: checks.labels_problem says why, unless they are unlabeled items
        items: tuple[Item, ...] | None = None
        if keep is not Keep.COUNTS:
            items = tuple(Item(k, s) for (k, s), n in cells.items() for _ in range(n))
        info = Reading(reading.source_format, reading.roles, (), reading.skips + tuple(Skip(r, n) for r, n in sk.items()),
                       reading.unit, reading.notes)
        out.append(Dataset(name if ds is None else str(ds), source, count_table(cells.items()), reading.source_format,
                           sum(sk.values()), items, (), info))
    if not out:
        raise InputError(source, "no items")
    return out


def with_skips(datasets: list[Dataset], name: str, skipped: Sequence[tuple[str | None, str, int]]) -> list[Dataset]:
    """Datasets with the rows a reader skipped (`skip_invalid`) counted in their readings: (dataset, reason, row)
    each, row 0 when unknown; rows of no known dataset are counted in the first."""
    if not skipped:
        return datasets
    from dataclasses import replace

    by: dict[str, dict[str, list[int]]] = {}
    names = [d.name for d in datasets]
    for ds, reason, row in skipped:
        key = str(ds) if ds is not None and str(ds) in names else names[0]
        entry = by.setdefault(key, {}).setdefault(reason, [0, 0])
        entry[0] += 1
        if row and (not entry[1] or row < entry[1]):
            entry[1] = row
    out = []
    for d in datasets:
        extra = tuple(Skip(r, n, first) for r, (n, first) in by.get(d.name, {}).items())
        if not extra:
            out.append(d)
            continue
        reading = replace(d.reading, skips=d.reading.skips + extra) if d.reading else None
        out.append(replace(d, skipped=d.skipped + sum(s.count for s in extra), reading=reading))
    return out


def attach_votes(datasets: list[Dataset], found: dict[str, tuple[Any, ...] | Votes], source: str) -> list[Dataset]:
    """Datasets with their Votes (`found`: dataset name -> its Votes, or (judges, {(classes, gold): items}[, items, ids]),
    patterns.build's arguments). Items without gold but with verdicts are unlabeled items now, not skipped: the readers' "no gold label"
    skips shrink by them (what remains had no verdict either: counted as such)."""
    from dataclasses import replace

    from .patterns import build

    out = []
    for d in datasets:
        got = found.get(d.name)
        if got is None:
            out.append(d)
            continue
        votes = got if isinstance(got, Votes) else build(*got)  # table_patterns hands over Votes laid out as build does
        out.append(without_gold_skips(replace(d, votes=votes), votes.unlabeled_items))
    return out


def without_gold_skips(d: Dataset, unlabeled: int) -> Dataset:
    """A dataset whose "no gold label" skips are its unlabeled items (kept in its Votes): the rest of them, items
    with neither gold nor a verdict, are counted as items without a verdict."""
    from dataclasses import replace

    if d.reading is None:
        return d
    skips: list[Skip] = []
    removed = 0
    for s in d.reading.skips:
        if s.reason != NO_GOLD:
            skips.append(s)
            continue
        rest = max(s.count - unlabeled, 0)
        removed += s.count - rest
        if rest:
            skips.append(Skip(NO_VERDICT, rest, 0))
    none = [s for s in skips if s.reason == NO_VERDICT]
    if len(none) > 1:  # one line for the items without a verdict, whichever count came first
        first = min((s.first for s in none if s.first), default=0)
        at = skips.index(none[0])
        skips = [s for s in skips if s.reason != NO_VERDICT]
        skips.insert(at, Skip(NO_VERDICT, sum(s.count for s in none), first))
    return replace(d, skipped=d.skipped - removed, reading=replace(d.reading, skips=tuple(skips)))
