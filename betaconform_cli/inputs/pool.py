"""The unlabeled pool of `sample`'s live mode: every item's id and its raw line, written back unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import InputError
from . import records
from .paths import as_path, is_stdin, iter_lines


@dataclass(frozen=True)
class PoolItem:
    """One pool line: its id and the raw JSON line (written back unchanged as a next item to label)."""

    id: str
    raw: bytes
    line: int


def read_pool(path: str | Path, id_field: str = "id") -> list[PoolItem]:
    """Every non-blank line of `path` as (id, raw line). Malformed lines, missing and duplicate ids: InputError."""
    p = as_path(path)
    where = "<stdin>" if is_stdin(p) else str(p)
    items: list[PoolItem] = []
    seen: dict[str, int] = {}
    for lineno, raw in iter_lines(p):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(where, f"malformed JSON ({exc})", line=lineno) from None
        ident = records.exact_id(records.get(obj, id_field, None), raw, id_field) if isinstance(obj, dict) else None
        if ident is None:
            raise InputError(where, "pool item has no id (every pool item needs one; name its field with `id_field`)", line=lineno, field=id_field)
        if ident in seen:
            raise InputError(where, f"duplicate id {ident!r} (first on line {seen[ident]})", line=lineno, field=id_field)
        seen[ident] = lineno
        items.append(PoolItem(ident, raw if raw.endswith(b"\n") else raw + b"\n", lineno))
    if not items:
        raise InputError(where, "empty pool: no items")
    return items
