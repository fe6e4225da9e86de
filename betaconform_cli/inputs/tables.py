"""Tables of judgments -- CSV, TSV (gzipped too), Parquet, long JSON Lines, folders of them -- read by DuckDB.

Three shapes, told apart by their columns (or forced with source_format):

- long:   one row per (item, judge): an item id, a judge name, and either correctness (0/1, true/false,
          yes/no, pass/fail) or a verdict compared with a gold column;
- wide:   one row per item, one column per judge (correctness, or verdicts beside a gold column);
- counts: `judges`, `correct` and optionally `count` (items in that cell): a histogram computed anywhere.

The fit needs only the (judges, correct) histogram, so a long table is reduced by one GROUP BY inside DuckDB
(parallel, out of core): Python never holds the rows. Every value is still checked: a bad correctness value, a
repeated (item, judge) pair, an item whose rows disagree on gold, a judge with no verdict at all are errors that
name the file, the row and the column. Rows are numbered from 1, the header not counted.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import InputError, quote_all
from .dataset import MAX_JUDGES, Dataset, Reading
from .options import InputOptions, Keep

ROLE_NAMES = {
    "item": ("item_id", "id", "sample_id", "question_id", "item"),
    "judge": ("judge", "grader", "scorer", "model", "annotator", "judge_name", "judge_id"),
    "correct": ("correct", "is_correct"),
    "verdict": ("verdict", "grade", "score", "prediction", "decision"),
    "gold": ("gold", "label", "human", "reference", "human_label", "gold_label"),
    "text": ("text", "prompt", "question", "input"),
    "dataset": ("dataset",),
}
TRUE = ("1", "1.0", "true", "t", "yes", "y", "pass", "passed", "correct")
FALSE = ("0", "0.0", "false", "f", "no", "n", "fail", "failed", "incorrect")
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

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns if not c.startswith("__"))

    def type_of(self, column: str) -> str:
        return dict(self.columns)[column]


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

    def listing(self) -> tuple[tuple[str, str], ...]:
        pairs = [(r, getattr(self, r)) for r in ("item", "judge", "correct", "verdict", "gold", "text", "dataset")]
        out = tuple((r, c) for r, c in pairs if c)
        return out + ((("judges", ", ".join(self.judge_cols)),) if self.judge_cols else ())


def connect() -> Any:
    try:
        import duckdb
    except ImportError:  # pragma: no cover - duckdb is a dependency
        raise InputError("tables", "reading CSV, TSV and Parquet needs the duckdb package (pip install duckdb)") from None
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    return con


def q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def lit(text: str) -> str:
    """A quoted SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _fail(where: str, exc: Exception) -> InputError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(where, f"cannot read the table: {first}")


def open_table(con: Any, path: Path, kind: str, where: str) -> Table:
    """kind: parquet, csv, tsv or jsonl; a folder is read whole (hive partitions become columns)."""
    target = str(path / "**" / ("*.parquet" if kind == "parquet" else "*")) if path.is_dir() else str(path)
    hive = f", hive_partitioning = {str(path.is_dir()).lower()}"
    try:
        if kind == "parquet":
            base = f"read_parquet({lit(target)}{hive}, union_by_name = true"
            cols = con.execute(f"DESCRIBE SELECT * FROM {base})").fetchall()
            numbered = (f"(SELECT *, file_row_number + 1 AS __row, filename AS __file FROM "
                        f"{base}, file_row_number = true, filename = true))")
            return Table(where, base + ")", tuple((str(c[0]), str(c[1])) for c in cols), "__row", numbered)
        if kind == "jsonl":
            reader = f"read_json({lit(target)}, format = 'newline_delimited')"
        else:
            reader = f"read_csv({lit(target)}, header = true{', delim = ' + lit(chr(9)) if kind == 'tsv' else ''}{hive})"
        con.execute(f"CREATE OR REPLACE TEMP TABLE src AS SELECT * FROM {reader}")
        cols = con.execute("DESCRIBE SELECT * FROM src").fetchall()
    except Exception as exc:  # noqa: BLE001 - duckdb raises many kinds; each is about the user's file
        raise _fail(where, exc) from None
    return Table(where, "src", tuple((str(c[0]), str(c[1])) for c in cols), "rowid + 1",
                 "(SELECT *, rowid + 1 AS __row, NULL AS __file FROM src)")


