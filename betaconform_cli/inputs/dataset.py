"""What every reader returns: a dataset of labeled items, as counts, and (when kept) as items and judgments."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..counts import CountTable
from ..errors import InputError

MAX_JUDGES = 1000  # per item: the (judges, correct) table is (K+1)^2 cells


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.source_format,
            "roles": {role: name for role, name in self.roles},
            "judges": [{"name": n, "verdicts": c} for n, c in self.judge_counts],
            "skipped": [{"reason": s.reason, "count": s.count, "first": s.first or None} for s in self.skips],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Dataset:
    """A validated input: one file, or one value of a table's dataset column."""

    name: str
    source: str
    table: CountTable
    shape: str
    skipped: int = 0
    items: tuple[Item, ...] | None = None
    judge_names: tuple[str, ...] = ()
    reading: Reading | None = field(default=None, repr=False)
    left_out: tuple[str, ...] = ()  # files of the arguments that were not read (this tool's own outputs), for stderr

    @property
    def n_items(self) -> int:
        return self.table.items

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
    """File name without its data extensions (.jsonl, .csv.gz, .parquet, .eval, ...)."""
    name = Path(path).name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".tsv", ".parquet", ".eval", ".yaml", ".yml"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def count_table(keys: Iterable[tuple[tuple[int, int], int]]) -> CountTable:
    """A CountTable from ((judges, correct), number of items) pairs."""
    pairs = list(keys)
    top = max((k for (k, _), n in pairs if n), default=1)
    arr = np.zeros((max(top, 1) + 1, max(top, 1) + 1), dtype=np.int64)
    for (k, s), n in pairs:
        arr[k, s] += n
    return CountTable(arr)
