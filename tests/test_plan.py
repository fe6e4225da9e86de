"""`plan`: the labels a target half-width needs, forecast from the judges' verdicts (stopping/forecast.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from betaconform_cli.distributions import item_error_table
from betaconform_cli.errors import ParameterError
from betaconform_cli.inputs.dataset import Votes
from betaconform_cli.stopping.forecast import _score_half_widths, _score_labels, forecast
from betaconform_cli.stopping.rules import PrecisionRule

from .conftest import invoke

S = "sample_data/system_verdicts.jsonl"


def votes_of(verdicts: np.ndarray, gold: np.ndarray) -> Votes:
    judges = tuple(f"j{j}" for j in range(verdicts.shape[1]))
    return Votes(judges, ("fail", "pass"), verdicts, gold, np.ones(len(gold), dtype=np.int64))


def pool(rng: np.random.Generator, n: int, accuracy: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    gold = (rng.random(n) < 0.7).astype(int)
    right = rng.random((n, len(accuracy))) < np.asarray(accuracy)
    return gold, np.where(right, gold[:, None], 1 - gold[:, None])


class TestErrorForecast:
    """The error at k: sample's precision rule replayed on pools drawn from the judges' model."""

    def test_unanimous_judges_need_what_the_rule_needs_on_zero_errors(self) -> None:
        """Five judges that always agree with each other, 3 labels that say they are right: the draws' majority is
        right on every item, so most replays stop where the rule's half-width for all-zero errors first reaches the target, worked here from
        the flat prior and the finite-pool factor alone (sequences.calibrated_half_width's formula), the interval
        around the running mean 0 clipped at 0 (so its half-width is half of h)."""
        n, judges, target = 120, 5, 0.05
        gold = np.zeros(n, dtype=int)
        gold[:80] = 1
        verdicts = np.repeat(gold[:, None], judges, axis=1)
        observed = np.full(n, -1)
        observed[:3] = gold[:3]
        plan = forecast(votes_of(verdicts, observed), target, ks=(3,), draws=20, rng=np.random.default_rng(1))
        (f,) = [f for f in plan.forecasts if f.what == "error"]
        table = item_error_table(judges, 3)
        flat_mean, flat_sq = table.mean(), (table**2).mean()
        z = stats.norm.ppf(0.5 + PrecisionRule(target=target).monitoring_level / 2)
        r = np.arange(1, n + 1)
        mass = r + 1.0
        var = np.maximum(flat_sq / mass - (flat_mean / mass) ** 2, 0) / (mass + 1)
        half = z * np.sqrt(var) * np.sqrt((n - r) / (n - 1))
        ok = (half / 2 <= target) & (r >= 10)  # min_samples; the 3 labels so far are below it
        expected = int(r[np.argmax(ok)])
        assert f.labels == f.low == expected  # most draws; a few bootstrap refits doubt the unanimous judges
        assert f.high is not None and f.high >= expected
        assert f.reached == 1.0

    def test_more_labels_for_a_narrower_target_and_a_larger_k(self) -> None:
        rng = np.random.default_rng(3)
        gold, verdicts = pool(rng, 300, (0.85, 0.8, 0.75, 0.7, 0.65))
        observed = np.where(rng.random(300) < 0.1, gold, -1)
        wide = forecast(votes_of(verdicts, observed), 0.08, ks=(1, 5), draws=30, rng=np.random.default_rng(0))
        narrow = forecast(votes_of(verdicts, observed), 0.04, ks=(1, 5), draws=30, rng=np.random.default_rng(0))
        by = {(f.what, f.k): f for f in wide.forecasts}
        by_narrow = {(f.what, f.k): f for f in narrow.forecasts}
        assert by_narrow[("error", None)].labels > by[("error", None)].labels  # type: ignore[operator]
        assert by[("error", None)].labels == max(by[("error", 1)].labels, by[("error", 5)].labels)  # type: ignore[type-var]

    def test_the_same_items_in_another_order_give_the_same_plan(self) -> None:
        rng = np.random.default_rng(4)
        gold, verdicts = pool(rng, 150, (0.9, 0.8, 0.7))
        observed = np.where(rng.random(150) < 0.2, gold, -1)
        perm = rng.permutation(150)
        a = forecast(votes_of(verdicts, observed), 0.06, ks=(1, 3), draws=20, positive=1, rng=np.random.default_rng(9))
        b = forecast(votes_of(verdicts[perm], observed[perm]), 0.06, ks=(1, 3), draws=20, positive=1,
                     rng=np.random.default_rng(9))
        assert a == b

    @pytest.mark.slow
    def test_forecast_holds_the_labels_the_loop_needed(self) -> None:
        """Independent judges (the model is right): the labels the rule needed on the TRUE gold, in 40 random
        orders after 20 labels, fall inside the forecast's 90% interval in at least 80% of orders, and the
        forecast is within 15% of their mean."""
        rng = np.random.default_rng(11)
        gold, verdicts = pool(rng, 400, (0.9, 0.85, 0.8, 0.75, 0.7, 0.7, 0.65))
        first = rng.choice(400, 20, replace=False)
        observed = np.full(400, -1)
        observed[first] = gold[first]
        plan = forecast(votes_of(verdicts, observed), 0.04, ks=(1, 3, 5, 7), draws=100, rng=np.random.default_rng(0))
        (f,) = [f for f in plan.forecasts if f.what == "error" and f.k is None]
        judges, correct = np.full(400, 7), (verdicts == gold[:, None]).sum(axis=1)
        rest = np.setdiff1d(np.arange(400), first)
        stops = []
        for _ in range(40):
            order = np.concatenate([first, rng.permutation(rest)])
            p = PrecisionRule(target=0.04, ks=(1, 3, 5, 7)).path(judges[order], correct[order], pool_size=400)
            hit = np.flatnonzero(p.passed & (np.arange(1, 401) >= 20))
            stops.append(int(hit[0]) + 1)
        assert f.low is not None and f.high is not None and f.labels is not None
        assert np.mean([(f.low <= s <= f.high) for s in stops]) >= 0.8
        assert abs(f.labels / np.mean(stops) - 1) < 0.15
        assert np.mean([s <= f.high for s in stops]) >= 0.9  # the upper end `sample` says: enough in most orders


class TestRunningForecast:
    def test_sample_says_the_upper_end_of_plans_interval(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """`sample --pool`'s "label about N more" is the upper end of plan's interval at the rule's level (the
        labels so far subtracted), not its median, which jumps where the labels first show shared mistakes."""
        from betaconform_cli.stopping import live

        monkeypatch.setattr(live, "FORECAST_DRAWS", 10)  # the fewest plan allows: the wiring, not the Monte Carlo
        rng = np.random.default_rng(6)
        gold, verdicts = pool(rng, 100, (0.85, 0.75, 0.7))
        observed = np.full(100, -1)
        observed[:20] = gold[:20]
        rule = PrecisionRule(target=0.06, ks=(1, 3))
        more = live._forecast_more(rule, verdicts, observed, 2, np.random.default_rng(5))
        seed = np.random.default_rng(5).integers(2**63)
        plan = forecast(votes_of(verdicts, observed), 0.06, rule.ks, rule.confidence_level, 10,
                        rng=np.random.default_rng(seed), rule=rule)
        (f,) = [f for f in plan.forecasts if f.what == "error" and f.k is None]
        assert f.labels is not None and f.high is not None and f.high > f.labels
        assert more == round(f.high) - 20


class TestScoreForecast:
    def test_is_the_fewest_labels_of_the_shipped_intervals_half_width(self) -> None:
        """Against the shipped interval (eq. 6, round 4) found by brute force: every theta0 on a grid of step 1e-5
        with (p - theta0)^2 <= t_{m-2}^2 (V + a (theta0 (1 - theta0) - p (1 - p))), V the residuals' variance with 3
        pseudo-items of p(1 - p) and 2 fitted parameters, a = fpc / m, written out here; clipped to [0, 1]. The
        grid's step bounds the error (2e-5 on a half-width); n - 1 must be over the target by more than that."""
        rng = np.random.default_rng(5)
        y = (rng.random(500) < 0.8).astype(float)
        f = np.clip(y * 0.7 + 0.15 + rng.normal(0, 0.05, 500), 0, 1)
        n = _score_labels(y, f, 0.03, 0.9, 0)
        p, grid = y.mean(), np.linspace(0, 1, 100_001)

        def half(m: float) -> float:
            fpc = 1 - m / 500
            v = fpc * (m * (y - f).var() + 3 * p * (1 - p)) / (m - 2 + 3) / m
            inside = grid[(p - grid) ** 2 <= stats.t.ppf(0.95, m - 2) ** 2 * (v + fpc / m * (grid * (1 - grid) - p * (1 - p)))]
            return float(inside.max() - inside.min()) / 2

        assert half(n) <= 0.03 + 2e-5 and half(n - 1) > 0.03 + 2e-5

    def test_half_widths_match_the_brute_force_near_the_ceiling(self) -> None:
        """At a pass rate near 1 the interval is lopsided and clipped at 1: the half-width at several n against the
        grid search above (to the grid's 2e-5)."""
        y = np.r_[np.ones(190), np.zeros(10)]
        f = np.r_[np.full(190, 0.97), np.full(10, 0.4)]
        ns = np.array([3.0, 10.0, 40.0, 150.0, 199.0])
        got = _score_half_widths(y, f, 0.9, ns)
        p, grid = y.mean(), np.linspace(0, 1, 100_001)
        for m, h in zip(ns, got, strict=True):
            fpc = 1 - m / 200
            v = fpc * (m * (y - f).var() + 3 * p * (1 - p)) / (m + 1) / m
            inside = grid[(p - grid) ** 2 <= stats.t.ppf(0.95, m - 2) ** 2 * (v + fpc / m * (grid * (1 - grid) - p * (1 - p)))]
            assert h == pytest.approx((inside.max() - inside.min()) / 2, abs=2e-5)

    def test_labels_so_far_are_the_floor(self) -> None:
        y = np.ones(200)
        assert _score_labels(y, np.full(200, 0.99), 0.2, 0.9, 50) == 50


