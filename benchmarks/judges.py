"""`judges` benchmark: the numbers behind docs/JUDGES.md.

Real data (../shared/data, or --data DIR; every *.jsonl / *.jsonl.gz below it, judges by position): for each
dataset with named judges, 30 seeded draws of r = 30 and r = 56 labeled items (without replacement; a dataset with
fewer than r + 1 items is skipped at that r), k = 3 and 5:

- regret: the whole dataset's majority error of the chosen k-subset minus the best k-subset's;
- honesty: |estimate for the chosen subset - its whole-dataset error|;
- coverage of the interval (90%) of the chosen subset's whole-dataset error.

The whole dataset's error of a subset averages, over the items on which all its members gave a verdict, the
majority error of those members (ties half). Our method is told the dataset's size (`population`), as a user
who labels r of N items would be; the naive rule picks the subset with the lowest error on the labeled items and
reports that error (ties: the mean over the tied subsets, i.e. a uniformly random tie-break). Datasets whose
judges are exchangeable by construction (--exchangeable, default snow_rte: a different worker per slot) are
reported apart, as a sanity check. Means: over draws, then over datasets (each dataset weighs the same).

    .venv/bin/python benchmarks/judges.py                    # main table (+ per dataset, sanity check)
    .venv/bin/python benchmarks/judges.py --tune             # held-out choice of classes and pseudo-items
    .venv/bin/python benchmarks/judges.py --alternatives     # the alternatives docs/JUDGES.md compares
    .venv/bin/python benchmarks/judges.py --resample 300     # populations of 300 items resampled from each set
    .venv/bin/python benchmarks/judges.py --calibrate        # the interval's widening, chosen held out
    .venv/bin/python benchmarks/judges.py --simulate         # data simulated from the model / exchangeable BB
    .venv/bin/python benchmarks/judges.py --speed            # 11 judges x 400 items, end to end
    .venv/bin/python benchmarks/judges.py --unlabeled        # issue 17: r = 10, 30, 56 labeled, the rest verdicts only
                                                             # (benchmarks/judges_unlabeled.py; --alternatives too)

Exits 0 with a message when the data folder is absent (simulation and speed need no data).
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import os
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from betaconform_cli.judges import JudgesSettings, analyse_judges, rescore, sample_posterior  # noqa: E402
from betaconform_cli.judges.analysis import widen  # noqa: E402
from betaconform_cli.judges.maxent import fit_maxent, maxent_subset_errors  # noqa: E402
from betaconform_cli.judges.subsets import SubsetTable, empirical_subset_errors, exact_tables  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
KS = (3, 5)
RS = (30, 56)
DEFAULT = JudgesSettings()
GRID_CLASSES = (2, 4, 6)
GRID_PSEUDO = (5.0, 20.0, 80.0)
GRID_PENALTY = ((0.1, 0.3), (0.3, 1.0), (1.0, 3.0))
GRID_WIDENING = (1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.4, 1.5)
CALIBRATION_LEVEL = 0.9  # --calibrate: the smallest widening with every cell's coverage at least this


# --- data ----------------------------------------------------------------------------------------------------


def load_matrix(path: Path) -> np.ndarray:
    """correct[i, j] from {"judgments": [1, 0, null, ...]} (or keyed by name) lines; NaN for no verdict."""
    opener = gzip.open if path.name.endswith(".gz") else open
    rows: list[list[float]] = []
    keys: list[str] | None = None
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            j = json.loads(line)["judgments"]
            if isinstance(j, dict):
                keys = keys or list(j)
                j = [j.get(k) for k in keys]
            rows.append([np.nan if v is None else float(bool(v)) for v in j])
    width = max(len(r) for r in rows)
    return np.array([r + [np.nan] * (width - len(r)) for r in rows])


def datasets(folder: Path) -> dict[str, tuple[str, np.ndarray]]:
    """{name: (collection, matrix)}; the collection is the parent folder's name."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
    return {p.name.split(".jsonl")[0]: (p.parent.name, load_matrix(p)) for p in files}


# --- one draw ------------------------------------------------------------------------------------------------


