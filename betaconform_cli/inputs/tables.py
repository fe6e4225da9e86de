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
import re
from pathlib import Path
from typing import Any

from ..errors import InputError, quote_all
from . import values
from .dataset import MAX_JUDGES, Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep
from .table_cells import _line_numbers, _nested, check_cells
from .table_open import ROLE_NAMES, by_role_key, open_table, role_key
from .table_slices import by_column, slice_table
from .table_sql import (
    Roles,
    Table,
    connect,
    counts_table,
    fail,
    first_row,
    histograms,
    lit,
    marks,
    q,
    vote_patterns,
)

__all__ = ["ROLE_NAMES", "Roles", "Table", "check_cells", "connect", "lit", "open_table", "q", "read_table"]

def _find(table: Table, role: str, given: str | None, exclude: frozenset[str] = frozenset()) -> str | None:
    """The column for a role: the one given (it must exist), else the one column with a common name."""
    if given is not None:
        if given not in table.names:
            raise InputError(table.where, f"no column {given!r} (the {role} column); columns: {quote_all(table.names)}")
        return given
    keyed = by_role_key(c for c in table.names if c not in exclude)
    found = [c for n in ROLE_NAMES[role] for c in keyed.get(n, [])]
    if len(found) > 1:
        odd = next((h for h in map(values.hidden, found) if h), "")
        raise InputError(table.where, f"columns {quote_all(found)}{odd} could each be the {role} column; "
                                      f"name one with `{role}_col`")
    return found[0] if found else None


_INDEX_NAME = re.compile(r"(column0|Unnamed: \d+|index|level_\d+)")  # "" is read as column0 (_csv_header)
INDEX_MIN_ROWS = 10  # a column of another name is a row index from this many rows on (0..n-1 is then no judge's verdicts)


def index_columns(con: Any, table: Table) -> tuple[str, ...]:
    """The row index that pandas' DataFrame.to_csv() writes first (header "", or "Unnamed: 0" once read back and
    written again; "index" or "level_0" after reset_index; the index's own name, "row", when it has one): a column
    among the first ones whose values are 0, 1, ..., n - 1 in row order, so named, or of any name that is no role's
    (ROLE_NAMES) from INDEX_MIN_ROWS rows on. Never a judge (a wide table's judges are its other columns): doctor
    notes it."""
    roles = {n for names in ROLE_NAMES.values() for n in names}
    out: list[str] = []
    for name in table.names[:3]:
        named = bool(_INDEX_NAME.fullmatch(name))
        if not named and role_key(name) in roles:
            continue
        text = f"trim(CAST({q(name)} AS VARCHAR))"
        match = f"count(*) FILTER (WHERE {text} = CAST(__row - 1 AS VARCHAR))"
        head = con.execute(f"SELECT count(*), {match} FROM (SELECT * FROM {table.numbered} LIMIT {INDEX_MIN_ROWS})").fetchone()
        if not head or head[0] != head[1]:  # the first rows tell most columns apart: no scan of a big table for them
            continue
        got = con.execute(f"SELECT count(*), {match} FROM {table.numbered}").fetchone()
        if got and got[0] and got[0] == got[1] and (named or got[0] >= INDEX_MIN_ROWS):
            out.append(name)
    return tuple(out)


NO_GOLD = "__gold"  # the gold column of a long table of verdicts that has none: no item has gold


def _no_gold(table: Table) -> Table:
    """The table with an empty gold column (NO_GOLD), for a long table of verdicts without gold: a pool."""
    empty = f"CAST(NULL AS VARCHAR) AS {q(NO_GOLD)}"
    return Table(table.where, f"(SELECT *, {empty} FROM {table.sql})", table.columns + ((NO_GOLD, "VARCHAR"),), table.row,
                 f"(SELECT *, {empty} FROM {table.numbered})", table.rejected)


