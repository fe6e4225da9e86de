"""`betaconform plan`: how many labels a target half-width needs, forecast before labeling."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from ..inputs import InputOptions
from ..parameters import CONFIDENCE_LEVEL
from ..settings import parse_ks
from .emit import emit, output_format
from .options import MODEL, ConfidenceLevel, OutputGroup, _opt, grouped
from .root import app

PLAN = "Plan"


@app.command()
@grouped
def plan(
    data: Annotated[list[str], typer.Argument(help="the judges' verdicts on every item, gold labels on none or a few (any input format); '-' reads standard input")],
    inp: InputOptions,
    out: OutputGroup,
    target: Annotated[float, _opt("--target", help="the half-width to reach (0.05 = 5 points), as sample --rule precision --target", panel=PLAN)] = 0.05,
    ks: Annotated[str, _opt("--ks", help="ensemble sizes to plan for ('1-11', '1,3,5'); those above the fewest judges an item has are left out", panel=PLAN)] = "1-11",
    positive: Annotated[str | None, _opt("--positive", help="the gold class that counts as a pass, for the score's forecast (default: true, pass, yes, 1, ...; inspect's C of C/I)", panel=PLAN)] = None,
    label_cost: Annotated[float | None, _opt("--label-cost", help="the cost of one label: the table adds the cost of the labels still to make", panel=PLAN)] = None,
    confidence_level: ConfidenceLevel = CONFIDENCE_LEVEL,
    draws: Annotated[int, _opt("--draws", help="draws of the unlabeled items' gold from the judges' model (10 to 100,000)", panel=MODEL)] = 200,
    seed: Annotated[int, _opt("--seed", help="random seed (the draws and the labeling orders)", panel=MODEL)] = 0,
) -> None:
    """How many labels a target half-width needs (the error at each k, the score), forecast from the verdicts."""
    fmt = output_format(out, data)
    report = api.plan(data, inp, target, parse_ks(ks), confidence_level, draws, seed, label_cost, positive)
    raise typer.Exit(emit(report, out, fmt))
