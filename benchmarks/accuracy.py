"""Accuracy benchmark: the numbers behind every accuracy claim in the README.

For every dataset under ../shared/data (recursively, *.jsonl and *.jsonl.gz): 30 seeded paired draws of
r = 10, 30 and 56 items (without replacement), every estimator against the whole dataset's exact majority
error; error margin over odd k as METHOD.md defines it. A dataset with fewer than r + 1 items is skipped at
that r and listed. Prints a Markdown section; --update-doc FILE replaces the section between the markers
<!-- accuracy:start --> and <!-- accuracy:end --> in FILE (docs/BENCHMARKS.md).

    .venv/bin/python benchmarks/accuracy.py --update-doc docs/BENCHMARKS.md

Exits 0 with a message when the data folder is absent (the data is not part of the repository).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import scipy  # noqa: E402

from betaconform_cli import __version__  # noqa: E402
from betaconform_cli.atomic import write_text as atomic_write_text  # noqa: E402
from betaconform_cli.estimators import REGISTRY  # noqa: E402
from betaconform_cli.evaluate import EvaluateSettings, Evaluation, evaluate  # noqa: E402
from betaconform_cli.inputs import read_dataset  # noqa: E402
from betaconform_cli.report.evaluate import EvaluationReport, margin_views, skipped_note  # noqa: E402
from betaconform_cli.report.render import markdown_table  # noqa: E402

START, END = "<!-- accuracy:start -->", "<!-- accuracy:end -->"
DEFAULT_DATA = ROOT.parent / "shared" / "data"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs (nproc), {cpu}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}; betaconform {__version__}"
    )


def data_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))


def f2(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.2f}"


def summary_tables(ev: Evaluation) -> str:
    methods = ev.settings.methods
    head = "| r | datasets | " + " | ".join(REGISTRY[m].label for m in methods) + " |"
    rule = "|---:|---:|" + "---:|" * len(methods)
    lines = [
        "**Mean error margin over datasets** (points, mean ± standard error from the draws; each dataset weighs the same)",
        "",
        head,
        rule,
    ]
    diff_lines = [
        "**Paired difference, estimator minus default** (points; positive = the default is better; ± standard error; "
        "in brackets the datasets on which the default has the lower mean margin)",
        "",
        "| r | " + " | ".join(REGISTRY[m].label for m in methods if m != "default") + " |",
        "|---:|" + "---:|" * (len(methods) - 1),
    ]
    verdicts = []
    for size in ev.settings.sizes:
        rows = ev.averages(size)
        if not rows:
            continue
        lines.append(
            f"| {size} | {rows[0].datasets} | " + " | ".join(f"{f2(a.margin_mean)} ± {f2(a.margin_se)}" for a in rows) + " |"
        )
        others = [a for a in rows if a.method != "default"]
        diff_lines.append(
            f"| {size} | "
            + " | ".join(f"{f2(a.diff_vs_default)} ± {f2(a.diff_se)} ({a.default_wins}/{a.datasets})" for a in others)
            + " |"
        )
        clear = [a for a in others if a.diff_vs_default is not None and a.diff_se and a.diff_vs_default > 2 * a.diff_se]
        within = [a for a in others if a.diff_vs_default is not None and a not in clear and a.diff_vs_default > 0]
        lost = [a for a in others if a.diff_vs_default is not None and a.diff_vs_default <= 0]

        def names(rows: list) -> str:
            return ", ".join(REGISTRY[a.method].label for a in rows)

        text = f"- r = {size}: the default's mean margin is lower than every other estimator's" if not lost else (
            f"- r = {size}: the default's mean margin is not lower than that of {names(lost)}"
        )
        parts = []
        if clear:
            parts.append(f"by more than two standard errors against {names(clear)}")
        if within:
            parts.append(f"within two standard errors against {names(within)}")
        verdicts.append(text + ("; " + "; ".join(parts) if parts else "") + ".")
        cells = [c for c in ev.cells if c.key == f"r={size}"]
        if "default" in methods and cells:
            cov = float(np.mean([c.summary("default").coverage for c in cells]))
            wid = float(np.mean([c.summary("default").width_mean for c in cells]))
            verdicts.append(
                f"  The default's {ev.settings.confidence_level:.0%} interval at r = {size}: mean coverage "
                f"{100 * cov:.0f}% over odd k, mean width {100 * wid:.1f} points."
            )
    return "\n".join(lines) + "\n\n" + "\n".join(diff_lines) + "\n\n" + "\n".join(verdicts) + "\n"


def time_cli(path: Path, runs: int, sizes: str, seed: int) -> tuple[str, float]:
    """Wall time of the whole `betaconform evaluate FILE` command (start-up, reading, fits, output)."""
    cmd = [sys.executable, "-m", "betaconform_cli", "evaluate", str(path), "--r", sizes, "--runs", str(runs),
           "--seed", str(seed), "--format", "json"]
    t0 = time.monotonic()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    shown = f"betaconform evaluate {os.path.relpath(path, ROOT)} --r {sizes} --runs {runs} --seed {seed} --format json"
    return shown, time.monotonic() - t0


def one_component(ev: Evaluation) -> str:
    """How often the BIC-chosen mixture gave the same error table as the single Beta-Binomial."""
    if "plugin" not in ev.settings.methods or "beta_binomial" not in ev.settings.methods:
        return ""
    same = total = 0
    for c in ev.cells:
        p = c.draws.estimates[:, c.methods.index("plugin"), :]
        b = c.draws.estimates[:, c.methods.index("beta_binomial"), :]
        same += int(np.all(np.abs(p - b) < 1e-12, axis=1).sum())
        total += c.runs
    return (
        f"in {same} of {total} draws it chose one component (its error table equals the single Beta-Binomial's), "
        "so on these sample sizes the default is in effect a posterior centred on one Beta-Binomial."
    )


def section(ev: Evaluation, command: str, seconds: float, n_files: int, cli: tuple[str, float] | None = None) -> str:
    s = ev.settings
    parts = [
        START,
        "## Accuracy",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine()}  ",
        f"Run time: {seconds:.0f} s for {n_files} datasets, {s.runs} draws at each r = {', '.join(map(str, s.sizes))} "
        f"(seed {ev.seed})."
        + (f"  \nOne dataset end to end: `{cli[0]}` took {cli[1]:.1f} s (quality bar: under 30 s)." if cli else ""),
        "",
        "Method: for each dataset and r, the same r items (drawn without replacement) go to every estimator; each is "
        "compared with the whole dataset's exact majority error (mean over all sub-ensembles, a hypergeometric "
        "probability). Error margin = mean over odd k = 1, 3, ..., 11 of |estimate - actual|, in percentage points. "
        "A dataset with fewer than r + 1 items is skipped at that r (listed below), so the averages at different r "
        "cover different sets of datasets. Estimators: default = Dirichlet posterior centred on the MAP "
        "Beta-Binomial mixture (components by BIC); MAP mixture = that fit, plug-in; paper EM = the paper's EM as "
        "printed; Binomial = pooled single-judge accuracy; single BB = one Beta-Binomial (MAP); empirical = the drawn "
        "items' own exact majority error. Coverage and width: the default's "
        f"{s.confidence_level:.0%} interval, over odd k.",
        "",
        summary_tables(ev),
        skipped_note(ev) + ("." if ev.skipped else ""),
        "",
        "Reading the numbers: the standard errors are over the random draws with these datasets held fixed; they "
        "say how repeatable the averages are, not how they would change on other datasets. Whether one estimator "
        "beats another is read from the paired differences (same items, same draw). 'MAP mixture' uses the "
        f"number of components that BIC picks; {one_component(ev)} METHOD.md's earlier table used a fixed "
        "two-component MAP mixture and its r = 56 row covered all 15 datasets, so its numbers differ from these.",
        "",
        "### Per dataset",
        "",
    ]
    parts += [markdown_table(v) + "\n" for v in margin_views(ev)]
    parts.append(END)
    return "\n".join(parts) + "\n"


def update_doc(doc: Path, text: str) -> None:
    old = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    if START in old and END in old:
        new = old[: old.index(START)] + text.rstrip("\n") + old[old.index(END) + len(END) :]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    atomic_write_text(doc, new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of judgment files (searched recursively)")
    ap.add_argument("--r", default="10,30,56", help="numbers of labeled items, comma-separated")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the full evaluation as JSON here")
    ap.add_argument("--update-doc", type=Path, help="replace the accuracy section of this Markdown file")
    ap.add_argument("--no-cli-timing", action="store_true", help="skip timing the CLI on the largest dataset")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"accuracy benchmark skipped: no data folder at {args.data}", file=sys.stderr)
        return 0
    files = data_files(args.data)
    if not files:
        print(f"accuracy benchmark skipped: no *.jsonl files under {args.data}", file=sys.stderr)
        return 0
    datasets = [read_dataset(p) for p in files]
    settings = EvaluateSettings(sizes=tuple(int(x) for x in args.r.split(",")), runs=args.runs)
    total = settings.runs * len(settings.sizes) * len(datasets)
    last = [0.0]

    def progress(done: int, total_: int, label: str) -> None:
        now = time.monotonic()
        if now - last[0] > 10 or done == total_:
            last[0] = now
            print(f"  {done}/{total_} draws ({label})", file=sys.stderr)

    t0 = time.monotonic()
    ev = evaluate([(d.name, d.table) for d in datasets], settings, args.seed, progress)
    seconds = time.monotonic() - t0
    print(f"{total} draws in {seconds:.0f} s", file=sys.stderr)
    cli = None
    if not args.no_cli_timing:
        largest = max(zip(datasets, files), key=lambda df: df[0].n_items)[1]
        cli = time_cli(largest, args.runs, args.r, args.seed)
        print(f"CLI on {largest.name}: {cli[1]:.1f} s", file=sys.stderr)
    rel = os.path.relpath(args.data, ROOT)
    command = f".venv/bin/python benchmarks/accuracy.py --data {rel} --r {args.r} --runs {args.runs} --seed {args.seed}"
    text = section(ev, command, seconds, len(datasets), cli)
    if args.json is not None:
        atomic_write_text(args.json, EvaluationReport(ev, per_run=True).json())
    if args.update_doc is not None:
        update_doc(args.update_doc, text)
        print(f"updated {args.update_doc}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
