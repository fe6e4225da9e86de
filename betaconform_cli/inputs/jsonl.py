"""Judgment JSON Lines: one labeled item per line (records.py has the shapes), streamed into counts.

Only the (judges, correct) histogram is kept unless items are asked for. The common line -- a list of
1/0/true/false/null -- takes a fast path: msgspec parses a whole block in C and hands back the judgments array as
raw bytes; each distinct array is validated once. Big regular files are split into byte ranges counted by forked
workers (Linux); line numbers in errors are those a single pass would give.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import zlib
from array import array
from collections import Counter
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ..errors import InputError
from ..formats import MAX_JSON_DEPTH, is_gzip_name, load_json
from . import records, values
from .build import NO_VERDICT
from .dataset import MAX_JUDGES, Dataset, Item, dataset_name
from .detect import Source
from .options import InputOptions, Keep
from .paths import MAX_LINE_BYTES, is_regular, is_stdin, open_binary
from .scans import FileRead, Scan, to_dataset

PARALLEL_MIN_BYTES = 32 << 20
BLOCK_BYTES = 4 << 20
PATTERN_CACHE_MAX = 1 << 16


def _fast_counts(obj: Any, field: str) -> tuple[int, int] | None:
    """(judges, correct) of the common line -- a list of 1/0/true/false/null -- at C speed, else None.

    list.count compares with ==, so 1, 1.0 and true count as correct; anything else in the list makes the
    counts not add up and the line takes the careful path, which names the bad element.
    """
    j = obj.get(field) if type(obj) is dict else None
    if type(j) is not list:
        return None
    ones = j.count(1)
    judges = ones + j.count(0)
    if judges == 0 or judges + j.count(None) != len(j):
        return None
    return judges, ones


def _scan(lines: Iterator[bytes], opts: InputOptions, keep: Keep, shape: str | None = None, line0: int = 0,
          id_lines: bool = False) -> Scan:
    """The careful path: count (judges, correct) over lines numbered line0 + 1, ...; stop at the first bad
    line unless skip_invalid. `shape` is the file's shape when earlier lines fixed it."""
    out = Scan({}, id_lines=array("q") if id_lines else None)
    loads = load_json
    keep_items = keep is not Keep.COUNTS
    fast = _fast_ok(shape, keep_items, opts)
    lineno = line0
    for raw in lines:
        lineno += 1
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as exc:
            if not raw.strip():
                continue
            if opts.handling.skip_invalid:
                out.skip("malformed JSON", lineno)
                continue
            out.error = (lineno, values.json_problem(raw, exc), None)
            break
        if fast and _count_fast(out, obj, opts, lineno):
            continue
        try:
            line_shape = _line_shape(obj, shape, opts)
            p = records.parse(obj, line_shape, opts, keep is Keep.JUDGMENTS, raw)
            ident = _keep_item(out, obj, p, raw, lineno, opts) if keep_items else None
        except records.NoVerdict as nv:  # skipped and counted, as a table skips an item nobody judged
            out.skip(NO_VERDICT, lineno)
            if nv.parsed is not None and nv.parsed.classes is not None:  # and, with verdicts, in score's population
                out.votes.no_verdict[nv.parsed.gold] = out.votes.no_verdict.get(nv.parsed.gold, 0) + 1
            continue
        except records.RecordError as err:
            if opts.handling.skip_invalid:
                out.skip(err.message if err.field is None else f"field '{err.field}': {err.message}", lineno)
                continue
            out.error = (lineno, err.message, err.field)
            break
        _add_parsed(out, obj, p, ident, lineno, opts, keep_items)
        if shape is None:
            out.first_line = lineno
        shape = line_shape
        fast = _fast_ok(shape, keep_items, opts)
    out.shape = shape
    out.lines = lineno - line0
    return out


def _fast_ok(shape: str | None, keep_items: bool, opts: InputOptions) -> bool:
    """Whether a line may take _fast_counts: list-shaped lines, counts only, a plain judgments field."""
    return shape == "list" and not keep_items and "." not in opts.record.judgments_field


def _count_fast(out: Scan, obj: Any, opts: InputOptions, lineno: int) -> bool:
    """Count the common list line at C speed; False when it needs the careful path."""
    key = _fast_counts(obj, opts.record.judgments_field)
    if key is None or key[0] > MAX_JUDGES:
        return False
    out.counts[key] = out.counts.get(key, 0) + 1
    id_name = opts.record.id_field
    out.add_id(obj.get(id_name) if "." not in id_name else records.get(obj, id_name, None), lineno)
    return True


