"""`judges` core: subset errors, pairs, Cochran's Q, intervals, validation, cost selection, views, simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import orjson
import pytest
from scipy import stats

from betaconform_cli.errors import UsageError
from betaconform_cli.fit import analyse
from betaconform_cli.judges import (
    ClassPosterior,
    JudgesSettings,
    ModelSettings,
    analyse_judges,
    cochran_q,
    default_ks,
    pair_table,
    wilson_interval,
)
from betaconform_cli.judges.analysis import _cheapest, _Target, widen
from betaconform_cli.judges.descriptive import count_table
from betaconform_cli.judges.document import judges_body, judges_document
from betaconform_cli.judges.maxent import error_patterns, fit_maxent, maxent_subset_errors
from betaconform_cli.judges.model import (
    all_subset_error_draws,
    poisson_binomial_pmf,
    sample_posterior,
    subset_error_draws,
)
from betaconform_cli.judges.subsets import SubsetTable, beam_tables, empirical_subset_errors, exact_tables
from betaconform_cli.report.judges import views
from betaconform_cli.report.views import TableView
from betaconform_cli.settings import FitSettings

FAST = JudgesSettings(model=ModelSettings(sweeps=150, burn_in=50, thin=1))
NAMES5 = ("a", "b", "c", "d", "e")


def majority_error(correct_count: int, k: int) -> float:
    return 1.0 if 2 * correct_count < k else 0.5 if 2 * correct_count == k else 0.0


def random_posterior(seed: int, draws: int = 3, classes: int = 2, judges: int = 5) -> ClassPosterior:
    rng = np.random.default_rng(seed)
    return ClassPosterior(rng.dirichlet(np.ones(classes), draws), rng.uniform(0.05, 0.95, (draws, classes, judges)), np.ones(draws))


def simulate_groups(seed: int, n: int, judges: int = 7) -> np.ndarray:
    """Easy items, and items hard for one of two judge groups: judges 0 and 1 err together."""
    rng = np.random.default_rng(seed)
    z = rng.choice(3, n, p=[0.6, 0.2, 0.2])
    p = np.full((3, judges), 0.9)
    p[1, :2] = 0.2
    p[2, 2:] = 0.35
    return (rng.random((n, judges)) < p[z]).astype(float)


class TestSubsetErrors:
    """Majority errors of subsets against brute-force enumeration."""

    def test_poisson_binomial_matches_enumeration(self) -> None:
        p = np.array([0.1, 0.55, 0.7, 0.93])
        brute = np.zeros(5)
        for outcome in itertools.product((0, 1), repeat=4):
            prob = np.prod([pj if o else 1 - pj for pj, o in zip(p, outcome)])
            brute[sum(outcome)] += prob
        assert poisson_binomial_pmf(p) == pytest.approx(brute, abs=1e-15)

    @pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
    def test_posterior_subset_errors_match_pattern_enumeration(self, k: int) -> None:
        post = random_posterior(1)
        members = np.array(list(itertools.combinations(range(5), k)))
        draws = subset_error_draws(post, members)
        for t in range(post.draws):
            for n, row in enumerate(members):
                brute = 0.0
                for outcome in itertools.product((0, 1), repeat=5):
                    o = np.array(outcome)
                    prob = sum(
                        w * np.prod(np.where(o == 1, post.accuracy[t, c], 1 - post.accuracy[t, c]))
                        for c, w in enumerate(post.weights[t])
                    )
                    brute += prob * majority_error(int(o[row].sum()), k)
                assert draws[t, n] == pytest.approx(brute, abs=1e-12)

    def test_level_by_level_equals_direct(self) -> None:
        post = random_posterior(2, draws=4, classes=3, judges=7)
        for k, (members, draws) in all_subset_error_draws(post, 7).items():
            assert members.shape == (math.comb(7, k), k)
            assert draws == pytest.approx(subset_error_draws(post, members), abs=1e-6)  # float32 levels

    def test_empirical_errors_with_missing_match_a_loop(self) -> None:
        rng = np.random.default_rng(3)
        y = (rng.random((40, 6)) < 0.7).astype(float)
        y[rng.random(y.shape) < 0.2] = np.nan
        for k in (1, 2, 3, 4):
            members = np.array(list(itertools.combinations(range(6), k)))
            err, items = empirical_subset_errors(y, members)
            for n, row in enumerate(members):
                rows = [r for r in y if not np.isnan(r[row]).any()]
                assert items[n] == len(rows)
                expect = np.mean([majority_error(int(r[row].sum()), k) for r in rows]) if rows else np.nan
                assert err[n] == pytest.approx(expect, nan_ok=True)


class TestMaxEnt:
    """The pairwise maximum-entropy model: moment matching, subset errors by enumeration, exchangeable limit."""

    def test_nearly_unpenalised_fit_matches_the_moments(self) -> None:
        y = simulate_groups(21, 200, judges=5)
        probs = fit_maxent(y, 1e-6, 1e-6)
        pats = error_patterns(5)
        w = 1 - y
        assert probs @ pats == pytest.approx(w.mean(axis=0), abs=1e-4)
        for a, b in itertools.combinations(range(5), 2):
            assert probs @ (pats[:, a] * pats[:, b]) == pytest.approx(np.mean(w[:, a] * w[:, b]), abs=1e-4)

    def test_subset_errors_by_enumeration(self) -> None:
        probs = np.random.default_rng(22).dirichlet(np.ones(2**4))
        members = np.array(list(itertools.combinations(range(4), 3)))
        got = maxent_subset_errors(probs, members)
        for n, row in enumerate(members):
            brute = sum(probs[i] * majority_error(3 - sum((i >> j) & 1 for j in row), 3) for i in range(16))
            assert got[n] == pytest.approx(brute, abs=1e-12)

    def test_heavy_penalty_makes_judges_alike(self) -> None:
        y = simulate_groups(23, 150, judges=5)
        probs = fit_maxent(y, 1e4, 1e4)
        rates = probs @ error_patterns(5)
        assert rates.max() - rates.min() < 1e-3
        assert rates.mean() == pytest.approx(1 - y.mean(), abs=0.01)


class TestPerJudgeAndPairs:
    """Wilson intervals, shared mistakes and Cochran's Q against scipy and hand computations."""

    @pytest.mark.parametrize(("x", "n"), [(0, 10), (7, 10), (10, 10), (33, 57)])
    def test_wilson_matches_scipy(self, x: int, n: int) -> None:
        ci = stats.binomtest(x, n).proportion_ci(confidence_level=0.9, method="wilson")
        assert wilson_interval(x, n, 0.9) == pytest.approx((ci.low, ci.high), abs=1e-12)

    def test_pairs_match_a_direct_count_and_fisher(self) -> None:
        rng = np.random.default_rng(4)
        y = (rng.random((60, 4)) < 0.6).astype(float)
        y[rng.random(y.shape) < 0.15] = np.nan
        rows = {(p.a, p.b): p for p in pair_table(y, ("w", "x", "y", "z"))}
        for (a, b) in itertools.combinations(range(4), 2):
            both = ~np.isnan(y[:, a]) & ~np.isnan(y[:, b])
            wa, wb = 1 - y[both, a], 1 - y[both, b]
            p = rows[("wxyz"[a], "wxyz"[b])]
            assert p.items == both.sum()
            assert p.both_wrong == pytest.approx(np.mean(wa * wb))
            assert p.expected_if_independent == pytest.approx(wa.mean() * wb.mean())
            table = [[np.sum(wa * wb), np.sum(wa * (1 - wb))], [np.sum((1 - wa) * wb), np.sum((1 - wa) * (1 - wb))]]
            assert p.p_value == pytest.approx(stats.fisher_exact(table, alternative="greater")[1], rel=1e-9)

    def test_pairs_that_never_meet_get_no_number(self) -> None:
        y = np.array([[1, 0, np.nan], [0, 1, np.nan], [1, np.nan, 0], [0, np.nan, 1]], dtype=float)
        rows = {(p.a, p.b): p for p in pair_table(y, ("a", "b", "c"))}
        gap = rows[("b", "c")]
        assert gap.items == 0 and gap.both_wrong is None and gap.expected_if_independent is None and gap.excess is None
        assert gap.note == "no item judged by both"
        assert rows[("a", "b")].items == 2

    def test_cochran_q_by_hand(self) -> None:
        y = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 0]], dtype=float)
        ex = cochran_q(y)
        # C = (3, 3, 1), N = 7, R = (2, 1, 3, 1): Q = 2 (3 * 19 - 49) / (3 * 7 - 15) = 8/3, chi2(2) tail = exp(-Q/2)
        assert ex.statistic == pytest.approx(8 / 3)
        assert ex.p_value == pytest.approx(math.exp(-4 / 3))
        assert ex.df == 2 and ex.items == 4

    def test_cochran_q_with_two_judges_is_mcnemar(self) -> None:
        rng = np.random.default_rng(5)
        y = (rng.random((80, 2)) < [0.8, 0.6]).astype(float)
        b = np.sum((y[:, 0] == 1) & (y[:, 1] == 0))
        c = np.sum((y[:, 0] == 0) & (y[:, 1] == 1))
        assert cochran_q(y).statistic == pytest.approx((b - c) ** 2 / (b + c))

    def test_cochran_q_uses_complete_items_and_says_when_it_cannot_test(self) -> None:
        y = np.array([[1, 1, np.nan], [1, 1, 1], [0, 0, 0]], dtype=float)
        ex = cochran_q(y)
        assert ex.statistic is None and ex.items == 2 and "same by all judges" in ex.note


