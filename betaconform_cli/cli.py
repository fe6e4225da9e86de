"""The typer app: parse options, make one core call per dataset, render. The only module with typer/rich."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

# Every matrix here is tiny; OpenBLAS threads that spin on a busy 2-core machine made fits 5-10x slower.
# Set before numpy/scipy load their BLAS (scipy is imported lazily, after main() could pin it at run time).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import __version__, params, report
from .data import Dataset, InputSpec, begin_read, expand_paths, read_dataset, read_datasets
from .errors import BetaConformError, FitWarning, UsageError
from .settings import MAX_K, FitSettings

if TYPE_CHECKING:
    from .fit import FitResult

class _Group(typer.core.TyperGroup):
    """Turns the core's errors into one line on stderr and exit code 2, for every command."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BetaConformError as exc:
            err.print(f"error: {exc}", markup=False)
            raise typer.Exit(2) from None


app = typer.Typer(
    cls=_Group,
    name="betaconform",
    help="How accurate is your ensemble of LLM judges? Majority-vote error for k = 1..11 judges from a few human labels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False, soft_wrap=True)


# --- shared option types ------------------------------------------------------------------------------

FormatOpt = Annotated[
    str | None,
    typer.Option("--format", "-f", help="table, json, csv or markdown (default: from -o's extension, else table)"),
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="write the result to FILE (atomically); format from its extension")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="seed for every random draw (intervals, starts); written to the output")]
KsOpt = Annotated[str, typer.Option("--ks", help="ensemble sizes k: '1-11', '1,3,5' or '1..21'")]
ConfOpt = Annotated[float, typer.Option("--confidence-level", help="interval level, strictly between 0 and 1")]
JudgmentsField = Annotated[str, typer.Option("--judgments-field", help="field with per-judge correctness (list or object)")]
CorrectField = Annotated[str, typer.Option("--correct-field", help="field with the count of correct judges")]
JudgesField = Annotated[str, typer.Option("--judges-field", help="field with the number of judges")]
VerdictsField = Annotated[str, typer.Option("--verdicts-field", help="field with raw judge verdicts")]
LabelField = Annotated[str, typer.Option("--label-field", help="field with the gold label (for verdicts)")]
IdField = Annotated[str, typer.Option("--id-field", help="field with the item id")]
TextField = Annotated[str, typer.Option("--text-field", help="field with the item text")]
ToleranceOpt = Annotated[
    float | None, typer.Option("--tolerance", help="scoring judges: a verdict is correct when |verdict - label| <= T")
]
SkipOpt = Annotated[bool, typer.Option("--skip-invalid", help="skip bad lines (and say how many) instead of stopping")]


def input_spec(
    judgments_field: str, correct_field: str, judges_field: str, verdicts_field: str, label_field: str,
    id_field: str, text_field: str, tolerance: float | None, skip_invalid: bool,
) -> InputSpec:
    """The input options every reading command shares, validated once."""
    if tolerance is not None and not 0 <= tolerance < float("inf"):  # NaN would silently score every verdict wrong
        raise UsageError(f"--tolerance must be a finite number >= 0; got {tolerance}")
    return InputSpec(judgments_field, correct_field, judges_field, verdicts_field, label_field, id_field, text_field, tolerance, skip_invalid)


def check_seed(seed: int) -> None:
    """numpy's generators take only non-negative seeds; say so instead of a ValueError traceback."""
    if seed < 0:
        raise UsageError(f"--seed must be a non-negative integer; got {seed}")


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks: list[int] = []
        for part in text.replace(" ", "").split(","):
            if not part:
                continue
            sep = ".." if ".." in part else ("-" if "-" in part[1:] else None)
            if sep:
                lo, hi = part.split(sep)
                if int(hi) > MAX_K:  # before the range is built: '1-300000000' must not fill the memory
                    raise UsageError(f"--ks: ensemble sizes must be between 1 and {MAX_K}; got {text!r}")
                ks.extend(range(int(lo), int(hi) + 1))
            else:
                ks.append(int(part))
    except ValueError:
        raise UsageError(f"--ks: cannot read {text!r}; use '1-11' or '1,3,5'") from None
    if not ks or min(ks) < 1:
        raise UsageError(f"--ks: ensemble sizes must be positive integers; got {text!r}")
    return tuple(sorted(set(ks)))


def check_output(option: str, path: Path | None) -> None:
    """Refuse a directory as an output file before any work (the write would fail only at the end)."""
    if path is not None and path.is_dir():
        raise UsageError(f"{option} {path}: is a directory; give a file name")


def resolve_format(fmt: str | None, output: Path | None) -> str:
    check_output("-o", output)
    if fmt is not None:
        if fmt not in report.FORMATS:
            raise UsageError(f"--format must be one of {', '.join(report.FORMATS)}; got {fmt!r}")
        return fmt
    if output is not None:
        return report.EXTENSIONS.get(output.suffix.lower(), "table")
    return "table"


def rich_table(view: report.TableView) -> Table:
    """A rich Table of a view; every string is escaped, so '[90% interval]' or a dataset named '[x]' is text,
    not rich markup."""
    t = Table(
        title=escape(view.title), caption=escape(view.caption) if view.caption else None,
        title_justify="left", caption_justify="left",
    )
    align = view.align or "l" + "r" * (len(view.columns) - 1)
    for i, c in enumerate(view.columns):
        t.add_column(escape(c), justify="left" if align[i] == "l" else "right", no_wrap=i == 0)
    for row in view.rows:
        t.add_row(*(escape(cell) for cell in row))
    return t


