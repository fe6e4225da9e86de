"""Adaptive-stopping benchmark: replays of each rule on a synthetic two-peak pool and on ../shared/data.

Run from the repository root:  .venv/bin/python benchmarks/stopping.py [--runs 30] [--cal-runs 60] [--parts main,curve,calibration]
Prints the Markdown tables of docs/STOPPING.md: the main table (Table 3 protocol), labels against margin for the
conformal and precision rules (the like-for-like comparison), and the calibration of the calibrated precision
rule on synthetic pools of several shapes and the real data. Skips the real data cleanly when ../shared/data is absent.
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

import msgspec  # noqa: E402
import numpy as np  # noqa: E402

from betaconform_cli import stopping as st  # noqa: E402
from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.inputs import Item, Keep, read_dataset  # noqa: E402
from betaconform_cli.mixtures import empirical_errors  # noqa: E402
from betaconform_cli.settings import FitSettings  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / ".." / "shared" / "data"
PAPER = {0.06: 35, 0.03: 50, 0.01: 105}


def two_peak(n: int, rng: np.random.Generator, judges: int = 11) -> list[Item]:
    hard = rng.random(n) < 0.3
    p = np.where(hard, rng.beta(1.5, 4, n), rng.beta(8, 1, n))
    s = rng.binomial(judges, p)
    return [Item(judges, int(x), f"i{i}", None, i + 1) for i, x in enumerate(s)]


def shaped(n: int, rng: np.random.Generator, judges: int, a: float, b: float) -> list[Item]:
    """n items, each judge right with p ~ Beta(a, b) per item (one peak)."""
    s = rng.binomial(judges, rng.beta(a, b, n))
    return [Item(judges, int(x), f"i{i}", None, i + 1) for i, x in enumerate(s)]


def synthetic_shapes() -> list[tuple[str, list[Item]]]:
    """Pools of other shapes for the calibration check (fixed seeds)."""
    rng = np.random.default_rng(7)
    return [
        ("easy, mostly unanimous (synthetic, 800, 10 judges, Beta(12, 0.6))", shaped(800, rng, 10, 12, 0.6)),
        ("hard, wide (synthetic, 500, 5 judges, Beta(1.2, 1))", shaped(500, rng, 5, 1.2, 1.0)),
        ("two-peak small (synthetic, 300)", two_peak(300, rng)),
    ]


def pools() -> list[tuple[str, list[Item]]]:
    out = [("two-peak (synthetic, 2000)", two_peak(2000, np.random.default_rng(2024)))]
    if not DATA.is_dir():
        print(f"note: {DATA} not found; real-data rows skipped")
        return out
    for coll in sorted(p for p in DATA.iterdir() if p.is_dir()):
        items: list[Item] = []
        for f in sorted(coll.glob("*.jsonl")):
            items += [Item(it.judges, it.correct, f"{f.stem}:{it.id}", None, it.line) for it in read_dataset(f, keep=Keep.ITEMS).items or ()]
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
    summ = msgspec.to_builtins(st.summarize(rs))
    within = within_k = None
    if isinstance(rule, st.PrecisionRule):
        ok = []
        for r in rs:
            est = {row.k: row.estimate for row in r.result.rows}
            ok.append([abs(est[k] - r.actual[k]) <= rule.target for k in rule.checked_ks(np.array([it.judges for it in items]))])
        within = float(np.mean([all(o) for o in ok]))
        within_k = float(np.min(np.mean(np.array(ok), axis=0)))
    return {**summ, "seconds": secs, "within": within, "within_k": within_k, "exhausted": runs - summ["stopped"]}


def ks_of(items: list[Item]) -> tuple[int, ...]:
    return tuple(range(1, min(11, min(it.judges for it in items)) + 1))


_CACHE: dict[tuple[str, str, int], dict] = {}


def cached(pool: str, label: str, rule: st.Rule, items: list[Item], runs: int, seed: int) -> dict:
    key = (pool, label, runs)
    if key not in _CACHE:
        _CACHE[key] = bench(rule, items, runs, seed)
    return _CACHE[key]


def interpolate_labels(curve: list[tuple[float, float]], margin: float) -> float | None:
    """Labels at which a (labels, mean margin) curve reaches `margin`: linear in log labels between the two
    neighbouring points; None when the curve never gets that low (or starts below it)."""
    pts = sorted(curve)
    for (n0, m0), (n1, m1) in zip(pts, pts[1:]):
        if (m0 - margin) * (m1 - margin) <= 0 and m0 != m1:
            w = (m0 - margin) / (m0 - m1)
            return float(np.exp(np.log(n0) + w * (np.log(n1) - np.log(n0))))
    return None


CURVE_XI = (0.06, 0.03, 0.01, 0.005, 0.0025, 0.001)
CURVE_TARGETS = (0.06, 0.04, 0.03, 0.02)
CAL_TARGETS = (0.05, 0.03, 0.02)


def curve_part(all_pools: list[tuple[str, list[Item]]], runs: int, seed: int) -> None:
    print("\n### Labels against margin: conformal at several xi, calibrated precision at several targets\n")
    print("| pool | rule | mean samples | pool exhausted | mean margin, pts |")
    print("|---|---|---|---|---|")
    summary = []
    for name, items in all_pools:
        conf = []
        for xi in CURVE_XI:
            b = cached(name, f"conformal xi={xi}", st.ConformalRule(xi=xi), items, runs, seed)
            conf.append((b["samples"]["mean"], b["margin"]["mean"]))
            print(f"| {name} | conformal xi={xi} | {b['samples']['mean']:.1f} | {b['exhausted']}/{runs} | {b['margin']['mean']:.2f} |", flush=True)
        for tg in CURVE_TARGETS:
            b = cached(name, f"precision calibrated target={tg}", st.PrecisionRule(target=tg, ks=ks_of(items), method="calibrated"), items, runs, seed)
            print(f"| {name} | precision calibrated target={tg} | {b['samples']['mean']:.1f} | {b['exhausted']}/{runs} | {b['margin']['mean']:.2f} |", flush=True)
            need = interpolate_labels(conf, b["margin"]["mean"])
            summary.append((name, tg, b["samples"]["mean"], b["margin"]["mean"], need))
    print("\n| pool | precision target | its mean samples | its mean margin, pts | conformal labels for that margin (interpolated) | precision uses |")
    print("|---|---|---|---|---|---|")
    for name, tg, n, m, need in summary:
        ratio = "conformal curve never got that low" if need is None else f"{100 * (n / need - 1):+.0f}%"
        print(f"| {name} | {tg} | {n:.1f} | {m:.2f} | {'—' if need is None else f'{need:.1f}'} | {ratio} |")


def calibration_part(all_pools: list[tuple[str, list[Item]]], runs: int, seed: int) -> None:
    print(f"\n### Calibration of --precision-method calibrated ({runs} replays per row; promise: >= 90%)\n")
    print("| pool | target | mean samples (sd) | mean margin, pts | |est-actual| <= target at every k | worst single k |")
    print("|---|---|---|---|---|---|")
    for name, items in all_pools:
        for tg in CAL_TARGETS:
            b = cached(name, f"precision calibrated target={tg}", st.PrecisionRule(target=tg, ks=ks_of(items), method="calibrated"), items, runs, seed)
            print(f"| {name} | {tg} | {b['samples']['mean']:.1f} ({b['samples']['sd']:.1f}) | {b['margin']['mean']:.2f} | "
                  f"{100 * b['within']:.0f}% | {100 * b['within_k']:.0f}% |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--cal-runs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="main,curve,calibration")
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    all_pools = pools()
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores, python {platform.python_version()}")
    rules: list[tuple[str, st.Rule, int | None]] = [
        ("conformal xi=0.06", st.ConformalRule(xi=0.06), st.theoretical_samples(0.06)),
        ("conformal xi=0.03", st.ConformalRule(xi=0.03), st.theoretical_samples(0.03)),
        ("conformal xi=0.01", st.ConformalRule(xi=0.01), st.theoretical_samples(0.01)),
        ("conformal xi=0.06, xi-units sd", st.ConformalRule(xi=0.06, xi_units="sd"), None),
        ("conformal xi=0.03, xi-units sd", st.ConformalRule(xi=0.03, xi_units="sd"), None),
        ("conformal xi=0.01, xi-units sd", st.ConformalRule(xi=0.01, xi_units="sd"), None),
        ("variance xi=0.03", st.VarianceRule(xi=0.03), None),
        ("precision calibrated target=0.03", st.PrecisionRule(target=0.03, method="calibrated"), None),
        ("precision sequential target=0.03", st.PrecisionRule(target=0.03, method="sequential"), None),
    ]
    if "main" not in parts:
        rules = []
    else:
        print("| pool | rule | Prop. 4.1 | paper | mean samples (sd) | pool exhausted | mean margin, pts (sd) | |est-actual| <= target at all k | s / 30 runs |")
        print("|---|---|---|---|---|---|---|---|---|")
    for name, items in all_pools if rules else []:
        for label, rule, theory in rules:
            if isinstance(rule, st.PrecisionRule):
                rule = st.PrecisionRule(target=0.03, ks=ks_of(items), method=rule.method)
            b = cached(name, label.replace(", xi-units S", ""), rule, items, a.runs, a.seed)
            paper = PAPER.get(getattr(rule, "xi", None), "") if isinstance(rule, st.ConformalRule) else ""
            within = "" if b["within"] is None else f"{100 * b['within']:.0f}%"
            print(f"| {name} | {label} | {theory or ''} | {paper} | {b['samples']['mean']:.1f} ({b['samples']['sd']:.1f}) | "
                  f"{b['exhausted']}/{a.runs} | {b['margin']['mean']:.2f} ({b['margin']['sd']:.2f}) | {within} | "
                  f"{b['seconds'] * 30 / a.runs:.1f} |", flush=True)
    if "curve" in parts:
        curve_part(all_pools, a.runs, a.seed)
    if "calibration" in parts:
        calibration_part(synthetic_shapes() + all_pools, a.cal_runs, a.seed)


if __name__ == "__main__":
    main()
