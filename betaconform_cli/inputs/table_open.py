"""A table file opened in DuckDB as text, the same way for a judgments table (tables.py) and a gold file
(labels.py): the CSV dialect fixed from the header, a gzip file verified whole, the width limit, and the common
names of each column's role."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats import MAX_TABLE_COLUMNS
from . import values
from .dataset import MAX_JUDGES
from .paths import MAX_LINE_BYTES, is_regular, iter_objects, open_binary, open_raw, verify_gzip
from .table_sql import Table, fail, lit

ROLE_NAMES = {
    "item": ("item_id", "id", "sample_id", "question_id", "item"),
    "judge": ("judge", "grader", "scorer", "model", "annotator", "judge_name", "judge_id"),
    "correct": ("correct", "is_correct"),
    "verdict": ("verdict", "grade", "score", "prediction", "decision"),
    "gold": ("gold", "label", "human", "reference", "human_label", "gold_label", "ground_truth", "true_label", "y_true"),
    "text": ("text", "prompt", "question", "input"),
    "dataset": ("dataset",),
}
DELIMITERS = (",", ";", "\t", "|")


def role_key(name: str) -> str:
    """A column name as ROLE_NAMES spell it: case, surrounding spaces and the separator between words ignored
    ("Item ID", "item-id", " Item_ID " are item_id), as a spreadsheet's or a notebook's headers are written; letters
    read as a reader sees them (values.seen: "gоld" with a Cyrillic о, a zero-width space or a byte order mark in the
    name), so that such a gold column is not read as one more judge."""
    return "_".join(values.seen(name).strip().lower().replace("-", " ").replace("_", " ").split())


def by_role_key(names: Any) -> dict[str, list[str]]:
    """{role_key: the columns so named}: two columns of one key (`item_id` and `Item ID`) both stay, to be refused
    as ambiguous by the caller rather than one dropped."""
    out: dict[str, list[str]] = {}
    for name in names:
        out.setdefault(role_key(name), []).append(name)
    return out


def _gzipped(path: Path) -> bool:
    """A gzip file, by its name or its first bytes."""
    if path.name.lower().endswith(".gz"):
        return True
    try:
        with open_raw(path, regular=True) as fh:  # DuckDB reads a table in place: a regular file (streams are copied first)
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


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
    if b"\r" in raw and b'"' not in raw.split(b"\r", 1)[0]:  # no line feed up to the first CR: the whole file is "line 1"
        raise InputError(where, "its lines end in a carriage return alone (CR, as a classic Mac program writes): end them "
                                "with a line feed (LF or CRLF)", line=1)
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


def _check_width(columns: int, where: str) -> None:
    """A table's columns, refused beyond MAX_TABLE_COLUMNS from its header alone: loading is quadratic in them."""
    if columns > MAX_TABLE_COLUMNS:
        raise InputError(where, f"{columns} columns; a table may have at most {MAX_TABLE_COLUMNS} (a wide table's at most "
                                f"{MAX_JUDGES} judges and its other columns): write a long table (item, judge, verdict) instead")


def open_table(con: Any, path: Path, kind: str, where: str, skip: bool = False) -> Table:
    """kind: parquet, csv, tsv or jsonl; a folder is read whole (hive partitions become columns). A gzipped file is
    verified whole first (DuckDB's reader does not check the CRC). `skip`: malformed CSV rows are dropped and
    counted (Table.rejected) instead of stopping."""
    if not path.is_dir() and not is_regular(path):  # DuckDB would open a FIFO and wait for a writer forever
        raise InputError(where, "not a regular file (a FIFO, a device or a pipe): a table is read in place; save it to a file first")
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
            _check_width(len(cols), where)
            numbered = (f"(SELECT *, file_row_number + 1 AS __row, filename AS __file FROM "
                        f"{base}, file_row_number = true, filename = true))")
            return Table(where, base + ")", tuple((str(c[0]), str(c[1])) for c in cols), "__row", numbered)
        if kind == "jsonl":
            # every column read as text too (a JSON string unquoted, a number or boolean as written), as in CSV
            found = con.execute(f"DESCRIBE SELECT * FROM read_json({lit(target)}, format = 'newline_delimited'{packed})").fetchall()
            _check_width(len(found), where)
            columns = "{" + ", ".join(f"{lit(str(c[0]))}: 'VARCHAR'" for c in found) + "}"
            reader = f"read_json({lit(target)}, format = 'newline_delimited', columns = {columns}{packed})"
        else:
            # the dialect is fixed and every column read as text: DuckDB's sniffer would otherwise turn a ragged row
            # into one column, read past an unclosed quote, or guess a type from the first rows that a later row breaks
            delim, names = _csv_header(path, kind, where)
            _check_width(len(names), where)
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
            # DuckDB names the line where the parser stopped, not the bad line: name the first line that is no object
            for _ in iter_objects(path, where, lambda obj: f"each line must be a JSON object, got {values.json_kind(obj)}"):
                pass
        raise fail(where, exc) from None
    return Table(where, "src", tuple((str(c[0]), str(c[1])) for c in cols), "rowid + 1",
                 "(SELECT *, rowid + 1 AS __row, NULL AS __file FROM src)", rejected)
