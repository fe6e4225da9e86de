"""Issue 26 item 3, round 2: the vote split's models weighed by stacking their leave-one-label-out predictive
densities (`SplitPrior(weighting="stacking")`) and the step at unanimity, each against an independent computation:
the predictive densities by dense Simpson quadrature of each model's posterior without the held-out label, the
weights by scipy's optimiser over the simplex."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import expit, logsumexp

from betaconform_cli.errors import ParameterError
from betaconform_cli.votes import SplitPrior
from betaconform_cli.votes.posterior import SATURATED_TAU, TEMPER_GRID, _SplitPosterior

X = np.array([0.2, 0.6, 1.0])  # the splits' margins
L = np.array([-0.5, -3.0, -7.0])  # the agreement model's log odds per split (the tempered covariate)
WRONG, TRIALS = np.array([2.0, 1.0, 0.0]), np.array([4.0, 5.0, 3.0])


def _log_evidence(model: str, wrong: np.ndarray, trials: np.ndarray) -> float:
    """log of the integral over (b0, b1) of prior x the labeled outcomes' likelihood (Bernoulli sequence): flat,
    b0 ~ N(0, 1.5^2), b1 ~ N(-2, 3^2) on [-16, 8], Simpson on a dense grid; tempered, b0 ~ N(0, 1.5^2) by Simpson and
    c uniform on the model's stated 31 points of [0, 1.5] (TEMPER_GRID: the model's prior is that discrete one)."""
    g0 = np.linspace(-6.0, 6.0, 301)
    tempered = model == "tempered"
    g1 = np.linspace(*TEMPER_GRID[:2], int(TEMPER_GRID[2])) if tempered else np.linspace(-16.0, 8.0, 481)
    B0, B1 = np.meshgrid(g0, g1, indexing="ij")
    logd = stats.norm.logpdf(B0, 0.0, 1.5)
    if tempered:
        logd = logd - np.log(len(g1))
        z = B0[..., None] + B1[..., None] * L
    else:
        logd = logd + stats.norm.logpdf(B1, -2.0, 3.0) - np.log(stats.norm.cdf(8, -2, 3) - stats.norm.cdf(-16, -2, 3))
        z = B0[..., None] + B1[..., None] * X
    logd = logd + (wrong * np.log(expit(z)) + (trials - wrong) * np.log(expit(-z))).sum(axis=-1)
    top = float(logd.max())
    inner = np.exp(logd - top).sum(axis=1) if tempered else integrate.simpson(np.exp(logd - top), x=g1, axis=1)
    return top + float(np.log(integrate.simpson(inner, x=g0)))


class TestStacking:
    def test_weights_match_an_optimiser_on_quadrature_densities(self) -> None:
        """Each labeled item's leave-one-out density under each model (a ratio of evidences by quadrature), then
        the weights that maximise sum_i log sum_m w_m p_m(i) (scipy, softmax parametrisation): the estimator's
        stacking weights agree within 0.02 (its grid has 61 x 81 / 61 x 31 points; no random effect here)."""
        models = ("flat", "tempered")
        rows, counts = [], []
        for j in range(3):
            for out, n in ((1.0, WRONG[j]), (0.0, TRIALS[j] - WRONG[j])):
                if n > 0:
                    w2, t2 = WRONG.copy(), TRIALS.copy()
                    w2[j] -= out
                    t2[j] -= 1
                    rows.append([_log_evidence(m, WRONG, TRIALS) - _log_evidence(m, w2, t2) for m in models])
                    counts.append(n)
        dens, n_items = np.exp(np.array(rows)), np.array(counts)

        def loss(a: np.ndarray) -> float:
            w = np.exp(np.append(a, 0.0) - logsumexp(np.append(a, 0.0)))
            return -float(n_items @ np.log(dens @ w))

        a = optimize.minimize(loss, np.zeros(1), method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-12}).x
        want = np.exp(np.append(a, 0.0) - logsumexp(np.append(a, 0.0)))
        post = _SplitPosterior(X, np.array([np.zeros(3), L]), WRONG, TRIALS, np.ones(3, dtype=bool),
                               SplitPrior(models=models, tau=0.0, weighting="stacking"))
        got = post.model_probabilities()
        assert 0.05 < want[0] < 0.95  # a case where neither model takes all the weight
        assert got["flat"] == pytest.approx(float(want[0]), abs=0.02)
        assert sum(got.values()) == pytest.approx(1.0)

    def test_evidence_weighting_unchanged(self) -> None:
        """The default weighting is still the models' evidence: the posterior probability of "flat" equals the
        quadrature evidences' share (within 0.03)."""
        post = _SplitPosterior(X, np.array([np.zeros(3), L]), WRONG, TRIALS, np.ones(3, dtype=bool),
                               SplitPrior(models=("flat", "tempered"), tau=0.0))
        ev = np.array([_log_evidence(m, WRONG, TRIALS) for m in ("flat", "tempered")])
        assert post.model_probabilities()["flat"] == pytest.approx(float(np.exp(ev[0] - logsumexp(ev))), abs=0.03)

    def test_unknown_weighting_is_refused(self) -> None:
        with pytest.raises(ParameterError):
            SplitPrior(weighting="votes")


