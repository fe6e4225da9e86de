"""`score`'s interval forms side by side on ONE prediction per draw (issue 26 item 1, docs/SCORE.md "Round 4").

benchmarks/score.py --alternatives refits the judges' models once per variant and per draw; here every draw fits
them once (once per dataset where the data are fixed and only the labeled items change: the latent classes and
Dawid-Skene see the verdicts, never the labels) and every interval form is computed from the same prediction, the
same lambda, the same estimate (eq. 4). "anchored, additive (t)" is a copy of the package's interval (eq. 6, the
anchored form, shipped since round 4) and is checked against `betaconform_cli.score.score` on every dataset's
first draws (to 1e-9), so the copy cannot drift; "eq. 6 before round 4" is the hull the package shipped until then.

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
import score as bench  # noqa: E402  (benchmarks/score.py: the data makers)
from scipy import stats  # noqa: E402

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
    ybar: float  # the labels' own pass rate
    f: np.ndarray  # the prediction on every item
    lam: float
    s2_in: float  # the residuals' variance with the labeled items' prediction from ALL labels (not left out), k = 3

    @property
    def ddof(self) -> int:  # a tuned lambda is a second fitted parameter (the package's rule)
        return 2 if self.lam != 0 else 1


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


def _anchored(d: Draw, s2: float, q: float, anchor: float) -> tuple[float, float]:
    """Every theta0 with (theta - theta0)^2 <= q^2 fpc / n (s2 + theta0 (1 - theta0) - anchor (1 - anchor)): the
    residuals' variance, with the part Var(y) moved from what the sample says to what the hypothesis says."""
    a = d.fpc / d.n
    root = _quadratic(d.theta, q * q, a, -a * (s2 - anchor * (1 - anchor)))
    if root is None:
        return max(0.0, min(1.0, d.theta)), max(0.0, min(1.0, d.theta))
    return max(0.0, root[0]), min(1.0, root[1])


def anchored_theta(d: Draw) -> tuple[float, float]:
    return _anchored(d, d.s2_pseudo, _t(d), d.theta)


def anchored_ybar(d: Draw) -> tuple[float, float]:
    return _anchored(d, d.s2_pseudo, _t(d), d.ybar)


def anchored_theta_z(d: Draw) -> tuple[float, float]:
    return _anchored(d, d.s2_pseudo, Z, d.theta)


def anchored_ybar_plain(d: Draw) -> tuple[float, float]:
    return _anchored(d, d.s2_plain, _t(d), d.ybar)


def wald_in(d: Draw) -> tuple[float, float]:
    half = _t(d) * math.sqrt(d.s2_in * d.fpc / d.n)
    return max(0.0, d.theta - half), min(1.0, d.theta + half)


def anchored_in(d: Draw) -> tuple[float, float]:
    return _anchored(d, d.s2_in, _t(d), d.theta)


SHIFTS = np.linspace(-12.0, 12.0, 1201)


def _logit_shift_curve(d: Draw) -> tuple[np.ndarray, np.ndarray]:
    """theta0(c) = mean_N expit(logit f + c) and the residuals' variance the calibrated model gives there,
    V(c) = mean g (1 - g) + Var_N(g - lam f), g = expit(logit f + c), over a grid of shifts c."""
    lf = np.log(np.clip(d.f, 1e-6, 1 - 1e-6) / np.clip(1 - d.f, 1e-6, 1))
    g = 1 / (1 + np.exp(-(lf[None, :] + SHIFTS[:, None])))
    x = g.mean(axis=1)
    v = (g * (1 - g)).mean(axis=1) + (g - d.lam * d.f[None, :]).var(axis=1)
    return x, v


def _anchored_shift(d: Draw, s2: float, q: float) -> tuple[float, float]:
    """Every theta0 with (theta - theta0)^2 <= q^2 fpc / n (s2 + V(theta0) - V(theta)): the residuals' variance
    moved by what a logit shift of the calibrated prediction to the hypothesis changes in it."""
    x, v = _logit_shift_curve(d)
    at = float(np.interp(d.theta, x, v))
    ok = (d.theta - x) ** 2 <= q * q * d.fpc / d.n * np.maximum(s2 + v - at, 0.0)
    if not ok.any():
        return max(0.0, min(1.0, d.theta)), max(0.0, min(1.0, d.theta))
    low, high = float(x[ok].min()), float(x[ok].max())
    return max(0.0, min(low, d.theta)), min(1.0, max(high, d.theta))


