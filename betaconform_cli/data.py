"""Read and validate judgment JSON Lines into correct counts.

One file is one dataset. Each non-blank line is one item, in one of four shapes (the first valid line of a
file fixes the shape; mixing shapes is an error):

- ``{"judgments": [1, 0, true, null, ...]}``  per-judge correctness (null: that judge gave no verdict);
- ``{"judgments": {"judge-a": 1, ...}}``      the same keyed by judge name;
- ``{"correct": 7, "judges": 11}``             counts only;
- ``{"verdicts": ["A", "B", ...], "label": "A"}`` raw outputs and the gold label (equality, or
  ``|verdict - label| <= tolerance`` for numeric scores).

The reader streams: only the (judges, correct) histogram is kept, plus the items themselves when asked
(``keep_items=True``, needed by `sample` and `transfer`).
"""

from __future__ import annotations

import glob
import gzip
import os
import sys
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import orjson

from .errors import InputError


@dataclass(frozen=True)
class InputSpec:
    """Field names and scoring options for judgment files."""

    judgments_field: str = "judgments"
    correct_field: str = "correct"
    judges_field: str = "judges"
    verdicts_field: str = "verdicts"
    label_field: str = "label"
    id_field: str = "id"
    text_field: str = "text"
    tolerance: float | None = None
    skip_invalid: bool = False


@dataclass(frozen=True)
class Item:
    """One labeled item: how many judges gave a verdict and how many of them were correct."""

    judges: int
    correct: int
    id: str | None = None
    text: str | None = None
    line: int = 0


