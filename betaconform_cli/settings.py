"""Fit settings and the weak prior: light (no scipy), so the CLI can validate options before heavy imports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import P0, ParameterError, UsageError
from .formats import MAX_K as MAX_K
from .parameters import CONFIDENCE_LEVEL, PARAMETERS, check

if TYPE_CHECKING:
    import numpy as np

TIE_RULE = "for even k a tie (k/2 correct) counts as half an error"
COMPONENTS: tuple[int | str, ...] = (1, 2, 3, "auto")
# every other option's choices: read by the core's checks and by the CLI's choices alike, from here, because this
# module is light (the modules that use them import scipy, which the CLI loads only when a command computes)
RULES = ("conformal", "variance", "precision")  # stopping rules
PRECISION_METHODS = ("calibrated", "sequential")  # the precision rule's interval
SCORE_TARGETS = ("set", "new")  # score's interval: these items' pass rate, or new items'
TRANSFER_METHODS = ("default", "paper")
SIZE_WEIGHTS = ("log", "linear")  # eq. 14's size term
SLICE_ADJUSTMENTS = ("holm", "bh", "none")  # --by's multiplicity: Holm (family-wise), Benjamini-Hochberg (FDR), none
JUDGES_CSV_TABLES = ("ensembles", "agreement")  # judges -f csv: the ensembles of each size, or each judge against the gold
SIMILARITIES = ("cosine", "inverse-euclidean")


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


def check_seed(seed: int) -> None:
    """A seed in the one range every command, output and saved fit carries (0 to 2^53 - 1)."""
    check("seed", seed)


def generators(seed: int, n: int) -> list[np.random.Generator]:
    """`n` independent random generators from one seed, one per use of randomness in a command. The first is
    numpy's default_rng(seed) itself -- what `fit` draws its posterior from, so that a command's fit equals `fit`'s
    with the same seed and every seed gives the numbers it always gave --; the others are the children of
    SeedSequence(seed).spawn(n - 1) (a decision, which items come next), so that no use replays another's numbers,
    as generators seeded alike would. The seed is checked first."""
    import numpy as np

    check_seed(seed)
    children = np.random.SeedSequence(seed).spawn(n - 1) if n > 1 else []
    return [np.random.default_rng(seed), *(np.random.default_rng(child) for child in children)]


def generator(seed: int) -> np.random.Generator:
    """The one generator of a command with one use of randomness: generators(seed, 1)[0], default_rng(seed)."""
    return generators(seed, 1)[0]


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