def anchored_shift(d: Draw) -> tuple[float, float]:
    return _anchored_shift(d, d.s2_pseudo, _t(d))


def _anchored_max(d: Draw, s2: float, q: float) -> tuple[float, float]:
    """Every theta0 with (theta - theta0)^2 <= q^2 fpc / n * max(s2 + D, s2 + D rho), D = theta0 (1 - theta0) -
    theta (1 - theta), rho = s2 / (theta (1 - theta)): the larger of the residuals' variance moved additively (an
    additive shift of every item's pass probability) and proportionally to the pass rate's Bernoulli variance;
    the union of the two sets, each a quadratic (Wilson's interval when lambda = 0: s2 = theta (1 - theta))."""
    low, high = _anchored(d, s2, q, d.theta)
    var_y = d.theta * (1 - d.theta)
    if var_y > 0:
        root = _quadratic(d.theta, q * q, d.fpc / d.n * min(1.0, s2 / var_y), 0.0)
        if root is not None:
            low, high = min(low, max(0.0, root[0])), max(high, min(1.0, root[1]))
    return low, high


def anchored_max(d: Draw) -> tuple[float, float]:
    return _anchored_max(d, d.s2_pseudo, _t(d))


def anchored_max_z(d: Draw) -> tuple[float, float]:
    return _anchored_max(d, d.s2_pseudo, Z)


def _kappa(d: Draw) -> float:
    """How the residuals' variance moves with the pass rate, to first order, when the extra passes fall where the
    calibrated prediction is uncertain (a logit shift): the f(1 - f)-weighted mean of 1 - 2f over all items;
    1 - 2 theta (Wilson's) where the prediction is not used (lambda = 0) or certain everywhere."""
    g = d.f * (1 - d.f)
    if d.lam == 0 or g.sum() <= 1e-12:
        return 1 - 2 * d.theta
    return float(g @ (1 - 2 * d.f) / g.sum())


def _anchored_kappa(d: Draw, s2: float, q: float) -> tuple[float, float]:
    """Every theta0 = theta + u with u^2 <= q^2 fpc / n (s2 + kappa u - u^2)."""
    a = q * q * d.fpc / d.n
    k = _kappa(d)
    disc = (a * k) ** 2 + 4 * (1 + a) * a * s2
    root = math.sqrt(max(disc, 0.0))
    lo, hi = (a * k - root) / (2 * (1 + a)), (a * k + root) / (2 * (1 + a))
    return max(0.0, d.theta + lo), min(1.0, d.theta + hi)


def anchored_two(d: Draw) -> tuple[float, float]:
    """The union of the additive and the first-order sets: at each theta0 the larger of the two shift models'
    variances (the additive one where extra fails may hide among confident passes, toward 1/2; the logit shift's
    first order toward 0 or 1, where extra passes can only fall where the prediction is uncertain)."""
    a, b = _anchored(d, d.s2_pseudo, _t(d), d.theta), _anchored_kappa(d, d.s2_pseudo, _t(d))
    return min(a[0], b[0]), max(a[1], b[1])


def anchored_two_z(d: Draw) -> tuple[float, float]:
    a, b = _anchored(d, d.s2_pseudo, Z, d.theta), _anchored_kappa(d, d.s2_pseudo, Z)
    return min(a[0], b[0]), max(a[1], b[1])


