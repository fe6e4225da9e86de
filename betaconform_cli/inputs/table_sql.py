"""The SQL side of tables.py: the table and its roles as DuckDB sees them, the expressions that read a cell by
values.py's rules, and the queries that check every row and reduce the rows to histograms, marks or vote patterns
inside DuckDB. A bad value is marked BAD by the expression itself, so one query both counts and finds it."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ..errors import InputError
from . import values
from .dataset import MAX_JUDGES
from .options import InputOptions

TRUE, FALSE = values.TRUE, values.FALSE
BAD = -(10**6)  # a bad value's mark: any item holding one sums below zero, seen by the histogram query itself
MAX_WEIGHT_JUDGES = 62  # duplicates are found with one power-of-two weight per judge (a 64-bit sum)


@dataclass(frozen=True)
class Table:
    """A table DuckDB can query: its FROM clause, columns and types, and how to number its rows.

    CSV, TSV and JSON Lines are loaded once into a temporary table (one parse; DuckDB spills to disk beyond
    memory); Parquet files and hive-partitioned folders are queried in place (columnar: only the columns a
    query names are read).
    """

    where: str
    sql: str
    columns: tuple[tuple[str, str], ...]
    row: str = "rowid + 1"  # the row number of a row (1-based, header not counted)
    numbered: str = ""  # FROM clause that also offers the row number as __row (and __file for several files)
    rejected: tuple[int, int] = (0, 0)  # malformed rows dropped (skip_invalid) and the first one's row number

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns if not c.startswith("__"))

    @cached_property
    def _types(self) -> dict[str, str]:
        return dict(self.columns)

    def type_of(self, column: str) -> str:
        """A column's type; the mapping is built once per table (a wide table asks once per column: built per call,
        10^4 columns took 10^8 steps)."""
        return self._types[column]


@dataclass(frozen=True)
class Roles:
    """Which column plays which role."""

    shape: str
    item: str | None = None
    judge: str | None = None
    correct: str | None = None
    verdict: str | None = None
    gold: str | None = None
    text: str | None = None
    dataset: str | None = None
    judge_cols: tuple[str, ...] = ()
    cluster: str | None = None  # --cluster-field naming a column: items that share its value are one cluster

    def listing(self) -> tuple[tuple[str, str], ...]:
        pairs = [(r, getattr(self, r)) for r in ("item", "judge", "correct", "verdict", "gold", "text", "dataset", "cluster")]
        out = tuple((r, c) for r, c in pairs if c and not c.startswith("__"))  # "__gold": none (tables.NO_GOLD)
        return out + ((("judges", ", ".join(self.judge_cols)),) if self.judge_cols else ())


_DATABASE: dict[int, Any] = {}  # the process's in-memory DuckDB database, by process id (a forked child opens its own)
_OPENING = threading.Lock()


def connect() -> Any:
    """A new connection (close it after use) to one in-memory DuckDB database per process: a connection to an open
    database costs ~0.1 ms of CPU, a new database ~14 ms, which a read paid twice (detection, then the table) -- 0.1x
    of DuckDB's own GROUP BY of a 10^7-row file. Connections share nothing a read leaves behind: temporary tables and
    registered frames belong to their connection and go with it."""
    try:
        import duckdb
    except ImportError:  # pragma: no cover - duckdb is a dependency
        raise InputError("tables", "reading CSV, TSV and Parquet needs the duckdb package (pip install duckdb)") from None
    pid = os.getpid()
    with _OPENING:
        if pid not in _DATABASE:  # a parent's database, inherited by fork, is left alone: its threads are not here
            _DATABASE[pid] = duckdb.connect()
        con = _DATABASE[pid].cursor()
    con.execute("SET enable_progress_bar = false")
    return con


def q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def lit(text: str) -> str:
    """A quoted SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def lookup(col: str, texts: Sequence[str | None], codes: Sequence[int]) -> str:
    """SQL for the code of `col`'s text: codes[i] where the text is texts[i] (None: NULL), NULL for a text not listed.
    A constant list indexed by list_position, both functions of the one column, which DuckDB evaluates on a
    dictionary-encoded column's dictionary, not per row: a CASE over the texts, or a shift per row, costs ~0.1x of
    the bare GROUP BY each (docs/SCALE.md, "Third round")."""
    listed = ", ".join("NULL" if t is None else lit(t) for t in texts)
    return (f"CAST([{', '.join(str(c) for c in codes)}] AS UBIGINT[])"
            f"[list_position(CAST([{listed}] AS VARCHAR[]), {col})]")


