"""The one way in: every command reads its inputs through `read_inputs` (or `begin_read`, to overlap the read
with other start-up work). A module per format; detect.py picks one when the format is "auto".

    arguments (files, folders, globs, "-") -> paths.expand_paths -> detect.plan per path -> a reader -> [Dataset]

Readers, each an entry of the formats' registry (formats.py): jsonl.py (judgment JSON Lines, streamed), tables.py
(long / wide / counts tables through DuckDB), promptfoo.py, inspect_logs.py; build.py turns any reader's marks into
Datasets the same way.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..formats import is_fit_name
from .dispatch import read_path
from .options import InputOptions, Keep
from .paths import expand_paths, is_regular, is_stdin, read_faults, unique_paths

if TYPE_CHECKING:
    from .dataset import Dataset, Item, Reading, dataset_name
    from .detect import Plan
    from .jsonl import PendingRead
    from .pool import PoolItem, read_pool

# Imported when first used (PEP 562): the CLI builds its options from InputOptions at start, and the datasets
# (numpy), the detection and the pool reader are only needed once a file is read.
_HOME = {"Dataset": "dataset", "Item": "dataset", "Reading": "dataset", "dataset_name": "dataset", "PoolItem": "pool",
         "read_pool": "pool"}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value

__all__ = ["Dataset", "InputOptions", "Item", "Keep", "PendingInputs", "PoolItem", "ReadInputs", "Reading", "begin_read",
           "dataset_name", "expand_paths", "read_batch", "read_dataset", "read_inputs", "read_pool"]

class PendingInputs:
    """Inputs being read while the caller imports the fitting code: a big first JSON Lines file is counted by
    forked workers, a first table by DuckDB on a thread of its own (DuckDB releases the GIL while it works); any
    other format is read by read_path in turn. `result()` reads the rest and returns every dataset in order."""

    def __init__(self, paths: Sequence[Path], opts: InputOptions, keep: Keep, parent_share: float = 1.0,
                 left_out: Sequence[str] = (), need_labels: bool = True, vocabulary: bool = True, batch: bool = False):
        self.checks = (need_labels, vocabulary)  # checks.check_datasets' switches
        self.batch = batch  # a bad input among several fails alone (`failed`); else it stops the read
        self.failed: list[tuple[str, InputError]] = []  # (dataset name, its error)
        self.paths = list(paths)
        self.left_out = tuple(left_out)
        self.opts = opts
        self.keep = keep
        self._first: PendingRead | None = None
        self._thread: Any = None
        self._done: list[Any] = []
        self._planned: Plan | None = None  # the first path's reader, chosen once
        first = self.paths[0] if self.paths else None
        if first is not None and (is_regular(first) or first.is_dir()):
            try:
                self._start(first, parent_share)
            except InputError:
                if not (batch and len(self.paths) > 1):
                    raise  # in a batch, result() reads it again, and there it fails alone

    def _start(self, first: Path, parent_share: float) -> None:
        """Start reading the first path (a big JSON Lines file by forked workers, a table on a thread)."""
        from .detect import plan
        from .jsonl import PendingRead

        with read_faults(str(first)):
            how = plan(first, self.opts)
        if how.reader == "jsonl" and is_regular(first):  # a folder of parts is joined first, by read_path
            self._first = PendingRead(first, self.opts, self.keep, parent_share=parent_share)
        elif how.reader == "table":
            import threading

            self._thread = threading.Thread(target=self._read_first, args=(first, how), daemon=True)
            self._thread.start()
        else:
            self._planned = how

    @property
    def works_meanwhile(self) -> bool:
        """Whether the first read runs beside the caller (forked workers or a thread) until `result()`: only then
        is other work before `result()` free; otherwise a refusal would pay for it in vain."""
        return self._thread is not None or (self._first is not None and self._first.works_meanwhile)

    def _read_first(self, path: Path, how: Plan) -> None:
        try:
            self._done.append(read_path(path, self.opts, self.keep, how))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread by result()
            self._done.append(exc)

    def _first_result(self) -> list[Dataset]:
        if self._first is not None:
            return [self._first.result()]
        self._thread.join()
        got = self._done[0]
        if isinstance(got, BaseException):
            raise got
        return list(got)

    def result(self) -> list[Dataset]:
        from .checks import check_datasets

        out: list[Dataset] = []
        batch = self.batch and len(self.paths) + len(self.failed) > 1
        for i, p in enumerate(self.paths):
            pending = i == 0 and (self._first is not None or self._thread is not None)
            try:
                out += self._first_result() if pending else read_path(p, self.opts, self.keep, self._planned if i == 0 else None)
            except InputError as exc:
                if not batch:
                    raise
                from .dataset import dataset_name

                self.failed.append(("stdin" if is_stdin(p) else dataset_name(p), exc))
        if out and self.left_out:  # said once, with the first dataset
            out[0] = dataclasses.replace(out[0], left_out=self.left_out)
        from .slices import apply

        checked = check_datasets(_distinct_logs(out), *self.checks, self.opts, failed=self.failed if batch else None)
        if self.failed and not checked:  # nothing was read: the first bad input's error, as with one input
            raise self.failed[0][1]
        return apply(checked, self.opts.record.by)


def _distinct_logs(datasets: list[Dataset]) -> list[Dataset]:
    """An inspect log (an lm-eval samples file) is named by its task, and a log folder often holds several runs of one
    task (lm-eval: each model's run folder): those are named by their files instead (an lm-eval run `task [its run
    folder]`, else its file), so that no two of them pass for one dataset."""
    from collections import Counter
    from dataclasses import replace

    from .dataset import dataset_name

    taken = Counter(ds.name for ds in datasets)
    runs = Counter((ds.name, Path(ds.source).parent.name) for ds in datasets if ds.shape == "lm_eval")

    def distinct(ds: Dataset) -> str:
        if ds.shape == "lm_eval" and runs[(ds.name, Path(ds.source).parent.name)] == 1:
            return f"{ds.name} [{Path(ds.source).parent.name}]"
        return dataset_name(ds.source)

    return [replace(ds, name=distinct(ds)) if ds.shape in ("inspect", "lm_eval") and taken[ds.name] > 1
            and ds.source not in ("<stdin>", "-") else ds for ds in datasets]


def _refuse_saved_fits(paths: Sequence[Path]) -> None:
    saved = next((p for p in paths if is_fit_name(p)), None)
    if saved is not None:
        from .promptfoo import yaml_output

        if yaml_output(saved):
            raise InputError(str(saved), "promptfoo results written as YAML (promptfoo eval -o results.yaml): write them as "
                                         "JSON (promptfoo eval -o results.json or results.jsonl) and give that file")
        raise InputError(str(saved), f"this looks like a saved fit, not judgment data; show it with `betaconform report {saved}`")


class ReadInputs:
    """Inputs already read (data in memory: memory.py), offered as PendingInputs offers files."""

    def __init__(self, datasets: list[Dataset]):
        self.datasets = datasets
        self.failed: list[tuple[str, InputError]] = []  # (dataset name, its error)

    works_meanwhile = False

    def result(self) -> list[Dataset]:
        return self.datasets


def begin_read(arguments: Any, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS,
               parent_share: float = 1.0, name: str | None = None, need_labels: bool = True,
               vocabulary: bool = True, batch: bool = False) -> PendingInputs | ReadInputs:
    """Expand the arguments and start reading (see PendingInputs). `arguments`: paths (a str or Path, or a
    sequence of them: files, folders, globs, '-'), or data in memory (a pandas or polars DataFrame, an Arrow table,
    a list of dicts; memory.py), whose dataset is called `name` (default "data"; a file's dataset is its stem).
    `need_labels`, `vocabulary`: the checks every dataset passes (checks.py), for files and data in memory alike.
    `batch`: with several inputs, one that is bad input (InputError) fails alone: the others are read and the
    errors kept in the result's `failed` (every input bad: the first one's error is raised)."""
    from .checks import check_datasets
    from .memory import as_arguments, in_memory, read_memory

    if opts.record.cluster_field is not None and keep is Keep.COUNTS:
        keep = Keep.ITEMS  # a cluster is a per-item key: the items are kept to carry it (checks.check_clusters)
    if in_memory(arguments) is not None:
        from .slices import apply

        return ReadInputs(apply(check_datasets(read_memory(arguments, opts, keep, name), need_labels, vocabulary, opts),
                                opts.record.by))
    left_out: list[str] = []
    args = as_arguments(arguments)
    missing: list[tuple[str, InputError]] = []
    if batch and len(args) > 1:  # an argument that names nothing readable (no such file) is one bad input too
        paths = []
        for arg in args:
            try:
                paths += expand_paths([arg], left_out)
            except InputError as exc:
                from .dataset import dataset_name

                missing.append((dataset_name(arg), exc))
        if not paths:
            raise missing[0][1]
        paths = unique_paths(paths)  # as expand_paths does over all the arguments at once
    else:
        paths = expand_paths(args, left_out)
    _refuse_saved_fits(paths)
    pending = PendingInputs(paths, opts, keep, parent_share, left_out, need_labels, vocabulary, batch or bool(missing))
    pending.failed += missing
    return pending


def read_inputs(arguments: Any, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS,
                name: str | None = None, need_labels: bool = True, vocabulary: bool = True) -> list[Dataset]:
    """Every dataset the arguments name (paths, or data in memory: begin_read), validated (checks.py: `need_labels`
    False reads a file of unlabeled items only; `vocabulary` False leaves gold and verdicts that share no class to
    the caller); InputError names the file, the line or row, and the field."""
    return begin_read(arguments, opts, keep, name=name, need_labels=need_labels, vocabulary=vocabulary).result()


def read_batch(arguments: Any, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS, need_labels: bool = True,
               vocabulary: bool = True) -> tuple[list[Dataset], tuple[tuple[str, InputError], ...]]:
    """read_inputs for the commands that report each input on its own (score, fit, judges, doctor): the datasets
    read, and (dataset name, InputError) of each input that is bad (begin_read's `batch`; every input bad raises
    the first's error)."""
    pending = begin_read(arguments, opts, keep, need_labels=need_labels, vocabulary=vocabulary, batch=True)
    datasets = pending.result()
    return datasets, tuple(pending.failed)


def read_dataset(path: str | Path, opts: InputOptions = InputOptions(), keep: Keep = Keep.COUNTS,
                 need_labels: bool = True) -> Dataset:
    """The one dataset of one input file (or '-'); InputError when it holds several."""
    from .checks import check_datasets

    found = read_path(Path(path), opts, keep)
    if len(found) != 1:
        raise InputError(str(path), f"holds {len(found)} datasets; read it with read_inputs")
    return check_datasets(found, need_labels, opts=opts)[0]
