"""`score`'s interval forms side by side on ONE prediction per draw (issue 26 item 1, docs/SCORE.md "Round 4").

benchmarks/score.py --alternatives refits the judges' models once per variant and per draw; here every draw fits
them once (once per dataset where the data are fixed and only the labeled items change: the latent classes and
Dawid-Skene see the verdicts, never the labels) and every interval form is computed from the same prediction, the
same lambda, the same estimate (eq. 4). The first form is a copy of the package's interval (eq. 6) and is checked
against `betaconform_cli.score.score` on every dataset's first draws (to 1e-9), so the copy cannot drift.

Data: the four simulations of benchmarks/score.py (ceiling, convincing, graded, issue18; 9 systems x 400 answers x
11 judges, fixed data) and the shared data (../shared/data, every *.jsonl; a draw makes a binary system from the
correctness matrix as benchmarks/score.py does; each dataset's collection is its folder). r = 20, 50, 100 labels at
random (a dataset with fewer than 2r items is left out at that r); 90% intervals; truth the pass rate of all items.
Per form and r: mean |error| and width in points, mean coverage, the worst system's (dataset's) coverage, and for
the shared data the worst collection's mean coverage.

    nice -n 10 .venv/bin/python benchmarks/score_intervals.py --data-set ceiling --draws 200
    nice -n 10 .venv/bin/python benchmarks/score_intervals.py --data-set shared --draws 200
    nice -n 10 .venv/bin/python benchmarks/score_intervals.py --data-set all --draws 200 --json out.json

Exits 0 with a message when the shared data folder is absent (the simulations still run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

import score as bench  # noqa: E402  (benchmarks/score.py: the data makers)
from betaconform_cli.score import fit_dawid_skene, majority, score  # noqa: E402
from betaconform_cli.score.latent_classes import cross_fitted_prediction, fit_latent_classes  # noqa: E402
from betaconform_cli.score.ppi import pseudo_variance, shrink_toward, tuned_lambda  # noqa: E402

LEVEL = 0.9
RS = (20, 50, 100)
SIMULATIONS = ("ceiling", "convincing", "graded", "issue18")


@dataclass(frozen=True)
class Draw:
    """What every interval form of one draw shares: the PPI++ estimate, its residual variances, the model's."""

    theta: float
    n: int
    big_n: int
    fpc: float
    s2_pseudo: float  # eq. 2's residual variance: d = 2, k = 3 pseudo-items (the package's)
    s2_plain: float  # the residuals' own variance, d = 2, no pseudo-item
    explained: float  # (2 lam - lam^2) Var_N(f): eq. 6's b * n / fpc
    ddof: int


def _quadratic(theta: float, q2: float, a: float, b: float) -> tuple[float, float] | None:
    """The theta0 with (theta - theta0)^2 <= q2 (a theta0 (1 - theta0) - b), or None when empty."""
    qa, qb, qc = 1.0 + q2 * a, -(2.0 * theta + q2 * a), theta * theta + q2 * b
    disc = qb * qb - 4.0 * qa * qc
    if disc <= 0:
        return None
    root = math.sqrt(disc)
    return (-qb - root) / (2.0 * qa), (-qb + root) / (2.0 * qa)


def _model(d: Draw) -> tuple[float, float]:
    return d.fpc / d.n, d.fpc * d.explained / d.n


def _at(d: Draw, theta0: float) -> float:
    a, b = _model(d)
    return a * theta0 * (1 - theta0) - b


def _hull(d: Draw, q_wald: float, var: float, q_model: float) -> tuple[float, float]:
    """theta +- q_wald sd joined with the model's set at q_model (eq. 6 when both are t_{n-2} and var eq. 2's)."""
    half = q_wald * math.sqrt(var)
    low, high = d.theta - half, d.theta + half
    root = _quadratic(d.theta, q_model**2, *_model(d))
    if root is not None:
        low, high = min(low, root[0]), max(high, root[1])
    return max(0.0, low), min(1.0, high)


def _model_set(d: Draw, q: float) -> tuple[float, float]:
    root = _quadratic(d.theta, q * q, *_model(d))
    if root is None:  # the model allows no variance anywhere: the point itself
        return max(0.0, min(1.0, d.theta)), max(0.0, min(1.0, d.theta))
    return max(0.0, root[0]), min(1.0, root[1])