def render_text(docs: list[dict[str, Any]], gate_lines: list[str], chart: bool = True) -> str:
    """The rich table output as plain text (for -o FILE.txt)."""
    console = Console(file=None, record=True, width=110, highlight=False)
    with console.capture():
        show_tables(docs, console, chart)
    return console.export_text()


def show_tables(docs: list[dict[str, Any]], console: Console, chart: bool = True) -> None:
    for d in docs:
        console.print(rich_table(report.error_view(d)))
        console.print(report.describe(d), markup=False)
        if chart:
            console.print()
            for line in report.bar_chart_lines(d):
                console.print(line, markup=False)
            console.print()
            console.print(rich_table(report.diagnostics_view(d)))
        console.print()
    if len(docs) > 1:
        if len(docs) <= report.SIDE_BY_SIDE_MAX:
            console.print(rich_table(report.side_by_side_view(docs)))
        console.print(rich_table(report.summary_view(docs)))


def emit(docs: list[dict[str, Any]], fmt: str, output: Path | None, gate_lines: list[str], chart: bool = True) -> None:
    """Render once: to stdout, or to -o FILE atomically (the table still goes to the terminal)."""
    if fmt == "json":
        text = report.to_json(docs)
    elif fmt == "csv":
        text = report.to_csv(docs)
    elif fmt == "markdown":
        text = report.to_markdown(docs, gate_lines)
    else:
        text = None
    if output is None:
        if text is None:
            show_tables(docs, out, chart)
        else:
            sys.stdout.write(text)
        return
    params.atomic_write_text(output, text if text is not None else render_text(docs, gate_lines, chart))
    show_tables(docs, out, chart)
    err.print(f"wrote {output}", markup=False)


def check_gate(docs: list[dict[str, Any]], max_error: float | None, at_k: int | None, on: str) -> list[str]:
    """Lines describing each dataset's gate result; the failures start with 'FAIL'."""
    if max_error is None and at_k is None:
        return []
    if max_error is None or at_k is None:
        raise UsageError("the gate needs both --max-error X and --at-k K")
    if not 0 <= max_error <= 1:
        raise UsageError(f"--max-error is a fraction between 0 and 1 (0.1 = 10%); got {max_error}")
    if on not in ("estimate", "upper"):
        raise UsageError(f"--on must be estimate or upper; got {on!r}")
    lines = []
    for d in docs:
        row = next((r for r in d["error_rates"] if r["k"] == at_k), None)
        if row is None:
            raise UsageError(f"--at-k {at_k} is not among the computed ks; add it to --ks")
        value = row["estimate"] if on == "estimate" else row["high"]
        what = "estimated error" if on == "estimate" else "upper interval bound of the error"
        ok = value <= max_error
        d["gate"] = {"k": at_k, "max_error": max_error, "on": on, "value": value, "passed": ok}
        status = "ok" if ok else "FAIL"
        lines.append(f"{status} {d['dataset']}: {what} at k={at_k} is {report.pct(value, 2)} (limit {report.pct(max_error, 2)})")
    return lines


def finish_gate(lines: list[str]) -> None:
    failed = [ln for ln in lines if ln.startswith("FAIL")]
    for ln in failed:
        err.print(f"gate failed: {ln[5:]}", markup=False)
    if failed:
        raise typer.Exit(1)


# --- commands -----------------------------------------------------------------------------------------


