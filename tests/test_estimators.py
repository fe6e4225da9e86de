"""The estimators' one table (estimators.REGISTRY): everything that lists estimators reads it, and adding one is one
entry. The toy estimator below is registered by a fixture only, without touching another module, and shows up in
fit's JSON, CSV and table, in a saved fit that `report` reads back, and in evaluate."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from betaconform_cli import estimators
from betaconform_cli.distributions import Binomial
from betaconform_cli.estimators import REGISTRY, Estimator, Fitted, Style
from betaconform_cli.evaluate import ESTIMATORS, EvaluateSettings

from .conftest import SAMPLE, invoke

Q = SAMPLE / "qa_judges.jsonl"
TOY_ACCURACY = 0.8  # the toy says: every judge is right with probability 0.8, whatever the data


def toy_error(k: int) -> float:
    """The majority error of k independent judges right with probability 0.8, ties half, by scipy.stats."""
    right = stats.binom(k, TOY_ACCURACY)
    return float(right.cdf((k - 1) // 2) + (0.5 * right.pmf(k // 2) if k % 2 == 0 else 0.0))


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Estimator]:
    """One entry in the table, for this test only: a column 'toy_error' headed 'toy' in fit's table."""
    entry = Estimator("toy", "toy label", Style("#123456", "o", "-"), column="toy_error", heading="toy",
                      errors=lambda f: f.errors_of(Binomial(TOY_ACCURACY)))
    monkeypatch.setitem(REGISTRY, "toy", entry)
    yield entry


class TestEveryListReadsTheTable:
    """fit's --method, evaluate's estimators and fit's CSV columns come from the table, in its order."""

    def test_names(self) -> None:
        from typing import get_args

        from betaconform_cli.cli.options import Method  # a Literal of the core's tuple (cli/options.py)

        assert list(get_args(Method)) == [n for n, e in REGISTRY.items() if e.method] == list(estimators.METHODS)
        assert list(ESTIMATORS) == [n for n, e in REGISTRY.items() if e.plain]
        assert EvaluateSettings().methods == ESTIMATORS

    def test_csv_lists_the_tables_columns_first(self) -> None:
        assert estimators.csv_columns() == ("estimate", "low", "high", "binomial", "beta_binomial", "empirical", "mixture")

    def test_each_method_has_a_description(self) -> None:
        for name in estimators.METHODS:
            assert estimators.method_description(name)


class TestToyEstimator:
    """A toy registered by the fixture appears everywhere fit and evaluate show estimators."""

    def test_fit_json(self, toy: Estimator) -> None:
        doc = json.loads(invoke(CliRunner(), "fit", Q, "-f", "json", "--ks", "1-6").stdout)
        rows = doc["error_rates"]
        assert [r["k"] for r in rows] == [1, 2, 3, 4, 5, 6]
        for r in rows:
            assert r["toy_error"] == pytest.approx(toy_error(r["k"]), abs=1e-12)
        assert list(rows[0])[:9] == ["k", "estimate", "low", "high", "mixture", "binomial", "beta_binomial", "empirical", "toy_error"]

    def test_fit_csv(self, toy: Estimator) -> None:
        out = invoke(CliRunner(), "fit", Q, "-f", "csv", "--ks", "1,3")
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        assert list(rows[0])[5:9] == ["binomial", "beta_binomial", "empirical", "toy_error"]  # the table's, then the rest
        assert [float(r["toy_error"]) for r in rows] == pytest.approx([toy_error(1), toy_error(3)], abs=1e-6)

    def test_fit_table(self, toy: Estimator) -> None:
        out = invoke(CliRunner(), "fit", Q, "--ks", "1,3", "--no-chart").stdout
        cells = [[c.strip() for c in line.replace("┃", "│").strip("│ ").split("│")] for line in out.splitlines()]
        assert ["k", "estimate [90% interval]", "binomial", "beta-binomial", "empirical", "toy"] in cells
        k3 = next(c for c in cells if c[0] == "3")
        assert k3[-1] == f"{100 * toy_error(3):.1f}%"

    def test_saved_fit_round_trip(self, toy: Estimator, tmp_path: Path) -> None:
        saved = tmp_path / "qa.yaml"
        assert invoke(CliRunner(), "fit", Q, "--ks", "1,3", "--save", saved, "-f", "csv").exit_code == 0
        doc = json.loads(invoke(CliRunner(), "report", saved, "-f", "json").stdout)
        assert [r["toy_error"] for r in doc["error_rates"]] == pytest.approx([toy_error(1), toy_error(3)], abs=1e-12)

    def test_evaluate(self, toy: Estimator) -> None:
        out = invoke(CliRunner(), "evaluate", Q, "--r", "20", "--runs", "2", "--methods", "binomial,toy", "--ks", "1,3",
                     "-f", "json")
        assert out.exit_code == 0, out.stderr
        (cell,) = json.loads(out.stdout)["cells"]
        shown = {m["method"]: m for m in cell["methods"]}
        assert list(shown) == ["binomial", "toy"]
        assert shown["toy"]["estimate_mean"] == pytest.approx([toy_error(1), toy_error(3)], abs=1e-12)  # every draw alike
        assert shown["toy"]["estimate_sd"] == pytest.approx([0.0, 0.0], abs=1e-12)

    def test_fitted_needs_a_mixture_for_mixture_estimators(self) -> None:
        from betaconform_cli.counts import CountTable

        f = Fitted(CountTable.from_pairs([3, 3], [1, 2]), (1, 3))
        with pytest.raises(ValueError, match="fitted mixture"):
            REGISTRY["plugin"].errors(f)  # type: ignore[misc]
        assert np.isfinite(list(REGISTRY["binomial"].errors(f).values())).all()  # type: ignore[misc]
