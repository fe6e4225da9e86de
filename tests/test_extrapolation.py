"""Rows past the data (extrapolation.py): k above the most judges any item has is marked, and its interval is never
narrower than the interval at that many judges. Checked against a direct computation of the rule, against fit's
own rows at k <= K (unchanged: the same draws), and by a seeded simulation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from betaconform_cli.counts import CountTable
from betaconform_cli.extrapolation import beyond_rows, reference_ks, widened
from betaconform_cli.fit import analyse
from betaconform_cli.settings import FitSettings


@dataclass(frozen=True)
class Row:
    k: int
    estimate: float
    low: float
    high: float
    beyond_data: bool = False


class TestWidened:
    """The interval widened to a width: equal parts on each side, moved inside [0, 1], the estimate kept inside."""

    @pytest.mark.parametrize("est,low,high,width,want", [
        (0.30, 0.25, 0.35, 0.20, (0.20, 0.40)),  # 0.10 wide: 0.05 more on each side
        (0.02, 0.01, 0.05, 0.20, (0.0, 0.20)),   # would cross 0: shifted up
        (0.97, 0.95, 0.99, 0.20, (0.80, 1.0)),   # would cross 1: shifted down
        (0.30, 0.10, 0.50, 0.20, (0.10, 0.50)),  # already wider: unchanged
        (0.50, 0.45, 0.55, 1.50, (0.0, 1.0)),    # wider than [0, 1]: all of it
    ])
    def test_cases(self, est: float, low: float, high: float, width: float, want: tuple[float, float]) -> None:
        assert widened(est, low, high, width) == pytest.approx(want)

    def test_random_intervals(self) -> None:
        rng = np.random.default_rng(25)
        for _ in range(2000):
            low, high = np.sort(rng.uniform(0, 1, 2))
            est = rng.uniform(low, high)
            width = rng.uniform(0, 1)
            lo, hi = widened(est, low, high, width)
            assert 0.0 <= lo <= est <= hi <= 1.0
            assert hi - lo >= min(width, 1.0) - 1e-12 or (lo, hi) == (low, high) and high - low >= width
            assert lo <= low + 1e-12 and hi >= high - 1e-12  # never narrower than it was


class TestBeyondRows:
    def test_rule(self) -> None:
        rows = [Row(3, 0.2, 0.1, 0.3), Row(5, 0.15, 0.05, 0.30), Row(7, 0.1, 0.08, 0.12), Row(9, 0.1, 0.0, 0.4)]
        got = beyond_rows(rows, 5, (3, 7, 9))
        assert [r.k for r in got] == [3, 7, 9] and [r.beyond_data for r in got] == [False, True, True]
        assert (got[1].low, got[1].high) == pytest.approx((0.0, 0.25))  # 0.04 wide -> 0.25, shifted off 0
        assert (got[2].low, got[2].high) == (0.0, 0.4)

    def test_reference_ks(self) -> None:
        assert reference_ks((9,), 5) == (5, 9) and reference_ks((1, 3), 5) == (1, 3) and reference_ks((5, 9), 5) == (5, 9)


def five_judges(seed: int, n: int = 60) -> CountTable:
    """n items judged by 5 judges, each item's accuracy from a two-component Beta mixture."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.uniform(size=n) < 0.3, rng.beta(2, 3, n), rng.beta(12, 2, n))
    s = rng.binomial(5, p)
    return CountTable.from_pairs([5] * n, s.tolist())


class TestFit:
    def test_rows_beyond_five_judges(self) -> None:
        table = five_judges(1)
        full = analyse(table, FitSettings(), np.random.default_rng(0))
        within = analyse(table, FitSettings(ks=(1, 2, 3, 4, 5)), np.random.default_rng(0))
        rows = {r.k: r for r in full.rows}
        assert [k for k, r in rows.items() if r.beyond_data] == [6, 7, 8, 9, 10, 11]
        for r in within.rows:  # the rows inside the data are what they were: same draws, untouched (to the last bits:
            # a vector-matrix product's BLAS kernel depends on the matrix's width, 11 ks against 5)
            assert (rows[r.k].estimate, rows[r.k].low, rows[r.k].high) == pytest.approx((r.estimate, r.low, r.high),
                                                                                        rel=1e-13, abs=1e-15)
        width5 = rows[5].high - rows[5].low
        for k in range(6, 12):
            assert rows[k].high - rows[k].low >= width5 - 1e-12
            assert rows[k].low <= rows[k].estimate <= rows[k].high
        only9 = analyse(table, FitSettings(ks=(9,)), np.random.default_rng(0))
        assert [r.k for r in only9.rows] == [9] and only9.settings.ks == (9,)
        assert (only9.rows[0].low, only9.rows[0].high) == (rows[9].low, rows[9].high)

    @pytest.mark.slow
    def test_coverage_at_k_beyond_the_data_by_simulation(self) -> None:
        """The widened interval at k = 9 from 5 judges per item covers the true error at 9 (of the mixture that drew
        the data, computed exactly) at least as often as the interval before widening; seeded, 40 data sets."""
        from scipy import stats

        def true_error(k: int) -> float:  # P(majority wrong) under the drawing mixture, exact
            grid = np.linspace(0, 1, 4001)[1:-1]
            dens = 0.3 * stats.beta.pdf(grid, 2, 3) + 0.7 * stats.beta.pdf(grid, 12, 2)
            wrong = stats.binom.cdf(k // 2, k, grid)
            return float(np.sum(dens * wrong) / np.sum(dens))

        truth = true_error(9)
        raw = wide = 0
        for seed in range(40):
            res = analyse(five_judges(100 + seed), FitSettings(ks=(5, 9)), np.random.default_rng(seed))
            r9 = res.rows[1]
            wide += r9.low <= truth <= r9.high
            from dataclasses import replace

            from betaconform_cli.fit import _analyse
            plain = _analyse(five_judges(100 + seed), replace(FitSettings(ks=(5, 9))), np.random.default_rng(seed), None).rows[1]
            raw += plain.low <= truth <= plain.high
        assert wide >= raw and wide >= 32  # 90% nominal: at least 80% of 40
