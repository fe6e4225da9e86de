"""Writing files without ever losing what was there: the one place every output goes through.

- A regular file (or a new one) is written to a temporary file beside it, fsynced and renamed over it: readers
  see the old file or the new one, never half of one; on any failure the old file is kept.
- A symbolic link is written through: the file it points to is replaced (atomically), the link stays a link.
- A special file (a device such as /dev/null or /dev/stdout, a FIFO) is written through, never replaced.
- An existing writable file in a directory where no temporary file can be made is rewritten in place.
- Temporary files left by a killed writer (`.NAME.bc-XXXX.tmp`, older than STALE_SECONDS) are removed.
- `refuse_inputs` refuses an output that is also an input (compared as files, not as strings).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from .errors import OutputError

TMP_TAG = ".bc-"
STALE_SECONDS = 600


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


def _remove_stale(directory: Path, name: str) -> None:
    """Temporary files of ours for this name that a killed writer left behind."""
    prefix = f".{name}{TMP_TAG}"
    now = time.time()
    try:
        for q in directory.iterdir():
            if q.name.startswith(prefix) and q.name.endswith(".tmp") and now - q.lstat().st_mtime > STALE_SECONDS:
                q.unlink()
    except OSError:
        pass


def _mode_for(path: Path) -> int:
    """The existing file's permissions, else 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write(path: str | Path, write: Callable[[BinaryIO], None], sync: bool = True) -> None:
    """Call write(fh) so that `path` ends up holding exactly what was written, or keeps its old content."""
    given = Path(path)
    check_target(given)
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
            with open(target, "wb") as fh:
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
        os.fchmod(fd, _mode_for(target))  # mkstemp makes 0600; give the file the mode a plain open() would
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # a full disk, a path that became a directory: the old file is kept
            raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None
        raise


def _write_in_place(given: Path, target: Path, write: Callable[[BinaryIO], None]) -> None:
    """A writable file in a read-only directory: the content is built first, then written over the file."""
    import io

    buf = io.BytesIO()
    write(buf)
    try:
        with open(target, "r+b") as fh:
            fh.write(buf.getvalue())
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise OutputError(f"{given}: cannot write: {exc.strerror or exc}") from None


def write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically (see `atomic_write`)."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | Path, data: bytes) -> None:
    def write(fh: BinaryIO) -> None:
        fh.write(data)

    atomic_write(path, write)