_DUCKDB_PREFIX = re.compile(r"^[A-Z][A-Za-z ]*(Error|Exception): *")


def fail(where: str, exc: Exception) -> InputError:
    """DuckDB's error as one line that names the row (CSV errors carry the file's line: the header is line 1)."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = _DUCKDB_PREFIX.sub("", lines[0]) if lines else type(exc).__name__
    at = re.search(r"CSV Error on Line: (\d+)", text)
    if at:
        row = int(at.group(1)) - 1
        cols = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
        if cols:
            reason = f"expected {cols.group(1)} fields (as in the header), found {cols.group(2)}"
        elif "unterminated quote" in text and "\n" in (re.search(r"Original Line: (.*?)\nValue with", text, re.S) or at).group(1):
            reason = "a quoted value is never closed (an unmatched '\"' would swallow the lines after it)"
        elif "Invalid unicode" in text:
            reason = "not UTF-8 text (save the file as UTF-8)"
        elif "quote" in text.lower():
            reason = "malformed quoting: a quoted value must end at a delimiter, and a '\"' inside it is written twice (\"\")"
        else:
            reason = "malformed row"
        return InputError(where, reason, line=max(row, 1), unit="row")
    if "Malformed JSON" in text:
        rec = re.search(r"(?:line|record/value) (\d+)", text)
        return InputError(where, "malformed JSON", line=int(rec.group(1)) if rec else None)
    if "Invalid unicode" in text:
        return InputError(where, "not UTF-8 text (save the file as UTF-8)")
    return InputError(where, f"cannot read the table ({first[:200]})")



_INTS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT")
_FLOATS = ("FLOAT", "DOUBLE", "REAL", "DECIMAL")


def _scalar(col: str, typ: str, where: str) -> None:
    """A column that holds lists, structs or maps cannot hold verdicts or gold: an InputError naming it."""
    t = typ.upper()
    if t.endswith("]") or t.startswith(("STRUCT", "MAP", "UNION", "LIST", "BLOB", "JSON")):
        raise InputError(where, f"holds {typ} values; a verdict, correctness or gold value is one text, number or "
                                "boolean", field=col, unit="column")


def _mark_expr(col: str, typ: str, where: str = "") -> str:
    """A correctness cell as 1, 0, NULL (no verdict) or BAD, by values.mark's rule."""
    _scalar(col, typ, where)
    c = q(col)
    t = typ.upper()
    if t == "BOOLEAN":
        return f"CAST({c} AS INTEGER)"
    if t.startswith(_FLOATS):
        return f"CASE WHEN {c} IS NULL OR isnan({c}) THEN NULL WHEN {c} = 1 THEN 1 WHEN {c} = 0 THEN 0 ELSE {BAD} END"
    if t.startswith(_INTS):
        return f"CASE WHEN {c} IS NULL THEN NULL WHEN {c} = 1 THEN 1 WHEN {c} = 0 THEN 0 ELSE {BAD} END"
    return values.sql_mark(f"CAST({c} AS VARCHAR)", BAD)


def _numeric(typ: str) -> bool:
    return typ.upper().startswith(_INTS + _FLOATS)


def gold_expr(table: Table, gold: str) -> str:
    """The gold label as trimmed text, NULL when missing (values.is_missing)."""
    _scalar(gold, table.type_of(gold), table.where)
    g = f"CAST({q(gold)} AS VARCHAR)"
    return f"CASE WHEN {values.sql_missing(g)} THEN NULL ELSE trim({g}) END"


