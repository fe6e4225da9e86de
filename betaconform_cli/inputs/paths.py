"""Where inputs come from: arguments expanded into files, `-` for standard input, and bounded line reading.

Files are read as streams, never by seeking, unless they are regular files: pipes, FIFOs, /dev/stdin and process
substitutions (`<(cat f)`) work like files. A line is capped at MAX_LINE_BYTES, so that a file without line ends
(`/dev/zero`) stops with an error instead of filling the memory.
"""

from __future__ import annotations

import errno
import glob
import gzip
import io
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import InputError, fault_text
from ..formats import MAX_LINE_BYTES as MAX_LINE_BYTES  # the readers' one limit (formats.py)
from ..formats import OUTPUT_SCHEMAS, data_suffixes, is_data_name, is_gzip_name, kind_by_name, output_table_of
from ..formats import beside_data as beside_data  # a tool's summary beside its data (formats.InputFormat.beside)

STDIN = "-"


def is_stdin(path: str | Path) -> bool:
    return str(path) == STDIN


def as_path(arg: str | Path) -> Path:
    """An argument as a path. Only the argument `-` itself is standard input; any other spelling of a file named
    `-` (`./-`, `data/../-`) is that file. pathlib writes Path('./-') as '-', which would read as standard input,
    so such a file is kept by its absolute path."""
    if isinstance(arg, Path):
        return arg
    p = Path(arg)
    return Path(os.path.abspath(arg)) if arg != STDIN and is_stdin(p) else p


def is_hive_folder(path: Path) -> bool:
    """A folder of `key=value` subfolders (a hive-partitioned table): one table, not one dataset per file."""
    try:
        return path.is_dir() and any(q.is_dir() and "=" in q.name for q in path.iterdir())
    except OSError:
        return False


# the parts one export is split into: `bt sync pull experiment:<id>` (Braintrust's CLI, src/sync.rs) writes
# part-000001.jsonl, part-000002.jsonl, ... (a new one every 128 MiB) into the experiment's folder
_PART = re.compile(r"part-\d+\.jsonl(\.gz)?", re.IGNORECASE)


def parts_folder(path: Path) -> list[Path] | None:
    """The parts of one export (`part-<n>.jsonl`, in order) when they are the folder's only data files: read as one
    dataset, the folder's; else None."""
    try:
        if not path.is_dir():
            return None
        found = sorted(q for q in path.iterdir() if q.is_file() and is_data_name(q))
    except OSError:
        return None
    return found if found and all(_PART.fullmatch(q.name) for q in found) else None


# lm-eval's per-sample logs, samples_<task>_<date>.jsonl, one folder per model run under its --output_path
_LM_EVAL_SAMPLES = re.compile(r"samples_.+_\d{4}-\d\d-\d\dT[\d.-]+\.jsonl(\.gz)?")


def runs_folder(path: Path) -> list[Path] | None:
    """lm-eval's --output_path after several model runs (a folder per run, each holding samples_<task>_<date>.jsonl
    and no other data file; the folder itself holding none): those samples files, read as one input whose runs of a
    task are one panel (inputs/lm_eval.py); else None. This tool's own outputs there (`fit runs/ -o runs/fit.csv`)
    are no data files, as in any folder (tool_output)."""

    def data(q: Path) -> bool:
        return q.is_file() and is_data_name(q) and tool_output(q) is None

    try:
        if not path.is_dir() or any(data(q) for q in path.iterdir()):
            return None
        runs = [[q for q in sorted(d.iterdir()) if data(q)] for d in sorted(path.iterdir()) if d.is_dir()]
    except OSError:
        return None
    runs = [files for files in runs if files]
    if not runs or not all(any(_LM_EVAL_SAMPLES.fullmatch(q.name) for q in files)
                           and all(_LM_EVAL_SAMPLES.fullmatch(q.name) or q.name.startswith("results_") for q in files)
                           for files in runs):
        return None
    return [q for files in runs for q in files if _LM_EVAL_SAMPLES.fullmatch(q.name)]


# What this tool writes, so that `fit batch/ -o batch/summary.json` does not make the next `fit batch/` read its own
# output: JSON documents carry "schema": "betaconform/..." first (formats.OUTPUT_SCHEMAS), CSV reports a registered
# header (formats.output_table_of; render.to_csv writes no other). tests/test_tool_outputs.py runs every command of
# the CLI with -f csv and -f json into a data folder and reads the folder. Saved fits (.yaml) and Markdown / text
# reports are not data files at all.
_OUTPUT_SCHEMA = re.compile(rb'\A\s*\[?\s*\{\s*"schema"\s*:\s*"((?:' + b"|".join(re.escape(s.encode()) for s in OUTPUT_SCHEMAS)
                            + rb')[^"]{0,40})"')


