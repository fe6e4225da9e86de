"""`betaconform score`: the evaluated system's pass rate, corrected for the judges' bias with a few gold labels."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from ..inputs import InputOptions
from . import app
from .emit import emit, output_format
from .options import OutputGroup, ScoreGroup, SliceGroup, grouped


@app.command()
@grouped
def score(
    data: Annotated[list[str], typer.Argument(help="the judges' verdicts on every item of the evaluated system, gold labels on some (any input format); '-' reads standard input")],
    inp: InputOptions,
    sc: ScoreGroup,
    sl: SliceGroup,
    out: OutputGroup,
) -> None:
    """The evaluated system's pass rate, corrected for the judges' bias with a few gold labels, with an interval."""
    fmt = output_format(out, data)
    report = api.score(data, sl.inputs(sc.inputs(inp)), sc.positive, sc.confidence_level, sc.target, sc.gate(), sc.compare,
                       sl.adjust)
    raise typer.Exit(emit(report, out, fmt))
