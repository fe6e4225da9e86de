"""`drift` benchmark (issue 27 item 3): the false-alarm rate of its tests when nothing changed, and their power when
one judge changed, on the shared data. The numbers behind docs/DRIFT.md.

Data: every *.jsonl under ../shared/data (or --data DIR), correctness only (1 = the judge agreed with the gold), turned
into binary verdicts as benchmarks/score.py's make_system does (gold "pass" with probability p ~ U[0.5, 0.9] per
draw; a correct judge says the gold, a wrong one the other side, no verdict stays none). Each run keeps the gold on
half its items (the others unlabeled). Scenarios, per dataset and draw (a judge j drawn at random per draw):

- null: the items split at random into two halves, old and new (no item shared): the same judges, two independent
  samples of items. Any alarm is a false alarm. --null pairs in all (spread over the datasets).
- degraded: as null, then 15% of judge j's verdicts in the new half flipped.
- swapped: as null, then judge j in the new half replaced by a judge of another collection (its correctness on
  items drawn at random from one of that collection's datasets: a different model, unrelated to these items).
- degraded (rerun) / swapped (rerun): every item in both runs (the same ids and gold: paired), the new run the old
  one with judge j changed as above. (A rerun with nothing changed gives identical verdicts here and never
  alarms: the data hold one run per judge, so a rerun's own noise cannot be simulated.)

Per scenario: how often the label-free test alarms (any judge or the panel, Holm), how often it names judge j, how
often the labels' intervals alarm, and the gate (either). Level 0.9: the gate's false-alarm rate at most 0.1, split
between the two parts; 999 permutations (drift's default). Nothing is tuned: the statistic, the pairing rule and the intervals are drift's as they are, so
there is nothing to leave a collection out for.

    nice -n 10 python benchmarks/drift.py                       # 500 null pairs, 20 draws per dataset and scenario
    nice -n 10 python benchmarks/drift.py --null 100 --draws 5  # quick
Exits 0 with a message when the data folder is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from score import load_correct, make_system  # noqa: E402

from betaconform_cli.judges.drift import Run, drift  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
LEVEL = 0.9
FLIP = 0.15
LABELED = 0.5
PERMUTATIONS = 999  # drift's default (199 could not reject at Holm level 0.05 / 12 with 11 judges)
SCENARIOS = ("null", "degraded", "swapped", "degraded (rerun)", "swapped (rerun)")


def _run(verdicts: np.ndarray, gold: np.ndarray, ids: np.ndarray, rng: np.random.Generator) -> Run:
    labeled = rng.random(len(gold)) < LABELED
    return Run(verdicts, np.where(labeled, gold, -1), tuple(str(i) for i in ids))


def _change(verdicts: np.ndarray, gold: np.ndarray, j: int, how: str, other: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The new run's verdicts with judge j degraded (15% flipped) or swapped (another collection's judge)."""
    out = verdicts.copy()
    if how == "degraded":
        flip = (rng.random(len(out)) < FLIP) & (out[:, j] >= 0)
        out[flip, j] = 1 - out[flip, j]
    else:
        right = other[rng.integers(0, len(other), len(out))]
        out[:, j] = np.where(np.isnan(right), -1, np.where(right == 1, gold, 1 - gold))
    return out


def one(correct: np.ndarray, scenario: str, other: np.ndarray, rng: np.random.Generator) -> tuple[bool, bool, bool]:
    """(label-free alarm, it names judge j, labels alarm) of one simulated pair."""
    gold, verdicts = make_system(correct, rng)
    n, judges = verdicts.shape
    j = int(rng.integers(judges))
    ids = np.arange(n)
    if scenario.endswith("(rerun)"):
        old = _run(verdicts, gold, ids, rng)
        new = Run(_change(verdicts, gold, j, scenario.split()[0], other, rng), old.gold, old.ids)
    else:
        order = rng.permutation(n)
        a, b = order[: n // 2], order[n // 2 :]
        v_new = verdicts[b] if scenario == "null" else _change(verdicts[b], gold[b], j, scenario, other, rng)
        old, new = _run(verdicts[a], gold[a], ids[a], rng), _run(v_new, gold[b], ids[b], rng)
    r = drift(old, new, [str(k) for k in range(judges)], 2, LEVEL, 0.0, PERMUTATIONS, rng)
    return (any(x.drifted_patterns for x in r.rows), r.rows[j].drifted_patterns, any(x.drifted_labels for x in r.rows))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--null", type=int, default=500, help="null pairs in all")
    ap.add_argument("--draws", type=int, default=20, help="draws per dataset for each power scenario")
    ap.add_argument("--seed", type=int, default=27)
    args = ap.parse_args()
    files = sorted(args.data.rglob("*.jsonl")) if args.data.is_dir() else []
    if not files:
        print(f"no data under {args.data}; nothing to do")
        return 0
    data = [(p.parent.name, p.stem, load_correct(p)) for p in files]
    rng = np.random.default_rng(args.seed)
    started = time.time()
    print(f"drift benchmark: {len(data)} datasets, level {LEVEL}, flip {FLIP:.0%}, {LABELED:.0%} of each run labeled, "
          f"seed {args.seed}\n")
    print("| scenario | pairs | label-free alarms | names the changed judge | labels alarm | gate (either) |")
    print("|---|---:|---:|---:|---:|---:|")
    for scenario in SCENARIOS:
        hits = []
        for k, (collection, _name, correct) in enumerate(data):
            draws = args.null // len(data) + (k < args.null % len(data)) if scenario == "null" else args.draws
            others = [c for col, _n, c in data if col != collection]
            for _ in range(draws):
                other = others[int(rng.integers(len(others)))]
                other_col = other[:, int(rng.integers(other.shape[1]))]
                hits.append(one(correct, scenario, other_col, rng))
        h = np.array(hits, dtype=float)
        free, named, labels = h.mean(axis=0)
        gate = float((h[:, 0] + h[:, 2] > 0).mean())
        se = np.sqrt(free * (1 - free) / len(h))
        print(f"| {scenario} | {len(h)} | {free:.3f} (± {se:.3f}) | {named:.3f} | {labels:.3f} | {gate:.3f} |", flush=True)
    print(f"\n({time.time() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
