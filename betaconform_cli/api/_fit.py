"""`fit` and `report`: error tables from labeled items, and from saved fits."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import P0, P1, P2, FitWarning, InputError, ParameterError
from ..gate import Gate
from ..inputs import Dataset, InputOptions, Keep, begin_read
from ..seeds import check_seed, generator
from ..settings import FitSettings
from ._common import Progress, SaveTo, skip_note

if TYPE_CHECKING:
    from ..embeddings import EmbedOptions
    from ..fit import FitResult
    from ..gate import GateCheck
    from ..report.fit import FitReport
    from ..report.slices import SlicesReport
    from ..slicing import SliceFigure


def _fit_one(ds: Dataset, settings: FitSettings, seed: int, notes: list[str], unlabeled: bool = True) -> FitResult:
    notes += skip_note(ds)
    if ds.clusters is not None:
        notes.append(f"{ds.source}: {ds.n_items} labeled items in {ds.clusters.clusters} clusters (epochs or the cluster field): the interval "
                     "counts the items' effective number, items / design effect")
    if ds.clusters is not None and ds.unlabeled_items and unlabeled:  # the vote split takes items as independent
        notes.append(f"{ds.source}: {ds.unlabeled_items} unlabeled item(s) not used: the items are clustered "
                     "and the estimate from unlabeled verdicts takes them as independent")
        unlabeled = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FitWarning)
        if ds.votes is None:  # correctness only, no verdicts: analyse_with_votes would return analyse's result as is
            from ..fit import analyse

            result = analyse(ds.table, settings, generator(seed), clusters=ds.clusters)
        else:
            from ..votes import analyse_with_votes

            result = analyse_with_votes(ds.table, ds.votes, settings, generator(seed), unlabeled, ds.clusters)
    notes += [f"warning: {ds.source}: {w.message}" for w in caught if issubclass(w.category, FitWarning)]
    est = result.unlabeled
    if est is not None and not est.used_unlabeled and unlabeled:
        notes.append(f"{ds.source}: {est.unlabeled_items} unlabeled item(s) not used: {est.reason}")
    return result


def _fit_or_fail(ds: Dataset, settings: FitSettings, seed: int, notes: list[str], unlabeled: bool,
                 failed: list[tuple[str, InputError]], read: int) -> FitResult | None:
    """_fit_one, or None with the input's InputError added to `failed` when it is one of several (`read` datasets
    read, besides those failed already); alone, the error is raised."""
    try:
        return _fit_one(ds, settings, seed, notes, unlabeled)
    except InputError as exc:
        if read + len(failed) < 2:
            raise
        failed.append((ds.name, exc))
        return None


def fit(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), settings: FitSettings = FitSettings(), seed: int = 0,
    gate: Gate | None = None, chart: bool = True, save: SaveTo = SaveTo(), embed: EmbedOptions | None = None,
    progress: Progress | None = None, unlabeled: bool = True, adjust: str | None = None,
) -> FitReport | SlicesReport:
    """Fit every input and return its error table beside the baselines (and the gate's verdict). Items without gold
    count too (`unlabeled=False`: labels only): their verdicts inform the estimate where the labels vouch for it
    (votes.analyse_with_votes).

    progress(done, total, what): after each dataset (a folder of many files can take a while). With
    `opts.record.by` (--by), the error table of each slice, intervals and gate adjusted by `adjust` (docs/SLICES.md)."""
    check_seed(seed)
    adjust = _slice_options(opts, adjust, save, embed)
    _check_embed(embed, save)
    pending = _begin_read(arguments, opts, embed)
    from ..failed_inputs import failure_documents
    from ..fit_document import fit_document
    from ..report.failed import with_failures
    from ..report.fit import FitReport, saved_document

    datasets, failed = pending.result(), list(pending.failed)  # bad inputs fail alone (failed_inputs.py)
    from ..mixtures import fitted_counts

    if opts.record.by is not None:
        sliced = _fit_slices(datasets, opts.record.by, adjust, settings, seed, gate, chart, unlabeled)
        return with_failures(sliced, failure_documents("fit", failed))
    targets = save.targets([ds.name for ds in datasets] + [name for name, _ in failed])[:len(datasets)] if save else []
    docs, checks, counts, notes = [], [], [], list[str]()
    saves: list[tuple[Path, dict[str, Any]]] = []
    embedder = None
    for i, ds in enumerate(datasets):
        result = _fit_or_fail(ds, settings, seed, notes, unlabeled, failed, len(datasets))
        if result is None:
            continue
        check = gate.check(ds.name, result.rows, ds.most_judges) if gate is not None else None
        if check is not None and check.beyond:  # said even when it passes: a gate on the model alone is never silent
            notes.append(f"{ds.source}: the gate's k={check.k} is beyond the {check.beyond} judges any item has: "
                         "extrapolated by the model (docs/EXTRAPOLATION.md)")
        doc = fit_document("fit", ds.name, ds.source, ds.table, result.record(), seed, ds.skipped, check, unlabeled=ds.unlabeled_items)
        docs.append(doc)
        counts.append(fitted_counts(ds.table.histogram_by_judges(), result.fit.mixture))
        checks += [check] if check is not None else []
        if progress is not None:
            progress(i + 1, len(datasets), f"fit: {ds.name}")
        if targets:
            vector = None
            if embed is not None:
                from .. import embeddings

                embedder = embedder or embeddings.embedder_for(embed)
                vector = embeddings.dataset_embedding(embedder, ds)
            saves.append((targets[i], saved_document(doc, vector)))
    if failed and not docs:
        raise failed[0][1]
    return with_failures(FitReport(tuple(docs), tuple(checks), chart, tuple(notes), tuple(saves), tuple(counts)),
                         failure_documents("fit", failed))


def _begin_read(arguments: Sequence[str], opts: InputOptions, embed: EmbedOptions | None) -> Any:
    """Start reading: a big file's workers count now, while this process imports the fitting code and the output's
    modules, then counts an equal share itself (parent_share 1, the default: with no scipy to import the parent's
    extra work is small; on the 1M-item file 0.2, 0.5, 0.75, 1.0, 1.25 and 1.5 gave 0.65, 0.58, 0.53, 0.50, 0.52 and
    0.54 s: docs/SPEED.md). Nothing is imported before the fork that the workers do not need."""
    pending = begin_read(arguments, opts, Keep.ITEMS if embed is not None else Keep.COUNTS, batch=True)
    if pending.works_meanwhile:  # else read first: a refused file then never pays for the fit's import
        # the module betaconform_cli.fit by its dotted name: `from .. import fit` is the package's attribute `fit`,
        # the library's function (betaconform_cli/__init__.py), which imported nothing and left it to the tail
        importlib.import_module("betaconform_cli.fit")
    return pending


def _check_embed(embed: EmbedOptions | None, save: SaveTo) -> None:
    """--embed adds the mean embedding to a saved fit: it needs one, and its backend."""
    if embed is not None and not save:
        raise ParameterError(("embed", "save", "save_dir"), f"{P0} adds the mean embedding to a saved fit: add {P1} FILE or {P2} DIR")
    if embed is not None:
        from ..embeddings import require_backend

        require_backend(embed.model)


def _slice_options(opts: InputOptions, adjust: str | None, save: SaveTo, embed: EmbedOptions | None) -> str:
    """--by's adjustment (api/_slices.adjustment), and no saved fit with it (a saved fit is of a whole input)."""
    if opts.record.by is None and adjust is None:
        return "holm"  # unused without slices; the slices' module (~7 ms of imports) is not loaded before the read
    from ._slices import adjustment

    if opts.record.by is not None and (save or embed is not None):
        raise ParameterError(("by", "save", "save_dir"), f"{P0} reports slices; a saved fit is of a whole input: drop {P1}/{P2}")
    return adjustment(opts.record.by, adjust)


def _fit_slices(datasets: Sequence[Dataset], by: str, adjust: str, settings: FitSettings, seed: int, gate: Gate | None,
                chart: bool, unlabeled: bool) -> SlicesReport:
    """fit --by: each slice's error table at the adjusted level, its gate decided by `adjust` (api/_slices.py)."""
    from dataclasses import replace

    from ..fit_document import fit_document
    from ..mixtures import fitted_counts
    from ..report.fit import FitReport
    from ..report.slices import SlicesReport
    from ._slices import SliceJob, gated_name, run, statement

    def compute(ds: Dataset, level: float) -> tuple[FitResult, GateCheck | None, tuple[str, ...]]:
        said: list[str] = []  # the fit's warnings and notes (its skip notes are said once, below)
        result = _fit_one(ds, replace(settings, confidence_level=level), seed, said, unlabeled)
        said = [n.replace(f"{ds.source}:", f"{ds.source} ({ds.name}):", 1) for n in said if n not in skip_note(ds)]
        return result, (gate.check(ds.name, result.rows, ds.most_judges) if gate is not None else None), tuple(said)

    job = SliceJob(compute, (lambda r: bool(r[1] and r[1].passed)) if gate is not None else None,
                   lambda r, ds: _fit_figure(r[0], ds, gate), lambda r: r[1].line() if r[1] is not None else "")
    found = run(datasets, job, settings.confidence_level, adjust)
    notes = [n for ds in datasets for n in skip_note(ds)]
    docs, checks, counts = [], [], []
    for _, runs in found:
        for r in runs:
            result = r.shown[0]
            notes += r.shown[2]
            check = r.gated[1] if r.gated is not None else None
            check = replace(check, dataset=gated_name(check.dataset, r.alpha)) if check is not None else None
            ds = r.dataset
            docs.append(fit_document("fit", ds.name, ds.source, ds.table, result.record(), seed, ds.skipped, check,
                                     unlabeled=ds.unlabeled_items))
            counts.append(fitted_counts(ds.table.histogram_by_judges(), result.fit.mixture))
            checks += [check] if check is not None else []
    inner = FitReport(tuple(docs), tuple(checks), chart, (), (), tuple(counts))
    return SlicesReport("fit", by, adjust, settings.confidence_level, statement(by, adjust, settings.confidence_level),
                        tuple(f for f, _ in found), inner, tuple(notes))


def _fit_figure(result: FitResult, ds: Dataset, gate: Gate | None) -> SliceFigure | None:
    """A slice's headline: the error at the gate's k, else at the largest odd k within the data."""
    from ..slicing import SliceFigure

    rows = list(result.rows)
    most = ds.most_judges
    k = gate.at_k if gate is not None else max((r.k for r in rows if r.k % 2 == 1 and r.k <= most), default=rows[0].k)
    row = next((r for r in rows if r.k == k), None)
    if row is None:
        return None
    return SliceFigure(what=f"majority-vote error at k={k}", estimate=float(row.estimate), low=float(row.low),
                       high=float(row.high))


def report(paths: Sequence[str], gate: Gate | None = None, chart: bool = True) -> FitReport:
    """The saved fits' tables, as `fit` printed them (and the gate's verdict)."""
    from ..fit_document import report_document
    from ..mixtures import fitted_counts
    from ..report.fit import FitReport
    from ..savedfit import expand_fits, load_fit

    docs = []
    checks = []
    counts = []
    for p in expand_fits(paths):
        saved = load_fit(p)  # parsed and checked once: the typed saved fit
        check = gate.check(saved.dataset, saved.error_rates, saved.judges or 0) if gate is not None else None
        docs.append(report_document(saved, str(p), check))
        counts.append(fitted_counts(saved.histogram, saved.model.mixture()))
        checks += [check] if check is not None else []
    return FitReport(tuple(docs), tuple(checks), chart, counts=tuple(counts))