@dataclass(frozen=True)
class CountTable:
    """counts[K, S]: number of items with K judges of which S were correct (a sufficient statistic)."""

    counts: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        c = np.asarray(self.counts, dtype=np.int64)
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] < 2:
            raise ValueError("counts must be a square (K+1, K+1) array with K >= 1")
        if (c < 0).any() or np.triu(c, 1).any():
            raise ValueError("counts must be non-negative with S <= K")
        c.setflags(write=False)
        object.__setattr__(self, "counts", c)

    @classmethod
    def from_pairs(cls, judges: np.ndarray | list[int], correct: np.ndarray | list[int]) -> CountTable:
        judges = np.asarray(judges, dtype=np.int64)
        correct = np.asarray(correct, dtype=np.int64)
        top = max(int(judges.max(initial=1)), 1)
        counts = np.zeros((top + 1, top + 1), dtype=np.int64)
        np.add.at(counts, (judges, correct), 1)
        return cls(counts)

    @classmethod
    def from_histogram(cls, histogram: list[int] | np.ndarray, judges: int | None = None) -> CountTable:
        """A table in which every item has `judges` = len(histogram) - 1 judges."""
        h = np.asarray(histogram, dtype=np.int64)
        big_k = len(h) - 1 if judges is None else judges
        counts = np.zeros((big_k + 1, big_k + 1), dtype=np.int64)
        counts[big_k, : len(h)] = h
        return cls(counts)

    @property
    def items(self) -> int:
        return int(self.counts.sum())

    @property
    def max_judges(self) -> int:
        rows = np.nonzero(self.counts.sum(axis=1))[0]
        return int(rows.max()) if len(rows) else 0

    @property
    def min_judges(self) -> int:
        rows = np.nonzero(self.counts.sum(axis=1))[0]
        return int(rows.min()) if len(rows) else 0

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, S, n) for each non-empty cell."""
        big_k, s = np.nonzero(self.counts)
        return big_k, s, self.counts[big_k, s]

    def histogram(self) -> list[int]:
        """Counts of S at the largest K (all items, when every item has the same number of judges)."""
        return [int(v) for v in self.counts[self.max_judges, : self.max_judges + 1]]

    def histogram_by_judges(self) -> dict[int, list[int]]:
        return {int(k): [int(v) for v in self.counts[k, : k + 1]] for k in np.nonzero(self.counts.sum(axis=1))[0]}

    def single_judge_accuracy(self) -> float:
        big_k, s, n = self.cells()
        return float((s * n).sum() / (big_k * n).sum())

    def trimmed(self) -> CountTable:
        top = max(self.max_judges, 1)
        return CountTable(self.counts[: top + 1, : top + 1])


@dataclass(frozen=True)
class Dataset:
    """A validated judgment file."""

    name: str
    source: str
    table: CountTable
    shape: str
    skipped: int = 0
    items: tuple[Item, ...] | None = None

    @property
    def n_items(self) -> int:
        return self.table.items

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "items": self.n_items, "skipped_lines": self.skipped}


def dataset_name(path: str | Path) -> str:
    """File name without .jsonl / .jsonl.gz / .json."""
    name = Path(path).name
    for suffix in (".jsonl.gz", ".json.gz", ".jsonl", ".json", ".gz"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def expand_paths(arguments: list[str]) -> list[Path]:
    """Files as given; directories: every *.jsonl / *.jsonl.gz inside (sorted); globs expanded (sorted)."""
    out: list[Path] = []
    for arg in arguments:
        p = Path(arg)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.is_file() and q.name.endswith((".jsonl", ".jsonl.gz")))
            if not found:
                raise InputError(arg, "directory holds no *.jsonl or *.jsonl.gz file")
            out.extend(found)
        elif any(ch in arg for ch in "*?[") and not p.exists():  # a real file named "a[1].jsonl" is taken as is
            found = sorted(Path(x) for x in glob.glob(arg) if Path(x).is_file())
            if not found:
                raise InputError(arg, "pattern matches no file")
            out.extend(found)
        else:
            if not p.exists():
                raise InputError(arg, "no such file or directory")
            out.append(p)
    seen: set[Path] = set()
    unique = []
    for p in out:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            unique.append(p)
    return unique


def _open(path: Path) -> BinaryIO:
    try:
        if path.name.endswith(".gz"):
            return gzip.open(path, "rb")  # type: ignore[return-value]
        return open(path, "rb")
    except OSError as exc:
        raise InputError(str(path), f"cannot open: {exc.strerror or exc}") from None


def _as_correct(value: Any) -> int | None | str:
    """1/0/true/false -> 1/0, null -> None; anything else -> a description of the bad value."""
    if value is True or value == 1 and type(value) in (int, float):
        return 1
    if value is False or value == 0 and type(value) in (int, float):
        return 0
    if value is None:
        return None
    return f"must be 1, 0, true, false or null, got {orjson.dumps(value).decode()[:40]}"


def _is_int(v: Any) -> bool:
    return type(v) is int or (type(v) is float and v.is_integer())


class _LineError(Exception):
    def __init__(self, field: str | None, message: str):
        self.field = field
        self.message = message


def _detect_shape(obj: dict[str, Any], spec: InputSpec) -> str:
    j = obj.get(spec.judgments_field)
    if isinstance(j, list):
        return "list"
    if isinstance(j, dict):
        return "dict"
    if spec.judgments_field in obj:
        raise _LineError(spec.judgments_field, f"must be a list or an object, got {type(j).__name__}")
    if spec.correct_field in obj or spec.judges_field in obj:
        return "counts"
    if spec.verdicts_field in obj:
        return "verdicts"
    raise _LineError(
        None,
        f"no judgments: expected '{spec.judgments_field}', '{spec.correct_field}'+'{spec.judges_field}' "
        f"or '{spec.verdicts_field}'+'{spec.label_field}' (rename with --judgments-field etc.)",
    )


def _count_values(values: list[Any] | Any, field: str, keys: list[str] | None = None) -> tuple[int, int]:
    judges = 0
    correct = 0
    for i, v in enumerate(values):
        if v is True or v is False or v is None or type(v) is int:
            # fast path: the common cases
            if v is None:
                continue
            if v is True or v == 1:
                judges += 1
                correct += 1
                continue
            if v is False or v == 0:
                judges += 1
                continue
        r = _as_correct(v)
        if isinstance(r, str):
            where = f"{field}[{keys[i]!r}]" if keys is not None else f"{field}[{i}]"
            raise _LineError(where, r)
        if r is not None:
            judges += 1
            correct += r
    return judges, correct


MAX_JUDGES = 1000  # per item: the (judges, correct) table is (K+1)^2 cells


def _parse_item(obj: Any, shape: str, spec: InputSpec) -> tuple[int, int]:
    """(judges, correct) of one decoded line, or _LineError (also for more than MAX_JUDGES judges)."""
    key = _parse_item_unchecked(obj, shape, spec)
    if key[0] > MAX_JUDGES:
        where = {"counts": spec.judges_field, "verdicts": spec.verdicts_field}.get(shape, spec.judgments_field)
        raise _LineError(where, f"{key[0]} judges on one item; at most {MAX_JUDGES} are supported")
    return key


def _parse_item_unchecked(obj: Any, shape: str, spec: InputSpec) -> tuple[int, int]:
    if not isinstance(obj, dict):
        raise _LineError(None, f"each line must be a JSON object, got {type(obj).__name__}")
    if shape == "list" or shape == "dict":
        j = obj.get(spec.judgments_field)
        if j is None and spec.judgments_field not in obj:
            raise _LineError(spec.judgments_field, "missing")
        if shape == "list":
            if not isinstance(j, list):
                raise _LineError(spec.judgments_field, f"must be a list like the file's first item, got {type(j).__name__}")
            judges, correct = _count_values(j, spec.judgments_field)
        else:
            if not isinstance(j, dict):
                raise _LineError(spec.judgments_field, f"must be an object like the file's first item, got {type(j).__name__}")
            judge_keys = list(j)
            judges, correct = _count_values(list(j.values()), spec.judgments_field, judge_keys)
        if judges == 0:
            raise _LineError(spec.judgments_field, "item has no judges (empty or all null)")
        return judges, correct
    if shape == "counts":
        if spec.correct_field not in obj:
            raise _LineError(spec.correct_field, "missing")
        if spec.judges_field not in obj:
            raise _LineError(spec.judges_field, "missing")
        c, n = obj[spec.correct_field], obj[spec.judges_field]
        if not _is_int(c):
            raise _LineError(spec.correct_field, f"must be an integer, got {orjson.dumps(c).decode()[:40]}")
        if not _is_int(n):
            raise _LineError(spec.judges_field, f"must be an integer, got {orjson.dumps(n).decode()[:40]}")
        c, n = int(c), int(n)
        if n < 1:
            raise _LineError(spec.judges_field, f"must be at least 1, got {n}")
        if c < 0:
            raise _LineError(spec.correct_field, f"must not be negative, got {c}")
        if c > n:
            raise _LineError(spec.correct_field, f"correct ({c}) exceeds judges ({n})")
        return n, c
    # verdicts
    if spec.verdicts_field not in obj:
        raise _LineError(spec.verdicts_field, "missing")
    if spec.label_field not in obj or obj[spec.label_field] is None:
        raise _LineError(spec.label_field, "missing (the gold label is needed to score verdicts)")
    verdicts = obj[spec.verdicts_field]
    label = obj[spec.label_field]
    if isinstance(verdicts, dict):
        keys: list[str] | None = list(verdicts)
        verdicts = list(verdicts.values())
    elif isinstance(verdicts, list):
        keys = None
    else:
        raise _LineError(spec.verdicts_field, f"must be a list or an object, got {type(verdicts).__name__}")
    tol = spec.tolerance
    if tol is not None and (isinstance(label, bool) or not isinstance(label, (int, float))):
        raise _LineError(spec.label_field, f"must be a number with --tolerance, got {orjson.dumps(label).decode()[:40]}")
    judges = correct = 0
    for i, v in enumerate(verdicts):
        if v is None:
            continue
        if isinstance(v, (list, dict)):
            where = f"{spec.verdicts_field}[{keys[i]!r}]" if keys else f"{spec.verdicts_field}[{i}]"
            raise _LineError(where, "must be a scalar verdict")
        judges += 1
        if tol is None:
            correct += int(v == label and type(v) is type(label) or (_num(v) and _num(label) and v == label))
        else:
            if not _num(v):
                where = f"{spec.verdicts_field}[{keys[i]!r}]" if keys else f"{spec.verdicts_field}[{i}]"
                raise _LineError(where, f"must be a number with --tolerance, got {orjson.dumps(v).decode()[:40]}")
            correct += int(abs(v - label) <= tol)
    if judges == 0:
        raise _LineError(spec.verdicts_field, "item has no judges (empty or all null)")
    return judges, correct


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line) for each non-blank line; read errors become InputError."""
    fh = _open(path)
    lineno = 0
    try:
        with fh:
            for lineno, raw in enumerate(fh, start=1):
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]  # a UTF-8 byte order mark, as in _blocks
                if raw.strip():
                    yield lineno, raw
    except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a corrupt .gz (not an OSError)
        raise InputError(str(path), f"read failed after line {lineno}: {exc}") from None


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