def _find(table: Table, role: str, given: str | None, exclude: frozenset[str] = frozenset()) -> str | None:
    """The column for a role: the one given (it must exist), else the one column with a common name."""
    if given is not None:
        if given not in table.names:
            raise InputError(table.where, f"no column {given!r} (the {role} column); columns: {quote_all(table.names)}")
        return given
    lower = {c.lower(): c for c in table.names if c not in exclude}
    found = [lower[n] for n in ROLE_NAMES[role] if n in lower]
    if len(found) > 1:
        raise InputError(table.where, f"columns {quote_all(found)} could each be the {role} column; "
                                      f"name one with `{role}_col`")
    return found[0] if found else None


def guess_roles(table: Table, opts: InputOptions, shape: str | None = None) -> Roles:
    """Column roles from common names, overridden by the *_col options; InputError says which names were found."""
    names = {c.lower() for c in table.names}
    if shape is None:
        if opts.judge_col or opts.item_col and not opts.judge_cols:
            shape = "long"
        elif {"judges", "correct"} <= names and not any(n in names for n in ROLE_NAMES["judge"]):
            shape = "counts"
        elif any(n in names for n in ROLE_NAMES["judge"]) and not opts.judge_cols:
            shape = "long"
        else:
            shape = "wide"
    dataset = _find(table, "dataset", opts.dataset_col)
    if shape == "counts":
        for col in ("judges", "correct"):
            if col not in table.names:
                raise InputError(table.where, f"a counts table needs columns 'judges' and 'correct' (and optionally 'count'); "
                                              f"columns: {quote_all(table.names)}")
        return Roles("counts", dataset=dataset)
    item = _find(table, "item", opts.item_col)
    text = _find(table, "text", opts.text_col, frozenset({item} if item else ()))
    gold = _find(table, "gold", opts.gold_col)
    if shape == "long":
        judge = _find(table, "judge", opts.judge_col)
        correct = _find(table, "correct", opts.correct_col)
        verdict = _find(table, "verdict", opts.verdict_col)
        if judge is None or item is None:
            missing = "judge" if judge is None else "item"
            raise InputError(table.where, f"a long table needs an item column and a judge column; found no {missing} column "
                                          f"(columns: {quote_all(table.names)}); name it with `{missing}_col`")
        if correct is not None and verdict is not None and gold is not None and not (opts.correct_col or opts.verdict_col):
            raise InputError(table.where, f"both {correct!r} (correctness) and {verdict!r} with {gold!r} (verdict and gold) "
                                          "could score the judges; name one with `correct_col` or `verdict_col`")
        if correct is None and (verdict is None or gold is None):
            raise InputError(table.where, "a long table needs a correctness column, or a verdict column and a gold column "
                                          f"(columns: {quote_all(table.names)})")
        if correct is not None and not opts.verdict_col:
            verdict = gold = None
        return Roles("long", item, judge, correct, verdict, gold, text, dataset)
    taken = {c for c in (item, gold, text, dataset) if c}
    cols = _judge_columns(table, opts.judge_cols, taken)
    if not cols:
        raise InputError(table.where, f"no judge columns: every column is an id, gold, text or dataset column "
                                      f"(columns: {quote_all(table.names)}); name them with `judge_cols`")
    return Roles("wide", item=item, gold=gold, text=text, dataset=dataset, judge_cols=cols)


def _judge_columns(table: Table, patterns: str | None, taken: set[str]) -> tuple[str, ...]:
    if patterns is None:
        return tuple(c for c in table.names if c not in taken)
    out: list[str] = []
    for pat in (p.strip() for p in patterns.split(",") if p.strip()):
        hits = [c for c in table.names if fnmatch.fnmatchcase(c, pat)]
        if not hits:
            raise InputError(table.where, f"judge columns: {pat!r} matches no column (columns: {quote_all(table.names)})")
        out += [c for c in hits if c not in out]
    return tuple(out)


