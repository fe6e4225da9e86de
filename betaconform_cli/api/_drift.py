"""`drift`: have the same judges changed between two runs (judges/drift.py; docs/DRIFT.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InputError, ParameterError
from ..inputs import Dataset, InputOptions, Keep, read_inputs
from ..settings import check_seed
from ._common import skip_note

if TYPE_CHECKING:
    from ..report.drift import DriftReport


def _one(argument: str, opts: InputOptions, which: str) -> Dataset:
    """The run in `argument`: one dataset that carries verdicts."""
    datasets = read_inputs([argument], opts, Keep.ITEMS)
    if len(datasets) != 1:
        raise ParameterError(which, f"is one run (one file or one dataset); {argument} holds {len(datasets)}")
    ds = datasets[0]
    if ds.votes is None:
        raise InputError(ds.source, "carries no verdicts: drift compares what each judge said on every item, labeled or "
                                    f"not (JSON Lines '{opts.record.verdicts_field}' with '{opts.record.label_field}' on "
                                    "some items; tables --verdict-col with --gold-col)")
    return ds


def _runs(old: Dataset, new: Dataset) -> tuple[tuple[str, ...], int, Any, Any, list[str]]:
    """(judges in both, classes, old Run, new Run, notes): judges matched by name, classes by their text."""
    import numpy as np

    from ..judges.drift import Run

    vo, vn = old.votes, new.votes
    assert vo is not None and vn is not None
    names = tuple(n for n in vo.judges if n in vn.judges)
    notes = [f"{ds.source}: judge {n!r} is not in the other run; left out"
             for ds, v, other in ((old, vo, vn), (new, vn, vo)) for n in v.judges if n not in other.judges]
    if len(names) < 2:
        raise InputError(f"{old.source} and {new.source}", f"share {len(names)} judge(s) by name; drift needs at least 2 "
                                                           "judges in both runs")
    classes = list(vo.classes) + [c for c in vn.classes if c not in vo.classes]
    runs = []
    for v in (vo, vn):
        code = np.array([classes.index(c) for c in v.classes] + [-1], dtype=np.int64)  # code -1 stays -1
        verdicts, gold = v.per_item()
        cols = [v.judges.index(n) for n in names]
        runs.append(Run(code[np.asarray(verdicts)[:, cols]], code[np.asarray(gold)], v.ids))
    return names, max(len(classes), 2), runs[0], runs[1], notes


def drift(old: str, new: str, opts: InputOptions = InputOptions(), confidence_level: float = 0.9,
          max_change: float = 0.0, permutations: int = 999, seed: int = 0, fail_on_drift: bool = False) -> DriftReport:
    """Per judge and for the panel: the change of accuracy on the labels (paired on shared items, else unpaired)
    and a label-free test of the vote patterns; with `fail_on_drift`, exit 1 when anything drifted."""
    import numpy as np

    from ..judges.drift import check_options
    from ..judges.drift import drift as core
    from ..judges.drift_document import DriftSettings, RunSummary, drift_document
    from ..report.drift import DriftReport

    check_seed(seed)
    check_options(confidence_level, max_change, permutations)
    a, b = _one(old, opts, "old"), _one(new, opts, "new")
    names, classes, run_a, run_b, notes = _runs(a, b)
    for r, ds in ((run_a, a), (run_b, b)):
        if r.ids is not None and len(set(r.ids)) != len(r.ids):
            raise InputError(ds.source, f"repeats an item id ('{opts.record.id_field}'); drift pairs the runs' items by id")
    result = core(run_a, run_b, names, classes, confidence_level, max_change, permutations, np.random.default_rng(seed))
    settings = DriftSettings(confidence_level=confidence_level, false_alarm=round(1 - confidence_level, 12),
                             max_change=max_change, permutations=permutations, seed=seed)
    summaries = tuple(RunSummary(source=ds.source, items=len(r.gold), labeled_items=r.labeled)
                      for ds, r in ((a, run_a), (b, run_b)))
    doc = drift_document((summaries[0], summaries[1]), (a.name, b.name), result, settings, fail_on_drift)
    return DriftReport(doc, tuple(skip_note(a) + skip_note(b) + notes))
