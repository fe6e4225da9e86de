"""The transfer's hyper-parameters (configs/transfer.yaml documents each and docs/TRANSFER.md how it was chosen)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..errors import ParameterError, ParamsError, quote_all
from ..settings import SIMILARITIES as SIMILARITIES  # the choices live with the light settings (settings.py)
from ..settings import SIZE_WEIGHTS as SIZE_WEIGHTS
from ..settings import TRANSFER_METHODS

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


@dataclass(frozen=True)
class TransferSettings:
    """Hyper-parameters of the transfer.

    Eq. 14 (`sigmoid_a`, `sigmoid_b`, `size_weight`, `similarity`, `sigmoid`) serves both methods. The default
    method: the prior that no source applies (`source_prior`, `no_transfer_prior`), what a source offers (`strengths`,
    `as_is_min_strength`, `histogram_smoothing`, `pool_prior`, `pair_prior`, `interpolation`, `shift_prior`, `shift_max`,
    `shift_step`, `match_judge_count`), how sources share their mass (`similarity_power`), the no-transfer evidence
    (`no_transfer_evidence`, `grid_means`, `grid_concentrations`), how far the labels let the estimate move (`max_move`) and when to warn
    (`conflict_bayes_factor`).
    """

    method: str = "default"
    sigmoid_a: float = 10.0
    sigmoid_b: float = 0.5
    size_weight: str = "log"
    similarity: str = "cosine"
    sigmoid: bool = True
    strengths: tuple[float, ...] = (5.0, 20.0, 100.0)
    as_is_min_strength: float = 20.0
    grid_means: int = 20
    grid_concentrations: tuple[float, ...] = (1.0, 4.0, 16.0, 64.0)
    conflict_bayes_factor: float = 0.1
    no_transfer_evidence: str = "dirichlet"
    source_prior: str = "similarity"
    no_transfer_prior: float | None = 0.1
    match_judge_count: bool = True
    max_move: float | None = 0.5
    shift_prior: float = 0.5
    shift_max: float = 4.0
    shift_step: float = 0.25
    pool_prior: float = 0.4
    pair_prior: float = 0.0
    interpolation: tuple[float, ...] = (0.25, 0.5, 0.75)
    histogram_smoothing: float | None = 1.0
    similarity_power: float = 3.0

    def __post_init__(self) -> None:
        def bad(param: str, message: str) -> ParameterError:
            return ParameterError(param, message)

        for name, allowed in (("method", METHODS), ("size_weight", SIZE_WEIGHTS), ("similarity", SIMILARITIES),
                              ("source_prior", SOURCE_PRIORS), ("no_transfer_evidence", NO_TRANSFER_EVIDENCE)):
            if getattr(self, name) not in allowed:
                raise bad(name, f"must be one of {', '.join(allowed)}; got {getattr(self, name)!r}")
        for name in ("sigmoid_a", "sigmoid_b"):
            if not _finite(getattr(self, name)):
                raise bad(name, f"must be a finite number; got {getattr(self, name)!r}")
        if not self.strengths or not all(_finite(s) and s > 0 for s in self.strengths):
            raise bad("strengths", f"must be a non-empty list of positive numbers; got {list(self.strengths)}")
        if not (_finite(self.as_is_min_strength) and self.as_is_min_strength >= 0):
            raise bad("as_is_min_strength", f"must be a non-negative number; got {self.as_is_min_strength}")
        if not isinstance(self.grid_means, int) or isinstance(self.grid_means, bool) or not 2 <= self.grid_means <= 1000:
            raise bad("grid_means", f"must be an integer between 2 and 1000; got {self.grid_means!r}")
        if not self.grid_concentrations or not all(_finite(c) and c > 0 for c in self.grid_concentrations):
            raise bad("grid_concentrations", f"must be positive numbers; got {list(self.grid_concentrations)}")
        if self.no_transfer_prior is not None and not (_finite(self.no_transfer_prior) and 0 < self.no_transfer_prior < 1):
            raise bad("no_transfer_prior", f"must be strictly between 0 and 1 (or null); got {self.no_transfer_prior}")
        if self.max_move is not None and not (_finite(self.max_move) and self.max_move >= 0):
            raise bad("max_move", f"must be a non-negative number (or null: no limit); got {self.max_move}")
        if not (_finite(self.shift_prior) and 0 <= self.shift_prior < 1):
            raise bad("shift_prior", f"must be in [0, 1); got {self.shift_prior}")
        if not (_finite(self.shift_max) and _finite(self.shift_step) and 0 < self.shift_step <= self.shift_max <= 10):
            raise ParameterError(("shift_step", "shift_max"), "{0} and {1} must satisfy 0 < {0} <= {1} <= 10; "
                                 f"got {self.shift_step}, {self.shift_max}")
        if self.shift_max / self.shift_step > 200:
            raise ParameterError(("shift_max", "shift_step"), "{0} / {1} must be at most 200 (grid points per side); "
                                 f"got {self.shift_max / self.shift_step:g}")
        if not (_finite(self.pool_prior) and 0 <= self.pool_prior < 1):
            raise bad("pool_prior", f"must be in [0, 1); got {self.pool_prior}")
        if not (_finite(self.pair_prior) and 0 <= self.pair_prior < 1 and self.pool_prior + self.pair_prior < 1):
            raise ParameterError(("pair_prior", "pool_prior"), "{0} must be in [0, 1) with {1} + {0} < 1; "
                                 f"got {self.pair_prior}")
        if not all(_finite(t) and 0 < t < 1 for t in self.interpolation):
            raise bad("interpolation", f"points must lie strictly between 0 and 1; got {list(self.interpolation)}")
        if self.histogram_smoothing is not None and not (_finite(self.histogram_smoothing) and self.histogram_smoothing >= 0):
            raise bad("histogram_smoothing", f"must be a non-negative number (or null); got {self.histogram_smoothing}")
        if not (_finite(self.similarity_power) and self.similarity_power >= 0):
            raise bad("similarity_power", f"must be a non-negative number; got {self.similarity_power}")
        if not (_finite(self.conflict_bayes_factor) and 0 < self.conflict_bayes_factor < 1):
            raise bad("conflict_bayes_factor", f"must be strictly between 0 and 1; got {self.conflict_bayes_factor}")

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        for k in LIST_KEYS:
            d[k] = list(getattr(self, k))
        return d


CONFIG_KEYS = {f.name for f in fields(TransferSettings)} - {"method"}


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
        TransferSettings(**values)
    except ParameterError as exc:
        raise ParamsError(f"{where}: " + exc.render(lambda p: f"field '{p}'")) from None
    values.update({k: v for k, v in overrides.items() if v is not None})
    return TransferSettings(**values)
