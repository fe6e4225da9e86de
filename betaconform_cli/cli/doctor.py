"""`betaconform doctor`: check how inputs are read before fitting them."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from ..inputs import InputOptions
from . import app
from .emit import emit, refuse_overwrites, resolve_format
from .options import OutputGroup, grouped


@app.command()
@grouped
def doctor(
    data: Annotated[list[str], typer.Argument(help="judgment files, directories or globs; '-' reads standard input")],
    inp: InputOptions,
    out: OutputGroup,
) -> None:
    """Show how inputs are read: format, column roles, items, judges and their verdicts, skipped rows."""
    fmt = resolve_format(out)
    refuse_overwrites(data, out=out)
    raise typer.Exit(emit(api.doctor(data, inp), out, fmt))
