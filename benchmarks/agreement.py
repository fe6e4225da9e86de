"""Per-judge figures against the gold (issue 27): model-based (judges/gold.py: the Dawid-Skene prediction rectified by
the labels) against labels only, at r = 20 and 50 labeled items.

Protocol (benchmarks/unlabeled.py's loader and draws, imported; /work/shared/METHOD.md): for every dataset under
../shared/data, r labeled items drawn as benchmarks/accuracy.py draws them; every item turned into binary verdicts
(verdict = the gold side if the judge was correct, the other side if not; the gold side drawn at random per item,
class 1 the pass class), the gold kept on the r labeled items only. Truth: each judge's accuracy, sensitivity
(P(says 1 | gold 1)) and Cohen's kappa over ALL the dataset's items. For each judge and draw: |estimate - truth| and whether the
90% interval covers it; the labels-only figures (Wilson) on the r labeled items, the model-based ones where the
guard lets `judges` use the unlabeled items (else the labels-only answer, as `judges` reports). Also the
Dawid-Skene plug-in accuracy (the posterior's expected accuracy on every item, what `judges`' per-judge table shows
with unlabeled items; no interval of its own). Nothing is tuned here: the model, its guard and the pseudo-items are
`judges`' as they are.

Means over judges and draws per dataset, then over the datasets of a collection; the worst collection is the one
where the model-based accuracy's error is largest. Exits 0 with a message when the data folder is absent.

    nice -n 10 python benchmarks/agreement.py --draws 30 > /tmp/agreement.md
    nice -n 10 python benchmarks/agreement.py --simulation 2000     # the coverage simulations (no data needed)
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from unlabeled import DEFAULT_DATA, Data, draw, load  # noqa: E402  benchmarks/unlabeled.py

from betaconform_cli.blas import one_thread  # noqa: E402
from betaconform_cli.judges import agreement as ag  # noqa: E402
from betaconform_cli.judges.gold import confusion, labels_figures, model_figures  # noqa: E402
from betaconform_cli.judges.unlabeled import Verdicts, fit_classes, guard, judge_accuracy  # noqa: E402

RS = (20, 50)
LEVEL = 0.9
METHODS = ("labels only", "model-based", "DS plug-in")
FIGURES = ("accuracy", "sensitivity", "kappa")
CLASSES = ("0", "1")


def _rec(x, truth: float) -> tuple[float, float, float]:
    """(|estimate - truth|, covered, width); NaN where there is no figure."""
    if x is None:
        return (np.nan, np.nan, np.nan)
    return (abs(x.estimate - truth), float(x.low - 1e-12 <= truth <= x.high + 1e-12), x.high - x.low)


def evaluate(d: Data, size: int, run: int, seed: int) -> dict[tuple[str, str], np.ndarray]:
    """(method, figure) -> (judges, 3) records of one draw, and ("guard", "used") -> whether the model was used."""
    _, idx, votes, gold = draw(d, size, run, seed)
    side = np.where(d.judgments == 1, votes, 1 - votes)[:, 0]  # the gold side of every item
    n, n_j = votes.shape
    truth_acc = d.judgments.mean(axis=0)
    pos = side == 1
    truth_sens = (votes[pos] == 1).mean(axis=0) if pos.any() else np.full(n_j, np.nan)
    full = Verdicts(votes.astype(np.int64), side.astype(np.int64), np.ones(n, dtype=np.int64), 2)
    truth_kappa = [float(ag.cohen_kappa(confusion(full, j))) for j in range(n_j)]  # every item's gold known
    v = Verdicts(votes.astype(np.int64), gold.astype(np.int64), np.ones(n, dtype=np.int64), 2)
    model = fit_classes(v)
    used, _ = guard(model, v)
    plug = judge_accuracy(v, model)[0]
    out: dict[tuple[str, str], list[tuple[float, float, float]]] = {(m, f): [] for m in METHODS for f in FIGURES}
    for j in range(n_j):
        lab = labels_figures(confusion(v, j), CLASSES, 1, LEVEL)
        mod = model_figures(v, model, j, CLASSES, 1, LEVEL) if used else lab
        for m, f in (("labels only", lab), ("model-based", mod)):
            out[(m, "accuracy")].append(_rec(f.accuracy, truth_acc[j]))
            out[(m, "sensitivity")].append(_rec(f.binary.sensitivity if f.binary else None, truth_sens[j]))
            out[(m, "kappa")].append(_rec(f.kappa, truth_kappa[j]))
        out[("DS plug-in", "accuracy")].append((abs(plug[j] - truth_acc[j]), np.nan, np.nan))
        out[("DS plug-in", "sensitivity")].append((np.nan, np.nan, np.nan))
        out[("DS plug-in", "kappa")].append((np.nan, np.nan, np.nan))
    res = {k: np.array(x) for k, x in out.items()}
    res[("guard", "used")] = np.array([[float(used), np.nan, np.nan]])
    return res


def _job(args: tuple[Data, int, int, int]) -> tuple[tuple[str, int], dict[tuple[str, str], np.ndarray]]:
    d, size, draws, seed = args
    with one_thread():
        runs = [evaluate(d, size, r, seed) for r in range(draws)]
    keys = runs[0].keys()
    return (d.name, size), {k: np.nanmean(np.concatenate([r[k] for r in runs]), axis=0) for k in keys}


def table(res: dict[tuple[str, int], dict[tuple[str, str], np.ndarray]], data: list[Data], draws: int) -> str:
    """Per collection (and all), r, figure and method: mean |error| (points), coverage, width (points)."""
    collections = sorted({d.collection for d in data})
    groups = {c: [d.name for d in data if d.collection == c] for c in collections}

    def mean(names: list[str], r: int, key: tuple[str, str]) -> np.ndarray:
        rows = [res[(n, r)][key] for n in names if (n, r) in res]
        return np.nanmean(rows, axis=0) if rows else np.full(3, np.nan)

    def lowest(names: list[str], r: int, key: tuple[str, str]) -> float:
        """The lowest coverage of one dataset among `names`."""
        return float(np.nanmin([res[(n, r)][key][1] for n in names if (n, r) in res]))

    worst = {r: max(collections, key=lambda c: mean(groups[c], r, ("model-based", "accuracy"))[0]) for r in RS}
    lines = [f"{len(data)} datasets, {draws} draws each, {int(100 * LEVEL)}% intervals; error and width in points; "
             "worst collection: largest model-based accuracy error", "",
             "| collection | r | figure | method | mean abs error | coverage | lowest dataset's coverage | width | model used |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|"]
    for c in [*collections, "all"]:
        names = [d.name for d in data] if c == "all" else groups[c]
        for r in RS:
            used = mean(names, r, ("guard", "used"))[0]
            for f in FIGURES:
                for m in METHODS:
                    e, cov, w = mean(names, r, (m, f))
                    if np.isnan(e):
                        continue
                    label = f"{c} (worst)" if c != "all" and worst[r] == c else c
                    cov_s = "—" if np.isnan(cov) else f"{cov:.3f}"
                    low_s = "—" if np.isnan(cov) else f"{lowest(names, r, (m, f)):.3f}"
                    w_s = "—" if np.isnan(w) else f"{100 * w:.1f}"
                    lines.append(f"| {label} | {r} | {f} | {m} | {100 * e:.2f} | {cov_s} | {low_s} | {w_s} | {used:.2f} |")
    return "\n".join(lines)


# --- --simulation: the intervals' coverage where the truth is known (docs/AGREEMENT.md's two simulation tables) ---

POPULATIONS = (
    ("balanced, kappa 0.64", np.array([[0.45, 0.1], [0.08, 0.37]])),
    ("85/15 classes, kappa 0.5", np.array([[0.78, 0.07], [0.05, 0.10]])),
    ("3 classes", np.array([[0.25, 0.05, 0.03], [0.04, 0.22, 0.04], [0.03, 0.04, 0.30]])),
)


def simulate_labels(runs: int, seed: int) -> str:
    """Labels-only kappa, AC1, alpha: coverage of the 90% interval on tables drawn from known populations."""
    rng = np.random.default_rng(seed)
    lines = ["| population (rows gold, columns verdict) | items | kappa | AC1 | alpha |", "|---|---:|---:|---:|---:|"]
    for name, p in POPULATIONS:
        c = len(p)
        truth = (ag.cohen_kappa(p), ag.gwet_ac1(p), ag.krippendorff_alpha_pair(p * 1e9))
        for n in (20, 50, 100):
            hits = np.zeros(3)
            for _ in range(runs):
                t = rng.multinomial(n, p.reshape(-1)).reshape(c, c).astype(float)
                f = labels_figures(t, [str(i) for i in range(c)], None, LEVEL)
                hits += [x is not None and x.low <= tr <= x.high for x, tr in zip((f.kappa, f.ac1, f.alpha), truth)]
            lines.append(f"| {name} | {n} | " + " | ".join(f"{h / runs:.3f}" for h in hits) + " |")
    return "\n".join(lines)


def simulate_model(runs: int, seed: int) -> str:
    """5 independent judges (accuracy 0.85 ... 0.65), 200 items, gold 1 on 40%: the first judge's model-based and
    labels-only figures, coverage / mean width of the 90% interval."""
    rng = np.random.default_rng(seed)
    acc = np.array([0.85, 0.8, 0.75, 0.7, 0.65])
    pop = np.array([[0.6 * acc[0], 0.6 * (1 - acc[0])], [0.4 * (1 - acc[0]), 0.4 * acc[0]]])
    kappa = float(ag.cohen_kappa(pop))
    names = ("model accuracy", "model sensitivity", "model kappa", "labels accuracy", "labels sensitivity", "labels kappa")
    lines = ["| labeled items | " + " | ".join(names) + " |", "|---:|" + "---|" * len(names)]
    for r in (20, 50):
        hits: dict[str, list[float]] = {k: [] for k in names}
        width: dict[str, list[float]] = {k: [] for k in names}
        for _ in range(runs):
            gold = (rng.random(200) < 0.4).astype(np.int64)
            pat = np.where(rng.random((200, 5)) < acc, gold[:, None], 1 - gold[:, None])
            v = Verdicts(pat, np.where(np.arange(200) < r, gold, -1), np.ones(200, dtype=np.int64), 2)
            m = model_figures(v, fit_classes(v), 0, CLASSES, 1, LEVEL)
            lab = labels_figures(confusion(v, 0), CLASSES, 1, LEVEL)
            assert m is not None and m.binary is not None and lab.binary is not None
            for k, x, t in zip(names, (m.accuracy, m.binary.sensitivity, m.kappa, lab.accuracy, lab.binary.sensitivity,
                                       lab.kappa), (acc[0], acc[0], kappa) * 2):
                hits[k].append(float(x is not None and x.low <= t <= x.high))
                width[k].append(np.nan if x is None else x.high - x.low)
        lines.append(f"| {r} | " + " | ".join(f"{np.mean(hits[k]):.3f} / {np.nanmean(width[k]):.3f}" for k in names) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    warnings.simplefilter("ignore", RuntimeWarning)  # means of figures that are undefined in every draw (NaN)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of judgment files (searched recursively)")
    ap.add_argument("--draws", type=int, default=10, help="draws of the labeled items per dataset and r")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--simulation", type=int, default=0, metavar="RUNS",
                    help="instead: the intervals' coverage by simulation: RUNS tables per cell, RUNS / 2 model runs (docs/AGREEMENT.md: 2000)")
    args = ap.parse_args(argv)
    if args.simulation:
        with one_thread():
            print(simulate_labels(args.simulation, args.seed), "\n", simulate_model(max(args.simulation // 2, 50), args.seed), sep="\n")
        return 0
    files = sorted(p for p in args.data.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz"))) \
        if args.data.is_dir() else []
    if not files:
        print(f"agreement benchmark skipped: no *.jsonl files under {args.data}", file=sys.stderr)
        return 0
    data = [load(p, args.data) for p in files]
    jobs = [(d, r, args.draws, args.seed) for d in data for r in RS if len(d.judgments) >= r + 1]
    t0 = time.monotonic()
    with mp.get_context("fork").Pool(args.procs) as pool:
        res = dict(pool.imap_unordered(_job, jobs))
    print(table(res, data, args.draws))
    print(f"\n({time.monotonic() - t0:.0f} s; python benchmarks/agreement.py --draws {args.draws} --seed {args.seed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
