"""`score`: the evaluated system's pass rate, corrected for the judges' bias with a few gold labels.

Inputs are plain arrays: `verdicts[i, j]` the class code judge j gave item i (-1: no verdict), `gold[i]` the human
label's class code (-1: unlabeled), `positive` the code that counts as a pass; optionally `counts`, items per row
when rows are patterns of identical items (inputs.Votes). Everything is reduced to pass / not pass first, so
multi-class gold reports the share of one class.

Method (docs/SCORE.md):

1. Prediction (latent_classes.py, eq. 5). A 3-class latent-class model is fitted by EM to the
   verdicts of ALL items, labeled or not, without the gold; each class's pass rate comes from the labels (with 2
   pseudo-items of the class's mean Dawid-Skene posterior, two_class.py: the one Dawid-Skene model), and
   `f_i = sum_c P(item i in class c | its verdicts) * pass rate of c`, a labeled item's from the OTHER labels
   (leave one out; with clusters, its cluster out), so that f on the labeled items does not see their own labels
   (cross-fitting, as prediction-powered inference needs). The judges' majority (ties half) is what "the judges say".
2. Prediction-powered estimate (PPI++; in survey terms the regression estimator), eq. (1):
       theta = lambda * mean_U(f) + mean_L(y - lambda * f),
   U all N items, L the n labeled ones. lambda = Cov_L(y, f) / Var_L(f), clipped to [-1, 1], minimises the
   variance (the labeled items are part of U, so there is no (1 + n/N) factor); lambda = 0 is labels only, and a
   negative lambda uses judges that the labels show to be worse than chance (adversarial sets).
3. Variance from the labeled items' residuals e_i = y_i - lambda f_i - mean_L(y - lambda f), summed within
   clusters (one cluster per item without `clusters`), G the clusters holding a labeled item:
       V = fpc * G / n^2 * (sum_g S_g^2 + k v0 n / G) / (G - d + k),                          eq. (2)
   d = 2 fitted parameters (the mean and a tuned lambda; 1 with lambda fixed), and k = 3 pseudo-items of the
   labels-only variance v0 = p(1 - p), p = (passes + 1) / (n + 2): with 20 labels the residuals are often all
   zero, and the plain S^2 / n then gives a zero-width interval (Wilson's remedy for the binomial interval; the
   choice, k = 3 for coverage at r = 50, was made in benchmarks/score.py --alternatives). Without clusters and k = 0 this is fpc * S^2 / n.
   fpc = 1 - n/N for target "set" (the pass rate of these N items: the labeled items are part of it, finite-
   population correction) and 1 for target "new" (new items like these), which adds the variance of this set's
   own mean around the population's, estimated from the labeled items: V_L(y) * n / N.               eq. (3)
   With clusters fpc stays 1 - n/N: exact when whole clusters are labeled and equal in size, an approximation
   when labels are drawn item by item across clusters.
   The interval (ppi.anchored_interval) is every theta0 with
       (theta - theta0)^2 <= t_{G-d}^2 (V + a (theta0 (1 - theta0) - theta (1 - theta))),  a = fpc / n (+ 1 / N), eq. (6)
   clipped to [0, 1]: the residuals' variance as the labels give it at theta, with the part a hypothesis fixes
   (Var(y) = theta0 (1 - theta0), reached by an additive shift of every item's pass probability) moved to theta0,
   so the far end stays honest near 0 or 1 where a sample that missed the rare disagreements has V near 0 (docs/
   SCORE.md "Round 4"; it replaced the hull of the Wald interval and a calibrated model's variance).
4. The reported estimate moves theta toward what the judges say, J = mean_U(majority) (ppi.shrink_toward):
       estimate = theta + sign(J - theta) * min(|D|, sd^2 / |D|, 0.5 sd),  D = theta - J, sd = sqrt(V),   eq. (4)
   the empirical-Bayes combination of an unbiased estimate and a biased one of known value (prior N(0, tau^2) on
   the judges' bias, tau^2 = D^2 - sd^2), limited to half a standard error (Efron and Morris's limited
   translation), so it is never worse than theta by more than that; the interval stays theta's. The judges'
   bias = J - estimate, its interval J minus theta's (the majority's mean over U is known), and for target "new"
   eq. (3) with y replaced by majority - y. ScoreResult.ppi_estimate keeps theta.
5. Labels only: Wilson's score interval with n / fpc in place of n (the finite-population version; all items
   labeled gives the exact rate).

`compare_scores` does the same for the difference of two systems judged on the same items (aligned by the
caller, e.g. with `align_items`): the influences of the two estimates are subtracted item by item, so the pairing
by item (and by cluster) enters the variance; the difference is theta_a - theta_b (eq. 4 moves each system's own
estimate, not the difference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..choices import SCORE_TARGETS as TARGETS
from ..errors import P0, P1, ParameterError
from ..inputs.dataset import Votes
from ..inputs.values import hidden
from ..parameters import CONFIDENCE_LEVEL, check
from .latent_classes import LatentClasses, cross_fitted_prediction, fit_latent_classes
from .ppi import (
    LAMBDA_RANGE,
    Interval,
    anchored_interval,
    labeled_mean_variance,
    mean_variance,
    pseudo_variance,
    residuals,
    shrink_toward,
    t_interval,
    tuned_lambda,
    wilson_fpc,
    wmean,
)
from .strata import Judged, Unjudged, mix
from .two_class import JudgeModel, fit_dawid_skene, majority

TARGET_TEXT = {"set": "the pass rate of these items", "new": "the pass rate of new items like these"}
METHOD = "PPI++ with a latent-class prediction from all judges (cross-fitted), moved toward the judges' majority"
METHOD_LABELS_ONLY = "labels only (lambda = 0)"
POSITIVE_NAMES = ("true", "pass", "passed", "yes", "1", "correct", "good", "y", "t")  # the pass class, by default
FORMAT_PASSES = {"inspect": ("C", frozenset("CIP"))}  # a tool's pass value, where it wrote every class (inspect-ai: C/I/P)


@dataclass(frozen=True)
class ScoreSizes:
    """What a score rests on: the labeled and unlabeled items (every item, with a verdict or not), the judges, the
    labeled clusters (when `clusters` was given), and the items no judge gave a verdict on, with how many of them
    are labeled (strata.py)."""

    labeled_items: int
    unlabeled_items: int
    judges: int
    clusters: int | None = None
    no_verdict: int = 0
    no_verdict_labeled: int = 0

    @property
    def items(self) -> int:
        return self.labeled_items + self.unlabeled_items


@dataclass(frozen=True)
class ScoreModels:
    """The judges' models the prediction came from: Dawid-Skene and the latent classes (None without judges)."""

    model: JudgeModel | None = None
    latent: LatentClasses | None = None


