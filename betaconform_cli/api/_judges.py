"""`doctor` (how each input is read) and `judges` (which judges, and how many)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import P0, ParameterError, UsageError, quote, quote_all
from ..inputs import InputOptions, Keep, read_inputs
from ..settings import JUDGES_CSV_TABLES, check_seed
from ._common import Progress, skip_note, unlabeled_only_judges

if TYPE_CHECKING:
    from ..report.doctor import DoctorReport
    from ..report.judges import JudgesReport


def doctor(arguments: Sequence[str], opts: InputOptions = InputOptions()) -> DoctorReport:
    """How each input is read (format, column roles, items, judges, skipped rows), without fitting anything."""
    from ..doctor import doctor_document
    from ..report.doctor import DoctorReport

    datasets = read_inputs(arguments, opts, Keep.JUDGMENTS, need_labels=False, vocabulary=False)  # shown, then refused
    return DoctorReport(tuple(doctor_document(ds) for ds in datasets), tuple(n for ds in datasets for n in ds.left_out))


def judges(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), ks: Sequence[int] | None = None,
    confidence_level: float = 0.9, seed: int = 0, ensemble: Sequence[str] | None = None,
    costs: dict[str, float] | None = None, max_error: float | None = None, population: int | None = None,
    progress: Progress | None = None, unlabeled: bool = True, positive: str | None = None,
    csv_table: str = "ensembles",
) -> JudgesReport:
    """Per-judge accuracy, shared mistakes, and the ensemble to run for each k (named judges; docs/JUDGES.md).
    Items with verdicts and no gold count too (`unlabeled=False`: labels only): in the ensembles' errors, and in
    the per-judge figures and the pick where the labels vouch for their verdicts (judges/every.py). With verdicts
    (not correctness alone): each judge's agreement with the gold and the panel's among themselves (judges/gold.py;
    `positive` the pass class, bootstrap draws from `seed`); `csv_table` which table -f csv writes ("ensembles" or
    "agreement")."""
    import numpy as np

    from ..judges import analyse_judges
    from ..judges.analysis import DATA_SEEDED, JudgesRequest, data_seed
    from ..judges.document import judges_document
    from ..judges.gold import MAX_CLASSES, votes_agreement
    from ..report.judges import JudgesReport

    check_seed(seed)
    if csv_table not in JUDGES_CSV_TABLES:
        raise ParameterError("csv_table", f"must be one of {', '.join(JUDGES_CSV_TABLES)}; got {csv_table!r}")
    docs = []
    notes: list[str] = []
    for ds in read_inputs(arguments, opts, Keep.JUDGMENTS):
        notes += skip_note(ds)
        notes += _unchecked_judges(ds, ensemble, costs)
        if len(ds.judge_names) < 2:
            raise ParameterError("judges", f"{ds.source}: needs at least 2 named judges; found {len(ds.judge_names)} "
                                           "(counts carry no per-judge verdicts; `fit` works on them)")
        notes += _unpriced_note(ds.name, ds.judge_names, costs, max_error)
        matrix = ds.judgment_matrix()
        label = f"{ds.name}: "
        step = None if progress is None else (lambda done, total, what, _l=label: progress(done, total, _l + what))
        try:
            # common random numbers: the model's draws are seeded by the labels themselves, so the same data gives
            # the same ensembles, intervals and --max-error outcome for any line order and any --seed (data_seed)
            rng = np.random.default_rng(data_seed(matrix, ds.judge_names))
            request = JudgesRequest(ks, confidence_level, ensemble, costs, max_error, population, unlabeled)
            clusters = None if ds.clusters is None else ds.clusters.cluster  # epochs: one cluster a sample
            if clusters is not None:
                notes.append(f"{ds.source}: {ds.n_items} labeled items in {ds.clusters.clusters} clusters (epochs): "  # type: ignore[union-attr]
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
        docs.append(judges_document(ds.name, ds.source, seed, result, DATA_SEEDED, agreement))
    return JudgesReport(tuple(docs), tuple(notes), csv_table)


def _unpriced_note(name: str, judges: Sequence[str], costs: dict[str, float] | None, max_error: float | None) -> list[str]:
    """Prices for some judges only: the cheapest ensemble is sought among the priced ones (docs/JUDGES.md, "Costs"),
    and the others are named, never left out in silence (the cost table lists them too)."""
    if not costs or max_error is None:
        return []
    unpriced = [j for j in judges if j not in costs]
    if not unpriced:
        return []
    return [f"{quote(name)}: --cost prices {len(judges) - len(unpriced)} of {len(judges)} judges; the cheapest ensemble is "
            f"chosen among those, leaving out {quote_all(unpriced)} (give a judge a price, 0 if free, to include it)"]


def _unchecked_judges(ds: Any, ensemble: Sequence[str] | None, costs: dict[str, float] | None) -> list[str]:
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