@app.command()
def fit(
    data: Annotated[list[str], typer.Argument(help="judgment JSONL files (.jsonl or .jsonl.gz), directories or globs")],
    method: Annotated[str, typer.Option("--method", help="default, plugin (MAP mixture as is) or paper (the paper's EM)")] = "default",
    components: Annotated[str, typer.Option("--components", help="mixture components: 1, 2, 3 or auto (lowest BIC)")] = "auto",
    ks: KsOpt = "1-11",
    confidence_level: ConfOpt = 0.9,
    seed: SeedOpt = 0,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    save: Annotated[Path | None, typer.Option("--save", help="save the fit as YAML (one input only)")] = None,
    save_dir: Annotated[Path | None, typer.Option("--save-dir", help="save one <dataset>.yaml per input here")] = None,
    embed: Annotated[bool, typer.Option("--embed", help="add the dataset's mean text embedding to the saved fit")] = False,
    embedding_model: Annotated[str | None, typer.Option("--embedding-model", help="local sentence-transformers model (default: the bundled all-MiniLM-L6-v2)")] = None,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="embedding cache directory")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not read or write the embedding cache")] = False,
    max_error: Annotated[float | None, typer.Option("--max-error", help="gate: exit 1 when the error at --at-k exceeds X (a fraction)")] = None,
    at_k: Annotated[int | None, typer.Option("--at-k", help="gate: the ensemble size k to check")] = None,
    on: Annotated[str, typer.Option("--on", help="gate on the 'upper' interval bound (default) or the 'estimate'")] = "upper",
    chart: Annotated[bool, typer.Option("--chart/--no-chart", help="show the histogram chart and diagnostics")] = True,
    judgments_field: JudgmentsField = "judgments",
    correct_field: CorrectField = "correct",
    judges_field: JudgesField = "judges",
    verdicts_field: VerdictsField = "verdicts",
    label_field: LabelField = "label",
    id_field: IdField = "id",
    text_field: TextField = "text",
    tolerance: ToleranceOpt = None,
    skip_invalid: SkipOpt = False,
) -> None:
    """Fit the judgment distribution and print the majority-vote error for k judges beside the baselines."""
    fmt_ = resolve_format(fmt, output)
    settings = FitSettings(
        method=method,
        components=_components(components),
        ks=parse_ks(ks),
        confidence_level=confidence_level,
    )
    spec = input_spec(judgments_field, correct_field, judges_field, verdicts_field, label_field, id_field, text_field, tolerance, skip_invalid)
    check_seed(seed)
    if save is not None and save_dir is not None:
        raise UsageError("use --save FILE or --save-dir DIR, not both")
    if embed and save is None and save_dir is None:
        raise UsageError("--embed adds the mean embedding to a saved fit: add --save FILE or --save-dir DIR")
    check_gate([], max_error, at_k, on)
    paths = expand_paths(data)
    saved = next((p for p in paths if p.suffix in (".yaml", ".yml")), None)
    if saved is not None:
        raise UsageError(f"{saved}: this looks like a saved fit, not judgment JSONL; show it with `betaconform report {saved}`")
    # A big file's workers start counting now, while this process imports scipy (~0.2 s), then counts a
    # smaller first share itself (parent_share 0.2 was fastest of 0.2, 0.5, 1 on 2 cores: 0.69 vs 0.72 vs 0.80 s).
    first = begin_read(paths[0], spec, keep_items=embed, parent_share=0.2)
    from . import fit as _fit  # noqa: F401
    datasets = [first.result()] + [read_dataset(p, spec, keep_items=embed) for p in paths[1:]]
    if save is not None and len(datasets) > 1:
        raise UsageError(f"--save takes one input, got {len(datasets)}; use --save-dir DIR for many")
    docs = []
    embedder = None
    for ds in datasets:
        if ds.skipped:
            err.print(f"{ds.source}: skipped {ds.skipped} invalid line(s)", markup=False)
        result = fit_one(ds, settings, seed)
        doc = report.fit_document("fit", ds.name, ds.source, ds.table, result, seed, ds.skipped)
        docs.append(doc)
        if save is not None or save_dir is not None:
            embedding = None
            if embed:
                from . import embeddings

                if embedder is None:
                    embedder = embeddings.load_embedder(embedding_model, cache_dir=None if no_cache else embeddings.cache_path(cache_dir))
                embedding = embeddings.dataset_embedding(embedder, ds)
            target = save if save is not None else save_dir / f"{ds.name}.yaml"  # type: ignore[operator]
            params.dump_fit(target, report.saved_document(doc, embedding))
            err.print(f"saved {target}", markup=False)
    gate_lines = check_gate(docs, max_error, at_k, on)
    emit(docs, fmt_, output, gate_lines, chart)
    finish_gate(gate_lines)


def _components(text: str) -> int | str:
    if text == "auto":
        return "auto"
    if text in ("1", "2", "3"):
        return int(text)
    raise UsageError(f"--components must be 1, 2, 3 or auto; got {text!r}")


def fit_one(ds: Dataset, settings: FitSettings, seed: int) -> FitResult:
    from .fit import analyse

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FitWarning)
        result = analyse(ds.table, settings, np.random.default_rng(seed))
    for w in caught:
        err.print(f"warning: {ds.source}: {w.message}", markup=False)
    return result


@app.command("report")
def report_cmd(
    fits: Annotated[list[Path], typer.Argument(help="saved fits (YAML written by fit --save or transfer --save)")],
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    chart: Annotated[bool, typer.Option("--chart/--no-chart", help="show the histogram chart and diagnostics")] = True,
    max_error: Annotated[float | None, typer.Option("--max-error", help="gate: exit 1 when the error at --at-k exceeds X")] = None,
    at_k: Annotated[int | None, typer.Option("--at-k", help="gate: the ensemble size k to check")] = None,
    on: Annotated[str, typer.Option("--on", help="gate on the 'upper' bound (default) or the 'estimate'")] = "upper",
) -> None:
    """Print the error tables of saved fits, several side by side."""
    fmt_ = resolve_format(fmt, output)
    check_gate([], max_error, at_k, on)
    docs = [report.document_from_saved(params.load_fit(p), str(p)) for p in fits]
    gate_lines = check_gate(docs, max_error, at_k, on)
    emit(docs, fmt_, output, gate_lines, chart)
    finish_gate(gate_lines)


