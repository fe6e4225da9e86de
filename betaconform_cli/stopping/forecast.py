"""`plan`: how many labels a target half-width needs, forecast before labeling (or between rounds), from the
judges' verdicts on every item and the labels so far (docs/PLAN.md).

The model is the judges' class-conditional Dawid-Skene model of every item's verdicts, the gold clamped where a
label exists and the likelihood tempered by the labels (judges.unlabeled.fit_classes: judges who err together
are fewer independent witnesses than their number). Each draw gives every unlabeled item a gold from its
posterior, so a draw is a whole labeled pool, and on it:

- the error at k: `sample`'s own precision rule (stopping.rules.PrecisionRule, the rule of the live loop, at the
  same target, level, minimum and patience) is replayed on that pool: the items labeled so far first, then the
  others in a random order, and the rule stops at the first r from the labels so far on (or not within the
  pool);
- the score: the score's half-width at n labels is the shipped interval's (score.ppi.anchored_interval, round 4's
  eq. 6, solved by the same ppi.anchored_bounds) at the drawn pool's pass rate and at a residual variance drawn
  from its posterior (`residual_posterior`, issue 26 item 4): a scaled-inverse-chi^2 whose prior scale is what the
  score's label-free model predicts for its residuals (y - f, y drawn from the Dawid-Skene posterior, f the
  latent classes' prediction with no label) with RESIDUAL_PRIOR_ITEMS pseudo-labels of weight, updated by the sum
  of squares of the labels' own residuals exactly as `score` computes them (cross-fitted f, tuned lambda, eq. 2);
  n is the fewest labels that bring the expected interval under the target (docs/PLAN.md measures it). A round
  of b new labels moves the posterior's scale by their share b / (RESIDUAL_PRIOR_ITEMS + n - 2) of the evidence,
  which is what keeps the forecast from jumping as the first labels arrive.

The forecast is the median over the draws; its interval is the draws' equal-tailed quantiles at the confidence
level. Each draw refits the model on a Bayesian bootstrap of the items (Gamma(counts) weights per pattern), so
the model's own uncertainty is in the interval too. What no draw can see: with no labels, judges that err together
look like a confident majority, and the forecast is low (benchmarks/plan.py measures the forecast against the
labels sample's loop actually needed, docs/PLAN.md; the output says so below 10 labels).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from ..errors import ParameterError
from ..inputs.dataset import Votes
from ..parameters import CONFIDENCE_LEVEL, check
from .rules import PrecisionRule, _first_run

if TYPE_CHECKING:
    from ..judges.unlabeled import Verdicts

RESIDUAL_PRIOR_ITEMS = 10.0  # the label-free model's residual variance weighs as much as 10 labels (docs/PLAN.md)
MAX_ITEMS = 200_000  # items replayed per draw; a larger pool is subsampled (the forecast is then scaled: docs/PLAN.md)


class Forecast(msgspec.Struct, frozen=True, kw_only=True):
    """Labels needed for one target, in all (the labels so far included): the median over the draws, its interval
    at the confidence level, the share of draws whose pool was enough (`reached`); None where most draws never
    reached the target within the pool."""

    what: str  # "error" or "score"
    k: int | None  # the ensemble size (error at k; None: every checked k, as sample's rule; score: None)
    labels: float | None
    low: float | None
    high: float | None
    reached: float


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """The forecasts of one dataset and what they rest on."""

    forecasts: tuple[Forecast, ...]
    items: int
    labeled: int
    target: float
    confidence_level: float
    draws: int
    positive: str | None  # the score's pass class (None: no score forecast)
    notes: tuple[str, ...] = ()


class PlanDocument(msgspec.Struct, frozen=True, kw_only=True):
    """`plan -f json`: one dataset's plan (docs/schema/plan.json)."""

    schema: str = "betaconform/1"
    command: str = "plan"
    tool_version: str
    dataset: str
    source: str
    label_cost: float | None  # per label (--label-cost): each forecast costs its labels times this
    plan: Plan


def _check(target: float, confidence_level: float, draws: int) -> None:
    check("target", target)
    check("confidence_level", confidence_level)
    check("draws", draws)


