"""`score`: the evaluated system's judge-corrected pass rate, and the difference of two systems."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import P0, P1, InputError, ParameterError
from ..failed_inputs import failure_documents
from ..gate import ScoreCheck, ScoreGate
from ..inputs import Dataset, InputOptions, Keep, read_batch, read_inputs
from ..parameters import CONFIDENCE_LEVEL
from ._common import skip_note

if TYPE_CHECKING:
    from ..report.score import ScoreReport
    from ..report.slices import SlicesReport
    from ..score import ScoreResult
    from ..score.document import CompareDocument

# core parameters that are the data, not an option: an error about them is an error in that input file
_DATA_PARAMS = frozenset({"gold", "verdicts", "counts", "clusters", "ids_a", "ids_b", "verdicts_a", "verdicts_b"})


class _About:
    """Turns the core's errors about one dataset into errors that name its file: the data's as InputError, an
    option's (`positive`) as the same ParameterError prefixed by the file."""

    def __init__(self, source: str):
        self.source = source

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if not isinstance(exc, ParameterError):
            return
        if exc.param in _DATA_PARAMS:
            raise InputError(self.source, exc.render(lambda p: p)) from None
        raise ParameterError(exc.params, self.source + ": " + exc.template) from None


def _votes(ds: Dataset, opts: InputOptions) -> Any:
    """The dataset's verdicts, or an error that says score needs them (correctness-only inputs carry none)."""
    if ds.votes is None:
        raise InputError(ds.source, "carries no verdicts: judgments 0/1, correct counts and counts tables say only "
                                    "whether each judge was right, and score needs what each judge said on every item "
                                    f"(JSON Lines '{opts.record.verdicts_field}' with '{opts.record.label_field}' on some items; "
                                    "tables --verdict-col with --gold-col)")
    return ds.votes


def score(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), positive: str | None = None,
    confidence_level: float = CONFIDENCE_LEVEL, target: str = "set", gate: ScoreGate | None = None, compare: bool = False,
    adjust: str | None = None,
) -> ScoreReport | SlicesReport:
    """The evaluated system's judge-corrected pass rate per input (docs/SCORE.md); with `compare`, the difference
    a - b of two inputs on the items they share, paired by item id. With `opts.record.by` (--by), the pass rate of
    each slice, intervals and gate adjusted by `adjust` (docs/SLICES.md)."""
    core = importlib.import_module("..score", __package__)  # the module: the package's `score` is the library's
    from ..report.failed import with_failures
    from ..report.score import ScoreReport
    from ..score.document import score_document, with_gate

    core.check_options(confidence_level, target)
    from ._slices import adjustment

    adjust = adjustment(opts.record.by, adjust)
    if gate is not None and gate.difference != compare:
        raise ParameterError(("min_score", "compare"), f"{P0} gates a difference only with {P1}, and a score only without it")
    clustered = opts.record.cluster_field is not None
    if compare and opts.record.by is not None:
        raise ParameterError(("by", "compare"), f"{P0} slices one system's score; {P1} is not sliced: drop one of them")
    keep = Keep.ITEMS if compare or clustered else Keep.COUNTS
    datasets, read_failed = (read_inputs(arguments, opts, keep), ()) if compare else read_batch(arguments, opts, keep)
    failed = list(read_failed)
    notes: list[str] = []
    for ds in datasets:  # the items without a verdict are part of score's population (score/strata.py), not skipped
        notes += skip_note(ds, 0 if compare or ds.votes is None else ds.votes.no_verdict_items)
    if opts.record.by is not None:
        sliced = _score_slices(datasets, opts, positive, confidence_level, target, gate, adjust, tuple(notes))
        return with_failures(sliced, failure_documents("score", failed))
    if compare:
        if len(datasets) != 2:
            raise ParameterError("compare", f"compares exactly two inputs (a - b); got {len(datasets)}")
        doc = _compare(datasets[0], datasets[1], opts, positive, confidence_level, target)
        check = gate.check(doc.dataset, doc.difference) if gate is not None else None
        return ScoreReport((with_gate(doc, check),), (check,) if check is not None else (), tuple(notes))
    docs = []
    checks = []
    for ds in datasets:
        try:
            result, check = _score_one(ds, opts, positive, confidence_level, target, gate)
        except InputError as exc:  # this input fails alone (failed_inputs.py); alone, or all of them, it is the error
            if len(datasets) + len(read_failed) < 2:
                raise
            failed.append((ds.name, exc))
            continue
        docs.append(score_document(ds.name, ds.source, result, check))
        checks += [check] if check is not None else []
    if failed and not docs:
        raise failed[0][1]
    return with_failures(ScoreReport(tuple(docs), tuple(checks), tuple(notes)), failure_documents("score", failed))


def _score_one(ds: Dataset, opts: InputOptions, positive: str | None, level: float, target: str,
               gate: ScoreGate | None) -> tuple[ScoreResult, ScoreCheck | None]:
    """One input's (or slice's) corrected pass rate at `level`, and its gate's check."""
    core = importlib.import_module("..score", __package__)
    votes = _votes(ds, opts)
    with _About(ds.source):
        result = core.score_votes(votes, positive, clusters=votes_clusters(ds, opts), confidence_level=level, target=target,
                                  source_format=ds.reading.source_format if ds.reading else None)
    return result, (gate.check(ds.name, result.score) if gate is not None else None)


