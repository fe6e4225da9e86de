"""BetaConform's MAP mixture fit against bbmix (PyPI: beta-binomial mixture inference by EM) on the same data.

    .venv/bin/pip install bbmix==0.2.2      # not a dependency of BetaConform; only this benchmark uses it
    .venv/bin/python benchmarks/bbmix_compare.py [--data ../shared/data] [--max-iters 200]

For each dataset (the shared judge data when present, plus a simulated 2,000-item two-peak set): both fit two
Beta-Binomial components to the items' correct counts; we report wall time and the log-likelihood of each
fitted model, computed per item with scipy.stats.betabinom (independent of either package). BetaConform's
default fit maximises the posterior (weak prior), not the likelihood, so its MLE (no prior) is shown too. Prints
Markdown. Skips a source cleanly when it is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.inputs import Keep, read_dataset  # noqa: E402
from betaconform_cli.mixtures import fit_mixture  # noqa: E402
from betaconform_cli.settings import Prior  # noqa: E402


def loglik(ys: np.ndarray, ns: np.ndarray, weights, alphas, betas) -> float:
    dens = sum(w * stats.betabinom.pmf(ys, ns, a, b) for w, a, b in zip(weights, alphas, betas))
    return float(np.log(dens).sum())


def datasets(data_dir: Path):
    rng = np.random.default_rng(0)
    n = 2000
    hard = rng.random(n) < 0.3
    p = np.where(hard, rng.beta(1.0, 6.0, n), rng.beta(8.0, 1.5, n))
    yield "simulated two-peak (2,000 items, 11 judges)", rng.binomial(11, p), np.full(n, 11)
    if not data_dir.is_dir():
        print(f"(no {data_dir}: shared datasets skipped)\n")
        return
    for f in sorted(data_dir.glob("*/*.jsonl")):
        ds = read_dataset(f, keep=Keep.ITEMS)
        yield ds.name, np.array([it.correct for it in ds.items]), np.array([it.judges for it in ds.items])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--max-iters", type=int, default=200)
    args = ap.parse_args()
    try:
        from bbmix.models import MixtureBetaBinomial
    except ImportError:
        print("bbmix is not installed: `.venv/bin/pip install bbmix==0.2.2` to run this comparison.")
        return
    warnings.simplefilter("ignore")
    print("| dataset | items | BetaConform time | log-lik (MAP, default prior) | log-lik (no prior: MLE) | bbmix time | bbmix log-lik |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    totals = np.zeros(5)
    for name, ys, ns in datasets(args.data):
        t = time.perf_counter()
        fit = fit_mixture(CountTable.from_pairs(ns, ys), 2, prior=Prior())
        t_ours = time.perf_counter() - t
        ll_ours = loglik(ys, ns, fit.mixture.weights, fit.mixture.alphas, fit.mixture.betas)
        mle = fit_mixture(CountTable.from_pairs(ns, ys), 2, prior=Prior(log_param_sd=1e6, weight_concentration=1.0)).mixture
        ll_mle = loglik(ys, ns, mle.weights, mle.alphas, mle.betas)
        model = MixtureBetaBinomial(n_components=2, max_m_step_iter=250, tor=1e-6)
        t = time.perf_counter()
        try:
            params = model.fit((ys, ns), max_iters=args.max_iters, init_method="mixbin")
            t_bb = time.perf_counter() - t
            ll_bb = loglik(ys, ns, params[4:6], params[0:2], params[2:4])
        except Exception as exc:  # bbmix fails on some inputs; say so rather than hide it
            t_bb, ll_bb = time.perf_counter() - t, float("nan")
            name = f"{name} (bbmix failed: {type(exc).__name__})"
        totals += (t_ours, ll_ours, ll_mle, t_bb, ll_bb if np.isfinite(ll_bb) else 0.0)
        print(f"| {name} | {len(ys)} | {1000 * t_ours:.0f} ms | {ll_ours:.2f} | {ll_mle:.2f} | {t_bb:.1f} s | {ll_bb:.2f} |")
    print(f"| total | | {1000 * totals[0]:.0f} ms | {totals[1]:.2f} | {totals[2]:.2f} | {totals[3]:.1f} s | {totals[4]:.2f} |")


if __name__ == "__main__":
    main()