class TestChecks:
    @pytest.mark.parametrize(("kw", "param"), [({"target": 0.0}, "target"), ({"target": 0.5}, "target"),
                                               ({"confidence_level": 1.0}, "confidence_level"), ({"draws": 5}, "draws")])
    def test_refuses_out_of_range(self, kw: dict[str, float], param: str) -> None:
        v = votes_of(np.array([[1, 1], [0, 0], [1, 0]]), np.array([1, -1, -1]))
        args = {"target": 0.05, **kw}
        with pytest.raises(ParameterError) as err:
            forecast(v, **args)  # type: ignore[arg-type]
        assert err.value.param == param


class TestCommand:
    def test_json_document(self, runner: CliRunner) -> None:
        res = invoke(runner, "plan", S, "--ks", "1,3", "--draws", "20", "--label-cost", "2", "-f", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["command"] == "plan" and doc["label_cost"] == 2.0
        whats = [(f["what"], f["k"]) for f in doc["plan"]["forecasts"]]
        assert whats == [("error", 1), ("error", 3), ("error", None), ("score", None)]
        assert doc["plan"]["labeled"] == 40 and doc["plan"]["items"] == 150

    def test_csv_has_the_cost_of_the_rest(self, runner: CliRunner) -> None:
        res = invoke(runner, "plan", S, "--ks", "1", "--draws", "20", "--label-cost", "2", "-f", "csv")
        assert res.exit_code == 0, res.output
        header, first = res.stdout.splitlines()[:2]
        row = dict(zip(header.split(","), first.split(",")))
        assert float(row["cost"]) == pytest.approx(2 * float(row["more"]))

    def test_correctness_only_input_is_refused_in_one_line(self, runner: CliRunner) -> None:
        res = invoke(runner, "plan", "sample_data/qa_judges.jsonl")
        assert res.exit_code == 2
        assert "carries no verdicts" in res.stderr and len(res.stderr.strip().splitlines()) == 1

    def test_negative_label_cost_is_refused(self, runner: CliRunner) -> None:
        res = invoke(runner, "plan", S, "--label-cost", "-1")
        assert res.exit_code == 2 and "--label-cost" in res.stderr
