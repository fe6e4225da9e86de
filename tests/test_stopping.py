"""The stopping core, checked against independent computations (enumeration, scipy, seeded simulation)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
import scipy.stats

from betaconform_cli import stopping as st
from betaconform_cli.errors import InputError, UsageError
from betaconform_cli.inputs import Item
from betaconform_cli.settings import FitSettings


def two_peak(n: int, rng: np.random.Generator, judges: int = 11) -> list[Item]:
    hard = rng.random(n) < 0.3
    p = np.where(hard, rng.beta(1.5, 4, n), rng.beta(8, 1, n))
    s = rng.binomial(judges, p)
    return [Item(judges, int(x), f"i{i}", None, i + 1) for i, x in enumerate(s)]


class TestProposition41:
    """The sample count of Proposition 4.1."""

    @pytest.mark.parametrize("xi", [0.2, 0.06, 0.03, 0.01, 0.005])
    def test_matches_enumeration(self, xi: float) -> None:
        """The smallest r found by scanning r = 2, 3, ... one by one."""
        r = 2
        while 25 * (1 / math.sqrt(r - 1) - 1 / math.sqrt(r)) > xi:
            r += 1
        assert st.theoretical_samples(xi, 25) == r

    def test_paper_values(self) -> None:
        """xi = 0.03, tau = 25 gives 57 (the text says 56); 0.01 gives 117."""
        assert st.theoretical_samples(0.03) == 57
        assert st.theoretical_samples(0.01) == 117

    def test_rejects_bad_xi(self) -> None:
        """xi must be positive."""
        with pytest.raises(UsageError):
            st.theoretical_samples(0.0)


class TestConformalRule:
    """The conformal quantile and the stop condition."""

    def test_quantile_against_direct_formula(self) -> None:
        """q_r is the ceil((1-eps)(r+1))-th smallest |S_i - mean_r|, undefined while that order exceeds r."""
        rng = np.random.default_rng(3)
        s = rng.integers(0, 12, 40)
        j = np.full(40, 11)
        rule = st.ConformalRule(epsilon=0.1)
        q = rule.quantiles(j, s)
        for r in range(1, 41):
            order = math.ceil(round(0.9 * (r + 1), 9))
            if order > r:
                assert math.isnan(q[r - 1])
            else:
                scores = sorted(abs(float(v) - sum(s[:r]) / r) for v in s[:r])
                assert q[r - 1] == pytest.approx(scores[order - 1])
        assert np.isnan(q[:8]).all() and not np.isnan(q[8])

    def test_patience_needs_consecutive_passes(self) -> None:
        """A constant stream passes every defined check; with patience m it stops m - 1 checks later."""
        j = np.full(30, 11)
        s = np.full(30, 7)
        first = st.ConformalRule(min_samples=10, patience=1).path(j, s).stop_at
        third = st.ConformalRule(min_samples=10, patience=3).path(j, s).stop_at
        assert first == 10 and third == 12

    def test_score_scale_divides_by_judges(self) -> None:
        """On S/k the quantile is the one on S divided by k when every item has k judges."""
        rng = np.random.default_rng(5)
        s = rng.integers(0, 11, 30)
        j = np.full(30, 10)
        q_s = st.ConformalRule(score_scale="S").quantiles(j, s)
        q_k = st.ConformalRule(score_scale="S/k").quantiles(j, s)
        np.testing.assert_allclose(q_k, q_s / 10)

    @pytest.mark.parametrize("bad", [{"epsilon": 1.0}, {"xi": 0}, {"score_scale": "x"}, {"centre": "median"}, {"patience": 0}, {"min_samples": 1}])
    def test_validation(self, bad: dict) -> None:
        """Out-of-range options name the option."""
        with pytest.raises(UsageError):
            st.ConformalRule(**bad)

    @pytest.mark.slow
    def test_two_peak_counts_near_paper(self) -> None:
        """Defaults reproduce Table 3's ~35 / ~50 / ~105 within 25% on two-peak data (60 seeded runs each)."""
        rng = np.random.default_rng(11)
        pool = two_peak(3000, rng)
        j_all = np.array([it.judges for it in pool])
        s_all = np.array([it.correct for it in pool])
        for xi, paper in ((0.06, 35), (0.03, 50), (0.01, 105)):
            rule = st.ConformalRule(xi=xi)
            counts = []
            for _ in range(60):
                o = rng.permutation(len(pool))[:400]
                counts.append(rule.path(j_all[o], s_all[o]).stop_at or 400)
            assert abs(np.mean(counts) - paper) <= 0.25 * paper, (xi, np.mean(counts))


