"""Figures render headless (Agg) and draw the evaluation's numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from betaconform_cli.counts import CountTable
from betaconform_cli.errors import UsageError
from betaconform_cli.evaluate import EvaluateSettings, evaluate
from betaconform_cli.plots import evaluation_figure, plot_evaluation

KS = tuple(range(1, 8))


@pytest.fixture(scope="module")
def ev():
    hard = CountTable.from_histogram([5, 4, 3, 1, 1, 2, 1, 3])
    easy = CountTable.from_histogram([0, 1, 1, 1, 2, 3, 6, 9])
    return evaluate(
        [("hard", hard), ("easy", easy)], EvaluateSettings(sizes=(6, 12), runs=3, ks=KS, n_draws=200), seed=0
    )


class TestEvaluationFigure:
    """One row per dataset: distribution panel (Fig. 3) and error-vs-k panel (Fig. 4)."""

    def test_layout_and_data(self, ev):
        fig = evaluation_figure(ev)
        axes = fig.get_axes()
        assert len(axes) == 4
        for row, name in enumerate(("hard", "easy")):
            cell = ev.cell(name, 12)
            hist_ax, err_ax = axes[2 * row], axes[2 * row + 1]
            assert name in hist_ax.get_title() and "r = 12" in hist_ax.get_title()
            heights = [p.get_height() for p in hist_ax.patches]
            h = np.array(cell.figure.histogram, dtype=float)
            np.testing.assert_allclose(heights, h / h.sum())
            actual = next(line for line in err_ax.get_lines() if line.get_label() == "actual")
            np.testing.assert_allclose(actual.get_ydata(), 100 * cell.actual)
            labels = {line.get_label() for line in err_ax.get_lines()}
            assert {"default", "paper EM", "Binomial", "empirical"} <= labels

    def test_chosen_size(self, ev):
        fig = evaluation_figure(ev, size=6)
        assert all("r = 6" in ax.get_title() for ax in fig.get_axes())
        with pytest.raises(UsageError, match="nothing to draw"):
            evaluation_figure(ev, size=99)


class TestSave:
    """PNG and SVG files are written atomically; bad names fail before any work."""

    def test_png_and_svg(self, ev, tmp_path: Path):
        png = plot_evaluation(ev, tmp_path / "figs" / "ev.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
        svg = plot_evaluation(ev, tmp_path / "ev.svg")
        assert b"<svg" in svg.read_bytes()[:2000]
        assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["ev.png", "ev.svg"]

    def test_bad_extension(self, ev, tmp_path: Path):
        with pytest.raises(UsageError, match=r"\.png, \.svg or \.pdf"):
            plot_evaluation(ev, tmp_path / "ev.gif")


@pytest.mark.process  # a fresh interpreter: what a new process imports
def test_headless_in_a_fresh_process(tmp_path: Path):
    """Without a display and with no backend configured the figure still renders (Agg canvas)."""
    target = tmp_path / "x.png"
    code = (
        "import os; os.environ.pop('DISPLAY', None); os.environ.pop('MPLBACKEND', None);"
        "from betaconform_cli.counts import CountTable;"
        "from betaconform_cli.evaluate import EvaluateSettings, evaluate;"
        "from betaconform_cli.plots import plot_evaluation;"
        "t = CountTable.from_histogram([2, 1, 1, 2, 4]);"
        "ev = evaluate([('d', t)], EvaluateSettings(sizes=(5,), runs=2, ks=(1, 3), n_draws=100), 0);"
        f"plot_evaluation(ev, {str(target)!r})"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    assert target.read_bytes()[:4] == b"\x89PNG"


def test_mixed_judge_counts_draw_without_warnings(tmp_path: Path):
    """Items with different numbers of judges leave the empirical estimate undefined at large k: no warning."""
    import warnings

    t = CountTable.from_pairs([5] * 8 + [3] * 4, [5, 4, 4, 3, 2, 1, 5, 0, 3, 2, 1, 3])
    ev = evaluate([("mixed", t)], EvaluateSettings(sizes=(6,), runs=3, ks=(1, 2, 3, 4, 5), n_draws=200), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = evaluation_figure(ev)
    err_ax = fig.get_axes()[1]
    empirical = next(line for line in err_ax.get_lines() if line.get_label() == "empirical")
    assert np.isnan(empirical.get_ydata()[3:]).all() and np.isfinite(empirical.get_ydata()[:3]).all()


class TestChartsTellTheTruth:
    """Every series visible, axes that show the data, nothing drawn that the tables call undefined."""

    def test_undefined_where_the_table_says_so(self):
        """Some draws (not all) lack items with k judges: the table's mean is undefined there, and so is the line."""
        t = CountTable.from_pairs([5] * 20 + [3] * 3, [5, 4, 4, 3, 2, 1, 5, 0, 3, 2, 5, 5, 4, 3, 5, 4, 2, 5, 4, 3, 1, 3, 2])
        ev = evaluate([("mixed", t)], EvaluateSettings(sizes=(8,), runs=12, ks=(1, 2, 3, 4, 5), n_draws=200), 0)
        cell = ev.cell("mixed", 8)
        e = cell.draws.estimates[:, cell.methods.index("empirical"), :]
        partly = np.isnan(e).any(axis=0) & np.isfinite(e).any(axis=0)
        assert partly.any()  # the member that matters: some draws defined, some not
        table = cell.summary("empirical").estimate_mean
        line = next(x for x in evaluation_figure(ev).get_axes()[1].get_lines() if x.get_label() == "empirical")
        assert [v is None for v in table] == list(np.isnan(line.get_ydata()))

    def test_every_series_visible(self, ev):
        """Each estimator its own marker and dash, and its own x offset: no line lies exactly on another."""
        err_ax = evaluation_figure(ev).get_axes()[1]
        lines = [x for x in err_ax.get_lines() if x.get_label() != "actual"]
        assert len(lines) >= 4
        assert len({x.get_marker() for x in lines}) == len(lines)
        xs = [tuple(np.round(x.get_xdata(), 6)) for x in lines]
        assert len(set(xs)) == len(xs)
        assert all(abs(a - k) < 0.5 for x in lines for a, k in zip(x.get_xdata(), KS))  # still read at their k
        low, high = err_ax.get_ylim()
        assert low == 0 and high >= max(np.nanmax(x.get_ydata()) for x in lines)

    def test_one_xi_shows_the_curve(self):
        """Fig. 6 with one xi: a Proposition 4.1 curve (not one point) over an axis around the value, from 0 up."""
        from betaconform_cli.evaluate import evaluate_adaptive, rule_grid
        from betaconform_cli.stopping import theoretical_samples

        t = CountTable.from_histogram([3, 3, 2, 2, 3, 5, 8, 12, 14, 10, 8, 30])
        rules, info = rule_grid("conformal", (0.03,))
        ev1 = evaluate_adaptive([("d", t)], rules, EvaluateSettings(runs=2, ks=(1, 3), n_draws=100), 0, rule_info=info)
        ax = evaluation_figure(ev1).get_axes()[0]
        curve = next(x for x in ax.get_lines() if str(x.get_label()).startswith("Proposition 4.1"))
        x, y = curve.get_xdata(), curve.get_ydata()
        assert len(x) > 10 and np.ptp(x) >= 0.03  # a curve, over a range at least as wide as the value
        lo, hi = ax.get_xlim()
        assert lo < 0.03 < hi and hi - lo >= 0.03
        assert ax.get_ylim()[0] == 0
        np.testing.assert_allclose(y, [theoretical_samples(float(v), 25.0) for v in x])
