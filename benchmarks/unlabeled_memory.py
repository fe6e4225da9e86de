"""Peak memory of `fit` on JSON Lines with many unlabeled items (issue 25: 10^6 unlabeled items took 1.1 GB; the
README promises memory that grows with distinct vote patterns, not items).

Writes --items lines of 5 judges' pass/fail verdicts (the first --labeled with gold, the rest without: 32 distinct
vote patterns whatever the number of items) to a temporary folder, runs `python -m betaconform_cli fit FILE -f json`
as its own process for each size, and prints its wall time and peak resident memory (the largest process of the
run, workers included: getrusage(RUSAGE_CHILDREN) of a fresh interpreter per run).

    nice -n 10 .venv/bin/python benchmarks/unlabeled_memory.py                       # 10^5 and 10^6 items
    nice -n 10 .venv/bin/python benchmarks/unlabeled_memory.py --checkout ../other   # another checkout's code
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_MEASURE = """
import resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
wall = time.perf_counter() - t
print(rc, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def write_items(path: Path, items: int, labeled: int, judges: int = 5) -> None:
    rng = random.Random(0)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(items):
            good = rng.random() < 0.7
            verdicts = ", ".join('"pass"' if (rng.random() < 0.8) == good else '"fail"' for _ in range(judges))
            gold = f', "label": "{"pass" if good else "fail"}"' if i < labeled else ""
            fh.write(f'{{"id": "u{i}", "verdicts": [{verdicts}]{gold}}}\n')


def measure(checkout: Path, data: Path) -> tuple[int, float, int]:
    env = dict(os.environ, PYTHONPATH=str(checkout), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "betaconform_cli", "fit", str(data), "-f", "json"],
                         capture_output=True, text=True, env=env, cwd=checkout, check=True).stdout.split()  # python -m: cwd first
    return int(out[0]), float(out[1]), int(out[2])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000", help="comma-separated item counts")
    ap.add_argument("--labeled", type=int, default=200)
    ap.add_argument("--checkout", type=Path, default=ROOT, help="the checkout whose code runs (PYTHONPATH)")
    args = ap.parse_args()
    print(f"`fit` on JSON Lines of 5 judges' verdicts, {args.labeled} labeled items, the rest unlabeled "
          f"({args.checkout.resolve().name})\n")
    print("| items | unlabeled | wall s | peak memory |\n|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            data = Path(tmp) / f"unlabeled_{n}.jsonl"
            write_items(data, n, args.labeled)
            rc, wall, kib = measure(args.checkout, data)
            if rc != 0:
                print(f"fit exited {rc} on {n} items", file=sys.stderr)
                return 1
            print(f"| {n:,} | {n - args.labeled:,} | {wall:.1f} | {kib / 1024:.0f} MiB |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
