"""Writing files without ever losing what was there: the one place every output goes through.

- A regular file (or a new one) is written to a temporary file beside it, fsynced and renamed over it: readers
  see the old file or the new one, never half of one; on any failure the old file is kept.
- A symbolic link is written through: the file it points to is replaced (atomically), the link stays a link.
- A special file (a device such as /dev/null, a FIFO) is written through, never replaced.
- One of this process's open files named through /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N is
  written to that open file (appended where the shell opened it with >>), never replaced by a new file.
- An existing writable file in a directory where no temporary file can be made is rewritten in place.
- Temporary files left by a killed writer (`.NAME.bc-XXXX.tmp`) are removed: at once when no writer holds their
  lock (a writer locks its temporary file from creation to rename; a killed one's lock is gone), else after
  STALE_SECONDS (a file system without locks).
- `refuse_inputs` refuses an output that is also an input (compared as files, not as strings); every write asks
  protect.py's list of protected inputs last, and refuses one.
- SIGTERM while a file is written is handled like Ctrl-C: the temporary file is removed, then the process exits.
- `append_bytes` appends all or nothing (the job summary): free space checked first, a failed write rolled back.
- `file_stems` (file_names.py) turns names that come from data (a dataset column's values, an inspect task) into file
  names that stay inside the folder the user chose: every writer of per-dataset files builds its names there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import OutputError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: no locks, stale temporary files then go by age alone
    fcntl = None  # type: ignore[assignment]

TMP_TAG = ".bc-"
STALE_SECONDS = 600  # an unlocked-or-unlockable temporary file older than this is a dead writer's
LOCK_GRACE_SECONDS = 2  # a writer locks its temporary file within microseconds of making it
_FD_LINK = re.compile(r"/proc/(?:self|thread-self|(?P<pid>\d+)(?:/task/\d+)?)/fd/(?P<fd>\d+)")


def _target(path: Path) -> Path:
    """The file a write to `path` lands in: symbolic links followed (a dangling link: the file it names)."""
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(f"{path}: cannot write: symbolic link loop") from None
        return Path(os.path.realpath(path))  # dangling: create the file the link names


def open_fd(path: Path) -> int | None:
    """The file descriptor of this process that `path` names (/dev/stdout, /dev/fd/3, /proc/self/fd/1, or a link
    to one of them), else None. Following such a link to a regular file and replacing that file would destroy
    what the shell opened it for (`-o /dev/stdout >> log`): the output goes to the descriptor instead."""
    p = os.path.abspath(path)
    for _ in range(40):  # a longer chain is a loop, which the write itself reports
        head, tail = os.path.split(p)
        p = os.path.join(os.path.realpath(head), tail)  # /dev/fd -> /proc/self/fd, /proc/self -> /proc/<pid>
        m = _FD_LINK.fullmatch(p)
        if m:
            return int(m.group("fd")) if m.group("pid") in (None, str(os.getpid())) else None
        if not os.path.islink(p):
            return None
        p = os.path.normpath(os.path.join(os.path.dirname(p), os.readlink(p)))  # an absolute link replaces the lot
    return None


def check_target(path: Path, what: str = "output") -> None:
    """Refuse, before any work, an output that cannot be a file: a directory."""
    if path.is_dir():
        raise OutputError(f"{path}: cannot write the {what}: is a directory (give a file name)")


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_inputs(outputs: Iterable[tuple[str, Path | None]], inputs: Iterable[Path]) -> None:
    """An output naming an input file (through any path, link or hard link) would overwrite the user's data."""
    ins = [p for p in inputs if str(p) != "-"]
    for what, out in outputs:
        if out is None:
            continue
        for p in ins:
            if same_file(out, p):
                raise OutputError(f"{out}: the {what} would overwrite the input {p}; write it elsewhere")


def same_target(a: Path, b: Path) -> bool:
    """Whether writing `a` and writing `b` would land in one file (existing or not)."""
    return same_file(a, b) or os.path.realpath(a) == os.path.realpath(b)


def clobbers(a: Path, b: Path) -> bool:
    """Whether writing `b` would replace what writing `a` wrote: one file, and neither a descriptor (/dev/stdout
    twice is two writes) nor a device or FIFO (written through, never replaced)."""
    if not same_target(a, b) or open_fd(a) is not None:
        return False
    try:
        return stat.S_ISREG(os.stat(a).st_mode)
    except OSError:
        return True  # not there yet: both would create it


def refuse_same(outputs: Iterable[tuple[str, Path | None]]) -> None:
    """Two outputs naming one file: the second would silently replace the first."""
    given = [(what, p) for what, p in outputs if p is not None]
    for i, (what_a, a) in enumerate(given):
        for what_b, b in given[i + 1 :]:
            if clobbers(a, b):
                raise OutputError(f"{b}: the {what_b} and the {what_a} would be the same file; give them different names")