def _verdict_expr(table: Table, verdict: str, gold: str, tolerance: float | None) -> str:
    """A verdict scored against gold by values.agree's rule: 1, 0, NULL (no verdict or no gold) or BAD (not
    comparable: text with a tolerance)."""
    _scalar(verdict, table.type_of(verdict), table.where)
    _scalar(gold, table.type_of(gold), table.where)
    v, g = q(verdict), q(gold)
    if _numeric(table.type_of(verdict)) and _numeric(table.type_of(gold)):
        missing = f"{v} IS NULL OR {g} IS NULL OR isnan({v}) OR isnan({g})"
        hit = f"abs({v} - {g}) <= {float(tolerance)!r}" if tolerance is not None else f"{v} = {g}"
        return f"CASE WHEN {missing} THEN NULL WHEN {hit} THEN 1 ELSE 0 END"
    return values.sql_agree(f"CAST({v} AS VARCHAR)", f"CAST({g} AS VARCHAR)", tolerance, BAD)


def long_rows(table: Table, roles: Roles, opts: InputOptions, numbered: bool) -> str:
    """SELECT ds, item, judge, mark, gold, text, rn, vt, cl: the table in its long form (a wide table unpivoted); rn is
    the row number (NULL when not `numbered`: the histogram query at scale never numbers rows), vt the verdict's
    text, cl the cluster id (trimmed text, NULL when missing; NULL without a cluster column)."""
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"
    text = f"CAST({q(roles.text)} AS VARCHAR)" if roles.text else "NULL"
    cl = _class_expr(table, roles.cluster) if roles.cluster else "NULL"
    if roles.shape == "wide":
        for c in roles.judge_cols:
            _scalar(c, table.type_of(c), table.where)
        types = {table.type_of(c) for c in roles.judge_cols}
        common = types.pop() if len(types) == 1 else "VARCHAR"
        keep = [c for c in (roles.dataset, roles.text, roles.gold, roles.item, roles.cluster) if c] + ["__row"]
        cast = ", ".join(f"CAST({q(c)} AS {common}) AS {q(c)}" for c in roles.judge_cols)
        # INCLUDE NULLS: a row whose every judge cell is empty is an item no judge gave a verdict on (counted, and in
        # score's population), not a row that vanishes
        src = (f"SELECT * FROM (SELECT {', '.join(q(c) for c in dict.fromkeys(keep))}, {cast} FROM {table.numbered}) "
               f"UNPIVOT INCLUDE NULLS (__cell FOR __judge IN ({', '.join(q(c) for c in roles.judge_cols)}))")
        cells = replace(table, columns=table.columns + (("__cell", common),))
        mark = _verdict_expr(cells, "__cell", roles.gold, opts.handling.tolerance) if roles.gold else _mark_expr("__cell", common)
        item = f"CAST({q(roles.item)} AS VARCHAR)" if roles.item else "CAST(__row AS VARCHAR)"
        gold = gold_expr(table, roles.gold) if roles.gold else "NULL"
        vt = _class_expr(cells, "__cell") if roles.gold else "NULL"
        return (f"SELECT {ds} AS ds, {item} AS item, __judge AS judge, {mark} AS mark, {gold} AS gold, {text} AS text, "
                f"__row AS rn, {vt} AS vt, {cl} AS cl FROM ({src})")
    mark = _mark_expr(roles.correct, table.type_of(roles.correct), table.where) if roles.correct else _verdict_expr(
        table, roles.verdict or "", roles.gold or "", opts.handling.tolerance)
    gold = gold_expr(table, roles.gold) if roles.gold and not roles.correct else "NULL"
    vt = _class_expr(table, roles.verdict) if roles.verdict and roles.gold and not roles.correct else "NULL"
    return (f"SELECT {ds} AS ds, CAST({q(roles.item or '')} AS VARCHAR) AS item, CAST({q(roles.judge or '')} AS VARCHAR) "
            f"AS judge, {mark} AS mark, {gold} AS gold, {text} AS text, {'__row' if numbered else 'NULL'} AS rn, {vt} AS vt, "
            f"{cl} AS cl FROM {table.numbered if numbered else table.sql}")


def _class_expr(table: Table, col: str) -> str:
    """A verdict as trimmed text, NULL when missing: its class before patterns.canonical writes numbers one way
    (done in Python on the few distinct values)."""
    v = f"CAST({q(col)} AS VARCHAR)"
    return f"CASE WHEN {values.sql_missing(v)} THEN NULL ELSE trim({v}) END"