def _ruled_out(d: Draw, s2: float) -> bool:
    """The residuals' one-sided lower bound at the level for their variance exceeds the model's at the estimate."""
    dof = d.n - d.ddof
    least = dof * s2 / float(stats.chi2.ppf(LEVEL, dof)) * d.fpc / d.n
    return least > _at(d, d.theta)


def _t(d: Draw) -> float:
    return float(stats.t.ppf(0.5 + LEVEL / 2, d.n - d.ddof))


Z = float(stats.norm.ppf(0.5 + LEVEL / 2))


def eq6(d: Draw) -> tuple[float, float]:
    t = _t(d)
    return _hull(d, t, d.s2_pseudo * d.fpc / d.n, t)


def wald(d: Draw) -> tuple[float, float]:
    half = _t(d) * math.sqrt(d.s2_pseudo * d.fpc / d.n)
    return max(0.0, d.theta - half), min(1.0, d.theta + half)


def model_unless(d: Draw) -> tuple[float, float]:
    return eq6(d) if _ruled_out(d, d.s2_pseudo) else _model_set(d, _t(d))


def model_unless_z(d: Draw) -> tuple[float, float]:
    return eq6(d) if _ruled_out(d, d.s2_pseudo) else _model_set(d, Z)


def eq6_plain(d: Draw) -> tuple[float, float]:
    t = _t(d)
    return _hull(d, t, d.s2_plain * d.fpc / d.n, t)


def eq6_plain_z(d: Draw) -> tuple[float, float]:
    return _hull(d, _t(d), d.s2_plain * d.fpc / d.n, Z)


def model_alone(d: Draw) -> tuple[float, float]:
    return _model_set(d, _t(d))


FORMS: dict[str, Callable[[Draw], tuple[float, float]]] = {
    "eq. 6 (shipped: hull of t sd, k = 3, and the model's set at t)": eq6,
    "Wald: theta +- t sd (k = 3; before issue 26)": wald,
    "model alone unless the residuals rule it out (t)": model_unless,
    "model alone unless the residuals rule it out (z for the model)": model_unless_z,
    "eq. 6 with the residuals' own variance (k = 0)": eq6_plain,
    "eq. 6 with k = 0, the model's set at z": eq6_plain_z,
    "model's set alone (t), never the residuals": model_alone,
}


