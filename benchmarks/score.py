"""`score` benchmark: the numbers behind docs/SCORE.md.

Real data (../shared/data, or --data DIR; every *.jsonl below it). The shared data holds only correctness
(1 = the judge agreed with the gold label), so each draw builds a binary system to score: every item's gold is
"pass" with probability p (p uniform in [0.5, 0.9] per draw: a realistic pass rate; for pairwise data "A is
better" drawn at random is p = 0.5), and judge j's verdict is the gold when it was correct, the other side when
not (no verdict stays none). Truth = the pass rate of all N items of the draw. r = 20 and 50 items are labeled
(without replacement); a dataset with fewer than 2r items is skipped at that r (at most half the items labeled).
Per draw and method: |estimate - truth|, whether the 90% interval covers the truth, and its width. Means over
draws, then over datasets (each dataset weighs the same).

Methods, side by side in this script:
- ours: betaconform_cli.score.score (a latent-class prediction from all judges, its classes' pass rates from the
  labels, leave-one-out, in PPI++ with the finite-population variance; the estimate moved toward the judges'
  majority by at most half a standard error);
- truescore 0.7.4 `ppi_estimate` (PPI++) with the judges' majority (ties half) as its judge: the peer of the issue
  (needs `pip install truescore` in the venv; not a dependency of the project; the column is left out without it);
- labels only: Wilson's interval on the r labels (no finite-population correction, as the peers);
- the judges' majority alone: its error (it has no interval).

    .venv/bin/python benchmarks/score.py                  # main table (+ per dataset with --per-dataset)
    .venv/bin/python benchmarks/score.py --alternatives   # the variants docs/SCORE.md compares
    .venv/bin/python benchmarks/score.py --simulate issue18   # issue 18's scenario (see issue18_datasets)
    .venv/bin/python benchmarks/score.py --simulate graded    # continuous item difficulty (no latent classes)
    .venv/bin/python benchmarks/score.py --draws 100 --seed 7

Exits 0 with a message when the data folder is absent.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from betaconform_cli.score import fit_dawid_skene, majority, score, wilson_fpc  # noqa: E402
from betaconform_cli.score.latent_classes import cross_fitted_prediction, fit_latent_classes  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
RS = (20, 50, 100)
LEVEL = 0.9
PASS_RATE = (0.5, 0.9)

try:  # the peer, only where it is installed
    from truescore.correct import ppi_estimate as _truescore_ppi
except ImportError:  # pragma: no cover - depends on the venv
    _truescore_ppi = None


def load_correct(path: Path) -> np.ndarray:
    """correct[i, j] (1 / 0 / NaN for no verdict) from {"judgments": [...]} lines (a list, or keyed by judge)."""
    rows: list[list[float]] = []
    keys: list[str] | None = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            j = json.loads(line)["judgments"]
            if isinstance(j, dict):
                keys = keys or list(j)
                j = [j.get(k) for k in keys]
            rows.append([float("nan") if x is None else float(x) for x in j])
    width = max(len(r) for r in rows)
    return np.array([r + [float("nan")] * (width - len(r)) for r in rows])


def make_system(correct: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """gold (0/1) per item and verdicts (0/1/-1) per item and judge, from a correctness matrix."""
    p = rng.uniform(*PASS_RATE)
    gold = (rng.random(correct.shape[0]) < p).astype(int)
    verdicts = np.where(correct == 1, gold[:, None], 1 - gold[:, None])
    verdicts = np.where(np.isnan(correct), -1, verdicts).astype(int)
    return gold, verdicts


# --- methods: each (verdicts, gold with -1 for unlabeled) -> (estimate, low, high) ------------------------------


def ours(verdicts: np.ndarray, observed: np.ndarray) -> tuple[float, float, float]:
    s = score(verdicts, observed, 1, confidence_level=LEVEL, target="set").score
    return s.estimate, s.low, s.high


def truescore_majority(verdicts: np.ndarray, observed: np.ndarray) -> tuple[float, float, float]:
    assert _truescore_ppi is not None
    labeled = np.flatnonzero(observed >= 0)
    est = _truescore_ppi(majority(np.where(verdicts >= 0, verdicts, -1)), observed[labeled], labeled, alpha=1 - LEVEL)
    return float(est.point), float(est.low), float(est.high)


def wilson(verdicts: np.ndarray, observed: np.ndarray) -> tuple[float, float, float]:
    y = observed[observed >= 0]
    w = wilson_fpc(int(y.sum()), len(y), LEVEL)
    return w.estimate, w.low, w.high


def majority_alone(verdicts: np.ndarray, observed: np.ndarray) -> tuple[float, float, float]:
    m = float(majority(verdicts).mean())
    return m, float("nan"), float("nan")


def _ppi(
    y: np.ndarray,
    f_lab: np.ndarray,
    f_all: np.ndarray,
    *,
    lam_range: tuple[float, float] = (-1.0, 1.0),
    fixed_lam: float | None = None,
    fpc: bool = True,
    quantile: str = "t",
    ddof: int = 2,
    pseudo: float = 3.0,
    toward: float | None = None,
    rule: str = "lt",
    limit: float = 0.5,
    interval: str = "anchored",
) -> tuple[float, float, float]:
    """PPI++ from labeled gold y, the prediction on the labeled items and on all items, the estimate moved toward
    `toward` (None: not moved) by `rule` (the keywords' defaults are ours: lambda tuned in [-1, 1], finite-population
    correction, t quantile, 2 fitted parameters, 3 pseudo-items, limited translation by half a standard error; the
    interval the anchored form, eq. 6 as shipped since round 4). `interval`: "anchored" (ours: every theta0 with
    (theta - theta0)^2 <= q^2 (var + fpc / n (theta0 (1 - theta0) - theta (1 - theta)))), "score" (eq. 6 before
    round 4: the hull of the Wald interval and the calibrated model's variance), "wald" (theta +- t sd: the
    estimator before issue 26), "score-cov" (the score form with Cov(y, f) from the labels instead of Var(f))."""
    n, big_n = len(y), len(f_all)
    if fixed_lam is not None:
        lam = fixed_lam
    else:
        var_f = float(np.var(f_lab, ddof=1))
        lam = 0.0 if var_f < 1e-12 else float(np.clip(np.cov(y, f_lab)[0, 1] / var_f, *lam_range))
    e = y - lam * f_lab
    theta = lam * float(f_all.mean()) + float(e.mean())
    p0 = (y.sum() + 1) / (n + 2)
    s2 = (float(((e - e.mean()) ** 2).sum()) + pseudo * p0 * (1 - p0)) / (n - ddof + pseudo)
    factor = (1 - n / big_n) if fpc else 1.0
    var = s2 / n * factor
    q = stats.t.ppf(0.5 + LEVEL / 2, n - ddof) if quantile == "t" else stats.norm.ppf(0.5 + LEVEL / 2)
    half = float(q) * math.sqrt(var)
    low, high = max(0.0, theta - half), min(1.0, theta + half)
    if interval == "anchored":  # eq. 6 by brute force on a grid (the package solves the quadratic)
        grid = np.linspace(0.0, 1.0, 20001)
        moving = var + factor / n * (grid * (1 - grid) - theta * (1 - theta))
        inside = grid[(theta - grid) ** 2 <= float(q) ** 2 * moving]
        low, high = (float(inside[0]), float(inside[-1])) if inside.size else (low, high)
    elif interval != "wald":  # eq. 6 before round 4 by brute force on a grid
        var_f = float(np.var(f_all))
        cov = var_f if interval in ("score", "score-tested", "score-model") else float(np.cov(y, f_lab)[0, 1])
        if interval == "score-cov-bound":  # Cov(y, f) above Var(f) only as far as the labels rule Var(f) out
            prod = (y - y.mean()) * (f_lab - f_lab.mean())
            low_cov = cov - float(stats.norm.ppf(LEVEL)) * float(prod.std(ddof=1)) / math.sqrt(n)
            cov = max(var_f, low_cov)
        grid = np.linspace(0.0, 1.0, 20001)
        model = (grid * (1 - grid) + lam * lam * var_f - 2 * lam * cov) * factor / n
        if interval == "score-tested":  # the model's level only as far as the labels cannot rule it out
            raw = float(((e - e.mean()) ** 2).sum()) / max(n - ddof, 1)  # the residuals' own variance
            upper = (n - ddof) * raw / float(stats.chi2.ppf(1 - LEVEL, n - ddof)) * factor / n  # the most they allow
            at_theta = (theta * (1 - theta) + lam * lam * var_f - 2 * lam * cov) * factor / n
            model = model - max(0.0, at_theta - upper)
        model_only = False
        if interval == "score-model":  # the model's variance alone unless the labels show more (chi-square)
            at_theta = (theta * (1 - theta) + lam * lam * var_f - 2 * lam * cov) * factor / n
            least = (n - ddof) * s2 / float(stats.chi2.ppf(LEVEL, n - ddof)) * factor / n  # the least they allow
            model_only = least <= at_theta
        inside = grid[np.abs(theta - grid) <= float(q) * np.sqrt(model if model_only else np.maximum(model, var))]
        if inside.size and model_only:
            low, high = float(inside[0]), float(inside[-1])
        elif inside.size:
            low, high = min(low, float(inside[0])), max(high, float(inside[-1]))
    estimate = theta if toward is None or lam == 0 else _moved(theta, math.sqrt(var), toward, rule, limit)
    return min(high, max(low, estimate)), low, high


def _moved(theta: float, sd: float, judges: float, rule: str, limit: float) -> float:
    """theta moved toward `judges`: "eb" empirical Bayes (prior N(0, tau^2) on the bias: by min(|D|, sd^2/|D|)),
    "lt" the same limited to `limit` sd (ours, eq. 4), "soft" soft thresholding (by min(|D|, limit sd)), "pretest"
    all the way when |D| < limit sd, else not at all."""
    d = judges - theta
    if d == 0 or sd <= 0:
        return theta
    move = {
        "eb": min(abs(d), sd * sd / abs(d)),
        "lt": min(abs(d), sd * sd / abs(d), limit * sd),
        "soft": min(abs(d), limit * sd),
        "pretest": abs(d) if abs(d) < limit * sd else 0.0,
    }[rule]
    return theta + math.copysign(move, d)


def _prediction(verdicts: np.ndarray, kind: str, observed: np.ndarray) -> np.ndarray:
    if kind.startswith("lca"):  # ours: latent classes (lca3: 3) with pass rates from the labels, leave-one-out
        labeled = observed >= 0
        y = np.where(labeled, observed, 0).astype(float)
        r = fit_latent_classes(verdicts, classes=int(kind[3:])).responsibilities
        return cross_fitted_prediction(r, fit_dawid_skene(verdicts).posterior, y, labeled, np.ones(len(y)))
    if kind == "ds":
        return fit_dawid_skene(verdicts).posterior
    if kind == "majority":
        return majority(verdicts)
    seen = (verdicts >= 0).sum(axis=1)  # the share of judges saying pass
    return np.where(seen > 0, (verdicts == 1).sum(axis=1) / np.maximum(seen, 1), 0.5)


def _variant(
    prediction: str = "lca3", toward: str | None = "majority", **options: Any
) -> Callable[..., tuple[float, float, float]]:
    """Ours with one step changed (--alternatives): the prediction (lca3 ours / lcaC / ds / majority / share), what
    the estimate is
    moved toward (majority: the judges' majority's pass rate, ours; ds: the Dawid-Skene model's; None: not moved),
    or a _ppi option."""

    def method(verdicts: np.ndarray, observed: np.ndarray) -> tuple[float, float, float]:
        labeled = observed >= 0
        f = _prediction(verdicts, prediction, observed)
        return _ppi(observed[labeled].astype(float), f[labeled], f, toward=_toward(verdicts, toward), **options)

    return method


def _toward(verdicts: np.ndarray, toward: str | None) -> float | None:
    if toward is None:
        return None
    return float(majority(verdicts).mean() if toward == "majority" else fit_dawid_skene(verdicts).posterior.mean())


def _cross_fitted(predict: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], folds: int = 5):
    """A prediction that uses labels: predict(verdicts, train positions, their gold) -> prediction on all items;
    each labeled item's from a fit on the other folds, the others' the mean over the folds' fits; then ours."""

    def method(verdicts: np.ndarray, observed: np.ndarray) -> tuple[float, float, float]:
        labeled = np.flatnonzero(observed >= 0)
        y = observed[labeled].astype(float)
        order = np.arange(len(labeled)) % folds
        f_lab = np.empty(len(labeled))
        f_all = np.zeros(len(observed))
        for k in range(folds):
            train = order != k
            f = predict(verdicts, labeled[train], y[train])
            f_lab[~train] = f[labeled[~train]]
            f_all += f / folds
        f_all[labeled] = f_lab
        return _ppi(y, f_lab, f_all, toward=_toward(verdicts, "majority"))

    return method


def _calibrated_ds(verdicts: np.ndarray, train: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A logistic regression of gold on the Dawid-Skene log-odds (ridge toward slope 1, intercept 0)."""
    post = np.clip(fit_dawid_skene(verdicts).posterior, 1e-4, 1 - 1e-4)
    x = np.log(post / (1 - post))
    a, b = _logistic(x[train], y)
    return 1 / (1 + np.exp(-np.clip(a + b * x, -30, 30)))


def _logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1.0) -> tuple[float, float]:
    """Ridge-penalised (slope toward 1, intercept toward 0) logistic fit by Newton's method."""
    w = np.array([0.0, 1.0])
    design = np.column_stack([np.ones_like(x), x])
    prior = np.array([0.0, 1.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(design @ w, -30, 30)))
        grad = design.T @ (y - p) - ridge * (w - prior)
        hess = design.T @ (design * (p * (1 - p))[:, None]) + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w = w + step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), float(w[1])


MAIN = {
    "ours": ours,
    "truescore PPI++ (majority)": truescore_majority,
    "labels only (Wilson)": wilson,
    "judges' majority alone": majority_alone,
}


Maker = Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]  # rng -> (gold, verdicts) of one draw