def guess_roles(table: Table, opts: InputOptions, shape: str | None = None, index: tuple[str, ...] = ()) -> Roles:
    """Column roles from common names, overridden by the *_col options; InputError says which names were found.
    `index`: columns that are a row index (index_columns), never judges."""
    names = {role_key(c) for c in table.names}
    if shape is None:
        if opts.table.judge_col or opts.table.item_col and not opts.table.judge_cols:
            shape = "long"
        elif {"judges", "correct"} <= names and not any(n in names for n in ROLE_NAMES["judge"]):
            shape = "counts"
        elif any(n in names for n in ROLE_NAMES["judge"]) and not opts.table.judge_cols:
            shape = "long"
        elif {"pattern", "items"} <= names and not opts.table.judge_cols:
            shape = "patterns"  # sql/vote_patterns.sql's output (pattern_table.py)
        else:
            shape = "wide"
    dataset = _find(table, "dataset", opts.table.dataset_col)
    if shape == "patterns":
        return Roles("patterns")
    if shape == "counts":
        for col in ("judges", "correct"):
            if col not in names:  # in any case and separator (table_sql.counts_table finds them so)
                raise InputError(table.where, f"a counts table needs columns 'judges' and 'correct' (and optionally 'count'); "
                                              f"columns: {quote_all(table.names)}")
        return Roles("counts", dataset=dataset)
    item = _find(table, "item", opts.table.item_col)
    cluster = _cluster_column(table, opts.record.cluster_field)
    text = _find(table, "text", opts.table.text_col, frozenset(c for c in (item, cluster) if c))
    gold = _find(table, "gold", opts.table.gold_col)
    if shape == "long":
        judge = _find(table, "judge", opts.table.judge_col)
        correct = _find(table, "correct", opts.table.correct_col)
        verdict = _find(table, "verdict", opts.table.verdict_col)
        if judge is None or item is None:
            missing = "judge" if judge is None else "item"
            raise InputError(table.where, f"a long table needs an item column and a judge column; found no {missing} column "
                                          f"(columns: {quote_all(table.names)}); name it with `{missing}_col`")
        if correct is not None and verdict is not None and gold is not None and not (opts.table.correct_col or opts.table.verdict_col):
            raise InputError(table.where, f"both {correct!r} (correctness) and {verdict!r} with {gold!r} (verdict and gold) "
                                          "could score the judges; name one with `correct_col` or `verdict_col`")
        if correct is None and verdict is not None and gold is None and opts.labels is None:
            gold = NO_GOLD  # verdicts with no gold column: every item unlabeled (a pool), read as such (_no_gold)
        if correct is None and (verdict is None or gold is None):
            wide = (f"; {judge!r} was taken for a long table's judge column by its name: if each judge has a column of "
                    "its own (a wide table), name those with `judge_cols`") if not opts.table.judge_col and verdict is None else ""
            raise InputError(table.where, "a long table needs a correctness column, or a verdict column and a gold column "
                                          f"(columns: {quote_all(table.names)}){wide}")
        if correct is not None and not opts.table.verdict_col:
            verdict = gold = None
        return Roles("long", item, judge, correct, verdict, gold, text, dataset, cluster=cluster)
    taken = {c for c in (item, gold, text, dataset, cluster, *index) if c}
    cols = _judge_columns(table, opts.table.judge_cols, taken)
    if len(cols) > MAX_JUDGES:  # refused before any cell is read: every row would hold them all
        raise InputError(table.where, f"{len(cols)} judge columns in a wide table (a column per judge); at most {MAX_JUDGES} "
                                      "judges on one item are supported: name fewer with `judge_cols`, or write a long "
                                      "table (item, judge, verdict)")
    if not cols:
        raise InputError(table.where, f"no judge columns: every column is an id, gold, text or dataset column "
                                      f"(columns: {quote_all(table.names)}); name them with `judge_cols`")
    return Roles("wide", item=item, gold=gold, text=text, dataset=dataset, judge_cols=cols, cluster=cluster)


def _cluster_column(table: Table, name: str | None) -> str | None:
    """The column --cluster-field names in a table (its exact name; a dotted JSON path is no column here)."""
    if name is None or name in table.names:
        return name
    raise InputError(table.where, f"no column {name!r} (--cluster-field names the column whose value is each item's "
                                  f"cluster); columns: {quote_all(table.names)}")


