"""The latent-class prediction of `score` (betaconform_cli.score.latent_classes): the EM's fixed point, invariance to row
order and to patterns with counts, recovery of known classes, and eq. (5)'s leave-one-out against a direct loop."""

from __future__ import annotations

import numpy as np
import pytest

from betaconform_cli.score.latent_classes import PRIOR_ITEMS, cross_fitted_prediction, fit_latent_classes


def three_classes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Verdicts of 8 judges from 3 known classes (weights 0.3 / 0.2 / 0.5), some verdicts missing."""
    rates = np.array([[0.1] * 8, [0.2, 0.8, 0.3, 0.7, 0.4, 0.6, 0.5, 0.5], [0.9] * 8])
    z = rng.choice(3, n, p=[0.3, 0.2, 0.5])
    verdicts = (rng.random((n, 8)) < rates[z]).astype(int)
    verdicts[rng.random((n, 8)) < 0.05] = -1
    return verdicts, z, rates


class TestFit:
    """EM for the latent classes of pass / not-pass / none verdicts."""

    def test_responsibilities_are_the_bayes_posterior(self) -> None:
        """At convergence each row's responsibilities are its posterior under the fitted weights and rates,
        computed here as products over judges."""
        verdicts, _, _ = three_classes(np.random.default_rng(1), 300)
        m = fit_latent_classes(verdicts)
        assert m.converged
        for i in range(0, 300, 17):
            like = m.weights * np.prod(
                [m.rates[:, j] if v == 1 else 1 - m.rates[:, j] if v == 0 else np.ones(3) for j, v in enumerate(verdicts[i])],
                axis=0,
            )
            assert m.responsibilities[i] == pytest.approx(like / like.sum(), abs=1e-6)

    def test_recovers_known_classes(self) -> None:
        """3000 items: the fitted weights and rates are within 0.03 / 0.06 of the true ones."""
        verdicts, _, rates = three_classes(np.random.default_rng(2), 3000)
        m = fit_latent_classes(verdicts)
        assert m.weights == pytest.approx([0.3, 0.2, 0.5], abs=0.03)
        assert np.abs(m.rates - rates).max() < 0.06

    def test_row_order_and_counts_do_not_matter(self) -> None:
        """Rows permuted give the same fit permuted; a row of weight 2 is two equal rows."""
        rng = np.random.default_rng(3)
        verdicts, _, _ = three_classes(rng, 200)
        perm = rng.permutation(200)
        a, b = fit_latent_classes(verdicts), fit_latent_classes(verdicts[perm])
        assert b.responsibilities == pytest.approx(a.responsibilities[perm], abs=1e-6)
        w = np.ones(200)
        w[:50] = 2
        c = fit_latent_classes(verdicts, w)
        d = fit_latent_classes(np.vstack([verdicts, verdicts[:50]]))
        assert c.responsibilities == pytest.approx(d.responsibilities[:200], abs=1e-6)


class TestCrossFitted:
    """Eq. (5): class pass rates from the labels, a labeled item's from the other labels (or other clusters)."""

    @staticmethod
    def direct(r: np.ndarray, prior: np.ndarray, y: np.ndarray, labeled: np.ndarray, group: np.ndarray) -> np.ndarray:
        m = r.T @ prior / r.sum(axis=0)
        lab = np.flatnonzero(labeled)

        def f_from(use: np.ndarray, i: int) -> float:
            return float(r[i] @ ((r[use].T @ y[use] + PRIOR_ITEMS * m) / (r[use].sum(axis=0) + PRIOR_ITEMS)))

        return np.array(
            [f_from(lab[group[lab] != group[i]], i) if labeled[i] else f_from(lab, i) for i in range(len(y))]
        )

    @pytest.mark.parametrize("clustered", [False, True])
    def test_against_a_direct_loop(self, clustered: bool) -> None:
        rng = np.random.default_rng(4)
        r = rng.dirichlet(np.ones(3), 60)
        prior, y, labeled = rng.random(60), (rng.random(60) < 0.6).astype(float), rng.random(60) < 0.4
        group = np.arange(60) // 3 if clustered else np.arange(60)
        got = cross_fitted_prediction(r, prior, y, labeled, np.ones(60), group if clustered else None)
        assert got == pytest.approx(self.direct(r, prior, y, labeled, group), abs=1e-12)

    def test_weights_are_repeated_rows(self) -> None:
        """A labeled row of weight 2 is two labeled items: each predicted from the other and the rest."""
        rng = np.random.default_rng(5)
        r = rng.dirichlet(np.ones(3), 30)
        prior, y, labeled = rng.random(30), (rng.random(30) < 0.5).astype(float), rng.random(30) < 0.5
        w = np.ones(30)
        w[:5] = 2
        got = cross_fitted_prediction(r, prior, y, labeled, w)
        rep = np.r_[np.arange(30), np.arange(5)]
        want = cross_fitted_prediction(r[rep], prior[rep], y[rep], labeled[rep], np.ones(35))
        assert got == pytest.approx(want[:30], abs=1e-12)
