"""The vote-split estimate from labeled and unlabeled verdicts (betaconform_cli/votes/), checked against
independent computations: scipy's hypergeometric distribution for the per-item error, brute-force loops for
the vote splits, scipy quadrature for the posterior, and seeded simulation for the interval."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from benchmarks.simulated import binary_votes
from betaconform_cli.counts import CountTable
from betaconform_cli.errors import ParameterError
from betaconform_cli.fit import analyse
from betaconform_cli.inputs.dataset import Votes
from betaconform_cli.settings import FitSettings
from betaconform_cli.votes import (
    METHOD_LABELS,
    METHOD_VOTES,
    SplitPrior,
    class_counts,
    distinct_patterns,
    estimate_errors,
    estimate_from_votes,
)
from betaconform_cli.votes.folded import _fit_folded
from betaconform_cli.votes.posterior import _SplitPosterior

from .oracles import hyper_error

KS = tuple(range(1, 12))


def pinned(b0: float, b1: float, models: tuple[str, ...] = ("flat",)) -> SplitPrior:
    """A prior whose grid is the single point (b0, b1) and no random effect: P(wrong | x) = sigmoid(b0 + b1 x)."""
    return SplitPrior(mean0=b0, mean1=b1, grid0=(b0, b0, 1), grid1=(b1, b1, 1), tau=0.0, models=models)


class TestPatterns:
    """Counting verdicts and grouping items by their vote split."""

    def test_class_counts_match_a_loop(self) -> None:
        """Counts per class ignore -1 (no verdict) and match collections.Counter row by row."""
        rng = np.random.default_rng(1)
        votes = rng.integers(-1, 4, size=(200, 7))
        counts = class_counts(votes, 4)
        for row, c in zip(votes, counts):
            want = Counter(int(v) for v in row if v >= 0)
            assert [want.get(i, 0) for i in range(4)] == list(c)

    def test_distinct_patterns_match_a_loop(self) -> None:
        """Distinct sorted splits and their multiplicities equal a dictionary count; both encodings agree."""
        rng = np.random.default_rng(2)
        counts = class_counts(rng.integers(-1, 3, size=(500, 9)), 3)
        rows, how_many, inv = distinct_patterns(counts, inverse=True)
        want = Counter(tuple(sorted(map(int, r), reverse=True)) for r in counts)
        got = {tuple(map(int, r)): int(c) for r, c in zip(rows, how_many)}
        assert got == dict(want)
        assert all(tuple(rows[i]) == tuple(sorted(counts[j], reverse=True)) for j, i in enumerate(inv))
        # the np.unique-over-rows fallback (codes too wide for 63 bits) gives the same answer
        wide = np.zeros((counts.shape[0], 40), dtype=np.int64)
        wide[:, :3] = counts * 1000
        rows2, how_many2 = distinct_patterns(wide)
        assert sorted(int(c) for c in how_many2) == sorted(want.values())
        assert {tuple(int(v) for v in r[:3] // 1000) for r in rows2} == set(want)


class TestFinitePopulation:
    """With (b0, b1) pinned, the estimate is the finite-population sum, computed here independently."""

    def test_binary_with_missing_verdicts(self) -> None:
        """Labeled items: exact error; unlabeled: (1 - p) e(m) + p e(n - m), p = sigmoid(b0 + b1 (2m - n) / n);
        items with different numbers of verdicts (-1 = none) and a 2-2 tie (never wrong in binary)."""
        rng = np.random.default_rng(3)
        votes, gold, _ = binary_votes(rng, 60, 11, 20)
        votes[rng.random(votes.shape) < 0.15] = -1
        votes[0, :] = -1
        votes[0, :4] = [0, 0, 1, 1]  # a tie: S = 2 whatever the gold
        gold[0] = -1
        b0, b1 = 0.3, -4.0
        est = estimate_errors(votes, gold, (1, 3, 5), 0.9, np.random.default_rng(0), prior=pinned(b0, b1))
        assert est.method == METHOD_VOTES
        want = np.zeros(3)
        for row, g in zip(votes, gold):
            vs = row[row >= 0]
            n = len(vs)
            c = Counter(int(v) for v in vs)
            m = max(c.values())
            for i, k in enumerate((1, 3, 5)):
                if g >= 0:
                    want[i] += hyper_error(n, c.get(int(g), 0), k) if k <= n else np.nan
                elif 2 * m == n:
                    want[i] += hyper_error(n, m, k) if k <= n else np.nan
                else:
                    p = expit(b0 + b1 * (2 * m - n) / n)
                    want[i] += (1 - p) * hyper_error(n, m, k) + p * hyper_error(n, n - m, k) if k <= n else np.nan
        # rows with fewer than k verdicts are extrapolated by the labels-only mixture: compare where all have k
        smallest = min(int((r >= 0).sum()) for r in votes)
        for i, k in enumerate((1, 3, 5)):
            if k <= smallest:
                assert est.row(k).estimate == pytest.approx(want[i] / len(votes), abs=1e-12)

    def test_multiclass_wrong_plurality_goes_to_other_classes(self) -> None:
        """Flat model: a wrong plurality's gold is another voted class in proportion to its votes, or a class
        nobody gave (S = 0) when the plurality is unanimous."""
        votes = np.array([[0, 0, 0, 1, 2], [1, 1, 1, 1, 1], [2, 2, 0, 0, 1], [0, 0, 0, 0, 1], [0, 1, 1, 1, 1]])
        gold = np.array([-1, -1, -1, 0, 1])
        b0, b1 = -0.5, -1.0
        est = estimate_errors(votes, gold, (1, 3, 5), 0.9, np.random.default_rng(0), n_classes=3, prior=pinned(b0, b1), guard=False)
        e = lambda s, k: hyper_error(5, s, k)  # noqa: E731
        p = lambda m: expit(b0 + b1 * (2 * m - 5) / 5)  # noqa: E731
        for k in (1, 3, 5):
            item1 = (1 - p(3)) * e(3, k) + p(3) * (0.5 * e(1, k) + 0.5 * e(1, k))
            item2 = (1 - p(5)) * e(5, k) + p(5) * e(0, k)
            item3 = e(2, k)  # 2-2-1: the top is tied; right -> S = 2; wrong -> the single class-2 vote, S = 1
            item3 = (1 - p(2)) * e(2, k) + p(2) * e(1, k)
            labeled = e(4, k) + e(4, k)
            assert est.row(k).estimate == pytest.approx((item1 + item2 + item3 + labeled) / 5, abs=1e-12)

    def test_every_class_tied_is_never_wrong(self) -> None:
        """Binary 3-3 ties: S = 3 whatever the gold, so P(wrong) plays no part."""
        votes = np.array([[0, 0, 0, 1, 1, 1]] * 4 + [[0, 0, 0, 0, 0, 1]] * 6)
        gold = np.array([-1] * 4 + [0] * 6)
        for b0 in (-3.0, 3.0):
            est = estimate_errors(votes, gold, (1, 3), 0.9, np.random.default_rng(0), prior=pinned(b0, 0.0), guard=False)
            for k in (1, 3):
                assert est.row(k).estimate == pytest.approx((4 * hyper_error(6, 3, k) + 6 * hyper_error(6, 5, k)) / 10)


class TestPosterior:
    """The grid posterior and the random effect against scipy quadrature."""

    def test_grid_posterior_mean_matches_quadrature(self) -> None:
        """Flat model, no random effect: the posterior mean of P(wrong) at a margin equals a 2-D integral."""
        x = np.array([0.2, 0.6, 1.0])
        wrong = np.array([2.0, 1.0, 0.0])
        trials = np.array([4.0, 5.0, 12.0])
        prior = SplitPrior(tau=0.0, models=("flat",), grid0=(-6.0, 6.0, 161), grid1=(-16.0, 8.0, 241))
        post = _SplitPosterior(x, np.zeros((1, 3)), wrong, trials, np.ones(3, dtype=bool), prior)
        mean, _ = post.p_wrong(np.arange(3), np.zeros(1, dtype=int), np.random.default_rng(0))

        # an independent dense Simpson rule over the same box (other nodes than the estimator's grid)
        g0 = np.linspace(-6, 6, 601)
        g1 = np.linspace(-16, 8, 1201)
        B0, B1 = np.meshgrid(g0, g1, indexing="ij")
        logd = stats.norm.logpdf(B0, prior.mean0, prior.sd0) + stats.norm.logpdf(B1, prior.mean1, prior.sd1)
        for xj, wj, tj in zip(x, wrong, trials):
            z = B0 + B1 * xj
            logd += wj * np.log(expit(z)) + (tj - wj) * np.log(expit(-z))
        dens = np.exp(logd - logd.max())
        norm = integrate.simpson(integrate.simpson(dens, x=g1, axis=1), x=g0)
        for j in range(3):
            num = integrate.simpson(integrate.simpson(expit(B0 + B1 * x[j]) * dens, x=g1, axis=1), x=g0)
            assert mean[j] == pytest.approx(num / norm, abs=2e-3)

    def test_random_effect_matches_quadrature(self) -> None:
        """One grid point, tau = 1.3: P(wrong) at a labeled split is E[sigmoid(z + u) | its labels], u ~ N(0, tau^2)."""
        tau, z = 1.3, -1.2
        prior = SplitPrior(mean0=z, mean1=0.0, grid0=(z, z, 1), grid1=(0.0, 0.0, 1), tau=tau, nodes=40, models=("flat",))
        post = _SplitPosterior(np.array([1.0, 0.5]), np.zeros((1, 2)), np.array([3.0, 0.0]), np.array([7.0, 0.0]),
                               np.ones(2, dtype=bool), prior)
        mean, draws = post.p_wrong(np.arange(2), np.zeros(20000, dtype=int), np.random.default_rng(5))

        def lik(u: float) -> float:
            return float(expit(z + u) ** 3 * expit(-(z + u)) ** 4 * stats.norm.pdf(u, 0, tau))

        want = integrate.quad(lambda u: expit(z + u) * lik(u), -12, 12)[0] / integrate.quad(lik, -12, 12)[0]
        prior_only = integrate.quad(lambda u: expit(z + u) * stats.norm.pdf(u, 0, tau), -12, 12)[0]
        assert mean[0] == pytest.approx(want, abs=1e-4)
        assert mean[1] == pytest.approx(prior_only, abs=1e-4)  # a split without labels keeps the prior
        assert draws[:, 0].mean() == pytest.approx(want, abs=0.01)  # draws follow the same posterior

    def test_folded_fit_recovers_the_beta_binomial(self) -> None:
        """From 20000 unlabeled binary items of BB(11, 6, 2) and 30 labeled ones, the folded fit finds (6, 2)."""
        rng = np.random.default_rng(7)
        votes, gold, s = binary_votes(rng, 20000, 11, 30, 6.0, 2.0)
        counts = class_counts(votes, 2)
        lab = gold >= 0
        rows, how_many = distinct_patterns(counts[~lab])
        a, b = _fit_folded(np.full(lab.sum(), 11), s[lab], rows, how_many, 2, None)
        assert a / (a + b) == pytest.approx(0.75, abs=0.02)
        assert a + b == pytest.approx(8.0, rel=0.2)


class TestFallbackAndApi:
    """When the labels alone are used, the checks on the inputs, the typed result."""

    def test_no_unlabeled_items_is_the_labels_only_estimate(self) -> None:
        """Every item labeled: the result is fit.analyse's default estimate of the labeled histogram."""
        rng = np.random.default_rng(4)
        votes, _, s = binary_votes(rng, 40, 9, 40)
        gold = np.where(votes[:, 0] == votes[:, 0], 0, 0)
        gold = np.array([row[0] if (row == row[0]).sum() == c else 1 - row[0] for row, c in zip(votes, s)])
        est = estimate_errors(votes, gold, KS, 0.9, np.random.default_rng(9))
        ref = analyse(CountTable.from_pairs(np.full(40, 9), s), FitSettings(), np.random.default_rng(9))
        assert est.method == METHOD_LABELS and est.unlabeled_items == 0 and est.labeled_items == 40
        assert [r.estimate for r in est.rows] == [r.estimate for r in ref.rows]

    def test_too_few_informative_labels_fall_back(self) -> None:
        """Labeled items all tied (never wrong) cannot say how often a plurality errs: labels only, and why."""
        votes = np.array([[0, 0, 1, 1]] * 6 + [[0, 0, 0, 1]] * 50)
        gold = np.array([0] * 6 + [-1] * 50)
        est = estimate_errors(votes, gold, (1, 3), 0.9, np.random.default_rng(0))
        assert est.method == METHOD_LABELS and "fewer than" in est.reason
        assert est.row(3).estimate == est.row(3).labels_only
        off = estimate_errors(votes, gold, (1, 3), 0.9, np.random.default_rng(0), use_unlabeled=False)
        assert off.method == METHOD_LABELS and off.to_dict()["unlabeled_items"] == 50

    def test_items_without_verdicts_are_dropped_and_k_beyond_extrapolates(self) -> None:
        """An item nobody judged is counted as dropped; k above some item's number of judges is flagged extrapolated."""
        rng = np.random.default_rng(6)
        votes, gold, _ = binary_votes(rng, 80, 5, 30)
        votes[3] = -1
        est = estimate_errors(votes, gold, (1, 3, 5, 7), 0.9, np.random.default_rng(1))
        assert est.dropped_items == 1
        assert est.labeled_items + est.unlabeled_items == 79
        assert [r.extrapolated for r in est.rows] == [False, False, False, True]
        votes[5, :2] = -1  # one item with 3 judges: k = 5 is extrapolated for it
        est = estimate_errors(votes, gold, (1, 3, 5, 7), 0.9, np.random.default_rng(1))
        assert [r.extrapolated for r in est.rows] == [False, False, True, True]
        assert all(0.0 <= r.low <= r.estimate <= r.high <= 1.0 for r in est.rows)

    @pytest.mark.parametrize(
        ("votes", "gold", "param"),
        [
            (np.zeros(5, dtype=int), np.zeros(5, dtype=int), "votes"),
            (np.zeros((5, 3), dtype=int), np.zeros(4, dtype=int), "gold"),
            (np.full((5, 3), -2), np.zeros(5, dtype=int), "votes"),
            (np.zeros((5, 3)) + 0.5, np.zeros(5, dtype=int), "votes"),
            (np.zeros((5, 3), dtype=int), np.full(5, -1), "gold"),
        ],
    )
    def test_bad_inputs_name_the_parameter(self, votes: np.ndarray, gold: np.ndarray, param: str) -> None:
        """Wrong shapes, codes below -1, fractional codes, no labeled item: ParameterError naming the input."""
        with pytest.raises(ParameterError) as err:
            estimate_errors(votes, gold, (1,), 0.9, np.random.default_rng(0))
        assert err.value.param == param

    def test_rng_and_level_are_checked(self) -> None:
        """No generator, or a confidence level outside (0, 1): ParameterError."""
        votes, gold = np.zeros((4, 3), dtype=int), np.array([0, -1, -1, -1])
        with pytest.raises(ParameterError, match="rng"):
            estimate_errors(votes, gold, (1,), 0.9, None)
        with pytest.raises(ParameterError, match="confidence_level"):
            estimate_errors(votes, gold, (1,), 1.0, np.random.default_rng(0))

    def test_pattern_counts_equal_repeated_rows(self) -> None:
        """Rows with counts (a reader's distinct patterns, Dataset.votes) give the numbers of the rows repeated."""
        rng = np.random.default_rng(15)
        votes, gold, _ = binary_votes(rng, 300, 7, 30)
        votes[rng.random(votes.shape) < 0.1] = -1
        key = np.column_stack([votes, gold])
        uniq, inv = np.unique(key, axis=0, return_inverse=True)
        counts = np.bincount(np.asarray(inv).ravel(), minlength=len(uniq))
        order = np.argsort(np.asarray(inv).ravel(), kind="stable")
        rows = estimate_errors(votes[order], gold[order], KS, 0.9, np.random.default_rng(4))
        pats = estimate_errors(uniq[:, :-1], uniq[:, -1], KS, 0.9, np.random.default_rng(4), counts=counts)
        assert (pats.labeled_items, pats.unlabeled_items) == (rows.labeled_items, rows.unlabeled_items) == (30, 270)
        for a, b in zip(pats.rows, rows.rows):
            assert a.estimate == pytest.approx(b.estimate, abs=1e-12)
            assert a.low == pytest.approx(b.low, abs=0.01) and a.high == pytest.approx(b.high, abs=0.01)
        v = Votes(judges=tuple(f"j{i}" for i in range(7)), classes=("no", "yes"), patterns=uniq[:, :-1],
                  gold=uniq[:, -1], counts=counts)
        via = estimate_from_votes(v, KS, 0.9, np.random.default_rng(4))
        assert [r.estimate for r in via.rows] == [r.estimate for r in pats.rows]
        with pytest.raises(ParameterError, match="counts"):
            estimate_errors(uniq[:, :-1], uniq[:, -1], KS, 0.9, np.random.default_rng(4), counts=counts[:-1])

    def test_seeded_and_serialisable(self) -> None:
        """The same seed gives the same numbers; to_dict keeps 'items' as the labeled count."""
        rng = np.random.default_rng(8)
        votes, gold, _ = binary_votes(rng, 300, 7, 25)
        one = estimate_errors(votes, gold, KS, 0.8, np.random.default_rng(3))
        two = estimate_errors(votes, gold, KS, 0.8, np.random.default_rng(3))
        assert one.rows == two.rows
        d = one.to_dict()
        assert d["items"] == 25 and d["unlabeled_items"] == 275 and d["method"] == METHOD_VOTES
        assert len(d["error_rates"]) == len(KS)