def _from_correct(correct: np.ndarray) -> Maker:
    return lambda rng: make_system(correct, rng)


def _fixed(gold: np.ndarray, verdicts: np.ndarray) -> Maker:
    return lambda rng: (gold, verdicts)


def real_datasets(data: Path) -> list[tuple[str, Maker]]:
    return [(p.stem, _from_correct(load_correct(p))) for p in sorted(data.rglob("*.jsonl"))]


def simulated_datasets(seed: int) -> list[tuple[str, Maker]]:
    """--simulate: 9 sets of 400 items x 11 judges, each judge right with its own probability (uniform in
    [0.55, 0.9]) independently given the item, except on a share of hard items (10-30%) where every judge is right
    with probability 0.4: errors that coincide, as real judges' do."""
    rng = np.random.default_rng([seed, 400])
    out = []
    for k in range(9):
        accuracy = rng.uniform(0.55, 0.9, 11)
        hard = rng.random(400) < rng.uniform(0.1, 0.3)
        p = np.where(hard[:, None], 0.4, accuracy[None, :])
        out.append((f"simulated_{k}", _from_correct((rng.random((400, 11)) < p).astype(float))))
    return out


# issue 18's scenario: 11 judges' (sensitivity, specificity) on ordinary items, and how often each is right on hard
# items (plausible-looking wrong answers and unusual right ones): 3 strong (GPT-4-class), 4 medium, 4 weak and lenient
JUDGE_SENSITIVITY = (0.98, 0.97, 0.96, 0.93, 0.92, 0.90, 0.90, 0.95, 0.95, 0.97, 0.97)
JUDGE_SPECIFICITY = (0.97, 0.95, 0.94, 0.85, 0.80, 0.80, 0.75, 0.55, 0.50, 0.45, 0.40)
JUDGE_HARD = (0.90, 0.90, 0.85, 0.50, 0.50, 0.45, 0.45, 0.20, 0.20, 0.15, 0.15)
HARD_SHARE = 0.10