class TestLinearPaths:
    """The histogram order statistic and the stop-early path against the direct computations they replace."""

    @pytest.mark.parametrize("scale", ["S", "S/k"])
    @pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.37])
    def test_order_statistic_equals_partition(self, scale: str, epsilon: float) -> None:
        rng = np.random.default_rng(3)
        n = 700
        j = rng.integers(5, 12, n)  # mixed judge counts: many distinct S/k values
        s = rng.binomial(j, 0.7)
        rule = st.ConformalRule(epsilon=epsilon, score_scale=scale)
        q = rule.quantiles(j, s)
        x = s / (j if scale == "S/k" else 1.0)
        centres = np.cumsum(x) / np.arange(1, n + 1)
        for r in range(1, n + 1):  # the definition, one prefix at a time (the old quadratic loop)
            idx = math.ceil((1 - epsilon) * (r + 1) - 1e-9)
            want = np.nan if idx > r else np.partition(np.abs(x[:r] - centres[r - 1]), idx - 1)[idx - 1]
            assert (np.isnan(want) and np.isnan(q[r - 1])) or q[r - 1] == want, r

    def test_order_statistic_with_given_centres(self) -> None:
        rng = np.random.default_rng(4)
        x = rng.integers(0, 12, 300).astype(float)
        centres = rng.uniform(0, 11, 300)
        idx = rng.integers(1, 300, 300)
        got = st.rules.running_order_statistic(x, centres, idx)
        for r in range(1, 301):
            want = np.nan if idx[r - 1] > r else np.sort(np.abs(x[:r] - centres[r - 1]))[idx[r - 1] - 1]
            assert (np.isnan(want) and np.isnan(got[r - 1])) or got[r - 1] == want

    @pytest.mark.parametrize("rule", [
        st.ConformalRule(), st.ConformalRule(centre="fitted"), st.ConformalRule(xi_units="sd", patience=3),
        st.VarianceRule(xi=0.02), st.VarianceRule(xi=0.05, k=3), st.PrecisionRule(target=0.05),
        st.PrecisionRule(target=0.08, method="sequential"), st.ConformalRule(xi=1e-9),  # never stops
    ], ids=lambda r: f"{r.name}")
    def test_until_stop_matches_whole_pool(self, rule: st.Rule) -> None:
        rng = np.random.default_rng(5)
        items = two_peak(1500, rng)
        j = np.array([it.judges for it in items])
        s = np.array([it.correct for it in items])
        whole = st.rule_path(rule, j, s, np.random.default_rng(9), pool_size=1500)
        short = st.rule_path(rule, j, s, np.random.default_rng(9), pool_size=1500, until_stop=True)
        assert short.stop_at == whole.stop_at
        m = len(short.statistic)
        assert m == 1500 if whole.stop_at is None else whole.stop_at <= m
        np.testing.assert_array_equal(short.statistic, whole.statistic[:m])

    def test_first_run(self) -> None:
        passed = np.array([0, 1, 1, 0, 1, 1, 1, 0, 1], dtype=bool)
        assert [st.rules._first_run(passed, k) for k in (1, 2, 3, 4)] == [2, 3, 7, None]
        assert st.rules._first_run(np.zeros(0, dtype=bool), 1) is None


class TestXiUnitsSd:
    """--xi-units sd: the threshold follows the running sd of the scores."""

    def test_threshold_is_xi_times_numpy_sd(self) -> None:
        """threshold_r = xi * np.std(S[:r], ddof=1) / reference_sd."""
        rng = np.random.default_rng(8)
        s = rng.integers(0, 12, 50)
        j = np.full(50, 11)
        rule = st.ConformalRule(xi=0.03, xi_units="sd", reference_sd=3.5)
        thr = rule.path(j, s).extra["threshold"]
        for r in (2, 10, 37, 50):
            assert thr[r - 1] == pytest.approx(0.03 * np.std(s[:r], ddof=1) / 3.5)

    def test_scale_free(self) -> None:
        """With units sd, scores on S and on S/k stop at the same r (the rule ignores the scale of S)."""
        rng = np.random.default_rng(9)
        pool = two_peak(400, rng)
        j = np.array([it.judges for it in pool])
        s = np.array([it.correct for it in pool])
        for xi in (0.06, 0.01):
            a = st.ConformalRule(xi=xi, xi_units="sd", score_scale="S").path(j, s).stop_at
            b = st.ConformalRule(xi=xi, xi_units="sd", score_scale="S/k").path(j, s).stop_at
            assert a == b

    def test_validation(self) -> None:
        with pytest.raises(UsageError):
            st.ConformalRule(xi_units="z")
        with pytest.raises(UsageError):
            st.ConformalRule(xi_units="sd", reference_sd=0)


