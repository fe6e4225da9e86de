"""The shared parameters, declared once (issue 28, item 2; scikit-learn's `_parameter_constraints`): each one's name
as the library spells it, its range, its default and the message that states the range. `check(key, value)` is the
one check every command's core runs; the library's signatures and the CLI's options take their defaults from
`default(key)` (through the constants below), so that a default is written once.

Light (no numpy): the CLI imports it at start, for its options' defaults.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, cast

from .errors import ParameterError
from .formats import MAX_SEED


@dataclass(frozen=True)
class Parameter:
    """One parameter: `name` as the library spells it (the CLI shows the option that sets it), the range
    [low, high] (an end is open where `open_low` / `open_high`), whether it is an integer, its default, and the
    range in words (`message`, followed by "; got VALUE" in the error)."""

    name: str
    low: float
    high: float
    default: Any
    message: str
    open_low: bool = False
    open_high: bool = False
    integer: bool = False

    def holds(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int if self.integer else numbers.Real):
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
    ("seed", Parameter("seed", 0, MAX_SEED, 0, f"must be an integer from 0 to 2^53 - 1 ({MAX_SEED})", integer=True)),
)}


def check(key: str, value: Any) -> None:
    """A ParameterError naming the parameter, its range and the value, unless `value` is in the range of `key`."""
    p = PARAMETERS[key]
    if not p.holds(value):
        raise ParameterError(p.name, f"{p.message}; got {value}")


def default(key: str) -> Any:
    return PARAMETERS[key].default


CONFIDENCE_LEVEL: float = default("confidence_level")  # every command's interval level, unless given
DRIFT_CONFIDENCE_LEVEL: float = default("drift.confidence_level")
SEED: int = default("seed")
