"""The shared EM driver (betaconform_cli.em) against independent computations: a Bernoulli mixture whose weight has
a closed-form maximum, a Gaussian mixture maximised by scipy.optimize, scipy's logsumexp and softmax."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from scipy import optimize, special, stats

from betaconform_cli import em
from betaconform_cli.errors import FitWarning

P1, P2 = 0.8, 0.3  # the Bernoulli mixture's known component rates


def bernoulli(x: np.ndarray) -> tuple[Callable[[np.ndarray], float], Callable[[float], tuple[np.ndarray, float]]]:
    """M- and E-step of the mixture pi Bernoulli(P1) + (1 - pi) Bernoulli(P2) with only pi free."""
    log_f = np.column_stack([np.where(x == 1, np.log(P1), np.log1p(-P1)), np.where(x == 1, np.log(P2), np.log1p(-P2))])

    def m_step(r: np.ndarray) -> float:
        return float(r[:, 0].mean())

    def e_step(pi: float) -> tuple[np.ndarray, float]:
        log_post, norm = em.log_normalise(log_f + np.log([pi, 1.0 - pi]))
        return np.exp(log_post), float(norm.sum())

    return m_step, e_step


def bernoulli_data(seed: int = 0, n: int = 2000) -> tuple[np.ndarray, float]:
    """Draws from the mixture with pi = 0.35, and the closed-form maximum likelihood pi: the mean of x is
    pi P1 + (1 - pi) P2, which the maximum matches exactly when it falls inside (0, 1)."""
    rng = np.random.default_rng(seed)
    z = rng.random(n) < 0.35
    x = (rng.random(n) < np.where(z, P1, P2)).astype(int)
    pi_hat = (x.mean() - P2) / (P1 - P2)
    assert 0.0 < pi_hat < 1.0
    return x, float(pi_hat)


def gaussian(x: np.ndarray) -> tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], tuple[np.ndarray, float]]]:
    """M- and E-step of pi N(mu1, 1) + (1 - pi) N(mu2, 1), parameters (pi, mu1, mu2)."""

    def m_step(r: np.ndarray) -> np.ndarray:
        return np.array([r[:, 0].mean(), r[:, 0] @ x / r[:, 0].sum(), r[:, 1] @ x / r[:, 1].sum()])

    def e_step(theta: np.ndarray) -> tuple[np.ndarray, float]:
        pi, mu1, mu2 = theta
        log_joint = np.column_stack([np.log(pi) + stats.norm.logpdf(x, mu1), np.log1p(-pi) + stats.norm.logpdf(x, mu2)])
        log_post, norm = em.log_normalise(log_joint)
        return np.exp(log_post), float(norm.sum())

    return m_step, e_step


def gaussian_data(seed: int = 1, n: int = 600) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.4, rng.normal(-1.5, 1.0, n), rng.normal(2.0, 1.0, n))


def split_start(x: np.ndarray) -> np.ndarray:
    """Memberships 0.9 / 0.1 by the sign of x."""
    first = np.where(x < 0, 0.9, 0.1)
    return np.column_stack([first, 1.0 - first])


class TestLogNormalise:
    """The posterior and normaliser in log space."""

    def test_matches_scipy(self) -> None:
        """Normaliser = scipy's logsumexp, posterior = scipy's softmax, also where exp underflows or a class is
        impossible."""
        rng = np.random.default_rng(3)
        log_joint = rng.normal(0.0, 5.0, (50, 4))
        log_joint[:10] -= 1e4
        log_joint[10:20, 2] = -np.inf
        log_post, norm = em.log_normalise(log_joint)
        np.testing.assert_allclose(norm, special.logsumexp(log_joint, axis=1), rtol=1e-13)
        np.testing.assert_allclose(np.exp(log_post), special.softmax(log_joint, axis=1), rtol=1e-12, atol=1e-300)
        assert np.all(np.exp(log_post[10:20, 2]) == 0.0)


class TestFixedPoint:
    """The driver reaches the likelihood's maximum, computed without EM."""

    def test_bernoulli_weight_closed_form(self) -> None:
        """Stopping on the parameter: pi is the closed-form maximum to 1e-9, the objective its log-likelihood."""
        x, pi_hat = bernoulli_data()
        m_step, e_step = bernoulli(x)
        fit = em.run([np.full((len(x), 2), 0.5)], m_step, e_step, max_iter=10_000, tol=1e-13,
                     watch=lambda pi: np.array([pi]))
        assert fit.converged
        assert fit.params == pytest.approx(pi_hat, abs=1e-9)
        s = int(x.sum())
        at_hat = s * np.log(pi_hat * P1 + (1 - pi_hat) * P2) + (len(x) - s) * np.log(pi_hat * (1 - P1) + (1 - pi_hat) * (1 - P2))
        assert fit.objective == pytest.approx(at_hat, rel=1e-12)

    def test_bernoulli_objective_stop(self) -> None:
        """Stopping on the objective: the objective is the closed-form maximum's log-likelihood to 1e-10."""
        x, pi_hat = bernoulli_data(seed=4)
        m_step, e_step = bernoulli(x)
        fit = em.run([np.full((len(x), 2), 0.5)], m_step, e_step, max_iter=10_000, tol=1e-14)
        s = int(x.sum())
        at_hat = s * np.log(pi_hat * P1 + (1 - pi_hat) * P2) + (len(x) - s) * np.log(pi_hat * (1 - P1) + (1 - pi_hat) * (1 - P2))
        assert fit.converged
        assert fit.objective == pytest.approx(at_hat, rel=1e-10)
        assert fit.objective <= at_hat + 1e-9  # EM never passes the maximum

    def test_gaussian_mixture_matches_scipy_optimize(self) -> None:
        """Weight and means agree with L-BFGS-B on the same log-likelihood (started elsewhere) to 1e-5."""
        x = gaussian_data()
        m_step, e_step = gaussian(x)
        fit = em.run([split_start(x)], m_step, e_step, max_iter=5000, tol=1e-14)

        def negative(theta: np.ndarray) -> float:
            pi, mu1, mu2 = theta
            return -float(np.logaddexp(np.log(pi) + stats.norm.logpdf(x, mu1), np.log1p(-pi) + stats.norm.logpdf(x, mu2)).sum())

        best = optimize.minimize(negative, [0.5, -1.0, 1.0], method="L-BFGS-B", bounds=[(1e-6, 1 - 1e-6), (None, None), (None, None)],
                                 options={"ftol": 1e-15, "gtol": 1e-10})
        assert fit.converged
        np.testing.assert_allclose(fit.params, best.x, atol=1e-5)
        assert fit.objective == pytest.approx(-best.fun, rel=1e-10)

    def test_history_rises(self) -> None:
        """EM never lowers the likelihood: the history is non-decreasing, one entry per iteration, ending at the
        fit's objective."""
        x = gaussian_data(seed=2)
        m_step, e_step = gaussian(x)
        fit = em.run([split_start(x)], m_step, e_step, max_iter=5000, tol=1e-12)
        history = np.array(fit.history)
        assert len(history) == fit.n_iter > 2
        assert history[-1] == fit.objective
        assert np.all(np.diff(history) >= -1e-9 * np.abs(history[1:]))


