"""`doctor` (how each input is read) and `judges` (which judges, and how many)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import ParameterError, UsageError
from ..inputs import InputOptions, Keep, read_inputs
from ..settings import JUDGES_CSV_TABLES, check_seed
from ._common import Progress, skip_note

if TYPE_CHECKING:
    from ..report.doctor import DoctorReport
    from ..report.judges import JudgesReport


def doctor(arguments: Sequence[str], opts: InputOptions = InputOptions()) -> DoctorReport:
    """How each input is read (format, column roles, items, judges, skipped rows), without fitting anything."""
    from ..doctor import doctor_document
    from ..report.doctor import DoctorReport

    datasets = read_inputs(arguments, opts, Keep.JUDGMENTS)
    return DoctorReport(tuple(doctor_document(ds) for ds in datasets), tuple(n for ds in datasets for n in ds.left_out))


def judges(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), ks: Sequence[int] | None = None,
    confidence_level: float = 0.9, seed: int = 0, ensemble: Sequence[str] | None = None,
    costs: dict[str, float] | None = None, max_error: float | None = None, population: int | None = None,
    progress: Progress | None = None, unlabeled: bool = True, positive: str | None = None,
    csv_table: str = "ensembles",
) -> JudgesReport:
    """Per-judge accuracy, shared mistakes, and the ensemble to run for each k (named judges; docs/JUDGES.md).
    Items with verdicts and no gold count too (`unlabeled=False`: labels only) where the labels vouch for their
    verdicts (judges/every.py). With verdicts (not correctness alone): each judge's agreement with the gold and the
    panel's among themselves (judges/gold.py; `positive` the pass class, bootstrap draws from `seed`); `csv_table`
    which table -f csv writes ("ensembles" or "agreement")."""
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
        if len(ds.judge_names) < 2:
            raise ParameterError("judges", f"{ds.source}: needs at least 2 named judges; found {len(ds.judge_names)} "
                                           "(counts carry no per-judge verdicts; `fit` works on them)")
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

