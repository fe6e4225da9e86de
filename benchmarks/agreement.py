"""Per-judge figures against the gold (issue 27): model-based (judges/gold.py: the Dawid-Skene prediction rectified by
the labels) against labels only, at r = 20 and 50 labeled items.

Protocol (benchmarks/unlabeled.py's loader and draws, imported; /work/shared/METHOD.md): for every dataset under
../shared/data, r labeled items drawn as benchmarks/accuracy.py draws them; every item turned into binary verdicts
(verdict = the gold side if the judge was correct, the other side if not; the gold side drawn at random per item,
class 1 the pass class), the gold kept on the r labeled items only. Truth: each judge's accuracy and sensitivity
(P(says 1 | gold 1)) over ALL the dataset's items. For each judge and draw: |estimate - truth| and whether the
90% interval covers it; the labels-only figures (Wilson) on the r labeled items, the model-based ones where the
guard lets `judges` use the unlabeled items (else the labels-only answer, as `judges` reports). Also the
Dawid-Skene plug-in accuracy (the posterior's expected accuracy on every item, what `judges`' per-judge table shows
with unlabeled items; no interval of its own). Nothing is tuned here: the model, its guard and the pseudo-items are
`judges`' as they are.

Means over judges and draws per dataset, then over the datasets of a collection; the worst collection is the one
where the model-based accuracy's error is largest. Exits 0 with a message when the data folder is absent.

    nice -n 10 python benchmarks/agreement.py --draws 10 > /tmp/agreement.md
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
from betaconform_cli.judges.gold import confusion, labels_figures, model_figures  # noqa: E402
from betaconform_cli.judges.unlabeled import Verdicts, fit_classes, guard, judge_accuracy  # noqa: E402

RS = (20, 50)
LEVEL = 0.9
METHODS = ("labels only", "model-based", "DS plug-in")
FIGURES = ("accuracy", "sensitivity")
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
        out[("DS plug-in", "accuracy")].append((abs(plug[j] - truth_acc[j]), np.nan, np.nan))
        out[("DS plug-in", "sensitivity")].append((np.nan, np.nan, np.nan))
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


def main(argv: list[str] | None = None) -> int:
    warnings.simplefilter("ignore", RuntimeWarning)  # means of figures that are undefined in every draw (NaN)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of judgment files (searched recursively)")
    ap.add_argument("--draws", type=int, default=10, help="draws of the labeled items per dataset and r")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--procs", type=int, default=2)
    args = ap.parse_args(argv)
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
