"""`betaconform evaluate`: the paper's experiments on fully labeled data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import api
from ..errors import P0, P1, ParameterError
from ..estimators import ESTIMATORS
from ..inputs import InputOptions
from .emit import FileOut, emit, progress, refuse_overwrites, resolve_format
from .options import (
    OUTPUT,
    RULE,
    EmbedGroup,
    EstimateGroup,
    OutputGroup,
    Rule,
    RuleGroup,
    grouped,
    parse_numbers,
)
from .root import app

MODE = "Experiment"


@app.command()
@grouped
def evaluate(
    data: Annotated[list[str], typer.Argument(help="fully labeled judgment files, directories or globs")],
    inp: InputOptions,
    est: EstimateGroup,
    out: OutputGroup,
    common: RuleGroup,
    emb: EmbedGroup,
    r: Annotated[str | None, typer.Option("--r", help="fixed-r mode: numbers of labeled items per draw, comma-separated (default 10,30,56)", rich_help_panel=MODE)] = None,
    runs: Annotated[int, typer.Option("--runs", help="paired random draws (or random orders) per dataset and setting", rich_help_panel=MODE)] = 30,
    methods: Annotated[str, typer.Option("--methods", help=f"estimators, comma-separated: {', '.join(ESTIMATORS)} (or all)", rich_help_panel=MODE)] = "all",
    transfer: Annotated[bool, typer.Option("--transfer", help="leave-one-out prior transfer: each dataset the target once, the other datasets of its folder the sources (default --r 10)", rich_help_panel=MODE)] = False,
    rule: Annotated[Rule | None, typer.Option("--rule", help="adaptive mode: label in random orders until this stopping rule fires", rich_help_panel=RULE)] = None,
    xi: Annotated[str | None, typer.Option("--xi", help="adaptive, conformal/variance: thresholds, comma-separated (default 0.06,0.03,0.01)", rich_help_panel=RULE)] = None,
    target: Annotated[str | None, typer.Option("--target", help="adaptive, precision: interval half-widths, comma-separated (default 0.05,0.03)", rich_help_panel=RULE)] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="draw the paper's figures 3 and 4 (and 6 with --rule) into FILE.png, .svg or .pdf", rich_help_panel=OUTPUT)] = None,
    plot_r: Annotated[int | None, typer.Option("--plot-r", help="the r drawn in the figures (default: the largest evaluated)", rich_help_panel=OUTPUT)] = None,
    per_run: Annotated[bool, typer.Option("--per-run", help="json: include every draw's margin", rich_help_panel=OUTPUT)] = False,
) -> None:
    """Replay the paper's experiments on fully labeled data: every estimator against the actual error.

    Every estimator on paired random draws of r items against the whole dataset's actual error (error margin over
    odd k, interval coverage), with figures. With --rule, each run labels the data in a random order until the stopping rule fires and reports the samples
    used as well (the paper's Tables 1 and 3, Fig. 6). With --transfer, each dataset is the target once and the
    other datasets of its folder are its sources (Table 2).
    """
    from .. import evaluate as ev

    fmt = resolve_format(out)
    check_modes(r, rule, xi, target, common)
    chosen = ev.ESTIMATORS if methods.strip() == "all" else tuple(m.strip() for m in methods.split(",") if m.strip())
    sizes = parse_numbers(r or ("10" if transfer else "10,30,56"), "sizes", int)
    settings = ev.EvaluateSettings(sizes=sizes, runs=runs, methods=chosen, ks=est.ks_tuple(), confidence_level=est.confidence_level)
    rules = None
    if rule is not None:
        rules = ev.rule_grid(rule, parse_numbers(xi, "xi") if xi else None, parse_numbers(target, "target") if target else None,
                             **common.given(), **({"ks": settings.ks, "confidence_level": settings.confidence_level} if rule == "precision" else {}))
    check_plot(plot, plot_r, rule, settings.sizes)
    refuse_overwrites(data, out=out, plot=plot)
    with progress("draws") as update:
        report = api.evaluate(data, settings, est.seed, inp, rules, transfer, emb.build() if emb.given else None, per_run,
                              update)
    files = []
    if plot is not None:
        from ..plots import plot_evaluation

        files.append(FileOut("figure", plot, lambda p: plot_evaluation(report.evaluation, p, plot_r), f"wrote {plot}"))
    raise typer.Exit(emit(report, out, fmt, files))


def check_modes(r: str | None, rule: Rule | None, xi: str | None, target: str | None, common: RuleGroup) -> None:
    """Options that only build the rule (or set fixed r) given without it: what reaches api.evaluate (the rules,
    transfer, the estimators, the embedding model) is checked there (api.check_modes)."""
    if rule is not None and r is not None:
        raise ParameterError(("r", "rule"), f"{P0} sets fixed-r mode and {P1} adaptive mode: use one of them")
    if rule is None and (xi is not None or target is not None or any(v is not None for v in common.given().values())):
        raise ParameterError("rule", f"--xi, --target, --epsilon, --tau, --patience and --min-samples need {P0}")


def check_plot(plot: Path | None, plot_r: int | None, rule: Rule | None, sizes: tuple[int, ...]) -> None:
    if plot is not None:
        from ..atomic import check_target
        from ..plots import figure_format

        check_target(plot, "figure")
        figure_format(plot)
    if plot_r is not None and rule is not None:
        raise ParameterError("plot_r", "applies to fixed-r mode; adaptive figures use the setting with the most labels")
    if plot_r is not None and plot_r not in sizes:
        raise ParameterError(("plot_r", "r"), f"{P0} {plot_r} is not among {P1} {','.join(map(str, sizes))}")