def tie_mean(score: np.ndarray, values: np.ndarray) -> float:
    """Mean of values over the subsets tied at the lowest score (a uniformly random tie-break, in expectation)."""
    tied = np.flatnonzero(score <= np.nanmin(score) + 1e-12)
    return float(np.mean(values[tied]))


def naive_record(emp: np.ndarray, truth: np.ndarray) -> tuple[float, ...]:
    score = np.where(np.isnan(emp), np.inf, emp)
    best = np.nanmin(truth)
    return (tie_mean(score, truth) - best, tie_mean(score, np.abs(emp - truth)), tie_mean(score, emp - truth), np.nan, np.nan)


def pick_record(i: int, est: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, truth: np.ndarray) -> tuple[float, ...]:
    t = truth[i]
    cover = np.nan if lo is None or hi is None else float(lo[i] <= t <= hi[i])
    width = np.nan if lo is None or hi is None else float(hi[i] - lo[i])
    return (float(t - np.nanmin(truth)), float(abs(est[i] - t)), float(est[i] - t), cover, width)


Config = tuple[int, float, str, tuple[float, float]]  # classes, pseudo-items, ranking, max-ent penalty


def config_name(c: Config) -> str:
    name = f"C{c[0]} a{c[1]:g} {c[2]}"
    return name if c[2] == "latent" or c[3] == DEFAULT.maxent_penalty else f"{name} {c[3][0]:g}/{c[3][1]:g}"


DEFAULT_CONFIG: Config = (DEFAULT.model.classes, DEFAULT.pseudo_items, DEFAULT.ranking, DEFAULT.maxent_penalty)


def evaluate_draw(
    y: np.ndarray,
    idx: np.ndarray,
    configs: list[Config],
    rng: np.random.Generator,
    alternatives: bool = False,
    calibrate: bool = False,
) -> dict[tuple[str, int], tuple[float, ...]]:
    """Every method's (regret, |estimate - truth|, estimate - truth, covered, width) at each k, for one draw."""
    n_pop = len(y)
    labeled = y[idx]
    r = len(idx)
    out: dict[tuple[str, int], tuple[float, ...]] = {}
    latent = {c: exact_tables(labeled, sample_posterior(labeled, rng, replace(DEFAULT.model, classes=c)), max(KS)) for c in sorted({cf[0] for cf in configs})}
    probs = {pen: fit_maxent(labeled, *pen) for pen in sorted({cf[3] for cf in configs if cf[2] == "maxent"})}
    ranked: dict[tuple[int, tuple[float, float]], dict[int, SubsetTable]] = {}

    def tables(cf: Config) -> dict[int, SubsetTable]:
        if cf[2] == "latent":
            return latent[cf[0]]
        key = (cf[0], cf[3])
        if key not in ranked:
            ranked[key] = {k: replace(t, ranking=maxent_subset_errors(probs[cf[3]], t.members)) for k, t in latent[cf[0]].items()}
        return ranked[key]

    for k in KS:
        first = latent[configs[0][0]][k]
        truth = empirical_subset_errors(y, first.members)[0]
        emp = first.empirical
        out[("naive", k)] = naive_record(emp, truth)
        for cf in configs:
            search = rescore(tables(cf), r, n_pop, cf[1], 0.9, rng)
            t = search.targets[k]
            i = search.pick(k)
            out[(config_name(cf), k)] = pick_record(i, t.estimate, t.low, t.high, truth)
            if alternatives and cf == configs[0]:
                out[("score at pick", k)] = pick_record(i, t.score, None, None, truth)
        if calibrate:  # the default's interval before widening, then widened by each factor of the grid
            raw = rescore(tables(configs[0]), r, n_pop, configs[0][1], 0.9, rng, widening=1.0)
            t, i = raw.targets[k], raw.pick(k)
            for c in GRID_WIDENING:
                lo, hi = widen(t.estimate, t.low, t.high, t.floor, t.ceiling, c)
                out[(f"widening {c:g}", k)] = pick_record(i, t.estimate, lo, hi, truth)
        if alternatives:
            cf = configs[0]
            for label, ranking in (("latent-class model only", "latent"), ("max-ent model only", "maxent")):
                alone = rescore(tables((cf[0], cf[1], ranking, cf[3])), r, n_pop, float("inf"), 0.9, rng)
                t = alone.targets[k]
                out[(label, k)] = pick_record(alone.pick(k), t.score, None, None, truth)
            acc = np.nanmean(labeled, axis=0)
            tb = np.where(np.isnan(emp), np.inf, emp) - 1e-6 * acc[first.members].sum(axis=1)
            out[("labels, accuracy tie-break", k)] = pick_record(int(np.argmin(tb)), emp, None, None, truth)
            # reference, not a method: the labels' own error of the truly best subset (no selection at all)
            out[("oracle: labels' own error of the best subset", k)] = pick_record(int(np.nanargmin(truth)), emp, None, None, truth)
    return out


