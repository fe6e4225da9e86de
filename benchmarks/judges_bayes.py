"""Issue 26 item 2, third round (benchmarks/judges_loco.py): empirical-Bayes reports of the picked ensemble's error.

Each estimate below treats the candidates' errors as draws from a prior whose spread is ESTIMATED from every
candidate of the size (method of moments, no tuned constant), so the posterior of the picked one is not biased by
the pick under the model (a Bayes posterior conditions on the data; the pick is a function of the data):

- `eb_rectified`: the prediction-powered rectifier of candidate S (rbar_S: the mean over its labeled items of its
  exact majority error minus the Dawid-Skene prediction with the gold hidden, judges_rectified.py) is
  rho_S + noise; rho_S ~ N(mu, tau^2) across candidates. The candidates share items, so their noises are
  correlated: the residual matrix is centred per item (D[S, i] = R[S, i] - mean over candidates of R[., i]),
  which removes the part every candidate shares; d_S = mean_i D[S, i] has sampling variance
  s2_S = var_i D[S, i] / r, and tau^2 = max(0, var_S d_S - mean_S s2_S). mu is the mean rectifier over candidates
  (its variance var_i(column means) / r). Posterior: rho_S = mu + B d_S, B = tau^2 / (tau^2 + s2_S), variance
  var(mu) + B s2_S, plus the unlabeled items' own residual spread s^2 / N_u (a finite population). Reported:
  (sum_lab e + sum_unl p + N_u rho_S) / N with the normal interval.
- `eb_beta`: the issue's direction 1 literally: S's labeled (wrong, n) is Binomial given its error e_S on the
  unlabeled items' population; e_S ~ Beta with mean m_S (the shipped all-items estimate's unlabeled part) and a
  concentration c from var_S(emp_S - m_S) minus the sampling spread of emp_S across candidates, measured by an item
  bootstrap of the labeled items (B = 100 resamples: var over candidates of emp*_S - emp_S, averaged), which
  accounts for the candidates' correlation: Var e_S = m (1 - m) / (c + 1). Posterior mean (n emp + c m) / (n + c);
  reported f emp + (1 - f) that; interval from the Beta posterior's variance plus the unlabeled items' Binomial
  spread, normal.
- `eb_pseudo_items`: the vote split (judges/splits.py) shrinks each candidate's per-stratum rate toward the pool
  over candidates with a = 20 pseudo-items; here a per stratum by the same method of moments (rates' spread over
  candidates minus their bootstrap sampling spread; a = p (1 - p) / tau^2 - 1, infinite where tau^2 <= 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from judges_rectified import LabeledErrors
from scipy import stats

from betaconform_cli.judges.splits import _by_stratum, _strata
from betaconform_cli.judges.unlabeled import ClassModel, Verdicts, pattern_errors

RESAMPLES = 100
INFINITE = 1e12


@dataclass(frozen=True)
class Report:
    estimate: float
    low: float
    high: float
    shrink: float  # the weight of the candidate's own evidence (B, or n / (n + c))


def _z(level: float) -> float:
    return float(stats.norm.ppf(0.5 + level / 2))


def _clip(est: float, var: float, floor: float, ceiling: float, level: float, shrink: float) -> Report:
    half = _z(level) * float(np.sqrt(max(var, 0.0)))
    est = min(max(est, floor), ceiling)
    return Report(est, max(est - half, floor), min(est + half, ceiling), shrink)


def eb_rectified(le: LabeledErrors, i: int, level: float) -> Report:
    """Candidate i's all-items error with its rectifier's empirical-Bayes posterior (module docstring)."""
    resid = le.exact - le.predicted  # (n, r), NaN where a member gave no verdict
    col = np.nanmean(resid, axis=0)
    keep = np.isfinite(col)
    resid, col = resid[:, keep], col[keep]
    r = resid.shape[1]
    e = le.exact[i][keep]
    seen = ~np.isnan(e)
    n_u = float(le.unlabeled_items[i])
    n = int(seen.sum()) + n_u
    if r < 3 or not seen.any() or n == 0:
        return Report(float("nan"), 0.0, 1.0, 0.0)
    dev = resid - col[None, :]
    cnt = (~np.isnan(dev)).sum(axis=1)
    d = np.nanmean(dev, axis=1)
    s2 = np.nanvar(dev, axis=1, ddof=1) / np.maximum(cnt, 1)
    ok = np.isfinite(d) & np.isfinite(s2) & (cnt > 1)
    tau2 = max(0.0, float(np.var(d[ok])) - float(np.mean(s2[ok])))
    mu = float(col.mean())
    var_mu = float(col.var(ddof=1)) / r
    b = tau2 / (tau2 + float(s2[i])) if tau2 + float(s2[i]) > 0 else 0.0
    rho = mu + b * float(d[i])
    own = resid[i][seen]
    s_item = float(own.var(ddof=1)) if len(own) > 1 else 0.25
    est = (float(e[seen].sum()) + float(le.unlabeled_sum[i]) + n_u * rho) / n
    var = (n_u / n) ** 2 * (var_mu + b * float(s2[i]) + s_item / max(n_u, 1.0))
    floor = float(e[seen].sum()) / n
    return _clip(est, var, floor, floor + n_u / n, level, b)


def _boot_spread(values: np.ndarray, rng: np.random.Generator) -> float:
    """Mean over item-bootstrap resamples of the variance over candidates of (resampled mean - mean): the sampling
    spread of the candidates' labeled means around their common shift (values: (n, r), NaN: no verdict)."""
    n, r = values.shape
    seen = ~np.isnan(values)
    x = np.where(seen, values, 0.0)
    w = rng.multinomial(r, np.full(r, 1.0 / r), size=RESAMPLES).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        base = x.sum(axis=1) / seen.sum(axis=1)
        boot = (w @ x.T) / (w @ seen.T)
    delta = boot - base[None, :]
    return float(np.nanmean(np.nanvar(delta, axis=1)))


