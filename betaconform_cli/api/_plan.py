"""`plan`: the labels a target half-width needs, forecast from the judges' verdicts before labeling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import BetaConformError, InputError
from ..inputs import InputOptions, Keep, read_inputs
from ..parameters import CONFIDENCE_LEVEL, check_optional
from ._common import no_clusters, skip_note

if TYPE_CHECKING:
    from ..report.plan import PlanReport


def plan(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), target: float = 0.05, ks: Sequence[int] = tuple(range(1, 12)),
    confidence_level: float = CONFIDENCE_LEVEL, draws: int = 200, seed: int = 0, label_cost: float | None = None,
    positive: str | None = None,
) -> PlanReport:
    """Per input: the labels `sample --rule precision --target TARGET` will need for the error at each k (and at
    every k together), and the labels the score's interval needs, each with an interval (stopping/forecast.py)."""
    import numpy as np

    from ..report.plan import PlanReport
    from ..score import resolve_positive
    from ..seeds import check_seed
    from ..stopping.forecast import PlanDocument, forecast
    from ..version import __version__

    check_seed(seed)
    check_optional("label_cost", label_cost)
    no_clusters(opts, "plan")
    datasets = read_inputs(arguments, opts, Keep.COUNTS, need_labels=False)  # none labeled yet is what plan is for
    notes: list[str] = []
    docs = []
    for ds in datasets:
        notes += skip_note(ds)
        if ds.votes is None:
            raise InputError(ds.source, "carries no verdicts: plan forecasts from what each judge said on every item "
                                        "(JSON Lines verdicts with a label on some items or none; tables --verdict-col)")
        try:
            code: int | None = resolve_positive(ds.votes.classes, positive, ds.reading.source_format if ds.reading else None)
        except BetaConformError:
            if positive is not None:
                raise
            code = None
            notes.append(f"{ds.name}: no score forecast: cannot tell which class passes (name it with --positive)")
        result = forecast(ds.votes, target, ks, confidence_level, draws, code, np.random.default_rng(seed))
        notes += [f"{ds.name}: {n}" for n in result.notes]
        docs.append(PlanDocument(tool_version=__version__, dataset=ds.name, source=ds.source, label_cost=label_cost,
                                 plan=result))
    return PlanReport(tuple(docs), tuple(notes))
