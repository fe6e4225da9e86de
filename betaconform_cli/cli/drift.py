"""`betaconform drift`: have the same judges changed between two runs (an old and a new file of their verdicts)?"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from ..inputs import InputOptions
from ..parameters import DRIFT_CONFIDENCE_LEVEL
from .emit import emit, output_format
from .options import GATE, INPUT, MODEL, ConfidenceLevel, OutputGroup, _opt, grouped
from .root import app


@app.command()
@grouped
def drift(
    old: Annotated[str, typer.Argument(help="the old run: the judges' verdicts on every item, gold labels on some (any input format)")],
    inp: InputOptions,
    out: OutputGroup,
    new: Annotated[str | None, typer.Argument(help="the new run of the same judges (matched by name; items by id); leave out with --time-field")] = None,
    confidence_level: ConfidenceLevel = DRIFT_CONFIDENCE_LEVEL,
    permutations: Annotated[int, _opt("--permutations", help="permutations of the label-free test (19 to 100000)", panel=MODEL)] = 999,
    seed: Annotated[int, _opt("--seed", help="seed of the permutations, 0 to 2^53 - 1; written to the output", panel=MODEL)] = 0,
    time_field: Annotated[str | None, _opt("--time-field", help="one input instead of two: the JSON field that says when each item was judged (numbers, or ISO 8601 text)", panel=INPUT)] = None,
    split_at: Annotated[str | None, _opt("--split-at", help="with --time-field: items before this time are the old run, the others the new", panel=INPUT)] = None,
    fail_on_drift: Annotated[bool, _opt("--fail-on-drift", help="exit 1 when any judge or the panel drifted (an accuracy change's interval excludes 0, beyond --max-change; or the label-free test rejects)", panel=GATE)] = False,
    max_change: Annotated[float, _opt("--max-change", help="a change of accuracy that is tolerated (a fraction: 0.05 = 5 points)", panel=GATE)] = 0.0,
) -> None:
    """Have the judges changed between two runs? Per judge and for the panel: the change of accuracy on the labels
    (paired on shared items) and a label-free test of the vote patterns, each with a stated false-alarm rate."""
    fmt = output_format(out, [old] if new is None else [old, new])
    report = api.drift(old, new, inp, confidence_level, max_change, permutations, seed, fail_on_drift, time_field, split_at)
    raise typer.Exit(emit(report, out, fmt))