def tool_output(path: Path) -> str | None:
    """What `path` is when this tool wrote it (a JSON document or a CSV report), else None; reads its first 4 KB."""
    name = path.name.lower()
    if kind_by_name(name) not in ("json", "jsonl", "csv") or is_gzip_name(name):  # this tool writes no gzip
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None  # the read itself reports it
    if kind_by_name(name) == "csv":
        first = head.split(b"\n", 1)[0].rstrip(b"\r").lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace")
        table = output_table_of(tuple(first.split(",")))
        return f"a CSV report written by betaconform ({table.name})" if table is not None else None
    m = _OUTPUT_SCHEMA.match(head)
    return f"a betaconform output (schema {m.group(1).decode('utf-8', 'replace')!r})" if m else None


def _data_files(folder: Path, left_out: list[str] | None = None) -> list[Path]:
    """The data files in a folder (by suffix), less this tool's own outputs (each named in `left_out`)."""
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise InputError(str(folder), f"cannot list the directory: {exc.strerror or exc}") from None
    found = _less_outputs([q for q in entries if q.is_file() and is_data_name(q)], left_out)
    kept = []
    for q in found:  # a tool's summary beside its data (formats.InputFormat.beside): no judgments
        what = beside_data(q, found)
        if what is None:
            kept.append(q)
        elif left_out is not None:
            left_out.append(f"{q}: skipped, {what}, not judgment data")
    return kept


def _less_outputs(found: list[Path], left_out: list[str] | None) -> list[Path]:
    kept = []
    for q in found:
        what = tool_output(q)
        if what is None:
            kept.append(q)
        elif left_out is not None:
            left_out.append(f"{q}: skipped, {what}, not judgment data")
    return kept


def _missing(arg: str) -> InputError:
    """Why a path does not exist: a dangling or looping symlink says so."""
    p = Path(arg)
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return InputError(arg, "symbolic link loop (the link points back to itself)")
        if p.is_symlink():
            return InputError(arg, f"broken symbolic link (it points to {os.readlink(p)}, which does not exist)")
    return InputError(arg, "no such file or directory")


def expand_paths(arguments: list[str], left_out: list[str] | None = None) -> list[Path]:
    """Files as given; `-` is standard input; directories: every data file inside (sorted), or the folder itself
    when it is a hive-partitioned table; globs expanded (sorted). A path given twice is read once.

    This tool's own outputs (tool_output) found in a folder or by a glob are left out, each with a line in
    `left_out` (for stderr); one named as an input is an error that says what it is."""
    out: list[Path] = []
    for arg in arguments:
        p = as_path(arg)
        if is_stdin(arg):
            out.append(p)
        elif p.is_dir():
            if is_hive_folder(p) or parts_folder(p) or runs_folder(p):
                out.append(p)
                continue
            skipped: list[str] = []
            found = _data_files(p, skipped)
            if left_out is not None:
                left_out += skipped
            if not found and skipped:
                raise InputError(arg, f"directory holds only outputs of betaconform, no judgment data ({skipped[0]})")
            if not found:
                raise InputError(arg, f"directory holds no data file ({', '.join('*' + s for s in data_suffixes())})")
            out.extend(found)
        elif any(ch in arg for ch in "*?[") and not os.path.lexists(p):  # a real file named "a[1].jsonl" is itself
            found = sorted(Path(x) for x in glob.glob(arg) if Path(x).is_file())
            if not found:
                raise InputError(arg, "pattern matches no file")
            found = _less_outputs(found, left_out)
            if not found:
                raise InputError(arg, "pattern matches only outputs of betaconform, no judgment data")
            out.extend(found)
        else:
            if not p.exists():
                raise _missing(arg)
            what = tool_output(p) if p.is_file() else None
            if what is not None:
                raise InputError(arg, f"this is {what}, not judgment data; give the judgment files it was made from")
            out.append(p)
    return unique_paths(out)


def unique_paths(paths: list[Path]) -> list[Path]:
    """Each file once, in order (named twice, or by a folder and by name); '-' at most once."""
    if sum(is_stdin(p) for p in paths) > 1:
        raise InputError(STDIN, "standard input can be read only once; give '-' once")
    seen: set[Path] = set()
    unique = []
    for p in paths:
        key = p if is_stdin(p) else p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def is_regular(path: Path) -> bool:
    """A regular file (seekable, with a size); pipes, FIFOs, devices and stdin are streams."""
    if is_stdin(path):
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


FIFO_WAIT_S = 2.0  # how long a FIFO that no program has opened for writing is waited for


def open_raw(path: Path, regular: bool = False) -> BinaryIO:
    """The one way a named input file is opened, as bytes. Opening a FIFO blocks until some program opens it for
    writing, forever when none does, so a path is looked at first (stat never blocks): `regular` (a saved fit's
    model file, a cache entry: read in place) refuses anything but a regular file before opening it; otherwise a
    FIFO is opened without blocking and waited for FIFO_WAIT_S, and refused when nothing writes to it by then. A
    pipe that has a writer (`<(cmd)`, /dev/stdin) is read as it comes. OSError for what cannot be opened."""
    st = os.stat(path)
    if regular and not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, f"{_kind(st.st_mode)}, not a regular file", str(path))
    if not stat.S_ISFIFO(st.st_mode):
        return open(path, "rb")
    import fcntl
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        if not poll.poll(int(FIFO_WAIT_S * 1000)):  # no data and no hang-up yet: is anyone there?
            try:
                first = os.read(fd, 1 << 16)
            except BlockingIOError:  # a writer holds it open and has not written yet: wait for it as for any pipe
                first = None
            if first == b"":
                raise OSError(errno.EPIPE, f"a FIFO that nothing wrote to within {FIFO_WAIT_S:g} s (no program has it "
                                           "open for writing)", str(path))
            if first:  # written between the poll and the read: kept
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
                return io.BufferedReader(_Prefixed(first, io.FileIO(fd, "rb")))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return io.BufferedReader(io.FileIO(fd, "rb"))
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")


