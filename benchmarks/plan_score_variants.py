"""Rules for `plan`'s score forecast, side by side on the SAME drawn pools (issue 26 item 4, round 5; docs/PLAN.md
"The score's residual variance: stable by construction?"). Used by benchmarks/plan.py --score.

Every rule gives, per draw of the forecast (stopping/forecast.py: the drawn pool's gold, GOLDS, recorded while
plan made its own forecast), the fewest labels whose expected `score` interval (eq. 6, `score.ppi.anchored_bounds`)
is at most the target half-wide; they differ only in the residual variance sigma2 they put in eq. 2:

- "in-sample pool variance (round 4, shipped)": plan's own rule, recomputed here from the recorded golds and
  checked against plan's draws (equal, or the benchmark stops): each draw's Var(y - f) over the whole drawn pool,
  f the latent classes' pass rates at the drawn gold;
- "posterior, k pseudo-labels" (k = 3, 10, 30): a scaled-inverse-chi^2 posterior of sigma2 whose prior scale is
  the score's label-free model's predicted residual variance (mean over items of q (1 - q) + (q - f0)^2, q the
  label-free Dawid-Skene posterior of score.two_class, f0 the latent classes' prediction with no label) with k
  degrees of freedom, updated by the labels' residuals exactly as `score` computes them (cross-fitted f, tuned
  lambda: sum of squares S on n - 2 degrees of freedom); each draw takes its own sigma2 from the posterior. k = 10
  was the rule stated before the run (the labels below which plan says its model alone is not to be trusted);
  3 is score's own pseudo-items, 30 a heavier prior;
- "posterior's median only (10)": the same posterior at its median, no spread;
- "labels' residuals alone": S / (n - 2), what `score` itself would estimate (the prior alone below 3 labels);
- "finite population, label-free model": the population's residual variance as the labels' own part plus the
  label-free model's prediction for the rest, (S + sum_unlabeled m_i) / (N - 2), m_i = q (1 - q) + (q - f0)^2:
  no constant at all, and a round of b labels moves the sum by at most b of its N terms;
- "finite population, drawn pool": the same with each draw's in-sample squared residuals for the unlabeled items
  (round 4's rule with score's cross-fitted residuals for the labeled ones: the brief's leave-one-out reading).

Expected interval at n labels: ((n - 2) sigma2 + 3 p (1 - p)) / (n (n + 1)) with the finite-population correction,
slope fpc / n, t_{n-2} (round 4's own rule keeps its n Var / (n + 1)).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from betaconform_cli.inputs.dataset import Votes
from betaconform_cli.score.ppi import PSEUDO_ITEMS, anchored_bounds

GOLDS: list[np.ndarray] = []  # the last forecast's drawn golds (install() records them)
SHIPPED = "in-sample pool variance (round 4, shipped)"


def install() -> None:
    """Record every forecast's drawn golds (stopping.forecast._gold_draws, wrapped)."""
    import betaconform_cli.stopping.forecast as fc

    gold_draws = fc._gold_draws

    def record(v, rows, gold, draws, rng):  # type: ignore[no-untyped-def]
        GOLDS.clear()
        for g in gold_draws(v, rows, gold, draws, rng):
            GOLDS.append(g)
            yield g

    fc._gold_draws = record


def labels_needed(theta: float, sigma2: float, items: int, target: float, level: float, labeled: int,
                  per_n: bool = False) -> float:
    """The fewest n >= the labels so far whose expected score interval is at most `target` half-wide; `per_n`:
    round 4's sum of squares n sigma2 over n + 1 instead of (n - 2) sigma2."""
    n = np.arange(max(3, labeled), items + 1, dtype=float)
    fpc = np.maximum(1 - n / items, 0.0)
    ss = n * sigma2 if per_n else (n - 2) * sigma2
    residual = (ss + PSEUDO_ITEMS * theta * (1 - theta)) / (n - 2 + PSEUDO_ITEMS)
    low, high = anchored_bounds(theta, fpc * residual / n, fpc / n, stats.t.ppf(0.5 + level / 2, n - 2) ** 2)
    hit = np.flatnonzero((np.minimum(high, 1.0) - np.maximum(low, 0.0)) / 2 <= target)
    return float(n[hit[0]]) if len(hit) else math.inf


