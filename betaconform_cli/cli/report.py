"""`betaconform report`: tables from saved fits."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from . import app
from .emit import emit, refuse_overwrites, resolve_format
from .options import OUTPUT, GateGroup, OutputGroup, grouped


@app.command("report")
@grouped
def report_cmd(
    fits: Annotated[list[str], typer.Argument(help="saved fits (YAML from fit --save or transfer --save), directories or globs; '-' reads standard input")],
    gate: GateGroup,
    out: OutputGroup,
    chart: Annotated[bool, typer.Option("--chart/--no-chart", help="show the histogram chart and fit diagnostics", rich_help_panel=OUTPUT)] = True,
) -> None:
    """Print the error tables of saved fits, several side by side (and gate on them)."""
    fmt = resolve_format(out)
    refuse_overwrites([], fits, out=out)
    raise typer.Exit(emit(api.report(fits, gate.build(), chart), out, fmt))
