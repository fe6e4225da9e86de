"""The transfer's hyper-parameters (configs/transfer.yaml documents each and docs/TRANSFER.md how it was chosen)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..choices import SIMILARITIES as SIMILARITIES  # the choices live in the light choices.py
from ..choices import SIZE_WEIGHTS as SIZE_WEIGHTS
from ..choices import TRANSFER_METHODS
from ..errors import P0, P1, ParameterError, ParamsError, quote_all

METHODS = TRANSFER_METHODS
SOURCE_PRIORS = ("similarity", "noisy-or", "fixed")
NO_TRANSFER_EVIDENCE = ("dirichlet", "beta-binomial")
METHOD_DESCRIPTIONS = {
    "default": "Bayesian transfer: no transfer against each source (as it is, between two, pooled, or its shape at "
    "the labels' location), weighted by text similarity times the marginal likelihood of the target's labels; the "
    "estimate stays within max_move posterior standard deviations of the no-transfer estimate",
    "paper": "the paper's transfer (eq. 14-15): lambda-weighted average of the EM mixture parameters, plug-in",
}
# the posterior probability of "no transfer" from which a result says that no source applies
NO_SOURCE_LEVEL = 0.5
LIST_KEYS = ("strengths", "grid_concentrations", "interpolation")
NUMBER_KEYS = ("sigmoid_a", "sigmoid_b", "conflict_bayes_factor", "no_transfer_prior", "pool_prior", "pair_prior",
               "histogram_smoothing", "similarity_power", "as_is_min_strength", "shift_prior", "shift_max", "shift_step", "max_move")
NULLABLE_KEYS = ("no_transfer_prior", "histogram_smoothing", "max_move")
BOOL_KEYS = ("sigmoid", "match_judge_count")


def _finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _one_of(owner: Any, *names: tuple[str, tuple[str, ...]]) -> None:
    for name, allowed in names:
        if getattr(owner, name) not in allowed:
            raise ParameterError(name, f"must be one of {', '.join(allowed)}; got {getattr(owner, name)!r}")


@dataclass(frozen=True)
class Eq14Settings:
    """Eq. 14, lambda_i = size(r_i) * sigmoid(a * (similarity(E0, Ei) - b)), which serves both methods."""

    sigmoid_a: float = 10.0
    sigmoid_b: float = 0.5
    size_weight: str = "log"
    similarity: str = "cosine"
    sigmoid: bool = True

    def __post_init__(self) -> None:
        _one_of(self, ("size_weight", SIZE_WEIGHTS), ("similarity", SIMILARITIES))
        for name in ("sigmoid_a", "sigmoid_b"):
            if not _finite(getattr(self, name)):
                raise ParameterError(name, f"must be a finite number; got {getattr(self, name)!r}")


@dataclass(frozen=True)
class AppliesSettings:
    """The default method: the prior that some source applies, how the sources share it, and how far the labels
    let the estimate move."""

    source_prior: str = "similarity"
    no_transfer_prior: float | None = 0.1
    similarity_power: float = 3.0
    match_judge_count: bool = True
    max_move: float | None = 0.5

    def __post_init__(self) -> None:
        _one_of(self, ("source_prior", SOURCE_PRIORS))
        if self.no_transfer_prior is not None and not (_finite(self.no_transfer_prior) and 0 < self.no_transfer_prior < 1):
            raise ParameterError("no_transfer_prior", f"must be strictly between 0 and 1 (or null); got {self.no_transfer_prior}")
        if self.max_move is not None and not (_finite(self.max_move) and self.max_move >= 0):
            raise ParameterError("max_move", f"must be a non-negative number (or null: no limit); got {self.max_move}")
        if not (_finite(self.similarity_power) and self.similarity_power >= 0):
            raise ParameterError("similarity_power", f"must be a non-negative number; got {self.similarity_power}")


@dataclass(frozen=True)
class OffersSettings:
    """The default method: what a source offers (as it is at `strengths`, pooled, between two, shifted)."""

    strengths: tuple[float, ...] = (5.0, 20.0, 100.0)
    as_is_min_strength: float = 20.0
    shift_prior: float = 0.5
    shift_max: float = 4.0
    shift_step: float = 0.25
    pool_prior: float = 0.4
    pair_prior: float = 0.0
    interpolation: tuple[float, ...] = (0.25, 0.5, 0.75)
    histogram_smoothing: float | None = 1.0

    def __post_init__(self) -> None:
        if not self.strengths or not all(_finite(s) and s > 0 for s in self.strengths):
            raise ParameterError("strengths", f"must be a non-empty list of positive numbers; got {list(self.strengths)}")
        if not (_finite(self.as_is_min_strength) and self.as_is_min_strength >= 0):
            raise ParameterError("as_is_min_strength", f"must be a non-negative number; got {self.as_is_min_strength}")
        self._check_shifts()
        if not (_finite(self.pool_prior) and 0 <= self.pool_prior < 1):
            raise ParameterError("pool_prior", f"must be in [0, 1); got {self.pool_prior}")
        if not (_finite(self.pair_prior) and 0 <= self.pair_prior < 1 and self.pool_prior + self.pair_prior < 1):
            raise ParameterError(("pair_prior", "pool_prior"), f"{P0} must be in [0, 1) with {P1} + {P0} < 1; "
                                 f"got {self.pair_prior}")
        if not all(_finite(t) and 0 < t < 1 for t in self.interpolation):
            raise ParameterError("interpolation", f"points must lie strictly between 0 and 1; got {list(self.interpolation)}")
        if self.histogram_smoothing is not None and not (_finite(self.histogram_smoothing) and self.histogram_smoothing >= 0):
            raise ParameterError("histogram_smoothing", f"must be a non-negative number (or null); got {self.histogram_smoothing}")

    def _check_shifts(self) -> None:
        if not (_finite(self.shift_prior) and 0 <= self.shift_prior < 1):
            raise ParameterError("shift_prior", f"must be in [0, 1); got {self.shift_prior}")
        if not (_finite(self.shift_max) and _finite(self.shift_step) and 0 < self.shift_step <= self.shift_max <= 10):
            raise ParameterError(("shift_step", "shift_max"), f"{P0} and {P1} must satisfy 0 < {P0} <= {P1} <= 10; "
                                 f"got {self.shift_step}, {self.shift_max}")
        if self.shift_max / self.shift_step > 200:
            raise ParameterError(("shift_max", "shift_step"), f"{P0} / {P1} must be at most 200 (grid points per side); "
                                 f"got {self.shift_max / self.shift_step:g}")


@dataclass(frozen=True)
class EvidenceSettings:
    """The default method: the evidence of no transfer, and when the labels conflict with the sources."""

    no_transfer_evidence: str = "dirichlet"
    grid_means: int = 20
    grid_concentrations: tuple[float, ...] = (1.0, 4.0, 16.0, 64.0)
    conflict_bayes_factor: float = 0.1

    def __post_init__(self) -> None:
        _one_of(self, ("no_transfer_evidence", NO_TRANSFER_EVIDENCE))
        if not isinstance(self.grid_means, int) or isinstance(self.grid_means, bool) or not 2 <= self.grid_means <= 1000:
            raise ParameterError("grid_means", f"must be an integer between 2 and 1000; got {self.grid_means!r}")
        if not self.grid_concentrations or not all(_finite(c) and c > 0 for c in self.grid_concentrations):
            raise ParameterError("grid_concentrations", f"must be positive numbers; got {list(self.grid_concentrations)}")
        if not (_finite(self.conflict_bayes_factor) and 0 < self.conflict_bayes_factor < 1):
            raise ParameterError("conflict_bayes_factor", f"must be strictly between 0 and 1; got {self.conflict_bayes_factor}")


GROUPS = {"eq14": Eq14Settings, "applies": AppliesSettings, "offers": OffersSettings, "evidence": EvidenceSettings}
# every setting by its flat name (configs/transfer.yaml, the JSON documents), in the documents' order
FLAT_KEYS = ("method", "sigmoid_a", "sigmoid_b", "size_weight", "similarity", "sigmoid", "strengths", "as_is_min_strength",
             "grid_means", "grid_concentrations", "conflict_bayes_factor", "no_transfer_evidence", "source_prior",
             "no_transfer_prior", "match_judge_count", "max_move", "shift_prior", "shift_max", "shift_step", "pool_prior",
             "pair_prior", "interpolation", "histogram_smoothing", "similarity_power")
GROUP_OF = {f.name: group for group, cls in GROUPS.items() for f in fields(cls)}


@dataclass(frozen=True)
class TransferSettings:
    """Hyper-parameters of the transfer, in groups: `eq14` serves both methods; the default method's `applies`
    (which source applies, if any, and how far the labels let the estimate move), `offers` (what a source offers)
    and `evidence` (the no-transfer evidence and when to warn). `of(**flat)` builds them from flat names, as
    configs/transfer.yaml spells them; `to_dict()` gives the flat names back.
    """

    method: str = "default"
    eq14: Eq14Settings = Eq14Settings()
    applies: AppliesSettings = AppliesSettings()
    offers: OffersSettings = OffersSettings()
    evidence: EvidenceSettings = EvidenceSettings()

    def __post_init__(self) -> None:
        _one_of(self, ("method", METHODS))

    @classmethod
    def of(cls, **flat: Any) -> TransferSettings:
        """From flat names (sigmoid_a=..., shift_prior=...); the others keep their defaults."""
        unknown = sorted(set(flat) - set(FLAT_KEYS))
        if unknown:
            raise TypeError(f"unknown transfer setting(s): {', '.join(unknown)}")
        grouped: dict[str, dict[str, Any]] = {group: {} for group in GROUPS}
        for k, v in flat.items():
            if k != "method":
                grouped[GROUP_OF[k]][k] = tuple(v) if k in LIST_KEYS else v
        return cls(flat.get("method", "default"), **{g: GROUPS[g](**kw) for g, kw in grouped.items()})

    def replaced(self, **flat: Any) -> TransferSettings:
        """These settings with some changed, by flat name."""
        return TransferSettings.of(**{**self.flat(), **flat})

    def flat(self) -> dict[str, Any]:
        """Every setting by its flat name, in FLAT_KEYS' order."""
        return {k: self.method if k == "method" else getattr(getattr(self, GROUP_OF[k]), k) for k in FLAT_KEYS}

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if k in LIST_KEYS else v for k, v in self.flat().items()}


