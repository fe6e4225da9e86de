"""The cells of a table that a reader checks one by one, where DuckDB's aggregation cannot: a list or an object in
a cell that must hold one value (tables.py reads the rest)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import values
from .table_sql import Table, first_row, q

__all__ = ["check_cells"]


def _nested(typ: str) -> bool:
    """A DuckDB type holding several values per cell: a list (INTEGER[]), an array (INTEGER[3]), a struct, map or
    union (Parquet and JSON carry them)."""
    t = typ.upper()
    return t.endswith("]") or t.startswith(("STRUCT", "MAP", "UNION", "LIST"))


def _line_numbers(path: Path, rows: set[int]) -> dict[int, int]:
    """The line of each of some rows of a JSON Lines table (row k is the k-th non-blank line)."""
    from .paths import iter_lines

    out: dict[int, int] = {}
    for k, (lineno, _) in enumerate(iter_lines(path), start=1):
        if k in rows:
            out[k] = lineno
            if len(out) == len(rows):
                break
    return out


def check_cells(con: Any, table: Table, columns: Sequence[str], path: Path, kind: str) -> None:
    """Each cell of `columns` is one value (text, a number or a boolean), as values.check_scalar says for JSON Lines:
    a list or an object is an InputError naming the file, the row (a JSON Lines file's line) and the column, never
    read as its text. Parquet and JSON columns of such a type are found by their type; a JSON Lines table read as
    text is searched for cells that begin like a list or an object, and those lines are parsed to tell a JSON list
    from text that begins with a bracket."""
    cols = [c for c in dict.fromkeys(columns) if c in table.names]
    for col in cols:
        typ = table.type_of(col)
        if _nested(typ) or typ.upper().startswith("JSON"):
            row = first_row(con, f"SELECT __row FROM {table.numbered} WHERE {q(col)} IS NOT NULL ORDER BY __row")
            raise InputError(table.where, f"must be one value (text, a number or a boolean), got {typ} values",
                             line=int(row[0]) if row else None, field=col, unit="row")
    if kind in ("csv", "tsv") and cols:
        _no_nul(con, table, cols, path)
    if kind != "jsonl" or path.is_dir() or not cols:
        return
    opening = " OR ".join(f"left(ltrim(CAST({q(c)} AS VARCHAR)), 1) IN ('[', '{{')" for c in cols)
    rows = [int(r[0]) for r in con.execute(f"SELECT __row FROM {table.numbered} WHERE {opening} ORDER BY __row LIMIT 10000").fetchall()]
    if not rows:
        return
    import orjson

    from .paths import iter_lines

    wanted = set(rows)
    for k, (lineno, raw) in enumerate(iter_lines(path), start=1):
        if k not in wanted:
            continue
        obj = orjson.loads(raw)
        for col in cols:
            value = obj.get(col) if isinstance(obj, dict) else None
            if isinstance(value, (list, dict)):
                raise InputError(table.where, f"must be one value (text, a number or a boolean), got {values.shown(value)}",
                                 line=lineno, field=col)
        if k >= rows[-1]:
            return


def _no_nul(con: Any, table: Table, cols: list[str], path: Path) -> None:
    """A NUL byte in a text table's cell is binary data or a damaged file (not a verdict that matches no gold class):
    an InputError naming the file and the line of its first NUL byte (a folder: its first file that holds one)."""
    if path.is_file() and not path.name.lower().endswith(".gz") and _first_nul(path) is None:
        return  # no NUL byte in the file: its bytes are scanned ~7x faster than its cells (0.04 s, not 0.3 s, at 5M rows)
    nul = " OR ".join(f"contains(CAST({q(c)} AS VARCHAR), chr(0))" for c in cols)
    if not first_row(con, f"SELECT 1 FROM {table.sql} WHERE {nul}"):
        return
    for file in sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]:
        found = _first_nul(file)
        if found is not None:
            raise InputError(table.where if file == path else str(file), f"a NUL byte (at byte {found[1]} of the file): "
                                                                         "binary data or a damaged file, not text", line=found[0])
    raise InputError(table.where, "a NUL byte in a cell: binary data or a damaged file, not text")


def _first_nul(file: Path) -> tuple[int, int] | None:
    """(line, byte) of a file's first NUL byte (both from 1; a gzip file's, decompressed), else None."""
    from .paths import open_binary

    lines, size = 1, 0
    with open_binary(file) as fh:
        while chunk := fh.read(1 << 20):
            at = chunk.find(b"\x00")
            if at >= 0:
                return lines + chunk.count(b"\n", 0, at), size + at + 1
            lines, size = lines + chunk.count(b"\n"), size + len(chunk)
    return None
