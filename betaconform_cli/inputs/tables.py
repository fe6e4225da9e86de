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

import csv
import fnmatch
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import InputError, quote_all
from . import values
from .dataset import MAX_JUDGES, Dataset, Reading
from .options import InputOptions, Keep
from .paths import MAX_LINE_BYTES, open_binary, verify_gzip

ROLE_NAMES = {
    "item": ("item_id", "id", "sample_id", "question_id", "item"),
    "judge": ("judge", "grader", "scorer", "model", "annotator", "judge_name", "judge_id"),
    "correct": ("correct", "is_correct"),
    "verdict": ("verdict", "grade", "score", "prediction", "decision"),
    "gold": ("gold", "label", "human", "reference", "human_label", "gold_label"),
    "text": ("text", "prompt", "question", "input"),
    "dataset": ("dataset",),
}
TRUE, FALSE = values.TRUE, values.FALSE
DELIMITERS = (",", ";", "\t", "|")
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


_DUCKDB_PREFIX = re.compile(r"^[A-Z][A-Za-z ]*(Error|Exception): *")


def _fail(where: str, exc: Exception) -> InputError:
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


def _gzipped(path: Path) -> bool:
    """A gzip file, by its name or its first bytes."""
    if path.name.lower().endswith(".gz"):
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _first_bad_json(path: Path, where: str) -> None:
    """InputError naming the first line of a JSON Lines file that is not a JSON object (nothing when all are)."""
    import orjson

    from .paths import iter_lines

    for lineno, raw in iter_lines(path):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(where, values.json_problem(raw, exc), line=lineno) from None
        if not isinstance(obj, dict):
            raise InputError(where, f"each line must be a JSON object, got {type(obj).__name__}", line=lineno)


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


def _csv_header(path: Path, kind: str, where: str) -> tuple[str, tuple[str, ...]]:
    """(delimiter, column names) from the header line of a CSV or TSV file (the first file of a folder): the
    delimiter of a .tsv is a tab, of a .csv whichever of , ; tab | splits the header into most fields."""
    first = path
    if path.is_dir():
        files = sorted(q for q in path.rglob("*") if q.is_file() and not q.name.startswith((".", "_")))
        if not files:
            raise InputError(where, "the folder holds no table file")
        first = files[0]
    with open_binary(first) as fh:
        raw = fh.readline(MAX_LINE_BYTES)
    raw = raw.removeprefix(b"\xef\xbb\xbf").rstrip(b"\r\n")
    if b"\x00" in raw:
        raise InputError(where, values.nul_hint(raw), line=1)
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(where, "not UTF-8 text (save the file as UTF-8)", line=1) from None
    if not line.strip():
        raise InputError(where, "empty file: no header row")
    if kind == "tsv":
        delim = "\t"
    else:
        delim = max(DELIMITERS, key=lambda d: (len(next(csv.reader([line], delimiter=d))), -DELIMITERS.index(d)))
    names = [n.strip() or f"column{i}" for i, n in enumerate(next(csv.reader([line], delimiter=delim)))]
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            raise InputError(where, f"the header names column {n!r} twice", line=1)
        seen.add(n.lower())
    return delim, tuple(names)