def _mark_expr(col: str, typ: str) -> str:
    """A correctness cell as 1, 0, NULL (no verdict) or BAD."""
    c = q(col)
    t = typ.upper()
    if t == "BOOLEAN":
        return f"CAST({c} AS INTEGER)"
    if t in ("FLOAT", "DOUBLE", "REAL") or t.startswith("DECIMAL"):
        return f"CASE WHEN {c} IS NULL OR isnan({c}) THEN NULL WHEN {c} = 1 THEN 1 WHEN {c} = 0 THEN 0 ELSE {BAD} END"
    if any(t.startswith(p) for p in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")):
        return f"CASE WHEN {c} IS NULL THEN NULL WHEN {c} = 1 THEN 1 WHEN {c} = 0 THEN 0 ELSE {BAD} END"
    s = f"lower(trim(CAST({c} AS VARCHAR)))"
    yes = ", ".join(map(lit, TRUE))
    no = ", ".join(map(lit, FALSE))
    return f"CASE WHEN {c} IS NULL OR {s} = '' THEN NULL WHEN {s} IN ({yes}) THEN 1 WHEN {s} IN ({no}) THEN 0 ELSE {BAD} END"


def _numeric(typ: str) -> bool:
    t = typ.upper()
    return any(t.startswith(p) for p in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                                          "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "REAL", "DECIMAL"))


def _verdict_expr(table: Table, verdict: str, gold: str, tolerance: float | None) -> str:
    """A verdict scored against gold: 1, 0, NULL (no verdict or no gold) or BAD (not comparable)."""
    v, g = q(verdict), q(gold)
    vn, gn = _numeric(table.type_of(verdict)), _numeric(table.type_of(gold))
    if tolerance is not None:
        if not (vn and gn):
            bad = verdict if not vn else gold
            raise InputError(table.where, "a tolerance compares numbers, but this column holds text", field=bad, unit="column")
        return f"CASE WHEN {v} IS NULL OR {g} IS NULL OR isnan({v}) THEN NULL WHEN abs({v} - {g}) <= {float(tolerance)!r} THEN 1 ELSE 0 END"
    if vn and gn:
        return f"CASE WHEN {v} IS NULL OR {g} IS NULL THEN NULL WHEN {v} = {g} THEN 1 ELSE 0 END"
    vs, gs = f"trim(CAST({v} AS VARCHAR))", f"trim(CAST({g} AS VARCHAR))"
    return f"CASE WHEN {v} IS NULL OR {g} IS NULL OR {vs} = '' THEN NULL WHEN {vs} = {gs} THEN 1 ELSE 0 END"


def long_rows(table: Table, roles: Roles, opts: InputOptions, numbered: bool) -> str:
    """SELECT ds, item, judge, mark, gold, text, rn: the table in its long form (a wide table unpivoted); rn is the
    row number (NULL when not `numbered`: the histogram query at scale never numbers rows)."""
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"
    text = f"CAST({q(roles.text)} AS VARCHAR)" if roles.text else "NULL"
    if roles.shape == "wide":
        types = {table.type_of(c) for c in roles.judge_cols}
        common = types.pop() if len(types) == 1 else "VARCHAR"
        keep = [c for c in (roles.dataset, roles.text, roles.gold, roles.item) if c] + ["__row"]
        cast = ", ".join(f"CAST({q(c)} AS {common}) AS {q(c)}" for c in roles.judge_cols)
        src = (f"UNPIVOT (SELECT {', '.join(q(c) for c in dict.fromkeys(keep))}, {cast} FROM {table.numbered}) "
               f"ON {', '.join(q(c) for c in roles.judge_cols)} INTO NAME __judge VALUE __cell")
        cells = replace(table, columns=table.columns + (("__cell", common),))
        mark = _verdict_expr(cells, "__cell", roles.gold, opts.tolerance) if roles.gold else _mark_expr("__cell", common)
        item = f"CAST({q(roles.item)} AS VARCHAR)" if roles.item else "CAST(__row AS VARCHAR)"
        gold = f"CAST({q(roles.gold)} AS VARCHAR)" if roles.gold else "NULL"
        return (f"SELECT {ds} AS ds, {item} AS item, __judge AS judge, {mark} AS mark, {gold} AS gold, {text} AS text, "
                f"__row AS rn FROM ({src})")
    mark = _mark_expr(roles.correct, table.type_of(roles.correct)) if roles.correct else _verdict_expr(
        table, roles.verdict or "", roles.gold or "", opts.tolerance)
    gold = f"CAST({q(roles.gold)} AS VARCHAR)" if roles.gold and not roles.correct else "NULL"
    return (f"SELECT {ds} AS ds, CAST({q(roles.item or '')} AS VARCHAR) AS item, CAST({q(roles.judge or '')} AS VARCHAR) "
            f"AS judge, {mark} AS mark, {gold} AS gold, {text} AS text, {'__row' if numbered else 'NULL'} AS rn "
            f"FROM {table.numbered if numbered else table.sql}")


def _column(roles: Roles, judge: str | None = None) -> str:
    """The column a bad mark sits in: a wide table's judge column, else the correctness or verdict column."""
    if roles.shape == "wide":
        return judge or ""
    return roles.correct or roles.verdict or ""


def _first(con: Any, sql: str) -> tuple[Any, ...] | None:
    row = con.execute(sql + " LIMIT 1").fetchone()
    return tuple(row) if row is not None else None


def _check_rows(con: Any, table: Table, roles: Roles, opts: InputOptions) -> None:
    """The first bad row, for the error message: a bad value, a missing id or judge, a repeated (item, judge), gold
    that differs within an item. Runs only after the histogram query found something wrong."""
    rows = long_rows(table, roles, opts, numbered=True)
    bad = _first(con, f"SELECT rn, judge FROM ({rows}) WHERE mark < 0 ORDER BY rn")
    if bad:
        col = _column(roles, bad[1])
        cell = _first(con, f"SELECT CAST({q(col)} AS VARCHAR) FROM {table.numbered} WHERE __row = {int(bad[0])}")
        what = "a tolerance compares numbers" if opts.tolerance is not None else "must be 1/0, true/false, yes/no or pass/fail"
        raise InputError(table.where, f"{what}, got {(cell or ('?',))[0]!r}", line=int(bad[0]), field=col, unit="row")
    for role, name in (("item", roles.item), ("judge", roles.judge)):
        if name:
            row = _first(con, f"SELECT rn FROM ({rows}) WHERE {role} IS NULL ORDER BY rn")
            if row:
                raise InputError(table.where, f"empty {role} id", line=int(row[0]), field=name, unit="row")
    if roles.shape == "long":
        dup = _first(con, f"SELECT max(rn), min(rn), item, judge FROM ({rows}) GROUP BY ds, item, judge HAVING count(*) > 1 "
                          f"ORDER BY 1")
        if dup:
            raise InputError(table.where, f"item {dup[2]!r} and judge {dup[3]!r} appear again (first at row {dup[1]}); keep "
                                          "the first or the last with `duplicates`", line=int(dup[0]), field=roles.judge,
                             unit="row")
    if roles.gold:
        diff = _first(con, f"SELECT max(rn), item FROM ({rows}) GROUP BY ds, item HAVING min(gold) <> max(gold) ORDER BY 1")
        if diff:
            raise InputError(table.where, f"item {diff[1]!r} has two different gold labels", line=int(diff[0]),
                             field=roles.gold, unit="row")


def _weights(con: Any, table: Table, roles: Roles) -> tuple[str, bool]:
    """(SQL for one bit per judge, whether some judge name is empty). An item's judges are distinct exactly when the
    OR of their bits has as many bits as the item has rows. The bit is taken from DuckDB's hash of the name (cheap on
    Parquet's dictionary-encoded strings), by a shift and modulus chosen so that no two judges share a bit; with more
    judges than that can serve, a lookup of each name."""
    col = f"CAST({q(roles.judge or '')} AS VARCHAR)"
    rows = con.execute(f"SELECT j, hash(j) FROM (SELECT DISTINCT {col} AS j FROM {table.sql})").fetchall()
    names = [(str(n), int(h)) for n, h in rows if n is not None]
    has_null = len(names) < len(rows)
    if len(names) <= 40:
        for mod in (64, 63, 62, 61, 59, 57, 53):
            for shift in range(0, 60, 3):
                if len({(h >> shift) % mod for _, h in names}) == len(names):
                    return f"(1::UBIGINT << ((hash({col}) >> {shift}) % {mod}))", has_null
    if len(names) <= MAX_WEIGHT_JUDGES:
        cases = " ".join(f"WHEN {lit(n)} THEN {1 << i}" for i, (n, _) in enumerate(names))
        return f"CAST(CASE {col} {cases} END AS UBIGINT)", has_null
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
    w, has_null = _weights(con, table, roles)
    if has_null:
        _check_rows(con, table, roles, opts)
    mark = _plain_mark(con, table, roles) or (_mark_expr(roles.correct, table.type_of(roles.correct)) if roles.correct else
                                               _verdict_expr(table, roles.verdict or "", roles.gold or "", opts.tolerance))
    item = q(roles.item or "")
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else None
    dup = f"count(*) - bit_count(bit_or({w}))" if w else f"count(*) - count(DISTINCT {q(roles.judge or '')})"
    scored = roles.gold is not None and roles.correct is None  # verdicts against gold: items may lack gold
    g = q(roles.gold or "")
    inner = [f"{ds} AS ds" if ds else "NULL AS ds", f"count({mark}) AS judges", f"sum({mark}) AS correct", f"{dup} AS dups",
             f"count({g}) = 0 AS nogold" if scored else "false AS nogold",
             f"{item} IS NULL" + (f" OR coalesce(min({g}) <> max({g}), false)" if scored else "") + " AS bad"]
    outer = ["ds" if ds else "NULL", "judges", "correct", "count(*)", "count(*) FILTER (WHERE nogold)" if scored else "0",
             "max(dups)", "bool_or(bad)"]
    sql = (f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM {table.sql} GROUP BY {f'{ds}, {item}' if ds else item}) "
           f"GROUP BY {'ds, ' if ds else ''}judges, correct")
    try:
        got = con.execute(sql).fetchall()
    except Exception as exc:  # noqa: BLE001
        raise _fail(table.where, exc) from None
    if any(r[5] > 0 or r[6] or (r[2] is not None and r[2] < 0) for r in got):
        _check_rows(con, table, roles, opts)
    return [(r[0], int(r[1]), int(r[2] or 0), int(r[3]), int(r[4])) for r in got]


def marks(con: Any, table: Table, roles: Roles, opts: InputOptions) -> list[tuple[Any, ...]]:
    """Every (dataset, item, judge, mark, gold, text, row) in row order, duplicates resolved as asked, checked."""
    rows = long_rows(table, roles, opts, numbered=True)
    if opts.duplicates != "error" and roles.shape == "long":
        order = "ASC" if opts.duplicates == "first" else "DESC"
        rows = (f"SELECT * FROM ({rows}) QUALIFY row_number() OVER (PARTITION BY ds, item, judge ORDER BY rn {order}) = 1")
    try:
        got: list[tuple[Any, ...]] = con.execute(f"SELECT ds, item, judge, mark, gold, text, rn FROM ({rows}) ORDER BY rn, judge").fetchall()
    except Exception as exc:  # noqa: BLE001
        raise _fail(table.where, exc) from None
    if any(r[3] is not None and r[3] < 0 or r[1] is None for r in got):
        _check_rows(con, table, roles, opts)
    return got


def counts_table(con: Any, table: Table, roles: Roles) -> list[tuple[Any, ...]]:
    """(dataset, judges, correct, items) of a counts table; a bad row is an InputError naming it."""
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"
    n = q("count") if "count" in table.names else "1"
    ok = (f"TRY_CAST(judges AS BIGINT) = judges AND TRY_CAST(correct AS BIGINT) = correct AND TRY_CAST({n} AS BIGINT) = {n} "
          f"AND judges BETWEEN 1 AND {MAX_JUDGES} AND correct BETWEEN 0 AND judges AND {n} >= 0")
    bad = _first(con, f"SELECT __row, judges, correct, {n} FROM {table.numbered} WHERE NOT coalesce({ok}, false) ORDER BY __row")
    if bad:
        raise InputError(table.where, f"judges {bad[1]}, correct {bad[2]}, count {bad[3]}: need integers with 1 <= judges <= "
                                      f"{MAX_JUDGES}, 0 <= correct <= judges and count >= 0", line=int(bad[0]), unit="row")
    got: list[tuple[Any, ...]] = con.execute(
        f"SELECT {ds}, CAST(judges AS BIGINT), CAST(correct AS BIGINT), sum(CAST({n} AS BIGINT)) FROM {table.sql} GROUP BY ALL").fetchall()
    return [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in got]


def read_table(path: Path, kind: str, opts: InputOptions, keep: Keep, name: str, where: str,
               shape: str | None = None) -> list[Dataset]:
    """Every dataset in a table file or folder (one per value of the dataset column, else one)."""
    from .build import Mark, from_histograms, from_marks

    con = connect()
    try:
        table = open_table(con, path, kind, where)
        roles = guess_roles(table, opts, shape)
        reading = Reading(f"{roles.shape} table ({kind})", roles.listing(), unit="row")
        if roles.shape == "counts":
            cells = [(ds, j, c, n, 0) for ds, j, c, n in counts_table(con, table, roles)]
            return from_histograms(cells, name, where, reading, keep)
        if keep is Keep.COUNTS and roles.shape == "long" and opts.duplicates == "error":
            return from_histograms(histograms(con, table, roles, opts), name, where, reading, keep)
        scored = roles.gold is not None and roles.correct is None
        rows = (Mark(item, judge, mark, rn, ds, text, scored and gold is None)
                for ds, item, judge, mark, gold, text, rn in marks(con, table, roles, opts))
        return from_marks(rows, name, where, reading, keep, "row", roles.judge_cols or None, empty_judge="column")
    finally:
        con.close()
