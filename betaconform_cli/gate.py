"""The CI gate: fail when the majority-vote error at one k exceeds a limit (by default its interval's upper end,
so that a small sample cannot pass by luck)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ParameterError

GATE_ON = ("upper", "estimate")


@dataclass(frozen=True)
class GateCheck:
    """One dataset against the gate."""

    dataset: str
    k: int
    max_error: float
    on: str
    value: float
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "max_error": self.max_error, "on": self.on, "value": self.value, "passed": self.passed}

    def line(self) -> str:
        what = "estimated error" if self.on == "estimate" else "upper interval bound of the error"
        status = "ok" if self.passed else "FAIL"
        return f"{status} {self.dataset}: {what} at k={self.k} is {100 * self.value:.2f}% (limit {100 * self.max_error:.2f}%)"


@dataclass(frozen=True)
class Gate:
    """Pass when the error at `at_k` (`on` the interval's upper end or the estimate) is at most `max_error`."""

    max_error: float
    at_k: int
    on: str = "upper"

    def __post_init__(self) -> None:
        if not (isinstance(self.max_error, (int, float)) and 0 <= self.max_error <= 1 and math.isfinite(self.max_error)):
            raise ParameterError("max_error", f"is a fraction between 0 and 1 (0.1 = 10%); got {self.max_error}")
        if self.at_k < 1:
            raise ParameterError("at_k", f"must be a positive integer; got {self.at_k}")
        if self.on not in GATE_ON:
            raise ParameterError("on", f"must be upper or estimate; got {self.on!r}")

    def check(self, dataset: str, rows: Sequence[Mapping[str, Any]]) -> GateCheck:
        row = next((r for r in rows if r["k"] == self.at_k), None)
        if row is None:
            raise ParameterError(("at_k", "ks"), f"{{0}} {self.at_k} is not among the computed ks; add it to {{1}}")
        value = float(row["estimate"] if self.on == "estimate" else row["high"])
        return GateCheck(dataset, self.at_k, self.max_error, self.on, value, value <= self.max_error)


def make_gate(max_error: float | None, at_k: int | None, on: str = "upper") -> Gate | None:
    """A gate from its options: none when neither limit nor k is given; both are needed."""
    if max_error is None and at_k is None:
        return None
    if max_error is None or at_k is None:
        raise ParameterError(("max_error", "at_k"), "the gate needs both {0} and {1}")
    return Gate(max_error, at_k, on)