def eb_beta(le: LabeledErrors, i: int, estimate: np.ndarray, level: float, rng: np.random.Generator) -> Report:
    """Candidate i's error with a Beta prior centred on the all-items estimate (`estimate`, every candidate) and
    the concentration by the bootstrap-corrected method of moments (module docstring)."""
    seen = ~np.isnan(le.exact)
    n_lab = seen.sum(axis=1).astype(float)
    n_u = le.unlabeled_items
    total = n_lab + n_u
    emp = np.where(seen, le.exact, 0.0).sum(axis=1) / np.maximum(n_lab, 1.0)
    m = np.clip((estimate * total - emp * n_lab) / np.maximum(n_u, 1.0), 1e-6, 1 - 1e-6)  # the unlabeled part
    ok = (n_lab > 0) & (n_u > 0)
    if not ok[i] or ok.sum() < 3:
        return Report(float(estimate[i]), float("nan"), float("nan"), 0.0)
    spread = _boot_spread(le.exact[ok], rng)
    tau2 = float(np.var((emp - m)[ok])) - spread
    p = float(np.mean(m[ok]))
    c = INFINITE if tau2 <= 0 else max(p * (1 - p) / tau2 - 1.0, 0.0)
    a, b = n_lab[i] * emp[i] + c * m[i], n_lab[i] * (1 - emp[i]) + c * (1 - m[i])
    post = a / (a + b)
    var_post = a * b / ((a + b) ** 2 * (a + b + 1))
    f = n_lab[i] / total[i]
    est = f * emp[i] + (1 - f) * post
    var = (1 - f) ** 2 * (var_post + post * (1 - post) / max(n_u[i], 1.0))
    return _clip(float(est), float(var), float(f * emp[i]), float(f * emp[i] + 1 - f), level,
                 float(n_lab[i] / (n_lab[i] + c)))


def eb_pseudo_items(v: Verdicts, model: ClassModel, members: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per stratum (0..k), the vote split's pseudo-items by the bootstrap-corrected method of moments."""
    members = np.asarray(members, dtype=np.int64)
    k = members.shape[1]
    pe = pattern_errors(v, model, members)
    st = _strata(v, model, members)
    lab = v.labeled
    w = v.counts[None, :] * pe.complete * lab[None, :]
    n_lab = _by_stratum(w, st.stratum, k)
    n_wrong = _by_stratum(w * st.wrong, st.stratum, k)
    pool = (n_wrong.sum(axis=0) + 0.5) / (n_lab.sum(axis=0) + 1.0)
    idx = np.flatnonzero(lab)
    probs = v.counts[idx] / v.counts[idx].sum()
    draws = rng.multinomial(int(v.counts[idx].sum()), probs, size=RESAMPLES)
    boot_var = np.zeros(k + 1)
    got = np.zeros(k + 1)
    rate = np.where(n_lab > 0, n_wrong / np.maximum(n_lab, 1.0), np.nan)
    for dw in draws:
        mult = np.zeros(len(v.gold))
        mult[idx] = dw / v.counts[idx]
        wb = w * mult[None, :]
        nb, wr = _by_stratum(wb, st.stratum, k), _by_stratum(wb * st.wrong, st.stratum, k)
        both = (nb > 0) & (n_lab > 0)
        delta = np.where(both, wr / np.maximum(nb, 1e-12) - rate, np.nan)
        for m in range(k + 1):
            col = delta[:, m][both[:, m]]
            if len(col) > 2:
                boot_var[m] += float(col.var())
                got[m] += 1
    out = np.full(k + 1, INFINITE)
    for m in range(k + 1):
        have = n_lab[:, m] > 0
        if have.sum() > 2 and got[m] > 0:
            tau2 = float(np.var(rate[have, m])) - boot_var[m] / got[m]
            if tau2 > 0:
                out[m] = max(pool[m] * (1 - pool[m]) / tau2 - 1.0, 0.0)
    return out
