"""The leaf fitters: Beta-Binomial mixtures of the judgment distribution and the baselines, each from the labeled
(judges, correct) histogram alone (fit.py builds the error table from them; estimators.py's columns call them).

- `fit_mixture`: maximum a posteriori Beta-Binomial mixture on the (judges, correct) histogram, exact for
  items with different numbers of judges; a bounded Newton method (`_newton`) over (softmax logits of w, log alpha,
  log beta) with the analytic gradient and Hessian (`_objective`) and several starts (METHOD.md). No scipy: the
  log-Beta and digamma differences are exact sums over the counts (distributions.rising_sums); scipy's L-BFGS-B,
  used before, is the tests' and benchmarks/fit_without_scipy.py's reference. `components=1` is the single
  Beta-Binomial.
- `fit_paper_em`: the paper's EM (section 4.3) as printed, with only the fixes needed to run it.
- `fit_binomial`: single-judge accuracy, every judge independent (eq. 1).
- `empirical_errors`: the labeled items' own exact (hypergeometric) majority error.
- `error_margin`: the paper's error margin; `fitted_counts`: the histogram chart's fitted counts.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .counts import CountTable
from .distributions import (
    Binomial,
    Mixture,
    item_error_table,
    log_comb,
    logsumexp,
    rising_sums,
)
from .errors import FitWarning, UsageError
from .settings import Prior

LOG_BOUNDS = (-8.0, 10.0)


LOGIT_BOUNDS = (-12.0, 12.0)


@dataclass(frozen=True)
class MixtureFit:
    """A fitted Beta-Binomial mixture and how the fit went."""

    mixture: Mixture
    method: str
    log_likelihood: float
    converged: bool
    n_iter: int
    n_starts: int
    items: int
    log_posterior: float | None = None

    @classmethod
    def on(cls, table: CountTable, mixture: Mixture, method: str, converged: bool = True, n_iter: int = 0, n_starts: int = 1,
           log_posterior: float | None = None) -> MixtureFit:
        """A mixture fitted to `table` (or transferred to it): its log-likelihood and items are the table's."""
        return cls(mixture, method, mixture_log_likelihood(table, mixture), converged, n_iter, n_starts, table.items,
                   log_posterior)

    @property
    def components(self) -> int:
        return self.mixture.n_components

    @property
    def n_params(self) -> int:
        return 3 * self.components - 1

    @property
    def bic(self) -> float:
        return -2.0 * self.log_likelihood + self.n_params * math.log(max(self.items, 1))


def mixture_log_likelihood(table: CountTable, mixture: Mixture) -> float:
    """sum over items of log sum_j w_j BB(S_i | K_i, alpha_j, beta_j)."""
    big_k, s, n = table.cells()
    lp = mixture.component_log_pmf(s, big_k) + np.log(np.asarray(mixture.weights))[:, None]
    return float((n * logsumexp(lp, axis=0)).sum())