def issue18_datasets(seed: int) -> list[tuple[str, Maker]]:
    """--simulate issue18: 9 systems x 400 answers x 11 judges, pass rates 0.3, 0.375, ..., 0.9; every judge right
    with its own sensitivity / specificity independently on ordinary items, and with its own (lower) rate on the 10%
    hard items, which all judges share (the weak ones mostly wrong there, the strong mostly right). Fixed data, as
    the issue's: draws differ only in which items are labeled. Calibrated to the numbers issue 18 reports for the
    PEER on its (unseen) data, not to ours: truescore PPI++ with the majority 4.6 points / 88% / width 19.6 at
    r = 20 and 2.7 / 89% / 12.2 at r = 50, the majority alone 2.3 points off, Wilson 30.0 / 19.6 wide."""
    rng = np.random.default_rng([seed, 18])
    sens, spec, hard_right = (np.asarray(x) for x in (JUDGE_SENSITIVITY, JUDGE_SPECIFICITY, JUDGE_HARD))
    out = []
    for k, p in enumerate(np.linspace(0.3, 0.9, 9)):
        gold = (rng.random(400) < p).astype(int)
        hard = rng.random(400) < HARD_SHARE
        right = np.where(hard[:, None], hard_right, np.where(gold[:, None] == 1, sens, spec))
        verdicts = np.where(rng.random((400, len(sens))) < right, gold[:, None], 1 - gold[:, None])
        out.append((f"issue18_system_{k}", _fixed(gold, verdicts)))
    return out


