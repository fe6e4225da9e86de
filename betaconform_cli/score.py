"""`score`: the evaluated system's pass rate, corrected for the judges' bias with a few gold labels.

Inputs are plain arrays: `verdicts[i, j]` the class code judge j gave item i (-1: no verdict), `gold[i]` the human
label's class code (-1: unlabeled), `positive` the code that counts as a pass; optionally `counts`, items per row
when rows are patterns of identical items (inputs.Votes). Everything is reduced to pass / not pass first, so
multi-class gold reports the share of one class.

Method (docs/SCORE.md):

1. Prediction. A two-class Dawid-Skene model (each judge its own sensitivity and specificity, verdicts independent
   given the item's gold) is fitted by EM to the verdicts of ALL items, labeled or not, and never sees the gold;
   `f_i = P(item i passes | its verdicts)`. Because `f` is a function of the verdicts alone it is fixed before the
   labeled items are drawn, so nothing is overfitted to them (no cross-fitting is needed; a semi-supervised fit
   would need it). The judges' majority (ties half) is what "the judges say".
2. Prediction-powered estimate (PPI++; in survey terms the regression estimator), eq. (1):
       theta = lambda * mean_U(f) + mean_L(y - lambda * f),
   U all N items, L the n labeled ones. lambda = Cov_L(y, f) / Var_L(f), clipped to [-1, 1], minimises the
   variance (the labeled items are part of U, so there is no (1 + n/N) factor); lambda = 0 is labels only, and a
   negative lambda uses judges that the labels show to be worse than chance (adversarial sets).
3. Variance from the labeled items' residuals e_i = y_i - lambda f_i - mean_L(y - lambda f), summed within
   clusters (one cluster per item without `clusters`), G the clusters holding a labeled item:
       V = fpc * G / n^2 * (sum_g S_g^2 + k v0 n / G) / (G - d + k),                          eq. (2)
   d = 2 fitted parameters (the mean and a tuned lambda; 1 with lambda fixed), and k = 2 pseudo-items of the
   labels-only variance v0 = p(1 - p), p = (passes + 1) / (n + 2): with 20 labels the residuals are often all
   zero, and the plain S^2 / n then gives a zero-width interval (Wilson's remedy for the binomial interval; the
   choice was made in benchmarks/score.py --alternatives). Without clusters and k = 0 this is fpc * S^2 / n.
   fpc = 1 - n/N for target "set" (the pass rate of these N items: the labeled items are part of it, finite-
   population correction) and 1 for target "new" (new items like these), which adds the variance of this set's
   own mean around the population's, estimated from the labeled items: V_L(y) * n / N.               eq. (3)
   With clusters fpc stays 1 - n/N: exact when whole clusters are labeled and equal in size, an approximation
   when labels are drawn item by item across clusters.
   The interval is estimate +- t_{G-d} * sqrt(V), clipped to [0, 1].
4. The judges' bias = mean_U(majority) - theta: the same influence as theta (the majority's mean over U is known),
   and for target "new" eq. (3) with y replaced by majority - y.
5. Labels only: Wilson's score interval with n / fpc in place of n (the finite-population version; all items
   labeled gives the exact rate).

`compare_scores` does the same for the difference of two systems judged on the same items (aligned by the
caller, e.g. with `align_items`): the influences of the two estimates are subtracted item by item, so the pairing
by item (and by cluster) enters the variance.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import stats

from .errors import FitWarning, ParameterError
from .inputs.dataset import Votes
from .settings import SCORE_TARGETS as TARGETS

TARGET_TEXT = {"set": "the pass rate of these items", "new": "the pass rate of new items like these"}
METHOD = "PPI++ with a Dawid-Skene posterior of all judges"
METHOD_LABELS_ONLY = "labels only (lambda = 0)"
DS_MAX_ITER = 500
DS_TOL = 1e-8
DS_PSEUDO = 1.0  # Beta(1 + a, 1 + a) smoothing of each judge's sensitivity and specificity (a pseudo-item each way)
POSITIVE_NAMES = ("true", "pass", "passed", "yes", "1", "correct", "good", "y", "t")  # the pass class, by default
LAMBDA_RANGE = (-1.0, 1.0)  # a negative weight uses judges that are worse than chance (benchmarks/score.py)
PSEUDO_ITEMS = 2.0  # pseudo-items of labels-only variance added to the residuals' (benchmarks/score.py --alternatives)


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval at `confidence_level`."""

    estimate: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class JudgeModel:
    """The fitted Dawid-Skene model: prevalence, each judge's sensitivity/specificity, and each item's posterior."""

    prevalence: float
    sensitivity: np.ndarray = field(repr=False)
    specificity: np.ndarray = field(repr=False)
    posterior: np.ndarray = field(repr=False)
    converged: bool = True
    n_iter: int = 0
    log_likelihood: float = float("nan")


