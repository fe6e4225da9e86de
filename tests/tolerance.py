"""The one tolerance policy for expected numbers: goldens (text and JSON) and literal expectations alike.

Floats differ in their last digits from one machine to another (OpenBLAS picks a kernel per CPU: AVX-512 and Haswell
round differently, and an optimiser amplifies that a little), so no test pins a float to the last digit:

- a number equals its expectation within ABS absolute or REL relative;
- a number printed in text (a table, Markdown, CSV, a message) may also differ by one unit in its last printed digit,
  since a value near a rounding boundary can print either way;
- an integer (no decimal point, no exponent) is a count, an exit code, a k: it must be equal;
- everything that is not a number must be equal, except the widths of runs of spaces and table rules (a column is
  as wide as its widest number).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

REL = 1e-5
ABS = 1e-6

NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w])")
_RULES = re.compile(r"[ \u2500\u2501\u2550\u2574-\u257f]+")  # spaces and the box-drawing rules rich draws


def close(got: float, want: float, unit: float = 0.0) -> bool:
    """`got` equals `want` under the policy; `unit` is one unit in the last digit `want` was printed with."""
    if math.isnan(want) or math.isinf(want):
        return got == want or (math.isnan(got) and math.isnan(want))
    return abs(got - want) <= max(ABS, REL * abs(want), unit * 1.000001)


def approx(want: Any) -> Any:
    """pytest.approx under the policy, for literal expectations in tests."""
    return pytest.approx(want, rel=REL, abs=ABS)


def _unit(text: str) -> float:
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def _is_integer(text: str) -> bool:
    return "." not in text and "e" not in text.lower()


def text_differences(got: str, want: str) -> list[str]:
    """Where `got` differs from `want` under the policy (empty when they match)."""
    g_parts, w_parts = NUMBER.split(got), NUMBER.split(want)
    if len(g_parts) != len(w_parts):
        return [f"{(len(g_parts) - 1) // 2} numbers where {(len(w_parts) - 1) // 2} were expected"]
    out: list[str] = []
    line = 1
    for i, (g, w) in enumerate(zip(g_parts, w_parts)):
        if i % 2 == 0:
            if _RULES.sub(" ", g) != _RULES.sub(" ", w):
                out.append(f"line ~{line}: text {g[:60]!r} where {w[:60]!r} was expected")
        elif _is_integer(w) or _is_integer(g):
            if g != w:
                out.append(f"line ~{line}: {g} where {w} was expected")
        elif not close(float(g), float(w), _unit(w)):
            out.append(f"line ~{line}: {g} where {w} was expected (beyond the tolerance)")
        line += w.count("\n")
    return out


def assert_text_close(got: str, want: str, where: str) -> None:
    problems = text_differences(got, want)
    assert not problems, f"{where}: " + "; ".join(problems[:8])


def assert_close(got: Any, want: Any, where: str) -> None:
    """Equal structure; floats equal under the policy (a JSON document against its golden)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for k in want:
            assert_close(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{where}: {got!r} where {want} was expected"
        assert close(float(got), want), f"{where}: {got} where {want} was expected"
    else:
        assert got == want, where