def _unpack(theta: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    eta = np.concatenate(([0.0], theta[: c - 1]))
    logw = eta - math.log(float(np.exp(eta).sum()))  # eta is bounded (LOGIT_BOUNDS): no overflow
    return logw, theta[c - 1 : 2 * c - 1], theta[2 * c - 1 : 3 * c - 1]


Derivatives = Callable[[], tuple[np.ndarray, np.ndarray]]


def _objective(
    theta: np.ndarray, big_k: np.ndarray, s: np.ndarray, n: np.ndarray, lc: np.ndarray, c: int, prior: Prior
) -> tuple[float, np.ndarray, np.ndarray]:
    """Negative log posterior, its gradient and its Hessian in theta = (eta_1..eta_{c-1}, log alpha, log beta)
    (`_evaluate`'s value, then its derivatives)."""
    value, derivatives = _evaluate(theta, big_k, s, n, lc, c, prior)
    return (value, *derivatives())


def _evaluate(
    theta: np.ndarray, big_k: np.ndarray, s: np.ndarray, n: np.ndarray, lc: np.ndarray, c: int, prior: Prior
) -> tuple[float, Derivatives]:
    """The negative log posterior at theta, and a function that gives its gradient and Hessian there from the same
    sums (the line search asks for them only at the point it accepts: a rejected trial costs the value alone).

    big_k, s: whole counts (int arrays), n: items per cell, lc: log C(K, S). Per cell i and component j the joint
    l_ij = log w_j + log BB(S_i | K_i, a_j, b_j), the cell's log-likelihood LSE_j l_ij, responsibilities r_ij; the
    Hessian of an LSE is sum_j r_ij (d2 l_ij + dl_ij dl_ij') - dcell dcell'."""
    logw, la, lb = _unpack(theta, c)
    a, b = np.exp(la), np.exp(lb)
    sums = rising_sums(np.concatenate((a, b, a + b)), int(big_k.max()), 3)
    ta, tb, tab = sums[:, :c], sums[:, c : 2 * c], sums[:, 2 * c :]  # slices: np.split costs ~10 us a call
    rest = big_k - s
    joint = logw[:, None] + lc + ta[0][:, s] + tb[0][:, rest] - tab[0][:, big_k]  # finite: a, b > 0, 0 <= S <= K
    top = joint.max(axis=0)
    r = np.exp(joint - top)
    total_r = r.sum(axis=0)
    cell = top + np.log(total_r)
    var, conc = prior.log_param_sd**2, prior.weight_concentration
    lprior = -0.5 * float((la**2).sum() + (lb**2).sum()) / var + (conc - 1.0) * float(logw.sum())

    def derivatives() -> tuple[np.ndarray, np.ndarray]:
        r_ = r / total_r  # (c, cells): the responsibilities
        rn = r_ * n
        tab1 = tab[1][:, big_k]
        da = ta[1][:, s] - tab1  # d comp / d a: digamma differences
        db = tb[1][:, rest] - tab1
        ga, gb = a[:, None] * da, b[:, None] * db  # d comp / d log a, d log b
        w = np.exp(logw)
        d = 3 * c - 1
        grad_l = np.zeros((c, len(n), d))  # d l_ij / d theta
        grad_l[:, :, : c - 1] = (np.eye(c)[:, 1:] - w[1:])[:, None, :]
        idx = np.arange(c)
        grad_l[idx, :, c - 1 + idx] = ga
        grad_l[idx, :, 2 * c - 1 + idx] = gb
        gcell = np.einsum("jc,jcd->cd", r_, grad_l)
        hess = np.einsum("jc,jcd,jce->de", rn, grad_l, grad_l) - np.einsum("c,cd,ce->de", n, gcell, gcell)
        total = float(n.sum())
        wv = w[1:]
        hess[: c - 1, : c - 1] -= (total + (conc - 1.0) * c) * (np.diag(wv) - np.outer(wv, wv))
        tab2 = tab[2][:, big_k]
        d2a = ga + a[:, None] ** 2 * (tab2 - ta[2][:, s])  # d2 comp / d (log a)^2
        d2b = gb + b[:, None] ** 2 * (tab2 - tb[2][:, rest])
        ia, ib = c - 1 + idx, 2 * c - 1 + idx
        hess[ia, ia] += (rn * d2a).sum(axis=1) - 1.0 / var
        hess[ib, ib] += (rn * d2b).sum(axis=1) - 1.0 / var
        cross = (rn * (a[:, None] * b[:, None] * tab2)).sum(axis=1)
        hess[ia, ib] += cross
        hess[ib, ia] += cross
        grad = n @ gcell
        grad[: c - 1] += (conc - 1.0) * (1.0 - c * wv)
        grad[c - 1 :] -= theta[c - 1 :] / var
        return -grad, -0.5 * (hess + hess.T)  # einsum's sums differ in the last bit

    return -(float(n @ cell) + lprior), derivatives


@dataclass(frozen=True)
class _Optimum:
    x: np.ndarray
    fun: float
    jac: np.ndarray
    nit: int
    converged: bool


Objective = Callable[[np.ndarray], tuple[float, Derivatives]]


def _newton(fun: Objective, x0: np.ndarray, lo: np.ndarray, hi: np.ndarray, max_iter: int) -> _Optimum:
    """Minimise `fun` (value, gradient, Hessian) on the box [lo, hi]: Newton steps on the free coordinates (those not
    held at a bound by their gradient), the Hessian's eigenvalues made positive (|lambda|, floored), each step at most
    2 in any coordinate, projected onto the box, with Armijo backtracking (a strict decrease).

    Converged when the Newton step is below 1e-10 in every coordinate (log parameters: 1e-10 relative) or the Newton
    decrement g'H^-1 g below 1e-18 (1 + |f|) (a step of ~1e-9 relative along the flattest direction: f scales with
    the items, and so does H), or when no step lowers f and the projected gradient is small (1e-5 (1 + |f|), as
    L-BFGS-B's acceptance was). Near the optimum f's decrease falls below its rounding while a flat direction's
    parameters still move: a full step of at most 1e-4 that leaves f within rounding is taken (3 in a row at most)."""
    x = np.clip(x0, lo, hi)
    f, derivatives = fun(x)
    g, h = derivatives()
    level = 0
    for it in range(1, max_iter + 1):
        held = ((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0))
        step = _newton_step(g, h, ~held)
        size = float(np.max(np.abs(step)))
        if size <= 1e-10 or -float(g @ step) <= 1e-18 * (1.0 + abs(f)):
            return _Optimum(x, f, g, it - 1, _small(g, held, f))
        step *= min(1.0, 2.0 / size)
        found = _line_search(fun, x, f, g, step, lo, hi)
        if found is None or (found[1] >= f and level >= 3):
            return _Optimum(x, f, g, it, _small(g, held, f))
        level = level + 1 if found[1] >= f else 0
        x, f, g, h = found
    return _Optimum(x, f, g, max_iter, _small(g, ((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0)), f))


def _small(g: np.ndarray, held: np.ndarray, f: float) -> bool:
    """The projected gradient is small: below 1e-5 (1 + |f|) in the coordinates not held at a bound."""
    return float(np.max(np.abs(np.where(held, 0.0, g)))) <= 1e-5 * (1.0 + abs(f))


def _newton_step(g: np.ndarray, h: np.ndarray, free: np.ndarray) -> np.ndarray:
    """-H^-1 g on the free coordinates, H's eigenvalues replaced by |lambda| floored at 1e-10 of the largest."""
    step = np.zeros_like(g)
    if not free.any():
        return step
    every = bool(free.all())  # the usual case: no copies
    vals, vecs = np.linalg.eigh(h if every else h[np.ix_(free, free)])
    vals = np.maximum(np.abs(vals), max(1e-10 * float(np.max(np.abs(vals))), 1e-300))
    got: np.ndarray = -(vecs @ ((vecs.T @ (g if every else g[free])) / vals))
    if every:
        return got
    step[free] = got
    return step


def _line_search(fun: Objective, x: np.ndarray, f: float, g: np.ndarray, step: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
    """The first of t = 1, 1/2, ..., 2^-30 whose projected step lowers f (Armijo, strictly). A full step of at most
    1e-4 that leaves f within its rounding (1e-13 (1 + |f|)) is taken as it is (near the optimum a shorter one cannot
    do better); None when nothing is found."""
    for halvings in range(31):
        t = 0.5**halvings
        xn = np.clip(x + t * step, lo, hi)
        fn, derivatives = fun(xn)  # the gradient and Hessian only where the step is taken
        if fn < f and fn <= f + 1e-4 * float(g @ (xn - x)):
            return xn, fn, *derivatives()
        if halvings == 0 and float(np.max(np.abs(step))) <= 1e-4:
            return (xn, fn, *derivatives()) if fn <= f + 1e-13 * (1.0 + abs(f)) else None
    return None


def _starts(table: CountTable, c: int, n_init: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Deterministic starts from quantile splits of S/K at a few concentrations, then seeded random ones."""
    big_k, s, n = table.cells()
    p = s / big_k
    order = np.argsort(p, kind="stable")
    cum = np.cumsum(n[order]) / n.sum()
    out: list[np.ndarray] = []
    for conc in (4.0, 1.0, 20.0):
        means = []
        for j in range(c):
            lo, hi = j / c, (j + 1) / c
            sel = order[(cum > lo) & (cum - n[order] / n.sum() < hi)]
            m = float(np.average(p[sel], weights=n[sel])) if len(sel) else (j + 0.5) / c
            means.append(min(max(m, 0.03), 0.97))
        theta = np.concatenate((np.zeros(c - 1), np.log(np.array(means) * conc), np.log((1 - np.array(means)) * conc)))
        out.append(theta)
    if c > 1:
        # the paper's two-peak picture: one hard and one easy component
        peaks = np.linspace(0.15, 0.85, c)
        out.append(np.concatenate((np.zeros(c - 1), np.log(peaks * 3), np.log((1 - peaks) * 3))))
    while len(out) < n_init:
        rand_means = np.sort(rng.uniform(0.02, 0.98, c))
        rand_conc = np.exp(rng.uniform(np.log(0.5), np.log(60.0), c))
        eta = rng.normal(0, 1, c - 1)
        out.append(np.concatenate((eta, np.log(rand_means * rand_conc), np.log((1 - rand_means) * rand_conc))))
    return out[: max(n_init, 1)]


def fit_mixture(
    table: CountTable,
    components: int = 2,
    prior: Prior = Prior(),
    n_init: int = 6,
    rng: np.random.Generator | None = None,
    max_iter: int = 500,
) -> MixtureFit:
    """MAP fit of a `components`-component Beta-Binomial mixture to the histogram of correct counts."""
    if components < 1:
        raise UsageError(f"components must be at least 1, got {components}")
    rng = rng if rng is not None else np.random.default_rng(0)
    big_k, s, n = table.cells()
    n = n.astype(float)
    lc = log_comb(big_k, s)
    c = components
    lo = np.array([LOGIT_BOUNDS[0]] * (c - 1) + [LOG_BOUNDS[0]] * (2 * c))
    hi = np.array([LOGIT_BOUNDS[1]] * (c - 1) + [LOG_BOUNDS[1]] * (2 * c))
    best = None
    total_iter = 0
    starts = _starts(table, c, n_init, rng)
    for theta0 in starts:
        res = _newton(lambda theta: _evaluate(theta, big_k, s, n, lc, c, prior), theta0, lo, hi, max_iter)
        total_iter += res.nit
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    logw, la, lb = _unpack(best.x, c)
    mixture = Mixture(tuple(np.exp(logw)), tuple(np.exp(la)), tuple(np.exp(lb))).sorted()
    if not best.converged:
        warnings.warn("MAP mixture fit did not converge", FitWarning, stacklevel=2)
    return MixtureFit.on(table, mixture, "map", best.converged, total_iter, len(starts), log_posterior=-float(best.fun))


def default_starts(components: int) -> int:
    """Starts per fit: the single Beta-Binomial needs few; mixtures get more (multi-modal posterior)."""
    return {1: 3, 2: 6}.get(components, 4)


def fit_candidates(
    table: CountTable, max_components: int = 3, prior: Prior = Prior(), rng: np.random.Generator | None = None
) -> dict[int, MixtureFit]:
    """MAP fits with 1..max_components components."""
    rng = rng if rng is not None else np.random.default_rng(0)
    return {c: fit_mixture(table, c, prior, n_init=default_starts(c), rng=rng) for c in range(1, max_components + 1)}


def fit_auto(
    table: CountTable, max_components: int = 3, prior: Prior = Prior(), rng: np.random.Generator | None = None
) -> MixtureFit:
    """The MAP fit with 1..max_components components that has the lowest BIC."""
    return min(fit_candidates(table, max_components, prior, rng).values(), key=lambda f: f.bic)


def fit_paper_em(table: CountTable, max_iter: int = 2000, tol: float = 1e-8, clip: float = 1e-3) -> MixtureFit:
    """The paper's EM (section 4.3) for two components, as printed, with only the fixes needed to run.

    E-step: gamma_i = w Beta(p_i | a1, b1) / (w Beta(p_i | a1, b1) + (1 - w) Beta(p_i | a2, b2)), p_i = S_i / K_i.
    M-step: alpha_j = sum_i gamma_j^i S_i, beta_j = sum_i gamma_j^i (K_i - S_i), w = mean_i gamma_1^i.
    Fixes: gamma_j (not gamma_1) in the M-step for component j; p_i clipped to [clip, 1 - clip] (the Beta
    density is 0/0 or infinite at 0 and 1); alpha, beta floored at 1e-3 (a component holding only S = K
    items gets beta = 0); the E-step in log space. Start: items split at p = 1/2 (at the median when one
    side is empty). The EM runs on the histogram, which gives the same iterates as running it per item.
    """
    from scipy.special import betaln  # not on the default path (only --method paper), which loads no scipy

    big_k, s, n = table.cells()
    big_k = big_k.astype(float)
    s = s.astype(float)
    n = n.astype(float)
    p = np.clip(s / big_k, clip, 1 - clip)
    cut = 0.5 if (p < 0.5).any() and (p >= 0.5).any() else float(np.median(p))
    gamma = np.where(p < cut, 1.0, 0.0) if ((p < cut).any() and (p >= cut).any()) else np.full_like(p, 0.5)
    floor = 1e-3
    converged = False
    it = 0
    prev = None
    for it in range(1, max_iter + 1):  # noqa: B007 (it is the iteration count reported after the loop)
        g = np.vstack((gamma, 1 - gamma)) * n
        alphas = np.maximum((g * s).sum(axis=1), floor)
        betas = np.maximum((g * (big_k - s)).sum(axis=1), floor)
        w = float(np.clip(g[0].sum() / n.sum(), 1e-12, 1 - 1e-12))
        params = np.concatenate(([w], alphas, betas))
        if prev is not None and np.max(np.abs(params - prev) / np.maximum(np.abs(prev), 1e-12)) < tol:
            converged = True
            break
        prev = params
        logpdf = (
            (alphas[:, None] - 1) * np.log(p) + (betas[:, None] - 1) * np.log1p(-p) - betaln(alphas, betas)[:, None]
        )
        joint = np.log([w, 1 - w])[:, None] + logpdf
        gamma = np.exp(joint[0] - logsumexp(joint, axis=0))
    mixture = Mixture((w, 1 - w), tuple(alphas), tuple(betas)).sorted()
    return MixtureFit.on(table, mixture, "paper-em", converged, it)


def fit_binomial(table: CountTable) -> Binomial:
    """Bin(k, p) with p the pooled single-judge accuracy."""
    return Binomial(table.single_judge_accuracy())


@dataclass(frozen=True)
class FittedCounts:
    """Observed and fitted counts of correct judges among the items with the most common number of judges (fit's
    histogram chart): the report draws them and refits nothing."""

    judges: int  # the most common number of judges (the larger on a tie)
    observed: tuple[int, ...]  # items with s correct judges, s = 0..judges
    fitted: tuple[float, ...]  # the mixture's probability of s times the items shown
    items: int  # every labeled item; sum(observed) of them have `judges` judges


def fitted_counts(histogram: Mapping[int, Sequence[int]], mixture: Mixture) -> FittedCounts:
    """`histogram` ({judges: [items with s correct]}, a document's) beside `mixture`'s expected counts."""
    hist = {int(k): [int(v) for v in counts] for k, counts in histogram.items()}
    big_k = max(hist, key=lambda k: (sum(hist[k]), k))
    obs = hist[big_k]
    fitted = np.asarray(mixture.pmf(big_k)) * sum(obs)
    return FittedCounts(big_k, tuple(obs), tuple(float(f) for f in fitted), sum(sum(v) for v in hist.values()))


def empirical_errors(table: CountTable, ks: tuple[int, ...]) -> dict[int, float | None]:
    """The labeled items' own exact majority error at k (None where some item has fewer than k judges)."""
    big_k, s, n = table.cells()
    out: dict[int, float | None] = {}
    for k in ks:
        if (big_k < k).any():
            out[k] = None
            continue
        total = sum(float(item_error_table(int(kk), k)[int(ss)]) * float(nn) for kk, ss, nn in zip(big_k, s, n))
        out[k] = total / float(n.sum())
    return out


def error_margin(estimates: np.ndarray, actual: np.ndarray, ks: tuple[int, ...] | list[int]) -> np.ndarray:
    """The paper's error margin, as a fraction: the mean over odd k with a defined actual error (not NaN) of
    |estimate - actual|. estimates[..., i] and actual[i] are at ks[i]; NaN where no odd k has an actual error."""
    est = np.asarray(estimates, dtype=float)
    act = np.asarray(actual, dtype=float)
    use = np.array([k % 2 == 1 for k in ks]) & np.isfinite(act)
    if not use.any():
        return np.full(est.shape[:-1], np.nan)
    margin: np.ndarray = np.abs(est[..., use] - act[use]).mean(axis=-1)
    return margin