def vote_patterns(con: Any, table: Table, roles: Roles, opts: InputOptions, per_item: bool = False) -> dict[Any, tuple[Any, ...]]:
    """{dataset: (judges, {(each judge's class or None, gold class or None): items})} of a table whose judges give
    verdicts beside a gold column, by one aggregation in DuckDB: each item's verdicts become one list ordered by
    judge, and items GROUP BY that list and their gold, so that patterns, not rows, reach Python. Rows the
    histogram skipped (skip_invalid) or dropped (duplicates) are left out the same way; the checks ran before.
    `per_item` (commands that keep items): one row per item instead, in input order, with its id: {dataset:
    (judges, {}, each item's (classes, gold), ids, clusters or None)}, patterns.build's arguments."""
    from .patterns import canonical

    rows = long_rows(table, roles, opts, numbered=per_item or opts.handling.duplicates != "error" and roles.shape == "long")
    if opts.handling.duplicates != "error" and roles.shape == "long":
        order = "ASC" if opts.handling.duplicates == "first" else "DESC"
        rows = f"SELECT * FROM ({rows}) QUALIFY row_number() OVER (PARTITION BY ds, item, judge ORDER BY rn {order}) = 1"
    ok = "(mark IS NULL OR mark >= 0) AND item IS NOT NULL AND judge IS NOT NULL"
    inner = (f"SELECT ds, item, min(rn) AS first, list(judge ORDER BY judge) FILTER (WHERE vt IS NOT NULL) AS js, "
             f"list(vt ORDER BY judge) FILTER (WHERE vt IS NOT NULL) AS vs, max(gold) AS gold, min(cl) AS cl FROM ({rows}) "
             f"WHERE {ok} GROUP BY ds, item")
    sql = (f"SELECT ds, js, vs, gold, item, cl FROM ({inner}) ORDER BY first" if per_item else  # no verdict: Votes.no_verdict
           f"SELECT ds, js, vs, gold, count(*), NULL FROM ({inner}) GROUP BY ds, js, vs, gold")
    try:
        got = con.execute(sql).fetchall()
    except Exception as exc:  # noqa: BLE001
        raise fail(table.where, exc) from None
    out: dict[Any, tuple[Any, ...]] = {}
    seen: dict[Any, set[str]] = {}
    for ds, js, *_ in got:
        seen.setdefault(ds, set()).update(js or ())
    for ds, names in seen.items():
        if not names:
            continue  # no verdict at all in this dataset: no Votes (its items are skipped and counted)
        judges = tuple(c for c in roles.judge_cols if c in names) if roles.shape == "wide" else tuple(sorted(names))
        out[ds] = ((judges, {}, [], [], [] if roles.cluster else None) if per_item else (judges, {}))
    memo: dict[str | None, str | None] = {}

    def cls(text: str | None) -> str | None:  # few distinct texts: each written one way once
        if text not in memo:
            memo[text] = canonical(text)
        return memo[text]

    ats = {ds: {j: i for i, j in enumerate(got_ds[0])} for ds, got_ds in out.items()}
    for ds, js, vs, gold, n, cl in got:
        if ds not in out:
            continue
        judges, tally, *items = out[ds]
        row: list[str | None] = [None] * len(judges)
        at = ats[ds]
        for j, v in zip(js or (), vs or ()):
            row[at[j]] = cls(v)
        key = (tuple(row), cls(gold))
        if per_item:
            items[0].append(key)
            items[1].append(str(n))
            if items[2] is not None:  # --cluster-field: each item's cluster id (Votes.clusters)
                items[2].append(str(cl))
        else:
            tally[key] = tally.get(key, 0) + int(n)
    return out


def _column(roles: Roles, judge: str | None = None) -> str:
    """The column a bad mark sits in: a wide table's judge column, else the correctness or verdict column."""
    if roles.shape == "wide":
        return judge or ""
    return roles.correct or roles.verdict or ""


def first_row(con: Any, sql: str) -> tuple[Any, ...] | None:
    row = con.execute(sql + " LIMIT 1").fetchone()
    return tuple(row) if row is not None else None


