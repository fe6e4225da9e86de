"""benchmarks/judges_bayes.py (issue 26 round 3, docs/JUDGES.md): the empirical-Bayes rectifier's two limits, checked
against the plain prediction-powered estimate of benchmarks/judges_rectified.py (an independent implementation)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from judges_bayes import eb_rectified  # noqa: E402
from judges_rectified import LabeledErrors, rectified  # noqa: E402


def _errors(shift: np.ndarray, rng: np.random.Generator) -> LabeledErrors:
    """Candidates whose residuals on 40 labeled items are one shared noise row plus a per-candidate shift."""
    r = 40
    predicted = np.tile(rng.uniform(0.1, 0.4, size=r), (len(shift), 1))
    exact = np.clip(predicted + rng.normal(0.0, 0.05, size=r)[None, :] + shift[:, None], 0.0, 1.0)
    return LabeledErrors(exact, predicted, np.full(len(shift), 30.0), np.full(len(shift), 100.0))


def test_identical_candidates_get_the_pooled_rectifier_which_is_their_own() -> None:
    """No spread between candidates beyond the shared noise: B = 0, and the pooled rectifier is each one's own."""
    le = _errors(np.zeros(6), np.random.default_rng(3))
    got = eb_rectified(le, 2, 0.9)
    want = rectified(le, 2, 0.9)
    assert got.shrink == 0.0
    assert abs(got.estimate - want.estimate) < 1e-12


def test_widely_spread_candidates_keep_their_own_rectifier() -> None:
    """Shifts of 0.1-0.3 against a noise of sd 0.05 / sqrt(40) after centring: B near 1, the estimate within a
    thousandth of the candidate's own prediction-powered estimate (and far from the pooled one)."""
    le = _errors(np.linspace(-0.15, 0.15, 7), np.random.default_rng(4))
    got = eb_rectified(le, 0, 0.9)
    own = rectified(le, 0, 0.9)
    assert got.shrink > 0.99
    assert abs(got.estimate - own.estimate) < 1e-3
    assert got.low <= got.estimate <= got.high