def _keep_item(out: Scan, obj: Any, p: records.Parsed, raw: bytes, lineno: int, opts: InputOptions) -> str | None:
    """Keep a labeled line's item (its id, text and marks) and its cluster; its exact id."""
    ident = records.exact_id(records.get(obj, opts.record.id_field, None), raw, opts.record.id_field)
    if opts.record.cluster_field is not None:
        out.votes.clusters[lineno] = records.cluster_id(obj, opts.record.cluster_field)
    if opts.record.by is not None:
        from .slices import parse_by, record_key

        out.slice_keys[lineno] = record_key(obj, parse_by(opts.record.by))
    if not p.unlabeled:
        text = records.get(obj, opts.record.text_field, None)
        if text is not None and not isinstance(text, str):
            raise records.RecordError(opts.record.text_field, f"must be a string, got {values.json_kind(text)}")
        item = Item(p.judges, p.correct, ident, text, lineno, p.marks)
        out.items.extend([(item, p.names)] * p.weight)
    return ident


def _add_parsed(out: Scan, obj: Any, p: records.Parsed, ident: str | None, lineno: int, opts: InputOptions,
                keep_items: bool) -> None:
    """A parsed line's verdicts, id and (labeled) counts."""
    if p.classes is not None:
        vkey = out.votes.add((p.names, p.classes, p.gold), p.weight)
        if keep_items:
            out.votes.items.append((vkey, ident, lineno))
    out.add_id(records.get(obj, opts.record.id_field, None), lineno)
    if not p.unlabeled:  # an unlabeled item is kept in votes, not in the labeled histogram
        key = (p.judges, p.correct)
        out.counts[key] = out.counts.get(key, 0) + p.weight


def _line_shape(obj: Any, shape: str | None, opts: InputOptions) -> str:
    if not isinstance(obj, dict):
        raise records.RecordError(None, f"each line must be a JSON object, got {values.json_kind(obj)}")
    if shape is None:
        return records.detect_shape(obj, opts)
    if shape in ("list", "dict") and not records.has(obj, opts.record.judgments_field):
        try:
            other = records.detect_shape(obj, opts)
        except records.RecordError:
            other = None
        if other is not None and other != shape:
            raise records.RecordError(None, f"mixed shapes in one file: this line is '{other}', the file's first item is '{shape}'")
    return shape


def _byte_ranges(path: Path, shares: list[float]) -> list[tuple[int, int]]:
    """Split a file into consecutive ranges of about the given shares, each starting right after a newline."""
    size = path.stat().st_size
    total = sum(shares)
    starts = [0]
    cum = 0.0
    with open(path, "rb") as fh:
        for share in shares[:-1]:
            cum += share
            fh.seek(int(size * cum / total))
            fh.readline(MAX_LINE_BYTES)
            pos = fh.tell()
            if starts[-1] < pos < size:
                starts.append(pos)
    return list(zip(starts, starts[1:] + [size]))


def _blocks(fh: BinaryIO, remaining: int | None, path: Path, at_start: bool = True) -> Iterator[tuple[bytes, int]]:
    """Blocks of about BLOCK_BYTES that end at a line end, up to `remaining` bytes (None: to the end), each with its
    number of lines (counted once, here); a line longer than MAX_LINE_BYTES is an InputError. A UTF-8 byte order
    mark at the start of the file is dropped. The first block's first line comes alone: it fixes the file's shape on
    the careful path, and the rest of the block can take the fast path (not 4 MiB line by line in Python)."""
    lines_before = 0
    first = True
    while remaining is None or remaining > 0:
        buf = fh.read(BLOCK_BYTES if remaining is None else min(BLOCK_BYTES, remaining))
        if not buf:
            return
        if not buf.endswith(b"\n"):
            tail = fh.readline(MAX_LINE_BYTES + 1)  # complete the last line; ranges end at line starts
            if len(tail) > MAX_LINE_BYTES or len(buf) - buf.rfind(b"\n") - 1 + len(tail) > MAX_LINE_BYTES:
                line = lines_before + buf.count(b"\n") + 1
                raise InputError(str(path), f"line longer than {MAX_LINE_BYTES >> 20} MiB: not a JSON Lines file?", line=line)
            buf += tail
        if remaining is not None:
            remaining -= len(buf)
        if at_start and buf.startswith(b"\xef\xbb\xbf"):
            buf = buf[3:]
        n_lines = buf.count(b"\n") + (0 if buf.endswith(b"\n") else 1)
        head = buf.find(b"\n") + 1 if first else 0
        at_start = first = False
        lines_before += n_lines
        if 0 < head < len(buf):
            yield buf[:head], 1
            yield buf[head:], n_lines - 1
        else:
            yield buf, n_lines


