"""`betaconform judges`: which judges to run, how many, and the honest error of the ensemble you pick."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import api
from ..errors import P0, ParameterError
from ..inputs import InputOptions
from ..settings import parse_ks
from . import app
from .emit import emit, output_format, progress
from .options import OUTPUT, CsvTable, JudgesEstimateGroup, OutputGroup, SliceGroup, Unlabeled, grouped

PICK = "Selection"
AGREE = "Agreement"


@app.command()
@grouped
def judges(
    data: Annotated[list[str], typer.Argument(help="labeled items with named judges (any input format); '-' reads standard input")],
    inp: InputOptions,
    est: JudgesEstimateGroup,
    out: OutputGroup,
    sl: SliceGroup,
    ensemble: Annotated[str | None, typer.Option("--ensemble", help="the error table of one named ensemble: 'a,b,c'", rich_help_panel=PICK)] = None,
    cost: Annotated[str | None, typer.Option("--cost", help="prices per judge, 'gpt-4o=5,claude=3,llama=0.2': with --max-error, the cheapest ensemble that meets it", rich_help_panel=PICK)] = None,
    max_error: Annotated[float | None, typer.Option("--max-error", help="the largest acceptable majority error (upper end of the interval), a fraction; exit 1 when no ensemble meets it", rich_help_panel=PICK)] = None,
    population: Annotated[int | None, typer.Option("--population", help="the size of the whole set the labeled items were drawn from (its error is then the target)", rich_help_panel=PICK)] = None,
    unlabeled: Unlabeled = True,
    positive: Annotated[str | None, typer.Option("--positive", help="the gold class that counts as a pass, for sensitivity and specificity (default: true, pass, yes, 1, correct, ...)", rich_help_panel=AGREE)] = None,
    csv_table: Annotated[CsvTable, typer.Option("--csv-table", help="-f csv writes the ensembles of each size, or each judge's agreement with the gold (agreement)", rich_help_panel=OUTPUT)] = "ensembles",
) -> None:
    """Which judges, and how many: per-judge accuracy and agreement with the gold, shared mistakes, the ensemble to
    run for each size k."""
    fmt = output_format(out, data)
    members = [m.strip() for m in ensemble.split(",") if m.strip()] if ensemble is not None else None
    with progress("judges") as update:
        report = api.judges(data, sl.inputs(inp), parse_ks(est.ks) if est.ks is not None else None, est.confidence_level,
                            est.seed, members, parse_costs(cost), max_error, population, update, unlabeled,
                            positive, csv_table, sl.adjust)
    raise typer.Exit(emit(report, out, fmt))


def parse_costs(text: str | None) -> dict[str, float] | None:
    """'a=5,b=0.2' -> {'a': 5.0, 'b': 0.2}."""
    if text is None:
        return None
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, price = part.rpartition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(price)
        except ValueError:
            raise ParameterError("cost", f"{P0}: cannot read {part!r}; use judge=price pairs such as 'gpt-4o=5,llama=0.2'") from None
    return out