CONFIG_KEYS = set(FLAT_KEYS) - {"method"}


def _config_value(where: str, k: str, v: Any) -> Any:
    if k in LIST_KEYS:
        if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            raise ParamsError(f"{where}: field '{k}': expected a list of numbers")
        return tuple(float(x) for x in v)
    if k == "grid_means":
        if not isinstance(v, int) or isinstance(v, bool):
            raise ParamsError(f"{where}: field 'grid_means': expected an integer, got {v!r}")
        return v
    if k in NULLABLE_KEYS and v is None:
        return None
    if k in NUMBER_KEYS:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise ParamsError(f"{where}: field '{k}': expected a number, got {v!r}")
        return float(v)
    if k in BOOL_KEYS and not isinstance(v, bool):
        raise ParamsError(f"{where}: field '{k}': expected true or false, got {v!r}")
    return v


def settings_from_config(config: Mapping[str, Any], where: str = "config", **overrides: Any) -> TransferSettings:
    """TransferSettings from a configs/transfer.yaml mapping, then keyword overrides (None: keep).

    A value out of range in the file is a ParamsError naming the file and field; one in `overrides` stays a
    ParameterError naming the parameter (the CLI shows the option that set it)."""
    if not isinstance(config, Mapping):
        raise ParamsError(f"{where}: expected a mapping of transfer settings")
    unknown = set(config) - CONFIG_KEYS
    if unknown:
        raise ParamsError(f"{where}: unknown key(s) {quote_all(sorted(map(str, unknown)))}; allowed: {', '.join(sorted(CONFIG_KEYS))}")
    values = {k: _config_value(where, k, v) for k, v in config.items()}
    try:
        TransferSettings.of(**values)
    except ParameterError as exc:
        raise ParamsError(f"{where}: " + exc.render(lambda p: f"field '{p}'")) from None
    values.update({k: v for k, v in overrides.items() if v is not None})
    return TransferSettings.of(**values)