class _FastDecoder:
    """msgspec decoders that keep only the raw bytes of the judgments field and the id: one that takes the id as a
    string (hashed as it is, no str() per line), and from the first block with a number or null id on, one that
    takes those too (hashed as text: scans.id_hash). Any other id (a list, a 100-digit number): the careful path."""

    def __init__(self, field_name: str, id_field: str):
        import msgspec
        def decoder(ident: Any) -> Any:
            item = msgspec.defstruct("JudgmentLine", [("judgments", msgspec.Raw), ("ident", ident, "")],
                                     rename={"judgments": field_name, "ident": id_field}, gc=False)  # no cycles: untracked
            return msgspec.json.Decoder(item)
        self.text, self.any = decoder(str), decoder(str | int | float | None)
        self.texts_only = True  # every id so far a string (or none)
        self.invalid = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)

    def decode_lines(self, buf: bytes) -> list[Any]:
        if self.texts_only:
            try:
                return self.text.decode_lines(buf)  # type: ignore[no-any-return]
            except self.invalid[1]:
                self.texts_only = False  # a number or a null id: the other decoder from now on (one retry)
        return self.any.decode_lines(buf)  # type: ignore[no-any-return]

    def id_hashes(self, lines: list[Any]) -> Any:
        """The hash of each line's id as text (scans.id_hash; hash("") without one or with a null one), as int64."""
        import numpy as np
        texts = map(_IDENT, lines) if self.texts_only else map(str, map(_IDENT, lines))
        out = np.fromiter(map(hash, texts), np.int64, len(lines))
        if not self.texts_only:  # a null id is no id, as on the careful path, not the id "None" (a real one)
            out[[i for i in np.flatnonzero(out == hash("None")).tolist() if lines[i].ident is None]] = hash("")
        return out


_JUDGMENTS = attrgetter("judgments")
_IDENT = attrgetter("ident")
def _shallow(buf: bytes) -> bool:
    """Whether no line of a block has more opening brackets than MAX_JSON_DEPTH, so none can nest deeper: the
    fields msgspec skips are then held to load_json's rule too (False sends the block the careful way, which
    applies it exactly). In C (numpy), about 8 ms for a 4 MiB block; a block of short lines only finds its ends."""
    import numpy as np

    a = np.frombuffer(buf, np.uint8)
    ends = np.flatnonzero(a == 0x0A)
    starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else np.zeros(1, np.int64)
    if len(a) - starts[-1] <= MAX_JSON_DEPTH and (len(ends) < 2 or int(np.diff(ends).max()) <= MAX_JSON_DEPTH):
        return True  # no line is longer than the limit
    opening = a == 0x5B
    opening |= a == 0x7B
    return int(np.add.reduceat(opening, starts, dtype=np.int32).max()) <= MAX_JSON_DEPTH


def _fast_block(buf: bytes, decoder: _FastDecoder, cache: dict[bytes, tuple[int, int] | None], field_name: str,
                ids: array[int] | None = None, n_lines: int | None = None) -> dict[tuple[int, int], int] | None:
    """Counts of a block of list-shaped lines, or None when anything needs the careful path. msgspec parses every
    line in C (validating the JSON, skipping fields we do not use) and hands back the judgments array as raw bytes;
    a Counter tallies the distinct arrays (in C), each validated once by the careful code: no Python code runs per
    line. `ids` receives the hash of each line's id (_FastDecoder.id_hashes), one per line: a block with blank
    lines (which msgspec does not hand back) takes the careful path."""
    if not _shallow(buf):  # first: msgspec recurses into the fields it skips (RecursionError past ~1000 levels)
        return None
    try:
        lines = decoder.decode_lines(buf)
        if not buf.isascii():  # the common file is ASCII: checked at memory speed
            buf.decode("utf-8")  # msgspec does not check the text of fields it skips; orjson does
    except decoder.invalid:
        return None
    if n_lines is None:
        n_lines = buf.count(b"\n") + (0 if buf.endswith(b"\n") else 1)
    if ids is not None and len(lines) != n_lines:
        return None
    tally = Counter(map(bytes, map(_JUDGMENTS, lines)))
    counts: dict[tuple[int, int], int] = {}
    for raw, n in tally.items():
        key: tuple[int, int] | None
        if raw in cache:
            key = cache[raw]
        else:
            try:
                value = load_json(raw)
                key = records.count_marks(value, field_name) if type(value) is list else None
            except (orjson.JSONDecodeError, records.RecordError):
                key = None
            if key is not None and not 0 < key[0] <= MAX_JUDGES:
                key = None
            if len(cache) < PATTERN_CACHE_MAX:
                cache[raw] = key
        if key is None:
            return None
        counts[key] = counts.get(key, 0) + n
    if ids is not None:
        ids.frombytes(decoder.id_hashes(lines).tobytes())
    return counts