@dataclass
class _Scan:
    """What one pass over some lines found; errors are data here (local line numbers), raised by the caller."""

    counts: dict[tuple[int, int], int]
    items: list[Item]
    skipped: int = 0
    shape: str | None = None
    first_line: int = 0
    lines: int = 0
    error: tuple[int, str, str | None] | None = None


def _scan(lines: Iterator[bytes], spec: InputSpec, keep_items: bool, shape: str | None = None, line0: int = 0) -> _Scan:
    """The careful path: count (judges, correct) over lines numbered line0 + 1, ...; stop at the first bad
    line unless skip_invalid. `shape` is the file's shape when earlier lines fixed it."""
    counts: dict[tuple[int, int], int] = {}
    out = _Scan(counts, [])
    items = out.items
    loads = orjson.loads
    get = counts.get
    field = spec.judgments_field
    fast = shape == "list" and not keep_items  # True once the shape is known to be a list of judgments
    lineno = line0
    for raw in lines:
        lineno += 1
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as exc:
            if not raw.strip():
                continue
            if spec.skip_invalid:
                out.skipped += 1
                continue
            out.error = (lineno, f"malformed JSON ({exc})", None)
            break
        if fast:
            key = _fast_counts(obj, field)
            if key is not None and key[0] <= MAX_JUDGES:
                counts[key] = get(key, 0) + 1
                continue
        try:
            if shape is None:
                if not isinstance(obj, dict):
                    raise _LineError(None, f"each line must be a JSON object, got {type(obj).__name__}")
                line_shape = _detect_shape(obj, spec)
            else:
                line_shape = shape
                if type(obj) is dict and field not in obj and shape in ("list", "dict"):
                    try:
                        other = _detect_shape(obj, spec)
                    except _LineError:
                        other = None
                    if other is not None and other != shape:
                        raise _LineError(None, f"mixed shapes in one file: this line is '{other}', the file's first item is '{shape}'")
            key = _parse_item(obj, line_shape, spec)
            if keep_items:
                ident = obj.get(spec.id_field)
                text = obj.get(spec.text_field)
                if text is not None and not isinstance(text, str):
                    raise _LineError(spec.text_field, f"must be a string, got {type(text).__name__}")
                items.append(Item(key[0], key[1], None if ident is None else str(ident), text, lineno))
        except _LineError as err:
            if spec.skip_invalid:
                out.skipped += 1
                continue
            out.error = (lineno, err.message, err.field)
            break
        if shape is None:
            out.first_line = lineno
        shape = line_shape
        fast = shape == "list" and not keep_items
        counts[key] = get(key, 0) + 1
    out.shape = shape
    out.lines = lineno - line0
    return out