@dataclass(frozen=True)
class ScoreResult:
    """The corrected pass rate of one system, what the judges alone say, and what the labels alone say (its JSON
    document: document.score_document)."""

    score: Interval
    judges_say: float  # the judges' majority pass rate over all items (ties half); known exactly for this set
    judges_bias: Interval  # judges_say - score, with its interval
    labels_only: Interval
    sizes: ScoreSizes
    positive: Any
    confidence_level: float
    target: str
    method: str
    lambda_: float
    models: ScoreModels = field(default=ScoreModels(), repr=False, compare=False)
    ppi_estimate: float = float("nan")  # eq. (1) before eq. (4) moves it: the centre of the score's interval

    @property
    def items(self) -> int:
        return self.sizes.items


@dataclass(frozen=True)
class ComparisonResult:
    """The difference a - b of two systems' corrected pass rates on shared items, with its paired interval."""

    difference: Interval
    a: ScoreResult
    b: ScoreResult
    shared_items: int
    labeled_both: int
    confidence_level: float
    target: str


# --- checks ------------------------------------------------------------------------------------------------------


def _check_confidence_level(confidence_level: float) -> None:
    check("confidence_level", confidence_level)


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise ParameterError("target", f"must be one of {', '.join(TARGETS)}; got {target!r}")