def _scan_blocks(blocks: Iterator[tuple[bytes, int]], opts: InputOptions, keep: Keep, id_lines: bool = False) -> Scan:
    """Scan a file (or a byte range of it) block by block: the careful path until the shape is known to be
    a list of judgments, then the fast path for each block that it accepts (the careful path otherwise,
    which also finds the exact line and field of an error)."""
    total = Scan({}, id_lines=array("q") if id_lines else None)
    shape: str | None = None
    line0 = 0
    decoder: _FastDecoder | None = None
    cache: dict[bytes, tuple[int, int] | None] = {}
    fields = opts.record  # one field for both (--id-field judgments) is not two fields of the fast path's struct
    fast_ok = keep is Keep.COUNTS and "." not in fields.judgments_field + fields.id_field and fields.id_field != fields.judgments_field
    for buf, n_lines in blocks:
        if shape == "list" and fast_ok:
            decoder = decoder or _FastDecoder(opts.record.judgments_field, opts.record.id_field)
            ids = array("q")
            got = _fast_block(buf, decoder, cache, opts.record.judgments_field, ids, n_lines)
            if got is not None:
                for key, n in got.items():
                    total.counts[key] = total.counts.get(key, 0) + n
                total.id_hashes.extend(ids)
                if total.id_lines is not None:
                    total.id_lines.extend(range(line0 + 1, line0 + 1 + len(ids)))
                line0 += n_lines
                continue
        lines = buf.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        sc = _scan(iter(lines), opts, keep, shape, line0, id_lines)
        for key, n in sc.counts.items():
            total.counts[key] = total.counts.get(key, 0) + n
        total.items.extend(sc.items)
        for vkey, n in sc.votes.patterns.items():
            total.votes.patterns[vkey] = total.votes.patterns.get(vkey, 0) + n
        total.votes.items.extend(sc.votes.items)
        total.votes.clusters.update(sc.votes.clusters)
        for gold, n in sc.votes.no_verdict.items():
            total.votes.no_verdict[gold] = total.votes.no_verdict.get(gold, 0) + n
        total.slice_keys.update(sc.slice_keys)
        total.id_hashes.extend(sc.id_hashes)
        if total.id_lines is not None and sc.id_lines is not None:
            total.id_lines.extend(sc.id_lines)
        for reason, (n, first) in sc.skips.items():
            entry = total.skips.setdefault(reason, [0, first])
            entry[0] += n
        if shape is None and sc.shape is not None:
            total.first_line = sc.first_line
        shape = sc.shape or shape
        if sc.error is not None:
            total.error = sc.error
            break
        line0 += n_lines
    total.shape = shape
    total.lines = line0
    return total


def _scan_range(job: tuple[str, int, int, InputOptions]) -> Scan:
    path, start, end, opts = job
    with open(path, "rb") as fh:
        fh.seek(start)
        try:
            return _scan_blocks(_blocks(fh, end - start, Path(path), at_start=start == 0), opts, Keep.COUNTS)
        except InputError as exc:  # a too long line: reported as data, with the range's own line number
            return Scan({}, error=(exc.line or 0, exc.reason, exc.field))


def _workers(path: Path, keep: Keep, workers: int | None) -> int:
    """Worker processes for one file: several only for big plain regular files on Linux (fork), else one."""
    if workers is not None:
        return max(1, workers)
    if keep is not Keep.COUNTS or is_gzip_name(path) or sys.platform != "linux" or not is_regular(path):
        return 1
    try:
        big = path.stat().st_size >= PARALLEL_MIN_BYTES
    except OSError:
        return 1
    return min(os.cpu_count() or 1, 4) if big else 1


