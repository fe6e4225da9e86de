"""Honesty under selection for round 5's variants (docs/UNLABELED.md, "Issue 26, round 5"): the check of
tests/test_sample_select.py::TestHonestUnderSelection::test_vote_split run with each estimator of
benchmarks/unlabeled.py's round-5 table instead of the default. 300 items of 9 interchangeable judges, 60 labeled in
batches of 10 chosen by split (100 seeds), and 60 labeled at random; the check passes when the mean estimate is
within 3 standard errors of the truth at k = 1, 5, 9 and the 90% intervals by split cover >= 85% and no less than
8 points below those on random labels.

    .venv/bin/python benchmarks/unlabeled_honesty.py ['name;name;...']
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from benchmarks.unlabeled import ROUND5  # noqa: E402
from betaconform_cli.votes import SplitPrior, estimate_errors  # noqa: E402
from tests.test_sample_select import loop_by_split, pool_error, pool_of  # noqa: E402

KS = (1, 5, 9)


def check(name: str, golds: list[np.ndarray], rand: list[np.ndarray], verdicts: np.ndarray, truth: np.ndarray) -> str:
    prior, guard, *how = ROUND5[name]
    estimator = how[0] if how and isinstance(how[0], str) else "vote_split"
    distinct = how[0] if how and isinstance(how[0], SplitPrior) else None
    out = {}
    for kind, labels in (("by split", golds), ("random", rand)):
        est, cover = [], []
        for seed, gold in enumerate(labels):
            e = estimate_errors(verdicts, gold, KS, 0.9, np.random.default_rng(seed), n_classes=2, prior=prior,
                                guard=guard is True, estimator=estimator, distinct_prior=distinct)
            est.append([r.estimate for r in e.rows])
            cover.append([r.low <= t <= r.high for r, t in zip(e.rows, truth)])
        arr = np.array(est)
        out[kind] = (arr.mean(axis=0), arr.std(axis=0, ddof=1) / np.sqrt(len(est)), np.mean(cover, axis=0))
    mean, se, cov = out["by split"]
    ok = bool(np.all(np.abs(mean - truth) <= 3 * se) and np.all(cov >= out["random"][2] - 0.08) and np.all(cov >= 0.85))
    bias = ", ".join(f"{b:+.2f}" for b in (mean - truth) / se)
    return (f"| {name} | {'pass' if ok else '**fail**'} | {bias} | "
            f"{' / '.join(f'{100 * c:.0f}%' for c in cov)} | {' / '.join(f'{100 * c:.0f}%' for c in out['random'][2])} |")


def main(argv: list[str]) -> int:
    names = argv[0].split(";") if argv else list(ROUND5)
    verdicts, side = pool_of(300, 9, 7)
    golds = [loop_by_split(verdicts, side, 60, seed) for seed in range(100)]
    truth = pool_error(verdicts, side, KS)
    rand = []
    for seed in range(100):
        gold = np.full(300, -1)
        pick = np.random.default_rng(seed).choice(300, 60, replace=False)
        gold[pick] = side[pick]
        rand.append(gold)
    print("| estimator | check | bias in standard errors, k = 1 / 5 / 9 | coverage by split | coverage at random |")
    print("|---|---|---:|---:|---:|")
    for name in names:
        print(check(name, golds, rand, verdicts, truth), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