@app.command()
def sample(
    labeled: Annotated[Path, typer.Argument(help="labeled items in labeling order (live), or the fully labeled pool (--replay)")],
    pool: Annotated[Path | None, typer.Option("--pool", help="live: JSONL of all items to label (with ids); the next ones go to -o")] = None,
    replay: Annotated[bool, typer.Option("--replay", help="replay the rule on a fully labeled pool in random orders")] = False,
    runs: Annotated[int, typer.Option("--runs", help="replay: number of random orders")] = 1,
    batch: Annotated[int | None, typer.Option("--batch", help="live: how many next items to propose (default: the suggested number)")] = None,
    rule: Annotated[str, typer.Option("--rule", help="conformal (the paper's), variance (RQ5 baseline) or precision (recommended)")] = "conformal",
    xi: Annotated[float | None, typer.Option("--xi", help="conformal/variance threshold (default 0.03)")] = None,
    epsilon: Annotated[float | None, typer.Option("--epsilon", help="conformal: quantile level 1 - eps (default 0.1)")] = None,
    tau: Annotated[float | None, typer.Option("--tau", help="Proposition 4.1 scale (default 25)")] = None,
    score_scale: Annotated[str | None, typer.Option("--score-scale", help="conformal: scores on S (default) or S/k")] = None,
    centre: Annotated[str | None, typer.Option("--centre", help="conformal: E[S] as the running 'mean' (default) or 'fitted'")] = None,
    xi_units: Annotated[str | None, typer.Option("--xi-units", help="conformal: xi on the scale of S (default, the paper's) or 'sd': xi * sd of S so far / --reference-sd (scale-free)")] = None,
    reference_sd: Annotated[float | None, typer.Option("--reference-sd", help="conformal, --xi-units sd: the sd of S at which xi means the paper's xi (default 3.5, two-peak data)")] = None,
    min_samples: Annotated[int | None, typer.Option("--min-samples", help="never stop before this many labels (default 10)")] = None,
    patience: Annotated[int | None, typer.Option("--patience", help="consecutive passing checks to stop (conformal default 2, others 1)")] = None,
    target: Annotated[float | None, typer.Option("--target", help="precision: largest interval half-width (default 0.03)")] = None,
    at_k: Annotated[int | None, typer.Option("--at-k", help="precision: the k to check (default: the widest over --ks)")] = None,
    precision_method: Annotated[str | None, typer.Option("--precision-method", help="precision: 'calibrated' (default; fit's interval checked at a stricter level, honest by a calibration benchmark) or 'sequential' (an always-valid confidence sequence: a theorem, more labels)")] = None,
    ks: KsOpt = "1-11",
    confidence_level: ConfOpt = 0.9,
    method: Annotated[str, typer.Option("--method", help="fit method: default, plugin or paper")] = "default",
    components: Annotated[str, typer.Option("--components", help="mixture components: 1, 2, 3 or auto")] = "auto",
    seed: SeedOpt = 0,
    fmt: FormatOpt = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="live: write the next items (JSONL) here; replay: the results")] = None,
    judgments_field: JudgmentsField = "judgments",
    correct_field: CorrectField = "correct",
    judges_field: JudgesField = "judges",
    verdicts_field: VerdictsField = "verdicts",
    label_field: LabelField = "label",
    id_field: IdField = "id",
    text_field: TextField = "text",
    tolerance: ToleranceOpt = None,
) -> None:
    """Adaptive stopping: exit 0 'stop' when enough items are labeled, else exit 1 'continue' and the next items.

    With --replay, draw a fully labeled pool in random orders, stop by the rule and report samples, estimates,
    the pool's actual error and the error margin per run (the paper's Table 1/3 protocol).
    """
    from . import stopping
    from .data import CountTable, read_dataset

    check_output("-o", output)
    fmt_ = resolve_format(fmt, output if replay else None)
    if fmt_ not in ("table", "json"):
        raise UsageError(f"sample writes table or json; got --format {fmt_}")
    settings = FitSettings(method=method, components=_components(components), ks=parse_ks(ks), confidence_level=confidence_level)
    options: dict[str, Any] = dict(xi=xi, epsilon=epsilon, tau=tau, score_scale=score_scale, centre=centre,
                                   xi_units=xi_units, reference_sd=reference_sd, min_samples=min_samples,
                                   patience=patience, target=target, at_k=at_k, method=precision_method)
    if rule == "precision":
        options.update(ks=settings.ks, confidence_level=confidence_level)
    the_rule = stopping.make_rule(rule, **options)
    check_seed(seed)
    if runs < 1:
        raise UsageError(f"--runs must be at least 1; got {runs}")
    if batch is not None and batch < 1:
        raise UsageError(f"--batch must be at least 1; got {batch}")
    if replay and (pool is not None or batch is not None):
        raise UsageError("--replay takes the labeled pool as its argument: drop --pool and --batch")
    if not replay and runs != 1:
        raise UsageError("--runs needs --replay")
    spec = input_spec(judgments_field, correct_field, judges_field, verdicts_field, label_field, id_field, text_field, tolerance, False)
    ds = read_dataset(labeled, spec, keep_items=True)
    items = list(ds.items or ())
    stopping.check_ids(items, str(labeled), need_ids=replay or pool is not None, id_field=id_field)
    # the pool is read and checked before anything is printed, so that bad input gives one line on stderr
    pool_items = stopping.read_pool(str(pool), id_field) if pool is not None else None
    if pool_items is not None:
        stopping.check_labeled_in_pool(items, pool_items, str(labeled), id_field)
    theory = the_rule.theoretical_samples()
    rng = np.random.default_rng(seed)
    rule_doc = {"rule": the_rule.name, "rule_settings": the_rule.describe(), "theoretical_samples": theory}
    if theory is not None:
        err.print(f"Proposition 4.1: r >= {theory} for xi = {the_rule.xi:g}, tau = {the_rule.tau:g}", markup=False)  # type: ignore[union-attr]

    if replay:
        full = ds.table
        actual = stopping.empirical_errors(full, settings.ks)
        results = []
        from rich.progress import Progress

        with Progress(console=err, transient=True, disable=runs < 5) as progress:
            task = progress.add_task("replays", total=runs)
            for i in range(runs):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FitWarning)
                    results.append(stopping.replay_one(the_rule, items, settings, rng, i, full, actual))
                progress.advance(task)
        docs = []
        for r in results:
            d = {"schema": report.SCHEMA, "command": "sample", "mode": "replay", "dataset": ds.name, "source": ds.source,
                 "pool_items": len(items), "seed": seed, **rule_doc, **r.to_dict()}
            docs.append(d)
        summary: dict[str, Any] = {"schema": report.SCHEMA, "command": "sample", "mode": "replay",
                                   "summary": stopping.summarize(results), "dataset": ds.name, **rule_doc, "seed": seed}
        text: str | None
        if fmt_ == "json":
            text = "".join(_jsonl(d) for d in docs + [summary])
        else:
            view = report.TableView(
                title=f"{ds.name}: {runs} replay(s) of the {the_rule.name} rule ({len(items)} items in the pool)",
                columns=("run", "stopped", "samples", "margin (pts)"),
                rows=tuple((str(r.run), "yes" if r.stopped else "pool exhausted", str(r.samples),
                            "—" if r.margin is None else f"{r.margin:.2f}") for r in results),
            )
            s = summary["summary"]
            lines = [f"samples: mean {s['samples']['mean']:.1f}, sd {s['samples']['sd']:.1f}"]
            if s["margin"]["mean"] is not None:
                lines.append(f"margin: mean {s['margin']['mean']:.2f} points, sd {s['margin']['sd']:.2f}")
            if theory is not None:
                lines.append(f"Proposition 4.1: {theory}")
            console = Console(record=True, width=110, highlight=False) if output is not None else out
            with console.capture() if output is not None else _nullcontext():
                console.print(rich_table(view))
                for ln in lines:
                    console.print(ln, markup=False)
            text = console.export_text() if output is not None else None
        if output is not None:
            params.atomic_write_text(output, text or "")
            err.print(f"wrote {output}", markup=False)
        elif text is not None:
            sys.stdout.write(text)
        return

    pool_size = len(pool_items) if pool_items is not None else None
    decision = stopping.decide(the_rule, items, rng, pool_size)
    table = CountTable.from_pairs([it.judges for it in items], [it.correct for it in items])
    from .fit import analyse

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)
        result = analyse(table, settings, np.random.default_rng(seed))
    doc = report.fit_document("sample", ds.name, ds.source, table, result, seed)
    doc.update({"mode": "live", **rule_doc, "stopped": decision.stopped, "samples": decision.samples,
                "stop_at": decision.stop_at, "more_needed": decision.more, "statistic": decision.statistic,
                "labeled_ids": [it.id for it in items]})
    if "last" in decision.path.extra:
        doc["stopping_intervals"] = [{"k": k, **v} for k, v in decision.path.extra["last"].items()]
    if decision.stopped:
        message = f"stop: enough labels (r = {decision.samples})"
        nxt: list[Any] = []
    else:
        message = f"continue: label about {decision.more} more"
        nxt = []
        if pool_items is not None:
            nxt = stopping.next_items(pool_items, {it.id for it in items if it.id is not None}, batch or decision.more, np.random.default_rng(seed))
    doc["message"] = message
    doc["next_ids"] = [p.id for p in nxt]
    if output is not None:
        params.atomic_write_text(output, b"".join(p.raw for p in nxt).decode("utf-8"))
        err.print(f"wrote {len(nxt)} next item(s) to {output}", markup=False)
    if fmt_ == "json":
        sys.stdout.write(report.to_json([doc]))
    else:
        out.print(message, markup=False)
        if decision.stopped:
            show_tables([doc], out, chart=False)
        elif nxt and output is None:
            out.print("next: " + " ".join(p.id for p in nxt), markup=False)
    if not decision.stopped:
        raise typer.Exit(1)


