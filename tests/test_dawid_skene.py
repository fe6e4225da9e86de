"""The one Dawid-Skene model (betaconform_cli.dawid_skene) against independent computations: Bayes' rule one row,
class and judge at a time, and the MAP found by scipy.optimize on the likelihood written out by enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, special

from betaconform_cli.dawid_skene import DawidSkene, OneCoin, coded, vote_shares


def joint_by_loops(verdicts: np.ndarray, prior: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """P(class c, verdicts) per row, a product over judges written out (acc (J, C); wrong classes share 1 - a_jc)."""
    classes = len(prior)
    out = np.zeros((len(verdicts), classes))
    for i, row in enumerate(verdicts):
        for c in range(classes):
            p = prior[c]
            for j, v in enumerate(row):
                if v >= 0:
                    p *= acc[j, c] if v == c else (1 - acc[j, c]) / (classes - 1)
            out[i, c] = p
    return out


def map_objective(verdicts: np.ndarray, gold: np.ndarray, weight: np.ndarray, prior: np.ndarray, acc: np.ndarray,
                  a: float, b: float) -> float:
    """sum_i w_i log P(verdicts_i [, gold_i]) + the Dirichlet(2) and Beta(1 + a, 1 + b) log densities."""
    joint = joint_by_loops(verdicts, prior, acc)
    per_row = [joint[i, g] if g >= 0 else joint[i].sum() for i, g in enumerate(gold)]
    return float(weight @ np.log(per_row) + np.log(prior).sum() + (a * np.log(acc) + b * np.log1p(-acc)).sum())


def data(seed: int, classes: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    verdicts = rng.integers(-1, classes, size=(30, 4))
    verdicts[:, 0] = np.where(rng.random(30) < 0.7, np.arange(30) % classes, verdicts[:, 0])  # some signal
    gold = np.where(rng.random(30) < 0.3, np.arange(30) % classes, -1)
    return verdicts, gold, rng.integers(1, 4, size=30).astype(float)


class TestModel:
    """E-step against Bayes' rule; EM's fixed point against a direct maximisation of the same posterior density."""

    def test_e_step_is_bayes_rule_with_gold_clamped(self) -> None:
        verdicts, gold, weight = data(1)
        rng = np.random.default_rng(2)
        prior, acc = np.array([0.5, 0.3, 0.2]), rng.uniform(0.3, 0.95, size=(4, 3))
        x = coded(verdicts, 3, weight, gold)
        member, objective = DawidSkene(0.5, 0.5, map_objective=True).e_step(x, (prior, acc))
        joint = joint_by_loops(verdicts, prior, acc)
        want = joint / joint.sum(axis=1, keepdims=True)
        want[gold >= 0] = np.eye(3)[gold[gold >= 0]]
        np.testing.assert_allclose(member, want, rtol=1e-12, atol=1e-15)
        assert objective == pytest.approx(map_objective(verdicts, gold, weight, prior, acc, 0.5, 0.5), rel=1e-12)

    def test_one_coin_likelihood_is_the_class_conditional_one_with_equal_columns(self) -> None:
        verdicts, gold, weight = data(3)
        x = coded(verdicts, 3, weight, gold)
        prior, acc = np.array([0.2, 0.3, 0.5]), np.array([0.9, 0.6, 0.7, 0.4])
        got = OneCoin().e_step(x, (prior, acc))
        want = DawidSkene().e_step(x, (prior, np.repeat(acc[:, None], 3, axis=1)))
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
        assert got[1] == pytest.approx(want[1], rel=1e-13)

    @pytest.mark.parametrize("one_coin", [False, True])
    def test_em_reaches_the_map(self, one_coin: bool) -> None:
        """The EM's fixed point maximises the posterior density written out by enumeration (scipy's L-BFGS from
        the EM's answer and from a flat start agree with it within 1e-4 in every parameter)."""
        verdicts, gold, weight = data(4, classes=2)
        x = coded(verdicts, 2, weight, gold)
        model = (OneCoin if one_coin else DawidSkene)(0.5, 0.5, map_objective=True)
        fit = model.fit(x, [vote_shares(x, 0.1)], max_iter=5000, tol=1e-12, watch_accuracy=True)
        prior, acc = fit.params
        n_acc = 4 if one_coin else 8

        def negative(theta: np.ndarray) -> float:
            pi = special.softmax(np.r_[0.0, theta[:1]])
            a = special.expit(theta[1:]).reshape(4, -1)
            if not one_coin:
                return -map_objective(verdicts, gold, weight, pi, a, 0.5, 0.5)
            # one coin: each a_j has one Beta(1.5, 1.5) prior, not one per class column: one of the two taken back
            once = float((0.5 * np.log(a) + 0.5 * np.log1p(-a)).sum())
            return -map_objective(verdicts, gold, weight, pi, np.repeat(a, 2, axis=1), 0.5, 0.5) + once

        for start in (np.zeros(1 + n_acc), None):
            if start is None:
                start = np.r_[math.log(prior[1] / prior[0]), special.logit(acc.ravel())]
            best = optimize.minimize(negative, start, method="L-BFGS-B", options={"ftol": 1e-14, "gtol": 1e-9})
            assert special.softmax(np.r_[0.0, best.x[:1]]) == pytest.approx(prior, abs=1e-4)
            assert special.expit(best.x[1:]) == pytest.approx(acc.ravel(), abs=1e-4)

    def test_vote_shares_and_rows_without_a_verdict(self) -> None:
        verdicts = np.array(list(itertools.product(range(-1, 2), repeat=2)))
        shares = vote_shares(coded(verdicts, 2), 0.0)
        assert shares[0].tolist() == [0.0, 0.0]  # no verdict: no part in the first M-step
        assert shares[-1].tolist() == [0.0, 1.0] and shares[5].tolist() == [0.5, 0.5]
