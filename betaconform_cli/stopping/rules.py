"""Adaptive stopping rules: when have enough items been labeled? Rules and Proposition 4.1.

Three rules, each a frozen dataclass whose ``path(judges, correct)`` returns a `RulePath`: the per-``r`` statistic
and the first ``r`` at which the rule fires:

- `ConformalRule` -- the paper's section 5: nonconformity ``|S_i - E[S]|`` (eq. nonconformity_score), quantile
  ``s_ceil((1-eps)(r+1))``, stop when ``|q_r - q_{r-1}| <= xi`` (eq. stop_criteria) on ``patience``
  consecutive checks (one check fires by chance, see docs/STOPPING.md).
- `VarianceRule` -- the RQ5 baseline, read as: the posterior standard deviation of the majority-vote accuracy,
  ``sqrt(a b / ((a+b)^2 (a+b+1)))`` with ``a`` items whose majority is right and ``b = r - a``, is at most ``xi``.
- `PrecisionRule` -- ours: stop when an interval for the pool's majority error at ``at_k`` (default: the widest
  over ``ks``) has half-width at most ``target`` (sequences.py: an always-valid confidence sequence, or fit's
  own interval checked at a stricter level).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Union

import numpy as np

from ..choices import PRECISION_METHODS  # the choices live in the light choices.py
from ..choices import RULES as RULES
from ..counts import CountTable
from ..distributions import item_error_table
from ..errors import P0, P1, ParameterError, placeholder
from ..parameters import CONFIDENCE_LEVEL, check, check_optional
from ..parameters import MAX_LABELS as MAX_LABELS
from .sequences import calibrated_half_width, confidence_sequence

SCORE_SCALES = ("S", "S/k")
CENTRES = ("mean", "fitted")
XI_UNITS = ("S", "sd")
REFERENCE_SD = 3.5  # sd of S on the 11-judge two-peak pool (3.55 in benchmarks/stopping.py), rounded


# --- Proposition 4.1 ---------------------------------------------------------------------------------------


MAX_THEORETICAL = 1e12  # labels; far below where 1/sqrt(r-1) - 1/sqrt(r) loses its float precision


def _needed(n: int, ratio: float, slack: float = 1.0) -> int:
    """ceil(n * ratio^2 * slack) labels (a statistic ~ 1/sqrt(r) that must shrink by `ratio`), at most MAX_LABELS:
    a tiny target (1e-300) must not overflow the float arithmetic."""
    if not math.isfinite(ratio) or ratio > math.sqrt(MAX_LABELS):
        return MAX_LABELS
    return min(MAX_LABELS, math.ceil(n * ratio**2 * slack))


def theoretical_samples(xi: float, tau: float = 25.0) -> int:
    """Smallest r >= 2 with tau (1/sqrt(r-1) - 1/sqrt(r)) <= xi (Proposition 4.1, eq. sample_number)."""
    if not (0 < xi < math.inf and 0 < tau < math.inf):
        raise ParameterError(("xi", "tau"), f"Proposition 4.1 needs finite {P0} > 0 and {P1} > 0; got {xi} and {tau}")
    # the left side ~ tau / (2 r^1.5): start just below the asymptotic root and walk up
    root = (tau / (2 * xi)) ** (2 / 3)
    if not root < MAX_THEORETICAL:  # beyond float precision the walk below never ends (xi = 1e-300)
        raise ParameterError(("xi", "tau"), f"{P0} {xi:g} is too small for {P1} {tau:g}: Proposition 4.1 would ask for more than {MAX_THEORETICAL:.0e} labels")
    r = max(2, int(root) - 5)
    while tau * (1 / math.sqrt(r - 1) - 1 / math.sqrt(r)) > xi:
        r += 1
    while r > 2 and tau * (1 / math.sqrt(r - 2) - 1 / math.sqrt(r - 1)) <= xi:
        r -= 1
    return r


# --- the rules ---------------------------------------------------------------------------------------------


def _running_var(x: np.ndarray) -> np.ndarray:
    """Sample variance (ddof 1) of x[:r] for r = 1..n (0 at r = 1), by Welford's update."""
    out = np.zeros(len(x))
    mean = 0.0
    m2 = 0.0
    for i, v in enumerate(x):
        d = v - mean
        mean += d / (i + 1)
        m2 += d * (v - mean)
        out[i] = m2 / i if i else 0.0
    return out