def _score_slices(datasets: Sequence[Dataset], opts: InputOptions, positive: str | None, confidence_level: float,
                  target: str, gate: ScoreGate | None, adjust: str, notes: tuple[str, ...]) -> SlicesReport:
    """score --by: each slice's corrected pass rate at the adjusted level, its gate decided by `adjust` (api/_slices.py)."""
    from ..report.score import ScoreReport
    from ..report.slices import SlicesReport
    from ..score.document import score_document
    from ..slicing import SliceFigure
    from ._slices import SliceJob, gated_name, run, statement

    def figure(r: tuple[ScoreResult, ScoreCheck | None], ds: Dataset) -> SliceFigure:
        s = r[0].score
        return SliceFigure(what=f"corrected pass rate ({r[0].positive})", estimate=float(s.estimate), low=float(s.low),
                           high=float(s.high))

    job = SliceJob(lambda ds, level: _score_one(ds, opts, positive, level, target, gate),
                   (lambda r: bool(r[1] and r[1].passed)) if gate is not None else None, figure,
                   lambda r: r[1].line() if r[1] is not None else "")
    found = run(datasets, job, confidence_level, adjust)
    docs, checks = [], []
    for _, runs in found:
        for r in runs:
            check = r.gated[1] if r.gated is not None else None
            check = replace(check, dataset=gated_name(check.dataset, r.alpha)) if check is not None else None
            docs.append(score_document(r.dataset.name, r.dataset.source, r.shown[0], check))
            checks += [check] if check is not None else []
    by = opts.record.by or ""
    return SlicesReport("score", by, adjust, confidence_level, statement(by, adjust, confidence_level),
                        tuple(f for f, _ in found), ScoreReport(tuple(docs), tuple(checks)), notes)


def votes_clusters(ds: Dataset, opts: InputOptions) -> Any:
    """Each item's cluster id (in the votes' item order) when one was asked for (--cluster-field) or its reader
    kept them (an inspect-ai log's epochs: a sample's epochs are one cluster), else None; an error when one was
    asked for and the input's reader kept none (inputs/checks.clusters_problem says which readers keep them)."""
    clusters = getattr(ds.votes, "clusters", None)
    if opts.record.cluster_field is None:
        return clusters
    if clusters is None:
        from ..inputs.checks import clusters_problem

        raise InputError(ds.source, clusters_problem(ds, opts.record.cluster_field)
                         or f"--cluster-field '{opts.record.cluster_field}': this input's reader kept no cluster id per item")
    return clusters


def _compare(a: Dataset, b: Dataset, opts: InputOptions, positive: str | None, confidence_level: float,
             target: str) -> CompareDocument:
    import numpy as np

    core = importlib.import_module("..score", __package__)  # the module: the package's `score` is the library's
    from ..score.document import compare_document, score_document

    sides = []
    for ds in (a, b):
        votes = _votes(ds, opts)
        if votes.ids is None or votes.item_pattern is None:
            raise InputError(ds.source, f"--compare pairs items by id, and this input ({ds.shape}) keeps no item ids "
                                        "with its verdicts; write it as JSON Lines with an id field (--id-field)")
        with _About(ds.source):
            code = core.resolve_positive(votes.classes, positive, ds.reading.source_format if ds.reading else None)
            if len(set(votes.ids)) != len(votes.ids):
                raise ParameterError("ids_a", "repeats an item id; a paired comparison needs each item once per system")
        verdicts, gold = votes.per_item()
        passes = (np.where(verdicts < 0, -1, verdicts == code).astype(np.int8),
                  np.where(gold < 0, -1, gold == code).astype(np.int8))
        clusters = votes_clusters(ds, opts)
        sides.append((ds, votes, votes.classes[code], passes, clusters))
    (da, va, pos_a, (vra, ga), ca), (db, vb, pos_b, (vrb, gb), cb) = sides
    if str(pos_a).strip().lower() != str(pos_b).strip().lower():
        raise ParameterError("positive", f"passes {pos_a!r} in {da.source} but {pos_b!r} in {db.source}; "
                                         f"name the class that passes in both with {P0}")
    if not set(va.ids) & set(vb.ids):
        raise InputError(f"{da.source} and {db.source}", f"share no item id ('{opts.record.id_field}'); --compare pairs the two "
                                                         "systems' answers to the same items by id")
    ia, ib = core.align_items(va.ids, vb.ids)
    clusters = None
    if ca is not None or cb is not None:
        clusters = np.asarray(ca if ca is not None else cb, dtype=object)[ia if ca is not None else ib]
    with _About(f"{da.source} and {db.source}"):
        result = core.compare_scores(vra[ia], ga[ia], vrb[ib], gb[ib], 1, clusters=clusters,
                                     confidence_level=confidence_level, target=target)
    doc_a = score_document(da.name, da.source, replace(result.a, positive=pos_a))
    doc_b = score_document(db.name, db.source, replace(result.b, positive=pos_b))
    return compare_document(doc_a, doc_b, result)