class TestLoop:
    """Cap, warning, stopping tests and starts."""

    def test_cap_warns_at_the_caller(self) -> None:
        """At the cap: n_iter = max_iter, not converged, one FitWarning naming the model, located at the caller of
        the model's fit (two frames above the driver); without a name, no warning."""
        x = gaussian_data()
        m_step, e_step = gaussian(x)

        def model_fit(name: str | None) -> em.EMFit[np.ndarray]:
            return em.run([split_start(x)], m_step, e_step, max_iter=3, tol=1e-14, name=name)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            fit = model_fit("mixture")
            model_fit(None)
        assert (fit.n_iter, fit.converged) == (3, False)
        assert [str(w.message) for w in caught] == ["mixture EM did not converge in 3 iterations"]
        assert caught[0].category is FitWarning
        assert (caught[0].filename, caught[0].lineno) == (__file__, line)

    def test_objective_rule(self) -> None:
        """It stops at the first iteration whose objective moved by at most tol * max(1, |objective|) (relative:
        the log-likelihood here is about -1300), read off the history."""
        x = gaussian_data()
        m_step, e_step = gaussian(x)
        tol = 1e-7
        fit = em.run([split_start(x)], m_step, e_step, max_iter=5000, tol=tol)
        h = np.array(fit.history)
        moved = np.abs(np.diff(h)) <= tol * np.maximum(1.0, np.abs(h[1:]))
        assert fit.converged and h[-1] < -100.0
        assert moved[-1] and not moved[:-1].any()

    def test_watch_start(self) -> None:
        """The parameter test compares the first M-step with `watch_start` when given (it can stop there), and
        never stops at the first iteration without it."""
        x, _ = bernoulli_data()
        m_step, e_step = bernoulli(x)
        start = np.full((len(x), 2), 0.5)
        first = m_step(start)
        at_once = em.run([start], m_step, e_step, max_iter=50, tol=1e-3, watch=lambda pi: np.array([pi]),
                         watch_start=np.array([first]))
        assert (at_once.n_iter, at_once.converged) == (1, True)
        later = em.run([start], m_step, e_step, max_iter=50, tol=1e-3, watch=lambda pi: np.array([pi]))
        assert later.n_iter >= 2

    def test_best_start_kept_in_any_order(self) -> None:
        """Equal memberships are a fixed point with both means at the sample mean (a saddle); a split start finds
        the higher maximum, which is kept whichever start comes first, identical to running it alone."""
        x = gaussian_data()
        m_step, e_step = gaussian(x)
        flat = np.full((len(x), 2), 0.5)
        alone = em.run([split_start(x)], m_step, e_step, max_iter=5000, tol=1e-12)
        saddle = em.run([flat], m_step, e_step, max_iter=5000, tol=1e-12)
        assert saddle.params[1] == pytest.approx(saddle.params[2]) == pytest.approx(x.mean())
        assert saddle.objective < alone.objective - 1.0
        for starts in ([flat, split_start(x)], [split_start(x), flat]):
            fit = em.run(starts, m_step, e_step, max_iter=5000, tol=1e-12)
            np.testing.assert_array_equal(fit.params, alone.params)
            assert (fit.objective, fit.n_iter) == (alone.objective, alone.n_iter)

    def test_needs_a_start_and_an_iteration(self) -> None:
        """No start or max_iter < 1 is a programming error."""
        m_step, e_step = bernoulli(np.array([0, 1]))
        with pytest.raises(ValueError, match="at least one iteration"):
            em.run([np.full((2, 2), 0.5)], m_step, e_step, max_iter=0, tol=1e-8)
        with pytest.raises(ValueError, match="a start"):
            em.run([], m_step, e_step, max_iter=10, tol=1e-8)
