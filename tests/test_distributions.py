"""Distributions, thinning and majority error against scipy.stats and brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from betaconform_cli.distributions import (
    Binomial,
    Mixture,
    beta_binomial_pmf,
    binomial_pmf,
    error_rates,
    item_error_table,
    majority_error,
    majority_error_weights,
    thin,
    thinning_matrix,
)


class TestPmfs:
    """Beta-Binomial and Binomial pmfs equal scipy.stats."""

    @pytest.mark.parametrize("n,a,b", [(1, 0.5, 0.5), (11, 2.0, 3.5), (7, 0.05, 40.0), (30, 300.0, 2.0)])
    def test_beta_binomial_matches_scipy(self, n: int, a: float, b: float) -> None:
        np.testing.assert_allclose(beta_binomial_pmf(n, a, b), stats.betabinom.pmf(np.arange(n + 1), n, a, b), rtol=1e-10, atol=1e-300)

    @pytest.mark.parametrize("p", [0.0, 0.13, 0.5, 0.99, 1.0])
    def test_binomial_matches_scipy(self, p: float) -> None:
        np.testing.assert_allclose(binomial_pmf(11, p), stats.binom.pmf(np.arange(12), 11, p), atol=1e-14)

    @given(
        n=st.integers(1, 40),
        w=st.floats(0.01, 0.99),
        a=st.floats(0.05, 50),
        b=st.floats(0.05, 50),
        c=st.floats(0.05, 50),
        d=st.floats(0.05, 50),
    )
    @settings(max_examples=60, deadline=None)
    def test_mixture_pmf_sums_to_one(self, n: int, w: float, a: float, b: float, c: float, d: float) -> None:
        pmf = Mixture((w, 1 - w), (a, c), (b, d)).pmf(n)
        assert pmf.min() >= 0
        assert pmf.sum() == pytest.approx(1.0, abs=1e-9)


class TestThinning:
    """Hypergeometric thinning: the kernel, and that it commutes with the model families."""

    def test_kernel_matches_scipy_hypergeom(self) -> None:
        big_n, k = 11, 5
        h = thinning_matrix(big_n, k)
        for s_big in range(big_n + 1):
            np.testing.assert_allclose(h[s_big], stats.hypergeom.pmf(np.arange(k + 1), big_n, s_big, k), atol=1e-12)

    @given(big_n=st.integers(1, 25), data=st.data(), a=st.floats(0.1, 30), b=st.floats(0.1, 30))
    @settings(max_examples=50, deadline=None)
    def test_beta_binomial_thins_to_beta_binomial(self, big_n: int, data: st.DataObject, a: float, b: float) -> None:
        k = data.draw(st.integers(0, big_n))
        np.testing.assert_allclose(thin(beta_binomial_pmf(big_n, a, b), k), stats.betabinom.pmf(np.arange(k + 1), k, a, b), atol=1e-10)

    @given(big_n=st.integers(1, 25), data=st.data(), p=st.floats(1e-12, 1 - 1e-12) | st.sampled_from([0.0, 1.0]))
    @settings(max_examples=50, deadline=None)
    def test_binomial_thins_to_binomial(self, big_n: int, data: st.DataObject, p: float) -> None:
        # p below 1e-12 is left out: scipy's reference pmf overflows near 1e-308 (ours does not, see above)
        k = data.draw(st.integers(0, big_n))
        np.testing.assert_allclose(thin(binomial_pmf(big_n, p), k), stats.binom.pmf(np.arange(k + 1), k, p), atol=1e-10)


def brute_force_item_error(judgments: list[int], k: int) -> float:
    """Mean over every k-subset of judges of the majority error (ties half)."""
    errors = []
    for subset in itertools.combinations(judgments, k):
        s = sum(subset)
        errors.append(1.0 if 2 * s < k else 0.5 if 2 * s == k else 0.0)
    return sum(errors) / len(errors)


class TestMajorityError:
    """The majority error of an item equals the average over all its sub-ensembles."""

    @pytest.mark.parametrize("big_n,s_big", [(11, 0), (11, 4), (11, 6), (10, 5), (7, 3), (5, 5)])
    def test_item_error_equals_enumeration(self, big_n: int, s_big: int) -> None:
        judgments = [1] * s_big + [0] * (big_n - s_big)
        for k in range(1, big_n + 1):
            assert item_error_table(big_n, k)[s_big] == pytest.approx(brute_force_item_error(judgments, k), abs=1e-12)

    def test_ties_count_half(self) -> None:
        assert list(majority_error_weights(4)) == [1.0, 1.0, 0.5, 0.0, 0.0]
        assert list(majority_error_weights(3)) == [1.0, 1.0, 0.0, 0.0]

    def test_binomial_error_matches_closed_form(self) -> None:
        # eq. 2 of the paper: sum_{s < ceil(k/2)} C(k, s) p^s (1-p)^(k-s), odd k
        p = 0.62
        rates = error_rates(Binomial(p), (1, 3, 5, 11))
        for k, value in rates.items():
            expected = sum(math.comb(k, s) * p**s * (1 - p) ** (k - s) for s in range((k + 1) // 2))
            assert value == pytest.approx(expected, abs=1e-12)

    def test_mixture_error_matches_scipy(self) -> None:
        m = Mixture((0.3, 0.7), (1.0, 8.0), (5.0, 1.5))
        for k in (1, 3, 7, 11):
            expected = sum(
                w * stats.betabinom.cdf((k - 1) // 2, k, a, b) for w, a, b in zip(m.weights, m.alphas, m.betas)
            )
            assert error_rates(m, (k,))[k] == pytest.approx(expected, abs=1e-12)

    def test_even_k_equals_previous_odd_k(self) -> None:
        """With ties as half an error, k = 2m has the same error as k = 2m - 1 (a known identity)."""
        m = Mixture((0.4, 0.6), (2.0, 9.0), (3.0, 2.0))
        rates = error_rates(m, tuple(range(1, 12)))
        for k in (2, 4, 6, 8, 10):
            assert rates[k] == pytest.approx(rates[k - 1], abs=1e-12)
        assert majority_error(np.array([0.25, 0.5, 0.25])) == pytest.approx(0.5)
