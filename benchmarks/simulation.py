"""Choosing the default estimate on simulated data (independent of ../shared/data).

    .venv/bin/python benchmarks/simulation.py [--runs 40]

Six generating shapes (3000 items, 11 judges each), `--runs` seeded draws of r = 10, 30, 56 items. For each
estimator: the mean error margin (points, mean over odd k of |estimate - actual|) with its standard error,
and for the default estimate at several strengths c the coverage and mean width of its 90% interval.
Prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.distributions import Mixture, error_rates  # noqa: E402
from betaconform_cli.mixtures import empirical_errors, fit_candidates, fit_paper_em  # noqa: E402
from betaconform_cli.posterior import CellPosterior, cell_posterior  # noqa: E402

SHAPES = {
    "two-peak": Mixture((0.3, 0.7), (1.0, 8.0), (6.0, 1.5)),
    "binomial-like": Mixture((1.0,), (40.0,), (20.0,)),
    "easy": Mixture((0.9, 0.1), (20.0, 1.0), (1.0, 2.0)),
    "hard": Mixture((0.5, 0.5), (0.5, 3.0), (2.0, 1.0)),
    "overdispersed": Mixture((1.0,), (2.0,), (1.0,)),
    "three-component": Mixture((0.2, 0.5, 0.3), (1.0, 5.0, 30.0), (10.0, 5.0, 1.0)),
}
ODD = (1, 3, 5, 7, 9, 11)
STRENGTHS = (5.0, 10.0, 20.0, 40.0)


def _plain_interval(post: CellPosterior, rng: np.random.Generator, level: float, n_draws: int) -> tuple[np.ndarray, np.ndarray]:
    """The equal-tailed interval of the cell posterior itself, its mixture pseudo-counts counted as data (the
    variant fit does not use: fit's interval is CellPosterior.interval_scaled)."""
    g = rng.gamma(post.concentration, size=(n_draws, len(post.concentration)))
    g /= g.sum(axis=1, keepdims=True)
    d = g @ post.errors
    tail = (1 - level) / 2
    return np.quantile(d, tail, axis=0), np.quantile(d, 1 - tail, axis=0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    margins: dict[tuple[str, int], list[float]] = {}
    cover: dict[tuple[str, int], list[float]] = {}
    width: dict[tuple[str, int], list[float]] = {}
    for mix in SHAPES.values():
        rng = np.random.default_rng(5)
        comp = rng.choice(mix.n_components, 3000, p=mix.weights)
        s_all = rng.binomial(11, rng.beta(np.array(mix.alphas)[comp], np.array(mix.betas)[comp]))
        k_all = np.full(3000, 11)
        actual = np.array([empirical_errors(CountTable.from_pairs(k_all, s_all), ODD)[k] for k in ODD])
        for r in (10, 30, 56):
            draw = np.random.default_rng(1000 + r)
            for run in range(args.runs):
                idx = draw.choice(3000, r, replace=False)
                t = CountTable.from_pairs(k_all[idx], s_all[idx])
                fits = fit_candidates(t, 3)
                auto = min(fits.values(), key=lambda f: f.bic)
                est = {
                    "binomial": error_rates(__import__("betaconform_cli.fit", fromlist=["x"]).fit_binomial(t), ODD),
                    "single BB": error_rates(fits[1].mixture, ODD),
                    "MAP mixture (2)": error_rates(fits[2].mixture, ODD),
                    "MAP mixture (auto)": error_rates(auto.mixture, ODD),
                    "paper EM": error_rates(fit_paper_em(t).mixture, ODD),
                    "empirical": empirical_errors(t, ODD),
                }
                plain = cell_posterior(t, auto.mixture, ODD, 20.0, 1.0)
                lo, hi = _plain_interval(plain, np.random.default_rng(run), 0.9, 2000)
                key_plain = "c = 20, pseudo-counts counted as data"
                cover.setdefault((key_plain, r), []).append(float(np.mean((actual >= lo) & (actual <= hi))))
                width.setdefault((key_plain, r), []).append(float(np.mean(hi - lo)))
                for c in STRENGTHS:
                    post = cell_posterior(t, auto.mixture, ODD, c, 1.0)
                    key = f"default, c = {c:g}"
                    est[key] = dict(zip(ODD, post.mean()))
                    lo, hi = post.interval_scaled(np.random.default_rng(run), 0.9, r + 1.0, 2000)
                    cover.setdefault((key, r), []).append(float(np.mean((actual >= lo) & (actual <= hi))))
                    width.setdefault((key, r), []).append(float(np.mean(hi - lo)))
                for key, e in est.items():
                    margins.setdefault((key, r), []).append(100 * float(np.mean(np.abs(np.array([e[k] for k in ODD]) - actual))))
    names = list(dict.fromkeys(k for k, _ in margins))
    print(f"Margins in points (mean over {len(SHAPES)} shapes x {args.runs} draws, ± standard error)\n")
    print("| estimator | r = 10 | r = 30 | r = 56 |\n|---|---|---|---|")
    for n in names:
        cells = [f"{np.mean(margins[(n, r)]):.2f} ± {np.std(margins[(n, r)]) / np.sqrt(len(margins[(n, r)])):.2f}" for r in (10, 30, 56)]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print("\n90% interval of the default estimate: coverage / mean width (points)\n")
    print("| strength c | r = 10 | r = 30 | r = 56 |\n|---|---|---|---|")
    for c in STRENGTHS:
        key = f"default, c = {c:g}"
        print(f"| {c:g} | " + " | ".join(f"{np.mean(cover[(key, r)]):.2f} / {100 * np.mean(width[(key, r)]):.1f}" for r in (10, 30, 56)) + " |")
    key = "c = 20, pseudo-counts counted as data"
    print(f"| {key} | " + " | ".join(f"{np.mean(cover[(key, r)]):.2f} / {100 * np.mean(width[(key, r)]):.1f}" for r in (10, 30, 56)) + " |")


if __name__ == "__main__":
    main()
