"""`betaconform sample`: when to stop labeling (live), and the rule replayed on a labeled pool."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import typer

from .. import api
from ..atomic import check_target
from ..errors import P0, P1, ParameterError
from ..inputs import InputOptions
from ..output_formats import output_format_of
from ..settings import FitSettings
from .emit import FileOut, emit, output_format, progress, refuse_overwrites, write_lines
from .options import RULE, EstimateGroup, ModelGroup, OutputGroup, PrecisionMethod, Rule, RuleGroup, grouped
from .root import app

LIVE = "Live labeling"


@app.command()
@grouped
def sample(
    labeled: Annotated[str, typer.Argument(help="labeled items in labeling order (live), or the fully labeled pool (--replay); '-' reads standard input")],
    inp: InputOptions,
    est: EstimateGroup,
    model: ModelGroup,
    out: OutputGroup,
    common: RuleGroup,
    pool: Annotated[str | None, typer.Option("--pool", help="live: all items to label, with ids (JSON Lines or any input format with verdicts: the precision rule then uses their verdicts, and the next items come by vote split); the next ones go to -o", rich_help_panel=LIVE)] = None,
    batch: Annotated[int | None, typer.Option("--batch", help="live: how many next items to propose (default: the suggested number)", rich_help_panel=LIVE)] = None,
    replay: Annotated[bool, typer.Option("--replay", help="replay the rule on a fully labeled pool in random orders", rich_help_panel=LIVE)] = False,
    runs: Annotated[int, typer.Option("--runs", help="replay: number of random orders", rich_help_panel=LIVE)] = 1,
    rule: Annotated[Rule, typer.Option("--rule", help="conformal (the paper's), variance (RQ5's baseline) or precision (recommended)", rich_help_panel=RULE)] = "conformal",
    xi: Annotated[float | None, typer.Option("--xi", help="conformal/variance: threshold (default 0.03)", rich_help_panel=RULE)] = None,
    score_scale: Annotated[str | None, typer.Option("--score-scale", help="conformal: scores on S (default) or S/k", rich_help_panel=RULE)] = None,
    centre: Annotated[str | None, typer.Option("--centre", help="conformal: E[S] as the running 'mean' (default) or 'fitted'", rich_help_panel=RULE)] = None,
    xi_units: Annotated[str | None, typer.Option("--xi-units", help="conformal: xi on the scale of S (default) or 'sd' (xi * sd of S so far / --reference-sd)", rich_help_panel=RULE)] = None,
    reference_sd: Annotated[float | None, typer.Option("--reference-sd", help="conformal, --xi-units sd: the sd of S at which xi means the paper's xi (default 3.5)", rich_help_panel=RULE)] = None,
    target: Annotated[float | None, typer.Option("--target", help="precision: largest interval half-width (default 0.03)", rich_help_panel=RULE)] = None,
    at_k: Annotated[int | None, typer.Option("--at-k", help="precision: the k to check (default: the widest over --ks)", rich_help_panel=RULE)] = None,
    precision_method: Annotated[PrecisionMethod | None, typer.Option("--precision-method", help="precision: calibrated (default; a calibration benchmark) or sequential (an always-valid confidence sequence: a theorem, more labels)", rich_help_panel=RULE)] = None,
) -> None:
    """When to stop labeling: exit 0 'stop', or exit 1 'continue' with the next items to label.

    With --replay, draw a fully labeled pool in random orders, stop by the rule and report samples, estimates, the
    pool's actual error and the error margin per run (the paper's Table 1/3 protocol).
    """
    from ..stopping.rules import make_rule  # scipy: only when a rule is built, not at every start

    settings = model.settings(est)
    options = dict(xi=xi, score_scale=score_scale, centre=centre, xi_units=xi_units, reference_sd=reference_sd, target=target,
                   at_k=at_k, precision_method=precision_method, **common.given())
    if rule == "precision":
        options.update(ks=settings.ks, confidence_level=settings.confidence_level)
    the_rule = make_rule(rule, **options)
    if replay:  # which options belong to which mode is checked by api.sample
        fmt = output_format(out, [labeled])
        with progress("replays") as update:
            report = api.sample(labeled, the_rule, settings, est.seed, inp, True, runs, pool, batch, progress=update)
        raise typer.Exit(emit(report, out, fmt))
    live(labeled, the_rule, pool, settings, est.seed, batch, runs, inp, out)


def live(labeled: str, the_rule: Any, pool: str | None, settings: FitSettings, seed: int, batch: int | None, runs: int,
         inp: InputOptions, out: OutputGroup) -> None:
    """Live mode: -o receives the next items to label (JSON Lines), stdout the decision."""
    next_file = out.output
    if next_file is not None and runs == 1:  # with --runs, api.sample says that it needs --replay
        check_target(next_file, "next items")
        if pool is None:  # there would be nothing to write: an empty file and "wrote 0 next item(s)"
            raise ParameterError(("output", "pool"), f"{P0} receives the next items to label, which come from {P1}: add {P1}, or drop "
                                                     f"{P0} (the decision goes to standard output; --format sets its format)")
        if output_format_of(next_file) not in (None, "json"):
            raise ParameterError("output", f"{P0} {next_file}: the next items are written as JSON Lines (the pool's own lines); "
                                           "give a .jsonl name")
    refuse_overwrites([labeled] + ([pool] if pool else []), out=out)
    report = api.sample(labeled, the_rule, settings, seed, inp, False, runs, pool, batch, show_next=next_file is None)
    from ..report.sample import LiveReport

    assert isinstance(report, LiveReport)
    files = [] if next_file is None else [FileOut("next items", next_file, lambda p: write_lines(p, report.next_lines),
                                                  f"wrote {len(report.next_lines)} next item(s) to {next_file}")]
    raise typer.Exit(emit(report, dataclasses.replace(out, output=None), files=files))
