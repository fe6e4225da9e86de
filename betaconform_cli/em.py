"""The EM loop, once: every model that alternates an M-step and an E-step over soft class memberships runs it here.

Its users: `dawid_skene` (the one Dawid-Skene model, whose users are `score`'s two classes, `votes/agreement.py`'s
one coin and `judges/unlabeled.py`'s class-conditional model) and `latent_classes` (score's C classes). Each keeps
only what is its own: its start, its M-step (parameters from the memberships), its E-step (memberships and the objective from
the parameters) and what it does with the fit afterwards (orienting or ordering the classes). This module keeps
the iteration cap, the stopping test, the objective's history, the choice among starts, the warning when the cap
is reached, and the memberships' normalisation in log space (`log_normalise`).

One iteration is M-step then E-step, starting from the start's memberships, so the fit returned holds the
parameters of the last M-step and the memberships and objective of the E-step that followed. It stops when

- the objective settles (`watch` None): |L_t - L_(t-1)| <= tol * max(1, |L_t|), or
- the watched parameters settle (`watch` given): max |theta_t - theta_(t-1)| < tol, theta_0 = `watch_start`
  (never at the first iteration when `watch_start` is None).

mixtures.fit_paper_em is not run here on purpose: it is the paper's EM as printed (section 4.3), whose test on the
parameters' relative change sits between its M-step and its E-step and which tracks no likelihood; and
mixtures.fit_mixture is a bounded Newton fit, not an EM.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from .distributions import logsumexp
from .errors import FitWarning

P = TypeVar("P")  # a model's parameters, whatever its M-step returns
START_MARGIN = 1e-9  # a later start replaces an earlier one only if its objective is higher by more than this


@dataclass(frozen=True)
class EMFit(Generic[P]):
    """The fit from the best start: the last M-step's parameters, the last E-step's memberships and objective, the
    objective after every iteration, the iterations run and whether the stopping test was met."""

    params: P
    posterior: np.ndarray = field(repr=False)
    objective: float
    history: tuple[float, ...] = field(repr=False)
    n_iter: int
    converged: bool


def log_normalise(log_joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log posterior, log normaliser) of rows x classes of log joint probabilities: the normaliser is each row's
    log sum exp (shifted by its largest entry, so that nothing underflows), the posterior log_joint - normaliser."""
    norm: np.ndarray = logsumexp(log_joint, axis=1)
    log_post: np.ndarray = log_joint - norm[:, None]
    return log_post, norm


def _settled(objective: float, previous: float, tol: float) -> bool:
    return abs(objective - previous) <= tol * max(1.0, abs(objective))


def _from_start(
    start: np.ndarray,
    m_step: Callable[[np.ndarray], P],
    e_step: Callable[[P], tuple[np.ndarray, float]],
    max_iter: int,
    tol: float,
    watch: Callable[[P], np.ndarray] | None,
    watch_start: np.ndarray | None,
) -> EMFit[P]:
    posterior, objective, previous = start, -np.inf, -np.inf
    watched = watch_start
    history: list[float] = []
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        params = m_step(posterior)
        posterior, objective = e_step(params)
        history.append(objective)
        if watch is None:
            converged = _settled(objective, previous, tol)
            previous = objective
        else:
            new = watch(params)
            converged = watched is not None and float(np.max(np.abs(new - watched))) < tol
            watched = new
        if converged:
            break
    return EMFit(params, posterior, objective, tuple(history), n_iter, converged)


def run(
    starts: Sequence[np.ndarray],
    m_step: Callable[[np.ndarray], P],
    e_step: Callable[[P], tuple[np.ndarray, float]],
    *,
    max_iter: int,
    tol: float,
    watch: Callable[[P], np.ndarray] | None = None,
    watch_start: np.ndarray | None = None,
    name: str | None = None,
    stacklevel: int = 3,
) -> EMFit[P]:
    """EM from each start's memberships (the stopping test in the module's docstring), at most `max_iter`
    iterations each; the fit whose final objective is highest (an earlier start wins unless beaten by more than
    START_MARGIN). `name`: warn (FitWarning, at the model's caller: `stacklevel` as warnings.warn's, counted from
    here) when the chosen fit reached the cap."""
    if max_iter < 1 or not starts:
        raise ValueError("EM needs a start and at least one iteration")
    best: EMFit[P] | None = None
    for start in starts:
        fit = _from_start(start, m_step, e_step, max_iter, tol, watch, watch_start)
        if best is None or fit.objective > best.objective + START_MARGIN:
            best = fit
    assert best is not None
    if name is not None and not best.converged:
        warnings.warn(f"{name} EM did not converge in {max_iter} iterations", FitWarning, stacklevel=stacklevel)
    return best
