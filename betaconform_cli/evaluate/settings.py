"""What decides an evaluation's numbers (the seed aside), and the seeded draws every mode shares."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..counts import CountTable
from ..errors import ParameterError, UsageError
from ..estimators import ESTIMATORS as ESTIMATOR_NAMES
from ..estimators import plain_estimators
from ..mixtures import empirical_errors
from ..parameters import CONFIDENCE_LEVEL, check
from ..parameters import MAX_RUNS as MAX_RUNS
from ..settings import FitSettings

ESTIMATORS = ESTIMATOR_NAMES  # estimators.REGISTRY's, outside transfer mode, as it stands at import: --methods all
TRANSFER_METHODS = ("default", "transfer", "paper_transfer", "empirical")
SCHEMA = "betaconform-evaluate/1"
MARGIN_DEFINITION = (
    "error margin: mean over odd k (k <= every item's number of judges) of |estimate - actual|, in percentage "
    "points; actual = the whole dataset's exact (hypergeometric) majority error; draws of r items without "
    "replacement, the same items for every estimator"
)

Progress = Callable[[int, int, str], None]  # (draws done, draws in all, what is being drawn)




@dataclass(frozen=True)
class EvaluateSettings:
    """Everything that decides the numbers of an evaluation (the seed aside)."""

    sizes: tuple[int, ...] = (10, 30, 56)
    runs: int = 30
    methods: tuple[str, ...] = ESTIMATORS
    ks: tuple[int, ...] = tuple(range(1, 12))
    confidence_level: float = CONFIDENCE_LEVEL
    n_draws: int = FitSettings().n_draws  # the same interval as `fit`

    def __post_init__(self) -> None:
        if not self.sizes or any(not isinstance(r, int) or r < 2 for r in self.sizes):
            raise ParameterError("sizes", f"(numbers of labeled items r) must be integers >= 2; got {list(self.sizes)}")
        check("evaluate.runs", self.runs)  # at most MAX_RUNS: the per-run arrays are allocated up front (1e11: 48 TiB)
        if not self.methods:
            raise ParameterError("methods", "must name at least one estimator")
        bad = [m for m in self.methods if m not in plain_estimators() and m not in TRANSFER_METHODS]
        if bad:
            raise ParameterError("methods", f"names an unknown estimator {bad[0]!r}; choose from {', '.join(plain_estimators())}")
        if len(set(self.methods)) != len(self.methods):
            raise ParameterError("methods", f"names an estimator twice: {list(self.methods)}")
        if not any(k % 2 == 1 for k in self.ks):
            raise ParameterError("ks", f"must hold an odd k (the error margin averages over odd k); got {list(self.ks)}")
        # the fit's own checks (ks range, confidence level, n_draws)
        self.fit_settings()

    def fit_settings(self) -> FitSettings:
        return FitSettings(
            method="default", ks=self.ks, confidence_level=self.confidence_level, n_draws=self.n_draws
        )


def check_plain_methods(settings: EvaluateSettings) -> None:
    extra = [m for m in settings.methods if m not in plain_estimators()]
    if extra:
        raise ParameterError("methods", f"names {extra[0]}, which exists only in transfer mode")


def run_rng(seed: int, dataset: str, size: int, run: int) -> np.random.Generator:
    """The generator of one draw: independent of the other datasets and sizes evaluated alongside."""
    return np.random.default_rng([seed, zlib.crc32(dataset.encode("utf-8")), size, run])


def item_arrays(table: CountTable) -> tuple[np.ndarray, np.ndarray]:
    """(judges, correct) per item, in a fixed order (items sorted by cell)."""
    big_k, s, n = table.cells()
    return np.repeat(big_k, n), np.repeat(s, n)


def draw_table(judges: np.ndarray, correct: np.ndarray, size: int, rng: np.random.Generator) -> CountTable:
    """r items drawn without replacement."""
    idx = rng.choice(len(judges), size=size, replace=False)
    return CountTable.from_pairs(judges[idx], correct[idx])


def truth(table: CountTable, ks: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """The whole dataset's exact (hypergeometric) majority error per k (NaN where undefined) and its histogram
    of correct counts at its largest number of judges: what every mode's cells are measured against."""
    actual_d = empirical_errors(table, ks)
    actual = np.array([np.nan if actual_d[k] is None else actual_d[k] for k in ks])
    top = table.max_judges
    return actual, tuple(int(v) for v in table.counts[top, : top + 1])


class Ticker:
    """Counts the draws done and tells `progress` (when given) after each."""

    def __init__(self, progress: Progress | None, total: int, done: int = 0):
        self.progress = progress
        self.total = total
        self.done = done

    def tick(self, what: str, draws: int = 1) -> None:
        self.done += draws
        if self.progress is not None:
            self.progress(self.done, self.total, what)


def check_names(names: Sequence[str]) -> None:
    """Datasets are keyed by name (and seeded by it): two inputs with one name are refused."""
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UsageError(f"two inputs are both named {dup!r}; rename one file")


