"""Types of the vote-split estimate: its prior, its fitted model, its rows and the estimate itself."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ParameterError
from ..fit import FitResult
from ..fit_document import Unlabeled

Method = Literal["vote_split", "labels_only"]
METHOD_VOTES: Method = "vote_split"
METHOD_LABELS: Method = "labels_only"
DEFAULT_KS = tuple(range(1, 12))
# the models of P(plurality wrong | split) that can be averaged (docs/UNLABELED.md): no offset, the folded
# Beta-Binomial's, the judges' one-coin agreement model's, no dependence on the split at all, and the agreement
# model's log odds scaled by c in [0, 1.5] (c = 0 is the constant model, c = 1 judges that err independently), and
# a step at unanimity (one P(wrong) for every split where the judges disagree, another where all agree), and no
# shape at all (each split its own P(wrong) around a common level: posterior.SATURATED_TAU), and (round 4) the
# tempered form of a one-coin model whose items differ in difficulty (votes/difficulty.py)
MODELS = ("flat", "folded", "agreement", "constant", "tempered", "unanimous", "saturated", "difficulty")
# how the models are weighed against each other (docs/UNLABELED.md, "Issue 26, round 2"): by the labels' marginal
# likelihood ("evidence"), or by stacking the models' leave-one-label-out predictive densities ("stacking"), or (round
# 5) by exp of the sum of those log densities ("pseudo_bma": Yao et al. 2018's pseudo-BMA, no Bayesian bootstrap)
WEIGHTINGS = ("evidence", "stacking", "pseudo_bma")


@dataclass(frozen=True)
class Hyperprior:
    """A discrete hyperprior (issue 26 round 5, docs/UNLABELED.md): over the random effect's sd, `taus` as (tau, prior
    mass) pairs, and over a common scale s of the prior widths (sd0 s, sd1 s), `scales` as (s, prior mass) pairs; the
    posterior integrates both on the grid, so the labels weigh each value."""

    taus: tuple[tuple[float, float], ...] = ((1.0, 1.0),)
    scales: tuple[tuple[float, float], ...] = ((1.0, 1.0),)

    def __post_init__(self) -> None:
        for name, pairs in (("taus", self.taus), ("scales", self.scales)):
            if not pairs or any(v < 0 or m <= 0 or (name == "scales" and v == 0) for v, m in pairs):
                raise ParameterError(f"prior.tau.{name}", f"must be (value, mass) pairs with value >= 0 (scales > 0) and "
                                                          f"mass > 0; got {list(pairs)}")

    @classmethod
    def half_normal(cls, scale: float = 1.0, top: float = 2.0, points: int = 9,
                    scales: tuple[tuple[float, float], ...] = ((1.0, 1.0),)) -> Hyperprior:
        """tau ~ half-normal(`scale`) on `points` equally spaced values from 0 to `top`, mass proportional to the
        density there (normalised when used)."""
        values = [top * i / (points - 1) for i in range(points)]
        return cls(tuple((v, math.exp(-0.5 * (v / scale) ** 2)) for v in values), scales)

    def to_dict(self) -> dict[str, Any]:
        return {"taus": [list(p) for p in self.taus], "scales": [list(p) for p in self.scales]}


# round 5's stated hyperpriors (docs/UNLABELED.md, "round 5"): tau ~ half-normal(1) on 0, 0.25, ..., 2, and the prior
# widths scaled by 1/2, 1 or 2, equally likely
WIDTH_SCALES = ((0.5, 1.0), (1.0, 1.0), (2.0, 1.0))


@dataclass(frozen=True)
class SplitPrior:
    """Independent Gaussian priors on b0 (logit of a wrong plurality at an even split) and b1 (the slope in the
    margin x); the grid that carries the posterior."""

    mean0: float = 0.0
    sd0: float = 1.5
    mean1: float = -2.0
    sd1: float = 3.0
    # issue 26: the flat logistic and the tempered agreement model (docs/UNLABELED.md, "Issue 26"); issue 17's
    # product was ("flat", "folded", "agreement", "constant") with b1 ~ N(-1, 2^2)
    models: tuple[str, ...] = ("flat", "tempered")
    weighted: bool = False
    # the random effect's sd, or a discrete hyperprior over it and over the prior widths' scale (round 5)
    tau: float | Hyperprior = 1.0
    nodes: int = 15
    grid0: tuple[float, float, int] = (-6.0, 6.0, 61)
    grid1: tuple[float, float, int] = (-16.0, 8.0, 81)
    # models that only the guard reads (their posterior probability), left out of the estimate's average
    guard_models: tuple[str, ...] = ()
    weighting: str = "evidence"

    def __post_init__(self) -> None:
        unknown = [m for m in self.models if m not in MODELS]
        if not self.models or unknown:
            raise ParameterError("prior.models", f"must name models among {list(MODELS)}; got {list(self.models)}")
        if not isinstance(self.tau, Hyperprior) and not self.tau >= 0:
            raise ParameterError("prior.tau", f"must be >= 0 or a Hyperprior; got {self.tau!r}")
        if self.weighting not in WEIGHTINGS:
            raise ParameterError("prior.weighting", f"must be one of {list(WEIGHTINGS)}; got {self.weighting!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"b0": {"mean": self.mean0, "sd": self.sd0}, "b1": {"mean": self.mean1, "sd": self.sd1},
                               "models": list(self.models),
                               "tau": self.tau.to_dict() if isinstance(self.tau, Hyperprior) else self.tau}
        if self.weighting != "evidence":  # issue 17's and issue 26's documents stay as they were
            out["weighting"] = self.weighting
        return out


@dataclass(frozen=True)
class VoteRow:
    """Majority-vote error at k judges over all items (fractions in [0, 1]) and the labels-only estimate; extrapolated:
    some item has fewer than k judges (its missing judges come from the labels-only mixture, as in `fit`)."""

    k: int
    estimate: float
    low: float
    high: float
    labels_only: float
    labels_only_low: float
    labels_only_high: float
    extrapolated: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "labels_only": self.labels_only,
            "labels_only_low": self.labels_only_low,
            "labels_only_high": self.labels_only_high,
            "extrapolated": self.extrapolated,
        }


@dataclass(frozen=True)
class SplitModel:
    """The fitted vote-split model: posterior means of (b0, b1) in the margin models, the folded Beta-Binomial (a, b) behind the
    "folded" model's offsets (None without it), each model's posterior probability, and the labeled splits the
    likelihood saw (those whose plurality could be wrong) with how many had a wrong plurality."""

    b0: float
    b1: float
    folded: tuple[float, float] | None
    model_probabilities: dict[str, float]
    labeled_splits: int
    labeled_wrong: int
    # the "tempered" model's posterior means (b0, c) given that model (None without it); b0 and b1 above are the
    # margin models' (flat, folded, agreement, constant), so that b0 + b1 x stays a curve in the margin x
    tempered: tuple[float, float] | None = None
    # the judges' agreement beyond chance, as a z statistic (agreement.agreement_z; the guard reads it)
    agreement_z: float | None = None
    # the judges' dependence share (agreement.dependence_share), computed by the rectified estimators only
    dependence: float | None = None
    # Cochran's Q p-value for interchangeable judges (agreement.plurality_cochran), computed by round 5's switch only
    interchangeable_p: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "b0": self.b0,
            "b1": self.b1,
            "tempered": None if self.tempered is None else {"b0": self.tempered[0], "scale": self.tempered[1]},
            "agreement_z": None if self.agreement_z is None or not math.isfinite(self.agreement_z) else self.agreement_z,
            "folded_beta_binomial": None if self.folded is None else {"alpha": self.folded[0], "beta": self.folded[1]},
            "model_probabilities": dict(self.model_probabilities),
            "labeled_splits": self.labeled_splits,
            "labeled_wrong": self.labeled_wrong,
        } | ({} if self.dependence is None else {"dependence_share": self.dependence}) | (
            {} if self.interchangeable_p is None else {"interchangeable_p": self.interchangeable_p})


@dataclass(frozen=True)
class VoteEstimate:
    """The error table over all items, which method gave it and why, and the counts it rests on."""

    ks: tuple[int, ...]
    rows: tuple[VoteRow, ...]
    method: Method
    reason: str
    labeled_items: int
    unlabeled_items: int
    dropped_items: int
    confidence_level: float
    prior: SplitPrior
    model: SplitModel | None
    labels_only: FitResult = field(repr=False)
    # the interval's draws of the error over every item (draws x ks), kept when asked (estimate_errors' keep_draws)
    draws: Any = field(default=None, repr=False, compare=False)

    @property
    def used_unlabeled(self) -> bool:
        return self.method == METHOD_VOTES

    def row(self, k: int) -> VoteRow:
        for r in self.rows:
            if r.k == k:
                return r
        raise ParameterError("ks", f"does not hold k = {k} (computed: {list(self.ks)})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reason": self.reason,
            "items": self.labeled_items,
            "unlabeled_items": self.unlabeled_items,
            "dropped_items": self.dropped_items,
            "confidence_level": self.confidence_level,
            "prior": self.prior.to_dict(),
            "model": None if self.model is None else self.model.to_dict(),
            "error_rates": [r.to_dict() for r in self.rows],
        }

    def fit_record(self) -> Unlabeled:
        """How the estimate used the items without gold, as `fit`'s document (and a saved fit) carries it beside
        their count ("items" stays the labeled count)."""
        return Unlabeled(method=self.method, reason=self.reason, used=self.used_unlabeled, labeled_items=self.labeled_items,
                         unlabeled_items=self.unlabeled_items, dropped_items=self.dropped_items, prior=self.prior.to_dict(),
                         model=None if self.model is None else self.model.to_dict())