class _Prefixed(io.RawIOBase):
    """A raw stream that gives `head` first, then the rest of `raw`."""

    def __init__(self, head: bytes, raw: io.FileIO):
        self._head, self._raw = head, raw

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n], self._head = self._head[:n], self._head[n:]
            return n
        return self._raw.readinto(b) or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_binary(path: Path) -> BinaryIO:
    """The file (open_raw), standard input, or a gzip stream (by the .gz name or by its magic bytes), as bytes."""
    try:
        if is_stdin(path):
            raw: BinaryIO = sys.stdin.buffer
        else:
            raw = open_raw(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(str(path), "symbolic link loop (the link points back to itself)") from None
        raise InputError(str(path), f"cannot open: {exc.strerror or exc}") from None
    buffered: Any = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)
    try:
        head = buffered.peek(2)[:2]
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if is_gzip_name(path) or head == b"\x1f\x8b":
        return io.BufferedReader(_CheckedGzip(fileobj=buffered, mode="rb", where="<stdin>" if is_stdin(path) else str(path)))
    return buffered  # type: ignore[no-any-return]


def gzip_problem(exc: BaseException) -> str:
    """A damaged gzip stream, for a message."""
    if isinstance(exc, EOFError):
        return "damaged gzip file: truncated (it ends before the compressed data does)"
    return f"damaged gzip file: {exc or type(exc).__name__}"


class _CheckedGzip(gzip.GzipFile):
    """A gzip stream whose damage (a bad CRC or length -- checked at its end --, a corrupt deflate stream, a cut-off
    file) is an InputError naming the file, whichever reader meets it: never read as other data or a traceback."""

    def __init__(self, *args: Any, where: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._where = where

    def read(self, size: int | None = -1) -> bytes:
        try:
            return super().read(size)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(self._where, gzip_problem(exc)) from None

    def read1(self, size: int = -1) -> bytes:
        try:
            return super().read1(size)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(self._where, gzip_problem(exc)) from None

    def peek(self, n: int) -> bytes:
        try:
            return super().peek(n)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(self._where, gzip_problem(exc)) from None


def read_line(fh: BinaryIO, path: Path, lineno: int) -> bytes:
    """One line, at most MAX_LINE_BYTES long (InputError beyond)."""
    line = fh.readline(MAX_LINE_BYTES + 1)
    if len(line) > MAX_LINE_BYTES:
        raise InputError(str(path), f"line longer than {MAX_LINE_BYTES >> 20} MiB: not a JSON Lines file?", line=lineno)
    return line


def iter_objects(path: Path, where: str, wrong: Callable[[Any], str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file whose every line must be a JSON object:
    a line that is not JSON, or not an object, is an InputError naming the file and the line (`wrong(value)`: the
    reader's words for a line that is no object; by default "each line must be an object, got ...")."""
    import orjson

    from ..formats import load_json
    from . import values

    for n, raw in iter_lines(path):
        try:
            obj = load_json(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(where, values.json_problem(raw, exc), line=n) from None
        if not isinstance(obj, dict):
            raise InputError(where, wrong(obj) if wrong else f"each line must be an object, got {values.shown(obj)}", line=n)
        yield n, obj


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line) for each non-blank line; read errors become InputError."""
    lineno = 0
    try:
        with open_binary(path) as fh:
            while True:
                raw = read_line(fh, path, lineno + 1)
                if not raw:
                    return
                lineno += 1
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]  # a UTF-8 byte order mark (some Windows editors write one)
                if raw.strip():
                    yield lineno, raw
    except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a corrupt .gz (not an OSError)
        raise InputError(str(path), f"read failed after line {lineno}: {exc}") from None


@contextmanager
def read_faults(where: str) -> Iterator[None]:
    """Everything the environment can throw while a file is read -- permission denied, an I/O error, a truncated
    or corrupt gzip, zip or deflate stream (EOFError, zlib.error), bytes that are not UTF-8 -- as an InputError
    naming the file (errors.fault_text). Each reader is run inside this, so none needs to list them."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        fault = fault_text(exc, where)
        if fault is None:
            raise
        raise InputError(where, f"cannot read: {fault}") from None


def verify_gzip(path: Path, where: str) -> None:
    """Read a gzip file to its end so that its CRC and length are checked (DuckDB's gzip reader does not check
    them: a damaged file would be read as other data); InputError when it is damaged or truncated."""
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:  # cut off; a bad CRC or length; a corrupt deflate stream
        raise InputError(where, gzip_problem(exc)) from None
    except OSError as exc:
        raise InputError(where, f"cannot read: {exc.strerror or exc}") from None
