"""The majority-vote error from every item's verdicts: labeled items and unlabeled ones (issue 17).

Input: the verdicts of N judges on every item (an int array items x judges of class codes, -1 = no verdict) and
gold for some items (-1 = unlabeled). The quantity is the one `fit` reports, over ALL items with a verdict: the
mean over items of the exact hypergeometric probability that k judges drawn from the item's own judges err (fewer
than half of them give the gold class; a tie, exactly half, is half an error). For k above an item's number of
judges, the labels-only mixture's posterior predictive fills the missing judges (as `fit` does).

The estimator ("vote split", docs/UNLABELED.md and ../shared/METHOD.md): an item's verdicts give its vote split:
n verdicts, the largest class holds m of them (t classes tied at the top). If the gold class is the top class,
S = m judges are correct; if not, S is the count of the class that is gold. So the split leaves one unknown per
item, whether the plurality is wrong, and

    P(plurality wrong | split) = sigmoid(b0 + b1 x),   x = (2m - n) / n   (the margin of the split, -1..1)

with a weak Gaussian prior on (b0, b1) and the posterior from the labeled items, exact on a grid. When the
plurality is wrong the gold class is one of the other voted classes, in proportion to their votes (binary: the
minority, S = n - m), or a class no judge gave (S = 0) when no other class has votes. Labeled items contribute
their exact error; unlabeled items their expected error under the posterior (a finite-population estimate).
The interval comes from posterior draws of (b0, b1) plus the unlabeled items' own Bernoulli outcomes (a normal
approximation of their sum), so it is an interval for the error on these items.

Fallback: when the labels give no evidence that the split predicts a wrong plurality (see `_guard`), the
labels-only estimate (`fit.analyse`, the default estimate of the labeled histogram) is returned, and
`method` says so.

Speed: unlabeled items are aggregated to distinct sorted class-count patterns, and the patterns to distinct
margins x, before any model work: 10^5 items cost a few milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.optimize import minimize

from .counts import CountTable
from .distributions import log_beta_binomial, logsumexp
from .errors import ParameterError
from .fit import FitResult, analyse
from .posterior import cell_errors
from .settings import FitSettings

if TYPE_CHECKING:
    from .inputs.dataset import Votes

METHOD_VOTES = "vote_split"
METHOD_LABELS = "labels_only"
DEFAULT_KS = tuple(range(1, 12))


@dataclass(frozen=True)
class SplitPrior:
    """Independent Gaussian priors on b0 (logit of a wrong plurality at an even split) and b1 (the slope in the
    margin x); the grid that carries the posterior."""

    mean0: float = 0.0
    sd0: float = 1.5
    mean1: float = -1.0
    sd1: float = 2.0
    models: tuple[str, ...] = ("flat", "folded", "constant")
    weighted: bool = False
    tau: float = 1.0
    nodes: int = 15
    grid0: tuple[float, float, int] = (-6.0, 6.0, 61)
    grid1: tuple[float, float, int] = (-16.0, 8.0, 81)

    def to_dict(self) -> dict[str, Any]:
        return {"b0": {"mean": self.mean0, "sd": self.sd0}, "b1": {"mean": self.mean1, "sd": self.sd1},
                "models": list(self.models), "tau": self.tau}


@dataclass(frozen=True)
class VoteRow:
    """Majority-vote error at k judges over all items (fractions in [0, 1]) and the labels-only estimate; extrapolated:
    some item has fewer than k judges (its missing judges come from the labels-only mixture, as in `fit`)."""

    k: int
    estimate: float
    low: float
    high: float
    labels_only: float
    labels_only_low: float
    labels_only_high: float
    extrapolated: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "labels_only": self.labels_only,
            "labels_only_low": self.labels_only_low,
            "labels_only_high": self.labels_only_high,
            "extrapolated": self.extrapolated,
        }


@dataclass(frozen=True)
class SplitModel:
    """The fitted vote-split model: posterior means of (b0, b1), the folded Beta-Binomial (a, b) behind the
    "folded" model's offsets (None without it), each model's posterior probability, and the labeled splits the
    likelihood saw (those whose plurality could be wrong) with how many had a wrong plurality."""

    b0: float
    b1: float
    folded: tuple[float, float] | None
    model_probabilities: dict[str, float]
    labeled_splits: int
    labeled_wrong: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "b0": self.b0,
            "b1": self.b1,
            "folded_beta_binomial": None if self.folded is None else {"alpha": self.folded[0], "beta": self.folded[1]},
            "model_probabilities": dict(self.model_probabilities),
            "labeled_splits": self.labeled_splits,
            "labeled_wrong": self.labeled_wrong,
        }


@dataclass(frozen=True)
class VoteEstimate:
    """The error table over all items, which method gave it and why, and the counts it rests on."""

    ks: tuple[int, ...]
    rows: tuple[VoteRow, ...]
    method: str
    reason: str
    labeled_items: int
    unlabeled_items: int
    dropped_items: int
    confidence_level: float
    prior: SplitPrior
    model: SplitModel | None
    labels_only: FitResult = field(repr=False)

    @property
    def used_unlabeled(self) -> bool:
        return self.method == METHOD_VOTES

    def row(self, k: int) -> VoteRow:
        for r in self.rows:
            if r.k == k:
                return r
        raise ParameterError("ks", f"does not hold k = {k} (computed: {list(self.ks)})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reason": self.reason,
            "items": self.labeled_items,
            "unlabeled_items": self.unlabeled_items,
            "dropped_items": self.dropped_items,
            "confidence_level": self.confidence_level,
            "prior": self.prior.to_dict(),
            "model": None if self.model is None else self.model.to_dict(),
            "error_rates": [r.to_dict() for r in self.rows],
        }

    def fit_keys(self) -> dict[str, Any]:
        """What `fit`'s JSON (and a saved fit) adds when the data has unlabeled items: their count, and how the
        estimate used them ("items" stays the labeled count)."""
        return {
            "unlabeled_items": self.unlabeled_items,
            "unlabeled": {
                "method": self.method,
                "reason": self.reason,
                "used": self.used_unlabeled,
                "labeled_items": self.labeled_items,
                "unlabeled_items": self.unlabeled_items,
                "dropped_items": self.dropped_items,
                "prior": self.prior.to_dict(),
                "model": None if self.model is None else self.model.to_dict(),
            },
        }


# --- input checks -------------------------------------------------------------------------------------

def _check(votes: Any, gold: Any, ks: tuple[int, ...], confidence_level: float, n_classes: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    v = np.asarray(votes)
    g = np.asarray(gold)
    if v.ndim != 2:
        raise ParameterError("votes", f"must be a 2-D array (items x judges); got {v.ndim} dimension(s)")
    if g.ndim != 1 or g.shape[0] != v.shape[0]:
        raise ParameterError(("gold", "votes"), f"{{0}} must hold one entry per item of {{1}} ({v.shape[0]}); got shape {g.shape}")
    for name, a in (("votes", v), ("gold", g)):
        if a.size and not np.issubdtype(a.dtype, np.integer):
            if not (np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a)) and np.all(a == np.round(a))):
                raise ParameterError(name, "must hold integer class codes (-1 = none)")
        if a.size and int(a.min()) < -1:
            raise ParameterError(name, f"holds {int(a.min())}; class codes are >= 0 and -1 means none")
    v = v.astype(np.int64, copy=False)
    g = g.astype(np.int64, copy=False)
    if not ks or any((not isinstance(k, (int, np.integer))) or k < 1 for k in ks):
        raise ParameterError("ks", f"must be positive integers; got {list(ks)}")
    if not 0 < confidence_level < 1:
        raise ParameterError("confidence_level", f"must be between 0 and 1 (exclusive); got {confidence_level}")
    seen = max(int(v.max()) if v.size else -1, int(g.max()) if g.size else -1) + 1
    classes = max(seen, 2) if n_classes is None else int(n_classes)
    if classes < seen or classes < 2:
        raise ParameterError("n_classes", f"must be at least 2 and cover every class code (largest {seen - 1}); got {n_classes}")
    return v, g, classes


def _check_counts(counts: Any, rows: int) -> np.ndarray:
    if counts is None:
        return np.ones(rows, dtype=np.int64)
    c = np.asarray(counts)
    if c.shape != (rows,):
        raise ParameterError(("counts", "votes"), f"{{0}} must hold one entry per row of {{1}} ({rows}); got shape {c.shape}")
    if c.size and (not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(c != np.round(c))):
        raise ParameterError("counts", "must be non-negative whole numbers (items per row)")
    return c.astype(np.int64)


# --- patterns -----------------------------------------------------------------------------------------

def class_counts(votes: np.ndarray, n_classes: int) -> np.ndarray:
    """counts[item, c] = how many judges gave class c (no verdict, -1, is not counted)."""
    items = votes.shape[0]
    flat = (np.arange(items)[:, None] * n_classes + votes)[votes >= 0]
    return np.bincount(flat, minlength=items * n_classes).reshape(items, n_classes)


def distinct_patterns(
    counts: np.ndarray, inverse: bool = False, extra: np.ndarray | None = None, weights: np.ndarray | None = None
) -> Any:
    """The distinct rows of class counts sorted in descending order (the vote splits), how many items have each,
    and (inverse=True) each item's row; `weights`: how many items each input row stands for.

    Rows are encoded as one integer each (base: largest count + 1) so that 10^5 items aggregate in milliseconds;
    np.unique over rows is the fallback when the code would not fit in 63 bits.
    """
    srt = np.sort(counts, axis=1)[:, ::-1]
    if extra is not None:  # a further non-negative integer key per item, kept as the last column
        srt = np.column_stack([srt, extra])
    if srt.shape[0] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return (srt, empty, empty) if inverse else (srt, empty)
    width = srt.shape[1]
    base = int(srt.max()) + 1
    if width * math.log2(base) < 62:
        powers = base ** np.arange(width, dtype=np.int64)
        _codes, first, inv, how_many = np.unique(srt @ powers, return_index=True, return_inverse=True, return_counts=True)
        rows = srt[first]
    else:
        rows, inv, how_many = np.unique(srt, axis=0, return_inverse=True, return_counts=True)
    inv = np.asarray(inv).ravel()
    if weights is not None:  # rows that stand for several items each
        how_many = np.bincount(inv, weights=weights, minlength=len(rows)).astype(np.int64)
    return (rows, how_many, inv) if inverse else (rows, how_many)


@dataclass(frozen=True)
class Splits:
    """Per vote split (a row of sorted class counts): its margin x, the offset of the logit of a wrong plurality,
    whether the plurality is right whatever the gold class, and, when wrong, the correct counts S it may have and
    their probabilities."""

    x: np.ndarray
    offset: np.ndarray
    always_right: np.ndarray
    alternatives: tuple[tuple[np.ndarray, np.ndarray], ...]


def _splits(rows: np.ndarray, n_classes: int, bb: tuple[float, float] | None) -> Splits:
    """Without `bb`: the gold class of a wrong plurality is another voted class in proportion to its votes, or a
    class nobody gave (S = 0) when no other class has votes; offset 0. With `bb` = (a, b): each candidate gold
    class is weighted by BB(its count | n, a, b) (a class nobody gave: BB(0), once per such class), and the
    offset is log P(gold not at the top) - log P(gold at the top) under that Beta-Binomial."""
    xs, offs, right, alts = [], [], [], []
    for row in rows:
        n = int(row.sum())
        m = int(row[0])
        t = int((row == m).sum())
        voted = int((row > 0).sum())
        others = row[t:][row[t:] > 0].astype(np.int64)
        unvoted = n_classes - voted
        xs.append((2 * m - n) / n)
        if t >= n_classes:
            right.append(True)
            offs.append(0.0)
            alts.append((np.zeros(0, dtype=np.int64), np.zeros(0)))
            continue
        right.append(False)
        if bb is None:
            if others.size:
                alts.append((others, others / others.sum()))
            else:
                alts.append((np.zeros(1, dtype=np.int64), np.ones(1)))
            offs.append(0.0)
            continue
        a, b = bb
        cand = np.concatenate([others, np.zeros(1 if unvoted > 0 else 0, dtype=np.int64)])
        logw = log_beta_binomial(cand, n, a, b) + np.concatenate([np.zeros(others.size), np.log([unvoted] if unvoted > 0 else [])])
        top = math.log(t) + float(log_beta_binomial(np.array(m), n, a, b))
        lse = float(logsumexp(logw))
        alts.append((cand, np.exp(logw - lse)))
        offs.append(float(np.clip(lse - top, -30.0, 30.0)))
    return Splits(np.round(np.array(xs, dtype=float), 12), np.array(offs, dtype=float), np.array(right, dtype=bool), tuple(alts))


def _fit_folded(k_lab: np.ndarray, s_lab: np.ndarray, rows: np.ndarray, count: np.ndarray, n_classes: int,
                settings: FitSettings | None, w_lab: np.ndarray | None = None) -> tuple[float, float]:
    """MAP single Beta-Binomial of the correct count S from every item: labeled items by their S, unlabeled ones by
    the likelihood of their split (S is the top count if the gold class is at the top, else another class's
    count: the sum of those probabilities). The weak prior of `fit` (N(0, sd^2) on log a and log b)."""
    sd = (settings.prior if settings is not None else FitSettings().prior).log_param_sd
    cells, inv = np.unique(np.column_stack([k_lab, s_lab]), axis=0, return_inverse=True)
    ccount = np.bincount(np.asarray(inv).ravel(), weights=w_lab, minlength=len(cells))
    terms = []  # per unlabeled pattern: (n, candidate S values, their multiplicities)
    for row in rows:
        n = int(row.sum())
        m = int(row[0])
        t = int((row == m).sum())
        if t >= n_classes:
            terms.append((n, np.array([m]), np.array([1.0])))
            continue
        others = row[t:][row[t:] > 0]
        unvoted = n_classes - int((row > 0).sum())
        cand = np.concatenate([[m], others, [0] if unvoted else []]).astype(float)
        mult = np.concatenate([[t], np.ones(others.size), [unvoted] if unvoted else []]).astype(float)
        terms.append((n, cand, mult))

    # every term flattened once: one vectorised pmf per evaluation, a log-sum-exp per pattern by reduceat
    t_n = np.concatenate([np.full(len(cand), n, dtype=float) for n, cand, _ in terms]) if terms else np.zeros(0)
    t_s = np.concatenate([cand for _, cand, _ in terms]) if terms else np.zeros(0)
    t_logm = np.log(np.concatenate([mult for _, _, mult in terms])) if terms else np.zeros(0)
    starts = np.cumsum([0] + [len(cand) for _, cand, _ in terms[:-1]]).astype(np.int64) if terms else np.zeros(0, dtype=np.int64)
    t_count = np.asarray(count, dtype=float)

    def nll(theta: np.ndarray) -> float:
        a, b = np.exp(theta)
        out = -float(np.dot(ccount, log_beta_binomial(cells[:, 1], cells[:, 0], a, b)))
        if len(t_s):
            lv = t_logm + log_beta_binomial(t_s, t_n, a, b)
            top = np.maximum.reduceat(lv, starts)
            lse = top + np.log(np.add.reduceat(np.exp(lv - np.repeat(top, np.diff(np.append(starts, len(lv))))), starts))
            out -= float(np.dot(t_count, lse))
        return out + float(np.sum(theta**2)) / (2 * sd * sd)

    wl = np.ones(len(s_lab)) if w_lab is None else w_lab
    p = float((np.dot(wl, s_lab) + 1) / (np.dot(wl, k_lab) + 2))
    best = None
    for conc in (2.0, 10.0):
        # converged tightly: at the default tolerance the optimum moved by ~1e-5 between OpenBLAS kernels, and the
        # interval's posterior draws (cut points of a cumulative sum) moved with it in the 4th digit
        res = minimize(nll, np.log([p * conc, (1 - p) * conc]), method="L-BFGS-B", bounds=[(-8.0, 10.0)] * 2, jac="3-point",
                       options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 500})
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    a, b = np.exp(best.x)
    return float(a), float(b)


# --- the grid posterior ------------------------------------------------------------------------------

def _grid(prior: SplitPrior, slope: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid points (b0, b1) and their log prior, normalised to total mass 1; slope=False: b1 = 0 only."""
    b0 = np.linspace(*prior.grid0[:2], int(prior.grid0[2]))
    b1 = np.linspace(*prior.grid1[:2], int(prior.grid1[2])) if slope else np.zeros(1)
    B0, B1 = np.meshgrid(b0, b1, indexing="ij")
    logprior = -0.5 * ((B0 - prior.mean0) / prior.sd0) ** 2
    if slope:
        logprior = logprior - 0.5 * ((B1 - prior.mean1) / prior.sd1) ** 2
    logprior = logprior - float(logsumexp(logprior.ravel()))
    return B0.ravel(), B1.ravel(), logprior.ravel()


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = -np.logaddexp(0.0, -z)
    return out


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * z))
    return out