class TestUnanimousStep:
    def test_posterior_mean_is_two_beta_like_cells(self) -> None:
        """The "unanimous" model: P(wrong) = sigmoid(b0) where the judges disagree, sigmoid(b0 + b1) where all
        agree. Its posterior mean at the unanimous split equals the dense quadrature of that model (abs 3e-3)."""
        prior = SplitPrior(models=("unanimous",), tau=0.0, grid0=(-6.0, 6.0, 241), grid1=(-16.0, 8.0, 481))
        post = _SplitPosterior(X, np.zeros((1, 3)), WRONG, TRIALS, np.ones(3, dtype=bool), prior)
        mean, _ = post.p_wrong(np.arange(3), np.zeros(1, dtype=int), np.random.default_rng(0))
        g0, g1 = np.linspace(-6, 6, 301), np.linspace(-16, 8, 601)
        B0, B1 = np.meshgrid(g0, g1, indexing="ij")
        logd = stats.norm.logpdf(B0, 0, 1.5) + stats.norm.logpdf(B1, -2, 3)
        z = B0[..., None] + B1[..., None] * (X >= 1.0)
        logd = logd + (WRONG * np.log(expit(z)) + (TRIALS - WRONG) * np.log(expit(-z))).sum(axis=-1)
        dens = np.exp(logd - logd.max())
        norm = integrate.simpson(integrate.simpson(dens, x=g1, axis=1), x=g0)
        for j in range(3):
            num = integrate.simpson(integrate.simpson(expit(z[..., j]) * dens, x=g1, axis=1), x=g0)
            assert mean[j] == pytest.approx(num / norm, abs=3e-3)
        assert mean[0] == pytest.approx(mean[1], abs=1e-12)  # one P(wrong) wherever the judges disagree


class TestSaturated:
    def test_posterior_mean_matches_nested_quadrature(self) -> None:
        """The "saturated" model: P(wrong | split j) = sigmoid(b0 + u_j), u_j ~ N(0, SATURATED_TAU^2) independent per
        split, b0 ~ N(0, 1.5^2). Per split, E[P(wrong)] = integral over b0's posterior of E[sigmoid(b0 + u) | b0, the
        split's labels]: nested Simpson rules over b0 and u (dense grids) against the estimator's grid and
        Gauss-Hermite nodes (abs 3e-3), for a split with labels and one without."""
        x = np.array([0.2, 1.0, 0.6])
        wrong, trials = np.array([3.0, 0.0, 0.0]), np.array([5.0, 4.0, 0.0])
        post = _SplitPosterior(x, np.zeros((1, 3)), wrong, trials, np.ones(3, dtype=bool),
                               SplitPrior(models=("saturated",), grid0=(-6.0, 6.0, 241)))
        mean, _ = post.p_wrong(np.arange(3), np.zeros(1, dtype=int), np.random.default_rng(0))
        b0, u = np.linspace(-6, 6, 401), np.linspace(-9 * SATURATED_TAU, 9 * SATURATED_TAU, 1201)
        B, U = np.meshgrid(b0, u, indexing="ij")
        prior_u = stats.norm.pdf(U, 0, SATURATED_TAU)
        lik = [np.exp(w * np.log(expit(B + U)) + (t - w) * np.log(expit(-(B + U)))) * prior_u for w, t in zip(wrong, trials)]
        per_split = [integrate.simpson(li, x=u, axis=1) for li in lik]  # p(split j's labels | b0)
        post_b0 = stats.norm.pdf(b0, 0, 1.5) * per_split[0] * per_split[1] * per_split[2]
        post_b0 /= integrate.simpson(post_b0, x=b0)
        for j in range(3):
            cond = integrate.simpson(expit(B + U) * lik[j], x=u, axis=1) / per_split[j]
            assert mean[j] == pytest.approx(float(integrate.simpson(post_b0 * cond, x=b0)), abs=3e-3)