class TestInterval:
    """The interval against simulation of the unlabeled items' outcomes."""

    def test_pinned_interval_matches_simulated_outcomes(self) -> None:
        """(b0, b1) pinned: the only uncertainty is which unlabeled pluralities are wrong (independent Bernoulli);
        the 90% interval matches the quantiles of 20000 simulated outcomes within 0.6 points."""
        rng = np.random.default_rng(10)
        votes, gold, _ = binary_votes(rng, 400, 9, 40, 3.0, 2.0)
        b0, b1 = 0.0, -3.0
        est = estimate_errors(votes, gold, (1, 5, 9), 0.9, np.random.default_rng(2), prior=pinned(b0, b1), n_draws=20000)
        n = 9
        lab = gold >= 0
        m = np.maximum((votes == 0).sum(axis=1), (votes == 1).sum(axis=1))
        s_lab = np.array([(row == g).sum() for row, g in zip(votes[lab], gold[lab])])
        p = expit(b0 + b1 * (2 * m[~lab] - n) / n)
        sim = np.random.default_rng(11)
        wrong = sim.random((20000, p.size)) < p
        for k in (1, 5, 9):
            e = np.array([hyper_error(n, s, k) for s in range(n + 1)])
            total = e[s_lab].sum() + np.where(wrong, e[n - m[~lab]], e[m[~lab]]).sum(axis=1)
            lo, hi = np.quantile(total / len(votes), [0.05, 0.95])
            assert est.row(k).low == pytest.approx(lo, abs=0.006)
            assert est.row(k).high == pytest.approx(hi, abs=0.006)