@dataclass(frozen=True)
class RulePath:
    """A rule's statistic after each of r = 1..n labels, and the first r at which it fires (None: not yet)."""

    statistic: np.ndarray = field(repr=False)
    passed: np.ndarray = field(repr=False)
    stop_at: int | None
    extra: dict[str, Any] = field(default_factory=dict)


def _first_run(passed: np.ndarray, patience: int) -> int | None:
    """1-based r at which `patience` consecutive passing checks end, or None."""
    passed = np.asarray(passed, dtype=bool)
    if patience > len(passed):
        return None
    # run length ending at each r: r - (the last failing r at or before it)
    r = np.arange(1, len(passed) + 1)
    last_fail = np.maximum.accumulate(np.where(passed, 0, r))
    hits = np.flatnonzero(r - last_fail >= patience)
    return int(hits[0]) + 1 if len(hits) else None


def running_order_statistic(x: np.ndarray, centres: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """q[r-1] = the idx[r-1]-th smallest of |x[:r] - centres[r-1]| for r = 1..n (NaN where idx > r).

    Linear in n, not quadratic: the prefix x[:r] is kept as a histogram over x's distinct values (the correct
    counts, or counts / judges), so each r costs O(D log D) for D distinct values, in vectorised blocks of r.
    The distances are the same floats as |x_i - c| item by item, so q is exactly the order statistic.
    """
    n = len(x)
    q = np.full(n, np.nan)
    if n == 0:
        return q
    values, codes = np.unique(x, return_inverse=True)
    d = len(values)
    block = max(1, min(n, (1 << 20) // d))
    base = np.zeros(d, dtype=np.int64)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        onehot = np.zeros((hi - lo, d), dtype=np.int64)
        onehot[np.arange(hi - lo), codes[lo:hi]] = 1
        counts = base[None, :] + np.cumsum(onehot, axis=0)  # counts[r - 1 - lo, v]: value v among x[:r]
        base = counts[-1].copy()
        dist = np.abs(values[None, :] - centres[lo:hi, None])
        order = np.argsort(dist, axis=1, kind="stable")
        below = np.cumsum(np.take_along_axis(counts, order, axis=1), axis=1)
        want = idx[lo:hi]
        pos = np.minimum((below < want[:, None]).sum(axis=1), d - 1)
        rows = np.arange(hi - lo)
        got = np.take_along_axis(dist, order, axis=1)[rows, pos]
        q[lo:hi] = np.where(want <= np.arange(lo + 1, hi + 1), got, np.nan)
    return q


def item_errors(judges: np.ndarray, correct: np.ndarray, k: int) -> np.ndarray:
    """x_i = item_error_table(N_i, k)[S_i] for every item, one table per distinct N_i (not a Python loop per item)."""
    judges = np.asarray(judges, dtype=np.int64)
    correct = np.asarray(correct, dtype=np.int64)
    out = np.empty(len(judges))
    for n in np.unique(judges):
        at = judges == n
        out[at] = item_error_table(int(n), k)[correct[at]]
    return out


def _check_common(min_samples: int, patience: int) -> None:
    check("min_samples", min_samples)
    check("patience", patience)


@dataclass(frozen=True)
class ConformalRule:
    """The paper's conformal stopping rule (section 5), with the choices the paper leaves open made explicit."""

    xi: float = 0.03
    epsilon: float = 0.1
    tau: float = 25.0
    score_scale: str = "S"
    centre: str = "mean"
    xi_units: str = "S"
    reference_sd: float = REFERENCE_SD
    min_samples: int = 10
    patience: int = 2
    name: str = "conformal"

    def __post_init__(self) -> None:
        check("epsilon", self.epsilon)
        check("xi", self.xi)
        check("tau", self.tau)
        if self.score_scale not in SCORE_SCALES:
            raise ParameterError("score_scale", f"must be S or S/k; got {self.score_scale!r}")
        if self.centre not in CENTRES:
            raise ParameterError("centre", f"must be mean or fitted; got {self.centre!r}")
        if self.xi_units not in XI_UNITS:
            raise ParameterError("xi_units", f"must be S or sd; got {self.xi_units!r}")
        check("reference_sd", self.reference_sd)
        self.theoretical_samples()  # a too small xi is refused now, not in the middle of a run
        _check_common(self.min_samples, self.patience)

    def theoretical_samples(self) -> int:
        return theoretical_samples(self.xi, self.tau)

    def quantiles(self, judges: np.ndarray, correct: np.ndarray, centres: np.ndarray | None = None) -> np.ndarray:
        """q_r for r = 1..n (NaN while ceil((1-eps)(r+1)) > r: the quantile is undefined, no stop)."""
        x = correct.astype(float) / (judges if self.score_scale == "S/k" else 1.0)
        n = len(x)
        if centres is None:
            centres = np.cumsum(x) / np.arange(1, n + 1)
        r = np.arange(1, n + 1)
        idx = np.ceil((1 - self.epsilon) * (r + 1) - 1e-9).astype(np.int64)  # order statistic s_idx (1-based)
        return running_order_statistic(x, centres, idx)

    def path(self, judges: np.ndarray, correct: np.ndarray, centres: np.ndarray | None = None, pool_size: int | None = None) -> RulePath:
        q = self.quantiles(judges, correct, centres)
        delta = np.full(len(q), np.nan)
        delta[1:] = np.abs(q[1:] - q[:-1])
        r = np.arange(1, len(q) + 1)
        threshold = self.thresholds(judges, correct)
        passed = (delta <= threshold) & (r >= self.min_samples)  # NaN compares False
        return RulePath(statistic=delta, passed=passed, stop_at=_first_run(passed, self.patience), extra={"quantile": q, "threshold": threshold})

    def thresholds(self, judges: np.ndarray, correct: np.ndarray) -> np.ndarray:
        """The bound on |q_r - q_{r-1}| after each r: xi (units S), or xi * sd_r / reference_sd (units sd).

        sd_r: the sample sd (ddof 1) of the first r values on the score scale. Both |q_r - q_{r-1}| and sd_r
        scale with the scores, so with units sd the rule is unchanged by any rescaling of S (S or S/k alike):
        xi is then a change of xi / reference_sd standard deviations.
        """
        n = len(correct)
        if self.xi_units == "S":
            return np.full(n, self.xi)
        x = correct.astype(float) / (judges if self.score_scale == "S/k" else 1.0)
        sd = np.sqrt(_running_var(x))
        bound: np.ndarray = self.xi * sd / self.reference_sd
        return bound

    def more_needed(self, p: RulePath) -> int:
        """Labels still needed: Proposition 4.1 with tau fitted to the recent |q_r - q_{r-1}| (the trend)."""
        n = len(p.statistic)
        r = np.arange(1, n + 1)
        ok = ~np.isnan(p.statistic) & (r >= 3)
        tau_hat = self.tau
        if ok.sum() >= 5:
            rr = r[ok][-20:].astype(float)
            d = p.statistic[ok][-20:]
            tau_hat = float(np.mean(d / (1 / np.sqrt(rr - 1) - 1 / np.sqrt(rr))))
        thr = p.extra.get("threshold")
        xi_now = float(thr[-1]) if thr is not None and n and thr[-1] > 0 else self.xi
        try:
            target = theoretical_samples(xi_now, tau_hat) if tau_hat > 0 else n + 1
        except ParameterError:  # the fitted trend asks for more than Proposition 4.1 can count (or xi_now is not finite)
            target = MAX_LABELS if not xi_now < math.inf or xi_now < self.xi else n + 1
        run = 0
        for ok_ in p.passed[::-1]:
            if not ok_:
                break
            run += 1
        return min(MAX_LABELS, max(1, target - n, self.min_samples - n, self.patience - run))

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class VarianceRule:
    """RQ5's variance baseline: stop when the Beta(a, b) posterior sd of majority-vote accuracy is <= xi."""

    xi: float = 0.03
    k: int | None = None
    min_samples: int = 10
    patience: int = 1
    name: str = "variance"

    def __post_init__(self) -> None:
        check("xi", self.xi)
        _check_common(self.min_samples, self.patience)

    def theoretical_samples(self) -> int | None:
        return None

    def path(self, judges: np.ndarray, correct: np.ndarray, centres: np.ndarray | None = None, pool_size: int | None = None) -> RulePath:
        # majority of each item's own judges (k = K_i unless k given); a tie counts half
        if self.k is None:
            right = np.where(2 * correct > judges, 1.0, np.where(2 * correct == judges, 0.5, 0.0))
        else:
            right = 1.0 - item_errors(judges, correct, self.k)
        a = np.cumsum(right)
        r = np.arange(1, len(right) + 1, dtype=float)
        b = r - a
        var = a * b / (r**2 * (r + 1))  # eq. in RQ5
        sd = np.sqrt(var)
        passed = (sd <= self.xi) & (r >= self.min_samples)
        return RulePath(statistic=sd, passed=passed, stop_at=_first_run(passed, self.patience))

    def more_needed(self, p: RulePath) -> int:
        n = len(p.statistic)
        sd = float(p.statistic[-1]) if n else 0.5
        # sd ~ c / sqrt(r): need r with c / sqrt(r) <= xi
        need = _needed(n, sd / self.xi) if sd > 0 else n + 1
        return max(1, need - n, self.min_samples - n)

    def describe(self) -> dict[str, Any]:
        return asdict(self)

@dataclass(frozen=True)
class PrecisionRule:
    """Stop when the interval for the majority error at `at_k` (None: widest over ks) is at most `target` half-wide.

    method "calibrated" (default): the normal approximation of fit's own interval (`calibrated_half_width`) at
    `monitoring_level`, checked after every label; honest by the calibration benchmark (docs/STOPPING.md), not by
    a theorem. method "sequential": the always-valid confidence sequence (`confidence_sequence`), honest by
    theorem, at the cost of more labels.
    """

    target: float = 0.03
    at_k: int | None = None
    ks: tuple[int, ...] = tuple(range(1, 12))
    confidence_level: float = CONFIDENCE_LEVEL
    method: str = "calibrated"
    min_samples: int = 10
    patience: int = 1
    name: str = "precision"

    def __post_init__(self) -> None:
        check("target", self.target)
        check("confidence_level", self.confidence_level)
        check_optional("at_k", self.at_k)
        if self.method not in PRECISION_METHODS:
            raise ParameterError("precision_method", f"must be calibrated or sequential; got {self.method!r}")
        _check_common(self.min_samples, self.patience)

    @property
    def monitoring_level(self) -> float:
        """calibrated: the level of the interval checked after every label, 1 - (1 - level) / 2 (0.95 for 0.9).

        Checking a fixed-sample interval after every label stops on a lucky narrow stretch more often than its
        level says; halving the miss rate pays for that. Measured (benchmarks/stopping.py, calibration): at the
        stop the estimate was within the target in at least the promised share of replays on the pools there.
        """
        return 1 - (1 - self.confidence_level) / 2

    def theoretical_samples(self) -> int | None:
        return None

    def checked_ks(self, judges: np.ndarray) -> tuple[int, ...]:
        top = int(judges.min()) if len(judges) else 0
        ks = (self.at_k,) if self.at_k is not None else self.ks
        usable = tuple(k for k in ks if k <= top)
        if not usable:
            raise ParameterError("at_k", f"(or ks) has no k <= {top}, the fewest judges any labeled item has")
        return usable

    def intervals(self, judges: np.ndarray, correct: np.ndarray, pool_size: int | None = None) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """(low, high) after each r for each checked k; calibrated: centred on the running mean of the x_i."""
        out = {}
        for k in self.checked_ks(judges):
            x = item_errors(judges, correct, k)
            if self.method == "sequential":
                out[k] = confidence_sequence(x, 1 - self.confidence_level, pool_size, tune_half_width=self.target)
                continue
            uniq, at = np.unique(np.asarray(judges, dtype=np.int64), return_inverse=True)
            tables = [np.asarray(item_error_table(int(j), k), dtype=float) for j in uniq]
            fm = np.array([t.mean() for t in tables])[at]
            fs = np.array([(t**2).mean() for t in tables])[at]
            r = np.arange(1, len(x) + 1)
            half = calibrated_half_width(x, np.cumsum(fm) / r, np.cumsum(fs) / r, self.monitoring_level, pool_size)
            centre = np.cumsum(x) / r
            out[k] = (np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1))
        return out

    def path(self, judges: np.ndarray, correct: np.ndarray, centres: np.ndarray | None = None, pool_size: int | None = None) -> RulePath:
        iv = self.intervals(judges, correct, pool_size)
        halves = np.vstack([(hi - lo) / 2 for lo, hi in iv.values()])
        widest = halves.max(axis=0)
        r = np.arange(1, len(widest) + 1)
        passed = (widest <= self.target) & (r >= self.min_samples)
        return RulePath(statistic=widest, passed=passed, stop_at=_first_run(passed, self.patience), extra={"intervals": iv})

    def more_needed(self, p: RulePath) -> int:
        n = len(p.statistic)
        hw = float(p.statistic[-1])
        need = _needed(n, hw / self.target, 1.1)  # half-width ~ 1/sqrt(n), a little slack for the log
        return max(1, need - n, self.min_samples - n)

    def describe(self) -> dict[str, Any]:
        d = asdict(self)
        d["ks"] = list(self.ks)
        if self.method == "sequential":
            d["promise"] = (
                f"theorem: for each checked k, with probability >= {self.confidence_level:g} the pool's majority error "
                "lies in the confidence sequence at every r, so at the stop it is within the target of the sequence's centre"
            )
        else:
            d["promise"] = (
                "calibration benchmark (docs/STOPPING.md), not a theorem: checked after every label at level "
                f"{self.monitoring_level:g}; at the stop the fit's estimate was within the target of the pool's majority "
                f"error, at every checked k, in at least {self.confidence_level:g} of replays on the pools measured there"
            )
        return d


Rule = Union[ConformalRule, VarianceRule, PrecisionRule]


# --- centres for --centre fitted ---------------------------------------------------------------------------


def fitted_centres(judges: np.ndarray, correct: np.ndarray, score_scale: str, rng: np.random.Generator, every: int = 10) -> np.ndarray:
    """E[S] under a two-component mixture refitted every `every` labels (the running mean before the first fit)."""
    from ..mixtures import fit_mixture
    from ..settings import Prior

    n = len(judges)
    x = correct.astype(float) / (judges if score_scale == "S/k" else 1.0)
    centres = np.cumsum(x) / np.arange(1, n + 1)
    current: float | None = None
    for r in range(1, n + 1):
        if r >= every and r % every == 0:
            table = CountTable.from_pairs(judges[:r], correct[:r])
            mix = fit_mixture(table, 2, Prior(), n_init=2, rng=rng).mixture
            m = float(sum(w * a / (a + b) for w, a, b in zip(mix.weights, mix.alphas, mix.betas)))  # E[S/K]
            current = m if score_scale == "S/k" else m * float(np.mean(judges[:r]))
        if current is not None:
            centres[r - 1] = current
    return centres


def rule_path(
    rule: Rule, judges: np.ndarray, correct: np.ndarray, rng: np.random.Generator, pool_size: int | None = None,
    until_stop: bool = False,
) -> RulePath:
    """The rule's path over the labels in order. until_stop: the path may end where the rule fires.

    A rule's statistic after r labels depends only on the first r labels, so with until_stop the path is computed
    on prefixes of doubling length (from 256) until the rule fires: a replay of a 600k-item pool that stops after
    20 labels costs a few hundred labels' work. The stop, and the path up to it, are the same as on the whole pool.
    """
    n = len(judges)
    m = min(n, 256) if until_stop else n
    start = rng.bit_generator.state  # each prefix draws the same fits (fitted centres) as the whole pool would
    while True:
        centres = None
        if isinstance(rule, ConformalRule) and rule.centre == "fitted":
            rng.bit_generator.state = start
            centres = fitted_centres(judges[:m], correct[:m], rule.score_scale, rng)
        p = rule.path(judges[:m], correct[:m], centres, pool_size)
        if p.stop_at is not None or m >= n:
            return _unless_exhausted(rule, judges[:m], correct[:m], centres, pool_size, p)
        m = min(n, 2 * m)


def _unless_exhausted(rule: Rule, judges: np.ndarray, correct: np.ndarray, centres: np.ndarray | None,
                      pool_size: int | None, p: RulePath) -> RulePath:
    """First met at the pool's last item: a finite-pool interval has no width left once every item is labeled, so
    the rule "passes" because the pool ran out, not because the labels met its target. Unless the rule is met there
    without the pool's size too, it did not fire: the pool is exhausted and the target missed."""
    if pool_size is not None and p.stop_at is not None and p.stop_at >= pool_size:
        if rule.path(judges, correct, centres, None).stop_at != p.stop_at:
            return replace(p, stop_at=None)
    return p


def make_rule(name: str, **options: Any) -> Rule:
    """Build a rule from its options (`precision_method` sets the precision rule's `method`); an option the rule
    does not take is an error unless it is None."""
    classes: dict[str, type[ConformalRule] | type[VarianceRule] | type[PrecisionRule]] = {
        "conformal": ConformalRule,
        "variance": VarianceRule,
        "precision": PrecisionRule,
    }
    if name not in classes:
        raise ParameterError("rule", f"must be one of {', '.join(RULES)}; got {name!r}")
    cls = classes[name]
    given = {("method" if k == "precision_method" and cls is PrecisionRule else k): v for k, v in options.items() if v is not None}
    extra = sorted(set(given) - (set(cls.__dataclass_fields__) - {"name", "method"}) - ({"method"} if cls is PrecisionRule else set()))
    if extra:
        names = ", ".join(placeholder(i + 1) for i in range(len(extra)))
        raise ParameterError(("rule", *extra), f"{P0} {name} does not take {names}")
    return cls(**given)
