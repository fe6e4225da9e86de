"""The "folded" model's Beta-Binomial: fitted to the labeled items' correct counts and the unlabeled items' splits."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ..distributions import log_beta_binomial
from ..settings import FitSettings


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