@pytest.mark.slow
class TestStatistical:
    """Seeded statistical checks: coverage, accuracy against labels only, speed."""

    def test_coverage_and_gain_on_exchangeable_judges(self) -> None:
        """Beta-Binomial judges (the model's home ground), 400 items, r = 20, 40 seeds: the 90% interval covers the
        whole set's actual error in >= 80% of checks (k = 1, 5, 11) and the mean margin is below labels only."""
        covered, checks, ours, labels = 0, 0, [], []
        table = {k: np.array([hyper_error(11, v, k) for v in range(12)]) for k in (1, 5, 11)}
        for seed in range(40):
            rng = np.random.default_rng([12, seed])
            votes, gold, s = binary_votes(rng, 400, 11, 20, 4.0, 1.5)
            est = estimate_errors(votes, gold, (1, 5, 11), 0.9, rng)
            for k in (1, 5, 11):
                actual = float(np.mean(table[k][s]))
                row = est.row(k)
                covered += row.low <= actual <= row.high
                checks += 1
                ours.append(abs(row.estimate - actual))
                labels.append(abs(row.labels_only - actual))
        assert covered / checks >= 0.8
        assert np.mean(ours) < np.mean(labels)

    @pytest.mark.parametrize("case", ["copies", "noise"])
    def test_no_worse_than_labels_only_when_verdicts_carry_no_information(self, case: str) -> None:
        """Verdicts that say nothing about correctness beyond the labels: 'copies' (one judge copied 9 times: every
        split unanimous) and 'noise' (verdicts independent of the gold). Over 20 seeds (250 items, r = 20) the
        mean |estimate - actual| at k = 1, 5, 9 is within 10% (+0.2 points) of the labels-only estimate's."""
        ours, labels = [], []
        for seed in range(20):
            rng = np.random.default_rng([14, seed])
            items, judges = 250, 9
            side = rng.integers(0, 2, size=items)
            if case == "copies":
                right = rng.random(items) < 0.7
                votes = np.repeat(np.where(right, side, 1 - side)[:, None], judges, axis=1)
            else:
                votes = rng.integers(0, 2, size=(items, judges))
            s = (votes == side[:, None]).sum(axis=1)
            gold = np.full(items, -1)
            pick = rng.choice(items, size=20, replace=False)
            gold[pick] = side[pick]
            est = estimate_errors(votes, gold, (1, 5, 9), 0.9, rng)
            for k in (1, 5, 9):
                per_s = np.array([hyper_error(judges, v, k) for v in range(judges + 1)])
                actual = float(per_s @ np.bincount(s, minlength=judges + 1)) / items
                ours.append(abs(est.row(k).estimate - actual))
                labels.append(abs(est.row(k).labels_only - actual))
        assert np.mean(ours) <= 1.1 * np.mean(labels) + 0.002