def open_table(con: Any, path: Path, kind: str, where: str, skip: bool = False) -> Table:
    """kind: parquet, csv, tsv or jsonl; a folder is read whole (hive partitions become columns). A gzipped file is
    verified whole first (DuckDB's reader does not check the CRC). `skip`: malformed CSV rows are dropped and
    counted (Table.rejected) instead of stopping."""
    for gz in sorted(path.rglob("*.gz")) if path.is_dir() else [path] if _gzipped(path) else []:
        verify_gzip(gz, where if gz == path else str(gz))
    rejected = (0, 0)
    packed = ", compression = 'gzip'" if not path.is_dir() and _gzipped(path) else ""  # by content, not only by name
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
            # every column read as text too (a JSON string unquoted, a number or boolean as written), as in CSV
            found = con.execute(f"DESCRIBE SELECT * FROM read_json({lit(target)}, format = 'newline_delimited'{packed})").fetchall()
            columns = "{" + ", ".join(f"{lit(str(c[0]))}: 'VARCHAR'" for c in found) + "}"
            reader = f"read_json({lit(target)}, format = 'newline_delimited', columns = {columns}{packed})"
        else:
            # the dialect is fixed and every column read as text: DuckDB's sniffer would otherwise turn a ragged row
            # into one column, read past an unclosed quote, or guess a type from the first rows that a later row breaks
            delim, names = _csv_header(path, kind, where)
            columns = "{" + ", ".join(f"{lit(n)}: 'VARCHAR'" for n in names) + "}"
            reader = (f"read_csv({lit(target)}, header = true, auto_detect = false, columns = {columns}, delim = {lit(delim)}{packed}, "
                      f"quote = '\"', escape = '\"', strict_mode = true{', ignore_errors = true, store_rejects = true' if skip else ''}"
                      f"{hive})")
        con.execute(f"CREATE OR REPLACE TEMP TABLE src AS SELECT * FROM {reader}")
        cols = con.execute("DESCRIBE SELECT * FROM src").fetchall()
        if skip and kind != "jsonl":
            bad = con.execute("SELECT count(*), min(line) FROM reject_errors").fetchone()
            rejected = (int(bad[0]), int(bad[1] or 0) - 1) if bad and bad[0] else (0, 0)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - duckdb raises many kinds; each is about the user's file
        if kind == "jsonl" and not path.is_dir():
            _first_bad_json(path, where)  # DuckDB names the line where the parser stopped, not the bad line
        raise _fail(where, exc) from None
    return Table(where, "src", tuple((str(c[0]), str(c[1])) for c in cols), "rowid + 1",
                 "(SELECT *, rowid + 1 AS __row, NULL AS __file FROM src)", rejected)


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


def _nested(typ: str) -> bool:
    """A DuckDB type holding several values per cell: a list (INTEGER[]), an array (INTEGER[3]), a struct, map or
    union (Parquet and JSON carry them)."""
    t = typ.upper()
    return t.endswith("]") or t.startswith(("STRUCT", "MAP", "UNION", "LIST"))


def check_types(table: Table, roles: Roles) -> None:
    """Each column that plays a role holds one value per cell: a Parquet list or struct column as correctness, a
    judge, an id or a count is an InputError naming the column, never a failed cast deep in a query."""
    used = [c for c in (roles.item, roles.judge, roles.correct, roles.verdict, roles.gold, roles.text, roles.dataset) if c]
    used += list(roles.judge_cols)
    if roles.shape == "counts":
        used += [c for c in ("judges", "correct", "count") if c in table.names]
    for col in used:
        typ = table.type_of(col)
        if _nested(typ):
            raise InputError(table.where, f"holds {typ} values; each cell must be one value (a number, a boolean or "
                                          "text)", field=col, unit="column")


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


