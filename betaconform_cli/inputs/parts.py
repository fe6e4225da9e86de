"""A folder of the parts one export was split into (paths.parts_folder: `bt sync pull experiment:<id>` writes
part-000001.jsonl, part-000002.jsonl, ...), read as ONE dataset, the folder's: the parts are joined, in order, into one
JSON Lines file that the format its first record says reads (a Braintrust experiment's span rows: braintrust.py), by
dispatch.read_path. An error names the part and its own line, as when the part is read alone."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..errors import InputError
from .paths import open_binary, read_line

if TYPE_CHECKING:
    from .dataset import Dataset


@contextlib.contextmanager
def joined(parts: list[Path], where: str) -> Iterator[Path]:
    """The parts joined, in order, into one temporary JSON Lines file; an InputError of the reading done with it (on
    `where`, the folder) is raised as the part's, with the part's own line."""
    fd, tmp = tempfile.mkstemp(prefix="betaconform-parts-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as out:
            starts = _join(parts, out)
        try:
            yield Path(tmp)
        except InputError as exc:
            raise _in_part(exc, where, starts) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def noted(found: list[Dataset], parts: list[Path]) -> list[Dataset]:
    """The datasets read from the joined parts, each with a note saying which parts were read as one."""
    span = parts[0].name if len(parts) == 1 else f"{parts[0].name} .. {parts[-1].name}"
    note = f"{len(parts)} part(s) of one export ({span}) read as one dataset, the folder's"
    return [ds if ds.reading is None else dataclasses.replace(ds, reading=dataclasses.replace(
        ds.reading, notes=(note, *ds.reading.notes))) for ds in found]


def _join(parts: list[Path], out: BinaryIO) -> list[tuple[int, Path]]:
    """Write the parts' lines one after another (a part's last line ended); (lines before it, part) for each."""
    starts: list[tuple[int, Path]] = []
    total = 0
    for part in parts:
        starts.append((total, part))
        with open_binary(part) as fh:
            while line := read_line(fh, part, total - starts[-1][0] + 1):
                total += 1
                out.write(line if line.endswith(b"\n") else line + b"\n")
    return starts


def _in_part(exc: InputError, where: str, starts: list[tuple[int, Path]]) -> InputError:
    """An error on a line of the joined file, as the part's own: its name and line (other lines it names too)."""
    if exc.path != where or not exc.line:
        return exc

    def local(n: int) -> tuple[Path, int]:
        start, part = next((s, p) for s, p in reversed(starts) if s < n)
        return part, n - start

    part, line = local(exc.line)

    def renamed(m: re.Match[str]) -> str:
        other, n = local(int(m.group(2)))
        return f"{m.group(1)} {n}" if other == part else f"{other.name} {m.group(1)} {n}"

    reason = re.sub(r"\b(lines?|records?|rows?) (\d+)", renamed, exc.reason)
    return InputError(str(part), reason, line=line, field=exc.field, unit=exc.unit)
