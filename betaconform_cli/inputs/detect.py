"""Which reader reads a file: from the format asked for, the file's name, and where the name says nothing (standard
input, a FIFO, an unknown extension) its first bytes; all of it read from the formats' registry (formats.py), but
for the JSON kinds that built-in formats share (told apart here by the document or its first line). A stream is
opened once (`prepared`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ..errors import InputError
from ..formats import (
    MAX_LINE_BYTES,
    claimant,
    claimed_kinds,
    format_for,
    input_format,
    is_binary_kind,
    kind_by_content,
    kind_by_name,
    kind_format,
    load_json,
    registered,
    temp_suffix,
)
from .options import InputOptions
from .paths import is_hive_folder, is_regular, is_stdin, open_binary, parts_folder, read_line, runs_folder

_JSON_DOCUMENT = "json?"  # a stream holding one JSON document: promptfoo or inspect, decided once it is copied


@dataclass(frozen=True)
class Plan:
    """How to read one path: the reader (a registered format's name: jsonl, table, promptfoo, inspect, ...), the
    file kind (parquet, csv, tsv, jsonl, json, eval, ...) and the `--from` choice that forced it when the format
    has several (a table's shape: long, wide, counts), else None (a table's shape is guessed from its columns)."""

    reader: str
    kind: str
    shape: str | None = None


@dataclass(frozen=True)
class Source:
    """What a reader is handed (formats.InputFormat.reader): the path to read (a stream that the format does not
    read as it comes is a temporary copy), the stream when it does, how to read it, the dataset's name (its file's
    stem, "stdin") and the name that messages give the input ("<stdin>" for standard input)."""

    path: Path
    plan: Plan
    name: str
    where: str
    stream: BinaryIO | None = None
    stdin: bool = False


def _forced(choice: str, kind: str) -> Plan:
    """The plan of `--from CHOICE` for a file of this kind."""
    fmt = format_for(choice)
    if fmt.name == "table" and kind == "json":  # a table's shape on a JSON document: its records (json_records.py)
        return Plan("json_records", kind, choice)
    if fmt.as_kind is not None and kind not in fmt.kinds and kind not in fmt.reads:
        kind = fmt.as_kind
    return Plan(fmt.name, kind, choice if choice != fmt.name else None)


def _first_record(path: Path) -> dict[str, object] | None:
    """The first JSON line of a JSON Lines file, decoded (None when it is not an object, or unreadable: the reader
    then says what is wrong, with the line)."""
    try:
        with open_binary(path) as fh:
            for _ in range(1000):
                line = fh.readline(MAX_LINE_BYTES)
                if not line:
                    return None
                if line.strip():
                    obj = load_json(line.lstrip(b"\xef\xbb\xbf"))
                    return obj if isinstance(obj, dict) else None
    except (OSError, EOFError, zlib.error, orjson.JSONDecodeError):
        return None
    return None


def _json_document(path: Path) -> str:
    """The format that claims a JSON document (promptfoo, inspect, a trace store's export: formats.InputFormat.claims,
    asked with the document's first record), read in full (these files are small)."""

    try:
        with open_binary(path) as fh:
            doc = load_json(fh.read(), stdlib=True)  # the standard library: inspect writes bare NaN, which orjson refuses
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"not a JSON document ({str(exc).splitlines()[0]})") from None
    claimed = claimant("json", first_of(doc))
    if claimed is not None:
        return claimed
    if doc == [] or isinstance(doc, dict) and not doc:
        raise InputError(str(path), "an empty JSON document: no records")
    others = ", ".join(f.name for f in registered() if "json" in f.claims and f.name not in ("promptfoo", "inspect", "json_records"))
    raise InputError(str(path), "a JSON document that is neither a promptfoo results file nor an inspect-ai log"
                                f"{' nor an export of ' + others if others else ''} nor a list of a table's records (flat "
                                "objects with an item_id, judge, verdict, gold or correct field); judgment data is JSON Lines "
                                "(one item per line), a table, or one of those")


# "traces": `mlflow traces search --output json` writes {"traces": [Trace.to_dict(), ...], "next_page_token": ...}
LIST_KEYS = ("data", "rows", "results", "records", "items", "events", "scores", "feedback", "annotations", "traces")