@dataclass(frozen=True)
class ScoreResult:
    """The corrected pass rate of one system, what the judges alone say, and what the labels alone say."""

    score: Interval
    judges_say: float  # the judges' majority pass rate over all items (ties half); known exactly for this set
    judges_bias: Interval  # judges_say - score, with its interval
    labels_only: Interval
    labeled_items: int
    unlabeled_items: int
    judges: int
    clusters: int | None  # labeled clusters, when `clusters` was given
    positive: Any
    confidence_level: float
    target: str
    method: str
    lambda_: float
    model: JudgeModel | None = field(default=None, repr=False, compare=False)

    @property
    def items(self) -> int:
        return self.labeled_items + self.unlabeled_items

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score.to_dict(),
            "judges_say": {"estimate": self.judges_say, "bias": self.judges_bias.to_dict()},
            "labels_only": self.labels_only.to_dict(),
            "positive": self.positive,
            "labeled_items": self.labeled_items,
            "unlabeled_items": self.unlabeled_items,
            "judges": self.judges,
            "clusters": self.clusters,
            "confidence_level": self.confidence_level,
            "target": self.target,
            "target_text": TARGET_TEXT[self.target],
            "method": self.method,
            "lambda": self.lambda_,
        }


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "difference": self.difference.to_dict(),
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "shared_items": self.shared_items,
            "labeled_both": self.labeled_both,
            "confidence_level": self.confidence_level,
            "target": self.target,
        }


# --- checks ------------------------------------------------------------------------------------------------------


def _check_confidence_level(confidence_level: float) -> None:
    if not (isinstance(confidence_level, (int, float)) and 0 < confidence_level < 1):
        raise ParameterError(
            "confidence_level", f"must be strictly between 0 and 1 (0.9 = 90%); got {confidence_level}"
        )


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
            f"{{0}} must be items x judges and {{1}} one code per item; got shapes {v.shape} and {g.shape}",
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
            ("counts", "clusters"), "{0} and {1} cannot be combined: with clusters each row is one item"
        )
    return w


def _cluster_codes(clusters: Sequence[Any] | np.ndarray | None, n: int) -> np.ndarray | None:
    if clusters is None:
        return None
    c = np.asarray(clusters)
    if c.shape != (n,):
        raise ParameterError("clusters", f"must give one cluster id per item ({n}); got shape {c.shape}")
    return np.unique(c, return_inverse=True)[1].reshape(n)


# --- the prediction: Dawid-Skene over all judges ----------------------------------------------------------------


def majority(verdicts: np.ndarray) -> np.ndarray:
    """Each item's majority verdict from pass/not-pass/none codes: 1, 0, or 0.5 for a tie or no verdict."""
    pos = (verdicts == 1).sum(axis=1)
    neg = (verdicts == 0).sum(axis=1)
    return np.where(pos > neg, 1.0, np.where(neg > pos, 0.0, 0.5))


