"""Issue 26 item 3, round 4: what the default vote split does on judgebench that labels only does not (docs/UNLABELED.md,
"round 4"). Per dataset and r, over benchmarks/unlabeled.py's 24 paired draws: the signed error averaged over odd k
(estimate - truth, points) of labels only and of the vote split with its spread over draws, how often the guard fell
back, the flat model's posterior probability and the tempered model's scale c. Skips cleanly without the data.

    .venv/bin/python benchmarks/unlabeled_judgebench_diag.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
from unlabeled import DEFAULT_DATA, KS, Data, draw, load, truth  # noqa: E402

from betaconform_cli.blas import one_thread  # noqa: E402
from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.evaluate.settings import EvaluateSettings  # noqa: E402
from betaconform_cli.fit import analyse  # noqa: E402
from betaconform_cli.votes import estimate_errors  # noqa: E402

RUNS = 24


def one(d: Data, size: int) -> str:
    settings = EvaluateSettings().fit_settings()
    j = d.judgments
    big_k = j.shape[1]
    actual = truth(j)
    odd = np.array([k % 2 == 1 and k <= big_k for k in KS])
    lo, vs, flat, scale, fell = [], [], [], [], 0
    for run in range(RUNS):
        rng, idx, votes, gold = draw(d, size, run, 0)
        labels = analyse(CountTable.from_pairs(np.full(size, big_k), j[idx].sum(axis=1)), settings, rng)
        r = estimate_errors(votes, gold, KS, 0.9, np.random.default_rng([0, size, run, 3]), labels_only=labels)
        lo.append(100 * (np.array([x.estimate for x in labels.rows]) - actual)[odd].mean())
        vs.append(100 * (np.array([x.estimate for x in r.rows]) - actual)[odd].mean())
        fell += not r.used_unlabeled
        if r.model is not None and r.model.tempered is not None:
            flat.append(r.model.model_probabilities.get("flat", np.nan))
            scale.append(r.model.tempered[1])
    a, b = np.array(lo), np.array(vs)
    return (f"| {d.name} | {size} | {a.mean():+.2f} ({a.std():.2f}) | {b.mean():+.2f} ({b.std():.2f}) | {fell}/{RUNS} | "
            f"{np.mean(flat):.2f} | {np.mean(scale):.2f} |")


def main() -> int:
    if not DEFAULT_DATA.is_dir():
        print(f"skipped: no data folder at {DEFAULT_DATA}", file=sys.stderr)
        return 0
    print("| dataset | r | labels only: signed error (sd over draws) | vote split: signed error (sd) | fallbacks | P(flat) | tempered c |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with one_thread():
        for path in sorted(DEFAULT_DATA.rglob("judgebench_*")):
            d = load(path, DEFAULT_DATA)
            for size in (10, 30):
                print(one(d, size), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
