"""The shared parameters, declared once (issue 28, item 2; scikit-learn's `_parameter_constraints`): each one's name
as the library spells it, its range, its default and the message that states the range. `check(key, value)` is the
one check every command's core runs; the library's signatures and the CLI's options take their defaults from
`default(key)` (through the constants below), so that a default is written once.

Declared here: every parameter that more than one command takes or that is checked in more than one place (the
interval level, the seed, ensemble sizes, the gate's k and limits, runs and draws, the stopping rules' numbers, the
readers' tolerance and threshold, plan's target and costs, drift's numbers). A check whose range depends on the data
(judges' ks up to the number of judges, --population from the labeled items) stays where the data is.

Light (no numpy): the CLI imports it at start, for its options' defaults.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, cast

from .errors import ParameterError
from .formats import MAX_K, MAX_SEED

MAX_RUNS = 100_000  # draws per dataset and setting (evaluate; sample's replays): the per-run arrays are allocated up front
MAX_LABELS = 10**9  # the most labels a rule option may name or a "label about N more" may say
MAX_DRAWS = 100_000  # plan's bootstrap draws
MAX_PERMUTATIONS = 100_000  # drift's permutations


@dataclass(frozen=True)
class Parameter:
    """One parameter: `name` as the library spells it (the CLI shows the option that sets it), the range
    [low, high] (an end is open where `open_low` / `open_high`), whether it is an integer, its default (None where
    each command keeps its own: plan's target is 0.05, the rules' 0.03), and the range in words (`message`,
    followed by "; got VALUE" in the error)."""

    name: str
    low: float
    high: float
    default: Any
    message: str
    open_low: bool = False
    open_high: bool = False
    integer: bool = False  # an int (numpy's integers too, unless `python_int`), never a bool or a float
    python_int: bool = False  # a Python int only (the seed, as seeds.check_seed always took it)
    each: bool = False  # a non-empty sequence whose every element is in the range (ensemble sizes)

    def holds(self, value: Any) -> bool:
        if self.each:
            sized = hasattr(value, "__len__") and hasattr(value, "__iter__") and not isinstance(value, (str, bytes))
            return sized and len(value) > 0 and all(self._holds(v) for v in value)
        return self._holds(value)

    def _holds(self, value: Any) -> bool:
        kind = int if self.python_int else numbers.Integral if self.integer else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind):
            return False
        v = cast(float, value)  # an int or a real number, compared as it is (a huge int is not made a float)
        if not self.integer and not math.isfinite(v):
            return False
        above = v > self.low if self.open_low else v >= self.low
        below = v < self.high if self.open_high else v <= self.high
        return above and below


# key -> Parameter. A key is the parameter's name, or "command.name" where one command gives it another range
# (drift's simultaneous intervals are at 1 - alpha / 2: its level must be at least 0.5).
PARAMETERS: dict[str, Parameter] = {p_key: p for p_key, p in (
    ("confidence_level", Parameter("confidence_level", 0.0, 1.0, 0.9, "must be strictly between 0 and 1",
                                   open_low=True, open_high=True)),
    ("drift.confidence_level", Parameter("confidence_level", 0.5, 1.0, 0.9, "must be in [0.5, 1)", open_high=True)),
    ("seed", Parameter("seed", 0, MAX_SEED, 0, f"must be an integer from 0 to 2^53 - 1 ({MAX_SEED})", integer=True,
                       python_int=True)),
    # ensemble sizes (fit, report, evaluate, sample); judges' own ks are checked against its number of judges
    ("ks", Parameter("ks", 1, MAX_K, None, f"must be ensemble sizes from 1 to {MAX_K}", integer=True, each=True)),
    ("n_draws", Parameter("n_draws", 100, math.inf, None, "must be at least 100", integer=True)),
    # the gates (fit and report --max-error/--at-k, score --min-score) and the precision rule's k
    ("at_k", Parameter("at_k", 1, math.inf, None, "must be a positive integer", integer=True)),
    ("max_error", Parameter("max_error", 0.0, 1.0, None, "is a fraction between 0 and 1 (0.1 = 10%)")),
    ("min_score", Parameter("min_score", 0.0, 1.0, None, "is a fraction between 0 and 1 (0.8 = 80%)")),
    ("compare.min_score", Parameter("min_score", -1.0, 1.0, None, "is a fraction between -1 and 1 for a difference a - b "
                                    "(-0.02: b may be up to 2 points better)")),
    ("judges.max_error", Parameter("max_error", 0.0, 1.0, None, "must be in (0, 1]", open_low=True)),
    # runs: sample's replays and evaluate's draws (a standard error needs two)
    ("runs", Parameter("runs", 1, MAX_RUNS, None, f"must be from 1 to {MAX_RUNS}", integer=True)),
    ("evaluate.runs", Parameter("runs", 2, MAX_RUNS, None, f"must be an integer from 2 to {MAX_RUNS} (a standard error "
                                "needs two draws)", integer=True)),
    # the stopping rules (sample, evaluate) and plan's target half-width
    ("target", Parameter("target", 0.0, 0.5, None, "is a half-width between 0 and 0.5 (0.03 = 3 points)",
                         open_low=True, open_high=True)),
    ("min_samples", Parameter("min_samples", 2, MAX_LABELS, None, f"must be from 2 to {MAX_LABELS:,}", integer=True)),
    ("patience", Parameter("patience", 1, MAX_LABELS, None, f"must be from 1 to {MAX_LABELS:,}", integer=True)),
    ("epsilon", Parameter("epsilon", 0.0, 1.0, None, "must be strictly between 0 and 1", open_low=True, open_high=True)),
    ("xi", Parameter("xi", 0.0, math.inf, None, "must be a finite number > 0", open_low=True)),
    ("tau", Parameter("tau", 0.0, math.inf, None, "must be a finite number > 0", open_low=True)),
    ("reference_sd", Parameter("reference_sd", 0.0, math.inf, None, "must be a finite number > 0", open_low=True)),
    ("batch", Parameter("batch", 1, MAX_LABELS, None, "must be at least 1", integer=True)),
    ("draws", Parameter("draws", 10, MAX_DRAWS, None, "must be from 10 to 100,000", integer=True)),
    ("label_cost", Parameter("label_cost", 0.0, math.inf, None, "must be a finite cost of at least 0 per label")),
    # every reader (fit, score, judges, sample, plan, doctor, drift)
    ("tolerance", Parameter("tolerance", 0.0, math.inf, None, "must be a finite number >= 0")),
    ("threshold", Parameter("threshold", -math.inf, math.inf, None, "must be a finite number")),
    # drift
    ("max_change", Parameter("max_change", 0.0, 1.0, None, "is a change of accuracy between 0 and 1 (0.05 = 5 points)",
                             open_high=True)),
    ("permutations", Parameter("permutations", 19, MAX_PERMUTATIONS, None, "must be between 19 and 100000", integer=True)),
)}


def check(key: str, value: Any) -> None:
    """A ParameterError naming the parameter, its range and the value, unless `value` is in the range of `key`."""
    p = PARAMETERS[key]
    if not p.holds(value):
        shown = list(value) if p.each and hasattr(value, "__iter__") and not isinstance(value, (str, bytes)) else \
            repr(value) if isinstance(value, (str, bytes)) else value  # the text '0.9' (the library) is not 0.9
        raise ParameterError(p.name, f"{p.message}; got {shown}")


def check_optional(key: str, value: Any) -> None:
    """`check`, where None (the parameter not given) is allowed."""
    if value is not None:
        check(key, value)


def default(key: str) -> Any:
    return PARAMETERS[key].default


CONFIDENCE_LEVEL: float = default("confidence_level")  # every command's interval level, unless given
DRIFT_CONFIDENCE_LEVEL: float = default("drift.confidence_level")
SEED: int = default("seed")