def _items(counts: np.ndarray, pattern_gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each item's pattern (an index into the patterns) and gold (-1 unlabeled), labeled items first."""
    rows = np.repeat(np.arange(len(counts)), np.asarray(counts, dtype=np.int64))
    gold = np.asarray(pattern_gold)[rows]
    order = np.argsort(gold < 0, kind="stable")  # labeled first, each group in pattern order
    return rows[order], gold[order]


def _summary(what: str, k: int | None, needed: np.ndarray, level: float) -> Forecast:
    """Median and equal-tailed interval of the draws' labels; a draw that never reached the target is +inf."""
    reached = float(np.isfinite(needed).mean())
    if reached < 0.5:
            return Forecast(what=what, k=k, labels=None, low=None, high=None, reached=reached)
    lo, mid, hi = (float(x) for x in np.quantile(needed, [(1 - level) / 2, 0.5, (1 + level) / 2], method="inverted_cdf"))
    return Forecast(what=what, k=k, labels=mid, low=lo, high=hi if math.isfinite(hi) else None, reached=reached)


def _score_half_widths(theta: float, sigma2: float, items: int, level: float, n: np.ndarray) -> np.ndarray:
    """The score's half-width at each n of `n` labels (n >= 3) of `items`, with the shipped interval
    (score.ppi.anchored_interval, eq. 6 since round 4: docs/SCORE.md) at pass rate `theta` and residual variance
    `sigma2`: eq. 2's variance as n labels would give it on average, ((n - 2) sigma2 + 3 p (1 - p)) / (n (n + 1))
    (a residual sum of squares of n - 2 degrees of freedom, 3 pseudo-items of p (1 - p), 2 fitted parameters), the
    finite-population correction, slope fpc / n, t_{n-2}; half of its width clipped to [0, 1], as `score` reports
    it."""
    from scipy import stats

    from ..score.ppi import PSEUDO_ITEMS, anchored_bounds

    fpc = np.maximum(1 - n / items, 0.0)
    residual = ((n - 2) * sigma2 + PSEUDO_ITEMS * theta * (1 - theta)) / (n - 2 + PSEUDO_ITEMS)
    low, high = anchored_bounds(theta, fpc * residual / n, fpc / n, stats.t.ppf(0.5 + level / 2, n - 2) ** 2)
    out: np.ndarray = (np.minimum(high, 1.0) - np.maximum(low, 0.0)) / 2
    return out


def _score_labels(theta: float, sigma2: float, items: int, target: float, level: float, labeled: int) -> float:
    """The fewest n (at least the `labeled` so far) whose score interval is at most `target` half-wide
    (`_score_half_widths`)."""
    n = np.arange(max(3, labeled), items + 1, dtype=float)
    hit = np.flatnonzero(_score_half_widths(theta, sigma2, items, level, n) <= target)
    return float(n[hit[0]]) if len(hit) else math.inf


class ResidualPosterior(msgspec.Struct, frozen=True):
    """The scaled-inverse-chi^2 posterior of the score's residual variance: `dof` degrees of freedom and `scale`
    s^2 (sigma^2 = dof s^2 / chi^2_dof); `prior` the label-free model's predicted variance, `labels` the labels'
    sum of squared residuals and their degrees of freedom."""

    dof: float
    scale: float
    prior: float
    sum_squares: float
    labels_dof: float

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        out: np.ndarray = self.dof * self.scale / rng.chisquare(self.dof, size)
        return out


def residual_posterior(v: Verdicts, positive: int, prior_items: float = RESIDUAL_PRIOR_ITEMS) -> ResidualPosterior:
    """The posterior of Var(y - lambda f), the residual variance the score's interval rests on (eq. 2), given the
    labels so far. Prior: scaled-inverse-chi^2 with `prior_items` degrees of freedom at the label-free model's
    prediction, mean over items of q (1 - q) + (q - f0)^2, q the score's Dawid-Skene posterior (label-free,
    score.two_class) and f0 its latent classes' prediction with no label (eq. 5: each class at its mean q), lambda
    1. Data: the labels' residuals as `score` computes them (score.latent_classes.cross_fitted_prediction, the
    tuned lambda, score.ppi.residuals): sum of squares S on n - d degrees of freedom (d = 2 with a tuned lambda,
    1 at lambda 0). Posterior: dof = prior_items + n - d, scale = (prior_items * prior + S) / dof (the normal
    model's conjugate update). Fewer than d + 1 labels: the prior alone."""
    from ..score.latent_classes import cross_fitted_prediction, fit_latent_classes
    from ..score.ppi import residuals, tuned_lambda
    from ..score.two_class import fit_dawid_skene

    binary = np.where(v.patterns < 0, -1, (v.patterns == positive).astype(np.int64))
    w = v.counts.astype(float)
    r = fit_latent_classes(binary, w).responsibilities
    q = fit_dawid_skene(binary, w).posterior
    unlabeled = np.zeros(len(w), dtype=bool)
    f0 = cross_fitted_prediction(r, q, np.zeros(len(w)), unlabeled, w)
    prior = float(w @ (q * (1 - q) + (q - f0) ** 2) / w.sum())
    labeled = v.gold >= 0
    y = (v.gold == positive).astype(float)
    lam = tuned_lambda(y[labeled], (f := cross_fitted_prediction(r, q, y, labeled, w))[labeled], w[labeled])
    labels_dof = float(w[labeled].sum()) - (2 if lam != 0 else 1)
    if labels_dof < 1:
        return ResidualPosterior(prior_items, prior, prior, 0.0, 0.0)
    sum_squares = float(w @ residuals(y, f, lam, labeled, w) ** 2)
    dof = prior_items + labels_dof
    return ResidualPosterior(dof, (prior_items * prior + sum_squares) / dof, prior, sum_squares, labels_dof)


def _error_stop(rule: PrecisionRule, judges: np.ndarray, correct: np.ndarray, labeled: int, pool: int) -> float:
    """The first r, from the labels so far on, at which `rule` stops on items in this order (inf: not in the pool)."""
    passed = rule.path(judges, correct, pool_size=pool).passed.copy()
    passed[: max(labeled - 1, 0)] = False  # from now on: a stop among the labels so far is not a forecast
    stop = _first_run(passed, rule.patience)
    return float(stop) if stop is not None else math.inf


def _usable(ks: Sequence[int], judges: np.ndarray) -> tuple[tuple[int, ...], list[str]]:
    usable = tuple(k for k in sorted(set(ks)) if k <= int(judges.min()))
    if len(usable) == len(set(ks)):
        return usable, []
    fewest = int(judges.min())
    why = f"every item has {fewest} judges" if fewest == int(judges.max()) else f"some item has only {fewest} judges"
    return usable, [f"k above {fewest} left out: {why} with a verdict"]


def forecast(
    votes: Votes,
    target: float,
    ks: Sequence[int] = tuple(range(1, 12)),
    confidence_level: float = CONFIDENCE_LEVEL,
    draws: int = 200,
    positive: int | None = None,
    rng: np.random.Generator | None = None,
    rule: PrecisionRule | None = None,
) -> Plan:
    """The labels `sample --rule precision --target TARGET` will need (error at each k of `ks` that every item's
    judges reach, and at every such k together), and the labels the score's interval needs (`positive`: the pass
    class's code; None: no score forecast). `rule`: the live loop's own rule, whose minimum, patience and method
    the replays keep (default: sample's). Deterministic for a given `rng` and the same data in any order."""
    import dataclasses

    from ..judges.unlabeled import from_votes

    _check(target, confidence_level, draws)
    rng = rng if rng is not None else np.random.default_rng(0)
    v = from_votes(votes, votes.judges)
    if not len(v.counts):
        raise ParameterError("votes", "holds no item with a verdict: plan forecasts from the judges' verdicts")
    rows, gold = _items(v.counts, v.gold)
    if len(rows) > MAX_ITEMS:
        raise ParameterError("votes", f"holds {len(rows):,} items; plan replays at most {MAX_ITEMS:,} (label a sample)")
    judges = (v.patterns[rows] >= 0).sum(axis=1)
    usable, notes = _usable(ks, judges)
    labeled = int((gold >= 0).sum())
    if labeled < 10:
        notes.append(f"{labeled} labels: the forecast assumes the judges err independently given the gold; where they "
                     "err together it is low (0.5x-0.8x the labels needed on two of three collections, docs/PLAN.md): "
                     "label 10 first and plan again")
    keys: list[tuple[str, int | None]] = [("error", k) for k in usable] + ([("error", None)] if len(usable) > 1 else [])
    posterior = residual_posterior(v, positive) if positive is not None else None
    keys += [("score", None)] if posterior is not None else []
    out: dict[tuple[str, int | None], list[float]] = {key: [] for key in keys}
    thetas: list[float] = []
    for g in _gold_draws(v, rows, gold, draws, rng):
        order = np.concatenate([np.arange(labeled), labeled + rng.permutation(len(rows) - labeled)])
        correct = ((v.patterns[rows] == g[:, None]) & (v.patterns[rows] >= 0)).sum(axis=1)
        for what, k in keys:
            if what == "error":
                replay = dataclasses.replace(rule or PrecisionRule(), target=target, ks=usable, at_k=k,
                                             confidence_level=confidence_level)
                out[(what, k)].append(_error_stop(replay, judges[order], correct[order], labeled, len(rows)))
            else:  # the score: the drawn pool's pass rate, with a residual variance drawn after the loop
                thetas.append(float((g == positive).mean()))
    if posterior is not None:  # drawn last, so that the error's draws are the same with or without the score
        out[("score", None)] = [_score_labels(theta, sigma2, len(rows), target, confidence_level, labeled)
                                for theta, sigma2 in zip(thetas, posterior.draw(rng, draws), strict=True)]
    forecasts = tuple(_summary(what, k, np.asarray(x), confidence_level) for (what, k), x in out.items())
    name = None if positive is None else str(votes.classes[positive])
    return Plan(forecasts=forecasts, items=len(rows), labeled=labeled, target=target, confidence_level=confidence_level,
                draws=draws, positive=name, notes=tuple(notes))


def _gold_draws(v: Verdicts, rows: np.ndarray, gold: np.ndarray, draws: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`draws` golds of every item: the labels where they exist, else a draw from the judges' model refitted on a
    Bayesian bootstrap of the patterns (Gamma(count) weights), so the model's uncertainty is drawn too."""
    from ..judges.unlabeled import fit_classes

    unl = np.flatnonzero(gold < 0)
    for _ in range(draws):
        g = gold.copy()
        boot = type(v)(v.patterns, v.gold, rng.gamma(v.counts.astype(float)), v.classes)
        cum = np.cumsum(fit_classes(boot).posterior[rows[unl]], axis=1)
        g[unl] = np.minimum((cum < rng.random(len(unl))[:, None]).sum(axis=1), v.classes - 1)
        yield g