def _jsonl(doc: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n"


def _nullcontext() -> Any:
    import contextlib

    return contextlib.nullcontext()


def _int_list(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise UsageError(f"{option}: cannot read {text!r}; use comma-separated integers such as 10,30,56") from None
    if not values:
        raise UsageError(f"{option}: give at least one value")
    return values


@app.command()
def evaluate(
    data: Annotated[list[str], typer.Argument(help="fully labeled judgment JSONL files, directories or globs")],
    r: Annotated[str | None, typer.Option("--r", help="fixed-r mode: numbers of labeled items per draw, comma-separated (default 10,30,56)")] = None,
    runs: Annotated[int, typer.Option("--runs", help="paired random draws (or random orders) per dataset and setting")] = 30,
    rule: Annotated[str | None, typer.Option("--rule", help="adaptive mode: label in random orders until this stopping rule fires: conformal, variance or precision")] = None,
    xi: Annotated[str | None, typer.Option("--xi", help="adaptive, conformal/variance: thresholds, comma-separated (default 0.06,0.03,0.01)")] = None,
    target: Annotated[str | None, typer.Option("--target", help="adaptive, precision: interval half-widths, comma-separated (default 0.05,0.03)")] = None,
    epsilon: Annotated[float | None, typer.Option("--epsilon", help="adaptive, conformal: quantile level 1 - eps (default 0.1)")] = None,
    tau: Annotated[float | None, typer.Option("--tau", help="adaptive, conformal: Proposition 4.1 scale (default 25)")] = None,
    patience: Annotated[int | None, typer.Option("--patience", help="adaptive: consecutive passing checks to stop")] = None,
    min_samples: Annotated[int | None, typer.Option("--min-samples", help="adaptive: never stop before this many labels (default 10)")] = None,
    transfer_mode: Annotated[bool, typer.Option("--transfer", help="leave-one-out prior transfer: each dataset the target once, the other datasets of its folder the sources (default --r 10)")] = False,
    embedding_model: Annotated[str | None, typer.Option("--embedding-model", help="transfer: local sentence-transformers model (default: the bundled all-MiniLM-L6-v2)")] = None,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="transfer: embedding cache directory")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="transfer: do not read or write the embedding cache")] = False,
    methods: Annotated[str, typer.Option("--methods", help="estimators, comma-separated: default, plugin, paper, binomial, beta_binomial, empirical (or all)")] = "all",
    ks: KsOpt = "1-11",
    confidence_level: ConfOpt = 0.9,
    seed: SeedOpt = 0,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="draw the paper's figures 3 and 4 on this data into FILE.png, .svg or .pdf")] = None,
    plot_r: Annotated[int | None, typer.Option("--plot-r", help="the r drawn in the figures (default: the largest evaluated)")] = None,
    per_run: Annotated[bool, typer.Option("--per-run", help="json: include every draw's margin")] = False,
    judgments_field: JudgmentsField = "judgments",
    correct_field: CorrectField = "correct",
    judges_field: JudgesField = "judges",
    verdicts_field: VerdictsField = "verdicts",
    label_field: LabelField = "label",
    id_field: IdField = "id",
    text_field: TextField = "text",
    tolerance: ToleranceOpt = None,
    skip_invalid: SkipOpt = False,
) -> None:
    """Replay the paper's experiments on fully labeled data: every estimator on paired random draws of r items
    against the whole dataset's actual error (error margin over odd k, interval coverage), with figures.

    With --rule, each run labels the data in a random order until the stopping rule fires and reports the
    samples used as well (the paper's Tables 1 and 3, Fig. 6). With --transfer, each dataset is the target once
    and the other datasets of its folder are its sources (Table 2).
    """
    from . import evaluate as ev_core

    fmt_ = resolve_format(fmt, output)
    chosen = ev_core.ESTIMATORS if methods.strip() == "all" else tuple(m.strip() for m in methods.split(",") if m.strip())
    if rule is not None and r is not None:
        raise UsageError("--r sets fixed-r mode and --rule adaptive mode: use one of them")
    if rule is not None and transfer_mode:
        raise UsageError("--rule (adaptive mode) and --transfer are separate modes: use one of them")
    if transfer_mode and methods.strip() != "all":
        raise UsageError("--transfer always compares no transfer, transfer, paper transfer and empirical: drop --methods")
    if not transfer_mode and any(v is not None for v in (embedding_model, cache_dir)):
        raise UsageError("--embedding-model and --cache-dir need --transfer")
    if rule is None and any(v is not None for v in (xi, target, epsilon, tau, patience, min_samples)):
        raise UsageError("--xi, --target, --epsilon, --tau, --patience and --min-samples need --rule")
    settings = ev_core.EvaluateSettings(
        sizes=_int_list(r or ("10" if transfer_mode else "10,30,56"), "--r"), runs=runs, methods=chosen, ks=parse_ks(ks), confidence_level=confidence_level
    )
    rules: list[tuple[str, Any]] = []
    rule_info: dict[str, Any] | None = None
    if rule is not None:
        from . import stopping

        param = "target" if rule == "precision" else "xi"
        if rule == "precision" and xi is not None:
            raise UsageError("--rule precision takes --target, not --xi")
        if rule != "precision" and target is not None:
            raise UsageError(f"--rule {rule} takes --xi, not --target")
        values_text = (target or "0.05,0.03") if param == "target" else (xi or "0.06,0.03,0.01")
        try:
            values = [float(v) for v in values_text.replace(" ", "").split(",") if v]
        except ValueError:
            raise UsageError(
                f"--{param}: cannot read {values_text!r}; use comma-separated numbers such as 0.06,0.03"
            ) from None
        if not values:
            raise UsageError(f"--{param}: give at least one value")
        common: dict[str, Any] = dict(epsilon=epsilon, tau=tau, patience=patience, min_samples=min_samples)
        if rule == "precision":
            common.update(ks=settings.ks, confidence_level=confidence_level)
        for v in values:
            built = stopping.make_rule(rule, **{param: v}, **common)
            rules.append((f"{param}={v:g}", built))
        rule_info = {"rule": rule, "parameter": param, "values": values, **{k: v for k, v in built.describe().items() if k != param}}
    check_seed(seed)
    if plot is not None:
        from .plots import figure_format

        check_output("--plot", plot)
        figure_format(plot)
    if plot_r is not None and rule is not None:
        raise UsageError("--plot-r applies to fixed-r mode; adaptive figures use the setting with the most labels")
    if plot_r is not None and plot_r not in settings.sizes:
        raise UsageError(f"--plot-r {plot_r} is not among --r {','.join(map(str, settings.sizes))}")
    spec = input_spec(judgments_field, correct_field, judges_field, verdicts_field, label_field, id_field, text_field, tolerance, skip_invalid)
    datasets = read_datasets(data, spec, keep_items=transfer_mode)
    for ds in datasets:
        if ds.skipped:
            err.print(f"{ds.source}: skipped {ds.skipped} invalid line(s)", markup=False)
    transfer_data = []
    if transfer_mode:
        from . import embeddings

        embedder = embeddings.load_embedder(embedding_model, cache_dir=None if no_cache else embeddings.cache_path(cache_dir))
        for ds in datasets:
            items = ds.items or ()
            vectors = np.asarray(embedder.embed(embeddings.item_texts(ds)), dtype=np.float64)
            transfer_data.append(
                ev_core.TransferData(
                    ds.name, str(Path(ds.source).resolve().parent),
                    np.array([it.judges for it in items], dtype=np.int64), np.array([it.correct for it in items], dtype=np.int64),
                    vectors, embedder.name,
                )
            )
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    total = settings.runs * (len(rules) or len(settings.sizes)) * len(datasets)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=total < 20,
    ) as progress:
        task = progress.add_task("draws", total=total)

        def advance(done: int, _total: int, label: str) -> None:
            progress.update(task, completed=done, description=label)

        named = [(ds.name, ds.table) for ds in datasets]
        if transfer_mode:
            evaluation = ev_core.evaluate_transfer(transfer_data, settings, seed, advance)
        elif rules:
            evaluation = ev_core.evaluate_adaptive(named, rules, settings, seed, advance, rule_info)
        else:
            evaluation = ev_core.evaluate(named, settings, seed, advance)
    for c in evaluation.cells:
        if c.not_converged:
            err.print(f"warning: {c.dataset} r={c.size}: {c.not_converged} fit(s) did not converge", markup=False)
    note = ev_core.skipped_note(evaluation)
    if note:
        err.print(note, markup=False)
    if fmt_ == "json":
        text: str | None = ev_core.to_json(evaluation, per_run)
    elif fmt_ == "csv":
        text = ev_core.to_csv(evaluation)
    elif fmt_ == "markdown":
        text = ev_core.to_markdown(evaluation)
    else:
        text = None

    def show(console: Console) -> None:
        for view in ev_core.margin_views(evaluation, compact=True):
            console.print(rich_table(view))
            console.print()
        console.print(f"seed {seed}; " + ev_core.MARGIN_DEFINITION, markup=False)

    if output is None:
        if text is None:
            show(out)
        else:
            sys.stdout.write(text)
    else:
        if text is None:
            console = Console(record=True, width=140, highlight=False)
            with console.capture():
                show(console)
            text = console.export_text()
        params.atomic_write_text(output, text)
        err.print(f"wrote {output}", markup=False)
    if plot is not None:
        from .plots import plot_evaluation

        plot_evaluation(evaluation, plot, plot_r)
        err.print(f"wrote {plot}", markup=False)