_BLOCK = 16
_STEPS = 50  # the weighted margin is kept to 1/50


def _weighted_margin_code(votes: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per item, the plurality's margin with each judge weighted by its log odds of agreeing with the other judges'
    plurality (over every item, labeled or not: no gold needed), coded as an integer 0..2 * _STEPS.

    x = (sum of the weights of the judges in the plurality - those of the others) / (those of all who voted)."""
    items, judges = votes.shape
    top = counts.argmax(axis=1)
    agree = np.zeros(judges)
    voted = np.zeros(judges)
    rows = np.arange(items)
    for j in range(judges):
        vj = votes[:, j]
        has = vj >= 0
        others = counts[has].copy()
        others[np.arange(int(has.sum())), vj[has]] -= 1
        best = others.max(axis=1)
        n_best = (others == best[:, None]).sum(axis=1)
        mine = others[np.arange(int(has.sum())), vj[has]]
        agree[j] = float(np.sum(weights[has] * np.where(mine == best, 1.0 / n_best, 0.0)))
        voted[j] = float(weights[has].sum())
    acc = (agree + 1.0) / (voted + 2.0)
    w = np.maximum(np.log(acc / (1 - acc)), 0.05)
    valid = votes >= 0
    sign = np.where(votes == top[:, None], 1.0, -1.0) * valid
    x = (sign * w).sum(axis=1) / np.maximum((valid * w).sum(axis=1), 1e-12)
    del rows
    code: np.ndarray = np.rint((np.clip(x, -1.0, 1.0) + 1.0) * _STEPS).astype(np.int64)
    return code


class _SplitPosterior:
    """Posterior over (model, b0, b1) on a grid, with a random effect u ~ N(0, tau^2) per split integrated by
    Gauss-Hermite quadrature: P(wrong | split j) = sigmoid(b0 + b1 x_j + offset_model[j] + u_j). Each model
    ("flat": offset 0; "folded": the folded Beta-Binomial's log odds; "constant": offset 0 and b1 = 0, the split
    says nothing about correctness) has prior mass 1 / len(models), so the weights average the models by the
    labels' marginal likelihood."""

    def __init__(self, x: np.ndarray, offsets: np.ndarray, wrong: np.ndarray, trials: np.ndarray, can_err: np.ndarray,
                 prior: SplitPrior):
        n_models = offsets.shape[0]
        grids = [_grid(prior, slope=m != "constant") for m in prior.models]
        self.b0 = np.concatenate([g[0] for g in grids])
        self.b1 = np.concatenate([g[1] for g in grids])
        self.model = np.concatenate([np.full(len(g[0]), i) for i, g in enumerate(grids)])
        self.models = prior.models
        self.x, self.offsets, self.wrong, self.trials = x, offsets, wrong, trials
        if prior.tau > 0:
            nodes, weights = np.polynomial.hermite_e.hermegauss(prior.nodes)
            self.u = prior.tau * nodes
            self.log_omega = np.log(weights / weights.sum())
        else:
            self.u, self.log_omega = np.zeros(1), np.zeros(1)
        lp = np.concatenate([g[2] for g in grids]) - math.log(n_models)
        for j in np.nonzero((trials > 0) & can_err)[0]:
            lp += self._log_marginal(int(j), slice(None))
        w = np.exp(lp - lp.max())
        # keep the grid points that carry posterior mass (the rest weigh < 1e-12 of the largest): every later step
        # costs grid x splits x nodes
        live = w > 1e-12
        self.b0, self.b1, self.model = self.b0[live], self.b1[live], self.model[live]
        self.w = w[live] / w[live].sum()
        self._live = np.nonzero(live)[0]
        self._w_full = np.where(live, w, 0.0) / w[live].sum()

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """`n` posterior draws (positions in the kept grid), sampled over the whole grid with the dropped points at
        weight 0: a point whose weight sits at the 1e-12 cut and falls on the other side on another CPU's BLAS
        kernel then moves the draws by ~1e-12, instead of shifting every later index (the intervals differed in
        their 4th digit between OpenBLAS kernels)."""
        full: np.ndarray = rng.choice(len(self._w_full), size=n, p=self._w_full)
        return np.searchsorted(self._live, full)

    def _z(self, j: int, g: Any) -> np.ndarray:
        z: np.ndarray = self.b0[g] + self.b1[g] * self.x[j] + self.offsets[self.model[g], j]
        return z

    def _log_lik_nodes(self, j: int, g: Any) -> np.ndarray:
        zu = self._z(j, g)[:, None] + self.u[None, :]
        out: np.ndarray = self.wrong[j] * _log_sigmoid(zu) + (self.trials[j] - self.wrong[j]) * _log_sigmoid(-zu)
        return out

    def _log_marginal(self, j: int, g: Any) -> np.ndarray:
        out: np.ndarray = logsumexp(self.log_omega[None, :] + self._log_lik_nodes(j, g), axis=1)
        return out

    def p_wrong(self, splits: np.ndarray, idx: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(posterior mean of P(wrong) per split, one draw per posterior draw `idx` and split)."""
        mean = np.zeros(len(splits))
        draws = np.zeros((len(idx), len(splits)))
        omega = np.exp(self.log_omega)
        cum_prior = np.cumsum(omega)
        for c, j in enumerate(splits):
            p = _sigmoid(self._z(j, slice(None))[:, None] + self.u[None, :])
            if self.trials[j] > 0:
                ln = self.log_omega[None, :] + self._log_lik_nodes(j, slice(None))
                cond = np.exp(ln - logsumexp(ln, axis=1)[:, None])  # grid x nodes: the u posterior given (model, b0, b1)
                mean[c] = float(self.w @ (cond * p).sum(axis=1))
                cum = np.cumsum(cond[idx], axis=1)
                q = np.minimum((cum < rng.random(len(idx))[:, None] * cum[:, -1:]).sum(axis=1), len(self.u) - 1)
            else:  # no labeled item with this split: u keeps its prior, the same node weights on every grid point
                mean[c] = float(self.w @ (p @ omega))
                # (cum < t).sum() of the row-wise cumsum, as one search in the shared cumsum: the same draws
                q = np.minimum(np.searchsorted(cum_prior, rng.random(len(idx)) * cum_prior[-1], side="left"), len(self.u) - 1)
            draws[:, c] = p[idx, q]
        return mean, draws

    def model_probabilities(self) -> dict[str, float]:
        return {m: float(self.w[self.model == i].sum()) for i, m in enumerate(self.models)}


# --- the estimate -------------------------------------------------------------------------------------

def estimate_errors(
    votes: Any,
    gold: Any,
    ks: tuple[int, ...] = DEFAULT_KS,
    confidence_level: float = 0.9,
    rng: np.random.Generator | None = None,
    *,
    n_classes: int | None = None,
    settings: FitSettings | None = None,
    labels_only: FitResult | None = None,
    prior: SplitPrior = SplitPrior(),
    n_draws: int = 4000,
    use_unlabeled: bool = True,
    guard: bool = True,
    counts: Any = None,
) -> VoteEstimate:
    """The majority-vote error at each k over every item with a verdict, from the labeled items' gold and every
    item's verdicts (module docstring). `rng` is required (it seeds the fits and the interval's draws).

    `labels_only`: the labels-only `fit.analyse` result of these labeled items, if already computed (its
    settings' ks must equal `ks`). `use_unlabeled=False` gives the labels-only estimate over the labeled items.
    `counts`: how many items each row of (votes, gold) stands for (a reader's distinct patterns; default 1 each).
    """
    if rng is None:
        raise ParameterError("rng", "is required: pass a numpy Generator (numpy.random.default_rng(seed))")
    ks = tuple(int(k) for k in ks)
    v, g, classes = _check(votes, gold, ks, confidence_level, n_classes)
    weights = _check_counts(counts, v.shape[0])
    counts = class_counts(v, classes)
    n_all = counts.sum(axis=1)
    keep = (n_all > 0) & (weights > 0)
    dropped = int(weights[n_all == 0].sum())
    counts, g, n_all, wt = counts[keep], g[keep], n_all[keep], weights[keep]
    lab = g >= 0
    n_lab = int(wt[lab].sum())
    if n_lab == 0:
        raise ParameterError("gold", "labels no item that has a verdict: at least one labeled item is needed")
    s_lab = counts[lab, g[lab]] if n_lab else np.zeros(0, dtype=np.int64)
    k_lab = n_all[lab]
    w_lab = wt[lab]
    cells = np.zeros((int(max(k_lab.max(), 1)) + 1,) * 2, dtype=np.int64)
    np.add.at(cells, (k_lab, s_lab), w_lab)
    table = CountTable(cells)
    if labels_only is None:
        fs = settings if settings is not None else FitSettings(ks=ks, confidence_level=confidence_level)
        if tuple(fs.ks) != ks or fs.confidence_level != confidence_level:
            raise ParameterError(("settings", "ks"), "{0} must use the same ks and confidence_level as the call")
        labels_only = analyse(table, fs, rng)
    elif tuple(labels_only.settings.ks) != ks:
        raise ParameterError(("labels_only", "ks"), "{0} was computed for other ks than {1}")
    lo_rows = labels_only.rows
    mixture = labels_only.fit.mixture
    n_unl = int(wt[~lab].sum())
    fewest_judges = int(n_all.min())  # k above it: some item's missing judges come from the labels-only mixture

    def labels_only_estimate(method_reason: str, model: SplitModel | None) -> VoteEstimate:
        rows = tuple(
            VoteRow(k, r.estimate, r.low, r.high, r.estimate, r.low, r.high, k > fewest_judges) for k, r in zip(ks, lo_rows)
        )
        return VoteEstimate(ks, rows, METHOD_LABELS, method_reason, n_lab, n_unl, dropped, confidence_level, prior,
                            model, labels_only)

    if not use_unlabeled:
        return labels_only_estimate("unlabeled items not used (asked)", None)
    if n_unl == 0:
        return labels_only_estimate("no unlabeled items", None)

    errors_by_n: dict[int, np.ndarray] = {}

    def err(n: int) -> np.ndarray:
        if n not in errors_by_n:
            errors_by_n[n] = cell_errors(n, mixture, ks)
        return errors_by_n[n]

    # labeled items: their exact error
    labeled_sum = np.zeros(len(ks))
    lab_cells, cell_inv = np.unique(np.column_stack([k_lab, s_lab]), axis=0, return_inverse=True)
    for (kk, ss), c in zip(lab_cells, np.bincount(np.asarray(cell_inv).ravel(), weights=w_lab, minlength=len(lab_cells))):
        labeled_sum += c * err(int(kk))[int(ss)]
    # the vote splits: distinct sorted class counts; labeled ones with how many had a wrong plurality
    key = _weighted_margin_code(v[keep], counts, wt) if prior.weighted else None
    lab_rows, lab_count, lab_inv = distinct_patterns(counts[lab], True, None if key is None else key[lab], w_lab)
    wrong_item = s_lab < lab_rows[lab_inv, 0]
    lab_wrong = np.bincount(lab_inv, weights=wrong_item * w_lab, minlength=len(lab_rows))
    unl_rows, unl_count = distinct_patterns(counts[~lab], False, None if key is None else key[~lab], wt[~lab])
    width = lab_rows.shape[1]
    index: dict[tuple[int, ...], int] = {}
    for row in (*lab_rows, *unl_rows):
        index.setdefault(tuple(int(c) for c in row), len(index))
    keys_all = np.array(list(index), dtype=np.int64).reshape(len(index), width)
    rows_all = keys_all[:, :classes]
    n_pat = len(rows_all)
    trials = np.zeros(n_pat)
    wrongs = np.zeros(n_pat)
    pos_l = np.array([index[tuple(int(c) for c in r)] for r in lab_rows], dtype=np.int64)
    trials[pos_l] = lab_count
    wrongs[pos_l] = lab_wrong
    pos_u = np.array([index[tuple(int(c) for c in r)] for r in unl_rows], dtype=np.int64)
    unl_n = np.zeros(n_pat)
    unl_n[pos_u] = unl_count
    unl_rows = unl_rows[:, :classes]
    folded = "folded" in prior.models
    bb = _fit_folded(k_lab, s_lab, unl_rows, unl_count, classes, settings, w_lab.astype(float)) if folded else None
    split_flat = _splits(rows_all, classes, None)
    split_bb = _splits(rows_all, classes, bb) if bb is not None else split_flat
    offsets = np.array([split_bb.offset if m == "folded" else np.zeros(n_pat) for m in prior.models])
    # unlabeled: error if the plurality is right (a) and wrong-minus-right (d), per pattern
    a_sum = np.zeros(len(ks))
    d_rows = np.zeros((n_pat, len(ks)))
    for i in np.nonzero(unl_n)[0]:
        row = rows_all[i]
        e = err(int(row.sum()))
        a = e[int(row[0])]
        a_sum += unl_n[i] * a
        if split_bb.always_right[i]:
            continue
        alt_s, alt_w = split_bb.alternatives[i]
        d_rows[i] = (alt_w[:, None] * e[alt_s]).sum(axis=0) - a
    can_err = ~split_flat.always_right
    x_all = split_flat.x if key is None else keys_all[:, classes] / _STEPS - 1.0
    post = _SplitPosterior(x_all, offsets, wrongs, trials, can_err, prior)
    total = n_lab + n_unl
    idx = post.draw(rng, n_draws)
    mean_sum = np.zeros(len(ks))
    draw_sum = np.zeros((n_draws, len(ks)))
    var_sum = np.zeros((n_draws, len(ks)))
    todo = np.nonzero((unl_n > 0) & can_err)[0]
    for lo_i in range(0, len(todo), _BLOCK):  # blocks: grid x patterns x nodes stays small for many-class data
        blk = todo[lo_i: lo_i + _BLOCK]
        D = unl_n[blk, None] * d_rows[blk]
        Q = unl_n[blk, None] * d_rows[blk] ** 2
        p_mean, p_draw = post.p_wrong(blk, idx, rng)
        mean_sum += p_mean @ D
        draw_sum += p_draw @ D
        var_sum += (p_draw * (1 - p_draw)) @ Q
    centre = (labeled_sum + a_sum + mean_sum) / total
    mean_draw = (labeled_sum + a_sum + draw_sum) / total
    draws = np.clip(mean_draw + np.sqrt(np.maximum(var_sum, 0.0)) / total * rng.standard_normal(mean_draw.shape), 0.0, 1.0)
    tail = (1 - confidence_level) / 2
    low, high = np.quantile(draws, tail, axis=0), np.quantile(draws, 1 - tail, axis=0)
    model = SplitModel(float(post.w @ post.b0), float(post.w @ post.b1), bb, post.model_probabilities(),
                       int(trials[can_err].sum()), int(wrongs[can_err].sum()))
    use, reason = _guard(model) if guard else (True, "the vote split model (guard off)")
    if not use:
        return labels_only_estimate(reason, model)
    rows = tuple(
        VoteRow(k, float(centre[i]), float(min(low[i], centre[i])), float(max(high[i], centre[i])),
                r.estimate, r.low, r.high, k > fewest_judges)
        for i, (k, r) in enumerate(zip(ks, lo_rows))
    )
    return VoteEstimate(ks, rows, METHOD_VOTES, reason, n_lab, n_unl, dropped, confidence_level, prior, model,
                        labels_only)


def estimate_from_votes(
    votes: Votes, ks: tuple[int, ...] = DEFAULT_KS, confidence_level: float = 0.9,
    rng: np.random.Generator | None = None, **options: Any,
) -> VoteEstimate:
    """`estimate_errors` on a reader's `Dataset.votes` (distinct patterns with their counts, classes by name)."""
    return estimate_errors(votes.patterns, votes.gold, ks, confidence_level, rng,
                           n_classes=max(len(votes.classes), 2), counts=votes.counts, **options)


MIN_LABELED_SPLITS = 5


def _guard(model: SplitModel) -> tuple[bool, str]:
    """Use the unlabeled items only where the labels support it: (1) the labels' marginal likelihood does not favour
    the "constant" model (the split says nothing about correctness: then the unlabeled verdicts carry no
    information the labels can check, and the labels-only estimate is as good and better calibrated); (2) at least
    MIN_LABELED_SPLITS labeled items whose plurality could be wrong (with fewer, the model rests on its prior)."""
    if model.labeled_splits < MIN_LABELED_SPLITS:
        return False, (
            f"labels only: {model.labeled_splits} labeled item(s) whose plurality could be wrong, fewer than "
            f"{MIN_LABELED_SPLITS}, cannot say how often the judges' plurality errs"
        )
    probs = model.model_probabilities
    if "constant" in probs and len(probs) > 1 and probs["constant"] >= max(v for m, v in probs.items() if m != "constant"):
        return False, (
            f"labels only: the labels favour the model in which the vote split says nothing about correctness "
            f"(posterior probability {probs['constant']:.2f})"
        )
    return True, "vote split: labeled items exact, unlabeled items by P(plurality wrong | split)"


def analyse_with_votes(
    table: CountTable, votes: Votes | None, settings: FitSettings, rng: np.random.Generator, use_unlabeled: bool = True,
) -> FitResult:
    """`fit.analyse` of the labeled histogram `table`, then, when `votes` holds unlabeled items, the error table over
    every item from `estimate_from_votes`: the estimate and interval are the vote split's where the guard lets it
    use the unlabeled verdicts, the labels-only ones otherwise (and with `use_unlabeled=False`); either way each row
    keeps the labels-only estimate beside it and the result carries the `VoteEstimate` (method, reason, counts).
    Without unlabeled items the result is `fit.analyse`'s, unchanged (same draws of `rng`)."""
    result = analyse(table, settings, rng)
    if votes is None or votes.unlabeled_items == 0 or votes.labeled_items == 0:
        return result
    est = estimate_from_votes(votes, tuple(settings.ks), settings.confidence_level, rng, labels_only=result,
                              use_unlabeled=use_unlabeled)
    rows = []
    for r in result.rows:
        v = est.row(r.k)
        lo = (r.estimate, r.low, r.high)
        if est.used_unlabeled:
            rows.append(replace(r, estimate=v.estimate, low=v.low, high=v.high, labels_only=lo, extrapolated_all=v.extrapolated))
        else:
            rows.append(replace(r, labels_only=lo))
    return replace(result, rows=tuple(rows), unlabeled=est)
