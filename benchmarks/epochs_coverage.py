"""Epochs as clusters: coverage of fit's nominal interval when the same samples are scored several times
(inspect-ai's epochs), with the items' clusters (`fit.analyse(clusters=...)`, what the inspect reader hands
fit) against the same items taken as independent. Numbers in docs/FORMATS.md ("Epochs").

Simulation (seeded): S samples, each with a latent accuracy p ~ Beta(a, b); J judges; E epochs. Judge j's
verdict on a sample is correct with probability p; each further epoch repeats the judge's first-epoch verdict
with probability rho, else draws it afresh, so every epoch alone is J independent Bernoulli(p) judges (the
estimand, the majority error of k judges on a sample-epoch, is the Beta-Binomial's, exact) and the epochs of a
sample are correlated. Truth: sum over s < k/2 of BetaBinomial(k, a, b).pmf(s), plus half of s = k/2.

    .venv/bin/python benchmarks/epochs_coverage.py                      # the table in docs/FORMATS.md
    .venv/bin/python benchmarks/epochs_coverage.py --reps 400 --rho 0.5 --epochs 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from betaconform_cli.counts import CountTable, ItemClusters
from betaconform_cli.fit import analyse
from betaconform_cli.settings import FitSettings


def truth(k: int, a: float, b: float) -> float:
    pmf = stats.betabinom(k, a, b).pmf(np.arange(k + 1))
    return float(sum(pmf[s] * (1.0 if 2 * s < k else 0.5 if 2 * s == k else 0.0) for s in range(k + 1)))


def simulate(rng: np.random.Generator, samples: int, judges: int, epochs: int, rho: float, a: float, b: float
             ) -> tuple[CountTable, ItemClusters]:
    """One log's labeled items: (their histogram, their cells and clusters)."""
    p = rng.beta(a, b, size=samples)
    first = rng.random((samples, judges)) < p[:, None]
    rows = []
    for e in range(epochs):
        fresh = rng.random((samples, judges)) < p[:, None]
        keep = rng.random((samples, judges)) < rho
        rows.append(first if e == 0 else np.where(keep, first, fresh))
    correct = np.concatenate([r.sum(axis=1) for r in rows])
    counts = np.zeros((judges + 1, judges + 1), dtype=np.int64)
    np.add.at(counts, (judges, correct), 1)
    cluster = np.tile(np.arange(samples), epochs)
    return CountTable(counts), ItemClusters(np.full(len(correct), judges), correct, cluster)


def coverage(reps: int, seed: int, samples: int, judges: int, epochs: int, rho: float, a: float, b: float,
             level: float = 0.9) -> dict[str, tuple[float, float]]:
    """{"clusters" | "independent": (coverage, mean width)} of the k = judges row over `reps` logs."""
    rng = np.random.default_rng(seed)
    settings = FitSettings(ks=(judges,), components=1, confidence_level=level)
    true = truth(judges, a, b)
    hit = {"clusters": 0, "independent": 0}
    width = {"clusters": 0.0, "independent": 0.0}
    for _ in range(reps):
        table, clusters = simulate(rng, samples, judges, epochs, rho, a, b)
        for name, cl in (("clusters", clusters), ("independent", None)):
            row = analyse(table, settings, np.random.default_rng(1), clusters=cl).rows[0]
            hit[name] += row.low <= true <= row.high
            width[name] += row.high - row.low
    return {n: (hit[n] / reps, width[n] / reps) for n in hit}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--samples", type=int, default=60)
    ap.add_argument("--judges", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--rho", type=float, nargs="*", default=[0.0, 0.5, 0.9])
    ap.add_argument("--beta", type=float, nargs=2, default=[4.0, 1.5], metavar=("A", "B"))
    args = ap.parse_args()
    a, b = args.beta
    print(f"S={args.samples} samples x E={args.epochs} epochs, J={args.judges} judges, p ~ Beta({a}, {b}), "
          f"truth {truth(args.judges, a, b):.4f}, nominal 90%, {args.reps} logs per row (seed {args.seed})")
    print("| rho | coverage, clusters | width | coverage, independent | width |")
    print("|---|---|---|---|---|")
    for rho in args.rho:
        t0 = time.perf_counter()
        got = coverage(args.reps, args.seed, args.samples, args.judges, args.epochs, rho, a, b)
        (cc, cw), (ic, iw) = got["clusters"], got["independent"]
        print(f"| {rho} | {cc:.3f} | {cw:.4f} | {ic:.3f} | {iw:.4f} |  ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