def check_rows(con: Any, table: Table, roles: Roles, opts: InputOptions) -> None:
    """The first bad row, for the error message: a bad value, a missing id or judge, a repeated (item, judge), gold
    that differs within an item. Runs only after the histogram query found something wrong."""
    rows = long_rows(table, roles, opts, numbered=True)
    if opts.handling.skip_invalid:  # the rows the caller skipped are not what is wrong
        rows = f"SELECT * FROM ({rows}) WHERE (mark IS NULL OR mark >= 0) AND item IS NOT NULL AND judge IS NOT NULL"
    bad = first_row(con, f"SELECT rn, judge FROM ({rows}) WHERE mark < 0 ORDER BY rn")
    if bad:
        col = _column(roles, bad[1])
        cell = first_row(con, f"SELECT CAST({q(col)} AS VARCHAR) FROM {table.numbered} WHERE __row = {int(bad[0])}")
        what = ("a tolerance compares numbers" if opts.handling.tolerance is not None else
                f"must be {values.MARK_WORDS} (null, empty or NA: no verdict)")
        got = (cell or ("?",))[0]
        raise InputError(table.where, f"{what}, got {got!r}{values.comma_hint(got)}", line=int(bad[0]), field=col, unit="row")
    for role, name in (("item", roles.item), ("judge", roles.judge)):
        if name:
            row = first_row(con, f"SELECT rn FROM ({rows}) WHERE {role} IS NULL ORDER BY rn")
            if row:
                raise InputError(table.where, f"empty {role} id", line=int(row[0]), field=name, unit="row")
    if roles.shape == "long":
        dup = first_row(con, f"SELECT max(rn), min(rn), item, judge FROM ({rows}) GROUP BY ds, item, judge HAVING count(*) > 1 "
                          f"ORDER BY 1")
        if dup:
            raise InputError(table.where, f"item {dup[2]!r} and judge {dup[3]!r} appear again (first at row {dup[1]}); keep "
                                          "the first or the last with `duplicates`", line=int(dup[0]), field=roles.judge,
                             unit="row")
    if roles.gold:
        diff = first_row(con, f"SELECT max(rn), item FROM ({rows}) GROUP BY ds, item HAVING min(gold) <> max(gold) ORDER BY 1")
        if diff:
            raise InputError(table.where, f"item {diff[1]!r} has two different gold labels", line=int(diff[0]),
                             field=roles.gold, unit="row")
        blank = first_row(con, f"SELECT min(rn) FILTER (WHERE gold IS NULL), min(rn) FILTER (WHERE gold IS NOT NULL), item "
                            f"FROM ({rows}) GROUP BY ds, item HAVING count(gold) > 0 AND count(gold) < count(*) ORDER BY 1")
        if blank:
            raise InputError(table.where, f"no gold label for item {blank[2]!r}, which has one at row {blank[1]}: give the "
                                          "gold on every row of an item (an item with no gold on any row is skipped and "
                                          "counted)", line=int(blank[0]), field=roles.gold, unit="row")


def weights(con: Any, table: Table, roles: Roles) -> tuple[str, bool]:
    """(SQL for one bit per judge, whether some judge name is empty). An item's judges are distinct exactly when the
    OR of their bits has as many bits as the item has rows. The bit is a constant list indexed by the name's place
    among the names (lookup: evaluated on a Parquet column's dictionary, not per row); with more judges than 64 bits
    serve, ""."""
    col = f"CAST({q(roles.judge or '')} AS VARCHAR)"
    rows = con.execute(f"SELECT DISTINCT {col} FROM {table.sql}").fetchall()
    names = [str(n) for (n,) in rows if n is not None]
    has_null = len(names) < len(rows)
    if len(names) <= MAX_WEIGHT_JUDGES:
        return lookup(col, names, [1 << i for i in range(len(names))]), has_null
    return "", has_null


