"""A long table of verdicts read in ONE pass over its rows: the (judges, correct) histogram, the checks and the vote
patterns (issue 29). Each item's verdicts are packed by DuckDB into one 64-bit key -- a class code of a few bits per
judge, at a slot of its own -- beside table_sql.histograms' own aggregates, so that the rows are read once; Python
decodes the few distinct keys into patterns. Where the judges' slots cannot fit 64 bits (many judges or classes),
None: the reader takes table_sql.vote_patterns, a second pass."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import values
from .dataset import Votes
from .options import InputOptions
from .patterns import canonical, class_order
from .table_sql import Roles, Table, check_rows, fail, gold_expr, lit, q, weights

MAX_CODES = 255  # distinct verdict texts a key codes (more: the second pass)


def _slots(names: list[tuple[str, int]], col: str, bits: int) -> tuple[str, dict[str, int]] | None:
    """SQL for each judge's bit offset in the key, from DuckDB's hash of its name by a shift and modulus that give
    every judge its own slot within 64 bits, and each name's offset; None when none does."""
    for mod in range(len(names), 64 // bits + 1):
        for shift in range(0, 60, 3):
            slots = {n: ((h >> shift) % mod) * bits for n, h in names}
            if len(set(slots.values())) == len(names):
                return f"CAST(((hash({col}) >> {shift}) % {mod}) * {bits} AS UBIGINT)", slots
    return None


def counts_and_patterns(con: Any, table: Table, roles: Roles, opts: InputOptions) -> tuple[list[tuple[Any, ...]], dict[Any, Votes]] | None:
    """(histogram rows as table_sql.histograms gives them, {dataset: its Votes}) of a long table whose verdicts are scored against a gold column, from one
    GROUP BY that also runs histograms' checks; None when the patterns do not fit a 64-bit key.

    A labeled item's (judges, correct) cell is read off its pattern: its verdicts' classes against the gold's class,
    patterns.canonical's form, so that a verdict agrees with gold by values.agree's rule (numbers as numbers)."""
    judge = f"CAST({q(roles.judge or '')} AS VARCHAR)"
    verdict = f"CAST({q(roles.verdict or '')} AS VARCHAR)"
    got = con.execute(f"SELECT j, hash(j) FROM (SELECT DISTINCT {judge} AS j FROM {table.sql})").fetchall()
    raws = [r[0] for r in con.execute(f"SELECT DISTINCT {verdict} FROM {table.sql}").fetchall()]
    if any(n is None for n, _ in got) or len(raws) > MAX_CODES + 1:
        return None  # an empty judge name is an error histograms' checks name; too many texts to code
    cls = {raw: canonical(raw) for raw in raws if raw is not None and not values.is_missing(raw)}
    classes = sorted({c for c in cls.values() if c is not None})
    code = {c: i + 1 for i, c in enumerate(classes)}
    bits = max(1, len(classes).bit_length())
    found = _slots([(str(n), int(h)) for n, h in got], judge, bits)
    w, _ = weights(con, table, roles)
    if found is None or not classes or not w:
        return None
    slot_sql, slots = found
    cases = " ".join(f"WHEN {lit(raw)} THEN {code[c]}" for raw, c in cls.items() if c is not None)
    g = gold_expr(table, roles.gold or "")
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"
    item = q(roles.item or "")
    inner = (f"SELECT {ds} AS ds, bit_or(CAST(CASE {verdict} {cases} END AS UBIGINT) << {slot_sql}) AS key, max({g}) AS gold, "
             f"count(*) - bit_count(bit_or({w})) AS dups, {item} IS NULL OR coalesce(min({g}) <> max({g}), false) OR "
             f"count({g}) NOT IN (0, count(*)) AS bad FROM {table.sql} GROUP BY {ds + ', ' if roles.dataset else ''}{item}")
    try:
        rows = con.execute(f"SELECT ds, key, gold, count(*), max(dups), bool_or(bad) FROM ({inner}) GROUP BY ds, key, gold").fetchall()
    except Exception as exc:  # noqa: BLE001
        raise fail(table.where, exc) from None
    if any(r[4] > 0 or r[5] for r in rows):
        check_rows(con, table, roles, opts)  # raises the first bad row's InputError
    return _decode(rows, classes, slots, bits)


def _decode(rows: list[tuple[Any, ...]], classes: list[str], slots: dict[str, int], bits: int
            ) -> tuple[list[tuple[Any, ...]], dict[Any, Votes]]:
    """The histogram rows and each dataset's Votes of (dataset, key, gold, items, ...) rows: the keys unpacked with
    numpy, the Votes laid out as patterns.build lays them out (classes in its order, patterns sorted, repeats merged)."""
    names = sorted(slots)
    shifts = np.array([slots[j] for j in names], dtype=np.uint64)
    cells: dict[tuple[Any, int, int], list[int]] = {}
    by_ds: dict[Any, list[tuple[Any, ...]]] = {}
    for r in rows:
        by_ds.setdefault(r[0], []).append(r)
    out: dict[Any, Votes] = {}
    for ds, got in by_ds.items():
        keys = np.array([0 if r[1] is None else int(r[1]) for r in got], dtype=np.uint64)
        codes = ((keys[:, None] >> shifts[None, :]) & np.uint64((1 << bits) - 1)).astype(np.int64)  # 0: no verdict
        golds = [canonical(r[2]) for r in got]
        gcode = np.array([classes.index(g) + 1 if g in classes else -1 for g in golds], dtype=np.int64)
        given, right = (codes > 0).sum(axis=1), (codes == gcode[:, None]).sum(axis=1)
        for r, g, j, c in zip(got, golds, given.tolist(), right.tolist()):
            cell = cells.setdefault((ds, 0, 0) if g is None else (ds, j, c), [0, 0])
            cell[0] += r[3]
            cell[1] += r[3] if g is None else 0
        voted = given > 0
        if voted.any():
            unjudged: dict[str | None, int] = {}
            for r, g, v in zip(got, golds, voted.tolist()):
                if not v:
                    unjudged[g] = unjudged.get(g, 0) + int(r[3])
            out[ds] = _votes(codes[voted], [g for g, v in zip(golds, voted) if v],
                             np.array([r[3] for r in got], dtype=np.int64)[voted], classes, names, unjudged)
    return [(ds, j, c, n, nogold) for (ds, j, c), (n, nogold) in cells.items()], out


def _votes(codes: np.ndarray, golds: list[str | None], counts: np.ndarray, classes: list[str], names: list[str],
           unjudged: dict[str | None, int]) -> Votes:
    """Votes of coded patterns (codes: 1 + an index into `classes`, 0 none), exactly as patterns.build makes them
    from the same rows: the judges who gave a verdict, the classes seen sorted its way, patterns sorted and merged;
    `unjudged` the items with no verdict by gold (Votes.no_verdict)."""
    used: np.ndarray = np.asarray(codes.any(axis=0), dtype=bool)
    codes = codes[:, used]
    seen = {classes[c - 1] for c in np.unique(codes[codes > 0]).tolist()} | {g for g in golds if g is not None}
    seen |= {g for g, n in unjudged.items() if g is not None and n}
    ordered = sorted(seen, key=class_order)
    remap = np.array([-1] + [ordered.index(c) if c in seen else -1 for c in classes], dtype=np.int32)
    table = np.column_stack([remap[codes], [-1 if g is None else ordered.index(g) for g in golds]]).astype(np.int32)
    unique, inverse = np.unique(table, axis=0, return_inverse=True)
    merged = np.bincount(inverse.reshape(-1), weights=counts, minlength=len(unique)).astype(np.int64)
    judges = tuple(j for j, u in zip(names, used.tolist()) if u)
    none = tuple(sorted((-1 if g is None else ordered.index(g), n) for g, n in unjudged.items() if n))
    return Votes(judges, tuple(ordered), unique[:, :-1], unique[:, -1], merged, no_verdict=none)
