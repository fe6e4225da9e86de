"""`betaconform transfer`: ten labels plus what other datasets know."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import api
from ..inputs import InputOptions
from ..settings import FitSettings
from .emit import emit, output_format, progress
from .options import EmbedGroup, EstimateGroup, OutputGroup, SaveGroup, Similarity, SizeWeight, TransferMethod, grouped
from .root import app

METHOD = "Transfer"


@app.command("transfer")
@grouped
def transfer_cmd(
    targets: Annotated[list[str], typer.Argument(help="targets: a few labeled items with text (files, directories or globs; '-' reads standard input)")],
    sources: Annotated[list[str], typer.Option("--sources", help="source fits (YAML from fit --save --embed, or configs/priors/): a directory, a quoted glob or a file ('-': standard input); repeat for more")],
    inp: InputOptions,
    est: EstimateGroup,
    out: OutputGroup,
    save: SaveGroup,
    emb: EmbedGroup,
    method: Annotated[TransferMethod, typer.Option("--method", help="default (the target's labels weigh each source) or paper (eq. 14-15 averaging)", rich_help_panel=METHOD)] = "default",
    size_weight: Annotated[SizeWeight | None, typer.Option("--size-weight", help="eq. 14's size term: log r_i, or linear r_i (Table 5 ablation)", rich_help_panel=METHOD)] = None,
    similarity: Annotated[Similarity | None, typer.Option("--similarity", help="cosine, or inverse-euclidean (Table 5 ablation)", rich_help_panel=METHOD)] = None,
    sigmoid: Annotated[bool | None, typer.Option("--sigmoid/--no-sigmoid", help="eq. 14's sigmoid (--no-sigmoid: Table 5 ablation)", rich_help_panel=METHOD)] = None,
    sigmoid_a: Annotated[float | None, typer.Option("--sigmoid-a", help="eq. 14's a (default from configs/transfer.yaml: 10)", rich_help_panel=METHOD)] = None,
    sigmoid_b: Annotated[float | None, typer.Option("--sigmoid-b", help="eq. 14's b (default from configs/transfer.yaml: 0.5)", rich_help_panel=METHOD)] = None,
    config: Annotated[Path | None, typer.Option("--config", help="transfer hyper-parameters YAML (like configs/transfer.yaml)", rich_help_panel=METHOD)] = None,
) -> None:
    """Borrow strength from fitted source datasets for targets with only a few labels."""
    fmt = output_format(out, targets, sources, [config], saved_fit=save.save)
    tsettings = api.transfer_settings(
        config, method=method, size_weight=size_weight, similarity=similarity, sigmoid=sigmoid, sigmoid_a=sigmoid_a, sigmoid_b=sigmoid_b,
    )
    with progress("embedding") as update:
        report = api.transfer(targets, sources, tsettings, est_settings(est), est.seed, inp, emb.build(),
                              api.SaveTo(save.save, save.save_dir), update)
    raise typer.Exit(emit(report, out, fmt))


def est_settings(est: EstimateGroup) -> FitSettings:
    return FitSettings(ks=est.ks_tuple(), confidence_level=est.confidence_level)