PARALLEL_MIN_BYTES = 32 << 20


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
            fh.readline()
            pos = fh.tell()
            if starts[-1] < pos < size:
                starts.append(pos)
    return list(zip(starts, starts[1:] + [size]))


BLOCK_BYTES = 4 << 20
PATTERN_CACHE_MAX = 1 << 16


def _blocks(fh: BinaryIO, remaining: int | None) -> Iterator[bytes]:
    """Blocks of about BLOCK_BYTES that end at a line end, up to `remaining` bytes (None: to the end).

    A UTF-8 byte order mark at the very start of the file (as some Windows editors write) is dropped.
    """
    at_start = fh.tell() == 0
    while remaining is None or remaining > 0:
        buf = fh.read(BLOCK_BYTES if remaining is None else min(BLOCK_BYTES, remaining))
        if not buf:
            return
        if not buf.endswith(b"\n"):
            buf += fh.readline()  # complete the last line; ranges end at line starts, so this never overshoots
        if remaining is not None:
            remaining -= len(buf)
        if at_start and buf.startswith(b"\xef\xbb\xbf"):
            buf = buf[3:]
        at_start = False
        yield buf


def _fast_decoder(field: str) -> Any:
    """A msgspec decoder that keeps only the raw bytes of the judgments field (None without msgspec)."""
    try:
        import msgspec
    except ImportError:  # pragma: no cover - msgspec is a dependency; the careful path works without it
        return None
    item = msgspec.defstruct("JudgmentLine", [("judgments", msgspec.Raw)], rename={"judgments": field})
    return msgspec.json.Decoder(item)


