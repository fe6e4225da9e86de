"""`betaconform report`: tables from saved fits."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from .emit import emit, output_format
from .options import Chart, GateGroup, OutputGroup, grouped
from .root import app


@app.command("report")
@grouped
def report_cmd(
    fits: Annotated[list[str], typer.Argument(help="saved fits (YAML from fit --save or transfer --save), directories or globs; '-' reads standard input")],
    gate: GateGroup,
    out: OutputGroup,
    chart: Chart = True,
) -> None:
    """Print the error tables of saved fits, several side by side (and gate on them)."""
    fmt = output_format(out, [], fits)
    raise typer.Exit(emit(api.report(fits, gate.build(), chart), out, fmt))
