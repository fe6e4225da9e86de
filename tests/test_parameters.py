"""The shared parameters' one table (parameters.py) and the interval helpers (intervals.py), issue 28 item 2."""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from betaconform_cli import intervals
from betaconform_cli.errors import ParameterError
from betaconform_cli.parameters import CONFIDENCE_LEVEL, PARAMETERS, check


class TestTable:
    """One check per parameter, and every default read from the table."""

    @pytest.mark.parametrize(("key", "value"), [
        ("confidence_level", 0.9), ("confidence_level", np.float64(0.5)), ("confidence_level", np.float32(0.99)),
        ("drift.confidence_level", 0.5), ("seed", 0), ("seed", 2**53 - 1), ("ks", (1, 3)), ("ks", range(1, 12)),
        ("ks", np.array([1, 201])), ("at_k", np.int64(3)), ("threshold", -1e300), ("tolerance", 0)])
    def test_holds(self, key: str, value: object) -> None:
        check(key, value)

    @pytest.mark.parametrize(("key", "value", "message"), [
        ("confidence_level", 1.5, "confidence_level must be strictly between 0 and 1; got 1.5"),
        ("confidence_level", 0, "confidence_level must be strictly between 0 and 1; got 0"),
        ("confidence_level", math.nan, "confidence_level must be strictly between 0 and 1; got nan"),
        ("confidence_level", True, "confidence_level must be strictly between 0 and 1; got True"),
        ("confidence_level", "0.9", "confidence_level must be strictly between 0 and 1; got '0.9'"),  # text shown as text
        ("drift.confidence_level", 0.4, "confidence_level must be in [0.5, 1); got 0.4"),
        ("seed", -1, "seed must be an integer from 0 to 2^53 - 1 (9007199254740991); got -1"),
        ("seed", 2**53, "seed must be an integer from 0 to 2^53 - 1 (9007199254740991); got 9007199254740992"),
        ("seed", 10**400, None),  # a huge int is compared as an int (no OverflowError)
        ("seed", 1.0, "seed must be an integer from 0 to 2^53 - 1 (9007199254740991); got 1.0"),
        ("seed", np.int64(3), None),  # as seeds.check_seed always did: a Python int only
        ("ks", (), "ks must be ensemble sizes from 1 to 201; got []"),
        ("ks", (1, 202), "ks must be ensemble sizes from 1 to 201; got [1, 202]"),
        ("ks", "1-3", "ks must be ensemble sizes from 1 to 201; got '1-3'"),
        ("at_k", 2.0, "at_k must be a positive integer; got 2.0"),
        ("tolerance", math.inf, "tolerance must be a finite number >= 0; got inf"),
        ("target", 0.5, "target is a half-width between 0 and 0.5 (0.03 = 3 points); got 0.5"),
    ])
    def test_refuses(self, key: str, value: object, message: str | None) -> None:
        with pytest.raises(ParameterError) as exc:
            check(key, value)
        assert message is None or str(exc.value) == message

    def test_every_confidence_level_default_is_the_tables(self) -> None:
        """Every library function and CLI command that takes `confidence_level` defaults to the table's (0.9)."""
        import betaconform_cli.cli as cli
        from betaconform_cli import api
        from betaconform_cli.api import _library

        functions = [getattr(_library, n) for n in ("fit", "score", "judges", "sample")]
        functions += [getattr(api, n) for n in ("judges", "score", "plan", "drift")]
        functions += [c.callback for c in cli.app.registered_commands if c.callback is not None]
        seen = 0
        for f in functions:
            p = inspect.signature(f).parameters.get("confidence_level")
            if p is not None:
                seen += 1
                assert p.default == CONFIDENCE_LEVEL == PARAMETERS["confidence_level"].default, f
        assert seen >= 9


class TestIntervals:
    """Each helper against an independent computation."""

    @pytest.mark.parametrize(("successes", "n", "level"), [(0, 10, 0.9), (7, 10, 0.95), (10, 10, 0.8), (33, 120, 0.9)])
    def test_wilson_is_scipys(self, successes: int, n: int, level: float) -> None:
        ci = stats.binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
        assert intervals.wilson(successes / n, n, level) == pytest.approx((ci.low, ci.high), abs=1e-12)

    def test_quantiles(self) -> None:
        """Published values: z(0.9) = 1.6449, z(0.95) = 1.9600, t(0.95, 10 dof) = 2.2281."""
        assert intervals.z_value(0.9) == pytest.approx(1.644854, abs=1e-6)
        assert intervals.z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
        assert intervals.t_value(0.95, 10) == pytest.approx(2.228139, abs=1e-6)
        assert intervals.t_half_width(4.0, 0.95, 10) == pytest.approx(2 * 2.228139, abs=1e-5)
        assert intervals.t_half_width(-1.0, 0.95, 10) == 0.0
        assert intervals.normal_half_width(np.array([1.0, 4.0]), 0.95) == pytest.approx([1.959964, 3.919928], abs=1e-5)

    def test_equal_tailed_is_the_percentiles(self) -> None:
        draws = np.arange(101.0)[:, None] * np.array([1.0, 2.0])
        low, high = intervals.equal_tailed(draws, 0.9)  # (1 - 0.9) / 2 is 0.04999...: the 5th and 95th, to rounding
        assert low == pytest.approx([5.0, 10.0], abs=1e-9) and high == pytest.approx([95.0, 190.0], abs=1e-9)
        assert intervals.equal_tailed(np.arange(101.0), 0.8, axis=None) == pytest.approx((10.0, 90.0), abs=1e-9)

    def test_enclose(self) -> None:
        """An interval that misses its estimate is stretched to it; NaN follows numpy for arrays, Python for numbers."""
        low, high = intervals.enclose(np.array([0.5, 0.1, np.nan]), np.array([0.2, 0.2, 0.2]), np.array([0.4, 0.3, 0.3]))
        assert low[:2].tolist() == [0.2, 0.1] and high[:2].tolist() == [0.5, 0.3] and np.isnan(low[2]) and np.isnan(high[2])
        assert intervals.enclose_value(0.5, 0.2, 0.4) == (0.2, 0.5)
        assert intervals.enclose_value(math.nan, 0.2, 0.4) == (0.2, 0.4)


