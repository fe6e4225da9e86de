"""The pairwise maximum-entropy model of who errs together (ranks ensembles; docs/JUDGES.md, "Choosing").

Over the 2^J error patterns w (w_j = 1: judge j wrong), the distribution of largest entropy that matches each
judge's error rate and each pair's rate of shared mistakes is

    P(w) = exp(sum_j h_j w_j + sum_{j<l} J_jl w_j w_l) / Z           (an Ising model on {0, 1}^J).

It is fitted by penalised maximum likelihood: the h_j are shrunk toward a common value and the J_jl toward a
common value (Gaussian penalties lam_h, lam_pair on the totals; with lam -> infinity every judge and every pair
alike: an exchangeable distribution). The likelihood only needs each judge's and each pair's mistake counts;
with missing verdicts they are taken over the items where the judge (the pair) gave verdicts and scaled to all
items. Z, the moments and every subset's majority error are exact sums over the 2^J patterns, so the model is
used up to `MAX_JUDGES` judges.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import minimize

from ..distributions import majority_error_weights

MAX_JUDGES = 14


@lru_cache(maxsize=8)
def error_patterns(n_judges: int) -> np.ndarray:
    """All 2^J error patterns as rows of 0/1 (read-only)."""
    pats = ((np.arange(2**n_judges)[:, None] >> np.arange(n_judges)) & 1).astype(float)
    pats.setflags(write=False)
    return pats


def fit_maxent(correct: np.ndarray, lam_h: float = 0.1, lam_pair: float = 0.3) -> np.ndarray:
    """Pattern probabilities P(w) over error_patterns(J) of the penalised pairwise maximum-entropy fit."""
    n_items, n_judges = correct.shape
    if n_judges > MAX_JUDGES:
        raise ValueError(f"the pairwise maximum-entropy model enumerates 2^J patterns: at most {MAX_JUDGES} judges")
    seen = ~np.isnan(correct)
    wrong = np.where(seen, 1.0 - correct, 0.0)
    iu = np.triu_indices(n_judges, 1)
    pair_seen = (seen.T.astype(float) @ seen.astype(float))[iu]
    rate = wrong.sum(axis=0) / np.maximum(seen.sum(axis=0), 1)
    pair_rate = (wrong.T @ wrong)[iu] / np.maximum(pair_seen, 1)
    data = n_items * np.concatenate([rate, pair_rate])  # sufficient statistics, as if every verdict were there
    pats = error_patterns(n_judges)
    feats = np.hstack([pats, pats[:, iu[0]] * pats[:, iu[1]]])
    nh = n_judges

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        h, c, hb, cb = theta[:nh], theta[nh:-2], theta[-2], theta[-1]
        e = feats @ theta[:-2]
        top = e.max()
        p = np.exp(e - top)
        z = p.sum()
        p /= z
        loglik = data @ theta[:-2] - n_items * (np.log(z) + top)
        penalty = 0.5 * lam_h * ((h - hb) ** 2).sum() + 0.5 * lam_pair * ((c - cb) ** 2).sum() + 0.005 * (hb**2 + cb**2)
        g = data - n_items * (p @ feats)
        grad = np.concatenate(
            [g[:nh] - lam_h * (h - hb), g[nh:] - lam_pair * (c - cb), [lam_h * (h - hb).sum() - 0.01 * hb, lam_pair * (c - cb).sum() - 0.01 * cb]]
        )
        return -(loglik - penalty), -grad

    theta = minimize(objective, np.zeros(feats.shape[1] + 2), jac=True, method="L-BFGS-B").x
    e = feats @ theta[:-2]
    p = np.exp(e - e.max())
    out: np.ndarray = p / p.sum()
    return out


def maxent_subset_errors(pattern_probs: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Majority error of each subset members[n, k] under the pattern distribution (ties half)."""
    n_judges = int(round(np.log2(len(pattern_probs))))
    pats = error_patterns(n_judges)
    k = members.shape[1]
    weights = majority_error_weights(k)
    out = np.empty(len(members))
    for lo in range(0, len(members), 256):
        chunk = members[lo : lo + 256]
        right = (k - pats[:, chunk].sum(axis=2)).astype(np.int64)  # (patterns, chunk)
        out[lo : lo + 256] = pattern_probs @ weights[right]
    return out
