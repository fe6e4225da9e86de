"""Clustered items in `judges`' agreement figures (issue 29.3): coverage of the nominal intervals when the same
samples are judged several times (epochs, or sampled answers to one prompt), with the items' clusters
(judges/gold.votes_agreement on Votes that carry them: the cluster bootstrap and the design effects) against the
same items taken as independent. Numbers in docs/AGREEMENT.md ("Clustered items").

Simulation (seeded): S samples, each with a gold class g ~ Bernoulli(1/2) and a latent accuracy p ~ Beta(a, b);
three judges; E epochs. Judge j's verdict on a sample is the gold with probability p, else the other class; each
further epoch repeats the judge's first-epoch verdict with probability rho, else draws it afresh (so each epoch alone
is three independent judges). Truths, exact: a judge's accuracy m = a / (a + b); its kappa against the gold (both
margins 1/2) 2m - 1; the panel's Fleiss' kappa (E[p^2 + (1 - p)^2] - 1/2) / (1/2).

    PYTHONPATH=. .venv/bin/python benchmarks/agreement_clusters.py                  # the table in docs/AGREEMENT.md
    PYTHONPATH=. .venv/bin/python benchmarks/agreement_clusters.py --reps 400 --rho 0.5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from betaconform_cli.inputs.patterns import build
from betaconform_cli.judges.gold import votes_agreement

JUDGES = ("j0", "j1", "j2")


def simulate(rng: np.random.Generator, samples: int, epochs: int, rho: float, a: float, b: float
             ) -> tuple[list[tuple[tuple[str, ...], str]], list[str]]:
    """One run's items (each judge's class and the gold, as text) and each item's sample (its cluster)."""
    gold = rng.random(samples) < 0.5
    p = rng.beta(a, b, size=samples)
    first = rng.random((samples, len(JUDGES))) < p[:, None]
    rows, clusters = [], []
    for e in range(epochs):
        fresh = rng.random((samples, len(JUDGES))) < p[:, None]
        right = first if e == 0 else np.where(rng.random(first.shape) < rho, first, fresh)
        verdict = np.where(right, gold[:, None], ~gold[:, None])
        rows += [(tuple(str(int(v)) for v in verdict[s]), str(int(gold[s]))) for s in range(samples)]
        clusters += [f"s{s}" for s in range(samples)]
    return rows, clusters


def truths(a: float, b: float) -> dict[str, float]:
    m = a / (a + b)
    second = a * b / ((a + b) ** 2 * (a + b + 1)) + m * m  # E[p^2]
    return {"accuracy": m, "kappa": 2 * m - 1, "fleiss": (second + (1 - 2 * m + second) - 0.5) / 0.5}


def figures(agreement: object) -> dict[str, tuple[float, float]]:
    row = agreement.judges[0].labels  # type: ignore[attr-defined]
    panel = agreement.panel.fleiss_kappa  # type: ignore[attr-defined]
    return {"accuracy": (row.accuracy.low, row.accuracy.high), "kappa": (row.kappa.low, row.kappa.high),
            "fleiss": (panel.low, panel.high)}


def coverage(reps: int, seed: int, samples: int, epochs: int, rho: float, a: float, b: float, level: float = 0.9
             ) -> dict[tuple[str, str], tuple[float, float]]:
    """{(figure, "clusters" | "independent"): (coverage, mean width)} over `reps` runs."""
    rng = np.random.default_rng(seed)
    true = truths(a, b)
    hits: dict[tuple[str, str], list[tuple[bool, float]]] = {}
    for rep in range(reps):
        rows, clusters = simulate(rng, samples, epochs, rho, a, b)
        ids = [str(i) for i in range(len(rows))]
        for how, cl in (("clusters", clusters), ("independent", None)):
            votes = build(JUDGES, {}, rows, ids, cl)
            got = figures(votes_agreement(votes, JUDGES, (), level, np.random.default_rng(rep), use_unlabeled=False))
            for name, (low, high) in got.items():
                hits.setdefault((name, how), []).append((low <= true[name] <= high, high - low))
    return {k: (float(np.mean([h for h, _ in v])), float(np.mean([w for _, w in v]))) for k, v in hits.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", type=int, default=60)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--rho", type=float, nargs="*", default=[0.0, 0.5, 0.9])
    ap.add_argument("--a", type=float, default=4.0)
    ap.add_argument("--b", type=float, default=1.5)
    args = ap.parse_args()
    print(f"{args.samples} samples x {args.epochs} epochs, 3 judges, p ~ Beta({args.a}, {args.b}), nominal 90%, "
          f"{args.reps} runs per row")
    print("| rho | figure | coverage, clusters | mean width | coverage, independent | mean width |")
    print("|---|---|---|---|---|---|")
    for rho in args.rho:
        t0 = time.time()
        got = coverage(args.reps, args.seed, args.samples, args.epochs, rho, args.a, args.b)
        for name in ("accuracy", "kappa", "fleiss"):
            (cc, cw), (ic, iw) = got[(name, "clusters")], got[(name, "independent")]
            print(f"| {rho:.1f} | {name} | {cc:.3f} | {cw:.3f} | {ic:.3f} | {iw:.3f} |", flush=True)
        print(f"(rho {rho}: {time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