def check_options(confidence_level: float, target: str) -> None:
    """The options' checks, for a caller that wants them before reading its inputs."""
    _check_confidence_level(confidence_level)
    _check_target(target)


def binarize(verdicts: np.ndarray, gold: np.ndarray, positive: int) -> tuple[np.ndarray, np.ndarray]:
    """Pass (1) / not pass (0) / none (-1) from class codes; verdicts as items x judges, gold one per item."""
    v = np.asarray(verdicts)
    g = np.asarray(gold)
    if v.ndim == 1:
        v = v[:, None]
    if v.ndim != 2 or g.ndim != 1 or v.shape[0] != g.shape[0]:
        raise ParameterError(
            ("verdicts", "gold"),
            f"{P0} must be items x judges and {P1} one code per item; got shapes {v.shape} and {g.shape}",
        )
    vb = np.where(v < 0, -1, (v == positive).astype(np.int8)).astype(np.int8)
    gb = np.where(g < 0, -1, (g == positive).astype(np.int8)).astype(np.int8)
    return vb, gb


def _check_counts(counts: np.ndarray | None, rows: int, clustered: bool) -> np.ndarray:
    if counts is None:
        return np.ones(rows)
    w = np.asarray(counts, dtype=float)
    if w.shape != (rows,) or (w < 0).any() or not np.isfinite(w).all() or (w != np.round(w)).any():
        raise ParameterError("counts", f"must give a whole number >= 0 of items per row ({rows} rows)")
    if clustered and (w != 1).any():
        raise ParameterError(
            ("counts", "clusters"), f"{P0} and {P1} cannot be combined: with clusters each row is one item"
        )
    return w


def _cluster_codes(clusters: Sequence[Any] | np.ndarray | None, n: int) -> np.ndarray | None:
    if clusters is None:
        return None
    c = np.asarray(clusters)
    if c.shape != (n,):
        raise ParameterError("clusters", f"must give one cluster id per item ({n}); got shape {c.shape}")
    return np.unique(c, return_inverse=True)[1].reshape(n)


@dataclass(frozen=True)
class _Parts:
    """What `compare_scores` needs of one system's estimate, besides its result."""

    result: ScoreResult
    influence: np.ndarray  # residual / n on labeled items: the item's share in the estimate's error
    y: np.ndarray
    labeled: np.ndarray
    ddof: int
    fit: _Fit


@dataclass(frozen=True)
class _Fit:
    """The PPI++ fit of one system: eq. (1)'s estimate, its residuals and the variances of eqs. (2)-(3)."""

    theta: float
    lam: float
    resid: np.ndarray
    ddof: int
    clusters: int
    var_score: float
    var_bias: float
    slope: float  # eq. (6): the estimate's variance at theta0 is var_score + slope (theta0 (1 - theta0) - theta (1 - theta))


