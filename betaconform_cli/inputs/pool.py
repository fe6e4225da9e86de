"""The unlabeled pool of `sample`'s live mode: every item's id and its raw line, written back unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import InputError
from ..formats import load_json
from . import records, values
from .paths import as_path, is_stdin, iter_lines


@dataclass(frozen=True)
class PoolItem:
    """One pool line: its id and the raw JSON line (written back unchanged as a next item to label)."""

    id: str
    raw: bytes
    line: int


def read_pool(path: str | Path, id_field: str = "id", duplicates: str = "error") -> list[PoolItem]:
    """Every non-blank line of `path` as (id, raw line). Malformed lines and missing ids: InputError; a repeated id
    too, unless `duplicates` keeps the first or the last line of each id (the rule of every reader)."""
    p = as_path(path)
    where = "<stdin>" if is_stdin(p) else str(p)
    items: list[PoolItem] = []
    seen: dict[str, int] = {}
    for lineno, raw in iter_lines(p):
        try:
            obj = load_json(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(where, values.json_problem(raw, exc), line=lineno) from None
        ident = records.exact_id(records.get(obj, id_field, None), raw, id_field) if isinstance(obj, dict) else None
        if ident is None:
            raise InputError(where, "pool item has no id (every pool item needs one; name its field with `id_field`)", line=lineno, field=id_field)
        item = PoolItem(ident, raw if raw.endswith(b"\n") else raw + b"\n", lineno)
        if ident in seen:
            if duplicates == "error":
                raise InputError(where, f"id {ident!r} appears again (first on line {items[seen[ident]].line}); keep the "
                                        "first or the last with `duplicates`", line=lineno, field=id_field)
            if duplicates == "last":
                items[seen[ident]] = item
            continue
        seen[ident] = len(items)
        items.append(item)
    if not items:
        raise InputError(where, "empty pool: no items")
    return items
