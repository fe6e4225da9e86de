"""How narrow can `score`'s interval be and still meet issue 26's coverage bar? (issue 26 item 1, round 5;
docs/SCORE.md "Round 5").

On the draws of benchmarks/score_intervals.py (the same data, seeds, prediction, lambda and estimate), the Wald
form and the shipped (anchored) form with their t quantile multiplied by every c on a grid: per data set and r the
smallest c whose intervals meet the bar (mean coverage >= 88%, every system >= 80% at r >= 50), knowing the truth,
so that no rule of that family can be narrower there; and the share of draws where the shipped form is wider than
the Wald form, with the Wald form's coverage in those draws.

    nice -n 10 .venv/bin/python benchmarks/score_oracle.py --data-set ceiling --draws 1000   # convincing, graded, issue18
    nice -n 10 .venv/bin/python benchmarks/score_oracle.py --data-set shared --draws 200
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import score_intervals as si  # noqa: E402
from score_intervals import Draw, Predictor, _t, datasets, prepare  # noqa: E402

RS = si.RS

SCALES = np.round(np.arange(0.50, 1.60001, 0.005), 3)  # --oracle: the quantile's multiplier c, on a grid
BAR_MEAN, BAR_WORST = 88.0, 80.0  # issue 26 item 1: coverage >= nominal - 2 on average, every system >= 80% at r >= 50


def scaled(d: Draw, moved: float, truth: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """--oracle: the Wald form and the shipped (anchored) form with their t quantile multiplied by every c of SCALES:
    for each, whether the interval covers the truth and its width, at every c (closed forms, vectorised over c;
    `ppi.anchored_bounds` is the package's solver of eq. 6)."""
    from betaconform_cli.score.ppi import anchored_bounds

    q, a = _t(d) * SCALES, d.fpc / d.n
    half = q * math.sqrt(d.s2_pseudo * a)
    forms = {"Wald": (np.maximum(0.0, d.theta - half), np.minimum(1.0, d.theta + half))}
    low, high = anchored_bounds(np.full(len(q), d.theta), a * d.s2_pseudo, a, q * q)
    forms["anchored, additive (t)"] = (np.maximum(0.0, low), np.minimum(1.0, high))
    del moved
    out = {name: ((lo <= truth) & (truth <= hi), hi - lo) for name, (lo, hi) in forms.items()}
    one = int(np.argmin(np.abs(SCALES - 1.0)))  # where the shipped form is wider than Wald's, does Wald's cover?
    wider = out["anchored, additive (t)"][1][one] > out["Wald"][1][one] + 1e-12
    out["region"] = (np.array([wider, wider and bool(out["Wald"][0][one])]), np.zeros(1))
    return out


def oracle_table(per: dict[str, dict[str, list[tuple[np.ndarray, np.ndarray]]]], r: int) -> dict[str, dict[str, float]]:
    """Per form: coverage (worst system) and width at c = 1, and the smallest c of SCALES whose intervals meet the bar
    on this data set at this r, knowing the truth (an oracle: no valid form can be narrower in this family)."""
    out = {}
    for name in ("Wald", "anchored, additive (t)"):
        cover = np.array([np.mean([x[0] for x in per[stem][name]], axis=0) for stem in per]) * 100  # systems x c
        width = np.array([np.mean([x[1] for x in per[stem][name]], axis=0) for stem in per]) * 100
        ok = (cover.mean(axis=0) >= BAR_MEAN) & ((cover.min(axis=0) >= BAR_WORST) if r >= 50 else True)
        one = int(np.argmin(np.abs(SCALES - 1.0)))
        k = int(np.argmax(ok)) if ok.any() else None
        out[name] = {"coverage": float(cover[:, one].mean()), "worst": float(cover[:, one].min()),
                     "width": float(width[:, one].mean()),
                     "c": float(SCALES[k]) if k is not None else float("nan"),
                     "c_coverage": float(cover[:, k].mean()) if k is not None else float("nan"),
                     "c_worst": float(cover[:, k].min()) if k is not None else float("nan"),
                     "c_width": float(width[:, k].mean()) if k is not None else float("nan")}
    region = np.array([np.sum([x[0] for x in per[stem]["region"]], axis=0) for stem in per])  # systems x (wider, covered)
    out["region"] = {"share": 100 * float(region[:, 0].sum() / (len(per) * len(per[next(iter(per))]["region"]))),
                     "wald_coverage": 100 * float(region[:, 1].sum() / max(region[:, 0].sum(), 1)),
                     "worst": 100 * float(min((c / w for w, c in region if w >= 20), default=float("nan")))}  # systems with 20+
    return out


def run_oracle(which: str, draws: int, seed: int, data: Path) -> dict[str, dict[str, dict[str, float]]]:
    """--oracle: the same draws as `run`, only the two scaled families."""
    out = {}
    sets = datasets(which, seed, data)
    for r in RS:
        per: dict[str, dict[str, list[tuple[np.ndarray, np.ndarray]]]] = {}
        for stem, _coll, maker, fixed in sets:
            big_n = len(maker(np.random.default_rng(0))[0])
            if big_n < 2 * r:
                continue
            rng = np.random.default_rng([seed, r, zlib.crc32(stem.encode())])
            predictor, mine = Predictor(fixed), {"Wald": [], "anchored, additive (t)": [], "region": []}
            for _ in range(draws):
                gold, verdicts = maker(rng)
                observed = np.full(big_n, -1)
                pick = rng.choice(big_n, r, replace=False)
                observed[pick] = gold[pick]
                d, moved = prepare(verdicts, observed, predictor)
                for name, value in scaled(d, moved, float(gold.mean())).items():
                    mine[name].append(value)
            per[stem] = mine
        if per:
            out[str(r)] = oracle_table(per, r)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-set", default="all", choices=(*si.SIMULATIONS, "shared", "all"))
    parser.add_argument("--data", type=Path, default=si.bench.DEFAULT_DATA)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    which = (*si.SIMULATIONS, "shared") if args.data_set == "all" else (args.data_set,)
    results = {}
    print("| data | r | form | at c = 1: coverage (worst) / width | smallest c meeting the bar | its coverage (worst) "
          "/ width | its width / Wald's at c = 1 |\n|---|---|---|---|---|---|---|")
    for name in which:
        res = run_oracle(name, args.draws, args.seed, args.data)
        results[name] = res
        for r, table in res.items():
            wald_width = table["Wald"]["width"]
            g = table.pop("region")
            print(f"| {name} | {r} | (draws where the shipped form is wider than Wald's: {g['share']:.1f}%; Wald's "
                  f"coverage there {g['wald_coverage']:.1f}%, worst system {g['worst']:.1f}%) | | | | |")
            for form, v in table.items():
                print(f"| {name} | {r} | {form} | {v['coverage']:.1f}% ({v['worst']:.1f}%) / {v['width']:.2f} | "
                      f"{v['c']:.3f} | {v['c_coverage']:.1f}% ({v['c_worst']:.1f}%) / {v['c_width']:.2f} | "
                      f"{v['c_width'] / wald_width:.3f} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