def _fit(
    y: np.ndarray,
    f: np.ndarray,
    maj: np.ndarray,
    labeled: np.ndarray,
    cluster: np.ndarray | None,
    w: np.ndarray,
    target: str,
    lambda_: float | None,
) -> _Fit:
    n_items, n, wl = int(w.sum()), int(w[labeled].sum()), w[labeled]
    lam = tuned_lambda(y[labeled], f[labeled], wl) if lambda_ is None else float(lambda_)
    if not LAMBDA_RANGE[0] <= lam <= LAMBDA_RANGE[1]:
        raise ParameterError("lambda_", f"must be between {LAMBDA_RANGE[0]:g} and {LAMBDA_RANGE[1]:g}; got {lam}")
    theta = lam * wmean(f, w) + wmean(y[labeled] - lam * f[labeled], wl)  # eq. (1)
    resid = residuals(y, f, lam, labeled, w)
    ddof = 2 if lambda_ is None and lam != 0 else 1  # a tuned lambda is a second fitted parameter
    variance, g = mean_variance(resid, cluster, labeled, w, ddof, pseudo_variance(y[labeled], wl))
    fpc = 1.0 - n / n_items if target == "set" else 1.0
    var_score = var_bias = variance * fpc
    slope = fpc / n  # eq. (6): Var(y) = theta0 (1 - theta0) moves with the hypothesis, the rest of V as the labels say
    if target == "new":  # eq. (3): this set's own mean around the population's
        var_score += labeled_mean_variance(y, cluster, labeled, w) * n / n_items
        var_bias += labeled_mean_variance(maj - y, cluster, labeled, w) * n / n_items
        slope += 1.0 / n_items
    return _Fit(theta, lam, resid, ddof, g, var_score, var_bias, slope)


def _bias_interval(judges_say: float, fit: _Fit, around: Interval) -> Interval:
    """judges_say - theta with its interval: theta's unclipped interval `around` mirrored (the majority's mean over
    the items is known), each side scaled by sd(bias) / sd(score) (1 for target "set"; for "new" the judges' own
    mean around the population's adds its variance), clipped to [-1, 1]."""
    ratio = math.sqrt(fit.var_bias / fit.var_score) if fit.var_score > 0 and math.isfinite(fit.var_bias) else 1.0
    centre = judges_say - fit.theta
    low, high = centre - ratio * (around.high - fit.theta), centre + ratio * (fit.theta - around.low)
    return Interval(centre, max(-1.0, low), min(1.0, high))


def _estimate(
    verdicts: np.ndarray,
    gold: np.ndarray,
    positive: Any,
    cluster: np.ndarray | None,
    w: np.ndarray,
    confidence_level: float,
    target: str,
    lambda_: float | None,
) -> _Parts:
    n_items, labeled = int(w.sum()), gold >= 0
    n = int(w[labeled].sum())
    if n < 2:
        raise ParameterError("gold", f"needs at least 2 labeled items to give an interval; got {n}")
    y = np.where(labeled, gold, 0).astype(float)
    model = fit_dawid_skene(verdicts, w) if verdicts.shape[1] > 0 else None
    latent = fit_latent_classes(verdicts, w) if model is not None else None
    f = np.full(len(w), 0.5)
    if model is not None and latent is not None:  # eq. (5): cross-fitted on the labels
        f = cross_fitted_prediction(latent.responsibilities, model.posterior, y, labeled, w, cluster)
    maj = majority(verdicts) if verdicts.shape[1] > 0 else np.full(len(w), 0.5)
    fit = _fit(y, f, maj, labeled, cluster, w, target, lambda_)
    judges_say, dof, uses_judges = wmean(maj, w), fit.clusters - fit.ddof, model is not None and fit.lam != 0
    around = anchored_interval(fit.theta, fit.var_score, fit.slope, dof, confidence_level, -math.inf, math.inf)
    raw = Interval(fit.theta, max(0.0, around.low), min(1.0, around.high))  # eq. (6), clipped to [0, 1]
    moved = shrink_toward(fit.theta, math.sqrt(fit.var_score), judges_say) if uses_judges else fit.theta  # eq. (4)
    estimate = min(raw.high, max(raw.low, moved))
    bias = _bias_interval(judges_say, fit, around)
    successes = int(round(float(w[labeled] @ y[labeled])))
    result = ScoreResult(
        score=replace(raw, estimate=estimate),
        judges_say=judges_say,
        judges_bias=replace(bias, estimate=min(bias.high, max(bias.low, judges_say - estimate))),
        labels_only=wilson_fpc(successes, n, confidence_level, n_items if target == "set" else None),
        sizes=ScoreSizes(n, n_items - n, int(verdicts.shape[1]), None if cluster is None else fit.clusters),
        positive=positive,
        confidence_level=float(confidence_level),
        target=target,
        method=METHOD if uses_judges else METHOD_LABELS_ONLY,
        lambda_=fit.lam,
        models=ScoreModels(model, latent),
        ppi_estimate=min(1.0, max(0.0, fit.theta)),
    )
    return _Parts(result, fit.resid / n, y, labeled, fit.ddof, fit)


