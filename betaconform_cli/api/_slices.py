"""`--by`: a command's numbers per slice (docs/SLICES.md). Each slice is a dataset of its own (inputs/slices.py),
computed by the command's own per-dataset function at the adjusted level (slicing.py), so a slice's numbers are
those of the command on a file of the slice's items alone, at that level."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import P0, P1, InputError, ParameterError
from ..inputs import Dataset
from ..slicing import (
    MIN_LABELED,
    SliceEntry,
    SliceFamily,
    SliceFigure,
    SliceGate,
    check_adjust,
    interval_level,
    step_down,
    step_up,
)

R = TypeVar("R")


@dataclass(frozen=True)
class SliceJob(Generic[R]):
    """What a command does with one slice: its result at a level, whether that passes the command's gate (None: no
    gate), its headline number and its gate's line."""

    compute: Callable[[Dataset, float], R]
    passes: Callable[[R], bool] | None
    figure: Callable[[R, Dataset], SliceFigure | None]
    line: Callable[[R], str]


@dataclass(frozen=True)
class SliceRun(Generic[R]):
    """One slice with enough labels: its dataset, its result at the intervals' level, and (gated) the result at the
    level its gate was decided at, with that alpha."""

    dataset: Dataset
    shown: R
    gated: R | None = None
    alpha: float | None = None


def adjustment(by: str | None, adjust: str | None) -> str:
    """The multiplicity rule (`adjust`, default holm); `adjust` without `by` is an error (it would adjust nothing)."""
    if adjust is not None and by is None:
        raise ParameterError(("adjust", "by"), f"{P0} adjusts the slices' intervals and gates; add {P1} FIELD")
    check_adjust(adjust or "holm")
    return adjust or "holm"


def labeled(ds: Dataset) -> int:
    return ds.n_items if ds.votes is None else max(ds.n_items, ds.votes.labeled_items)


def too_few(ds: Dataset) -> str:
    n = labeled(ds)
    return f"too few labels: {n} labeled item{'s' if n != 1 else ''} (a slice needs at least {MIN_LABELED}); not gated"


def families(datasets: Sequence[Dataset]) -> list[list[Dataset]]:
    """The slices of each input (datasets of one parent), inputs in order of reading, slices in slice order."""
    out: dict[str, list[Dataset]] = {}
    for ds in datasets:
        parent = ds.slicing.parent if ds.slicing is not None and ds.slicing.parent else ds.name
        out.setdefault(parent, []).append(ds)
    return list(out.values())


def run(datasets: Sequence[Dataset], job: SliceJob[R], confidence_level: float, adjust: str,
        ) -> list[tuple[SliceFamily, list[SliceRun[R]]]]:
    """Every input's slices: each family's entries (in slice order) and the runs of its slices with enough labels."""
    check_adjust(adjust)
    out = []
    for members in families(datasets):
        eligible = [ds for ds in members if labeled(ds) >= MIN_LABELED]
        failed: dict[str, str] = {}
        while True:  # a slice the command cannot compute (its data) leaves the family, and the rest are redone
            level = interval_level(confidence_level, len(eligible), adjust)
            shown, failed_now = _computed(eligible, job, level)
            if not failed_now:
                break
            failed |= failed_now
            eligible = [ds for ds in eligible if ds.name not in failed_now]
        m = len(eligible)
        runs, rule = _gated(eligible, shown, job, 1 - confidence_level, adjust, level)
        by_name = {r.dataset.name: r for r in runs}
        entries = [_entry(ds, by_name.get(ds.name), job, failed.get(ds.name)) for ds in members]
        first = members[0]
        parent = first.slicing.parent if first.slicing is not None and first.slicing.parent else first.name
        out.append((SliceFamily(parent=parent, source=first.source, m=m, interval_level=level, gate_rule=rule,
                                slices=entries), runs))
    return out


def _computed(eligible: list[Dataset], job: SliceJob[R], level: float) -> tuple[list[R], dict[str, str]]:
    """Each slice's result at `level`, and the slices whose data the command refused (InputError), with why."""
    shown: list[R] = []
    failed: dict[str, str] = {}
    for ds in eligible:
        try:
            shown.append(job.compute(ds, level))
        except InputError as exc:
            failed[ds.name] = f"not computed: {exc.reason}; not gated"
    return shown, failed


