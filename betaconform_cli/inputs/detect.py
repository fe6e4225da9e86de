"""Which reader reads a file: from the format asked for, the file's name, and where the name says nothing (standard
input, a FIFO, an unknown extension) its first bytes. A stream is opened once (`prepared`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import orjson

from ..errors import InputError
from ..formats import MAX_LINE_BYTES, TABLE_SHAPES, kind_by_name, temp_suffix
from .options import InputOptions
from .paths import is_hive_folder, is_regular, is_stdin, open_binary, read_line


@dataclass(frozen=True)
class Plan:
    """How to read one path: the reader (jsonl, table, promptfoo, inspect), the file kind (parquet, csv, tsv,
    jsonl, json, eval) and a forced table shape (long, wide, counts) or None to guess from the columns."""

    reader: str
    kind: str
    shape: str | None = None


def _kind_by_content(head: bytes) -> str:
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"PK"):
        return "eval"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        first = text.split(b"\n", 1)[0]
        try:
            orjson.loads(first)
            return "jsonl"
        except orjson.JSONDecodeError:
            return "json"
    first_line = text.split(b"\n", 1)[0]
    return "tsv" if b"\t" in first_line else "csv"


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
                    obj = orjson.loads(line.lstrip(b"\xef\xbb\xbf"))
                    return obj if isinstance(obj, dict) else None
    except (OSError, EOFError, zlib.error, orjson.JSONDecodeError):
        return None
    return None


def _json_document(path: Path) -> str:
    """promptfoo or inspect, from a JSON document's top-level keys (read in full: these files are small)."""
    import json

    try:
        with open_binary(path) as fh:
            doc = json.loads(fh.read())  # the standard library: inspect writes bare NaN, which orjson refuses
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"not a JSON document ({str(exc).splitlines()[0]})") from None
    except RecursionError:  # the standard library's parser recurses: '[[[[...' a hundred thousand deep
        raise InputError(str(path), "not a JSON document (nested too deeply)") from None
    if isinstance(doc, dict) and "eval" in doc and ("samples" in doc or "version" in doc):
        return "inspect"
    if isinstance(doc, dict) and ("evalId" in doc or isinstance(doc.get("results"), dict)):
        return "promptfoo"
    raise InputError(str(path), "a JSON document that is neither a promptfoo results file nor an inspect-ai log; "
                                "judgment data is JSON Lines (one item per line), a table, or one of those")


def plan(path: Path, opts: InputOptions) -> Plan:
    """The reader for one (regular) file or folder."""
    forced = opts.source_format
    if path.is_dir():
        if forced in ("promptfoo", "jsonl"):
            raise InputError(str(path), f"a folder cannot be read as {forced}; give its files")
        return Plan("table", "parquet" if any(path.rglob("*.parquet")) else "csv", forced if forced in TABLE_SHAPES else None)
    kind = kind_by_name(path)
    if kind is None:
        with open_binary(path) as fh:
            kind = _kind_by_content(fh.peek(4096)[:4096])  # type: ignore[attr-defined]
    if forced in TABLE_SHAPES:
        return Plan("table", "csv" if kind in ("json", "eval") else kind, forced)
    if forced in ("promptfoo", "inspect"):
        return Plan(forced, kind)
    if forced == "jsonl" or kind not in ("jsonl", "json", "eval"):
        return Plan("jsonl", kind) if forced == "jsonl" or kind == "jsonl" else Plan("table", kind)
    if kind == "eval":
        return Plan("inspect", kind)
    if kind == "json":
        return Plan(_json_document(path), kind)
    return _plan_from_record(_first_record(path) or {}, kind, opts)


def _plan_from_record(first: dict[str, object], kind: str, opts: InputOptions) -> Plan:
    """JSON Lines by their first record: promptfoo results, a long table (item and judge fields), or judgments."""
    if "gradingResult" in first or "testCase" in first or "testIdx" in first:
        return Plan("promptfoo", kind)
    lower = {k.lower() for k in first}
    if lower & {"judge", "grader", "scorer", "model", "annotator", "judge_name", "judge_id"} and not (
            opts.record.judgments_field in first or opts.record.verdicts_field in first):
        return Plan("table", "jsonl", "long")
    return Plan("jsonl", kind)


def _plan_from_head(path: Path, head: bytes, opts: InputOptions) -> Plan:
    """The reader for a stream, from its name (if it says anything) and its first bytes."""
    forced = opts.source_format
    if kind_by_name(path) is None and b"\x00" in head[:4096] and not head.startswith((b"PAR1", b"PK")):
        raise InputError("<stdin>" if is_stdin(path) else str(path), "binary data, not a judgment file (no text, "
                                                                       "Parquet or .eval archive)")
    kind = kind_by_name(path) or _kind_by_content(head)
    if forced in TABLE_SHAPES:
        return Plan("table", "csv" if kind in ("json", "eval") else kind, forced)
    if forced in ("promptfoo", "inspect", "jsonl"):
        return Plan(forced, kind)
    if kind == "eval":
        return Plan("inspect", kind)
    if kind in ("parquet", "csv", "tsv"):
        return Plan("table", kind)
    if kind == "json":
        return Plan("json?", kind)
    first: dict[str, object] = {}
    try:
        obj = orjson.loads(head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0])
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
        if how.reader == "jsonl":
            yield how, path, fh
            return
        fd, tmp = tempfile.mkstemp(prefix="betaconform-stream-", suffix=temp_suffix(how.kind))
        try:
            with os.fdopen(fd, "wb") as out:
                _copy(fh, out, path, text=how.kind not in ("parquet", "eval"))
            local = Path(tmp)
            yield (plan(local, opts) if how.reader == "json?" else how), local, None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _copy(src: BinaryIO, out: BinaryIO, path: Path, text: bool) -> None:
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
