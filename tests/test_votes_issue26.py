"""Issue 26 item 3: the vote split's "tempered" model and the label-free guard (betaconform_cli/votes), each against
an independent computation (scipy quadrature, a loop over pairs of judges, the null distribution by simulation)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from betaconform_cli.votes import METHOD_LABELS, METHOD_VOTES, SplitPrior, estimate_errors
from betaconform_cli.votes.agreement import CHANCE_Z, agreement_z
from betaconform_cli.votes.posterior import TEMPER_GRID, _SplitPosterior


class TestTempered:
    def test_posterior_mean_matches_quadrature(self) -> None:
        """P(wrong | split j) = sigmoid(b0 + c L_j), b0 ~ N(0, 1.5^2), c ~ U(0, 1.5): the grid posterior mean equals
        a dense Simpson rule over (b0, c) (tolerance 3e-3: the estimator's c grid has 31 points)."""
        log_odds = np.array([-0.5, -3.0, -7.0])  # the agreement model's log odds per split (the tempered covariate)
        wrong, trials = np.array([2.0, 1.0, 0.0]), np.array([4.0, 5.0, 9.0])
        prior = SplitPrior(models=("tempered",), tau=0.0, grid0=(-6.0, 6.0, 161))
        post = _SplitPosterior(np.zeros(3), log_odds[None, :], wrong, trials, np.ones(3, dtype=bool), prior)
        mean, _ = post.p_wrong(np.arange(3), np.zeros(1, dtype=int), np.random.default_rng(0))

        g0, gc = np.linspace(-6, 6, 801), np.linspace(TEMPER_GRID[0], TEMPER_GRID[1], 601)
        B0, C = np.meshgrid(g0, gc, indexing="ij")
        logd = stats.norm.logpdf(B0, 0.0, prior.sd0)
        for lj, wj, tj in zip(log_odds, wrong, trials):
            z = B0 + C * lj
            logd = logd + wj * np.log(expit(z)) + (tj - wj) * np.log(expit(-z))
        dens = np.exp(logd - logd.max())
        norm = integrate.simpson(integrate.simpson(dens, x=gc, axis=1), x=g0)
        for j in range(3):
            num = integrate.simpson(integrate.simpson(expit(B0 + C * log_odds[j]) * dens, x=gc, axis=1), x=g0)
            assert mean[j] == pytest.approx(num / norm, abs=3e-3)
        b0, c = post.means(tempered=True) or (np.nan, np.nan)
        want_c = integrate.simpson(integrate.simpson(C * dens, x=gc, axis=1), x=g0) / norm
        assert c == pytest.approx(want_c, abs=0.02)

    def test_guard_models_weigh_in_the_probabilities_only(self) -> None:
        """A model named in guard_models gets its posterior probability but no say in the estimate: the estimate
        equals the one without it, renormalised (same grid, same labels)."""
        x, off = np.array([0.2, 0.6, 1.0]), np.array([-1.0, -3.0, -6.0])
        wrong, trials, can = np.array([1.0, 1.0, 0.0]), np.array([3.0, 4.0, 6.0]), np.ones(3, dtype=bool)
        both = SplitPrior(models=("flat", "tempered", "constant"), guard_models=("constant",))
        alone = SplitPrior(models=("flat", "tempered"))
        a = _SplitPosterior(x, np.array([np.zeros(3), off, np.zeros(3)]), wrong, trials, can, both)
        b = _SplitPosterior(x, np.array([np.zeros(3), off]), wrong, trials, can, alone)
        rng = np.random.default_rng(0)
        assert a.p_wrong(np.arange(3), np.zeros(1, dtype=int), rng)[0] == pytest.approx(
            b.p_wrong(np.arange(3), np.zeros(1, dtype=int), rng)[0], abs=1e-9)
        assert 0.0 < a.model_probabilities()["constant"] < 1.0
        assert sum(a.model_probabilities().values()) == pytest.approx(1.0)


def _z_by_pairs(votes: np.ndarray, classes: int) -> float:
    """agreement_z written out: per item, the share of agreeing pairs of present judges minus the sum over those
    pairs of sum_c rate_j(c) rate_l(c), each judge's class rates counted over the items it voted on."""
    judges = votes.shape[1]
    rates = np.array([[np.mean(votes[votes[:, j] >= 0, j] == c) for c in range(classes)] for j in range(judges)])
    d = []
    for row in votes:
        pairs = [(j, k) for j, k in itertools.combinations(range(judges), 2) if row[j] >= 0 and row[k] >= 0]
        if pairs:
            d.append(np.mean([float(row[j] == row[k]) - float(rates[j] @ rates[k]) for j, k in pairs]))
    arr = np.array(d)
    return float(arr.mean() / (arr.std(ddof=1) / np.sqrt(len(arr))))


class TestAgreementZ:
    def test_matches_a_loop_over_pairs(self) -> None:
        rng = np.random.default_rng(3)
        votes = rng.integers(-1, 3, size=(40, 5))
        votes[:, 0] = np.where(votes[:, 0] < 0, 0, votes[:, 0])
        assert agreement_z(votes, np.ones(40), 3) == pytest.approx(_z_by_pairs(votes, 3), rel=1e-9)

    def test_false_alarm_rate_under_independent_judges(self) -> None:
        """Judges that vote independently of each other (their own class rates, no gold): z exceeds the guard's
        threshold in about 5% of 400 seeded panels (binomial 99.9% band: 1.5% to 9.5%)."""
        rng = np.random.default_rng(26)
        hits = 0
        for _ in range(400):
            rates = rng.uniform(0.2, 0.8, size=7)
            votes = (rng.random((200, 7)) < rates[None, :]).astype(np.int64)
            hits += agreement_z(votes, np.ones(200), 2) >= CHANCE_Z
        assert 0.015 <= hits / 400 <= 0.095

    def test_guard_falls_back_on_noise_and_uses_informative_verdicts(self) -> None:
        rng = np.random.default_rng(8)
        side = rng.integers(0, 2, size=300)
        gold = np.full(300, -1)
        gold[:20] = side[:20]
        noise = estimate_errors(rng.integers(0, 2, size=(300, 9)), gold, (1, 5), 0.9, np.random.default_rng(1))
        right = rng.random((300, 9)) < 0.75
        informative = estimate_errors(np.where(right, side[:, None], 1 - side[:, None]), gold, (1, 5), 0.9,
                                      np.random.default_rng(1))
        assert noise.method == METHOD_LABELS and "no more than chance" in noise.reason
        assert informative.method == METHOD_VOTES and informative.model is not None
        assert (informative.model.agreement_z or 0.0) > CHANCE_Z