def _plain_mark(con: Any, table: Table, roles: Roles) -> str | None:
    """The correctness column itself, when its type and its minimum and maximum (Parquet keeps them in its metadata)
    show it holds only 0 and 1: the histogram then needs no per-row check."""
    if not roles.correct:
        return None
    col, typ = q(roles.correct), table.type_of(roles.correct).upper()
    if typ == "BOOLEAN":
        return f"CAST({col} AS INTEGER)"
    if not any(typ.startswith(p) for p in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")):
        return None
    lo, hi = con.execute(f"SELECT min({col}), max({col}) FROM {table.sql}").fetchone()
    return col if lo is None or (lo >= 0 and hi <= 1) else None


def histograms(con: Any, table: Table, roles: Roles, opts: InputOptions) -> list[tuple[Any, ...]]:
    """(dataset, judges, correct, items, no-gold items) for a long table, by one GROUP BY in DuckDB over the
    table's own columns; raises the first bad row's InputError when any check fails."""
    w, has_null = weights(con, table, roles)
    if has_null:
        check_rows(con, table, roles, opts)
    mark = _plain_mark(con, table, roles) or (_mark_expr(roles.correct, table.type_of(roles.correct), table.where) if roles.correct else
                                               _verdict_expr(table, roles.verdict or "", roles.gold or "", opts.handling.tolerance))
    item = q(roles.item or "")
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else None
    dup = f"count(*) - bit_count(bit_or({w}))" if w else f"count(*) - count(DISTINCT {q(roles.judge or '')})"
    scored = roles.gold is not None and roles.correct is None  # verdicts against gold: items may lack gold
    g = gold_expr(table, roles.gold) if scored and roles.gold else "NULL"
    inner = [f"{ds} AS ds" if ds else "NULL AS ds", f"count({mark}) AS judges", f"sum({mark}) AS correct", f"{dup} AS dups",
             f"count({g}) = 0 AS nogold" if scored else "false AS nogold",
             f"{item} IS NULL" + (f" OR coalesce(min({g}) <> max({g}), false) OR count({g}) NOT IN (0, count(*))"
                                  if scored else "") + " AS bad"]
    outer = ["ds" if ds else "NULL", "judges", "correct", "count(*)", "count(*) FILTER (WHERE nogold)" if scored else "0",
             "max(dups)", "bool_or(bad)"]
    sql = (f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM {table.sql} GROUP BY {f'{ds}, {item}' if ds else item}) "
           f"GROUP BY {'ds, ' if ds else ''}judges, correct")
    try:
        got = con.execute(sql).fetchall()
    except Exception as exc:  # noqa: BLE001
        raise fail(table.where, exc) from None
    if any(r[5] > 0 or r[6] or (r[2] is not None and r[2] < 0) for r in got):
        check_rows(con, table, roles, opts)
    return [(r[0], int(r[1]), int(r[2] or 0), int(r[3]), int(r[4])) for r in got]


def marks(con: Any, table: Table, roles: Roles, opts: InputOptions) -> tuple[list[tuple[Any, ...]], list[tuple[Any, str, int]]]:
    """(every (dataset, item, judge, mark, gold, text, row, verdict, cluster) in row order, duplicates resolved as
    asked, checked; the rows skipped as (dataset, reason, row) when opts.handling.skip_invalid, else [] -- a bad row
    is then an error). With a cluster column every row needs a cluster id, one per item (check_clusters)."""
    rows = long_rows(table, roles, opts, numbered=True)
    if opts.handling.duplicates != "error" and roles.shape == "long":
        order = "ASC" if opts.handling.duplicates == "first" else "DESC"
        rows = (f"SELECT * FROM ({rows}) QUALIFY row_number() OVER (PARTITION BY ds, item, judge ORDER BY rn {order}) = 1")
    try:
        got: list[tuple[Any, ...]] = con.execute(f"SELECT ds, item, judge, mark, gold, text, rn, vt, cl FROM ({rows}) ORDER BY rn, judge").fetchall()
    except Exception as exc:  # noqa: BLE001
        raise fail(table.where, exc) from None
    skipped: list[tuple[Any, str, int]] = []
    if opts.handling.skip_invalid:
        kept = []
        for r in got:
            if r[3] is not None and r[3] < 0:
                skipped.append((r[0], f"bad value in column '{_column(roles, r[2])}'", r[6]))
            elif r[1] is None or r[2] is None:
                skipped.append((r[0], "empty item or judge id", r[6]))
            else:
                kept.append(r)
        got = kept
    if any(r[3] is not None and r[3] < 0 or r[1] is None or r[2] is None for r in got) or _partial_gold(got, roles):
        check_rows(con, table, roles, opts)
    if roles.cluster:
        check_clusters(got, roles, table.where)
    return got, skipped