class Residuals(NamedTuple):
    """What the rules read: the label-free model's per-pattern predicted squared residual m, the labels' cross-
    fitted sum of squares S and its degrees of freedom, and the latent classes' responsibilities."""

    m: np.ndarray
    sum_squares: float
    dof: float
    responsibilities: np.ndarray


def residuals_of(v, positive: int) -> Residuals:  # type: ignore[no-untyped-def]
    from betaconform_cli.score.latent_classes import cross_fitted_prediction, fit_latent_classes
    from betaconform_cli.score.ppi import residuals, tuned_lambda
    from betaconform_cli.score.two_class import fit_dawid_skene

    binary = np.where(v.patterns < 0, -1, (v.patterns == positive).astype(np.int64))
    w = v.counts.astype(float)
    r = fit_latent_classes(binary, w).responsibilities
    q = fit_dawid_skene(binary, w).posterior
    f0 = cross_fitted_prediction(r, q, np.zeros(len(w)), np.zeros(len(w), dtype=bool), w)
    labeled, y = v.gold >= 0, (v.gold == positive).astype(float)
    f = cross_fitted_prediction(r, q, y, labeled, w)
    lam = tuned_lambda(y[labeled], f[labeled], w[labeled])
    dof = float(w[labeled].sum()) - (2 if lam != 0 else 1)
    ss = float(w @ residuals(y, f, lam, labeled, w) ** 2) if dof >= 1 else 0.0
    return Residuals(q * (1 - q) + (q - f0) ** 2, ss, max(dof, 0.0), r)


def score_variants(votes: Votes, positive: int, level: float, target: float, shipped: np.ndarray,
                   seed: int) -> dict[str, np.ndarray]:
    """Every rule's labels per draw from the recorded golds; `shipped` is plan's own draws (checked equal)."""
    import betaconform_cli.stopping.forecast as fc
    from betaconform_cli.judges.unlabeled import from_votes

    v = from_votes(votes, votes.judges)
    rows, gold = fc._items(v.counts, v.gold)
    labeled, items, w = int((gold >= 0).sum()), len(rows), v.counts.astype(float)
    res = residuals_of(v, positive)
    thetas = [float((g == positive).mean()) for g in GOLDS]
    classes = res.responsibilities[rows]
    pool, ys = [], []
    for g in GOLDS:  # each draw's in-sample residuals, f the classes' pass rates at the drawn gold (as plan)
        ys.append(y := (g == positive).astype(float))
        pool.append(y - classes @ ((classes.T @ y) / np.maximum(classes.sum(axis=0), 1e-12)))
    out = {SHIPPED: np.array([labels_needed(float(y.mean()), float(e.var()), items, target, level, labeled, per_n=True)
                              for y, e in zip(ys, pool, strict=True)])}
    if not np.array_equal(out[SHIPPED], shipped):
        raise SystemExit("the harness's copy of plan's score rule differs from plan's own draws")
    prior = float(w @ res.m / w.sum())
    for k in (10.0, 3.0, 30.0):
        dof = k + res.dof
        scale = (k * prior + res.sum_squares) / dof
        sigma2 = dof * scale / np.random.default_rng([seed, labeled, items]).chisquare(dof, len(thetas))
        out[f"posterior, {k:g} pseudo-labels"] = np.array(
            [labels_needed(t, s, items, target, level, labeled) for t, s in zip(thetas, sigma2, strict=True)])
        if k == 10.0:
            median = dof * scale / float(stats.chi2.ppf(0.5, dof))
            out["posterior's median only (10)"] = np.array(
                [labels_needed(t, median, items, target, level, labeled) for t in thetas])
    alone = res.sum_squares / res.dof if res.dof >= 1 else prior
    out["labels' residuals alone"] = np.array([labels_needed(t, alone, items, target, level, labeled) for t in thetas])
    unl = gold < 0
    free = (res.sum_squares + float(res.m[rows][unl].sum())) / (items - 2)
    out["finite population, label-free model"] = np.array(
        [labels_needed(t, free, items, target, level, labeled) for t in thetas])
    out["finite population, drawn pool"] = np.array(
        [labels_needed(t, (res.sum_squares + float((e[unl] ** 2).sum())) / (items - 2), items, target, level, labeled)
         for t, e in zip(thetas, pool, strict=True)])
    return out
