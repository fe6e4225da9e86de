"""Fit settings, the weak prior and --ks: light (no scipy), so the CLI can validate options before heavy imports.
The options' choices are in choices.py, seeds and generators in seeds.py."""

from __future__ import annotations

from dataclasses import dataclass

from .choices import COMPONENTS
from .errors import P0, ParameterError, UsageError
from .formats import MAX_K
from .parameters import CONFIDENCE_LEVEL, PARAMETERS, check

TIE_RULE = "for even k a tie (k/2 correct) counts as half an error"


def parse_ks(text: str) -> tuple[int, ...]:
    """'1-11', '1,3,5', '1..21' or a mix; every k from 1 to MAX_K."""
    ks: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        sep = ".." if ".." in part else ("-" if "-" in part[1:] else None)
        try:
            if sep:
                lo, hi = (int(x) for x in part.split(sep))
            else:
                lo = hi = int(part)
        except ValueError:
            raise ParameterError("ks", f"{P0}: cannot read {text!r}; use '1-11' or '1,3,5'") from None
        if lo > hi:
            raise ParameterError("ks", f"{P0}: the range {part!r} runs backwards; write it low to high, e.g. '{hi}-{lo}'")
        if not PARAMETERS["ks"].holds((lo, hi)):  # checked before the range is built: '1-300000000' must not fill the memory
            raise ParameterError("ks", f"{P0}: ensemble sizes must be from 1 to {MAX_K}; got {text!r}")
        ks.extend(range(lo, hi + 1))
    if not ks:
        raise ParameterError("ks", f"{P0}: no ensemble size in {text!r}")
    return tuple(sorted(set(ks)))


@dataclass(frozen=True)
class Prior:
    """Weak prior of the MAP fit: N(0, sd^2) on each log alpha and log beta, Dirichlet(c, ..., c) on w."""

    log_param_sd: float = 3.0
    weight_concentration: float = 1.5


INTERVAL_METHOD = (
    "equal-tailed Dirichlet posterior interval over the (judges, correct) cells: centre from the default "
    "estimate, spread from the labeled items plus one flat pseudo-item (never zero width at 0% or 100%)"
)


@dataclass(frozen=True)
class FitSettings:
    """Everything that decides a fit's numbers (the seed aside)."""

    method: str = "default"
    components: int | str = "auto"
    ks: tuple[int, ...] = tuple(range(1, 12))
    confidence_level: float = CONFIDENCE_LEVEL
    prior: Prior = Prior()
    strength: float = 20.0
    flat: float = 1.0
    n_draws: int = 4000

    def __post_init__(self) -> None:
        check_settings(self)


def check_settings(s: FitSettings) -> None:
    """Validate once, early; each message names the parameter and its allowed range."""
    # the method's name is checked against estimators.REGISTRY where it is used (fit.analyse), which this light
    # module cannot import
    if s.components not in COMPONENTS:
        raise ParameterError("components", f"must be 1, 2, 3 or auto; got {s.components!r}")
    if s.method == "paper" and s.components not in (2, "auto"):
        raise UsageError("the paper's method fits exactly two components: leave components at auto")
    check("ks", s.ks)
    check("confidence_level", s.confidence_level)
    if s.strength < 0 or s.flat <= 0:
        raise UsageError("strength must be >= 0 and flat > 0")
    check("n_draws", s.n_draws)