def first_of(doc: Any) -> Any:
    """A JSON document's first record: a list's first element, or the first element of the list an object holds
    under one of LIST_KEYS (an API response: {"data": [...], "meta": ...}), else the document itself."""
    if isinstance(doc, list):
        return doc[0] if doc else None
    if isinstance(doc, dict):
        inner = next((doc[k] for k in LIST_KEYS if isinstance(doc.get(k), list) and doc[k]), None)
        if inner is not None and isinstance(inner[0], dict):
            return inner[0]
    return doc


def _first_row(path: Path, kind: str = "parquet") -> dict[str, Any] | None:
    """A Parquet file's first row, or a CSV or TSV file's header with its first row (cells as text); None when
    unreadable or empty: the reader then says what is wrong."""
    if kind in ("csv", "tsv"):
        return _first_text_row(path, "\t" if kind == "tsv" else ",")
    from .table_sql import connect

    con = connect()
    try:
        cur = con.execute("SELECT * FROM read_parquet(?) LIMIT 1", [str(path)])
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row))
    except Exception:  # noqa: BLE001 - a damaged file is reported by the reader that reads it
        return None
    finally:
        con.close()


def _first_text_row(path: Path, delimiter: str) -> dict[str, Any] | None:
    import csv
    import io

    try:
        with open_binary(path) as fh:
            head = fh.read(1 << 20).decode("utf-8-sig", errors="replace")
        rows = csv.reader(io.StringIO(head, newline=""), delimiter=delimiter)
        header = next(rows, None)
        first = next((r for r in rows if any(c.strip() for c in r)), None)
    except (OSError, EOFError, zlib.error, csv.Error):
        return None
    return None if header is None or first is None else dict(zip(header, first))


def plan(path: Path, opts: InputOptions) -> Plan:
    """The reader for one (regular) file or folder."""
    forced = opts.source_format
    parts = parts_folder(path)
    if parts:  # one export in parts: read as its first part says (inputs/parts.py)
        return plan(parts[0], opts)
    if runs_folder(path):  # lm-eval's runs of several models: their samples files, as one input
        if forced not in ("auto", "lm_eval"):
            raise InputError(str(path), f"a folder of lm-eval runs cannot be read as {forced}; give its files")
        return Plan("lm_eval", "jsonl")
    if path.is_dir():
        return _folder(path, forced)
    _refuse_lfs_pointer(path)
    kind = kind_by_name(path)
    if kind is None:
        with open_binary(path) as fh:
            kind = kind_by_content(fh.peek(4096)[:4096])  # type: ignore[attr-defined]
    if forced != "auto":
        return _forced(forced, kind)
    if kind == "json":
        return Plan(_json_document(path), kind)
    if kind == "jsonl":
        return _plan_from_record(_first_record(path) or {}, kind, opts)
    if kind in ("parquet", "csv", "tsv") and kind in claimed_kinds():  # a trace store's export (formats.py)
        claimed = claimant(kind, _first_row(path, kind))
        if claimed is not None:
            return Plan(claimed, kind)
    return Plan(kind_format(kind).name, kind)


LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def _refuse_lfs_pointer(path: Path) -> None:
    """A Git LFS pointer (a checkout without `git lfs pull`) in place of the data: said as such, not read as a table
    whose header is its first line."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(LFS_POINTER))
    except OSError:
        return  # the reader says why it cannot open the file
    if head == LFS_POINTER:
        raise InputError(str(path), "a Git LFS pointer, not the data: fetch the file first (git lfs pull)", line=1)


def _folder(path: Path, forced: str) -> Plan:
    """A folder (a hive-partitioned table) is read by the format that reads folders: Parquet when it holds any."""
    fmt = next(f for f in registered() if f.folders)
    if forced != "auto" and not format_for(forced).folders:
        raise InputError(str(path), f"a folder cannot be read as {forced}; give its files")
    return Plan(fmt.name, "parquet" if any(path.rglob("*.parquet")) else "csv", forced if forced not in ("auto", fmt.name) else None)


def _plan_from_record(first: dict[str, object], kind: str, opts: InputOptions) -> Plan:
    """JSON Lines by their first record: a format that claims it (formats.InputFormat.claims), promptfoo results, a
    long table (item and judge fields), or judgments."""
    claimed = claimant(kind, first)
    if claimed is not None:
        return Plan(claimed, kind)
    lower = {k.lower() for k in first}
    if lower & {"judge", "grader", "scorer", "model", "annotator", "judge_name", "judge_id"} and not (
            opts.record.judgments_field in first or opts.record.verdicts_field in first):
        return Plan("table", "jsonl", "long")
    if _wide_record(first, opts):
        return Plan("table", "jsonl")
    return Plan("jsonl", kind)


def _wide_record(first: dict[str, object], opts: InputOptions) -> bool:
    """A wide table's row written as a JSON line (`df.to_json(orient="records", lines=True)`, a list of a wide
    frame's dicts given to the library): flat, with an item or a gold column by its name, and none of the judgment
    fields a line of judgment JSON Lines has. It was read as judgments ("no judgments: expected ...")."""
    from .table_open import ROLE_NAMES, role_key

    r = opts.record
    if not first or any(f in first for f in (r.judgments_field, r.verdicts_field, r.correct_field, r.judges_field)):
        return False
    if not all(v is None or isinstance(v, (str, int, float, bool)) for v in first.values()):
        return False
    keys = {role_key(str(k)) for k in first}
    return bool(keys & {*ROLE_NAMES["item"], *ROLE_NAMES["gold"]}) and len(keys) >= 3


def _plan_from_head(path: Path, head: bytes, opts: InputOptions) -> Plan:
    """The reader for a stream, from its name (if it says anything) and its first bytes."""
    forced = opts.source_format
    kind = kind_by_name(path) or kind_by_content(head)
    if kind_by_name(path) is None and b"\x00" in head[:4096] and not is_binary_kind(kind):
        raise InputError("<stdin>" if is_stdin(path) else str(path), "binary data, not a judgment file (no text, "
                                                                       "Parquet or .eval archive)")
    if forced != "auto":
        return _forced(forced, kind)
    if kind == "json":
        return Plan(_JSON_DOCUMENT, kind)
    if kind != "jsonl":
        return Plan(kind_format(kind).name, kind)
    first: dict[str, object] = {}
    try:
        obj = load_json(head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0])
        first = obj if isinstance(obj, dict) else {}
    except orjson.JSONDecodeError:
        pass
    return _plan_from_record(first, kind, opts)


@contextlib.contextmanager
def prepared(path: Path, opts: InputOptions, how: Plan | None = None) -> Iterator[tuple[Plan, Path, BinaryIO | None]]:
    """(how to read it, a path to read, an open stream or None). A regular file or folder is read where it is. A
    stream (stdin, a FIFO, a device, a process substitution) is opened once: JSON Lines are read from it as they
    come; anything else is first copied to a temporary file (lines capped at 16 MiB, so that an endless stream
    without line ends stops), which every reader -- DuckDB included -- can read like any file."""
    if is_regular(path) or path.is_dir() or is_hive_folder(path):
        yield how or plan(path, opts), path, None
        return
    with open_binary(path) as fh:
        try:
            head = bytes(fh.peek(1 << 16)[: 1 << 16])  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError("<stdin>" if is_stdin(path) else str(path), f"cannot read: {exc}") from None
        how = _plan_from_head(path, head, opts)
        if how.reader != _JSON_DOCUMENT and input_format(how.reader).streams:
            yield how, path, fh
            return
        fd, tmp = tempfile.mkstemp(prefix="betaconform-stream-", suffix=temp_suffix(how.kind))
        try:
            with os.fdopen(fd, "wb") as out:
                copy_stream(fh, out, path, text=not is_binary_kind(how.kind))
            local = Path(tmp)
            again = how.reader == _JSON_DOCUMENT or (opts.source_format == "auto" and how.kind in ("parquet", "csv", "tsv")
                                                     and how.kind in claimed_kinds())
            yield (plan(local, opts) if again else how), local, None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def copy_stream(src: BinaryIO, out: BinaryIO, path: Path, text: bool) -> None:
    """Copy a stream; text line by line with the line cap (InputError beyond it)."""
    if not text:
        shutil.copyfileobj(src, out, 1 << 20)
        return
    lineno = 0
    while True:
        line = read_line(src, path if not is_stdin(path) else Path("<stdin>"), lineno + 1)
        if not line:
            return
        lineno += 1
        out.write(line)
