"""Fit settings and the weak prior: light (no scipy), so the CLI can validate options before heavy imports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ParameterError, UsageError

TIE_RULE = "for even k a tie (k/2 correct) counts as half an error"
MAX_K = 201  # the largest ensemble size k
# the one seed range, for every command and the library: JSON readers (and saved fits) carry integers below 2^53
# exactly, so a larger seed could not be written into the output and read back as the seed that was used
MAX_SEED = 2**53 - 1


def check_seed(seed: int) -> None:
    """A seed in the one range every command, output and saved fit carries (0 to 2^53 - 1)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ParameterError("seed", f"must be an integer from 0 to 2^53 - 1 ({MAX_SEED}); got {seed}")


@dataclass(frozen=True)
class Prior:
    """Weak prior of the MAP fit: N(0, sd^2) on each log alpha and log beta, Dirichlet(c, ..., c) on w."""

    log_param_sd: float = 3.0
    weight_concentration: float = 1.5

    def to_dict(self) -> dict[str, float]:
        return {"log_param_sd": self.log_param_sd, "weight_concentration": self.weight_concentration}


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
    confidence_level: float = 0.9
    prior: Prior = Prior()
    strength: float = 20.0
    flat: float = 1.0
    n_draws: int = 4000

    def __post_init__(self) -> None:
        check_settings(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "components": self.components,
            "ks": list(self.ks),
            "confidence_level": self.confidence_level,
            "prior": self.prior.to_dict(),
            "strength": self.strength,
            "flat": self.flat,
            "n_draws": self.n_draws,
        }


def check_settings(s: FitSettings) -> None:
    """Validate once, early; each message names the parameter and its allowed range."""
    # the method's name is checked against estimators.REGISTRY where it is used (fit.analyse), which this light
    # module cannot import
    if s.components not in (1, 2, 3, "auto"):
        raise ParameterError("components", f"must be 1, 2, 3 or auto; got {s.components!r}")
    if s.method == "paper" and s.components not in (2, "auto"):
        raise UsageError("the paper's method fits exactly two components: leave components at auto")
    if not s.ks or any(not isinstance(k, int) or k < 1 or k > MAX_K for k in s.ks):
        raise ParameterError("ks", f"must be ensemble sizes from 1 to {MAX_K}; got {list(s.ks)}")
    if not 0.0 < s.confidence_level < 1.0:
        raise ParameterError("confidence_level", f"must be strictly between 0 and 1; got {s.confidence_level}")
    if s.strength < 0 or s.flat <= 0:
        raise UsageError("strength must be >= 0 and flat > 0")
    if s.n_draws < 100:
        raise ParameterError("n_draws", f"must be at least 100; got {s.n_draws}")
