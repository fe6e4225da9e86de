"""File names built from names that come from data (a dataset column's values, an inspect task, a slice): readable,
inside the folder the user chose, none two alike. Every writer of per-dataset files builds its names here (atomic.py
writes them; it was their home until hostile round 4 took it past 500 lines)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .escape import INVISIBLE

# control and invisible characters (escape.INVISIBLE: bidi, zero-width, C1, lone surrogates), Windows' reserved ones
_UNSAFE = re.compile(f'[{INVISIBLE}\t\n<>:"|?*]')
_RESERVED = re.compile(r"(?i)(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?")  # Windows device names
MAX_STEM_BYTES = 180  # a file name is at most 255 bytes; the suffix and our temporary file's tag need the rest


def file_stem(name: str) -> str:
    """A readable file name (without extension) for a name taken from data, that stays in its folder: path parts
    joined by "_" ("../victim" -> "victim", "a/b" -> "a_b", "/etc/x" -> "etc_x"), no leading dot (no hidden file,
    no "." or ".."), no control or reserved characters, at most MAX_STEM_BYTES (a cut name ends in a hash of the
    whole). A name that is already such a name is itself. Empty: "dataset"."""
    parts = [p for p in re.split(r"[/\\]+", _UNSAFE.sub("_", name)) if p.strip(" .")]
    stem = "_".join(p.strip() for p in parts).lstrip(". ").rstrip(". ") or "dataset"
    if _RESERVED.fullmatch(stem):
        stem = "_" + stem
    if len(stem.encode("utf-8")) > MAX_STEM_BYTES:
        cut = stem.encode("utf-8")[: MAX_STEM_BYTES - 9].decode("utf-8", "ignore")
        stem = f"{cut}-{_digest(name)}"
    return stem


def _digest(name: str) -> str:
    import hashlib

    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def file_stems(names: Iterable[str]) -> list[str]:
    """file_stem for each of several names saved into one folder, none two alike (compared case-blind, as some
    file systems do): where names collide only once made safe ("a/b" and "a_b"), each name that had to change gets
    a hash of itself ("a_b-1f2e3d4c"), so each one's file does not depend on which others are saved beside it.
    Two equal names are the caller's to refuse."""
    given = list(names)
    stems = [file_stem(n) for n in given]
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(stems):
        groups.setdefault(s.casefold(), []).append(i)
    for members in groups.values():
        if len({given[i] for i in members}) < 2:
            continue
        kept = next((i for i in members if stems[i] == given[i]), None)  # a name that is its own file name stays
        for i in members:
            if i != kept and given[i] != (given[kept] if kept is not None else None):
                stems[i] = f"{stems[i][: MAX_STEM_BYTES - 9]}-{_digest(given[i])}"
    return stems