class TestValidation:
    """Errors a user can cause: one line, naming the parameter."""

    Y = (np.random.default_rng(6).random((20, 3)) < 0.7).astype(float)

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"ensemble": ["a", "zz"]}, r"ensemble: unknown judge 'zz'; known judges: 'a', 'b', 'c'"),
            ({"ensemble": ["a", "a"]}, "named twice"),
            ({"costs": {"a": 1.0}, "max_error": 0.2, "ensemble": None, "ks": [4]}, r"ks must be integers between 1 and 3"),
            ({"costs": {"q": 1.0}, "max_error": 0.2}, r"costs: unknown judge 'q'; known judges: 'a', 'b', 'c'"),
            ({"costs": {"a": -1.0}, "max_error": 0.2}, r"price of 'a' must be a finite number >= 0"),
            ({"costs": {"a": float("nan")}, "max_error": 0.2}, "finite number"),
            ({"costs": {"a": 1.0}}, "costs needs max_error"),
            ({"max_error": 0.0}, r"max_error must be in \(0, 1\]"),
            ({"confidence_level": 1.0}, "confidence_level"),
            ({"population": 5}, "population must be an integer from the 20 labeled items"),
            ({"population": 10**20}, "population must be an integer from the 20 labeled items to 9007199254740992"),
        ],
    )
    def test_bad_options(self, kwargs: dict[str, object], match: str) -> None:
        with pytest.raises(UsageError, match=match):
            analyse_judges(self.Y, ("a", "b", "c"), settings=FAST, **kwargs)  # type: ignore[arg-type]

    def test_fewer_than_two_judges(self) -> None:
        with pytest.raises(UsageError, match="at least 2 named judges; got 1"):
            analyse_judges(self.Y[:, :1], ("a",))

    def test_names_and_values(self) -> None:
        with pytest.raises(UsageError, match="unique; repeated: 'a'"):
            analyse_judges(self.Y, ("a", "a", "c"))
        with pytest.raises(UsageError, match="must name every judge column: 3 columns, 2 names"):
            analyse_judges(self.Y, ("a", "b"))
        with pytest.raises(UsageError, match="1 .* 0 .* NaN"):
            analyse_judges(self.Y * 2, ("a", "b", "c"))
        silent = self.Y.copy()
        silent[:, 2] = np.nan
        with pytest.raises(UsageError, match="judge 'c' gave no verdict"):
            analyse_judges(silent, ("a", "b", "c"))