# --- jobs and tables -----------------------------------------------------------------------------------------


def draw_indices(name: str, n_items: int, r: int, draws: int, seed: int) -> list[np.ndarray]:
    out = []
    for d in range(draws):
        rng = np.random.default_rng([seed, r, d, zlib.crc32(name.encode())])
        out.append(rng.choice(n_items, r, replace=False))
    return out


def _job(args: tuple[Any, ...]) -> tuple[tuple[str, int], list[dict[tuple[str, int], tuple[float, ...]]]]:
    name, y, r, draws, seed, configs, alternatives, resample, calibrate = args
    recs = []
    for d, idx in enumerate(draw_indices(name, resample or len(y), r, draws, seed)):
        rng = np.random.default_rng([seed, r, d, 7])
        pop = y
        if resample:
            pop = y[np.random.default_rng([seed, d, zlib.crc32(name.encode()), 99]).integers(0, len(y), resample)]
        recs.append(evaluate_draw(pop, idx, configs, rng, alternatives, calibrate))
    return (name, r), recs


def run(
    data: dict[str, np.ndarray],
    configs: list[Config],
    draws: int,
    seed: int,
    procs: int,
    alternatives: bool = False,
    resample: int = 0,
    calibrate: bool = False,
) -> dict[tuple[str, int], list[Any]]:
    jobs = [(n, y, r, draws, seed, configs, alternatives, resample, calibrate) for n, y in data.items() for r in RS if (resample or len(y)) >= r + 1]
    if procs <= 1:
        return dict(_job(j) for j in jobs)
    with mp.get_context("fork").Pool(procs) as pool:
        return dict(pool.imap_unordered(_job, jobs))


def summarise(res: dict[tuple[str, int], list[Any]], names: list[str]) -> dict[tuple[str, int, int], np.ndarray]:
    """{(method, r, k): mean over datasets of the mean over draws of (regret, abs, bias, coverage, width)}."""
    out: dict[tuple[str, int, int], np.ndarray] = {}
    methods = sorted({m for recs in res.values() for rec in recs for (m, _) in rec})
    for m in methods:
        for r in RS:
            for k in KS:
                per = [np.nanmean([rec[(m, k)] for rec in res[(n, r)]], axis=0) for n in names if (n, r) in res]
                if per:
                    out[(m, r, k)] = np.nanmean(per, axis=0)
    return out


def f2(x: float) -> str:
    return "—" if np.isnan(x) else f"{100 * x:.2f}"