def _room(d: Draw, s2: float, q: float) -> tuple[float, float]:
    """The residuals' variance moved by a shift that puts extra passes where there is room to pass and extra fails
    where there is room to fail: p_i -> p_i + c (1 - p_i) above theta, p_i (1 - c) below (p_i read as the calibrated
    prediction f_i). To first order in delta = theta0 - theta, V = s2 + kappa_+- delta - delta^2 with
        kappa_+ = 1 - 2 (theta - lam mean f) - 2 lam mean f (1 - f) / (1 - theta)     (delta > 0)
        kappa_- = 1 - 2 (theta - lam mean f) - 2 lam mean f^2 / theta                 (delta < 0)
    (with lam = 0 both are 1 - 2 theta: Wilson's)."""
    a = q * q * d.fpc / d.n
    fbar = float(d.f.mean())
    base = 1 - 2 * (d.theta - d.lam * fbar)
    theta = min(max(d.theta, 1e-9), 1 - 1e-9)
    up = base - 2 * d.lam * float((d.f * (1 - d.f)).mean()) / (1 - theta)
    down = base - 2 * d.lam * float((d.f * d.f).mean()) / theta

    def side(k: float, sign: float) -> float:  # u^2 (1 + a) - a k u - a s2 = 0: the root on this side
        root = math.sqrt(max((a * k) ** 2 + 4 * (1 + a) * a * s2, 0.0))
        return (a * k + sign * root) / (2 * (1 + a))

    return max(0.0, d.theta + side(down, -1.0)), min(1.0, d.theta + side(up, 1.0))


def anchored_room(d: Draw) -> tuple[float, float]:
    return _room(d, d.s2_pseudo, _t(d))


def anchored_kappa(d: Draw) -> tuple[float, float]:
    return _anchored_kappa(d, d.s2_pseudo, _t(d))


def anchored_kappa_z(d: Draw) -> tuple[float, float]:
    return _anchored_kappa(d, d.s2_pseudo, Z)


FORMS: dict[str, Callable[[Draw], tuple[float, float]]] = {
    "eq. 6 before round 4 (hull)": eq6,
    "Wald (today's: before issue 26)": wald,
    "model alone unless ruled out (t; round 3's candidate)": model_unless,
    "model alone unless ruled out (z)": model_unless_z,
    "eq. 6, k = 0": eq6_plain,
    "eq. 6, k = 0, model at z": eq6_plain_z,
    "model's set alone (t)": model_alone,
    "anchored, additive (t)": anchored_theta,  # the shipped eq. 6
    "anchored, additive (z)": anchored_theta_z,
    "anchored at ybar (t)": anchored_ybar,
    "anchored at ybar, k = 0 (t)": anchored_ybar_plain,
    "anchored, additive toward 1/2, proportional toward 0 or 1 (t)": anchored_max,
    "anchored, additive toward 1/2, proportional toward 0 or 1 (z)": anchored_max_z,
    "anchored, first order (t)": anchored_kappa,
    "anchored, first order (z)": anchored_kappa_z,
    "anchored, logit shift (t)": anchored_shift,
    "anchored, the larger of additive and first order (t)": anchored_two,
    "anchored, the larger of additive and first order (z)": anchored_two_z,
    "anchored, room to pass or fail (t)": anchored_room,
    "Wald, in-sample residuals (d = 2 + classes)": wald_in,
    "anchored, additive, in-sample residuals (t)": anchored_in,
}
SLOW = ("anchored, logit shift (t)",)  # a 1201-point grid per draw: run only when --only names it


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
    m = resp.T @ post / np.maximum(resp.sum(axis=0), 1e-300)
    rates = (resp[labeled].T @ y[labeled] + 2.0 * m) / (resp[labeled].sum(axis=0) + 2.0)
    e_in = y[labeled] - lam * (resp[labeled] @ rates)
    s2_in = (float(((e_in - e_in.mean()) ** 2).sum()) + 3.0 * v0) / (n - ddof - resp.shape[1] + 3.0)
    d = Draw(theta, n, big_n, fpc, s2_pseudo, ss / (n - ddof), explained, float(y[labeled].mean()), f, lam, s2_in)
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
                if k < checks:  # the copy of the shipped form is the package's
                    s = score(verdicts, observed, 1, confidence_level=LEVEL, target="set").score
                    low, high = anchored_theta(d)
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
    parser.add_argument("--only", nargs="+", default=None, help="only the forms whose names contain one of these")
    args = parser.parse_args()
    names = [k for k in FORMS if (any(p in k for p in args.only) if args.only else k not in SLOW)]
    for k in list(FORMS):
        if k not in names:
            del FORMS[k]
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