def _gated(eligible: list[Dataset], shown: list[R], job: SliceJob[R], alpha: float, adjust: str, level: float,
           ) -> tuple[list[SliceRun[R]], str]:
    """The runs with their gates decided by `adjust`'s procedure, and the rule as words."""
    m = len(eligible)
    if job.passes is None:
        return [SliceRun(ds, r) for ds, r in zip(eligible, shown)], "no gate"
    check = job.passes
    cache: dict[tuple[int, float], R] = {(i, round(1 - level, 15)): r for i, r in enumerate(shown)}

    def at(i: int, a: float) -> R:
        key = (i, round(a, 15))
        if key not in cache:
            cache[key] = job.compute(eligible[i], 1 - a)
        return cache[key]

    def passes(i: int, a: float) -> bool:
        return check(at(i, a))

    if adjust == "holm":
        decided = step_down(m, alpha, passes)
        r = sum(d is not None for d in decided)
        last = alpha / (m - r) if r < m else alpha
        alphas = [d if d is not None else last for d in decided]
        rule = f"Holm's step-down over {m} slices (family-wise error {_pct(alpha)})"
    elif adjust == "bh":
        decided, threshold = step_up(m, alpha, passes)
        alphas = [d if d is not None else threshold for d in decided]
        rule = f"Benjamini-Hochberg's step-up over {m} slices (false discovery rate {_pct(alpha)})"
    else:
        alphas = [alpha] * m
        rule = f"each slice at {_pct(1 - alpha)}, not adjusted for {m} slices"
    return [SliceRun(ds, r, at(i, a), a) for i, (ds, r, a) in enumerate(zip(eligible, shown, alphas))], rule


def _entry(ds: Dataset, run_: SliceRun[Any] | None, job: SliceJob[Any], failed: str | None = None) -> SliceEntry:
    key = ds.slicing.key if ds.slicing is not None and ds.slicing.key is not None else ds.name
    unlabeled = ds.unlabeled_items
    if run_ is None:
        return SliceEntry(key=key, dataset=ds.name, labeled_items=labeled(ds), unlabeled_items=unlabeled,
                          note=failed or too_few(ds))
    gate: Any = None
    if run_.gated is not None and run_.alpha is not None and job.passes is not None:
        gate = SliceGate(passed=job.passes(run_.gated), alpha=round(run_.alpha, 12), line=job.line(run_.gated))
    figure = job.figure(run_.shown, ds)
    if gate is None:
        return SliceEntry(key=key, dataset=ds.name, labeled_items=labeled(ds), unlabeled_items=unlabeled, figure=figure)
    return SliceEntry(key=key, dataset=ds.name, labeled_items=labeled(ds), unlabeled_items=unlabeled, figure=figure, gate=gate)


def gated_name(name: str, alpha: float | None) -> str:
    """A slice's name in its gate's line: with the level its gate was decided at."""
    return name if alpha is None else f"{name} at {_pct(1 - alpha)}"


def _pct(x: float) -> str:
    return f"{100 * x:.4g}%"


def statement(by: str, adjust: str, confidence_level: float) -> str:
    """The adjustment in words, said in every output."""
    alpha = 1 - confidence_level
    how = {"holm": f"intervals at the Bonferroni level 1 - {alpha:g}/m of each input's m slices; gates by Holm's step-down "
                   f"(family-wise error {_pct(alpha)})",
           "bh": f"intervals at the Bonferroni level 1 - {alpha:g}/m of each input's m slices; gates by Benjamini-Hochberg's "
                 f"step-up (false discovery rate {_pct(alpha)})",
           "none": f"not adjusted (--adjust none): each slice at {_pct(confidence_level)}"}[adjust]
    return (f"slices by {by}, sorted by key (numbers by value, then text, (missing) last): {how}; a slice with fewer than "
            f"{MIN_LABELED} labeled items shows no number and is not gated")