def fit_dawid_skene(
    verdicts: np.ndarray, weights: np.ndarray | None = None, max_iter: int = DS_MAX_ITER, tol: float = DS_TOL
) -> JudgeModel:
    """EM for the two-class Dawid-Skene model on pass/not-pass/none verdicts (rows x judges; `weights`: items per
    row, for patterns with counts), started from the judges' vote shares; a missing verdict drops out of its item's
    likelihood. Oriented so that the judges are on average better than chance (the labels of the two latent
    classes are otherwise exchangeable)."""
    w = np.ones(verdicts.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    seen = verdicts >= 0
    pos = ((verdicts == 1) & seen).astype(float)
    neg = ((verdicts == 0) & seen).astype(float)
    n_seen = seen.sum(axis=1)
    q = np.where(n_seen > 0, (pos.sum(axis=1) + 0.5) / (n_seen + 1.0), 0.5)  # P(pass) per item
    a = DS_PSEUDO
    previous = -np.inf
    log_likelihood = -np.inf
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        # M-step (MAP with Beta(1 + a, 1 + a) on each rate, the prevalence likewise)
        wq, wr = w * q, w * (1 - q)
        prevalence = (wq.sum() + a) / (w.sum() + 2 * a)
        sensitivity = (wq @ pos + a) / (wq @ (pos + neg) + 2 * a)
        specificity = (wr @ neg + a) / (wr @ (pos + neg) + 2 * a)
        # E-step in log space
        log_pass = math.log(prevalence) + pos @ np.log(sensitivity) + neg @ np.log1p(-sensitivity)
        log_fail = math.log1p(-prevalence) + pos @ np.log1p(-specificity) + neg @ np.log(specificity)
        top = np.maximum(log_pass, log_fail)
        norm = top + np.log(np.exp(log_pass - top) + np.exp(log_fail - top))
        q = np.exp(log_pass - norm)
        log_likelihood = float(w @ norm)
        if abs(log_likelihood - previous) <= tol * max(1.0, abs(log_likelihood)):
            converged = True
            break
        previous = log_likelihood
    if not converged:
        warnings.warn(f"Dawid-Skene EM did not converge in {max_iter} iterations", FitWarning, stacklevel=2)
    if np.mean(sensitivity + specificity) < 1.0:  # the classes came out swapped: judges worse than chance
        q, prevalence = 1.0 - q, 1.0 - prevalence
        sensitivity, specificity = 1.0 - specificity, 1.0 - sensitivity
    return JudgeModel(float(prevalence), sensitivity, specificity, q, converged, n_iter, log_likelihood)


# --- the estimator --------------------------------------------------------------------------------------------


def _wmean(x: np.ndarray, w: np.ndarray) -> float:
    return float(w @ x / w.sum())


def _tuned_lambda(y: np.ndarray, f: np.ndarray, w: np.ndarray) -> float:
    """Cov(y, f) / Var(f) on the labeled items (w: items per row), clipped to LAMBDA_RANGE; 0 when f does not vary
    there."""
    if w.sum() < 2:
        return 0.0
    fc = f - _wmean(f, w)
    var_f = float(w @ fc**2)
    if var_f <= 1e-12 * w.sum():
        return 0.0
    cov = float(w @ ((y - _wmean(y, w)) * fc))
    return float(np.clip(cov / var_f, *LAMBDA_RANGE))


def _residuals(y: np.ndarray, f: np.ndarray, lam: float, labeled: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per row (all): y_i - lam f_i - mean_L(y - lam f) on labeled rows, 0 elsewhere."""
    out = np.zeros(len(labeled))
    if labeled.any():
        e = y[labeled] - lam * f[labeled]
        out[labeled] = e - _wmean(e, w[labeled])
    return out


def _mean_variance(
    residuals: np.ndarray,
    cluster: np.ndarray | None,
    labeled: np.ndarray,
    w: np.ndarray,
    ddof: int = 1,
    pseudo_variance: float = 0.0,
) -> tuple[float, int]:
    """Variance of the labeled items' mean of a quantity from its centred residuals (eq. 2 without fpc): the sums
    within the G clusters holding a labeled item, squared, with `ddof` parameters fitted and PSEUDO_ITEMS pseudo-
    items of variance `pseudo_variance` (0: none)
        V = G / n^2 * (sum_g S_g^2 + k v0 n / G) / (G - ddof + k).
    Without clusters (G = n: every item its own; a row of w items adds w r^2) and k = 0 this is S^2 / n."""
    n = float(w[labeled].sum())
    if cluster is None:
        g = int(round(n))
        sum_sq = float(w @ residuals**2)
    else:
        g = int(len(np.unique(cluster[labeled]))) if n else 0
        sum_sq = float((np.bincount(cluster, weights=residuals * w) ** 2).sum())
    if g <= ddof:
        return float("nan"), g
    k = PSEUDO_ITEMS if pseudo_variance > 0 else 0.0
    return float(g / n**2 * (sum_sq + k * pseudo_variance * n / g) / (g - ddof + k)), g


def _labeled_mean_variance(values: np.ndarray, cluster: np.ndarray | None, labeled: np.ndarray, w: np.ndarray) -> float:
    """Cluster-robust variance of the labeled items' mean of `values` (for eq. 3)."""
    resid = np.zeros(len(labeled))
    resid[labeled] = values[labeled] - _wmean(values[labeled], w[labeled])
    return _mean_variance(resid, cluster, labeled, w)[0]


def _pseudo_variance(y: np.ndarray, w: np.ndarray) -> float:
    """v0 = p (1 - p) at p = (passes + 1) / (n + 2): the labels-only variance, what a residual's variance is at
    most worth when lambda = 0; PSEUDO_ITEMS of it keep a small sample whose residuals happen to be all zero from
    a zero-width interval (Wilson's remedy for the same failure of the plain binomial interval)."""
    p = (float(w @ y) + 1.0) / (float(w.sum()) + 2.0)
    return p * (1.0 - p)


def _interval(estimate: float, variance: float, dof: int, confidence_level: float, lo: float, hi: float) -> Interval:
    if not math.isfinite(variance) or dof < 1:
        return Interval(estimate, lo, hi)
    half = float(stats.t.ppf(0.5 + confidence_level / 2, dof)) * math.sqrt(max(variance, 0.0))
    return Interval(estimate, min(hi, max(lo, estimate - half)), max(lo, min(hi, estimate + half)))


def wilson_fpc(successes: int, n: int, confidence_level: float, population: int | None = None) -> Interval:
    """Wilson's score interval for successes / n; with `population` N, n is replaced by n / (1 - n/N), the
    finite-population correction of the variance (all items labeled: the exact rate)."""
    if n == 0:
        return Interval(float("nan"), 0.0, 1.0)
    p = successes / n
    fpc = 1.0 if population is None else 1.0 - n / population
    if fpc <= 0:
        return Interval(p, p, p)
    m = n / fpc
    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class _Parts:
    """What `compare_scores` needs of one system's estimate, besides its result."""

    result: ScoreResult
    influence: np.ndarray  # residual / n on labeled items: the item's share in the estimate's error
    y: np.ndarray
    labeled: np.ndarray
    ddof: int


def _estimate(
    verdicts: np.ndarray,
    gold: np.ndarray,
    positive: Any,
    cluster: np.ndarray | None,
    w: np.ndarray,
    confidence_level: float,
    target: str,
    lambda_: float | None,
    use_judges: bool,
) -> _Parts:
    n_items = int(w.sum())
    labeled = gold >= 0
    n = int(w[labeled].sum())
    if n < 2:
        raise ParameterError("gold", f"needs at least 2 labeled items to give an interval; got {n}")
    y = np.where(labeled, gold, 0).astype(float)
    model = fit_dawid_skene(verdicts, w) if use_judges and verdicts.shape[1] > 0 else None
    f = model.posterior if model is not None else np.full(len(w), 0.5)
    maj = majority(verdicts) if verdicts.shape[1] > 0 else np.full(len(w), 0.5)
    wl = w[labeled]
    lam = _tuned_lambda(y[labeled], f[labeled], wl) if lambda_ is None else float(lambda_)
    if not LAMBDA_RANGE[0] <= lam <= LAMBDA_RANGE[1]:
        raise ParameterError("lambda_", f"must be between {LAMBDA_RANGE[0]:g} and {LAMBDA_RANGE[1]:g}; got {lam}")
    theta = lam * _wmean(f, w) + _wmean(y[labeled] - lam * f[labeled], wl)  # eq. (1)
    resid = _residuals(y, f, lam, labeled, w)
    ddof = 2 if lambda_ is None and lam != 0 else 1  # a tuned lambda is a second fitted parameter
    variance, g = _mean_variance(resid, cluster, labeled, w, ddof, _pseudo_variance(y[labeled], wl))
    fpc = 1.0 - n / n_items if target == "set" else 1.0
    judges_say = _wmean(maj, w)
    var_bias = variance * fpc
    var_score = variance * fpc
    if target == "new":  # eq. (3): this set's own mean around the population's
        var_score += _labeled_mean_variance(y, cluster, labeled, w) * n / n_items
        var_bias += _labeled_mean_variance(maj - y, cluster, labeled, w) * n / n_items
    raw = _interval(theta, var_score, g - ddof, confidence_level, 0.0, 1.0)  # around theta, then clipped
    score = replace(raw, estimate=min(1.0, max(0.0, theta)))
    bias = _interval(judges_say - theta, var_bias, g - ddof, confidence_level, -1.0, 1.0)
    labels_only = wilson_fpc(
        int(round(float(wl @ y[labeled]))), n, confidence_level, n_items if target == "set" else None
    )
    result = ScoreResult(
        score=score,
        judges_say=judges_say,
        judges_bias=bias,
        labels_only=labels_only,
        labeled_items=n,
        unlabeled_items=n_items - n,
        judges=int(verdicts.shape[1]),
        clusters=None if cluster is None else g,
        positive=positive,
        confidence_level=float(confidence_level),
        target=target,
        method=METHOD if model is not None and lam != 0 else METHOD_LABELS_ONLY,
        lambda_=lam,
        model=model,
    )
    return _Parts(result, resid / n, y, labeled, ddof)


def score(
    verdicts: np.ndarray,
    gold: np.ndarray,
    positive: Any = 1,
    *,
    counts: np.ndarray | None = None,
    clusters: Sequence[Any] | np.ndarray | None = None,
    confidence_level: float = 0.9,
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
    return _estimate(v, g, positive, cluster, w, confidence_level, target, lambda_, True).result


def resolve_positive(classes: Sequence[str], value: str | None = None) -> int:
    """The class code that passes: `value` (the class as written, case-insensitive; --positive), else the one class
    named like a pass (true, pass, yes, 1, correct, ...); an error names the classes when it cannot tell."""
    folded = [str(c).strip().lower() for c in classes]
    if value is not None:
        want = str(value).strip().lower()
        if want in folded:
            return folded.index(want)
        raise ParameterError(
            "positive",
            "{0} "
            + f"{value!r} is not a class of the gold; the classes are {', '.join(map(str, classes))}"
            .replace("{", "{{").replace("}", "}}"),
        )
    found = [k for k, c in enumerate(folded) if c in POSITIVE_NAMES]
    if len(found) == 1:
        return found[0]
    raise ParameterError(
        "positive",
        "cannot tell which class of the gold passes among "
        + (", ".join(map(str, classes)) or "no classes").replace("{", "{{").replace("}", "}}")
        + "; name it with {0} (e.g. {0} "
        + (str(classes[0]) if classes else "pass").replace("{", "{{").replace("}", "}}")
        + ")",
    )


def score_votes(
    votes: Votes,
    positive: str | None = None,
    *,
    clusters: Sequence[Any] | np.ndarray | None = None,
    confidence_level: float = 0.9,
    target: str = "set",
    rng: np.random.Generator | None = None,
) -> ScoreResult:
    """`score` on a dataset's votes (inputs.Votes: every item's verdicts, gold on some), the pass class resolved
    from its name (`resolve_positive`); `clusters` one id per item in the votes' item order. The result's
    `positive` is the class as written."""
    code = resolve_positive(votes.classes, positive)
    options: dict[str, Any] = {"confidence_level": confidence_level, "target": target, "rng": rng}
    if clusters is None:  # patterns with counts: what 10^7 rows cost is what their distinct patterns cost
        result = score(votes.patterns, votes.gold, code, counts=votes.counts, **options)
    else:
        verdicts, gold = votes.per_item()
        result = score(verdicts, gold, code, clusters=clusters, **options)
    return replace(result, positive=votes.classes[code])


def align_items(ids_a: Sequence[Any], ids_b: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in a, in b) of the item ids the two systems share, in a's order; a repeated id is an error."""
    for name, ids in (("ids_a", ids_a), ("ids_b", ids_b)):
        if len(set(ids)) != len(ids):
            raise ParameterError(name, "repeats an item id; a paired comparison needs each item once per system")
    where_b = {item: k for k, item in enumerate(ids_b)}
    pairs = [(k, where_b[item]) for k, item in enumerate(ids_a) if item in where_b]
    if not pairs:
        raise ParameterError(("ids_a", "ids_b"), "{0} and {1} share no item id; a comparison needs shared items")
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
    confidence_level: float = 0.9,
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
        raise ParameterError(("verdicts_a", "verdicts_b"), "{0} and {1} must hold the same items (align_items)")
    cluster = _cluster_codes(clusters, ga.shape[0])
    w = np.ones(ga.shape[0])
    pa = _estimate(va, ga, positive, cluster, w, confidence_level, target, None, True)
    pb = _estimate(vb, gb, positive, cluster, w, confidence_level, target, None, True)
    both = pa.labeled & pb.labeled
    either = pa.labeled | pb.labeled
    n_either = int(either.sum())
    ddof = max(pa.ddof, pb.ddof)
    if both.sum() >= 2:  # the labels-only variance of y_a - y_b: at most the discordance, smoothed as in v0
        v0 = (float((pa.y[both] != pb.y[both]).sum()) + 1.0) / (int(both.sum()) + 2.0)
    else:
        v0 = _pseudo_variance(pa.y[pa.labeled], w[pa.labeled]) + _pseudo_variance(pb.y[pb.labeled], w[pb.labeled])
    variance, g = _mean_variance((pa.influence - pb.influence) * n_either, cluster, either, w, ddof, v0)
    n_items = ga.shape[0]
    if target == "set":
        variance *= 1.0 - min(pa.labeled.sum(), pb.labeled.sum()) / n_items
    elif both.sum() >= 2:
        variance += _labeled_mean_variance(pa.y - pb.y, cluster, both, w) * int(both.sum()) / n_items
    else:
        variance += _labeled_mean_variance(pa.y, cluster, pa.labeled, w) * int(pa.labeled.sum()) / n_items
        variance += _labeled_mean_variance(pb.y, cluster, pb.labeled, w) * int(pb.labeled.sum()) / n_items
    diff = pa.result.score.estimate - pb.result.score.estimate
    interval = _interval(diff, variance, g - ddof, confidence_level, -1.0, 1.0)
    return ComparisonResult(interval, pa.result, pb.result, n_items, int(both.sum()), float(confidence_level), target)