def _remove_stale(directory: Path, name: str) -> None:
    """Temporary files of ours for this name that a killed writer left behind: unlocked ones (a live writer holds
    the lock until its rename) older than LOCK_GRACE_SECONDS; any older than STALE_SECONDS."""
    prefix = f".{name}{TMP_TAG}"
    now = time.time()
    try:
        entries = list(directory.iterdir())
    except OSError:
        return
    for q in entries:
        if not (q.name.startswith(prefix) and q.name.endswith(".tmp")):
            continue
        try:
            st = q.lstat()
            age = now - st.st_mtime
            if not stat.S_ISREG(st.st_mode) or age < LOCK_GRACE_SECONDS:
                continue
            if age > STALE_SECONDS or not _locked(q):
                q.unlink()
        except OSError:
            pass


def _locked(path: Path) -> bool:
    """Whether a live writer holds `path`'s lock (True when it cannot be told: the file is then kept)."""
    if fcntl is None:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases the lock just taken
    return False


def _mode_for(path: Path) -> int:
    """The existing file's permissions, else 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _refuse_protected(path: Path) -> None:
    """The last word before a write: a protected input (protect.py) is never written."""
    from .protect import protected

    hit = protected(path)
    if hit is not None:
        raise OutputError(f"{path}: cannot write: it is the input {hit[1]}" + (f" (read as {hit[0]})" if hit[0] != "input" else ""))


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, `timeout`, `kill`) handled like Ctrl-C while a file is written: it raises,
    so that the temporary file is removed (or a half append rolled back) before the process exits 143. Only where
    SIGTERM still has its default action, and only in the main thread (the only one that may set a handler)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def atomic_write(path: str | Path, write: Callable[[BinaryIO], None]) -> None:
    """Call write(fh) so that `path` ends up holding exactly what was written, or keeps its old content."""
    given = Path(path)
    check_target(given)
    _refuse_protected(given)
    with _sigterm_raises():
        _atomic_write(given, write)


def _atomic_write(given: Path, write: Callable[[BinaryIO], None]) -> None:
    fd_number = open_fd(given)
    if fd_number is not None:
        _write_fd(given, fd_number, write)
        return
    target = _target(given)
    check_target(target)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):  # a device or a FIFO: write through it, never replace it
        try:
            with _open_special(target, mode) as fh:
                write(fh)
        except OSError as exc:
            raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None
        return
    directory = target.parent if str(target.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _remove_stale(directory, target.name)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}{TMP_TAG}", suffix=".tmp", dir=directory)
    except OSError as exc:
        if mode is not None and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and os.access(target, os.W_OK):
            _write_in_place(given, target, write)
            return
        raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None
    try:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "a writer is alive": see _remove_stale
        except OSError:
            pass  # no locks here (some network file systems): stale files then go by age alone
        os.fchmod(fd, _mode_for(target))  # mkstemp makes 0600; give the file the mode a plain open() would
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())  # every file, caches included: after a crash the new content or the old, whole
            os.replace(tmp, target)  # still open, so still locked: no cleaner can remove it before the rename
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # a full disk, a path that became a directory: the old file is kept
            raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None
        raise


FIFO_READER_WAIT_S = 2.0  # how long a FIFO given as -o is waited for a reader (inputs/paths.FIFO_WAIT_S: for a writer)


def _open_special(target: Path, mode: int) -> BinaryIO:
    """A device or a FIFO opened for writing: a FIFO without blocking (which waits for a reader, forever when none
    comes: a CI job hung on `-o fifo`), retried for FIFO_READER_WAIT_S, then OSError; with a reader, a pipe."""
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while stat.S_ISFIFO(mode) and fcntl is not None:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() >= deadline:
                raise OSError(errno.ENXIO, f"a FIFO that no program reads (none opened it within {FIFO_READER_WAIT_S:g} s)") \
                    if exc.errno == errno.ENXIO else exc from None
            time.sleep(0.05)
            continue
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "wb")
    return open(target, "wb")


def _write_fd(given: Path, fd_number: int, write: Callable[[BinaryIO], None]) -> None:
    """Write to one of this process's open descriptors (its current position, or appended where it was opened
    for appending); stdout and stderr are flushed first so that the order is kept."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == fd_number:
                stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    try:
        fh = os.fdopen(os.dup(fd_number), "wb")
    except OSError as exc:
        raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None
    try:
        with fh:
            write(fh)
            fh.flush()
    except OSError as exc:
        raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None