@contextlib.contextmanager
def _sigint_held() -> Iterator[list[int]]:
    """Ctrl-C held while workers are forked (they must not die half-started): a SIGINT meanwhile is noted, not
    lost, and the caller raises KeyboardInterrupt once the workers are up; the previous handler is restored."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    before = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, before)


def _quiet_worker() -> None:
    """A worker ignores Ctrl-C (the terminal sends it to the whole group; the parent ends its workers) and reports
    errors as data; what it could print is only a broken pipe to a parent that has gone (interrupted), which must
    not reach the user's terminal after "interrupted"."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the worker's whole life


class PendingRead:
    """A read that has started: for a big file, forked workers are already counting the later byte ranges.

    Construction forks the workers and returns at once, so the caller can do other work first (the CLI imports
    scipy meanwhile); `result()` counts the first range in this process, collects the workers' counts and raises
    the first error in file order. `parent_share` is the first range's size relative to each worker's: below 1
    when the caller has other work to do before `result()`.
    """

    def __init__(self, path: str | Path, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS,
                 workers: int | None = None, parent_share: float = 1.0, name: str | None = None, where: str | None = None,
                 stream: BinaryIO | None = None):
        self.path = Path(path)
        self.stream = stream  # an already open stream (stdin, a FIFO): read from it, never reopened
        if opts.record.by is not None and keep is Keep.COUNTS:
            keep = Keep.ITEMS  # slices need each item's key (inputs/slices.py)
        self.opts = opts
        self.keep = keep
        self.name = name
        self.where = where
        self._pool: Any = None
        self._async: Any = None
        self._first: tuple[str, int, int, InputOptions] | None = None
        if opts.labels is not None:  # read once, here: its errors name the labels file, and forked workers share it
            from .labels import load

            load(opts)
        n_workers = 1 if stream is not None else _workers(self.path, keep, workers)
        if n_workers > 1 and keep is Keep.COUNTS and is_regular(self.path) and not is_gzip_name(self.path):
            try:
                ranges = _byte_ranges(self.path, [parent_share] + [1.0] * (n_workers - 1))
            except OSError as exc:
                raise InputError(str(self.path), f"cannot open: {exc.strerror or exc}") from None
            if len(ranges) > 1:
                from .forked import Forked

                jobs = [(str(self.path), a, b, opts) for a, b in ranges]
                self._first = jobs[0]
                # workers ignore Ctrl-C (the terminal sends it to them too): this process ends them (_scans)
                with _sigint_held() as held:
                    self._pool = Forked(_scan_range, jobs[1:], _quiet_worker)
                if held:  # Ctrl-C came while the workers started
                    self._pool.terminate()
                    raise KeyboardInterrupt
                self._async = self._pool

    def _scans(self) -> list[Scan]:
        if self._async is not None and self._first is not None:
            try:
                first = _scan_range(self._first)
                scans = [first, *self._async.get()]
            except BaseException:  # Ctrl-C included: stop the workers now, not after their ranges
                self._pool.terminate()
                raise
            return scans
        if self.stream is not None:
            return [_scan_blocks(_blocks(self.stream, None, Path(self.where or self.path)), self.opts, self.keep, id_lines=True)]
        with open_binary(self.path) as fh:
            return [_scan_blocks(_blocks(fh, None, self.path), self.opts, self.keep)]

    @property
    def works_meanwhile(self) -> bool:
        """Whether forked workers are counting beside the caller until `result()`."""
        return self._async is not None

    def result(self) -> Dataset:
        src = self.where or ("<stdin>" if is_stdin(self.path) else str(self.path))
        try:
            scans = self._scans()
        except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a corrupt .gz (not an OSError)
            raise InputError(src, f"read failed: {exc}") from None
        except InputError as exc:
            if exc.path != src:
                raise InputError(src, exc.reason, exc.line, exc.field) from None
            raise
        name = self.name or ("stdin" if is_stdin(self.path) else dataset_name(self.path))
        return to_dataset(scans, FileRead(src, self.path, name, self.stream is not None, self.opts, self.keep))


def read_jsonl(path: str | Path, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS, workers: int | None = None) -> Dataset:
    """Stream one judgment file into a `Dataset`. Raises InputError naming file, line and field."""
    return PendingRead(path, opts, keep, workers).result()


def read_source(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The jsonl format's reader (formats.py): one JSON Lines file, or a stream read as it comes."""
    return [PendingRead(src.path, opts, keep, name=src.name, where=src.where, stream=src.stream).result()]
