"""Sources and judge profiles: what a fitted source dataset brings, and how its judges behave.

A source is a saved fit (fit --save --embed, or configs/priors/): its (judges, correct) histogram, its fitted
mixture and the mean text embedding of its items (eq. 14's E-bar). A judge profile summarises how an ensemble's
judges behave on a dataset, from labels alone: how many judges saw each item, how often one is right (accuracy)
and how much more often they err together than independent judges would (overdispersion, the intra-class
correlation rho = Var(p) / (mu (1 - mu)) of the items' chance p of a correct judgment; 0 for independent judges,
1 when all judges of an item agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import fit_document
from ..counts import CountTable
from ..distributions import Mixture
from ..errors import EmbeddingError


@dataclass(frozen=True)
class Source:
    """A fitted source dataset: its histogram, fitted mixture and mean text embedding."""

    name: str
    table: CountTable
    mixture: Mixture
    embedding: np.ndarray = field(repr=False)
    model: str
    origin: str = ""

    @property
    def items(self) -> int:
        return self.table.items

    @classmethod
    def from_saved(cls, saved: Any, origin: str) -> Source:
        """From a saved fit as savedfit.load_fit types and checks it (fit_document.saved_fit_type()); it must carry an
        embedding (fit --save --embed)."""
        emb = saved.embedding
        if not emb:  # absent (UNSET) or null
            raise EmbeddingError(f"{origin}: source has no text embedding; refit it with `fit DATA --save FILE --embed`")
        top = max(saved.histogram)
        counts = np.zeros((top + 1, top + 1), dtype=np.int64)
        for k, row in saved.histogram.items():
            counts[k, : k + 1] = row
        return cls(
            name=saved.dataset,
            table=CountTable(counts),
            mixture=saved.model.mixture(),
            embedding=np.asarray(emb.mean, dtype=np.float64),
            model=emb.model,
            origin=origin,
        )


def check_embeddings(sources: Sequence[Source], model: str, dimension: int) -> None:
    """Every source must be embedded by the same model, at the same dimension, as the targets."""
    for s in sources:
        if s.model != model or len(s.embedding) != dimension:
            raise EmbeddingError(
                f"{s.origin or s.name}: embedded with model {s.model!r} (dimension {len(s.embedding)}), but the targets use "
                f"{model!r} (dimension {dimension}); refit the source with the same embedding model, or use that model"
            )


@dataclass(frozen=True)
class JudgeProfile:
    """How an ensemble's judges behave on a dataset: judges per item, accuracy, overdispersion (rho)."""

    judges: tuple[int, ...]  # the numbers of judges K that items carry
    accuracy: float  # share of correct judgments
    overdispersion: float  # rho: 0 independent judges, 1 all judges of an item agree

    def record(self) -> fit_document.JudgeProfile:
        """As the transfer document carries it (fit_document.JudgeProfile)."""
        return fit_document.JudgeProfile(judges=list(self.judges), accuracy=self.accuracy, overdispersion=self.overdispersion)


def judge_counts(table: CountTable) -> tuple[int, ...]:
    """The numbers of judges K that the table's items carry."""
    return tuple(int(k) for k in np.nonzero(table.counts.sum(axis=1))[0])


def mixture_overdispersion(mixture: Mixture) -> float:
    """rho = Var(p) / (mu (1 - mu)) of the mixture of Betas over p (law of total variance)."""
    w = np.asarray(mixture.weights)
    m = np.asarray(mixture.means)
    c = np.asarray(mixture.alphas) + np.asarray(mixture.betas)
    mu = float(w @ m)
    var = float(w @ (m * (1 - m) / (c + 1) + m**2)) - mu**2
    return float(min(max(var / max(mu * (1 - mu), 1e-12), 0.0), 1.0))


def profile(table: CountTable, mixture: Mixture) -> JudgeProfile:
    """The judge profile of a dataset: its judge counts and accuracy (from the table), its overdispersion (from the
    fitted mixture: ten items say little about it, a fitted Beta-Binomial says what they can)."""
    return JudgeProfile(judge_counts(table), float(table.single_judge_accuracy()), mixture_overdispersion(mixture))


def same_judge_count(target: CountTable, source: Source) -> float:
    """Share of the target's items whose number of judges K the source also has items with: 1 when the source can
    be the same ensemble of judges on every item, 0 when it saw only other numbers of judges."""
    counts = target.counts.sum(axis=1)
    src = source.table.counts.sum(axis=1)
    shared = sum(int(counts[k]) for k in judge_counts(target) if k < len(src) and src[k] > 0)
    return shared / target.items
