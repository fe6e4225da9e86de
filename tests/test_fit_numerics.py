"""The default fit's numerics without scipy (issue 30 item 5), each against scipy as the independent oracle: the exact
sums for log-Beta, digamma and trigamma differences, log C(n, s), the Binomial and Beta-Binomial pmfs, and the Newton
fit against scipy's L-BFGS-B run to a tight tolerance (benchmarks/fit_without_scipy.py does the same on every shared
data set and a few hundred histograms)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from scipy.optimize import minimize

from betaconform_cli.counts import CountTable
from betaconform_cli.distributions import binomial_pmf, log_beta_binomial, log_comb, log_rising, rising_sums
from betaconform_cli.mixtures import LOG_BOUNDS, LOGIT_BOUNDS, _objective, _starts, _unpack, default_starts, fit_mixture
from betaconform_cli.settings import Prior


class TestExactSums:
    """Sums over whole counts equal scipy's special functions."""

    def test_rising_sums_are_log_gamma_digamma_and_trigamma_differences(self) -> None:
        v = np.array([1e-3, 0.37, 4.0, 250.0, 22026.0])
        x = np.arange(61)
        t = rising_sums(v, 60, 3)
        vv = v[:, None]
        np.testing.assert_allclose(t[0], special.gammaln(vv + x) - special.gammaln(vv), rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(t[1], special.digamma(vv + x) - special.digamma(vv), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(t[2], special.polygamma(1, vv) - special.polygamma(1, vv + x), rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(log_rising(v[:, None], x[None, :]), t[0], rtol=0, atol=0)

    def test_beta_binomial_log_pmf_matches_scipy(self) -> None:
        """1e-9 relative, 1e-10 absolute (the pmf's relative error) on a seeded spread of n (0..300) and a, b
        (e^-8..e^10: the fit's bounds). Against mpmath at 40 digits the sums were within 2e-12 here, scipy 4e-11."""
        rng = np.random.default_rng(0)
        for _ in range(60):
            n = int(rng.integers(0, 301))
            a, b = np.exp(rng.uniform(-8, 10, 2))
            s = np.arange(n + 1)
            np.testing.assert_allclose(log_beta_binomial(s, n, a, b), stats.betabinom.logpmf(s, n, a, b), rtol=1e-9,
                                       atol=1e-10)

    def test_beta_binomial_broadcasts_and_refuses_fractions(self) -> None:
        a, s = np.array([[0.5], [3.0]]), np.arange(6)
        np.testing.assert_allclose(log_beta_binomial(s[None, :], 5, a, 2.0), stats.betabinom.logpmf(s, 5, a, 2.0), rtol=1e-12)
        assert log_beta_binomial(np.array([-1, 6]), 5, 1.0, 1.0).tolist() == [-np.inf, -np.inf]
        with pytest.raises(ValueError, match="whole numbers"):
            log_beta_binomial(np.array([1.5]), 5, 1.0, 1.0)

    def test_log_comb_and_binomial_pmf_match_scipy(self) -> None:
        n, s = np.arange(400)[:, None], np.arange(400)[None, :]
        ok = s <= n
        want = special.gammaln(n + 1) - special.gammaln(s + 1) - special.gammaln(n - s + 1)
        np.testing.assert_allclose(log_comb(n, s)[ok], np.broadcast_to(want, ok.shape)[ok], rtol=1e-13, atol=1e-11)
        assert np.isneginf(log_comb(n, s)[~ok]).all()
        p = np.array([0.0, 1e-9, 0.3, 1.0])
        np.testing.assert_allclose(binomial_pmf(9, p), stats.binom.pmf(np.arange(10), 9, p[:, None]), rtol=1e-12, atol=1e-300)


def scipy_optimum(table: CountTable, c: int) -> tuple[float, np.ndarray]:
    """L-BFGS-B from the fit's own starts, far tighter than the fit used to run it; (log posterior, error at k = 1..9 by
    scipy.stats.betabinom). Only the objective's value and gradient are shared (its value is checked against
    scipy.stats above and in test_fit.py; the gradient against finite differences)."""
    big_k, s, n = table.cells()
    bounds = [LOGIT_BOUNDS] * (c - 1) + [LOG_BOUNDS] * (2 * c)
    best = None
    for theta in _starts(table, c, default_starts(c), np.random.default_rng(0)):
        res = minimize(lambda t: _objective(t, big_k, s, n.astype(float), log_comb(big_k, s), c, Prior())[:2],
                       np.clip(theta, *np.array(bounds).T), jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-11})
        best = res if best is None or res.fun < best.fun else best
    assert best is not None
    logw, la, lb = _unpack(best.x, c)
    return -float(best.fun), majority_errors(np.exp(logw), np.exp(la), np.exp(lb))


def majority_errors(w: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = []
    for k in range(1, 10):
        s = np.arange(k + 1)
        e = np.where(2 * s < k, 1.0, np.where(2 * s == k, 0.5, 0.0))
        out.append(sum(wj * stats.betabinom.pmf(s, k, aj, bj) @ e for wj, aj, bj in zip(w, a, b)))
    return np.array(out)


def check_against_scipy(table: CountTable, c: int) -> None:
    fit = fit_mixture(table, c, n_init=default_starts(c), rng=np.random.default_rng(0))
    lp, errors = scipy_optimum(table, c)
    assert fit.converged and fit.log_posterior is not None
    assert fit.log_posterior >= lp - 1e-11 * abs(lp)
    m = fit.mixture
    np.testing.assert_allclose(majority_errors(np.array(m.weights), np.array(m.alphas), np.array(m.betas)), errors,
                               rtol=1e-6, atol=1e-12)


class TestNewtonFit:
    """The Newton fit reaches scipy's optimum: log posterior at least as high (1e-11 relative), errors within 1e-6."""

    @pytest.mark.parametrize(("histogram", "c"), [
        pytest.param([1, 3, 1, 6, 4, 2, 3, 5, 8, 18, 10, 39], 2, id="two peaks, 11 judges"),
        pytest.param([0] * 11 + [10], 2, id="all correct"),
        pytest.param([7, 0, 0, 0], 2, id="all wrong"),
        pytest.param([0, 0, 0, 1, 0, 0], 1, id="one item"),
        pytest.param([0] * 5 + [300] + [0] * 5, 3, id="a single distinct count"),
        pytest.param([10**7, 3 * 10**6, 10**6, 10**6, 10**6, 4 * 10**7, 9 * 10**7], 2, id="huge counts"),
    ])
    def test_same_optimum_as_scipy(self, histogram: list[int], c: int) -> None:
        check_against_scipy(CountTable.from_histogram(histogram), c)

    def test_unequal_judges(self) -> None:
        rng = np.random.default_rng(3)
        big_k = rng.integers(1, 16, 400)
        check_against_scipy(CountTable.from_pairs(big_k, rng.binomial(big_k, rng.beta(3, 1, 400))), 2)