def check_clusters(rows: list[tuple[Any, ...]], roles: Roles, where: str) -> None:
    """A row without a cluster id, or an item whose rows name two clusters, is an InputError naming the row and the
    cluster column (marks' rows: cluster last, row number at 6), as JSON Lines' --cluster-field names the line."""
    first: dict[tuple[Any, Any], tuple[str, int]] = {}
    for r in rows:
        if r[8] is None:
            raise InputError(where, f"no cluster id for item {r[1]!r} (--cluster-field '{roles.cluster}': every row needs "
                                    "one)", line=int(r[6]), field=roles.cluster, unit="row")
        seen = first.setdefault((r[0], r[1]), (r[8], int(r[6])))
        if seen[0] != r[8]:
            raise InputError(where, f"item {r[1]!r} is in cluster {seen[0]!r} (row {seen[1]}) and {r[8]!r} here",
                             line=int(r[6]), field=roles.cluster, unit="row")


def _partial_gold(rows: list[tuple[Any, ...]], roles: Roles) -> bool:
    """Whether some item has gold on some rows and none on others, or two different golds (scored long tables only:
    the rule the histogram query applies, so that judges and doctor refuse what fit and score refuse)."""
    if roles.shape != "long" or roles.gold is None or roles.correct is not None:
        return False
    has: dict[tuple[Any, Any], set[Any]] = {}
    for r in rows:
        has.setdefault((r[0], r[1]), set()).add(r[4])
    return any(len(v) > 1 for v in has.values())


def counts_table(con: Any, table: Table, roles: Roles, skip: bool = False, columns: dict[str, list[str]] | None = None
                 ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, str, int]]]:
    """(dataset, judges, correct, items) of a counts table, and the rows skipped (`skip`); a bad row is otherwise an
    InputError naming it. Values are read as numbers whatever the column's type ("3", 3, 3.0). `columns`: the
    table's columns by role key (table_open.by_role_key, given by the caller: "Count" is the count column)."""
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"

    def num(col: str) -> str:
        return values.sql_number(f"CAST({col} AS VARCHAR)")

    named = {key: cols[0] for key, cols in (columns or {}).items()}
    judges, correct, count = (q(named[k]) if k in named else None for k in ("judges", "correct", "count"))
    j, c, n = num(judges or "judges"), num(correct or "correct"), num(count) if count else "1.0"
    ok = (f"{j} = floor({j}) AND {c} = floor({c}) AND {n} = floor({n}) AND {j} BETWEEN 1 AND {MAX_JUDGES} "
          f"AND {c} BETWEEN 0 AND {j} AND {n} BETWEEN 0 AND {2.0 ** 53}")
    cells = (f"SELECT {ds} AS ds, CAST({j} AS BIGINT) AS j, CAST({c} AS BIGINT) AS c, CAST({n} AS BIGINT) AS n, __row, "
             f"coalesce({ok}, false) AS ok FROM {table.numbered}")
    shown = f"CAST({judges} AS VARCHAR), CAST({correct} AS VARCHAR), {f'CAST({count} AS VARCHAR)' if count else '1'}"
    try:
        skipped: list[tuple[Any, str, int]] = []
        if skip:
            skipped = [(r[0], "bad judges, correct or count value", int(r[1])) for r in
                       con.execute(f"SELECT ds, __row FROM ({cells}) WHERE NOT ok ORDER BY __row").fetchall()]
        else:
            bad = first_row(con, f"SELECT __row, {shown} FROM {table.numbered} WHERE NOT coalesce({ok}, false) ORDER BY __row")
            if bad:
                raise InputError(table.where, f"judges {bad[1]}, correct {bad[2]}, count {bad[3]}: need integers with 1 <= "
                                              f"judges <= {MAX_JUDGES}, 0 <= correct <= judges and count >= 0",
                                 line=int(bad[0]), unit="row")
        got: list[tuple[Any, ...]] = con.execute(f"SELECT ds, j, c, sum(n) FROM ({cells}) WHERE ok GROUP BY ALL").fetchall()
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise fail(table.where, exc) from None
    return [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in got], skipped