def score(
    verdicts: np.ndarray,
    gold: np.ndarray,
    positive: Any = 1,
    *,
    counts: np.ndarray | None = None,
    clusters: Sequence[Any] | np.ndarray | None = None,
    confidence_level: float = CONFIDENCE_LEVEL,
    target: str = "set",
    lambda_: float | None = None,
    rng: np.random.Generator | None = None,
) -> ScoreResult:
    """The judge-corrected pass rate of one system (module docstring, eqs. 1-3).

    verdicts: items x judges class codes (-1 none); gold: one code per item (-1 unlabeled); positive: the code that
    passes; counts: items per row when rows are patterns of identical items (inputs.Votes; None: one each);
    clusters: one id per row, each row one item (correlated items share one); target: "set" (these items) or "new" (new items
    like these); lambda_: fixed PPI weight in [-1, 1] (None: tuned; 0: labels only). `rng` is accepted for the
    common signature of stochastic core functions; the estimator itself is deterministic.
    """
    del rng
    _check_confidence_level(confidence_level)
    _check_target(target)
    v, g = binarize(verdicts, gold, positive)
    cluster = _cluster_codes(clusters, g.shape[0])
    w = _check_counts(counts, g.shape[0], cluster is not None)
    judged = (v >= 0).any(axis=1) & (w > 0)
    if judged.any() and not judged[w > 0].all():  # items no judge answered: the mixture of strata.py
        return _with_unjudged(v, g, positive, cluster, w, judged, confidence_level, target, lambda_)
    return _estimate(v, g, positive, cluster, w, confidence_level, target, lambda_).result


def _with_unjudged(
    v: np.ndarray, g: np.ndarray, positive: Any, cluster: np.ndarray | None, w: np.ndarray, judged: np.ndarray,
    confidence_level: float, target: str, lambda_: float | None,
) -> ScoreResult:
    """The pass rate of every item when some have no verdict (strata.py, eqs. 7-9): the estimator on the
    judged items, mixed with the others' labels, or predicted at the judged items' rate where none is labeled."""
    labeled, none = g >= 0, ~judged & (w > 0)
    if float(w[judged & labeled].sum()) < 2:
        raise ParameterError("gold", f"needs at least 2 labeled items that a judge gave a verdict on; got "
                                     f"{int(w[judged & labeled].sum())} (and {int(w[none & labeled].sum())} labeled items without one)")
    parts = _estimate(v[judged], g[judged], positive, None if cluster is None else cluster[judged], w[judged],
                      confidence_level, target, lambda_)
    r, fit = parts.result, parts.fit
    n, n_items = float(w[labeled].sum()), float(w.sum())
    unjudged = Unjudged(float(w[none].sum()), float(w[none & labeled].sum()), float(w[none & (g == 1)].sum()))
    y = np.where(labeled, g, 0).astype(float)
    part = Judged(fit.theta, r.score.estimate, fit.var_score, fit.slope, fit.clusters - fit.ddof, float(w[judged].sum()),
                  pseudo_variance(y[labeled], w[labeled]))
    m = mix(part, unjudged, target)
    around = anchored_interval(m.theta, m.variance, m.slope, m.dof, confidence_level, -math.inf, math.inf)
    raw = Interval(m.theta, max(0.0, around.low), min(1.0, around.high))
    successes = int(round(float(w[labeled] @ y[labeled])))
    sizes = replace(r.sizes, labeled_items=int(n), unlabeled_items=int(n_items - n), no_verdict=int(unjudged.items),
                    no_verdict_labeled=int(unjudged.labeled))
    return replace(r, score=replace(raw, estimate=min(raw.high, max(raw.low, m.estimate))), sizes=sizes,
                   labels_only=wilson_fpc(successes, int(n), confidence_level, int(n_items) if target == "set" else None),
                   ppi_estimate=min(1.0, max(0.0, m.theta)))