class TestAnalysis:
    """End to end on simulated data with a known structure."""

    def test_document_and_structure(self) -> None:
        y = simulate_groups(7, 120)
        y[0] = np.nan  # an item without any verdict is dropped
        y[1, 3] = np.nan
        names = tuple("abcdefg")
        res = analyse_judges(y, names, rng=np.random.default_rng(0), ensemble=["a", "c", "e"], settings=FAST)
        d = orjson.loads(orjson.dumps(judges_body(res), option=orjson.OPT_SERIALIZE_NUMPY))
        assert res.scope.items == 119 and res.scope.dropped_items == 1
        assert [e["k"] for e in d["ensembles"]] == list(default_ks(7)) == [1, 3, 5, 7]
        assert set(d["judges"][0]) >= {"name", "accuracy", "low", "high", "items"}
        assert set(d["pairs"][0]) >= {"a", "b", "both_wrong", "expected_if_independent"}
        assert set(d["ensembles"][0]) >= {"k", "members", "estimate", "low", "high", "random_k", "all_judges"}
        assert len(d["pairs"]) == 21
        # judges a and b share their mistakes (class 1): the top offender
        assert d["top_pairs"][0] == ["a", "b"]
        for e in d["ensembles"]:
            assert e["low"] <= e["estimate"] <= e["high"]
            assert e["random_k"] == pytest.approx(res.models.baseline.row(e["k"]).estimate)
            assert e["all_judges"] == pytest.approx(res.models.baseline.row(7).estimate)
        # a 3-judge ensemble should not hold both a and b (they err together)
        assert not {"a", "b"} <= set(d["ensembles"][1]["members"])
        named = d["ensemble"]
        fit_row = analyse(count_table(res_matrix(y), (0, 2, 4)), FitSettings(ks=(3,)), np.random.default_rng(0)).row(3)
        assert named["fit"]["empirical"] == pytest.approx(fit_row.column("empirical"))
        assert named["members"] == ["a", "c", "e"]

    def test_views_are_tables_of_strings(self) -> None:
        y = np.array([[1, 0, np.nan], [0, 1, np.nan], [1, np.nan, 0], [0, np.nan, 1], [1, 1, np.nan]], dtype=float)
        res = analyse_judges(y, ("a", "b", "c"), rng=np.random.default_rng(0), max_error=0.5, settings=FAST, ks=[1, 2])
        vs = views(judges_document("d", "d.jsonl", 0, res, ""))
        assert all(isinstance(v, TableView) for v in vs)
        assert all(isinstance(c, str) for v in vs for row in v.rows for c in row)
        matrix = vs[1]
        assert matrix.rows[1][3] == "—" and "b & c" in matrix.caption
        assert "* even k" in vs[3].caption

    def test_same_seed_same_result(self) -> None:
        y = simulate_groups(8, 60, judges=5)
        one = judges_body(analyse_judges(y, NAMES5, rng=np.random.default_rng(3), settings=FAST))
        two = judges_body(analyse_judges(y, NAMES5, rng=np.random.default_rng(3), settings=FAST))
        assert one == two

    def test_fully_labeled_population_is_the_labels_own_error(self) -> None:
        y = simulate_groups(9, 50, judges=5)
        res = analyse_judges(y, NAMES5, rng=np.random.default_rng(0), population=50, settings=FAST)
        for e in res.ensembles:
            assert e.estimate == pytest.approx(e.empirical) and e.low == pytest.approx(e.high)

    def test_population_estimate_mixes_labels_and_model(self) -> None:
        y = simulate_groups(10, 40, judges=5)
        post = sample_posterior(y, np.random.default_rng(0), FAST.model)
        tables = exact_tables(y, post, 5)
        from betaconform_cli.judges import rescore

        s = rescore(tables, 40, 200, 20.0, 0.9, np.random.default_rng(0))
        t = tables[3]
        assert s.targets[3].estimate == pytest.approx(0.2 * t.empirical + 0.8 * t.draws.mean(axis=0))
        blend = (40 * t.empirical + 20 * t.draws.mean(axis=0)) / 60
        assert s.targets[3].score == pytest.approx(0.2 * t.empirical + 0.8 * blend)
        # the interval stays within the target's range: the labeled fifth is known, the rest lies in [0, 1]
        assert s.targets[3].floor == pytest.approx(0.2 * t.empirical)
        assert np.all(s.targets[3].low >= 0.2 * t.empirical - 1e-12) and np.all(s.targets[3].high <= 0.2 * t.empirical + 0.8 + 1e-12)

    def test_widening_stretches_the_interval_about_the_estimate(self) -> None:
        y = simulate_groups(10, 40, judges=5)
        post = sample_posterior(y, np.random.default_rng(0), FAST.model)
        tables = exact_tables(y, post, 5)
        from betaconform_cli.judges import rescore

        plain = rescore(tables, 40, 200, 20.0, 0.9, np.random.default_rng(0), widening=1.0).targets[3]
        wide = rescore(tables, 40, 200, 20.0, 0.9, np.random.default_rng(0), widening=1.5).targets[3]
        assert np.array_equal(plain.estimate, wide.estimate) and np.array_equal(plain.score, wide.score)
        # by hand: each side 1.5 times as far from the estimate, cut at the known floor and the ceiling
        low = np.maximum(plain.estimate - 1.5 * (plain.estimate - plain.low), 0.2 * tables[3].empirical)
        high = np.minimum(plain.estimate + 1.5 * (plain.high - plain.estimate), 0.2 * tables[3].empirical + 0.8)
        assert wide.low == pytest.approx(low) and wide.high == pytest.approx(high)

    def test_widen_by_hand(self) -> None:
        est, lo, hi = np.array([0.3, 0.05, 0.9]), np.array([0.2, 0.0, 0.8]), np.array([0.5, 0.1, 0.98])
        low, high = widen(est, lo, hi, np.zeros(3), np.ones(3), 2.0)
        assert low == pytest.approx([0.1, 0.0, 0.7]) and high == pytest.approx([0.7, 0.15, 1.0])
        low, high = widen(est, lo, hi, np.zeros(3), np.ones(3), 1.0)
        assert low == pytest.approx(lo) and high == pytest.approx(hi)
        with pytest.raises(UsageError, match="interval_widening"):
            JudgesSettings(interval_widening=0.9)