def _fast_block(buf: bytes, decoder: Any, cache: dict[bytes, tuple[int, int] | None], field: str) -> dict[tuple[int, int], int] | None:
    """Counts of a block of list-shaped lines, or None when anything needs the careful path.

    msgspec parses every line of the block in C (validating the JSON, skipping fields we do not use) and
    hands back the judgments array as raw bytes; a Counter tallies the distinct arrays (in C), and each
    distinct array is validated once by the careful code. No Python code runs per line.
    """
    import msgspec

    try:
        lines = decoder.decode_lines(buf)
        buf.decode("utf-8")  # msgspec does not check the text of fields it skips; orjson does
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None
    tally = Counter(map(bytes, map(_JUDGMENTS, lines)))
    counts: dict[tuple[int, int], int] = {}
    for raw, n in tally.items():
        key: tuple[int, int] | None
        if raw in cache:
            key = cache[raw]
        else:
            try:
                value = orjson.loads(raw)
                key = _count_values(value, field) if type(value) is list else None
            except (orjson.JSONDecodeError, _LineError):
                key = None
            if key is not None and not 0 < key[0] <= MAX_JUDGES:
                key = None
            if len(cache) < PATTERN_CACHE_MAX:
                cache[raw] = key
        if key is None:
            return None
        counts[key] = counts.get(key, 0) + n
    return counts


_JUDGMENTS = attrgetter("judgments")


def _scan_blocks(blocks: Iterator[bytes], spec: InputSpec, keep_items: bool) -> _Scan:
    """Scan a file (or a byte range of it) block by block: the careful path until the shape is known to be
    a list of judgments, then the fast path for each block that it accepts (the careful path otherwise,
    which also finds the exact line and field of an error)."""
    total = _Scan({}, [])
    shape: str | None = None
    line0 = 0
    decoder: Any = None
    cache: dict[bytes, tuple[int, int] | None] = {}
    for buf in blocks:
        n_lines = buf.count(b"\n") + (0 if buf.endswith(b"\n") else 1)
        if shape == "list" and not keep_items:
            if decoder is None:
                decoder = _fast_decoder(spec.judgments_field) or False
            got = _fast_block(buf, decoder, cache, spec.judgments_field) if decoder else None
            if got is not None:
                for key, n in got.items():
                    total.counts[key] = total.counts.get(key, 0) + n
                line0 += n_lines
                continue
        lines = buf.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        sc = _scan(iter(lines), spec, keep_items, shape, line0)
        for key, n in sc.counts.items():
            total.counts[key] = total.counts.get(key, 0) + n
        total.items.extend(sc.items)
        total.skipped += sc.skipped
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


def _scan_range(job: tuple[str, int, int, InputSpec]) -> _Scan:
    path, start, end, spec = job
    with open(path, "rb") as fh:
        fh.seek(start)
        return _scan_blocks(_blocks(fh, end - start), spec, False)


def _workers(path: Path, keep_items: bool, workers: int | None) -> int:
    """Worker processes for one file: several only for big plain files on Linux (fork), else one."""
    if workers is not None:
        return max(1, workers)
    if keep_items or path.name.endswith(".gz") or sys.platform != "linux":
        return 1
    try:
        big = path.stat().st_size >= PARALLEL_MIN_BYTES
    except OSError:
        return 1
    return min(os.cpu_count() or 1, 4) if big else 1


