"""`drift`: have the same judges changed between two runs (judges/drift.py; docs/DRIFT.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from os import PathLike
from typing import TYPE_CHECKING, Any

from ..errors import P0, P1, InputError, ParameterError, UsageError
from ..inputs import Dataset, InputOptions, Keep, read_inputs
from ..parameters import DRIFT_CONFIDENCE_LEVEL
from ..seeds import check_seed
from ._common import no_clusters, skip_note

if TYPE_CHECKING:
    import numpy as np

    from ..inputs.dataset import Votes
    from ..judges.drift import Run
    from ..report.drift import DriftReport


def _one(argument: Any, opts: InputOptions, which: str) -> Dataset:
    """The run in `argument` (a path, or data in memory: inputs.read_inputs): one dataset that carries verdicts."""
    datasets = read_inputs(argument, opts, Keep.ITEMS, need_labels=False)  # the label-free test needs none
    if len(datasets) != 1:
        what = argument if isinstance(argument, (str, PathLike)) else "the data given"
        raise ParameterError(which, f"is one run (one file or one dataset); {what} holds {len(datasets)}")
    ds = datasets[0]
    if ds.votes is None:
        raise InputError(ds.source, "carries no verdicts: drift compares what each judge said on every item, labeled or "
                                    f"not (JSON Lines '{opts.record.verdicts_field}' with '{opts.record.label_field}' on "
                                    "some items; tables --verdict-col with --gold-col)")
    return ds


def _run(votes: Votes, names: tuple[str, ...], classes: list[str], rows: np.ndarray | None = None) -> Run:
    """The votes' items (all, or those in `rows`) as a Run: judges in `names`' order, class codes into `classes`."""
    import numpy as np

    from ..judges.drift import Run

    code = np.array([classes.index(c) for c in votes.classes] + [-1], dtype=np.int64)  # code -1 stays -1
    verdicts, gold = votes.per_item()
    cols = [votes.judges.index(n) for n in names]
    ids = votes.ids
    if rows is not None:
        verdicts, gold = verdicts[rows], gold[rows]
        ids = None if ids is None else tuple(ids[i] for i in rows)
    return Run(code[np.asarray(verdicts)[:, cols]], code[np.asarray(gold)], ids)


def _look_alike(name: str, others: Sequence[str]) -> str:
    """", whose 'x' looks alike (...)" when a judge of the other run is this name as a reader sees it (a hyphen or a
    letter of another script, an invisible character: inputs.values.seen), so that the note says why it was not
    matched; empty otherwise."""
    from ..inputs.values import hidden, seen

    key = seen(name).strip()
    twin = next((o for o in others if seen(o).strip() == key), None)
    if twin is None:
        return ""
    odd = hidden(name) or hidden(twin)
    return f", whose {twin!r} looks alike{odd}: write the name one way in both"


def _two_runs(old: Dataset, new: Dataset) -> tuple[tuple[str, ...], int, Run, Run, list[str]]:
    """(judges in both, classes, old Run, new Run, notes): judges matched by name, classes by their text."""
    vo, vn = old.votes, new.votes
    assert vo is not None and vn is not None
    names = tuple(n for n in vo.judges if n in vn.judges)
    notes = [f"{ds.source}: judge {n!r} is not in the other run{_look_alike(n, other.judges)}; left out"
             for ds, v, other in ((old, vo, vn), (new, vn, vo)) for n in v.judges if n not in other.judges]
    if len(names) < 2:
        raise InputError(f"{old.source} and {new.source}", f"share {len(names)} judge(s) by name; drift needs at least 2 "
                                                           "judges in both runs")
    classes = list(vo.classes) + [c for c in vn.classes if c not in vo.classes]
    return names, max(len(classes), 2), _run(vo, names, classes), _run(vn, names, classes), notes


def _before(times: Sequence[str], split_at: str) -> np.ndarray:
    """Which items come before `split_at`: as numbers when every time and `split_at` read as one, else as text
    (ISO 8601 dates and times sort as text)."""
    import numpy as np

    try:
        return np.array([float(t) for t in times]) < float(split_at)
    except ValueError:
        return np.array([str(t) < split_at for t in times])


def _split_runs(ds: Dataset, time_field: str, split_at: str) -> tuple[tuple[str, ...], int, Run, Run, list[str]]:
    """One input cut at `split_at` of its `time_field`: the items before are the old run, the others the new."""
    import numpy as np

    votes = ds.votes
    assert votes is not None
    if votes.clusters is None:
        raise InputError(ds.source, f"--time-field '{time_field}' is read from JSON Lines, trace stores' exports and Ragas "
                                    f"results only (this input is {ds.shape}); write one line per item with its time in a "
                                    "field, or give two files")
    before = _before(votes.clusters, split_at)
    if before.all() or not before.any():
        side = "before" if before.all() else "at or after"
        raise InputError(ds.source, f"every item's '{time_field}' is {side} --split-at {split_at}; one of the two runs would "
                                    "be empty")
    names = votes.judges
    if len(names) < 2:
        raise InputError(ds.source, f"has {len(names)} judge(s); drift needs at least 2")
    classes = list(votes.classes)
    old = _run(votes, names, classes, np.flatnonzero(before))
    new = _run(votes, names, classes, np.flatnonzero(~before))
    return names, max(len(classes), 2), old, new, []


def _read(old: Any, new: Any, opts: InputOptions, time_field: str | None, split_at: str | None) -> tuple[
        tuple[str, ...], int, Run, Run, list[str], tuple[str, str], tuple[str, str]]:
    """(judges, classes, old run, new run, notes, (names), (sources)) from two inputs or one cut in time."""
    if (time_field is None) != (split_at is None):
        raise ParameterError(("time_field", "split_at"), f"{P0} and {P1} go together: the field that says when each item "
                                                         "was judged, and the time that separates the runs")
    if new is None and time_field is None:
        raise UsageError("drift compares two inputs (OLD NEW), or one input cut in time (--time-field and --split-at)")
    if new is not None and time_field is not None:
        raise ParameterError("time_field", f"{P0} cuts one input in two; with two inputs (OLD NEW) leave it out")
    no_clusters(opts, "drift")
    if new is not None:
        a, b = _one(old, opts, "old"), _one(new, opts, "new")
        names, classes, run_a, run_b, notes = _two_runs(a, b)
        return names, classes, run_a, run_b, skip_note(a) + skip_note(b) + notes, (a.name, b.name), (a.source, b.source)
    assert time_field is not None and split_at is not None
    try:  # the time is read as the items' per-item key (the cluster field's one place)
        ds = _one(old, InputOptions(opts.source_format, replace(opts.record, cluster_field=time_field), opts.table,
                                    opts.handling, opts.labels), "old")
    except InputError as exc:
        if not exc.reason.startswith(f"--cluster-field '{time_field}'"):
            raise
        raise InputError(exc.path, f"--time-field '{time_field}' is read from JSON Lines, trace stores' exports and Ragas "
                                   "results only; write one line per item with its time in a field, or give two files") from None
    names, classes, run_a, run_b, notes = _split_runs(ds, time_field, split_at)
    return (names, classes, run_a, run_b, skip_note(ds), (f"{ds.name} before {split_at}", f"{ds.name} from {split_at}"),
            (f"{ds.source} ({time_field} < {split_at})", f"{ds.source} ({time_field} >= {split_at})"))


def drift(old: Any, new: Any = None, opts: InputOptions = InputOptions(), confidence_level: float = DRIFT_CONFIDENCE_LEVEL,
          max_change: float = 0.0, permutations: int = 999, seed: int = 0, fail_on_drift: bool = False,
          time_field: str | None = None, split_at: str | None = None) -> DriftReport:
    """Per judge and for the panel: the change of accuracy on the labels (paired on shared items, else unpaired)
    and a label-free test of the vote patterns; with `fail_on_drift`, exit 1 when anything drifted. Two inputs
    (old, new), or one (old) cut at `split_at` of its `time_field` (items before: the old run); each a path or data in
    memory (inputs.read_inputs)."""
    import numpy as np

    from ..judges.drift import check_options
    from ..judges.drift import drift as core
    from ..judges.drift_document import DriftSettings, RunSummary, drift_document
    from ..report.drift import DriftReport

    check_seed(seed)
    check_options(confidence_level, max_change, permutations)
    names, classes, run_a, run_b, notes, titles, sources = _read(old, new, opts, time_field, split_at)
    for r, source in ((run_a, sources[0]), (run_b, sources[1])):
        if r.ids is not None and len(set(r.ids)) != len(r.ids):
            raise InputError(source, f"repeats an item id ('{opts.record.id_field}'); drift pairs the runs' items by id")
    result = core(run_a, run_b, names, classes, confidence_level, max_change, permutations, np.random.default_rng(seed))
    floor = (len(names) + 1) / (permutations + 1)  # the smallest Holm-adjusted p the permutations can give
    if floor > result.test_alpha * (1 + 1e-9):
        notes.append(f"--permutations {permutations}: the label-free test cannot reject at level {result.test_alpha:g} "
                     f"with {len(names)} judges and the panel (its smallest Holm-adjusted p is {floor:.3g}); "
                     f"use at least {math.ceil(round((len(names) + 1) / result.test_alpha, 9)) - 1}")
    settings = DriftSettings(confidence_level=confidence_level, false_alarm=round(1 - confidence_level, 12),
                             interval_level=round(result.interval_level, 12), test_alpha=round(result.test_alpha, 12),
                             max_change=max_change, permutations=permutations, seed=seed)
    summaries = tuple(RunSummary(source=src, items=len(r.gold), labeled_items=r.labeled)
                      for src, r in zip(sources, (run_a, run_b), strict=True))
    doc = drift_document((summaries[0], summaries[1]), titles, result, settings, fail_on_drift)
    return DriftReport(doc, tuple(notes))
