"""The one Dawid-Skene model's fitting time (betaconform_cli/dawid_skene.py), through its three users: `score`'s
two-class fit (score.fit_dawid_skene), the vote split's one-coin fit (votes.agreement.fit_one_coin) and `judges`'
class-conditional fit with gold (judges.unlabeled.fit_classes), on simulated independent judges.

Run from the repository root:  nice -n 10 .venv/bin/python benchmarks/dawid_skene.py [--rows 200000] [--judges 10]
(docs/ARCHITECTURE.md, "One EM loop, one Dawid-Skene model", holds the numbers). It imports only the three public
functions, so `PYTHONPATH=<an older checkout>` times that checkout's code the same way.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: a PYTHONPATH given first (an older checkout) wins

import numpy as np  # noqa: E402

from betaconform_cli.judges.unlabeled import Verdicts, fit_classes  # noqa: E402
from betaconform_cli.score import fit_dawid_skene  # noqa: E402
from betaconform_cli.votes.agreement import fit_one_coin  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--judges", type=int, default=10)
    ap.add_argument("--labeled", type=int, default=100, help="rows with gold for judges' fit")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, j = args.rows, args.judges
    gold = rng.random(n) < 0.4
    accuracy = rng.uniform(0.6, 0.9, j)
    verdicts = np.where(rng.random((n, j)) < accuracy, gold[:, None], ~gold[:, None]).astype(np.int64)
    verdicts[rng.random((n, j)) < 0.1] = -1  # a tenth of the verdicts missing
    shown = np.where(np.arange(n) < args.labeled, gold.astype(np.int64), -1)
    fits = {
        "score's two-class fit": lambda: fit_dawid_skene(verdicts),
        "the one-coin fit": lambda: fit_one_coin(verdicts, np.full(n, -1), np.ones(n), 2),
        "judges' fit with gold": lambda: fit_classes(Verdicts(verdicts, shown, np.ones(n, dtype=np.int64), 2)),
    }
    warnings.simplefilter("ignore")
    print(f"{n} rows x {j} judges ({sys.modules['betaconform_cli'].__file__})")
    for name, fit in fits.items():
        start = time.perf_counter()
        fit()
        print(f"  {name}: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
