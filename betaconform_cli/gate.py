"""The CI gate: fail when the majority-vote error at one k exceeds a limit (by default its interval's upper end,
so that a small sample cannot pass by luck)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .errors import P0, P1, ParameterError
from .parameters import check

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
    beyond: int = 0  # k is beyond the data: the most judges any item has (0: k is within the data)

    def line(self) -> str:
        what = "estimated error" if self.on == "estimate" else "upper interval bound of the error"
        status = "ok" if self.passed else "FAIL"
        past = (f"; extrapolated: no item has more than {self.beyond} judges, so this k is the model's extrapolation "
                "(docs/EXTRAPOLATION.md)" if self.beyond else "")
        return (f"{status} {self.dataset}: {what} at k={self.k} is {100 * self.value:.2f}% (limit {100 * self.max_error:.2f}%"
                f"{past})")


class ErrorRow(Protocol):
    """What the gate reads of an error row: k, the estimate and the interval's upper end."""

    @property
    def k(self) -> int: ...
    @property
    def estimate(self) -> float: ...
    @property
    def high(self) -> float: ...


@dataclass(frozen=True)
class Gate:
    """Pass when the error at `at_k` (`on` the interval's upper end or the estimate) is at most `max_error`."""

    max_error: float
    at_k: int
    on: str = "upper"

    def __post_init__(self) -> None:
        check("max_error", self.max_error)
        check("at_k", self.at_k)
        if self.on not in GATE_ON:
            raise ParameterError("on", f"must be upper or estimate; got {self.on!r}")

    def check(self, dataset: str, rows: Sequence[ErrorRow], most: int = 0) -> GateCheck:
        """The check of one dataset's error rows (fit.ErrorRow, or a saved fit's fit_document.row_type()); `most`: the
        most judges any item has, beyond which a row is extrapolated (its `beyond_data`; a saved fit from before
        the flag: k > most). The verdict is the row's, widened as every row beyond the data is (extrapolation.py);
        the line, the JSON and the JUnit case say that it is extrapolated."""
        row = next((r for r in rows if r.k == self.at_k), None)
        if row is None:
            raise ParameterError(("at_k", "ks"), f"{P0} {self.at_k} is not among the computed ks; add it to {P1}")
        value = float(row.estimate if self.on == "estimate" else row.high)
        flag = getattr(row, "beyond_data", None)
        beyond = flag is True or (not isinstance(flag, bool) and 0 < most < self.at_k)
        past = (most if 0 < most < self.at_k else self.at_k - 1) if beyond else 0
        return GateCheck(dataset, self.at_k, self.max_error, self.on, value, value <= self.max_error, past)


def make_gate(max_error: float | None, at_k: int | None, on: str = "upper") -> Gate | None:
    """A gate from its options: none when neither limit nor k is given; both are needed."""
    if max_error is None and at_k is None:
        return None
    if max_error is None or at_k is None:
        raise ParameterError(("max_error", "at_k"), f"the gate needs both {P0} and {P1}")
    return Gate(max_error, at_k, on)


SCORE_ON = ("lower", "estimate")


@dataclass(frozen=True)
class ScoreCheck:
    """One dataset (or one comparison a - b) against the score gate."""

    dataset: str
    min_score: float
    on: str
    value: float
    passed: bool
    what: str = "score"  # "score", or "difference" for a comparison

    def line(self) -> str:
        what = f"corrected {self.what}" if self.on == "estimate" else f"lower interval bound of the corrected {self.what}"
        status = "ok" if self.passed else "FAIL"
        return f"{status} {self.dataset}: {what} is {100 * self.value:.2f}% (minimum {100 * self.min_score:.2f}%)"


class Estimate(Protocol):
    """What the score gate reads of an estimate: the estimate and its interval's lower end."""

    @property
    def estimate(self) -> float: ...
    @property
    def low(self) -> float: ...


@dataclass(frozen=True)
class ScoreGate:
    """Pass when the corrected pass rate (`on` its interval's lower end, or the estimate) is at least `min_score`;
    for a comparison (`difference`), the difference a - b, so a minimum may be negative."""

    min_score: float
    on: str = "lower"
    difference: bool = False

    def __post_init__(self) -> None:
        check("compare.min_score" if self.difference else "min_score", self.min_score)
        if self.on not in SCORE_ON:
            raise ParameterError("on", f"must be lower or estimate; got {self.on!r}")

    def check(self, dataset: str, interval: Estimate) -> ScoreCheck:
        """The check of one corrected pass rate (ppi.Interval) or difference (score/document.Difference)."""
        value = float(interval.estimate if self.on == "estimate" else interval.low)
        return ScoreCheck(dataset, float(self.min_score), self.on, value, value >= self.min_score,
                          "difference" if self.difference else "score")


def make_score_gate(min_score: float | None, on: str | None = None, difference: bool = False) -> ScoreGate | None:
    """The score gate from its options: none without a minimum; `on` alone is an error (it would gate nothing)."""
    if min_score is None:
        if on is not None:
            raise ParameterError(("on", "min_score"), f"{P0} says what {P1} checks; add {P1} X")
        return None
    return ScoreGate(min_score, on or "lower", difference)