def markdown(summary: dict[tuple[str, int, int], np.ndarray], methods: list[str], title: str) -> str:
    lines = [f"**{title}**", "", "| method | r | k | regret | vs naive | abs(estimate - actual) | vs naive | bias | coverage (90%) | width |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in methods:
        for r in RS:
            for k in KS:
                if (m, r, k) not in summary:
                    continue
                v, b = summary[(m, r, k)], summary[("naive", r, k)]
                cov = "—" if np.isnan(v[3]) else f"{v[3]:.2f}"
                lines.append(
                    f"| {m} | {r} | {k} | {f2(v[0])} | {100 * (v[0] / b[0] - 1):+.0f}% | {f2(v[1])} | {100 * (v[1] / b[1] - 1):+.0f}% | {100 * v[2]:+.2f} | {cov} | {f2(v[4])} |"
                )
    lines.append("")
    lines.append("Means over r = 30 and 56 (k = 3, 5 pooled): " + "; ".join(
        f"{m}: regret {100 * (np.mean([summary[(m, r, k)][0] for k in KS]) / np.mean([summary[('naive', r, k)][0] for k in KS]) - 1):+.0f}% at r = {r}, "
        f"honesty {100 * (np.mean([summary[(m, r, k)][1] for k in KS]) / np.mean([summary[('naive', r, k)][1] for k in KS]) - 1):+.0f}%"
        for m in methods if m != "naive" for r in RS if (m, r, KS[0]) in summary
    ))
    return "\n".join(lines)


def paired(res: dict[tuple[str, int], list[Any]], names: list[str], method: str) -> str:
    """Regret and |error| of `method` minus naive's, in points: mean over draws of the mean over datasets, and its
    standard error over the draws (the same draws for both methods)."""
    cells = []
    for r in RS:
        for k in KS:
            rows = [n for n in names if (n, r) in res]
            if not rows:
                continue
            n_draws = min(len(res[(n, r)]) for n in rows)
            diff = np.array([[np.subtract(res[(n, r)][d][(method, k)][:2], res[(n, r)][d][("naive", k)][:2]) for n in rows] for d in range(n_draws)]).mean(axis=1)
            m, se = 100 * diff.mean(axis=0), 100 * diff.std(axis=0, ddof=1) / np.sqrt(n_draws)
            cells.append(f"r = {r}, k = {k}: regret {m[0]:+.2f} ± {se[0]:.2f}, |error| {m[1]:+.2f} ± {se[1]:.2f}")
    return f"{method} minus naive (points, mean ± paired standard error over draws): " + "; ".join(cells)


def per_dataset(res: dict[tuple[str, int], list[Any]], method: str) -> str:
    lines = ["| dataset | r | k | regret naive | regret ours | abs naive | abs ours | coverage |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (n, r) in sorted(res):
        for k in KS:
            a = np.nanmean([rec[("naive", k)] for rec in res[(n, r)]], axis=0)
            b = np.nanmean([rec[(method, k)] for rec in res[(n, r)]], axis=0)
            lines.append(f"| {n} | {r} | {k} | {f2(a[0])} | {f2(b[0])} | {f2(a[1])} | {f2(b[1])} | {b[3]:.2f} |")
    return "\n".join(lines)


def criterion(summary: dict[tuple[str, int, int], np.ndarray], m: str) -> float:
    """Tuning criterion: mean over (r, k) of regret / naive regret + |error| / naive |error| (lower is better)."""
    return float(np.mean([summary[(m, r, k)][0] / summary[("naive", r, k)][0] + summary[(m, r, k)][1] / summary[("naive", r, k)][1] for r in RS for k in KS if (m, r, k) in summary]))


def calibration(named: dict[str, np.ndarray], collection: dict[str, str], draws: int, seed: int, procs: int, resample: int) -> str:
    """Coverage of the default's interval widened by each factor, per collection, on whole datasets and on
    populations of `resample` items; the factor chosen on one collection (the smallest with every (protocol, r, k)
    cell at least CALIBRATION_LEVEL) and reported on the other."""
    protocols = {"whole": 0, f"{resample} items": resample}
    cov: dict[tuple[str, str, float], list[float]] = {}  # (collection, protocol, factor) -> coverage per (r, k)
    for label, size in protocols.items():
        res = run(named, [DEFAULT_CONFIG], draws, seed, procs, resample=size, calibrate=True)
        for coll in sorted(set(collection.values())):
            s = summarise(res, [n for n in named if collection[n] == coll])
            for c in GRID_WIDENING:
                cov[(coll, label, c)] = [float(s[(f"widening {c:g}", r, k)][3]) for r in RS for k in KS if (f"widening {c:g}", r, k) in s]
    colls = sorted(set(collection.values()))
    cells = " ".join(f"r{r}k{k}" for r in RS for k in KS)
    lines = [f"coverage of the 90% interval widened by c ({cells}, per protocol):", ""]
    lines += ["| collection | c | " + " | ".join(protocols) + " |", "|---|---:|" + "---|" * len(protocols)]
    for coll in colls:
        for c in GRID_WIDENING:
            lines.append(f"| {coll} | {c:g} | " + " | ".join(" ".join(f"{x:.2f}" for x in cov[(coll, p, c)]) for p in protocols) + " |")
    lines.append("")
    for coll in colls:
        ok = [c for c in GRID_WIDENING if min(min(cov[(coll, p, c)]) for p in protocols) >= CALIBRATION_LEVEL]
        chosen = ok[0] if ok else GRID_WIDENING[-1]
        for other in colls:
            if other != coll:
                shown = " ; ".join(f"{p}: " + " ".join(f"{x:.2f}" for x in cov[(other, p, chosen)]) for p in protocols)
                lines.append(f"chosen on {coll}: c = {chosen:g}{'' if ok else ' (none reached the level)'}; held out on {other}: {shown}")
    default = DEFAULT.interval_widening
    for coll in colls:
        shown = " ; ".join(f"{p}: " + " ".join(f"{x:.2f}" for x in cov[(coll, p, default)]) for p in protocols)
        lines.append(f"default c = {default:g} on {coll}: {shown}")
    return "\n".join(lines)


# --- simulation ----------------------------------------------------------------------------------------------


def simulate_latent(rng: np.random.Generator, n: int, n_judges: int = 11) -> np.ndarray:
    """Three item classes (easy, contested, hard); two judge groups that fail on different contested items."""
    z = rng.choice(4, n, p=[0.55, 0.15, 0.15, 0.15])
    base = np.array([0.93, 0.75, 0.75, 0.2])
    group = np.arange(n_judges) % 3 == 0  # every third judge is in the second group
    p = np.tile(base[:, None], (1, n_judges))
    p[1, group] = 0.35  # class 1: hard for group 2 only
    p[2, ~group] = 0.35  # class 2: hard for group 1 only
    p = np.clip(p + rng.normal(0, 0.05, p.shape), 0.02, 0.98)
    return (rng.random((n, n_judges)) < p[z]).astype(float)


def simulate_exchangeable(rng: np.random.Generator, n: int, n_judges: int = 11) -> np.ndarray:
    """Every judge alike: item accuracy ~ Beta(1.2, 5) on a quarter of the items, Beta(9, 1.2) on the rest."""
    hard = rng.random(n) < 0.25
    p = np.where(hard, rng.beta(1.2, 5, n), rng.beta(9, 1.2, n))
    return (rng.random((n, n_judges)) < p[:, None]).astype(float)


def simulation(draws: int, seed: int, procs: int, n_pop: int = 300) -> dict[str, dict[tuple[str, int, int], np.ndarray]]:
    out = {}
    for label, gen in (("latent-class model", simulate_latent), ("exchangeable Beta-Binomial mixture", simulate_exchangeable)):
        pops = {f"{label} {d}": gen(np.random.default_rng([seed, d, 5]), n_pop) for d in range(6)}
        res = run(pops, [DEFAULT_CONFIG], max(draws // 6, 5), seed, procs)
        out[label] = summarise(res, list(pops))
    return out


# --- speed ---------------------------------------------------------------------------------------------------


def speed(data: dict[str, np.ndarray], repeats: int = 5) -> tuple[float, str]:
    rng = np.random.default_rng(0)
    big = [y for y in data.values() if y.shape[1] == 11]
    y = big[0][rng.integers(0, len(big[0]), 400)] if big else simulate_latent(rng, 400)
    src = "a real 11-judge dataset resampled to 400 items" if big else "simulated (latent-class model)"
    names = [f"judge{j}" for j in range(11)]
    times = []
    for i in range(repeats):
        t = time.perf_counter()
        analyse_judges(y, names, rng=np.random.default_rng(i))
        times.append(time.perf_counter() - t)
    return float(np.median(times)), src


# --- main ----------------------------------------------------------------------------------------------------


def unlabeled_protocol(folder: Path, draws: int, seed: int, procs: int, alternatives: bool) -> int:
    """`--unlabeled`: benchmarks/judges_unlabeled.py on every dataset under `folder` (docs/JUDGES.md)."""
    if not folder.is_dir():
        print(f"no data folder at {folder}: skipping the unlabeled protocol")
        return 0
    from judges_unlabeled import report
    from unlabeled import load

    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
    print(report([load(p, folder) for p in files], draws, seed, procs, alternatives))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--draws", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--exchangeable", default="snow_rte", help="collections whose judge slots are different people")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--alternatives", action="store_true")
    ap.add_argument("--resample", type=int, default=0)
    ap.add_argument("--simulate", action="store_true")
    ap.add_argument("--calibrate", action="store_true", help="the interval's widening factor, chosen held out")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--unlabeled", action="store_true", help="issue 17's protocol: r labeled items, the rest as verdicts without gold")
    a = ap.parse_args()
    if a.unlabeled:
        return unlabeled_protocol(a.data, a.draws, a.seed, a.procs, a.alternatives)

    if a.simulate:
        for label, s in simulation(a.draws, a.seed, a.procs).items():
            m = config_name(DEFAULT_CONFIG)
            print(markdown(s, ["naive", m], f"simulated: {label}, populations of 300 items"), "\n")
    if not a.data.is_dir():
        print(f"no data folder at {a.data}: skipping the real-data benchmark (simulation and --speed need none)")
        if a.speed:
            t, src = speed({})
            print(f"11 judges x 400 items ({src}): {t:.2f} s (median of 5, end to end)")
        return 0
    all_sets = datasets(a.data)
    named = {n: y for n, (coll, y) in all_sets.items() if a.exchangeable not in coll}
    slots = {n: y for n, (coll, y) in all_sets.items() if a.exchangeable in coll}
    if a.speed:
        t, src = speed(named)
        print(f"11 judges x 400 items ({src}): {t:.2f} s (median of 5, end to end)\n")
    default = config_name(DEFAULT_CONFIG)
    if a.calibrate:
        print(calibration(named, {n: all_sets[n][0] for n in named}, a.draws, a.seed, a.procs, a.resample or 300))
        return 0
    if a.tune:
        configs = [DEFAULT_CONFIG] + [
            cf
            for c in GRID_CLASSES
            for p in GRID_PSEUDO
            for cf in [(c, p, "latent", DEFAULT.maxent_penalty)] + [(c, p, "maxent", pen) for pen in GRID_PENALTY]
            if cf != DEFAULT_CONFIG
        ]
        res = run(named, configs, a.draws, a.seed, a.procs)
        colls = sorted({all_sets[n][0] for n in named})
        groups = {c: [n for n in named if all_sets[n][0] == c] for c in colls}
        print(markdown(summarise(res, list(named)), ["naive"] + [config_name(c) for c in configs], "tuning grid, all named datasets (in-sample)"), "\n")
        for c in colls:
            tune_on = summarise(res, groups[c])
            best = min((config_name(cf) for cf in configs), key=lambda m: criterion(tune_on, m))
            for other in colls:
                if other == c:
                    continue
                held = summarise(res, groups[other])
                print(markdown(held, ["naive", best, default], f"tuned on {c} (pick: {best}), held out: {other}"), "\n")
        return 0
    configs = [DEFAULT_CONFIG]
    res = run(named, configs, a.draws, a.seed, a.procs, alternatives=a.alternatives, resample=a.resample)
    s = summarise(res, list(named))
    methods = ["naive", default] + (["score at pick", "latent-class model only", "max-ent model only", "labels, accuracy tie-break", "oracle: labels' own error of the best subset"] if a.alternatives else [])
    where = f"populations of {a.resample} items resampled from each dataset" if a.resample else "whole datasets"
    print(markdown(s, methods, f"named judges ({', '.join(sorted(named))}); {where}; {a.draws} draws"), "\n")
    print(paired(res, list(named), default), "\n")
    print(per_dataset(res, default), "\n")
    if slots and not a.resample:
        rs = run(slots, configs, a.draws, a.seed, a.procs)
        print(markdown(summarise(rs, list(slots)), ["naive", default], "sanity check: snow_rte (a different worker per slot)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