def resolve_positive(classes: Sequence[str], value: str | None = None, source_format: str | None = None) -> int:
    """The class code that passes: `value` (the class as written, case-insensitive; refused as ambiguous where two
    classes differ only in case; --positive), else the one class named like a pass (true, pass, yes, 1, ...), else
    the format's pass value where every class is its (FORMAT_PASSES: inspect's C of C/I/P; never A/B/C/D answers)."""
    folded = [str(c).strip().lower() for c in classes]
    if value is not None:
        want = str(value).strip().lower()
        same = [k for k, c in enumerate(folded) if c == want]
        if len(same) > 1:  # "pass" and "Pass" are two classes: which one passes is not ours to pick (issue 25)
            spelled = ", ".join(repr(classes[k]) for k in same)
            text = (f"{value!r} is ambiguous: the classes {spelled} differ only in case, and each is a class of its own; "
                    "write the gold and the verdicts one way")
            raise ParameterError("positive", f"{P0} {text}")
        if same:
            return same[0]
        raise ParameterError("positive", f"{P0} {value!r} is not a class of the gold{hidden(str(value))}; the classes "
                                         f"are {', '.join(map(str, classes))}")
    own, vocabulary = FORMAT_PASSES.get(source_format or "", ("", frozenset()))
    found = [k for k, c in enumerate(folded) if c in POSITIVE_NAMES] or [
        k for k, c in enumerate(classes) if c == own and set(map(str, classes)) <= vocabulary]
    if len(found) == 1:
        return found[0]
    raise ParameterError("positive", "cannot tell which class of the gold passes among "
                                     f"{', '.join(map(str, classes)) or 'no classes'}; name it with {P0} (e.g. {P0} "
                                     f"{str(classes[0]) if classes else 'pass'})")


def score_votes(
    votes: Votes,
    positive: str | None = None,
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    confidence_level: float = CONFIDENCE_LEVEL,
    target: str = "set",
    rng: np.random.Generator | None = None,
    source_format: str | None = None,
) -> ScoreResult:
    """`score` on a dataset's votes (inputs.Votes: every item's verdicts, gold on some), the pass class resolved from
    its name (`resolve_positive`; `source_format`: the reader's, Reading.source_format); `clusters` one id per item
    in the votes' item order. The result's `positive` is the class as written."""
    code = resolve_positive(votes.classes, positive, source_format)
    options: dict[str, Any] = {"confidence_level": confidence_level, "target": target, "rng": rng}
    # the items no judge gave a verdict on are rows with no verdict (strata.py), one per gold, each its own cluster
    none_gold = np.array([g for g, _ in votes.no_verdict], dtype=np.int32)
    none_counts = np.array([n for _, n in votes.no_verdict], dtype=np.int64)
    blank = np.full((len(none_gold), len(votes.judges)), -1, dtype=np.int32)
    if clusters is None:  # patterns with counts: what 10^7 rows cost is what their distinct patterns cost
        result = score(np.vstack([votes.patterns, blank]), np.concatenate([votes.gold, none_gold]), code,
                       counts=np.concatenate([votes.counts, none_counts]), **options)
    else:
        verdicts, gold = votes.per_item()
        rows = np.repeat(np.arange(len(none_gold)), none_counts)
        codes = _cluster_codes(clusters, len(gold))
        assert codes is not None
        own = codes.max(initial=-1) + 1 + np.arange(len(rows))
        result = score(np.vstack([verdicts, blank[rows]]), np.concatenate([gold, none_gold[rows]]), code,
                       clusters=np.concatenate([codes, own]), **options)
    return replace(result, positive=votes.classes[code])