class TestVarianceRule:
    """RQ5's variance is the variance of a Beta(a, b)."""

    def test_matches_scipy_beta(self) -> None:
        """sd after r labels equals scipy.stats.beta(a, r - a).std()."""
        j = np.full(12, 5)
        s = np.array([5, 0, 4, 3, 1, 5, 5, 2, 4, 4, 0, 5])
        sd = st.VarianceRule(xi=0.1).path(j, s).statistic
        right = np.cumsum(s >= 3)
        for r in (3, 7, 12):
            a = right[r - 1]
            assert sd[r - 1] == pytest.approx(scipy.stats.beta(a, r - a).std())


class TestConfidenceSequence:
    """The precision rule's confidence sequence."""

    def test_shrinks_and_contains_sample_mean_region(self) -> None:
        """Intervals are nested (running intersection) and lie in [0, 1]."""
        x = np.random.default_rng(0).random(300)
        lo, hi = st.confidence_sequence(x, 0.1)
        assert (np.diff(lo) >= 0).all() and (np.diff(hi) <= 0).all()
        assert (lo >= 0).all() and (hi <= 1).all() and (lo <= hi).all()

    @pytest.mark.slow
    @pytest.mark.parametrize("pool_size", [None, 300])
    def test_time_uniform_coverage(self, pool_size: int | None) -> None:
        """Simulated: the share of sequences that ever miss the true mean stays below alpha (+ 3 sd slack)."""
        rng = np.random.default_rng(7)
        alpha, reps, n = 0.1, 300, 300
        misses = 0
        pool = (rng.random(pool_size) < 0.25).astype(float) if pool_size else None
        for _ in range(reps):
            if pool is None:
                x = (rng.random(n) < 0.25).astype(float)
                mean = 0.25
            else:
                x = rng.permutation(pool)
                mean = float(pool.mean())
            lo, hi = st.confidence_sequence(x, alpha, pool_size, tune_half_width=0.05)
            misses += bool(((lo > mean) | (hi < mean)).any())
        assert misses / reps <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)

    def test_precision_rule_stops_when_half_width_reached(self) -> None:
        """The stop r is the first r >= min_samples where the widest half-width is <= target."""
        rng = np.random.default_rng(2)
        items = two_peak(800, rng)
        j = np.array([it.judges for it in items])
        s = np.array([it.correct for it in items])
        rule = st.PrecisionRule(target=0.1, ks=(1, 3, 11))
        p = rule.path(j, s)
        iv = rule.intervals(j, s)
        widest = np.max([(hi - lo) / 2 for lo, hi in iv.values()], axis=0)
        expected = int(np.argmax((widest <= 0.1) & (np.arange(1, 801) >= 10))) + 1
        assert p.stop_at == expected


