"""Nothing the user holds is overwritten: the one list of protected paths, checked before anything is written.

- `protect(what, path)`: an input of this run (a data file, a `--labels` file, a saved fit, a config, a pool, the
  files of a folder or a glob named as input). The CLI protects every path-valued option and argument that is not an
  output (cli/protected_inputs.py: OUTPUT_OPTIONS), so an input option added later is protected without a line here.
- `refuse_overwrites(outputs)`: every output (-o, --junit, --save, --save-dir's files, sample's next items, a figure,
  $GITHUB_STEP_SUMMARY) against every protected input and every other output, compared as files (the same inode
  through another name, a hard link or a symbolic link) and, for files not there yet, by resolved path. Called
  before the first byte is written; `atomic.atomic_write` and the job summary's append ask `protected` once more.
- `refuse_links(base, target, what)`: no write through a symbolic link the user did not name: a link at a file
  name this tool builds inside a folder the user chose (`--save-dir`'s <dataset>.yaml, the embedding cache's
  entries) or at a folder between the two is refused (exit 2, naming the link), never followed. The folder the
  user named may itself be a link: that one the user chose.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from .errors import OutputError

_PROTECTED: dict[tuple[int, int], tuple[str, str]] = {}  # (device, inode) -> (what, the path as given)


def _key(path: str | Path) -> tuple[int, int] | None:
    """The regular file a path names (links followed), as (device, inode); None for anything else."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def protect(what: str, paths: Iterable[str | Path]) -> None:
    """Protect the inputs of this run: each path that names a regular file (links followed); folders and globs
    are their reader's to expand first (the files it reads, not every file beside them)."""
    for path in paths:
        key = _key(path)
        if key is not None and str(path) != "-":
            _PROTECTED.setdefault(key, (what, str(path)))


def protected(path: str | Path) -> tuple[str, str] | None:
    """(what, path) of the protected input that writing `path` would replace, else None."""
    key = _key(path)
    return _PROTECTED.get(key) if key is not None else None


def read_by(what: str) -> str:
    return f" (read as {what})" if what and what != "input" else ""


def clear() -> None:
    """Forget the protected inputs (a new command in the same process)."""
    _PROTECTED.clear()


def refuse_overwrites(outputs: Iterable[tuple[str, Path | None]]) -> None:
    """Every output against every protected input (the caller checks them against each other next:
    atomic.refuse_same, which writes; this module stays below it, so the two import no cycle)."""
    for what, p in ((what, p) for what, p in outputs if p is not None):
        hit = protected(p)
        if hit is not None:
            raise OutputError(f"{p}: the {what} would overwrite the input {hit[1]}{read_by(hit[0])}; write it elsewhere")


def refuse_links(base: Path, target: Path, what: str) -> None:
    """Refuse a symbolic link at `target` or at any folder between `base` (the user's choice) and it."""
    try:
        parts = target.relative_to(base).parts
    except ValueError:
        return
    p = base
    for part in parts:
        p = p / part
        if p.is_symlink():
            raise OutputError(f"{p}: a symbolic link inside {base}; the {what} is never written through a link "
                              "you did not name: remove it, or name the file yourself")