def graded_datasets(seed: int) -> list[tuple[str, Maker]]:
    """--simulate graded: a check that the latent classes do not merely fit the issue-18 generator's two kinds of
    item: 9 systems x 400 answers x 11 judges, pass rates 0.3..0.9, each item a continuous difficulty d ~ N(0, 1)
    that all judges share; judge j right with probability logistic(a_j - 1.2 d +- l_j) (+ on passes, - on fails:
    l_j its leniency), a_j from 3.5 (strong, strict) down to 0.4 (weak, lenient). Not calibrated to anything."""
    rng = np.random.default_rng([seed, 77])
    ability = np.array([3.5, 3.2, 3.0, 2.0, 1.8, 1.6, 1.5, 0.8, 0.6, 0.5, 0.4])
    lenience = np.array([0.0, 0.0, 0.0, 0.3, 0.3, 0.4, 0.4, 1.0, 1.0, 1.2, 1.2])
    out = []
    for k, p in enumerate(np.linspace(0.3, 0.9, 9)):
        gold = (rng.random(400) < p).astype(int)
        d = rng.standard_normal(400)
        logit = ability - 1.2 * d[:, None] + np.where(gold[:, None] == 1, 1.0, -1.0) * lenience
        right = rng.random((400, len(ability))) < 1 / (1 + np.exp(-logit))
        out.append((f"graded_system_{k}", _fixed(gold, np.where(right, gold[:, None], 1 - gold[:, None]))))
    return out