Q, S, SB = "sample_data/qa_judges.jsonl", "sample_data/system_verdicts.jsonl", "sample_data/system_b_verdicts.jsonl"


def _library(key: str) -> Any:
    """A library call that gives `key` a value out of its range (the table's keys, each once)."""
    import betaconform_cli as bc
    from betaconform_cli import api
    from betaconform_cli.evaluate.settings import EvaluateSettings
    from betaconform_cli.settings import FitSettings, check_settings

    return {
        "confidence_level": lambda: bc.fit(Q, confidence_level=1.5),
        "drift.confidence_level": lambda: api.drift(S, SB, confidence_level=0.4),
        "seed": lambda: bc.fit(Q, seed=-1),
        "ks": lambda: bc.fit(Q, ks=[0, 3]),
        "n_draws": lambda: check_settings(FitSettings(n_draws=5)),
        "at_k": lambda: bc.fit(Q, max_error=0.1, at_k=0),
        "max_error": lambda: bc.fit(Q, max_error=1.5, at_k=3),
        "min_score": lambda: bc.score(S, min_score=1.5),
        "compare.min_score": lambda: bc.score([S, SB], compare=True, min_score=-1.5),
        "judges.max_error": lambda: bc.judges(Q, max_error=0.0),
        "runs": lambda: bc.sample(Q, replay=True, runs=0),
        "evaluate.runs": lambda: EvaluateSettings(runs=1),
        "target": lambda: api.plan([S], target=0.7),
        "min_samples": lambda: bc.sample(Q, min_samples=1),
        "patience": lambda: bc.sample(Q, patience=0),
        "epsilon": lambda: bc.sample(Q, epsilon=1.5),
        "xi": lambda: bc.sample(Q, rule="variance", xi=-1.0),
        "tau": lambda: bc.sample(Q, tau=0.0),
        "reference_sd": lambda: bc.sample(Q, reference_sd=math.inf),
        "batch": lambda: bc.sample(Q, batch=0),
        "draws": lambda: api.plan([S], draws=5),
        "label_cost": lambda: api.plan([S], label_cost=-1.0),
        "tolerance": lambda: bc.fit(Q, tolerance=-1.0),
        "threshold": lambda: bc.fit(Q, threshold=math.nan),
        "max_change": lambda: api.drift(S, SB, max_change=1.5),
        "permutations": lambda: api.drift(S, SB, permutations=5),
    }[key]


CLI = {  # the same out-of-range value through the CLI (None: no option sets it)
    "confidence_level": ["fit", Q, "--confidence-level", "1.5"],
    "drift.confidence_level": ["drift", S, SB, "--confidence-level", "0.4"],
    "seed": ["fit", Q, "--seed", "-1"],
    "ks": None,  # --ks is text, read by settings.parse_ks against the table's range (tests/golden/cli/bad_ks.txt)
    "n_draws": None,
    "at_k": ["fit", Q, "--max-error", "0.1", "--at-k", "0"],
    "max_error": ["fit", Q, "--max-error", "1.5", "--at-k", "3"],
    "min_score": ["score", S, "--min-score", "1.5"],
    "compare.min_score": ["score", S, SB, "--compare", "--min-score", "-1.5"],
    "judges.max_error": ["judges", Q, "--max-error", "0"],
    "runs": ["sample", Q, "--replay", "--runs", "0"],
    "evaluate.runs": ["evaluate", Q, "--runs", "1"],
    "target": ["plan", S, "--target", "0.7"],
    "min_samples": ["sample", Q, "--min-samples", "1"],
    "patience": ["sample", Q, "--patience", "0"],
    "epsilon": ["sample", Q, "--epsilon", "1.5"],
    "xi": ["sample", Q, "--rule", "variance", "--xi", "-1"],
    "tau": ["sample", Q, "--tau", "0"],
    "reference_sd": ["sample", Q, "--reference-sd", "inf"],
    "batch": ["sample", Q, "--batch", "0"],
    "draws": ["plan", S, "--draws", "5"],
    "label_cost": ["plan", S, "--label-cost", "-1"],
    "tolerance": ["fit", Q, "--tolerance", "-1"],
    "threshold": ["fit", Q, "--threshold", "nan"],
    "max_change": ["drift", S, SB, "--max-change", "1.5"],
    "permutations": ["drift", S, SB, "--permutations", "5"],
}


class TestEnforced:
    """Every declared parameter's range is enforced, with the table's words, by the library and the CLI alike."""

    def test_every_key_has_a_case(self) -> None:
        assert set(CLI) == set(PARAMETERS)

    @pytest.mark.parametrize("key", sorted(PARAMETERS))
    def test_library(self, key: str) -> None:
        p = PARAMETERS[key]
        with pytest.raises(ParameterError) as exc:
            _library(key)()
        assert f"{p.name} {p.message}; got" in str(exc.value)

    @pytest.mark.parametrize("key", sorted(k for k, v in CLI.items() if v is not None))
    def test_cli(self, key: str) -> None:
        from typer.testing import CliRunner

        from .conftest import invoke

        p, args = PARAMETERS[key], CLI[key]
        assert args is not None
        result = invoke(CliRunner(), *args)
        assert result.exit_code == 2
        assert f"--{p.name.replace('_', '-')} {p.message}; got" in " ".join(result.output.split())