@app.command("transfer")
def transfer_cmd(
    targets: Annotated[list[str], typer.Argument(help="target judgment JSONL files (a few labeled items with text), directories or globs")],
    sources: Annotated[list[str], typer.Option("--sources", help="source fits (YAML from fit --save --embed): a directory, a quoted glob or a file; repeat the flag for more")],
    method: Annotated[str, typer.Option("--method", help="default (Bayesian: the target's labels weigh each source) or paper (eq. 14-15 averaging)")] = "default",
    size_weight: Annotated[str | None, typer.Option("--size-weight", help="eq. 14 size term: log (log r_i) or linear (r_i, Table 5 ablation)")] = None,
    similarity: Annotated[str | None, typer.Option("--similarity", help="cosine or inverse-euclidean (Table 5 ablation)")] = None,
    sigmoid: Annotated[bool | None, typer.Option("--sigmoid/--no-sigmoid", help="eq. 14's sigmoid (--no-sigmoid: Table 5 ablation)")] = None,
    sigmoid_a: Annotated[float | None, typer.Option("--sigmoid-a", help="eq. 14's a (default from configs/transfer.yaml: 10)")] = None,
    sigmoid_b: Annotated[float | None, typer.Option("--sigmoid-b", help="eq. 14's b (default from configs/transfer.yaml: 0.5)")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="transfer hyper-parameters YAML (like configs/transfer.yaml)")] = None,
    ks: KsOpt = "1-11",
    confidence_level: ConfOpt = 0.9,
    seed: SeedOpt = 0,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    save: Annotated[Path | None, typer.Option("--save", help="save the transferred fit as YAML (one target only); report reads it")] = None,
    save_dir: Annotated[Path | None, typer.Option("--save-dir", help="save one <target>.yaml per target here")] = None,
    embedding_model: Annotated[str | None, typer.Option("--embedding-model", help="local sentence-transformers model (default: the bundled all-MiniLM-L6-v2)")] = None,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="embedding cache directory")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="do not read or write the embedding cache")] = False,
    judgments_field: JudgmentsField = "judgments",
    correct_field: CorrectField = "correct",
    judges_field: JudgesField = "judges",
    verdicts_field: VerdictsField = "verdicts",
    label_field: LabelField = "label",
    id_field: IdField = "id",
    text_field: TextField = "text",
    tolerance: ToleranceOpt = None,
    skip_invalid: SkipOpt = False,
) -> None:
    """Borrow strength from fitted source datasets for targets with only a few labels."""
    yaml_targets = [t for t in targets if t.endswith((".yaml", ".yml"))]
    if yaml_targets:
        raise UsageError(
            f"{yaml_targets[0]}: a target must be judgment JSONL; this looks like a saved fit. "
            "Give each source its own --sources flag, or one quoted glob: --sources 'fits/*.yaml'"
        )
    import yaml
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from . import embeddings, transfer
    from .errors import ParamsError

    fmt_ = resolve_format(fmt, output)
    settings = FitSettings(ks=parse_ks(ks), confidence_level=confidence_level)
    cfg: Any = {}
    if config is not None:
        try:
            cfg = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError) as exc:  # a binary file is not an OSError
            raise ParamsError(f"{config}: cannot read transfer config: {exc}") from None
        except yaml.YAMLError as exc:  # str(exc) spans several lines (the snippet and a caret): keep one
            mark = getattr(exc, "problem_mark", None)
            where = f"{config}:{mark.line + 1}" if mark is not None else str(config)
            raise ParamsError(f"{where}: malformed transfer config ({getattr(exc, 'problem', None) or exc})") from None
    tsettings = transfer.settings_from_config(
        cfg, str(config or "config"), method=method, size_weight=size_weight, similarity=similarity,
        sigmoid=sigmoid, sigmoid_a=sigmoid_a, sigmoid_b=sigmoid_b,
    )
    check_seed(seed)
    if save is not None and save_dir is not None:
        raise UsageError("use --save FILE or --save-dir DIR, not both")
    spec = input_spec(judgments_field, correct_field, judges_field, verdicts_field, label_field, id_field, text_field, tolerance, skip_invalid)
    source_paths = [p for arg in sources for p in _source_files(arg)]
    srcs = [transfer.Source.from_saved(params.load_fit(p), str(p)) for p in source_paths]
    datasets = read_datasets(targets, spec, keep_items=True)
    if save is not None and len(datasets) > 1:
        raise UsageError(f"--save takes one target, got {len(datasets)}; use --save-dir DIR for many")
    texts = {ds.name: embeddings.item_texts(ds) for ds in datasets}  # a missing text fails before any model time
    embedder = embeddings.load_embedder(embedding_model, cache_dir=None if no_cache else embeddings.cache_path(cache_dir))
    transfer.check_embeddings(srcs, embedder.name, embedder.dimension)
    with Progress(TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err, transient=True) as bar:
        task = bar.add_task("embedding", total=None)
        embedder.progress = lambda done, total: bar.update(task, completed=done, total=total)
        target_vectors = {name: embeddings.mean_embedding(embedder, t) for name, t in texts.items()}
    docs = []
    results = transfer.transfer_many(
        [(ds.table, target_vectors[ds.name]) for ds in datasets], srcs, tsettings, settings, seed
    )
    for ds, res in zip(datasets, results):
        if ds.skipped:
            err.print(f"{ds.source}: skipped {ds.skipped} invalid line(s)", markup=False)
        doc = transfer.transfer_document(ds.name, ds.source, ds.table, res, seed, ds.skipped)
        docs.append(doc)
        if res.conflict:
            err.print(f"warning: {ds.name}: prior conflict: {res.conflict_reason}", markup=False)
        if save is not None or save_dir is not None:
            target = save if save is not None else save_dir / f"{ds.name}.yaml"  # type: ignore[operator]
            emb = {"model": embedder.name, "dimension": int(embedder.dimension), "texts": len(texts[ds.name]),
                   "mean": [float(x) for x in target_vectors[ds.name]]}
            params.dump_fit(target, report.saved_document(doc, emb))
            err.print(f"saved {target}", markup=False)
    if fmt_ == "table":
        console = out if output is None else Console(file=None, record=True, width=110, highlight=False)
        for d in docs:
            for view in transfer.transfer_views(d):
                console.print(rich_table(view))
            console.print(report.describe(d), markup=False)
            console.print()
        if output is not None:
            params.atomic_write_text(output, console.export_text())
            err.print(f"wrote {output}", markup=False)
        return
    emit(docs, fmt_, output, [], chart=False)