def ceiling_datasets(seed: int) -> list[tuple[str, Maker]]:
    """--simulate ceiling: systems near the ceiling, where a judge's mistake is rare and shared. 9 systems x 400
    answers x 11 judges, pass rates 0.85, 0.866, ..., 0.98; judge j passes a passing answer with probability
    sens_j ~ U(0.97, 0.995) and a failing one with 1 - spec_j, spec_j ~ U(0.85, 0.97), independently, except that
    30% of the failing answers are convincing: judge j passes them with probability fooled_j ~ U(0.7, 0.95). The
    ranges were written down before any run, from what strong LLM judges of short answers are reported to do in
    general; nothing was fitted to a number. Fixed data: draws differ only in which items are labeled."""
    rng = np.random.default_rng([seed, 123])
    out = []
    for k, p in enumerate(np.linspace(0.85, 0.98, 9)):
        sens, spec, fooled = rng.uniform(0.97, 0.995, 11), rng.uniform(0.85, 0.97, 11), rng.uniform(0.7, 0.95, 11)
        gold = (rng.random(400) < p).astype(int)
        convincing = (gold == 0) & (rng.random(400) < 0.3)
        says_pass = np.where(convincing[:, None], fooled, np.where(gold[:, None] == 1, sens, 1 - spec))
        out.append((f"ceiling_system_{k}", _fixed(gold, (rng.random((400, 11)) < says_pass).astype(int))))
    return out


