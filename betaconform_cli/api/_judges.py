"""`doctor` (how each input is read) and `judges` (which judges, and how many)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..choices import JUDGES_CSV_TABLES
from ..errors import P0, InputError, ParameterError, UsageError, quote, quote_all
from ..failed_inputs import failure_documents
from ..inputs import InputOptions, Keep, read_batch
from ..parameters import CONFIDENCE_LEVEL
from ..seeds import check_seed
from ._common import Progress, skip_note, unlabeled_only_judges

if TYPE_CHECKING:
    from ..inputs import Dataset
    from ..judges.analysis import JudgesRequest
    from ..judges.document import JudgesDocument
    from ..report.doctor import DoctorReport
    from ..report.judges import JudgesReport
    from ..report.slices import SlicesReport


def doctor(arguments: Sequence[str], opts: InputOptions = InputOptions()) -> DoctorReport:
    """How each input is read (format, column roles, items, judges, skipped rows), without fitting anything."""
    from ..doctor import doctor_document
    from ..report.doctor import DoctorReport
    from ..report.failed import with_failures

    datasets, failed = read_batch(arguments, opts, Keep.JUDGMENTS, need_labels=False, vocabulary=False)  # shown, then refused
    report = DoctorReport(tuple(doctor_document(ds) for ds in datasets), tuple(n for ds in datasets for n in ds.left_out))
    return with_failures(report, failure_documents("doctor", failed))


def judges(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), ks: Sequence[int] | None = None,
    confidence_level: float = CONFIDENCE_LEVEL, seed: int = 0, ensemble: Sequence[str] | None = None,
    costs: dict[str, float] | None = None, max_error: float | None = None, population: int | None = None,
    progress: Progress | None = None, unlabeled: bool = True, positive: str | None = None,
    csv_table: str = "ensembles", adjust: str | None = None,
) -> JudgesReport | SlicesReport:
    """Per-judge accuracy, shared mistakes, and the ensemble to run for each k (named judges; docs/JUDGES.md).
    Items with verdicts and no gold count too (`unlabeled=False`: labels only): in the ensembles' errors, and in
    the per-judge figures and the pick where the labels vouch for their verdicts (judges/every.py). With verdicts
    (not correctness alone): each judge's agreement with the gold and the panel's among themselves (judges/gold.py;
    `positive` the pass class, bootstrap draws from `seed`); `csv_table` which table -f csv writes ("ensembles" or
    "agreement"). With `opts.record.by` (--by), each slice's, intervals and the --max-error gate adjusted by `adjust`
    (docs/SLICES.md)."""
    from ..judges.analysis import JudgesRequest
    from ..report.failed import with_failures
    from ..report.judges import JudgesReport

    check_seed(seed)
    from ._slices import adjustment

    adjust = adjustment(opts.record.by, adjust)
    if csv_table not in JUDGES_CSV_TABLES:
        raise ParameterError("csv_table", f"must be one of {', '.join(JUDGES_CSV_TABLES)}; got {csv_table!r}")
    request = JudgesRequest(ks, confidence_level, ensemble, costs, max_error, population, unlabeled)
    docs = []
    notes: list[str] = []
    datasets, read_failed = read_batch(arguments, opts, Keep.JUDGMENTS)  # a bad input among several fails alone
    failed = list(read_failed)
    if opts.record.by is not None:
        sliced = _judges_slices(datasets, opts.record.by, adjust, request, seed, positive, csv_table)
        return with_failures(sliced, failure_documents("judges", failed))
    for ds in datasets:
        notes += skip_note(ds)
        try:
            docs.append(_judges_one(ds, request, seed, positive, notes, progress))
        except InputError as exc:  # this input fails alone (a counts file has no per-judge verdicts)
            if len(datasets) + len(read_failed) < 2:
                raise
            failed.append((ds.name, exc))
    if failed and not docs:
        raise failed[0][1]
    return with_failures(JudgesReport(tuple(docs), tuple(notes), csv_table), failure_documents("judges", failed))


def _judges_one(ds: Dataset, request: JudgesRequest, seed: int, positive: str | None, notes: list[str],
                progress: Progress | None = None) -> JudgesDocument:
    """One input's (or slice's) judges document at `request.confidence_level`."""
    import numpy as np

    from ..judges import analyse_judges
    from ..judges.analysis import DATA_SEEDED, data_seed
    from ..judges.document import judges_document
    from ..judges.gold import MAX_CLASSES, votes_agreement

    ensemble, costs, max_error, confidence_level = request.ensemble, request.costs, request.max_error, request.confidence_level
    unlabeled = request.use_unlabeled
    notes += _unchecked_judges(ds, ensemble, costs)
    if len(ds.judge_names) < 2:
        raise InputError(ds.source, f"needs at least 2 named judges; found {len(ds.judge_names)} (counts carry no "
                                    "per-judge verdicts; `fit` works on them)")
    notes += _unpriced_note(ds.name, ds.judge_names, costs, max_error)
    matrix = ds.judgment_matrix()
    label = f"{ds.name}: "
    step = None if progress is None else (lambda done, total, what, _l=label: progress(done, total, _l + what))
    try:
        # common random numbers: the model's draws are seeded by the labels themselves, so the same data gives
        # the same ensembles, intervals and --max-error outcome for any line order and any --seed (data_seed)
        rng = np.random.default_rng(data_seed(matrix, ds.judge_names))
        clusters = None if ds.clusters is None else ds.clusters.cluster  # epochs: one cluster a sample
        if clusters is not None:
            notes.append(f"{ds.source}: {ds.n_items} labeled items in {ds.clusters.clusters} clusters (epochs or the cluster field): "  # type: ignore[union-attr]
                         "intervals count effective items; unlabeled items not used")
        result = analyse_judges(matrix, ds.judge_names, request, rng, ds.votes, progress=step, clusters=clusters)
        agreement = None
        if ds.votes is not None and set(result.names) <= set(ds.votes.judges):
            if len(ds.votes.classes) > MAX_CLASSES:
                notes.append(f"{ds.source}: agreement with the gold left out: {len(ds.votes.classes)} verdict classes "
                             f"(at most {MAX_CLASSES}; free-text verdicts are each a class)")
            else:
                agreement = votes_agreement(ds.votes, result.names, result.pairs, confidence_level,
                                            np.random.default_rng(seed), positive, unlabeled)
    except ParameterError as exc:  # the option, and the file it was checked against
        raise ParameterError(exc.params, ds.source + ": " + exc.template) from None
    except UsageError as exc:
        raise UsageError(f"{ds.source}: {exc}") from None
    return judges_document(ds.name, ds.source, seed, result, DATA_SEEDED, agreement)


def _judges_slices(datasets: Sequence[Dataset], by: str, adjust: str, request: JudgesRequest, seed: int,
                   positive: str | None, csv_table: str) -> SlicesReport:
    """judges --by: each slice's judges at the adjusted level; --max-error's gate decided by `adjust` (api/_slices.py)."""
    from dataclasses import replace

    import msgspec

    from ..report.judges import JudgesReport
    from ..report.slices import SlicesReport
    from ..slicing import SliceFigure
    from ._slices import SliceJob, run, statement

    def compute(ds: Dataset, level: float) -> tuple[JudgesDocument, tuple[str, ...]]:
        said: list[str] = []
        return _judges_one(ds, replace(request, confidence_level=level), seed, positive, said), tuple(said)

    def figure(r: tuple[JudgesDocument, tuple[str, ...]], ds: Dataset) -> SliceFigure | None:
        e = max(r[0].ensembles, key=lambda e: e.k, default=None)
        if e is None:
            return None
        return SliceFigure(what="error of the best ensemble at the largest k", estimate=float(e.estimate),
                           low=float(e.low), high=float(e.high))

    gated = request.max_error is not None
    job = SliceJob(compute, (lambda r: bool(r[0].cost is not None and r[0].cost.met)) if gated else None, figure,
                   lambda r: _cost_line(r[0]))
    found = run(datasets, job, request.confidence_level, adjust)
    notes = [n for ds in datasets for n in skip_note(ds)]
    docs = []
    for _, runs in found:
        for r in runs:
            doc, said = r.shown
            notes += said
            if r.gated is not None:
                doc = msgspec.structs.replace(doc, cost=r.gated[0].cost)
            docs.append(doc)
    return SlicesReport("judges", by, adjust, request.confidence_level, statement(by, adjust, request.confidence_level),
                        tuple(f for f, _ in found), JudgesReport(tuple(docs), (), csv_table), tuple(notes))


def _cost_line(d: JudgesDocument) -> str:
    """A slice's --max-error gate in one line (the cheapest ensemble's upper bound against the limit)."""
    c = d.cost
    if c is None:
        return ""
    return f"{'ok' if c.met else 'FAIL'} {d.dataset}: cheapest ensemble's upper bound {100 * c.high:.2f}% (limit {100 * c.max_error:.2f}%)"


def _unpriced_note(name: str, judges: Sequence[str], costs: Mapping[str, float] | None, max_error: float | None) -> list[str]:
    """Prices for some judges only: the cheapest ensemble is sought among the priced ones (docs/JUDGES.md, "Costs"),
    and the others are named, never left out in silence (the cost table lists them too)."""
    if not costs or max_error is None:
        return []
    unpriced = [j for j in judges if j not in costs]
    if not unpriced:
        return []
    return [f"{quote(name)}: --cost prices {len(judges) - len(unpriced)} of {len(judges)} judges; the cheapest ensemble is "
            f"chosen among those, leaving out {quote_all(unpriced)} (give a judge a price, 0 if free, to include it)"]


def _unchecked_judges(ds: Any, ensemble: Sequence[str] | None, costs: Mapping[str, float] | None) -> list[str]:
    """Notes on judges seen only on unlabeled items (kept in the votes; no gold label checks them); naming one in
    --ensemble or --cost is a ParameterError that says so, not "unknown judge"."""
    unchecked = unlabeled_only_judges(ds)
    named = [j for j in [*(ensemble or ()), *(costs or {})] if j in unchecked]
    if named:
        raise ParameterError("ensemble" if named[0] in (ensemble or ()) else "costs",
                             f"{ds.source}: {P0}: judge {named[0]!r} gave verdicts only on unlabeled items (no gold "
                             "label checks it); label some of the items it judged")
    return [f"{ds.source}: judge {j!r} gave verdicts only on unlabeled items: kept in the votes, but no gold label "
            "checks it, so it has no accuracy here; label some of the items it judged" for j in unchecked]
