"""The prediction of `score`: a two-class Dawid-Skene model of all judges' pass / not-pass verdicts (each judge its
own sensitivity and specificity, verdicts independent given the item's gold), fitted by EM without the gold, and
the judges' majority. Verdicts are codes 1 (pass), 0 (not pass), -1 (none); see betaconform_cli.score.binarize."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import em

DS_MAX_ITER = 500
DS_TOL = 1e-8
DS_PSEUDO = 1.0  # Beta(1 + a, 1 + a) smoothing of each judge's sensitivity and specificity (a pseudo-item each way)


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

    def m_step(q: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:  # MAP: Beta(1 + a, 1 + a) on every rate
        wq, wr = w * q, w * (1 - q)
        prevalence = (wq.sum() + a) / (w.sum() + 2 * a)
        sensitivity = (wq @ pos + a) / (wq @ (pos + neg) + 2 * a)
        specificity = (wr @ neg + a) / (wr @ (pos + neg) + 2 * a)
        return prevalence, sensitivity, specificity

    def e_step(params: tuple[float, np.ndarray, np.ndarray]) -> tuple[np.ndarray, float]:
        prevalence, sensitivity, specificity = params
        log_pass = math.log(prevalence) + pos @ np.log(sensitivity) + neg @ np.log1p(-sensitivity)
        log_fail = math.log1p(-prevalence) + pos @ np.log1p(-specificity) + neg @ np.log(specificity)
        log_post, norm = em.log_normalise(np.stack([log_pass, log_fail], axis=1))
        return np.exp(log_post[:, 0]), float(w @ norm)

    fit = em.run([q], m_step, e_step, max_iter=max_iter, tol=tol, name="Dawid-Skene")
    (prevalence, sensitivity, specificity), q = fit.params, fit.posterior
    if np.mean(sensitivity + specificity) < 1.0:  # the classes came out swapped: judges worse than chance
        q, prevalence = 1.0 - q, 1.0 - prevalence
        sensitivity, specificity = 1.0 - specificity, 1.0 - sensitivity
    return JudgeModel(float(prevalence), sensitivity, specificity, q, fit.converged, fit.n_iter, fit.objective)
