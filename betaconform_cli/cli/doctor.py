"""`betaconform doctor`: check how inputs are read before fitting them."""

from __future__ import annotations

import typer

from .. import api
from ..inputs import InputOptions
from .emit import emit, output_format
from .options import Judgments, OutputGroup, grouped
from .root import app


@app.command()
@grouped
def doctor(
    data: Judgments,
    inp: InputOptions,
    out: OutputGroup,
) -> None:
    """Show how inputs are read: format, column roles, items, judges and their verdicts, skipped rows."""
    fmt = output_format(out, data)
    raise typer.Exit(emit(api.doctor(data, inp), out, fmt))
