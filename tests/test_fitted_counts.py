"""mixtures.fitted_counts: the histogram chart's observed and fitted counts, computed by the core (the report draws them
and refits nothing), checked against scipy.stats.betabinom."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from betaconform_cli.distributions import Mixture
from betaconform_cli.mixtures import fitted_counts
from betaconform_cli.report.fit import FitReport, histogram_bars

MIXTURE = Mixture((0.3, 0.7), (2.0, 9.0), (5.0, 1.5))


def scipy_counts(n: int, items: int) -> np.ndarray:
    pmf = sum(w * stats.betabinom.pmf(np.arange(n + 1), n, a, b) for w, a, b in zip(MIXTURE.weights, MIXTURE.alphas, MIXTURE.betas))
    return np.asarray(pmf) * items


def test_most_common_judges_against_scipy() -> None:
    counts = fitted_counts({3: [1, 2, 3, 4], 5: [0, 1, 1, 2, 3, 5]}, MIXTURE)
    assert (counts.judges, counts.observed, counts.items) == (5, (0, 1, 1, 2, 3, 5), 22)
    np.testing.assert_allclose(counts.fitted, scipy_counts(5, 12), rtol=1e-10)


def test_a_tie_takes_the_larger_and_string_keys_read() -> None:
    counts = fitted_counts({"2": [1, 1, 2], "4": [0, 0, 2, 1, 1]}, MIXTURE)  # type: ignore[dict-item]
    assert (counts.judges, counts.items) == (4, 8)
    np.testing.assert_allclose(counts.fitted, scipy_counts(4, 4), rtol=1e-10)
    title, bars = histogram_bars(counts)
    assert title.endswith("4 of 8 items: those with 4 judges")
    assert [(s, o) for s, o, _ in bars] == [(0, 0), (1, 0), (2, 2), (3, 1), (4, 1)]


def test_a_chart_without_its_counts_is_refused() -> None:
    with pytest.raises(ValueError, match="fitted counts"):
        FitReport(({"dataset": "a"},), chart=True)
    assert FitReport(({"dataset": "a"},), chart=False).counts == ()