def align_items(ids_a: Sequence[Any], ids_b: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in a, in b) of the item ids the two systems share, in a's order; a repeated id is an error."""
    for name, ids in (("ids_a", ids_a), ("ids_b", ids_b)):
        if len(set(ids)) != len(ids):
            raise ParameterError(name, "repeats an item id; a paired comparison needs each item once per system")
    where_b = {item: k for k, item in enumerate(ids_b)}
    pairs = [(k, where_b[item]) for k, item in enumerate(ids_a) if item in where_b]
    if not pairs:
        raise ParameterError(("ids_a", "ids_b"), f"{P0} and {P1} share no item id; a comparison needs shared items")
    ia, ib = zip(*pairs, strict=True)
    return np.asarray(ia, dtype=int), np.asarray(ib, dtype=int)


def compare_scores(
    verdicts_a: np.ndarray,
    gold_a: np.ndarray,
    verdicts_b: np.ndarray,
    gold_b: np.ndarray,
    positive: Any = 1,
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    confidence_level: float = CONFIDENCE_LEVEL,
    target: str = "set",
    rng: np.random.Generator | None = None,
) -> ComparisonResult:
    """score(a) - score(b) on the same items (row i of a and of b is one item), with the paired interval: each
    item's influences on the two estimates are subtracted before the (clustered) sum of squares."""
    del rng
    _check_confidence_level(confidence_level)
    _check_target(target)
    va, ga = binarize(verdicts_a, gold_a, positive)
    vb, gb = binarize(verdicts_b, gold_b, positive)
    if ga.shape != gb.shape:
        raise ParameterError(("verdicts_a", "verdicts_b"), f"{P0} and {P1} must hold the same items (align_items)")
    cluster = _cluster_codes(clusters, ga.shape[0])
    w = np.ones(ga.shape[0])
    pa = _estimate(va, ga, positive, cluster, w, confidence_level, target, None)
    pb = _estimate(vb, gb, positive, cluster, w, confidence_level, target, None)
    both = pa.labeled & pb.labeled
    either = pa.labeled | pb.labeled
    n_either = int(either.sum())
    ddof = max(pa.ddof, pb.ddof)
    if both.sum() >= 2:  # the labels-only variance of y_a - y_b: at most the discordance, smoothed as in v0
        v0 = (float((pa.y[both] != pb.y[both]).sum()) + 1.0) / (int(both.sum()) + 2.0)
    else:
        v0 = pseudo_variance(pa.y[pa.labeled], w[pa.labeled]) + pseudo_variance(pb.y[pb.labeled], w[pb.labeled])
    variance, g = mean_variance((pa.influence - pb.influence) * n_either, cluster, either, w, ddof, v0)
    n_items = ga.shape[0]
    if target == "set":
        variance *= 1.0 - min(pa.labeled.sum(), pb.labeled.sum()) / n_items
    elif both.sum() >= 2:
        variance += labeled_mean_variance(pa.y - pb.y, cluster, both, w) * int(both.sum()) / n_items
    else:
        variance += labeled_mean_variance(pa.y, cluster, pa.labeled, w) * int(pa.labeled.sum()) / n_items
        variance += labeled_mean_variance(pb.y, cluster, pb.labeled, w) * int(pb.labeled.sum()) / n_items
    diff = pa.result.ppi_estimate - pb.result.ppi_estimate  # the interval's centre: unmoved (eq. 4 is per system)
    difference = t_interval(diff, variance, g - ddof, confidence_level, -1.0, 1.0)
    return ComparisonResult(difference, pa.result, pb.result, n_items, int(both.sum()), float(confidence_level), target)
