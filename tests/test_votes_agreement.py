"""The "agreement" model of the vote split (betaconform_cli/votes/agreement.py): a one-coin Dawid-Skene model of
the judges, checked against Bayes' rule by enumeration, against simulated independent judges, and against a loop
over splits."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from betaconform_cli.errors import ParameterError
from betaconform_cli.votes import SplitPrior, estimate_errors
from betaconform_cli.votes.agreement import _log_posterior, fit_one_coin, split_offsets


def bayes(votes: np.ndarray, acc: np.ndarray, pi: np.ndarray, classes: int) -> np.ndarray:
    """P(gold = c | verdicts) by Bayes' rule, one item and class at a time."""
    out = np.zeros((votes.shape[0], classes))
    for i, row in enumerate(votes):
        for c in range(classes):
            p = pi[c]
            for j, v in enumerate(row):
                if v >= 0:
                    p *= acc[j] if v == c else (1 - acc[j]) / (classes - 1)
            out[i, c] = p
        out[i] /= out[i].sum()
    return out


def independent_judges(rng: np.random.Generator, items: int, acc: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Binary verdicts of judges that err independently with their own accuracy; gold = 1 with probability share."""
    gold = (rng.random(items) < share).astype(np.int64)
    right = rng.random((items, len(acc))) < acc[None, :]
    return np.where(right, gold[:, None], 1 - gold[:, None]), gold


class TestOneCoin:
    """The one-coin model's posterior and its EM fit."""

    def test_log_posterior_matches_bayes_rule(self) -> None:
        rng = np.random.default_rng(3)
        votes = rng.integers(-1, 3, size=(40, 5))
        acc = np.array([0.9, 0.7, 0.6, 0.55, 0.8])
        pi = np.array([0.5, 0.3, 0.2])
        np.testing.assert_allclose(np.exp(_log_posterior(votes, acc, pi, 3)), bayes(votes, acc, pi, 3), rtol=1e-10)

    def test_em_recovers_independent_judges(self) -> None:
        """5000 items, no labels, five judges of accuracy 0.6-0.9 and 30% gold = 1: each accuracy within 0.03 and
        the class share within 0.03 (sampling error about 0.01)."""
        acc = np.array([0.9, 0.8, 0.7, 0.65, 0.6])
        votes, _gold = independent_judges(np.random.default_rng(5), 5000, acc, 0.3)
        got, pi = fit_one_coin(votes, np.full(5000, -1), np.ones(5000), 2)
        np.testing.assert_allclose(got, acc, atol=0.03)
        assert pi[1] == pytest.approx(0.3, abs=0.03)

    def test_labels_fix_their_items(self) -> None:
        """Every item labeled: the fit is the smoothed share of each judge's verdicts that equal the gold class."""
        rng = np.random.default_rng(6)
        votes, gold = independent_judges(rng, 200, np.array([0.8, 0.6, 0.7]), 0.5)
        votes[rng.random(votes.shape) < 0.1] = -1
        got, pi = fit_one_coin(votes, gold, np.ones(200), 2)
        expect = ((votes == gold[:, None]).sum(axis=0) + 1) / ((votes >= 0).sum(axis=0) + 2)
        np.testing.assert_allclose(got, expect, rtol=1e-12)
        assert pi[1] == pytest.approx((gold.sum() + 1) / 202, rel=1e-12)

    def test_weights_equal_repeated_rows(self) -> None:
        rng = np.random.default_rng(7)
        votes, _gold = independent_judges(rng, 60, np.array([0.85, 0.7, 0.6, 0.75]), 0.4)
        weight = rng.integers(1, 4, size=60)
        gold = np.full(60, -1)
        a1, p1 = fit_one_coin(votes, gold, weight.astype(float), 2)
        a2, p2 = fit_one_coin(np.repeat(votes, weight, axis=0), np.repeat(gold, weight), np.ones(int(weight.sum())), 2)
        np.testing.assert_allclose(a1, a2, atol=1e-7)
        np.testing.assert_allclose(p1, p2, atol=1e-7)


class TestSplitOffsets:
    """A split's offset: the log odds of its items' mean P(plurality wrong)."""

    def test_offsets_match_a_loop_over_splits(self) -> None:
        rng = np.random.default_rng(8)
        votes, gold = independent_judges(rng, 120, np.array([0.9, 0.75, 0.6, 0.7, 0.8]), 0.5)
        gold[rng.random(120) < 0.8] = -1
        counts = np.stack([(votes == c).sum(axis=1) for c in range(2)], axis=1)
        splits = {m: i for i, m in enumerate(sorted(set(counts.max(axis=1).tolist())))}
        item_split = np.array([splits[m] for m in counts.max(axis=1)])
        got = split_offsets(votes, counts, np.ones(120), 2, item_split, len(splits))
        acc, pi = fit_one_coin(votes, np.full(120, -1), np.ones(120), 2)  # gold plays no part in the offsets
        post = bayes(votes, acc, pi, 2)
        for i in splits.values():
            rows = np.nonzero(item_split == i)[0]
            wrong = np.mean([1 - post[r, int(np.argmax(counts[r]))] for r in rows])
            assert got[i] == pytest.approx(np.log(wrong / (1 - wrong)), rel=1e-9, abs=1e-9)

    def test_unknown_model_is_refused(self) -> None:
        with pytest.raises(ParameterError, match="models"):
            SplitPrior(models=("flat", "nope"))


# issue 17's priors (the product of that issue, which this check measured); issue 26's default is another
ISSUE17: dict[str, Any] = {"mean1": -1.0, "sd1": 2.0, "tau": 1.0}


@pytest.mark.slow
class TestIndependentJudges:
    """Seeded check where the agreement model is the truth: judges of different skill that err independently."""

    def test_agreement_beats_the_split_alone(self) -> None:
        """7 judges of accuracy 0.55-0.85, 300 items, r = 15, 20 seeds: with the agreement model among the averaged
        models the mean |estimate - actual| at k = 1, 3, 5, 7 is below the default models' and below labels only,
        and the 90% interval covers in >= 80% of checks."""
        acc = np.array([0.85, 0.8, 0.7, 0.65, 0.6, 0.55, 0.75])
        ks = (1, 3, 5, 7)
        table = {k: np.array([self.err(7, s, k) for s in range(8)]) for k in ks}
        with_agree, without, labels, covered = [], [], [], 0
        for seed in range(20):
            rng = np.random.default_rng([21, seed])
            votes, side = independent_judges(rng, 300, acc, 0.5)
            s = (votes == side[:, None]).sum(axis=1)
            gold = np.full(300, -1)
            pick = rng.choice(300, size=15, replace=False)
            gold[pick] = side[pick]
            a = estimate_errors(votes, gold, ks, 0.9, np.random.default_rng([22, seed]),
                                prior=SplitPrior(models=("flat", "folded", "agreement", "constant"), **ISSUE17))
            b = estimate_errors(votes, gold, ks, 0.9, np.random.default_rng([22, seed]),
                                prior=SplitPrior(models=("flat", "folded", "constant"), **ISSUE17))
            for k in ks:
                actual = float(table[k][s].mean())
                with_agree.append(abs(a.row(k).estimate - actual))
                without.append(abs(b.row(k).estimate - actual))
                labels.append(abs(a.row(k).labels_only - actual))
                covered += a.row(k).low <= actual <= a.row(k).high
        assert np.mean(with_agree) < np.mean(without)
        assert np.mean(with_agree) < np.mean(labels)
        assert covered / len(with_agree) >= 0.8

    @staticmethod
    def err(n: int, s: int, k: int) -> float:
        """Majority error of k judges drawn from n with s correct (ties half), by enumerating the subsets."""
        total, wrong = 0, 0.0
        for sub in itertools.combinations(range(n), k):
            right = sum(1 for j in sub if j < s)
            wrong += 1.0 if 2 * right < k else 0.5 if 2 * right == k else 0.0
            total += 1
        return wrong / total