def _gold_expr(table: Table, gold: str) -> str:
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
    """SELECT ds, item, judge, mark, gold, text, rn: the table in its long form (a wide table unpivoted); rn is the
    row number (NULL when not `numbered`: the histogram query at scale never numbers rows)."""
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"
    text = f"CAST({q(roles.text)} AS VARCHAR)" if roles.text else "NULL"
    if roles.shape == "wide":
        for c in roles.judge_cols:
            _scalar(c, table.type_of(c), table.where)
        types = {table.type_of(c) for c in roles.judge_cols}
        common = types.pop() if len(types) == 1 else "VARCHAR"
        keep = [c for c in (roles.dataset, roles.text, roles.gold, roles.item) if c] + ["__row"]
        cast = ", ".join(f"CAST({q(c)} AS {common}) AS {q(c)}" for c in roles.judge_cols)
        src = (f"UNPIVOT (SELECT {', '.join(q(c) for c in dict.fromkeys(keep))}, {cast} FROM {table.numbered}) "
               f"ON {', '.join(q(c) for c in roles.judge_cols)} INTO NAME __judge VALUE __cell")
        cells = replace(table, columns=table.columns + (("__cell", common),))
        mark = _verdict_expr(cells, "__cell", roles.gold, opts.tolerance) if roles.gold else _mark_expr("__cell", common)
        item = f"CAST({q(roles.item)} AS VARCHAR)" if roles.item else "CAST(__row AS VARCHAR)"
        gold = _gold_expr(table, roles.gold) if roles.gold else "NULL"
        vt = _class_expr(cells, "__cell") if roles.gold else "NULL"
        return (f"SELECT {ds} AS ds, {item} AS item, __judge AS judge, {mark} AS mark, {gold} AS gold, {text} AS text, "
                f"__row AS rn, {vt} AS vt FROM ({src})")
    mark = _mark_expr(roles.correct, table.type_of(roles.correct), table.where) if roles.correct else _verdict_expr(
        table, roles.verdict or "", roles.gold or "", opts.tolerance)
    gold = _gold_expr(table, roles.gold) if roles.gold and not roles.correct else "NULL"
    vt = _class_expr(table, roles.verdict) if roles.verdict and roles.gold and not roles.correct else "NULL"
    return (f"SELECT {ds} AS ds, CAST({q(roles.item or '')} AS VARCHAR) AS item, CAST({q(roles.judge or '')} AS VARCHAR) "
            f"AS judge, {mark} AS mark, {gold} AS gold, {text} AS text, {'__row' if numbered else 'NULL'} AS rn, {vt} AS vt "
            f"FROM {table.numbered if numbered else table.sql}")


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
    (judges, {}, each item's (classes, gold), ids)}, patterns.build's arguments."""
    from .patterns import canonical

    rows = long_rows(table, roles, opts, numbered=per_item or opts.duplicates != "error" and roles.shape == "long")
    if opts.duplicates != "error" and roles.shape == "long":
        order = "ASC" if opts.duplicates == "first" else "DESC"
        rows = f"SELECT * FROM ({rows}) QUALIFY row_number() OVER (PARTITION BY ds, item, judge ORDER BY rn {order}) = 1"
    ok = "(mark IS NULL OR mark >= 0) AND item IS NOT NULL AND judge IS NOT NULL"
    inner = (f"SELECT ds, item, min(rn) AS first, list(judge ORDER BY judge) FILTER (WHERE vt IS NOT NULL) AS js, "
             f"list(vt ORDER BY judge) FILTER (WHERE vt IS NOT NULL) AS vs, max(gold) AS gold FROM ({rows}) WHERE {ok} "
             f"GROUP BY ds, item")
    sql = (f"SELECT ds, js, vs, gold, item FROM ({inner}) WHERE len(js) > 0 ORDER BY first" if per_item else
           f"SELECT ds, js, vs, gold, count(*) FROM ({inner}) WHERE len(js) > 0 GROUP BY ds, js, vs, gold")
    try:
        got = con.execute(sql).fetchall()
    except Exception as exc:  # noqa: BLE001
        raise _fail(table.where, exc) from None
    out: dict[Any, tuple[Any, ...]] = {}
    seen: dict[Any, set[str]] = {}
    for ds, js, _, _, _ in got:
        seen.setdefault(ds, set()).update(js)
    for ds, names in seen.items():
        judges = tuple(c for c in roles.judge_cols if c in names) if roles.shape == "wide" else tuple(sorted(names))
        out[ds] = (judges, {}, [], []) if per_item else (judges, {})
    memo: dict[str | None, str | None] = {}

    def cls(text: str | None) -> str | None:  # few distinct texts: each written one way once
        if text not in memo:
            memo[text] = canonical(text)
        return memo[text]

    ats = {ds: {j: i for i, j in enumerate(got_ds[0])} for ds, got_ds in out.items()}
    for ds, js, vs, gold, n in got:
        judges, tally, *items = out[ds]
        row: list[str | None] = [None] * len(judges)
        at = ats[ds]
        for j, v in zip(js, vs):
            row[at[j]] = cls(v)
        key = (tuple(row), cls(gold))
        if per_item:
            items[0].append(key)
            items[1].append(str(n))
        else:
            tally[key] = tally.get(key, 0) + int(n)
    return out


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
    if opts.skip_invalid:  # the rows the caller skipped are not what is wrong
        rows = f"SELECT * FROM ({rows}) WHERE (mark IS NULL OR mark >= 0) AND item IS NOT NULL AND judge IS NOT NULL"
    bad = _first(con, f"SELECT rn, judge FROM ({rows}) WHERE mark < 0 ORDER BY rn")
    if bad:
        col = _column(roles, bad[1])
        cell = _first(con, f"SELECT CAST({q(col)} AS VARCHAR) FROM {table.numbered} WHERE __row = {int(bad[0])}")
        what = ("a tolerance compares numbers" if opts.tolerance is not None else
                f"must be {values.MARK_WORDS} (null, empty or NA: no verdict)")
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
        blank = _first(con, f"SELECT min(rn) FILTER (WHERE gold IS NULL), min(rn) FILTER (WHERE gold IS NOT NULL), item "
                            f"FROM ({rows}) GROUP BY ds, item HAVING count(gold) > 0 AND count(gold) < count(*) ORDER BY 1")
        if blank:
            raise InputError(table.where, f"no gold label for item {blank[2]!r}, which has one at row {blank[1]}: give the "
                                          "gold on every row of an item (an item with no gold on any row is skipped and "
                                          "counted)", line=int(blank[0]), field=roles.gold, unit="row")


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
    mark = _plain_mark(con, table, roles) or (_mark_expr(roles.correct, table.type_of(roles.correct), table.where) if roles.correct else
                                               _verdict_expr(table, roles.verdict or "", roles.gold or "", opts.tolerance))
    item = q(roles.item or "")
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else None
    dup = f"count(*) - bit_count(bit_or({w}))" if w else f"count(*) - count(DISTINCT {q(roles.judge or '')})"
    scored = roles.gold is not None and roles.correct is None  # verdicts against gold: items may lack gold
    g = _gold_expr(table, roles.gold) if scored and roles.gold else "NULL"
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
        raise _fail(table.where, exc) from None
    if any(r[5] > 0 or r[6] or (r[2] is not None and r[2] < 0) for r in got):
        _check_rows(con, table, roles, opts)
    return [(r[0], int(r[1]), int(r[2] or 0), int(r[3]), int(r[4])) for r in got]


def marks(con: Any, table: Table, roles: Roles, opts: InputOptions) -> tuple[list[tuple[Any, ...]], list[tuple[Any, str, int]]]:
    """(every (dataset, item, judge, mark, gold, text, row) in row order, duplicates resolved as asked, checked;
    the rows skipped as (dataset, reason, row) when opts.skip_invalid, else [] -- a bad row is then an error)."""
    rows = long_rows(table, roles, opts, numbered=True)
    if opts.duplicates != "error" and roles.shape == "long":
        order = "ASC" if opts.duplicates == "first" else "DESC"
        rows = (f"SELECT * FROM ({rows}) QUALIFY row_number() OVER (PARTITION BY ds, item, judge ORDER BY rn {order}) = 1")
    try:
        got: list[tuple[Any, ...]] = con.execute(f"SELECT ds, item, judge, mark, gold, text, rn, vt FROM ({rows}) ORDER BY rn, judge").fetchall()
    except Exception as exc:  # noqa: BLE001
        raise _fail(table.where, exc) from None
    skipped: list[tuple[Any, str, int]] = []
    if opts.skip_invalid:
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
        _check_rows(con, table, roles, opts)
    return got, skipped


def _partial_gold(rows: list[tuple[Any, ...]], roles: Roles) -> bool:
    """Whether some item has gold on some rows and none on others (scored long tables only)."""
    if roles.shape != "long" or roles.gold is None or roles.correct is not None:
        return False
    has: dict[tuple[Any, Any], set[bool]] = {}
    for r in rows:
        has.setdefault((r[0], r[1]), set()).add(r[4] is None)
    return any(len(v) > 1 for v in has.values())


def counts_table(con: Any, table: Table, roles: Roles, skip: bool = False) -> tuple[list[tuple[Any, ...]], list[tuple[Any, str, int]]]:
    """(dataset, judges, correct, items) of a counts table, and the rows skipped (`skip`); a bad row is otherwise an
    InputError naming it. Values are read as numbers whatever the column's type ("3", 3, 3.0)."""
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"

    def num(col: str) -> str:
        return f"TRY_CAST(trim(CAST({col} AS VARCHAR)) AS DOUBLE)"

    j, c, n = num("judges"), num("correct"), num(q("count")) if "count" in table.names else "1.0"
    ok = (f"{j} = floor({j}) AND {c} = floor({c}) AND {n} = floor({n}) AND {j} BETWEEN 1 AND {MAX_JUDGES} "
          f"AND {c} BETWEEN 0 AND {j} AND {n} BETWEEN 0 AND {2.0 ** 53}")
    cells = (f"SELECT {ds} AS ds, CAST({j} AS BIGINT) AS j, CAST({c} AS BIGINT) AS c, CAST({n} AS BIGINT) AS n, __row, "
             f"coalesce({ok}, false) AS ok FROM {table.numbered}")
    shown = f"CAST(judges AS VARCHAR), CAST(correct AS VARCHAR), {'CAST(' + q('count') + ' AS VARCHAR)' if 'count' in table.names else '1'}"
    try:
        skipped: list[tuple[Any, str, int]] = []
        if skip:
            skipped = [(r[0], "bad judges, correct or count value", int(r[1])) for r in
                       con.execute(f"SELECT ds, __row FROM ({cells}) WHERE NOT ok ORDER BY __row").fetchall()]
        else:
            bad = _first(con, f"SELECT __row, {shown} FROM {table.numbered} WHERE NOT coalesce({ok}, false) ORDER BY __row")
            if bad:
                raise InputError(table.where, f"judges {bad[1]}, correct {bad[2]}, count {bad[3]}: need integers with 1 <= "
                                              f"judges <= {MAX_JUDGES}, 0 <= correct <= judges and count >= 0",
                                 line=int(bad[0]), unit="row")
        got: list[tuple[Any, ...]] = con.execute(f"SELECT ds, j, c, sum(n) FROM ({cells}) WHERE ok GROUP BY ALL").fetchall()
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _fail(table.where, exc) from None
    return [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in got], skipped


def _join_labels(con: Any, table: Table, opts: InputOptions) -> tuple[Table, tuple[str, ...]]:
    """The table with its gold column taken from the labels file where a row has none (labels.py's rule), joined by
    the item id in DuckDB; an InputError when a labels file's label contradicts the table's own gold."""
    from .labels import load

    lab = load(opts)
    assert lab is not None
    item = _find(table, "item", opts.item_col if opts.item_col in table.names else None)
    if item is None:
        raise InputError(table.where, "--labels joins gold to items by id: no id column here (columns: "
                                      f"{', '.join(table.names)}); name it with --id-col")
    gold = opts.gold_col if opts.gold_col in table.names else _find(table, "gold", None) if opts.gold_col is None else None
    con.execute("CREATE OR REPLACE TEMP TABLE __labels (id VARCHAR, label VARCHAR, lrow BIGINT)")
    if lab.by_id:
        con.executemany("INSERT INTO __labels VALUES (?, ?, ?)", [(i, v, r) for i, (v, r) in lab.by_id.items()])
    key = f"trim(CAST(s.{q(item)} AS VARCHAR))"
    if gold is not None:
        own = f"CAST(s.{q(gold)} AS VARCHAR)"
        clash = _first(con, f"SELECT s.__row, {key}, {own}, l.label, l.lrow FROM {table.numbered} s JOIN __labels l ON "
                            f"{key} = l.id WHERE NOT {values.sql_missing(own)} AND "
                            f"{values.sql_agree(own, 'l.label', None, 0)} = 0 ORDER BY s.__row")
        if clash:
            raise InputError(table.where, f"the gold label {clash[2]!r} of item {clash[1]!r} contradicts the labels file "
                                          f"{lab.where} (row {clash[4]}: {clash[3]!r})", line=int(clash[0]), field=gold, unit="row")
        merged = f"CASE WHEN {values.sql_missing(own)} THEN l.label ELSE {own} END AS {q(gold)}"
        cols = ", ".join(merged if c == gold else f"s.{q(c)}" for c in table.names) + ", s.__row, s.__file"
    else:
        cols = ", ".join(f"s.{q(c)}" for c in table.names) + ", l.label AS gold, s.__row, s.__file"
    con.execute(f"CREATE OR REPLACE TEMP VIEW __joined AS SELECT {cols} FROM {table.numbered} s LEFT JOIN __labels l ON {key} = l.id")
    used = con.execute(f"SELECT count(*) FROM __labels WHERE id IN (SELECT {key} FROM {table.sql} s)").fetchone()
    columns = tuple((str(c[0]), str(c[1])) for c in con.execute("DESCRIBE SELECT * FROM __joined").fetchall())
    joined = Table(table.where, "__joined", columns, "__row", "__joined", table.rejected)
    return joined, (lab.note(int(used[0]) if used else 0),)


def read_table(path: Path, kind: str, opts: InputOptions, keep: Keep, name: str, where: str,
               shape: str | None = None) -> list[Dataset]:
    """Every dataset in a table file or folder (one per value of the dataset column, else one). With
    opts.skip_invalid, bad rows (a malformed CSV row, a bad value, an empty id) are skipped and counted."""
    try:
        return _read_table(path, kind, opts, keep, name, where, shape)
    except InputError as exc:
        if kind != "jsonl" or exc.unit != "row" or not exc.line or path.is_dir() or exc.path != where:
            raise
        line = _line_numbers(path, {exc.line}).get(exc.line, exc.line)  # a JSON Lines table names lines, not rows
        raise InputError(exc.path, re.sub(r"\brows? (\d+)", lambda m: f"line {_line_numbers(path, {int(m.group(1))}).get(int(m.group(1)), m.group(1))}",
                                          exc.reason), line=line, field=exc.field) from None


def _read_table(path: Path, kind: str, opts: InputOptions, keep: Keep, name: str, where: str,
                shape: str | None = None) -> list[Dataset]:
    from .build import Mark, attach_votes, from_histograms, from_marks, with_skips

    con = connect()
    try:
        table = open_table(con, path, kind, where, opts.skip_invalid)
        notes: tuple[str, ...] = ()
        if opts.labels is not None:
            table, notes = _join_labels(con, table, opts)
        roles = guess_roles(table, opts, shape)
        check_types(table, roles)
        if opts.labels is not None and (roles.shape == "counts" or roles.correct is not None):
            raise InputError(where, "--labels gives gold to verdicts; this table holds correctness (already scored)")
        reading = Reading(f"{roles.shape} table ({kind})", roles.listing(), unit="row", notes=notes)
        skipped: list[tuple[Any, str, int]] = []
        if table.rejected[0]:
            skipped += [(None, "malformed row", table.rejected[1])] + [(None, "malformed row", 0)] * (table.rejected[0] - 1)
        if roles.shape == "counts":
            got, bad = counts_table(con, table, roles, opts.skip_invalid)
            datasets = from_histograms([(ds, j, c, n, 0) for ds, j, c, n in got], name, where, reading, keep)
            return with_skips(datasets, name, skipped + bad)
        scored = roles.gold is not None and roles.correct is None
        with_votes = scored and opts.tolerance is None  # a numeric score within a tolerance is not a class
        if keep is Keep.COUNTS and roles.shape == "long" and opts.duplicates == "error" and not opts.skip_invalid:
            datasets = from_histograms(histograms(con, table, roles, opts), name, where, reading, keep)
        else:
            got, bad = marks(con, table, roles, opts)
            rows = (Mark(item, judge, mark, rn, ds, text, scored and gold is None) for ds, item, judge, mark, gold, text, rn, _ in got)
            datasets = with_skips(from_marks(rows, name, where, reading, keep, "row", roles.judge_cols or None,
                                             empty_judge="column"), name, skipped + bad)
        if not with_votes:
            return datasets
        found = vote_patterns(con, table, roles, opts, per_item=keep is not Keep.COUNTS)
        return attach_votes(datasets, {name if ds is None else str(ds): v for ds, v in found.items()}, where)
    except Exception as exc:
        import duckdb

        if isinstance(exc, duckdb.Error):  # any query may be the one that meets a corrupt page, not only the first
            raise _fail(where, exc) from None
        raise
    finally:
        con.close()
