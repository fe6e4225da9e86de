"""`score` with items no judge gave a verdict on (issue 26; docs/SCORE.md "Items with no verdict"): coverage, error
and width of the population's pass rate when a share of the items has no verdict.

Data: benchmarks/score.py's simulations (`--simulate issue18`, `convincing`, `ceiling`: 9 systems x 400 answers x
11 judges each; fixed data, draws differ in which items abstain and which are labeled). In each draw a share
`--abstain` (default 20%) of the items gets no verdict from any judge:
- `mar`: the abstaining items drawn at random (verdicts missing at random: the assumption of eq. 9);
- `mnar`: a failing item twice as likely to abstain as a passing one (the same share overall): the assumption is
  wrong; labels that fall on abstaining items still estimate their stratum (eq. 8), none there leaves eq. 9's bias.
Labels: r items at random over ALL items (`all`: some land on abstaining items), or only among the judged ones
(`judged`: the abstaining stratum is always predicted, eq. 9). Truth: the pass rate of all 400 items.

Methods: `ours` (betaconform_cli.score.score with the abstaining rows' verdicts all -1: the mixture), and `dropped`
(what score did before: the items without a verdict left out, the estimate of the judged items taken for all).

    nice -n 10 .venv/bin/python benchmarks/score_no_verdict.py --draws 50          # the table in docs/SCORE.md
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from betaconform_cli.score import score  # noqa: E402

LEVEL = 0.9


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("score_bench", ROOT / "benchmarks" / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _abstaining(rng: np.random.Generator, gold: np.ndarray, share: float, mode: str) -> np.ndarray:
    n = len(gold)
    if mode == "mar":
        weight = np.ones(n)
    else:  # a failing item twice as likely to abstain
        weight = np.where(gold == 1, 1.0, 2.0)
    return np.isin(np.arange(n), rng.choice(n, int(round(share * n)), replace=False, p=weight / weight.sum()))


def one(gold: np.ndarray, verdicts: np.ndarray, rng: np.random.Generator, r: int, share: float, mode: str,
        labels: str) -> dict[str, tuple[float, bool, float]]:
    """(|error|, covered, width) of each method in one draw."""
    none = _abstaining(rng, gold, share, mode)
    v = np.where(none[:, None], -1, verdicts)
    pool = np.arange(len(gold)) if labels == "all" else np.flatnonzero(~none)
    observed = np.full(len(gold), -1)
    pick = rng.choice(pool, r, replace=False)
    observed[pick] = gold[pick]
    truth = float(gold.mean())
    out = {}
    for name, rows in (("ours", slice(None)), ("dropped", ~none)):
        iv = score(v[rows], observed[rows], 1, confidence_level=LEVEL).score
        out[name] = (abs(iv.estimate - truth), iv.low <= truth <= iv.high, iv.high - iv.low)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--abstain", type=float, default=0.2)
    parser.add_argument("--simulate", nargs="+", default=["issue18", "convincing", "ceiling"])
    parser.add_argument("--rs", type=int, nargs="+", default=[20, 50])
    args = parser.parse_args()
    bench = _bench()
    start = time.time()
    print(f"abstaining share {args.abstain:.0%}, {args.draws} draws per system, 90% intervals; |error| and width in points")
    print("| data | abstain | labels | r | ours: error / coverage (worst) / width | dropped (before): error / coverage (worst) / width |")
    print("|---|---|---|---|---|---|")
    for sim in args.simulate:
        systems = getattr(bench, f"{sim}_datasets")(args.seed)
        for mode, labels in (("mar", "all"), ("mar", "judged"), ("mnar", "all"), ("mnar", "judged")):
            for r in args.rs:
                per: dict[str, list[np.ndarray]] = {"ours": [], "dropped": []}
                for k, (_, maker) in enumerate(systems):
                    rng = np.random.default_rng([args.seed, r, k, len(mode), len(labels)])
                    gold, verdicts = maker(rng)
                    rows = [one(gold, verdicts, rng, r, args.abstain, mode, labels) for _ in range(args.draws)]
                    for name in per:
                        per[name].append(np.array([row[name] for row in rows], dtype=float).mean(axis=0))
                cells = []
                for name in ("ours", "dropped"):
                    a = np.array(per[name])
                    cells.append(f"{100 * a[:, 0].mean():.2f} / {100 * a[:, 1].mean():.1f}% ({100 * a[:, 1].min():.0f}%) / "
                                 f"{100 * a[:, 2].mean():.2f}")
                print(f"| {sim} | {mode} | {labels} | {r} | {cells[0]} | {cells[1]} |", flush=True)
    print(f"({time.time() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