def _source_files(arg: str) -> list[Path]:
    """--sources: a directory (every *.yaml / *.yml inside), a glob, or a file."""
    import glob as _glob

    p = Path(arg)
    if p.is_dir():
        found = sorted(q for q in p.iterdir() if q.is_file() and q.suffix in (".yaml", ".yml"))
    elif any(ch in arg for ch in "*?["):
        found = sorted(Path(x) for x in _glob.glob(arg) if Path(x).is_file())
    else:
        found = [p]
    if not found:
        raise UsageError(f"--sources {arg}: no source YAML file found")
    return found


def version_callback(value: bool) -> None:
    if value:
        out.print(f"betaconform {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=version_callback, is_eager=True, help="show the version and exit")] = False,
) -> None:
    """How accurate is your ensemble of LLM judges? Majority-vote error for k = 1..11 judges from a few labels.

    Exit codes: 0 ok, 1 a --max-error gate failed (or `sample` says continue), 2 bad usage or input.
    """


def main() -> None:
    """Console-script entry point (standalone mode: click handles usage errors with exit code 2).

    BLAS is pinned to one thread: every matrix here is tiny, and OpenBLAS threads that spin on a busy
    2-core machine made a fit 5-10x slower (measured: 0.06 s vs 0.4-0.7 s under load).
    """
    from threadpoolctl import threadpool_limits

    code: Any = 0
    with threadpool_limits(limits=1, user_api="blas"):
        try:
            app(prog_name="betaconform")
        except SystemExit as exc:
            code = exc.code
    _exit_now(code)


def _exit_now(code: Any) -> None:
    """Flush and leave without the interpreter's tear-down of numpy/scipy/typer modules, which took
    ~0.15 s of a 0.8 s run (measured by benchmarks/speed.py). Every file this tool writes is already
    closed (atomic writes), so nothing is lost; only the console-script path does this, not the app."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        sys.stderr.write(f"{code}\n")
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: the reader has gone, as with `| head`
            pass
    os._exit(status)