def convincing_datasets(seed: int) -> list[tuple[str, Maker]]:
    """--simulate convincing: 9 systems x 400 answers x 11 distinct judges, pass rates 0.3..0.9; judge j's
    sensitivity ~ U(0.85, 0.98) and specificity ~ U(0.6, 0.95) on ordinary answers, drawn per system; a share of
    the failing answers (8% of all answers / 2, spread over the fails) are convincing (judge j passes them with
    probability ~ U(0.6, 0.95)) and 4% of the passing ones unconventional (judge j fails them with probability
    ~ U(0.4, 0.8)). Stated before any run, not fitted to any number. Fixed data."""
    rng = np.random.default_rng([seed, 99])
    out = []
    for k, p in enumerate(np.linspace(0.3, 0.9, 9)):
        sens, spec = rng.uniform(0.85, 0.98, 11), rng.uniform(0.6, 0.95, 11)
        fooled, harsh = rng.uniform(0.6, 0.95, 11), rng.uniform(0.4, 0.8, 11)
        gold = (rng.random(400) < p).astype(int)
        convincing = (gold == 0) & (rng.random(400) < 0.04 / (1 - p))
        unconventional = (gold == 1) & (rng.random(400) < 0.04)
        says_pass = np.where(gold[:, None] == 1, sens, 1 - spec)
        says_pass = np.where(convincing[:, None], fooled, np.where(unconventional[:, None], 1 - harsh, says_pass))
        out.append((f"convincing_system_{k}", _fixed(gold, (rng.random((400, 11)) < says_pass).astype(int))))
    return out


