"""Slices (`--by`, docs/SLICES.md): the multiplicity rules and the slices document.

Every slice of an input is one test of the gate and one interval, so a family of m slices (the slices of one input
with enough labels) is adjusted, alpha = 1 - confidence level:

- intervals: at the Bonferroni level 1 - alpha/m (simultaneous: all m cover at once with probability >= 1 - alpha)
  for `holm` and `bh`; at 1 - alpha for `none`;
- gates: `holm`, Holm's step-down (family-wise error alpha): the slices that pass at alpha/m pass; with r passed,
  the rest are tried at alpha/(m - r), until none passes more; `bh`, Benjamini-Hochberg's step-up (false discovery
  rate alpha): the largest i with at least i slices passing at i*alpha/m, and those pass; `none`: each at alpha.
  A slice passes at a level a when the command's own gate passes with its interval at 1 - a, so the procedures are
  run on the gates' intervals, never on p-values that the tool does not compute: for an interval that narrows as
  its level falls, "passes at a" is "p <= a", and `step_down`/`step_up` decide exactly as Holm and BH on p-values
  (`holm`/`benjamini_hochberg` are those, the tests' reference against statsmodels' multipletests).

A slice with fewer than MIN_LABELED labeled items shows no number and is not gated (it is not in the family).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType

from .choices import SLICE_ADJUSTMENTS
from .errors import ParameterError

MIN_LABELED = 10  # fewer labeled items in a slice: "too few labels", no number, not gated

Passes = Callable[[int, float], bool]  # (slice, alpha) -> whether its gate passes with its interval at 1 - alpha


def check_adjust(adjust: str) -> None:
    if adjust not in SLICE_ADJUSTMENTS:
        raise ParameterError("adjust", f"must be one of {', '.join(SLICE_ADJUSTMENTS)}; got {adjust!r}")


def interval_level(confidence_level: float, m: int, adjust: str) -> float:
    """The level of each slice's interval: Bonferroni's 1 - alpha/m (holm, bh), or the level itself (none, m <= 1)."""
    if adjust == "none" or m <= 1:
        return confidence_level
    return 1 - (1 - confidence_level) / m


def step_down(m: int, alpha: float, passes: Passes) -> list[float | None]:
    """Holm's step-down on the gates: for each slice the alpha at which it passed, None when it did not."""
    passed: list[float | None] = [None] * m
    r = 0
    while r < m:
        a = alpha / (m - r)
        new = [i for i in range(m) if passed[i] is None and passes(i, a)]
        if not new:
            break
        for i in new:
            passed[i] = a
        r += len(new)
    return passed


def step_up(m: int, alpha: float, passes: Passes) -> tuple[list[float | None], float]:
    """Benjamini-Hochberg's step-up on the gates: (for each slice the alpha at which it passed or None, the
    threshold i*alpha/m used; alpha/m when none passed). From i = m down: the slices passing at i*alpha/m; when
    fewer than i, the next i is their number (no i between passes: fewer pass at a lower level)."""
    i = m
    while i > 0:
        a = i * alpha / m
        got = [s for s in range(m) if passes(s, a)]
        if len(got) >= i:
            return [a if s in got else None for s in range(m)], a
        i = len(got)
    return [None] * m, alpha / m if m else alpha


def holm(pvalues: Sequence[float], alpha: float) -> list[bool]:
    """Holm's rejections from p-values (the reference of step_down)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out = [False] * len(pvalues)
    for rank, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - rank):
            break
        out[i] = True
    return out


def benjamini_hochberg(pvalues: Sequence[float], alpha: float) -> list[bool]:
    """Benjamini-Hochberg's rejections from p-values (the reference of step_up)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    top = max((rank + 1 for rank, i in enumerate(order) if pvalues[i] <= (rank + 1) * alpha / m), default=0)
    rank = {i: r for r, i in enumerate(order)}
    return [rank[i] < top for i in range(m)]


class SliceFigure(Struct, kw_only=True, frozen=True):
    """A slice's headline number: what it is, the estimate and its interval at `interval_level`."""

    what: str
    estimate: float
    low: float
    high: float


class SliceGate(Struct, kw_only=True, frozen=True):
    """A slice against the command's gate: passed, the alpha it was decided at, the gate's own line."""

    passed: bool
    alpha: float
    line: str


class SliceEntry(Struct, kw_only=True, frozen=True):
    """One slice: its key, its dataset's name, its items, and its figure and gate (absent: too few labels)."""

    key: str
    dataset: str
    labeled_items: int
    unlabeled_items: int
    figure: SliceFigure | None = None
    gate: SliceGate | UnsetType = UNSET
    note: str = ""


class SliceFamily(Struct, kw_only=True, frozen=True):
    """The slices of one input: its m (slices with enough labels), the intervals' level and the gate's rule."""

    parent: str
    source: str
    m: int
    interval_level: float
    gate_rule: str
    slices: list[SliceEntry]


class SlicesDocument(Struct, kw_only=True, frozen=True):
    """`fit`, `judges` or `score` with --by: the slices of each input, and the command's own documents per slice."""

    schema: Literal["betaconform/1"]
    command: Literal["fit", "judges", "score"]
    kind: Literal["slices"]
    tool_version: str
    by: str
    adjust: Literal["holm", "bh", "none"]
    confidence_level: float
    min_labeled: int
    order: str
    statement: str
    families: list[SliceFamily]
    results: list[dict[str, Any]]  # the command's own documents, one per slice with enough labels (docs/schema/fit.json, judges.json, score.json)
