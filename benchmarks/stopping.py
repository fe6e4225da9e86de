"""Adaptive-stopping benchmark: replays of each rule on a synthetic two-peak pool and on ../shared/data.

Run from the repository root:  .venv/bin/python benchmarks/stopping.py [--runs 30]
Prints a Markdown table (the one in docs/STOPPING.md). Skips the real data cleanly when ../shared/data is absent.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # BLAS threads fight over 2 cores and slow the fits ~30x
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from betaconform_cli import stopping as st  # noqa: E402
from betaconform_cli.data import CountTable, Item, read_dataset  # noqa: E402
from betaconform_cli.fit import FitSettings, empirical_errors  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / ".." / "shared" / "data"
PAPER = {0.06: 35, 0.03: 50, 0.01: 105}


def two_peak(n: int, rng: np.random.Generator, judges: int = 11) -> list[Item]:
    hard = rng.random(n) < 0.3
    p = np.where(hard, rng.beta(1.5, 4, n), rng.beta(8, 1, n))
    s = rng.binomial(judges, p)
    return [Item(judges, int(x), f"i{i}", None, i + 1) for i, x in enumerate(s)]


def pools() -> list[tuple[str, list[Item]]]:
    out = [("two-peak (synthetic, 2000)", two_peak(2000, np.random.default_rng(2024)))]
    if not DATA.is_dir():
        print(f"note: {DATA} not found; real-data rows skipped")
        return out
    for coll in sorted(p for p in DATA.iterdir() if p.is_dir()):
        items: list[Item] = []
        for f in sorted(coll.glob("*.jsonl")):
            items += [Item(it.judges, it.correct, f"{f.stem}:{it.id}", None, it.line) for it in read_dataset(f, keep_items=True).items or ()]
        top = max(it.judges for it in items)
        items = [it for it in items if it.judges == top]  # one ensemble size per pool
        out.append((f"{coll.name} ({len(items)} items, {top} judges)", items))
    return out


def bench(rule: st.Rule, items: list[Item], runs: int, seed: int) -> dict:
    ks = tuple(range(1, min(11, min(it.judges for it in items)) + 1))
    settings = FitSettings(ks=ks)
    table = CountTable.from_pairs([it.judges for it in items], [it.correct for it in items])
    actual = empirical_errors(table, ks)
    rng = np.random.default_rng(seed)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = [st.replay_one(rule, items, settings, rng, i, table, actual) for i in range(runs)]
    secs = time.perf_counter() - t
    summ = st.summarize(rs)
    within = None
    if isinstance(rule, st.PrecisionRule):
        ok = []
        for r in rs:
            est = {row.k: row.estimate for row in r.result.rows}
            ok.append(all(abs(est[k] - a) <= rule.target for k, a in r.actual.items() if a is not None))
        within = float(np.mean(ok))
    return {**summ, "seconds": secs, "within": within, "exhausted": runs - summ["stopped"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores, python {platform.python_version()}")
    rules: list[tuple[str, st.Rule, int | None]] = [
        ("conformal xi=0.06", st.ConformalRule(xi=0.06), st.theoretical_samples(0.06)),
        ("conformal xi=0.03", st.ConformalRule(xi=0.03), st.theoretical_samples(0.03)),
        ("conformal xi=0.01", st.ConformalRule(xi=0.01), st.theoretical_samples(0.01)),
        ("variance xi=0.03", st.VarianceRule(xi=0.03), None),
        ("precision target=0.03", st.PrecisionRule(target=0.03), None),
    ]
    print("| pool | rule | Prop. 4.1 | paper | mean samples (sd) | pool exhausted | mean margin, pts (sd) | |est-actual| <= target at all k | s / 30 runs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, items in pools():
        for label, rule, theory in rules:
            if isinstance(rule, st.PrecisionRule):
                rule = st.PrecisionRule(target=0.03, ks=tuple(range(1, min(11, min(it.judges for it in items)) + 1)))
            b = bench(rule, items, a.runs, a.seed)
            paper = PAPER.get(getattr(rule, "xi", None), "") if isinstance(rule, st.ConformalRule) else ""
            within = "" if b["within"] is None else f"{100 * b['within']:.0f}%"
            print(f"| {name} | {label} | {theory or ''} | {paper} | {b['samples']['mean']:.1f} ({b['samples']['sd']:.1f}) | "
                  f"{b['exhausted']}/{a.runs} | {b['margin']['mean']:.2f} ({b['margin']['sd']:.2f}) | {within} | "
                  f"{b['seconds'] * 30 / a.runs:.1f} |", flush=True)


if __name__ == "__main__":
    main()