class TestCalibratedPrecision:
    """--precision-method calibrated: the normal approximation of fit's interval."""

    def test_matches_fits_dirichlet_interval(self) -> None:
        """Half-width ~ that of fit's Dirichlet interval (strength 0, flat 1) at the monitoring level, simulated."""
        from betaconform_cli.counts import CountTable
        from betaconform_cli.mixtures import fit_mixture
        from betaconform_cli.posterior import cell_posterior
        from betaconform_cli.settings import Prior

        rng = np.random.default_rng(12)
        pool = two_peak(150, rng)
        j = np.array([it.judges for it in pool])
        s = np.array([it.correct for it in pool])
        table = CountTable.from_pairs(j, s)
        mix = fit_mixture(table, 1, Prior(), n_init=1, rng=rng).mixture
        post = cell_posterior(table, mix, (1, 3, 11), strength=0.0, flat=1.0)
        rule = st.PrecisionRule(ks=(1, 3, 11), method="calibrated")
        assert rule.monitoring_level == pytest.approx(0.95)  # the 90% promise, checked at 95% after every label
        lo, hi = post.interval_scaled(np.random.default_rng(0), rule.monitoring_level, 151.0, n_draws=40000)
        iv = rule.intervals(j, s)
        for i, k in enumerate((1, 3, 11)):
            l_, h_ = iv[k]
            assert (h_[-1] - l_[-1]) / 2 == pytest.approx((hi[i] - lo[i]) / 2, rel=0.06), k

    def test_finite_pool_correction(self) -> None:
        """With the pool size N known the half-width shrinks by sqrt((N - r) / (N - 1)); it is 0 at r = N."""
        x = np.random.default_rng(1).random(40)
        fm = np.full(40, 0.5)
        fs = np.full(40, 1 / 3)
        free = st.calibrated_half_width(x, fm, fs, 0.9)
        pool = st.calibrated_half_width(x, fm, fs, 0.9, pool_size=40)
        r = np.arange(1, 41)
        np.testing.assert_allclose(pool, free * np.sqrt((40 - r) / 39))
        assert pool[-1] == 0

    @pytest.mark.slow
    def test_running_mean_within_target_at_stop(self) -> None:
        """Seeded replays of a two-peak pool: at the stop, the mean of x is within the target of the pool's mean
        at every checked k at once in >= 90% of 100 random orders (checked after every label; 2 Monte Carlo sd
        slack)."""
        from betaconform_cli.distributions import item_error_table

        rng = np.random.default_rng(21)
        pool = two_peak(1000, rng)
        j = np.array([it.judges for it in pool])
        s = np.array([it.correct for it in pool])
        ks = (1, 3, 11)
        xs = {k: np.array([item_error_table(11, k)[int(v)] for v in s]) for k in ks}
        rule = st.PrecisionRule(target=0.03, ks=ks, method="calibrated")
        ok = []
        for _ in range(100):
            o = rng.permutation(len(pool))
            r = rule.path(j[o], s[o], pool_size=len(pool)).stop_at
            ok.append([abs(xs[k][o][:r].mean() - xs[k].mean()) <= 0.03 for k in ks])
        all_k = float(np.mean([all(o) for o in ok]))
        assert all_k >= 0.9 - 2 * math.sqrt(0.09 / 100), all_k

    def test_method_validation(self) -> None:
        with pytest.raises(UsageError):
            st.PrecisionRule(method="bayes")
        with pytest.raises(UsageError, match="rule conformal does not take precision_method"):
            st.make_rule("conformal", precision_method="sequential")


class TestReplay:
    """Replays on a labeled pool."""

    def test_replay_margin_and_actual(self) -> None:
        """actual at k = 1 is the pool's mean share of wrong judges; margin is the mean |est - actual| over odd k."""
        rng = np.random.default_rng(4)
        pool = two_peak(200, rng)
        run = st.replay_one(st.ConformalRule(xi=0.06), pool, FitSettings(ks=(1, 2, 3)), np.random.default_rng(1))
        assert run.actual[1] == pytest.approx(np.mean([1 - it.correct / it.judges for it in pool]))
        est = {r.k: r.estimate for r in run.result.rows}
        assert run.margin == pytest.approx(100 * (abs(est[1] - run.actual[1]) + abs(est[3] - run.actual[3])) / 2)
        assert len(set(run.labeled_ids)) == run.samples
        assert run.stopped and run.samples >= 10

    def test_summary(self) -> None:
        """Mean and sd of samples use ddof = 1."""
        rng = np.random.default_rng(4)
        pool = two_peak(150, rng)
        runs = [st.replay_one(st.ConformalRule(xi=0.06), pool, FitSettings(ks=(1, 3)), rng, i) for i in range(3)]
        s = st.summarize(runs)
        assert s.samples.sd == pytest.approx(np.std([r.samples for r in runs], ddof=1))


class TestIds:
    """Ids of labeled items and pools."""

    def test_duplicate_id(self) -> None:
        """A duplicate id names the file and the line."""
        items = [Item(3, 1, "a", None, 1), Item(3, 2, "a", None, 2)]
        with pytest.raises(InputError, match="f.jsonl:2"):
            st.check_ids(items, "f.jsonl")

    @pytest.mark.process  # a fresh interpreter: what a new process imports
    def test_core_imports_no_cli(self) -> None:
        """Importing the core leaves typer and rich out."""
        import subprocess

        code = "import sys, betaconform_cli.stopping; print('typer' in sys.modules or 'rich' in sys.modules)"
        assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
