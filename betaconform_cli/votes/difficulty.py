"""The "difficulty" model's offset (docs/UNLABELED.md, "round 4"): a one-coin Dawid-Skene model whose items differ
in difficulty, so that judges err together on hard items (the item-difficulty models of Whitehill et al. 2009,
GLAD, and of item response theory, with the difficulty a random effect).

P(judge j gives the gold class on item i | d_i) = sigmoid(a_j - d_i), d_i = sigma u_i with u_i ~ N(0, 1) (Gauss-
Hermite quadrature), a wrong verdict any other class with equal probability, the gold class's prior pi. Fitted by
maximum marginal likelihood to every item's verdicts with the gold ignored (as the agreement model is), started from
the one-coin fit; an item's P(plurality wrong) is then 1 - P(gold is a top class | its verdicts), and a split's
offset the log odds of its items' mean (`agreement.split_offsets` with these posteriors). sigma = 0 is the one-coin
model; shared mistakes raise sigma, which shrinks how much a lopsided split is trusted.
"""

from __future__ import annotations

import numpy as np

from ..dawid_skene import one_hot
from ..distributions import logsumexp
from .agreement import fit_one_coin

NODES = 15
_SIGMA_MAX = 5.0


def _row_log_lik(onehot: np.ndarray, has: np.ndarray, a: np.ndarray, sigma: float, u: np.ndarray,
                 classes: int) -> np.ndarray:
    """rows x classes x nodes: log P(a row's verdicts | gold c, difficulty sigma u_n)."""
    z = a[:, None] - sigma * u[None, :]  # judges x nodes
    log_right = -np.logaddexp(0.0, -z)
    log_wrong = -np.logaddexp(0.0, z) - np.log(max(classes - 1, 1))
    out: np.ndarray = np.einsum("rjc,jn->rcn", onehot, log_right - log_wrong) + (has @ log_wrong)[:, None, :]
    return out


def fit_difficulty(votes: np.ndarray, weight: np.ndarray, classes: int) -> tuple[np.ndarray, float, np.ndarray]:
    """(each judge's a_j, sigma, the class prior) by maximum marginal likelihood on the distinct verdict rows."""
    # only this option needs scipy.optimize: the default fit's path stays without it
    from scipy.optimize import minimize

    rows, inv = np.unique(votes, axis=0, return_inverse=True)
    w = np.bincount(np.asarray(inv).ravel(), weights=weight, minlength=len(rows))
    onehot = one_hot(rows, classes)
    has = (rows >= 0).astype(float)
    u, omega = np.polynomial.hermite_e.hermegauss(NODES)
    log_omega = np.log(omega / omega.sum())
    acc, pi = fit_one_coin(rows, np.full(len(rows), -1), w, classes)
    n_j = rows.shape[1]

    def unpack(theta: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
        logits = np.concatenate([[0.0], theta[n_j + 1:]])
        return theta[:n_j], float(np.clip(np.exp(theta[n_j]), 0.0, _SIGMA_MAX)), np.exp(logits - logsumexp(logits))

    def nll(theta: np.ndarray) -> float:
        a, sigma, prior = unpack(theta)
        ll = _row_log_lik(onehot, has, a, sigma, u, classes) + log_omega[None, None, :] + np.log(prior)[None, :, None]
        return -float(w @ logsumexp(ll.reshape(len(rows), -1), axis=1)) + 0.5 * float(a @ a) / 100.0

    acc = np.clip(acc, 1e-3, 1 - 1e-3)
    start = np.concatenate([np.log(acc / (1 - acc)), [np.log(0.5)], np.log(pi[1:] / pi[0])])
    res = minimize(nll, start, method="L-BFGS-B")
    return unpack(np.asarray(res.x))


def difficulty_posterior(votes: np.ndarray, weight: np.ndarray, classes: int) -> np.ndarray:
    """items x classes log P(gold = c | the item's verdicts) under the fitted difficulty model (gold ignored)."""
    a, sigma, prior = fit_difficulty(votes, weight, classes)
    rows, inv = np.unique(votes, axis=0, return_inverse=True)
    u, omega = np.polynomial.hermite_e.hermegauss(NODES)
    ll = _row_log_lik(one_hot(rows, classes), (rows >= 0).astype(float), a, sigma, u, classes)
    joint = logsumexp(ll + np.log(omega / omega.sum())[None, None, :], axis=2) + np.log(prior)[None, :]
    out: np.ndarray = (joint - logsumexp(joint, axis=1)[:, None])[np.asarray(inv).ravel()]
    return out