def res_matrix(y: np.ndarray) -> np.ndarray:
    out: np.ndarray = y[~np.isnan(y).all(axis=1)]
    return out


class TestSameDataSameAnswer:
    """Rows and columns in any order give the same result; data_seed depends on the data only."""

    def test_permuted_matrix(self) -> None:
        y = simulate_groups(5, 40, judges=6)
        y[3, 2] = np.nan
        names = tuple(f"j{i}" for i in range(6))
        rows, cols = np.random.default_rng(1).permutation(40), np.random.default_rng(2).permutation(6)
        settings = JudgesSettings(model=FAST.model)
        a = judges_body(analyse_judges(y, names, rng=np.random.default_rng(0), max_error=0.3, settings=settings))
        b = judges_body(analyse_judges(y[rows][:, cols], tuple(names[c] for c in cols), rng=np.random.default_rng(0),
                                       max_error=0.3, settings=settings))
        assert a == b
        assert [j["name"] for j in a["judges"]] == sorted(names)

    def test_data_seed(self) -> None:
        from betaconform_cli.judges.analysis import data_seed
        y = simulate_groups(6, 30, judges=5)
        names = tuple("abcde")
        cols = [4, 2, 0, 1, 3]
        assert data_seed(y, names) == data_seed(y[::-1][:, cols], tuple(names[c] for c in cols))
        z = y.copy()
        z[0, 0] = 1 - z[0, 0]
        assert data_seed(z, names) != data_seed(y, names)


