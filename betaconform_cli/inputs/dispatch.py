"""One path read by the registered format that reads it (formats.py): the dispatch every reading goes through, files
named or found in a folder (inputs/__init__.py) and records in memory (memory.py) alike."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..formats import input_format, resolve
from .options import InputOptions, Keep
from .paths import is_stdin, parts_folder, read_faults

if TYPE_CHECKING:
    from .dataset import Dataset
    from .detect import Plan


def read_path(path: Path, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS,
              planned: Plan | None = None, name: str | None = None, where: str | None = None) -> list[Dataset]:
    """Every dataset in one path (a file, a hive-partitioned folder, or '-'), read by the registered format that
    reads it (formats.py; `planned`: the reader already chosen for a regular file, so that it is not sniffed again).
    `name` and `where`: the dataset's name and the input's name in messages, when not the file's own (records
    written to a temporary file: memory.py)."""
    from .dataset import dataset_name
    from .detect import Source, prepared

    where = where or ("<stdin>" if is_stdin(path) else str(path))
    name = name or ("stdin" if is_stdin(path) else dataset_name(path))
    parts = None if is_stdin(path) else parts_folder(path)
    if parts:  # one export in parts (bt sync pull): one dataset
        from .parts import joined, noted

        with joined(parts, where) as whole:
            return noted(read_path(whole, opts, keep, name=name, where=where), parts)
    with read_faults(where), prepared(path, opts, planned) as (how, local, stream):
        read = resolve(input_format(how.reader).reader)
        return list(read(Source(local, how, name, where, stream, is_stdin(path)), opts, keep))
