"""`betaconform fit`: error tables from labeled items."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from ..errors import P0, P1, ParameterError
from ..inputs import InputOptions
from . import app
from .emit import emit, progress, refuse_overwrites, resolve_format
from .options import (
    OUTPUT,
    Chart,
    EmbedGroup,
    EstimateGroup,
    GateGroup,
    Judgments,
    ModelGroup,
    OutputGroup,
    SaveGroup,
    SliceGroup,
    Unlabeled,
    grouped,
)


@app.command()
@grouped
def fit(
    data: Judgments,
    inp: InputOptions,
    est: EstimateGroup,
    model: ModelGroup,
    gate: GateGroup,
    out: OutputGroup,
    save: SaveGroup,
    emb: EmbedGroup,
    sl: SliceGroup,
    embed: Annotated[bool, typer.Option("--embed", help="add the dataset's mean text embedding to the saved fit (for transfer)", rich_help_panel=OUTPUT)] = False,
    chart: Chart = True,
    unlabeled: Unlabeled = True,
) -> None:
    """Fit the judgment distribution; print the majority-vote error for k judges beside the baselines."""
    fmt = resolve_format(out)
    if emb.given and not embed:
        raise ParameterError(("embedding_model", "embed"), f"{P0} and the cache options need {P1}")
    refuse_overwrites(data, out=out, saved_fit=save.save)
    with progress("fit") as update:
        report = api.fit(data, sl.inputs(inp), model.settings(est), est.seed, gate.build(), chart,
                         api.SaveTo(save.save, save.save_dir), emb.build() if embed else None, update, unlabeled, sl.adjust)
    raise typer.Exit(emit(report, out, fmt))
