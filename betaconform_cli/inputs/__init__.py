"""The one way in: every command reads its inputs through `read_inputs` (or `begin_read` to overlap the read
with other start-up work). A module per format; `detect` picks one when the format is "auto".

    arguments (files, directories, globs, "-") -> paths.expand_paths -> one reader per path -> [Dataset]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .dataset import Dataset, Item, Reading, dataset_name
from .options import InputOptions, Keep
from .paths import expand_paths
from .pool import PoolItem, read_pool

__all__ = ["Dataset", "InputOptions", "Item", "Keep", "PendingInputs", "PoolItem", "Reading", "begin_read",
           "dataset_name", "expand_paths", "read_dataset", "read_inputs", "read_pool"]

SAVED_FIT_SUFFIXES = (".yaml", ".yml")


class PendingInputs:
    """Inputs being read: the first file may already be counted by forked workers (big JSON Lines files) while
    the caller imports the fitting code; `result()` reads the rest and returns every dataset in order."""

    def __init__(self, paths: Sequence[Path], opts: InputOptions, keep: Keep, parent_share: float = 1.0):
        from .jsonl import PendingRead

        self.paths = list(paths)
        self.opts = opts
        self.keep = keep
        self._first = PendingRead(self.paths[0], opts, keep, parent_share=parent_share) if self.paths else None

    def result(self) -> list[Dataset]:
        from .jsonl import read_jsonl

        out = [self._first.result()] if self._first is not None else []
        out += [read_jsonl(p, self.opts, self.keep) for p in self.paths[1:]]
        return out


def _refuse_saved_fits(paths: Sequence[Path]) -> None:
    from ..errors import InputError

    saved = next((p for p in paths if p.suffix in SAVED_FIT_SUFFIXES), None)
    if saved is not None:
        raise InputError(str(saved), f"this looks like a saved fit, not judgment data; show it with `betaconform report {saved}`")


def begin_read(arguments: Sequence[str], opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS,
               parent_share: float = 1.0) -> PendingInputs:
    """Expand the arguments and start reading (see PendingInputs)."""
    paths = expand_paths(list(arguments))
    _refuse_saved_fits(paths)
    return PendingInputs(paths, opts, keep, parent_share)


def read_dataset(path: str | Path, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS,
                 workers: int | None = None) -> Dataset:
    """One input file (or '-'), in whatever format `opts` says or its name and content suggest."""
    from .jsonl import read_jsonl

    return read_jsonl(path, opts, keep, workers)


def read_inputs(arguments: Sequence[str], opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS) -> list[Dataset]:
    """Every dataset the arguments name, validated; InputError names the file, the line or row, and the field."""
    return begin_read(arguments, opts, keep).result()
