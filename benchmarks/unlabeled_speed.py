"""Speed of the unlabeled items (issue 17: 10^5 unlabeled items add < 1 s to `fit`): fit's own path with the
unlabeled items (`votes.analyse_with_votes` on the reader's patterns) against the labels-only fit (`fit.analyse`),
on --items items of --judges exchangeable judges with --labeled gold.

    .venv/bin/python benchmarks/unlabeled_speed.py                 # 10^5 items, 11 judges, 30 labels
    .venv/bin/python benchmarks/unlabeled_speed.py --items 1000000

Prints CPU seconds (this process; the machine may be shared) and wall seconds, the median of --repeats runs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from simulated import binary_votes  # benchmarks/simulated.py (this script's folder)

from betaconform_cli.counts import CountTable
from betaconform_cli.fit import analyse
from betaconform_cli.inputs.dataset import Votes
from betaconform_cli.settings import FitSettings
from betaconform_cli.votes import analyse_with_votes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--judges", type=int, default=11)
    ap.add_argument("--labeled", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    votes, gold, s = binary_votes(np.random.default_rng(13), args.items, args.judges, args.labeled)
    lab = gold >= 0
    table = CountTable.from_pairs(np.full(int(lab.sum()), args.judges), s[lab])
    rows, counts = np.unique(np.column_stack([votes, gold]), axis=0, return_counts=True)  # what a reader hands over
    patterns = Votes(tuple(f"judge{j}" for j in range(args.judges)), ("no", "yes"), rows[:, :-1], rows[:, -1], counts)
    cpu: dict[str, list[float]] = {"labels only (fit's default)": [], "with the unlabeled items": []}
    wall: dict[str, list[float]] = {k: [] for k in cpu}
    for _ in range(args.repeats):
        for label, run in (("labels only (fit's default)", lambda: analyse(table, FitSettings(), np.random.default_rng(0))),
                           ("with the unlabeled items", lambda: analyse_with_votes(table, patterns, FitSettings(), np.random.default_rng(0)))):
            c0, w0 = time.process_time(), time.perf_counter()
            run()
            cpu[label].append(time.process_time() - c0)
            wall[label].append(time.perf_counter() - w0)
    print(f"{args.items} items ({args.items - args.labeled} unlabeled), {args.judges} judges, median of {args.repeats}")
    print("| estimate | CPU s | wall s |\n|---|---:|---:|")
    for label in cpu:
        print(f"| {label} | {statistics.median(cpu[label]):.3f} | {statistics.median(wall[label]):.3f} |")
    added = [b - a for a, b in zip(*cpu.values())]
    print(f"added by the unlabeled items: {statistics.median(added):.3f} s of CPU (target < 1 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