class TestSearchAndCost:
    """Beam search against exact enumeration; the cost rule on hand-made candidates."""

    def test_wide_beam_equals_exact(self) -> None:
        y = simulate_groups(11, 80, judges=6)
        post = sample_posterior(y, np.random.default_rng(0), FAST.model)
        exact = exact_tables(y, post, 6)
        beam = beam_tables(y, post, 6, width=20, score=lambda t: t.model_mean)  # 20 >= C(6, k - 1) for every k
        for k in range(1, 7):
            assert beam[k].exact
            assert np.array_equal(beam[k].members, exact[k].members)
        for k in range(1, 7):  # carried pmfs and counts give each kept subset's draws and labels' error exactly
            np.testing.assert_allclose(beam[k].draws, exact[k].draws, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(beam[k].items, exact[k].items)
            np.testing.assert_allclose(beam[k].empirical, exact[k].empirical, rtol=1e-12)
        narrow = beam_tables(y, post, 6, width=1, score=lambda t: t.model_mean)
        assert len(narrow[1].members) == 6  # every judge alone
        for k in range(2, 7):  # greedy: one subset per size, each its predecessor plus the judge that scored best
            assert len(narrow[k].members) == 1 and set(narrow[k - 1].members[0]) < set(narrow[k].members[0])
        assert not narrow[4].exact and narrow[6].exact
        np.testing.assert_allclose(narrow[4].draws, subset_error_draws(post, narrow[4].members), rtol=1e-5, atol=1e-6)

    def test_beam_rank_matches_full_draws(self) -> None:
        """Ranking on a subset of draws without building the candidates' pmfs gives the same errors as building them."""
        from betaconform_cli.judges.subsets import _errors, _grow, _grown_errors
        y = simulate_groups(3, 60, judges=7)
        post = sample_posterior(y, np.random.default_rng(1), FAST.model)
        t, c, j = post.accuracy.shape
        acc = post.accuracy.reshape(t * c, j).T.astype(np.float32)
        pmf = np.ones((1, 1, t * c), dtype=np.float32)
        parent = np.zeros(j, dtype=np.int64)
        pmf = _grow(pmf, parent, acc, 4)  # every judge alone
        pairs = np.array([(a, b) for a in range(j) for b in range(a + 1, j)])
        from betaconform_cli.distributions import majority_error_weights
        got = _grown_errors(pmf, pairs[:, 0], acc[pairs[:, 1]], majority_error_weights(2), post.weights)
        np.testing.assert_allclose(got, subset_error_draws(post, pairs), rtol=1e-5, atol=1e-6)
        full = _errors(_grow(pmf, pairs[:, 0], acc[pairs[:, 1]], 4), majority_error_weights(2), post.weights)
        np.testing.assert_allclose(full, got, rtol=1e-5, atol=1e-6)

    def test_many_judges_use_the_beam(self) -> None:
        y = (np.random.default_rng(12).random((30, 5)) < 0.75).astype(float)
        res = analyse_judges(y, NAMES5, rng=np.random.default_rng(0), settings=JudgesSettings(model=FAST.model, exact_max_judges=3, beam_width=2))
        assert [e.search for e in res.ensembles] == ["exact", "beam", "exact"]  # sizes 1 and 2 and 5 (all) are complete

    @staticmethod
    def hand_made() -> tuple[dict[int, SubsetTable], dict[int, _Target]]:
        one = SubsetTable(1, np.array([[0], [1], [2]]), np.zeros((2, 3)), np.zeros(3), np.zeros(3, dtype=np.int64))
        two = SubsetTable(2, np.array([[0, 1], [0, 2], [1, 2]]), np.zeros((2, 3)), np.zeros(3), np.zeros(3, dtype=np.int64))
        targets = {
            1: _Target(np.array([0.20, 0.15, 0.30]), np.zeros(3), np.array([0.30, 0.24, 0.40]), np.zeros(3), np.zeros(3), np.ones(3)),
            2: _Target(np.array([0.10, 0.12, 0.11]), np.zeros(3), np.array([0.18, 0.19, 0.16]), np.zeros(3), np.zeros(3), np.ones(3)),
        }
        return {1: one, 2: two}, targets

    def test_cheapest_meeting_the_limit(self) -> None:
        tables, targets = self.hand_made()
        names = ("a", "b", "c")
        prices = {"a": 1.0, "b": 2.0, "c": 4.0}
        c = _cheapest(tables, targets, names, prices, 0.25, True)  # b alone (upper 0.24) costs 2, any pair 3 or more
        assert c.met and c.members == ("b",) and c.cost == 2.0
        c = _cheapest(tables, targets, names, prices, 0.20, True)  # no single judge; a, b (0.18) is the cheapest pair
        assert c.met and c.members == ("a", "b") and c.cost == 3.0 and c.high == 0.18
        c = _cheapest(tables, targets, names, {"a": 1.0, "b": 5.0, "c": 2.0}, 0.25, True)
        assert c.members == ("a", "c") and c.cost == 3.0  # cheaper than b alone

    def test_unpriced_judges_are_not_candidates(self) -> None:
        tables, targets = self.hand_made()
        c = _cheapest(tables, targets, ("a", "b", "c"), {"a": 1.0, "c": 1.0}, 0.2, True)
        assert c.members == ("a", "c") and c.candidates == 3

    def test_none_meets_it(self) -> None:
        tables, targets = self.hand_made()
        c = _cheapest(tables, targets, ("a", "b", "c"), {"a": 1.0, "b": 1.0, "c": 1.0}, 0.05, True)
        assert not c.met and c.members == ("b", "c") and c.high == 0.16  # the lowest upper bound there is

    def test_end_to_end_limits(self) -> None:
        y = simulate_groups(13, 60, judges=5)
        prices = {"a": 3.0, "b": 1.0, "c": 2.0, "d": 4.0, "e": 5.0}
        easy = analyse_judges(y, NAMES5, rng=np.random.default_rng(0), costs=prices, max_error=1.0, settings=FAST)
        assert easy.picks.cost is not None and easy.picks.cost.met and easy.picks.cost.members == ("b",)
        hard = analyse_judges(y, NAMES5, rng=np.random.default_rng(0), costs=prices, max_error=1e-6, settings=FAST)
        assert hard.picks.cost is not None and not hard.picks.cost.met
        fewest = analyse_judges(y, NAMES5, rng=np.random.default_rng(0), max_error=1.0, settings=FAST)
        assert fewest.picks.cost is not None and len(fewest.picks.cost.members) == 1


@pytest.mark.slow
class TestStatistics:
    """Seeded simulations: the exchangeable limit, interval coverage, and picking structure."""

    def test_exchangeable_judges_every_subset_alike_and_close_to_fit(self) -> None:
        rng = np.random.default_rng(14)
        p = np.where(rng.random(400) < 0.25, rng.beta(1.2, 5, 400), rng.beta(9, 1.2, 400))
        y = (rng.random((400, 7)) < p[:, None]).astype(float)
        res = analyse_judges(y, tuple("abcdefg"), rng=np.random.default_rng(0))
        post = res.models.posterior
        members = np.array(list(itertools.combinations(range(7), 3)))
        means = subset_error_draws(post, members).mean(axis=0)
        assert means.max() - means.min() < 0.03
        assert means.mean() == pytest.approx(res.models.baseline.row(3).estimate, abs=0.02)

    def test_coverage_of_the_chosen_ensembles_error(self) -> None:
        hits, total = 0, 0
        for seed in range(30):
            pop = simulate_groups(100 + seed, 300)
            rng = np.random.default_rng(seed)
            idx = rng.choice(300, 40, replace=False)
            res = analyse_judges(pop[idx], tuple("abcdefg"), ks=[3], rng=rng, population=300)
            e = res.ensembles[0]
            cols = [tuple("abcdefg").index(m) for m in e.members]
            truth = empirical_subset_errors(pop, np.array([cols]))[0][0]
            hits += e.low <= truth <= e.high
            total += 1
        assert hits / total >= 0.8  # 90% nominal; binomial sd over 30 runs is 0.055

    def test_picks_judges_that_err_apart(self) -> None:
        wins = 0
        for seed in range(10):
            y = simulate_groups(200 + seed, 60)
            res = analyse_judges(y, tuple("abcdefg"), ks=[3], rng=np.random.default_rng(seed))
            wins += not {"a", "b"} <= set(res.ensembles[0].members)
        assert wins >= 9


@pytest.mark.process  # a fresh interpreter: what a new process imports
def test_core_never_imports_the_cli_stack() -> None:
    """The judges core stays pure: no typer, rich or torch after import."""
    import subprocess
    import sys

    code = "import sys, betaconform_cli.judges; print(','.join(m for m in ('typer', 'rich', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