class PendingRead:
    """A read that has started: for a big file, forked workers are already counting the later byte ranges.

    `begin_read` forks the workers and returns at once, so the caller can do other work first (the CLI
    imports scipy meanwhile); `result()` counts the first range in this process, collects the workers'
    counts and raises the first error in file order. `parent_share` is the first range's size relative to
    each worker's: below 1 when the caller has other work to do before `result()`.
    """

    def __init__(
        self,
        path: str | Path,
        spec: InputSpec = InputSpec(),
        keep_items: bool = False,
        workers: int | None = None,
        parent_share: float = 1.0,
    ):
        self.path = Path(path)
        self.spec = spec
        self.keep_items = keep_items
        self._pool: Any = None
        self._async: Any = None
        self._first: tuple[str, int, int, InputSpec] | None = None
        n_workers = _workers(self.path, keep_items, workers)
        if n_workers > 1 and not keep_items and not self.path.name.endswith(".gz"):
            try:
                ranges = _byte_ranges(self.path, [parent_share] + [1.0] * (n_workers - 1))
            except OSError as exc:
                raise InputError(str(self.path), f"cannot open: {exc.strerror or exc}") from None
            if len(ranges) > 1:
                import multiprocessing

                jobs = [(str(self.path), a, b, spec) for a, b in ranges]
                self._first = jobs[0]
                self._pool = multiprocessing.get_context("fork").Pool(len(jobs) - 1)
                self._async = self._pool.map_async(_scan_range, jobs[1:])

    def _scans(self) -> list[_Scan]:
        if self._async is not None and self._first is not None:
            try:
                first = _scan_range(self._first)
                return [first, *self._async.get()]
            finally:
                self._pool.close()
                self._pool.join()
        with _open(self.path) as fh:
            return [_scan_blocks(_blocks(fh, None), self.spec, self.keep_items)]

    def result(self) -> Dataset:
        src = str(self.path)
        try:
            scans = self._scans()
        except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a corrupt .gz (not an OSError)
            raise InputError(src, f"read failed: {exc}") from None
        counts: dict[tuple[int, int], int] = {}
        shape: str | None = None
        skipped = offset = 0
        for sc in scans:
            if sc.error is not None:
                line, message, field_name = sc.error
                raise InputError(src, message, line=offset + line, field=field_name)
            if sc.shape is not None:
                if shape is not None and sc.shape != shape:
                    raise InputError(
                        src,
                        f"mixed shapes in one file: this line is '{sc.shape}', the file's first item is '{shape}'",
                        line=offset + sc.first_line,
                    )
                shape = sc.shape
            for key, n in sc.counts.items():
                counts[key] = counts.get(key, 0) + n
            skipped += sc.skipped
            offset += sc.lines
        if not counts:
            if skipped:
                raise InputError(src, f"no valid items ({skipped} invalid lines skipped)")
            raise InputError(src, "empty file: no items")
        top = max(k for k, _ in counts)
        arr = np.zeros((top + 1, top + 1), dtype=np.int64)
        for (k, s), n in counts.items():
            arr[k, s] = n
        return Dataset(
            name=dataset_name(self.path),
            source=src,
            table=CountTable(arr),
            shape=shape or "list",
            skipped=skipped,
            items=tuple(scans[0].items) if self.keep_items else None,
        )


def begin_read(
    path: str | Path, spec: InputSpec = InputSpec(), keep_items: bool = False, workers: int | None = None, parent_share: float = 1.0
) -> PendingRead:
    return PendingRead(path, spec, keep_items, workers, parent_share)


def read_dataset(
    path: str | Path, spec: InputSpec = InputSpec(), keep_items: bool = False, workers: int | None = None
) -> Dataset:
    """Stream one judgment file into a `Dataset`. Raises InputError naming file, line and field.

    Memory stays flat in the number of items unless keep_items: only the (judges, correct) counts are kept.
    Big plain files are split into byte ranges counted by `workers` processes (default: one per core, for
    files of 32 MiB or more); line numbers in errors are the same as a single pass would give.
    """
    return PendingRead(path, spec, keep_items, workers).result()


def read_datasets(arguments: list[str], spec: InputSpec = InputSpec(), keep_items: bool = False) -> list[Dataset]:
    return [read_dataset(p, spec, keep_items) for p in expand_paths(arguments)]