def run(
    datasets: list[tuple[str, Maker]],
    draws: int,
    seed: int,
    methods: dict[str, Callable[..., tuple[float, float, float]]],
    per_dataset: bool,
) -> None:
    if _truescore_ppi is None:
        methods = {k: v for k, v in methods.items() if not k.startswith("truescore")}
        print("truescore is not installed: its column is left out (pip install truescore into the venv)")
    for r in RS:
        table: dict[str, list[tuple[float, float, float]]] = {m: [] for m in methods}
        used = []
        for stem, maker in datasets:
            big_n = len(maker(np.random.default_rng(0))[0])
            if big_n < 2 * r:
                continue
            used.append(stem)
            rng = np.random.default_rng([seed, r, zlib.crc32(stem.encode())])
            rows: dict[str, list[tuple[float, bool, float]]] = {m: [] for m in methods}
            for _ in range(draws):
                gold, verdicts = maker(rng)
                truth = float(gold.mean())
                observed = np.full(big_n, -1)
                pick = rng.choice(big_n, r, replace=False)
                observed[pick] = gold[pick]
                for name, method in methods.items():
                    est, low, high = method(verdicts, observed)
                    rows[name].append((abs(est - truth), low <= truth <= high, high - low))
            for name in methods:
                a = np.array(rows[name], dtype=float)
                table[name].append((a[:, 0].mean(), a[:, 1].mean(), a[:, 2].mean()))
                if per_dataset:
                    print(
                        f"  r={r} {stem:32s} {name:34s} |err| {100 * a[:, 0].mean():5.2f}  "
                        f"cover {100 * a[:, 1].mean():5.1f}%  width {100 * a[:, 2].mean():5.1f}"
                    )
        if not used:
            print(f"\nr = {r}: no dataset has {2 * r} items")
            continue
        print(f"\nr = {r}: {len(used)} datasets with at least {2 * r} items, {draws} draws each, 90% intervals")
        print("| method | mean abs error (points) | coverage | mean width (points) |\n|---|---:|---:|---:|")
        for name in methods:
            a = np.array(table[name])
            cover = "n/a" if np.isnan(a[:, 2]).all() else f"{100 * a[:, 1].mean():.1f}%"
            width = "n/a" if np.isnan(a[:, 2]).all() else f"{100 * a[:, 2].mean():.2f}"
            print(f"| {name} | {100 * a[:, 0].mean():.2f} | {cover} | {width} |")
        for name in methods:
            a = np.array(table[name])
            if not np.isnan(a[:, 2]).all():
                print(f"worst dataset coverage, {name}: {100 * a[:, 1].min():.1f}% ({used[int(a[:, 1].argmin())]})")
        if "truescore PPI++ (majority)" in table and "ours" in table:
            ours_a, peer = np.array(table["ours"]), np.array(table["truescore PPI++ (majority)"])
            print(
                f"ours / peer: |error| {ours_a[:, 0].mean() / peer[:, 0].mean():.2f}x, "
                f"width {ours_a[:, 2].mean() / peer[:, 2].mean():.2f}x; worst dataset coverage "
                f"{100 * ours_a[:, 1].min():.1f}% ({used[int(ours_a[:, 1].argmin())]})"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--alternatives", action="store_true")
    parser.add_argument("--per-dataset", action="store_true")
    parser.add_argument("--only", nargs="+", default=None, help="only the methods whose names contain one of these")
    parser.add_argument(
        "--simulate",
        nargs="?",
        const="mixed",
        choices=("mixed", "issue18", "graded", "ceiling", "convincing"),
        help="simulated judges instead of the shared data: mixed (independent judges, shared hard items), issue18, "
        "graded, ceiling or convincing",
    )
    args = parser.parse_args()
    if args.simulate:
        simulate = {"mixed": simulated_datasets, "issue18": issue18_datasets, "graded": graded_datasets,
                    "ceiling": ceiling_datasets, "convincing": convincing_datasets}
        datasets = simulate[args.simulate](args.seed)
    elif not args.data.is_dir():
        print(f"no data folder at {args.data}: nothing to benchmark (pass --data DIR, or --simulate)")
        return 0
    else:
        datasets = real_datasets(args.data)
    start = time.perf_counter()
    methods = ALTERNATIVES if args.alternatives else MAIN
    if args.only:
        methods = {k: v for k, v in methods.items() if any(part in k for part in args.only)}
    run(datasets, args.draws, args.seed, methods, args.per_dataset)
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


def _latent_classes(verdicts: np.ndarray, classes: int, iters: int = 200) -> np.ndarray:
    """r[i, c]: responsibilities of a C-class latent-class model of the pass/not-pass verdicts (EM, Beta(1,1)
    smoothing, started from vote-share quantiles)."""
    pos = (verdicts == 1).astype(float)
    neg = (verdicts == 0).astype(float)
    seen = np.maximum((verdicts >= 0).sum(axis=1), 1)
    share = pos.sum(axis=1) / seen
    ranks = np.argsort(np.argsort(share + 1e-9 * np.arange(len(share))))
    r = np.eye(classes)[np.minimum(ranks * classes // len(share), classes - 1)]
    for _ in range(iters):
        w = (r.sum(axis=0) + 1) / (len(r) + classes)
        p = (r.T @ pos + 1) / (r.T @ (pos + neg) + 2)
        log = np.log(w) + pos @ np.log(p).T + neg @ np.log1p(-p).T
        log -= log.max(axis=1, keepdims=True)
        r = np.exp(log)
        r /= r.sum(axis=1, keepdims=True)
    return r


def _lca_with_labels(classes: int, alpha: float) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Latent classes of the verdicts (unsupervised), each class's pass rate from the training labels
    (responsibility-weighted, shrunk by `alpha` pseudo-items toward the Dawid-Skene posterior's class mean)."""

    def predict(verdicts: np.ndarray, train: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = _latent_classes(verdicts, classes)
        prior = r.T @ fit_dawid_skene(verdicts).posterior / np.maximum(r.sum(axis=0), 1e-12)
        pi = (r[train].T @ y + alpha * prior) / (r[train].sum(axis=0) + alpha)
        return r @ pi

    return predict


ALTERNATIVES = {
    "ours (3 latent classes, leave-one-out; lambda in [-1, 1], fpc, t, d = 2, k = 3; moved <= 0.5 sd; anchored form)": ours,
    "interval: theta +- t sd (the Wald form, before issue 26)": _variant(interval="wald"),
    "interval: score form with Cov(y, f) from the labels": _variant(interval="score-cov"),
    "interval: the anchored form (this benchmark's copy of ours)": _variant(interval="anchored"),
    "interval: score form, eq. 6 before round 4 (the hull with the calibrated model's variance)": _variant(interval="score"),
    "interval: score form, Cov(y, f) = max(Var(f), the labels' one-sided lower bound at the level)":
        _variant(interval="score-cov-bound"),
    "interval: the model's variance at theta0 alone, unless the labels' residuals rule it out as too small (chi-square at the level)":
        _variant(interval="score-model"),
    "interval: score form, the model's level lowered to what the labels allow (chi-square at the level)":
        _variant(interval="score-tested"),
    "not moved (PPI++ alone)": _variant(toward=None),
    "moved: empirical Bayes, no limit": _variant(rule="eb"),
    "moved: limited to 1 sd": _variant(limit=1.0),
    "moved: limited to 0.25 sd": _variant(limit=0.25),
    "moved: soft threshold at 1 sd": _variant(rule="soft", limit=1.0),
    "moved: pretest (to the judges when |D| < 1 sd)": _variant(rule="pretest", limit=1.0),
    "moved toward the Dawid-Skene model's pass rate": _variant(toward="ds"),
    "prediction: Dawid-Skene posterior, not moved (the previous estimator, k = 3)": _variant("ds", toward=None),
    "prediction: Dawid-Skene posterior": _variant("ds"),
    "prediction: the majority": _variant("majority"),
    "prediction: the share of judges saying pass": _variant("share"),
    "prediction: 2 latent classes + labels, leave-one-out": _variant("lca2"),
    "prediction: 4 latent classes + labels, leave-one-out": _variant("lca4"),
    "prediction: 3 latent classes + labels, 5-fold cross-fitted": _cross_fitted(_lca_with_labels(3, 2.0)),
    "prediction: DS calibrated by logistic on the labels, 5-fold cross-fitted": _cross_fitted(_calibrated_ds),
    "lambda in [0, 1]": _variant(lam_range=(0.0, 1.0)),
    "lambda = 1 (PPI)": _variant(fixed_lam=1.0, ddof=1),
    "no finite-population correction": _variant(fpc=False),
    "normal quantile": _variant(quantile="normal"),
    "plain S^2 / n (d = 1, k = 0)": _variant(ddof=1, pseudo=0.0),
    "k = 2 pseudo-items": _variant(pseudo=2.0),
    "k = 4 pseudo-items": _variant(pseudo=4.0),
}


if __name__ == "__main__":
    raise SystemExit(main())