class Predictor:
    """The judges' models of one dataset: refitted per draw unless the verdicts are fixed."""

    def __init__(self, fixed: bool) -> None:
        self.fixed, self.cache = fixed, None

    def models(self, verdicts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.cache is None or not self.fixed:
            self.cache = (fit_latent_classes(verdicts).responsibilities, fit_dawid_skene(verdicts).posterior)
        return self.cache


def prepare(verdicts: np.ndarray, observed: np.ndarray, predictor: Predictor) -> tuple[Draw, float]:
    """One draw's shared pieces (the package's steps, eqs. 1-5) and its moved estimate (eq. 4)."""
    labeled = observed >= 0
    y = np.where(labeled, observed, 0).astype(float)
    resp, post = predictor.models(verdicts)
    w = np.ones(len(y))
    f = cross_fitted_prediction(resp, post, y, labeled, w)
    n, big_n = int(labeled.sum()), len(y)
    lam = tuned_lambda(y[labeled], f[labeled], w[labeled])
    ddof = 2 if lam != 0 else 1
    theta = lam * float(f.mean()) + float((y[labeled] - lam * f[labeled]).mean())
    e = y[labeled] - lam * f[labeled]
    ss = float(((e - e.mean()) ** 2).sum())
    v0 = pseudo_variance(y[labeled], w[labeled])
    s2_pseudo = (ss + 3.0 * v0) / (n - ddof + 3.0)
    explained = (2 * lam - lam * lam) * float(((f - f.mean()) ** 2).mean())
    fpc = 1 - n / big_n
    d = Draw(theta, n, big_n, fpc, s2_pseudo, ss / (n - ddof), explained, ddof)
    moved = shrink_toward(theta, math.sqrt(s2_pseudo * fpc / n), float(majority(verdicts).mean())) if lam else theta
    return d, moved


def datasets(which: str, seed: int, data: Path) -> list[tuple[str, str, bench.Maker, bool]]:
    """(name, collection, maker, fixed) for a simulation or the shared data."""
    if which == "shared":
        if not data.is_dir():
            return []
        return [(p.stem, p.parent.name, bench._from_correct(bench.load_correct(p)), False)
                for p in sorted(data.rglob("*.jsonl"))]
    makers = {"ceiling": bench.ceiling_datasets, "convincing": bench.convincing_datasets,
              "graded": bench.graded_datasets, "issue18": bench.issue18_datasets}
    return [(name, which, maker, True) for name, maker in makers[which](seed)]


def run(which: str, draws: int, seed: int, data: Path, checks: int = 3) -> dict[str, object]:
    out: dict[str, object] = {}
    sets = datasets(which, seed, data)
    for r in RS:
        rows: dict[str, dict[str, list[tuple[float, bool, float]]]] = {}
        collection: dict[str, str] = {}
        for stem, coll, maker, fixed in sets:
            big_n = len(maker(np.random.default_rng(0))[0])
            if big_n < 2 * r:
                continue
            collection[stem] = coll
            rng = np.random.default_rng([seed, r, zlib.crc32(stem.encode())])
            predictor, per = Predictor(fixed), {name: [] for name in FORMS}
            for k in range(draws):
                gold, verdicts = maker(rng)
                truth = float(gold.mean())
                observed = np.full(big_n, -1)
                pick = rng.choice(big_n, r, replace=False)
                observed[pick] = gold[pick]
                d, moved = prepare(verdicts, observed, predictor)
                for name, form in FORMS.items():
                    low, high = form(d)
                    est = min(high, max(low, moved))
                    per[name].append((abs(est - truth), low <= truth <= high, high - low))
                if k < checks:  # the copy of eq. 6 is the package's
                    s = score(verdicts, observed, 1, confidence_level=LEVEL, target="set").score
                    low, high = eq6(d)
                    assert abs(s.low - low) < 1e-9 and abs(s.high - high) < 1e-9, (stem, s, low, high)
                    assert abs(s.estimate - min(high, max(low, moved))) < 1e-9
            rows[stem] = per
        if rows:
            out[str(r)] = summarise(rows, collection)
    return out


def summarise(rows: dict[str, dict[str, list[tuple[float, bool, float]]]], collection: dict[str, str]) -> dict:
    table = {}
    for name in FORMS:
        per_set = {stem: np.array(rows[stem][name], dtype=float).mean(axis=0) for stem in rows}
        a = np.array(list(per_set.values()))
        worst = min(per_set, key=lambda s: per_set[s][1])
        colls: dict[str, list[float]] = {}
        for stem, v in per_set.items():
            colls.setdefault(collection[stem], []).append(float(v[1]))
        coll_cov = {c: float(np.mean(v)) for c, v in colls.items()}
        table[name] = {
            "error": 100 * float(a[:, 0].mean()), "coverage": 100 * float(a[:, 1].mean()),
            "width": 100 * float(a[:, 2].mean()), "worst": 100 * float(per_set[worst][1]), "worst_set": worst,
            "collections": {c: 100 * v for c, v in coll_cov.items()}, "sets": len(per_set),
        }
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-set", default="all", choices=(*SIMULATIONS, "shared", "all"))
    parser.add_argument("--data", type=Path, default=bench.DEFAULT_DATA)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    which = (*SIMULATIONS, "shared") if args.data_set == "all" else (args.data_set,)
    results = {}
    for name in which:
        start = time.perf_counter()
        res = run(name, args.draws, args.seed, args.data)
        if not res:
            print(f"\n{name}: no data (no folder at {args.data})")
            continue
        results[name] = res
        print(f"\n## {name}: {args.draws} draws per system, 90% intervals ({time.perf_counter() - start:.0f} s)")
        print("| form | r | error | coverage (worst system) | width | worst collection |\n|---|---|---|---|---|---|")
        for r, table in res.items():
            for form, v in table.items():
                coll = min(v["collections"].items(), key=lambda kv: kv[1])
                print(f"| {form} | {r} | {v['error']:.2f} | {v['coverage']:.1f}% ({v['worst']:.1f}%, {v['worst_set']}) "
                      f"| {v['width']:.2f} | {coll[0]} {coll[1]:.1f}% |")
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
