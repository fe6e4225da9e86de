"""What every reader returns: a dataset of labeled items, as counts, and (when kept) as items and judgments."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..counts import CountTable, ItemClusters
from ..errors import InputError
from ..formats import MAX_JUDGES as MAX_JUDGES  # the readers' one limit (formats.py)
from ..formats import stem


@dataclass(frozen=True)
class Item:
    """One labeled item: how many judges gave a verdict and how many of them were correct.

    `marks`: each judge's mark in the dataset's judge order (1 correct, 0 not, None no verdict), kept only for
    `Keep.JUDGMENTS`; `line`: the line or row it came from (1-based; 0 when not known).
    """

    judges: int
    correct: int
    id: str | None = None
    text: str | None = None
    line: int = 0
    marks: tuple[int | None, ...] | None = None


@dataclass(frozen=True)
class Skip:
    """Lines or rows a reader skipped, and why."""

    reason: str
    count: int
    first: int = 0  # first line or row skipped for this reason


@dataclass(frozen=True)
class Reading:
    """How an input was read: its format, the role each field or column played, what was skipped."""

    source_format: str
    roles: tuple[tuple[str, str], ...] = ()  # (role, field or column)
    judge_counts: tuple[tuple[str, int], ...] = ()  # (judge, marks given) in the dataset's judge order
    skips: tuple[Skip, ...] = ()
    unit: str = "line"  # what `line` numbers: line (JSON Lines), row (tables), record (tool logs)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Votes:
    """What the judges said on every item, labeled or not, as class codes (the data model of unlabeled items).

    Items with the same verdicts and the same gold are one *pattern*: `patterns[p, j]` is the class code judge j gave
    (-1: no verdict), `gold[p]` the gold's code (-1: no gold, an unlabeled item), `counts[p]` how many items share
    it; `classes[code]` is the class as read (text). Patterns, not rows, are what a reader hands over, so a table
    of 10^7 rows costs what its distinct patterns cost. `item_pattern` (each item's pattern, in input order) and
    `ids` are kept only when a command needs items (pairing by id, the live sampling loop); `clusters` (each
    item's cluster id, e.g. the prompt that several sampled answers share) only when one was asked for.
    `no_verdict`: the items no judge gave a verdict on, as (gold code or -1, items) pairs: no pattern holds them
    (fit, judges and sample cannot use an item without a verdict; readers count them as skipped), but they are
    items of the evaluated system, and `score` estimates the pass rate of all of them (score/strata.py).
    """

    judges: tuple[str, ...]
    classes: tuple[str, ...]
    patterns: np.ndarray = field(repr=False)
    gold: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    item_pattern: np.ndarray | None = field(default=None, repr=False)
    ids: tuple[str, ...] | None = field(default=None, repr=False)
    clusters: tuple[str, ...] | None = field(default=None, repr=False)  # each item's cluster (--cluster-field), input order
    no_verdict: tuple[tuple[int, int], ...] = ()  # (gold code or -1, items) of the items no judge gave a verdict on

    def __post_init__(self) -> None:
        p = np.asarray(self.patterns, dtype=np.int32).reshape(-1, len(self.judges))
        g = np.asarray(self.gold, dtype=np.int32).reshape(-1)
        c = np.asarray(self.counts, dtype=np.int64).reshape(-1)
        if not (len(p) == len(g) == len(c)) or (c < 0).any():
            raise ValueError("patterns, gold and counts must have one entry per pattern, counts >= 0")
        if p.size and (p.min() < -1 or p.max() >= len(self.classes)) or g.size and (g.min() < -1 or g.max() >= len(self.classes)):
            raise ValueError("class codes must be -1 or index `classes`")
        for name, arr in (("patterns", p), ("gold", g), ("counts", c)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if self.item_pattern is not None:
            ip = np.asarray(self.item_pattern, dtype=np.int64).reshape(-1)
            if ip.size and (ip.min() < 0 or ip.max() >= len(p)) or int(np.bincount(ip, minlength=len(p)).sum()) != int(c.sum()):
                raise ValueError("item_pattern must index patterns, one entry per item")
            ip.setflags(write=False)
            object.__setattr__(self, "item_pattern", ip)
        if any(not -1 <= g < len(self.classes) or n < 0 for g, n in self.no_verdict):
            raise ValueError("no_verdict must hold (gold code or -1, items >= 0) pairs")
        if self.clusters is not None and (self.item_pattern is None or len(self.clusters) != int(c.sum())):
            raise ValueError("clusters need item_pattern and one cluster id per item")

    @property
    def labeled_items(self) -> int:
        return int(self.counts[self.gold >= 0].sum())

    @property
    def unlabeled_items(self) -> int:
        return int(self.counts[self.gold < 0].sum())

    @property
    def no_verdict_items(self) -> int:
        """Items no judge gave a verdict on (labeled or not): in no pattern."""
        return sum(n for _, n in self.no_verdict)

    def per_item(self) -> tuple[np.ndarray, np.ndarray]:
        """(verdicts (items, judges), gold (items,)): each item's row, in input order when items were kept."""
        index = self.item_pattern if self.item_pattern is not None else np.repeat(np.arange(len(self.counts)), self.counts)
        return self.patterns[index], self.gold[index]


@dataclass(frozen=True)
class Slicing:
    """A dataset's slice (`--by`; inputs/slices.py): the `by` it was read with, its `key` and its `parent`'s name once
    split; before the split (JSON Lines) `line_keys` holds each line's raw key (a value as text, a length, None when
    missing) and `vote_lines` the line of each item of the votes, in their order."""

    by: str
    key: str | None = None
    parent: str | None = None
    line_keys: dict[int, str | int | None] | None = field(default=None, repr=False)
    vote_lines: tuple[int, ...] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Dataset:
    """A validated input: one file, or one value of a table's dataset column.

    `table` is the labeled items' (judges, correct) histogram; `votes`, for inputs that carry verdicts and not only
    correctness, what every judge said on every item, unlabeled items included (None for correctness-only inputs,
    which cannot have unlabeled items).
    """

    name: str
    source: str
    table: CountTable
    shape: str
    skipped: int = 0
    items: tuple[Item, ...] | None = None
    judge_names: tuple[str, ...] = ()
    reading: Reading | None = field(default=None, repr=False)
    votes: Votes | None = field(default=None, repr=False)
    left_out: tuple[str, ...] = ()  # files of the arguments that were not read (this tool's own outputs), for stderr
    clusters: ItemClusters | None = field(default=None, repr=False)  # labeled items that are not independent (epochs)
    slicing: Slicing | None = field(default=None, repr=False)  # its slice (--by), or the raw keys to split by

    @property
    def unlabeled_items(self) -> int:
        return 0 if self.votes is None else self.votes.unlabeled_items

    @property
    def n_items(self) -> int:
        return self.table.items

    @property
    def most_judges(self) -> int:
        """The most judges on one item, labeled or not: beyond it a row is extrapolated (extrapolation.py)."""
        most = self.table.max_judges if self.table.items else 0
        if self.votes is not None and len(self.votes.patterns):
            most = max(most, int((self.votes.patterns >= 0).sum(axis=1).max()))
        return most

    def judgment_matrix(self) -> np.ndarray:
        """(items, judges) array: 1.0 correct, 0.0 not, NaN no verdict; needs items read with Keep.JUDGMENTS."""
        if self.items is None or any(it.marks is None for it in self.items):
            raise InputError(self.source, "carries no per-judge judgments (counts only); the judges analysis needs "
                                          "each judge's verdict on each item")
        out = np.full((len(self.items), len(self.judge_names)), np.nan)
        for i, it in enumerate(self.items):
            for j, m in enumerate(it.marks or ()):
                if m is not None:
                    out[i, j] = m
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "items": self.n_items, "skipped_lines": self.skipped}


def dataset_name(path: str | Path) -> str:
    """File name without its data extensions (.jsonl, .csv.gz, .parquet, .eval, ...: formats.stem)."""
    return stem(path)


def count_table(keys: Iterable[tuple[tuple[int, int], int]]) -> CountTable:
    """A CountTable from ((judges, correct), number of items) pairs."""
    pairs = list(keys)
    top = max((k for (k, _), n in pairs if n), default=1)
    arr = np.zeros((max(top, 1) + 1, max(top, 1) + 1), dtype=np.int64)
    for (k, s), n in pairs:
        if n:  # an empty cell may lie beyond the table (a counts table's rows with count 0)
            arr[k, s] += n
    return CountTable(arr)