def _write_in_place(given: Path, target: Path, write: Callable[[BinaryIO], None]) -> None:
    """A writable file in a read-only directory: no temporary file can be made beside it, so it is rewritten where
    it is -- without ever losing it. The new content is built first; the space it needs beyond the old size is
    reserved before a byte of the file changes (a full disk fails there, the file untouched); the new bytes then go
    over the old ones and only then is the file cut to its new length. Should a write fail all the same, the old
    content is put back. The one thing this cannot promise is a crash in the middle of the rewrite."""
    import io

    buf = io.BytesIO()
    write(buf)
    new = buf.getvalue()
    try:
        fd = os.open(target, os.O_RDWR)
    except OSError as exc:
        raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None
    try:
        try:
            old = _read_all(fd)
        except OSError as exc:
            raise OutputError(f"{given}: cannot write: {exc.strerror or exc}; the file is unchanged") from None
        try:
            _reserve(fd, len(old), len(new))
        except OSError as exc:
            try:
                os.ftruncate(fd, len(old))  # a reservation that failed halfway may have grown the file
            except OSError:
                pass
            raise OutputError(f"{given}: cannot write: {exc.strerror or exc}; the file is unchanged") from None
        try:
            _put(fd, new)
        except OSError as exc:
            try:
                _put(fd, old)
                kept = "the file is unchanged"
            except OSError:
                kept = "its old content could not be put back"
            raise OutputError(f"{given}: cannot write: {exc.strerror or exc}; {kept}") from None
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _reserve(fd: int, old: int, new: int) -> None:
    """Allocate the bytes a file grows by, so that a full disk fails now and not halfway through the rewrite;
    where the file system cannot allocate ahead, nothing is reserved (a failed write is then undone instead)."""
    if new <= old or not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, old, new - old)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise


def _put(fd: int, data: bytes) -> None:
    """The file's whole content becomes `data`: written over the old bytes from the start, then cut to length."""
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], done)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically (see `atomic_write`); a lone surrogate (an undecodable file-name byte that
    reached the text) is written as a backslash escape, never as invalid UTF-8."""
    write_bytes(path, text.encode("utf-8", "backslashreplace"))


def write_bytes(path: str | Path, data: bytes) -> None:
    def write(fh: BinaryIO) -> None:
        fh.write(data)

    atomic_write(path, write)


def append_bytes(path: str | Path, data: bytes) -> None:
    """Append `data` to a file, all or nothing: the free space is checked first (a full disk fails before a byte
    is appended), and a write that fails all the same is rolled back (the file cut to its old length). Opened without
    blocking: a FIFO nobody reads is refused (ENXIO) instead of hanging. A protected input is never appended to."""
    _refuse_protected(Path(path))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
    try:
        os.set_blocking(fd, True)
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        if regular and st.st_size and not _ends_with_newline(path):
            data = b"\n" + data
        with _sigterm_raises():
            if regular:
                _room_for(fd, len(data))
            try:
                written = 0
                while written < len(data):  # a short write goes on where it stopped, or raises
                    written += os.write(fd, data[written:])
            except BaseException:
                if regular:
                    os.ftruncate(fd, st.st_size)
                raise
    finally:
        os.close(fd)


def _room_for(fd: int, size: int) -> None:
    """Raise ENOSPC when the file system holding `fd` has less than `size` bytes (and a block) free for us."""
    try:
        vfs = os.fstatvfs(fd)
    except OSError:
        return  # cannot tell: the write itself says so, and is rolled back
    if vfs.f_frsize and vfs.f_bavail * vfs.f_frsize < size + vfs.f_frsize:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _ends_with_newline(path: str | Path) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"
    except OSError:
        return True


def check_writable(path: Path, what: str = "output") -> None:
    """Refuse, before any output is printed or written, a file that cannot be written: its folder (or the nearest
    one that exists, where the folders would be made) is not writable, or a file stands where a folder must be.
    The write itself still reports what only writing can tell (a full disk)."""
    check_target(path, what)
    if open_fd(path) is not None:
        return
    target = _target(path)
    if target.exists():  # replaced through a temporary file beside it, or rewritten in place (see atomic_write)
        if not target.is_file() or _dir_writable(target.parent) or os.access(target, os.W_OK):
            return
        raise OutputError(f"{path}: cannot write the {what}: permission denied")
    folder = target.parent if str(target.parent) else Path(".")
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"{path}: cannot write the {what}: {folder} is not a folder")
    if not _dir_writable(folder):
        raise OutputError(f"{path}: cannot write the {what}: the folder {folder} is not writable")


def _dir_writable(folder: Path) -> bool:
    return os.access(folder if str(folder) else ".", os.W_OK | os.X_OK)
