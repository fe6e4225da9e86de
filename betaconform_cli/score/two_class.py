"""`score`'s two-class use of the one Dawid-Skene model (betaconform_cli.dawid_skene): pass / not pass, each judge its
own sensitivity and specificity, fitted by EM without the gold; and the judges' majority. Verdicts are codes 1
(pass), 0 (not pass), -1 (none); see estimator.binarize."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dawid_skene import DawidSkene, coded, vote_shares

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
    """The two-class model (class 1 pass, 0 not pass) on pass/not-pass/none verdicts (rows x judges; `weights`: items
    per row, for patterns with counts), fitted without the gold, started from the judges' vote shares (half a
    pseudo-verdict each way), stopping on the likelihood. Oriented so that the judges are on average better than
    chance (the labels of the two latent classes are otherwise exchangeable)."""
    x = coded(verdicts, 2, weights)
    fit = DawidSkene(DS_PSEUDO, DS_PSEUDO).fit(x, [vote_shares(x, 0.5)], max_iter=max_iter, tol=tol, name="Dawid-Skene")
    (prior, accuracy), q = fit.params, fit.posterior[:, 1]
    prevalence, sensitivity, specificity = float(prior[1]), accuracy[:, 1], accuracy[:, 0]
    if np.mean(sensitivity + specificity) < 1.0:  # the classes came out swapped: judges worse than chance
        q, prevalence = 1.0 - q, 1.0 - prevalence
        sensitivity, specificity = 1.0 - specificity, 1.0 - sensitivity
    return JudgeModel(prevalence, sensitivity, specificity, q, fit.converged, fit.n_iter, fit.objective)
