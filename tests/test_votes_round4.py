"""Issue 26 item 3, round 4 (docs/UNLABELED.md): the judges' dependence share, the rectified (prediction-powered)
estimate and the difficulty model, each against an independent computation (a loop over pairs of judges, exact
enumeration of every labeled subset, scipy's Student t, a seeded simulation from the model itself)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import comb, expit

from betaconform_cli.votes import METHOD_VOTES, estimate_errors
from betaconform_cli.votes.agreement import dependence_share
from betaconform_cli.votes.difficulty import fit_difficulty
from betaconform_cli.votes.rectified import item_terms, rectified


def _error(n: int, s: int, k: int) -> float:
    """Exact majority error of k judges drawn from n of which s are right (ties half), by enumerating subsets."""
    subsets = list(itertools.combinations(range(n), k))
    wrong = [(lambda right: 1.0 if 2 * right < k else 0.5 if 2 * right == k else 0.0)(sum(1 for j in c if j < s)) for c in subsets]
    return sum(wrong) / len(subsets)


class TestDependenceShare:
    def test_matches_a_loop_over_pairs(self) -> None:
        """D = 1 - observed / implied disagreements, summed over pairs on the items both judged (missing verdicts)."""
        rng = np.random.default_rng(3)
        votes = rng.integers(0, 3, size=(40, 4))
        votes[rng.random(votes.shape) < 0.2] = -1
        w = rng.integers(1, 4, size=40).astype(float)
        acc = np.array([0.6, 0.7, 0.8, 0.5])
        obs = imp = 0.0
        for j, m in itertools.permutations(range(4), 2):
            for i in range(40):
                if votes[i, j] >= 0 and votes[i, m] >= 0:
                    obs += w[i] * (votes[i, j] != votes[i, m])
                    imp += w[i] * (1 - acc[j] * acc[m] - (1 - acc[j]) * (1 - acc[m]) / 2)
        assert dependence_share(votes, w, 3, acc) == pytest.approx(1 - obs / imp, rel=1e-12)

    def test_independent_judges_near_zero_copies_far_above(self) -> None:
        """Judges that err independently at their accuracies: |D| < 0.03 (20000 items; its standard error is
        ~0.005); two judges copied three times each: D > 0.3."""
        rng = np.random.default_rng(5)
        acc = np.array([0.9, 0.8, 0.75, 0.7, 0.85, 0.65])
        gold = rng.integers(0, 2, size=20000)
        right = rng.random((20000, 6)) < acc
        votes = np.where(right, gold[:, None], 1 - gold[:, None])
        assert abs(dependence_share(votes, np.ones(20000), 2, acc)) < 0.03
        copies = np.repeat(votes[:, :2], 3, axis=1)
        acc_c = np.repeat(acc[:2], 3)
        assert dependence_share(copies, np.ones(20000), 2, acc_c) > 0.3


class TestRectified:
    def _population(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        counts = np.array([[5, 0], [4, 1], [3, 2], [1, 4], [2, 3], [0, 5], [4, 1], [3, 2]])
        gold = np.array([0, 0, 1, 1, 0, 1, 1, 0])
        logq = np.log(np.array([[0.97, 0.03], [0.8, 0.2], [0.6, 0.4], [0.1, 0.9], [0.35, 0.65], [0.02, 0.98],
                                [0.75, 0.25], [0.55, 0.45]]))
        return counts, gold, logq

    def _err(self, n: int) -> np.ndarray:
        return np.array([[_error(n, s, k) for k in (1, 3, 5)] for s in range(n + 1)])

    def test_unbiased_over_every_labeled_subset(self) -> None:
        """Exact enumeration of all C(8, 3) = 56 labeled subsets: the mean of the estimate equals the population's
        true error at every k (1e-12), whatever the label-free prediction."""
        counts, gold, logq = self._population()
        truth = np.mean([self._err(5)[counts[i, gold[i]]] for i in range(8)], axis=0)
        total = np.zeros(3)
        for lab in itertools.combinations(range(8), 3):
            g = np.full(8, -1)
            g[list(lab)] = gold[list(lab)]
            f, v, y = item_terms(counts, g, logq, self._err, 3)
            total += rectified(f, v, y, np.ones(8), 0.9)[0]
        assert total / comb(8, 3) == pytest.approx(truth, abs=1e-12)

    def test_interval_is_student_t_with_the_larger_variance(self) -> None:
        """One labeled subset, by hand: f and the model's variance from q, residual variance (ddof 1), the
        finite-population factor, scipy's t quantile with r - 1 degrees of freedom."""
        counts, gold, logq = self._population()
        g = np.full(8, -1)
        g[[1, 2, 4, 7]] = gold[[1, 2, 4, 7]]
        est, lo, hi = rectified(*item_terms(counts, g, logq, self._err, 3), np.ones(8), 0.9)
        q = np.exp(logq)
        e = self._err(5)
        f = np.array([q[i, 0] * e[counts[i, 0]] + q[i, 1] * e[counts[i, 1]] for i in range(8)])
        var_model = np.mean([q[i, 0] * (e[counts[i, 0]] - f[i]) ** 2 + q[i, 1] * (e[counts[i, 1]] - f[i]) ** 2
                             for i in range(8)], axis=0)
        res = np.array([e[counts[i, gold[i]]] - f[i] for i in (1, 2, 4, 7)])
        centre = f.mean(axis=0) + res.mean(axis=0)
        half = stats.t.ppf(0.95, 3) * np.sqrt((1 - 4 / 8) * np.maximum(res.var(axis=0, ddof=1), var_model) / 4)
        assert est == pytest.approx(centre, abs=1e-12)
        assert lo == pytest.approx(np.clip(centre - half, 0, 1), abs=1e-12)
        assert hi == pytest.approx(np.clip(centre + half, 0, 1), abs=1e-12)

    def test_through_estimate_errors(self) -> None:
        """estimator="rectified" reports the method, the dependence share, and rows up to the fewest judges."""
        rng = np.random.default_rng(2)
        gold_all = rng.integers(0, 2, size=300)
        right = rng.random((300, 5)) < np.array([0.85, 0.8, 0.75, 0.7, 0.8])
        votes = np.where(right, gold_all[:, None], 1 - gold_all[:, None])
        gold = np.full(300, -1)
        gold[:20] = gold_all[:20]
        est = estimate_errors(votes, gold, (1, 3, 5, 7), 0.9, np.random.default_rng(0), estimator="rectified")
        assert est.method == METHOD_VOTES and est.reason.startswith("rectified")
        assert est.model is not None and est.model.dependence is not None and abs(est.model.dependence) < 0.1
        assert est.row(7).extrapolated and not est.row(5).extrapolated
        for r in est.rows:
            assert r.low <= r.estimate <= r.high


class TestDifficulty:
    def test_recovers_the_model_it_is_fitted_to(self) -> None:
        """Verdicts drawn from the model itself (6 judges, sigma = 1, 4000 items, seeded): sigma within 0.2 and each
        judge's a_j within 0.3 of the truth; with sigma = 0 (independent judges) the fitted sigma stays below 0.3."""
        rng = np.random.default_rng(11)
        a = np.array([2.0, 1.5, 1.0, 0.8, 1.2, 0.5])
        for sigma, tol in ((1.0, 0.2), (0.0, 0.3)):
            gold = rng.integers(0, 2, size=4000)
            d = sigma * rng.standard_normal(4000)
            right = rng.random((4000, 6)) < expit(a[None, :] - d[:, None])
            votes = np.where(right, gold[:, None], 1 - gold[:, None])
            a_hat, s_hat, prior = fit_difficulty(votes, np.ones(4000), 2)
            assert abs(s_hat - sigma) < tol
            assert np.max(np.abs(a_hat - a)) < 0.3
            assert prior[0] == pytest.approx(0.5, abs=0.03)
            assert math.isfinite(float(a_hat.sum()))