def check_types(table: Table, roles: Roles) -> None:
    """Each column that plays a role holds one value per cell: a Parquet list or struct column as correctness, a
    judge, an id or a count is an InputError naming the column, never a failed cast deep in a query."""
    used = [c for c in (roles.item, roles.judge, roles.correct, roles.verdict, roles.gold, roles.text, roles.dataset,
                        roles.cluster) if c]
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
    out: dict[str, None] = {}  # ordered and with a constant-time test: a list's `in` made 10^4 columns quadratic
    for pat in (p.strip() for p in patterns.split(",") if p.strip()):
        hits = [c for c in table.names if fnmatch.fnmatchcase(c, pat)]
        if not hits:
            raise InputError(table.where, f"judge columns: {pat!r} matches no column (columns: {quote_all(table.names)})")
        out.update(dict.fromkeys(hits))
    return tuple(out)


def _join_labels(con: Any, table: Table, opts: InputOptions) -> tuple[Table, tuple[str, ...]]:
    """The table with its gold column taken from the labels file where a row has none (labels.py's rule), joined by
    the item id in DuckDB; an InputError when a labels file's label contradicts the table's own gold."""
    from .labels import load

    lab = load(opts)
    assert lab is not None
    item = _find(table, "item", opts.table.item_col if opts.table.item_col in table.names else None)
    if item is None:
        raise InputError(table.where, "--labels joins gold to items by id: no id column here (columns: "
                                      f"{', '.join(table.names)}); name it with --id-col")
    gold = opts.table.gold_col if opts.table.gold_col in table.names else _find(table, "gold", None) if opts.table.gold_col is None else None
    con.execute("CREATE OR REPLACE TEMP TABLE __labels (id VARCHAR, label VARCHAR, lrow BIGINT)")
    if lab.by_id:
        con.executemany("INSERT INTO __labels VALUES (?, ?, ?)", [(i, v, r) for i, (v, r) in lab.by_id.items()])
    key = f"trim(CAST(s.{q(item)} AS VARCHAR))"
    if gold is not None:
        own = f"CAST(s.{q(gold)} AS VARCHAR)"
        clash = first_row(con, f"SELECT s.__row, {key}, {own}, l.label, l.lrow FROM {table.numbered} s JOIN __labels l ON "
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


def _read_patterns(con: Any, table: Table, name: str, where: str, reading: Reading, keep: Keep) -> list[Dataset]:
    """A vote-pattern table (sql/vote_patterns.sql's output, from Spark or any engine): its histogram and Votes."""
    from .build import attach_votes, from_histograms
    from .pattern_table import COLUMNS, read_rows

    cols = {c.lower(): c for c in table.names}
    missing = [c for c in COLUMNS if c not in cols]
    if missing:
        raise InputError(where, f"a vote-pattern table needs columns {quote_all(COLUMNS)}; missing {quote_all(missing)}")
    pattern, gold, items = (q(cols[c]) for c in COLUMNS)
    rows = con.execute(f"SELECT CAST({pattern} AS VARCHAR), CASE WHEN {values.sql_missing(f'CAST({gold} AS VARCHAR)')} THEN NULL "
                       f"ELSE trim(CAST({gold} AS VARCHAR)) END, {items}, __row FROM {table.numbered} ORDER BY __row").fetchall()
    cells, found = read_rows(rows, where)
    return attach_votes(from_histograms(cells, name, where, reading, keep), {name: found}, where)


def read_table(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The table format's reader (formats.py): every dataset in a table file or folder (one per value of the dataset
    column, else one), of the plan's kind and shape (None: guessed from the columns). With opts.handling.skip_invalid,
    bad rows (a malformed CSV row, a bad value, an empty id) are skipped and counted."""
    path, kind, where = src.path, src.plan.kind, src.where
    try:
        return _read_table(path, kind, opts, keep, src.name, where, src.plan.shape)
    except InputError as exc:
        if kind != "jsonl" or exc.unit != "row" or not exc.line or path.is_dir() or exc.path != where:
            raise
        line = _line_numbers(path, {exc.line}).get(exc.line, exc.line)  # a JSON Lines table names lines, not rows
        raise InputError(exc.path, re.sub(r"\brows? (\d+)", lambda m: f"line {_line_numbers(path, {int(m.group(1))}).get(int(m.group(1)), m.group(1))}",
                                          exc.reason), line=line, field=exc.field) from None


def open_frame(con: Any, frame: Any, library: str, where: str) -> Table:
    """A pandas or polars DataFrame or an Arrow table, registered with DuckDB and copied into its own table `src`
    (as a Parquet file's columns: each keeps its type; rows numbered from 1). Two columns of one name are refused,
    as a CSV header's are (DuckDB would rename the second, and a wide table read it as a judge)."""
    names = [str(c) for c in (frame.column_names if library == "pyarrow" else getattr(frame, "columns", ()))] \
        if library != "polars" else []  # polars refuses duplicate names itself
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise InputError(where, "names two columns: rename one (df.columns = [...])", field=twice, unit="column")
    try:
        con.register("__frame", frame)
        con.execute("CREATE OR REPLACE TEMP TABLE src AS SELECT * FROM __frame")
        con.unregister("__frame")
        cols = con.execute("DESCRIBE SELECT * FROM src").fetchall()
    except Exception as exc:  # noqa: BLE001 - duckdb raises many kinds; each is about the caller's frame
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = " (DuckDB reads a polars DataFrame through pyarrow: pip install pyarrow)" if library == "polars" else ""
        bad = _unreadable_column(con, frame, library)
        if bad is not None:
            fix = {"pandas": f"df[{bad[0]!r}].astype(str)", "polars": f"pl.col({bad[0]!r}).cast(pl.String)"}.get(library)
            raise InputError(where, f"DuckDB cannot read its {bad[1]} values ({why}): convert the column to text"
                                    f"{f' ({fix})' if fix else ''} or drop it", field=bad[0], unit="column") from None
        raise InputError(where, f"cannot read this {library} table: {why}{hint}") from None
    return Table(where, "src", tuple((str(c[0]), str(c[1])) for c in cols), "rowid + 1",
                 "(SELECT *, rowid + 1 AS __row, NULL AS __file FROM src)")


def _unreadable_column(con: Any, frame: Any, library: str) -> tuple[str, str] | None:
    """(name, type) of the first column of a frame that DuckDB cannot read alone (a pandas Period or complex column, an
    object column mixing Python types DuckDB keeps apart: 1 and True),
    for the message; None when each reads alone (or the frame cannot be split by column)."""
    try:
        names = [str(c) for c in (frame.column_names if library == "pyarrow" else frame.columns)]
    except Exception:  # noqa: BLE001 - a frame we could not describe: the caller's message stands
        return None
    for name in names:
        try:
            one = frame.select([name]) if library != "pandas" else frame[[name]]
            con.register("__one", one)
            con.execute("CREATE OR REPLACE TEMP TABLE __probe AS SELECT * FROM __one")  # every value: a column of
            con.execute("DROP TABLE __probe")  # ints and booleans (object dtype) fails on its first boolean only
            con.unregister("__one")
        except Exception:  # noqa: BLE001 - this column is the one DuckDB refuses
            kind = str(frame.schema.field(name).type) if library == "pyarrow" else str(frame[name].dtype) if library == "pandas" \
                else str(frame.collect_schema()[name]) if hasattr(frame, "collect_schema") else "its"
            return name, kind
    return None


def read_frame(frame: Any, library: str, opts: InputOptions, keep: Keep, name: str, where: str) -> list[Dataset]:
    """Every dataset in a DataFrame or Arrow table (memory.py), read as a table file is: the same roles, options,
    SQL and value rules; the shape is guessed from the columns unless `source_format` forces one."""
    from ..formats import format_for

    shape = None
    if opts.source_format != "auto":
        fmt = format_for(opts.source_format)
        if fmt.name != "table":
            raise InputError(where, f"a DataFrame is a table: source_format {opts.source_format!r} does not read one "
                                    "(use long, wide, counts or auto)")
        shape = opts.source_format if opts.source_format != fmt.name else None
    return _read_table(Path(where), "frame", opts, keep, name, where, shape,
                       opener=lambda con: open_frame(con, frame, library, where))


def _read_table(path: Path, kind: str, opts: InputOptions, keep: Keep, name: str, where: str,
                shape: str | None = None, opener: Any = None) -> list[Dataset]:
    """`opener(con) -> Table`: a table that is not a file (read_frame); else the file `path` of `kind`. With --by,
    one dataset per slice (table_slices.py)."""
    found = _read_roles(path, kind, opts, keep, name, where, shape, opener)
    if opts.record.by is None:
        return found
    from .slices import named

    return named(found, name, opts.record.by)


def _read_roles(path: Path, kind: str, opts: InputOptions, keep: Keep, name: str, where: str,
                shape: str | None = None, opener: Any = None) -> list[Dataset]:
    from .build import Mark, attach_votes, from_histograms, from_marks, with_skips
    from .table_patterns import counts_and_patterns

    con = connect()
    try:
        table = opener(con) if opener is not None else open_table(con, path, kind, where, opts.handling.skip_invalid)
        own, notes = table, tuple[str, ...]()
        if opts.labels is not None:
            table, notes = _join_labels(con, table, opts)
        index = index_columns(con, own) if not path.is_dir() and opts.table.judge_cols is None else ()
        roles = guess_roles(table, opts, shape, index + by_column(table, opts.record.by))
        if roles.gold == NO_GOLD:
            table = _no_gold(table)
        table, roles = slice_table(con, table, roles, opts.record.by)  # --by: a dataset per slice
        if roles.shape == "wide" and index:
            notes += tuple(f"{'the unnamed first column' if c == 'column0' else f'column {c!r}'} skipped: the row index "
                           "pandas writes (0, 1, 2, ...), not a judge" for c in index)
        check_types(table, roles)
        check_cells(con, own, [c for c in (roles.item, roles.judge, roles.correct, roles.verdict, roles.gold, roles.dataset,
                                           roles.cluster, *roles.judge_cols) if c], path, kind)
        if opts.labels is not None and (roles.shape in ("counts", "patterns") or roles.correct is not None):
            raise InputError(where, "--labels gives gold to verdicts; this table holds correctness (already scored)")
        reading = Reading(f"{roles.shape} table ({kind})", roles.listing(), unit="row", notes=notes)
        skipped: list[tuple[Any, str, int]] = []
        if table.rejected[0]:
            skipped += [(None, "malformed row", table.rejected[1])] + [(None, "malformed row", 0)] * (table.rejected[0] - 1)
        if roles.shape == "patterns":
            return _read_patterns(con, table, name, where, reading, keep)
        if roles.shape == "counts":
            got, bad = counts_table(con, table, roles, opts.handling.skip_invalid, by_role_key(table.names))
            datasets = from_histograms([(ds, j, c, n, 0) for ds, j, c, n in got], name, where, reading, keep)
            return with_skips(datasets, name, skipped + bad)
        scored = roles.gold is not None and roles.correct is None
        with_votes = scored and opts.handling.tolerance is None  # a numeric score within a tolerance is not a class
        if keep is Keep.COUNTS and roles.shape == "long" and opts.handling.duplicates == "error" and not opts.handling.skip_invalid:
            one = counts_and_patterns(con, table, roles, opts) if with_votes else None
            if one is not None:  # the histogram, the checks and the vote patterns in one pass over the rows
                datasets = from_histograms(one[0], name, where, reading, keep)
                return attach_votes(datasets, {name if ds is None else str(ds): v for ds, v in one[1].items()}, where)
            datasets = from_histograms(histograms(con, table, roles, opts), name, where, reading, keep)
        else:
            got, bad = marks(con, table, roles, opts)
            rows = (Mark(item, judge, mark, rn, ds, text, scored and gold is None, verdict=vt, cluster=cl)
                    for ds, item, judge, mark, gold, text, rn, vt, cl in got)
            datasets = with_skips(from_marks(rows, name, where, reading, keep, "row", roles.judge_cols or None,  # empty: wide only
                                             empty_judge="column" if roles.shape == "wide" else None), name, skipped + bad)
        if not with_votes:
            return datasets
        found = vote_patterns(con, table, roles, opts, per_item=keep is not Keep.COUNTS)
        return attach_votes(datasets, {name if ds is None else str(ds): v for ds, v in found.items()}, where)
    except Exception as exc:
        import duckdb

        if isinstance(exc, duckdb.Error):  # any query may be the one that meets a corrupt page, not only the first
            raise fail(where, exc) from None
        raise
    finally:
        con.close()
