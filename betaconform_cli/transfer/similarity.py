"""Step 1 of the default method, and the paper's weights: eq. 14 and the prior over "which source applies".

Eq. 14 (both methods), with index 0 the target itself (its own few labels; similarity to itself 1):

    lambda_i = size(r_i) * sigmoid(a * (CosSim(E0, Ei) - b)),   size = log r (or r: Table 5 ablation).

The default method reads eq. 14's sigmoid as a probability: a source whose texts are this similar applies to the
target (describes its judges on its task) with probability g_i = sigmoid(a (CosSim - b)). The prior that some
source applies is that of the most similar one, max_i g_i, so the prior that *no* source applies is
1 - max_i g_i, and at least `no_transfer_prior`; the sources share the rest by lambda_i ** `similarity_power`
(eq. 14). Unrelated sources (cosine well below b) leave the prior with no transfer, and adding more of them
never moves it: a hundred weak text matches are not stronger evidence than the best one (the noisy-or
1 - prod_i (1 - g_i), `source_prior: noisy-or`, lets many unrelated priors outvote no transfer by their
number; measured in docs/TRANSFER.md). `source_prior: fixed` keeps the previous rule (no transfer always `no_transfer_prior`);
`no_transfer_prior: null` uses eq. 14's own lambda_0 / sum lambda.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from .settings import TransferSettings


def similarities(target: np.ndarray, sources: list[np.ndarray], kind: str) -> np.ndarray:
    """CosSim(E0, Ei), or 1 / |E0 - Ei|_2 (Table 5 ablation)."""
    e0 = np.asarray(target, dtype=float)
    out = []
    for e in sources:
        e = np.asarray(e, dtype=float)
        if kind == "cosine":
            denom = float(np.linalg.norm(e0) * np.linalg.norm(e))
            out.append(float(e0 @ e) / denom if denom > 0 else 0.0)
        else:
            out.append(1.0 / max(float(np.linalg.norm(e0 - e)), 1e-12))
    return np.array(out)


def self_similarity(source_similarities: np.ndarray, kind: str) -> float:
    """Index 0's similarity to itself: 1 for cosine; for 1/distance (infinite) the largest source value."""
    if kind == "cosine":
        return 1.0
    return float(source_similarities.max()) if len(source_similarities) else 1.0


def text_match(sims: np.ndarray, settings: TransferSettings) -> np.ndarray:
    """eq. 14's similarity factor, sigmoid(a (sim - b)) (or sim itself, clipped to [0, 1], without the sigmoid)."""
    s = np.asarray(sims, dtype=float)
    if settings.eq14.sigmoid:
        return np.asarray(expit(settings.eq14.sigmoid_a * (s - settings.eq14.sigmoid_b)))
    return np.asarray(np.clip(s, 0.0, 1.0))


def transfer_weights(sizes: np.ndarray, sims: np.ndarray, settings: TransferSettings) -> np.ndarray:
    """lambda_i = size(r_i) * sigmoid(a (sim_i - b))  (eq. 14); size = log r (or r); no sigmoid: size * sim."""
    sizes = np.asarray(sizes, dtype=float)
    size = np.log(np.maximum(sizes, 1.0)) if settings.eq14.size_weight == "log" else sizes
    if settings.eq14.sigmoid:
        return np.asarray(size * text_match(sims, settings))
    return np.asarray(size * np.maximum(np.asarray(sims, dtype=float), 0.0))


@dataclass(frozen=True)
class SourcePrior:
    """The prior over "which source applies" (before the labels are seen)."""

    similarity: np.ndarray  # per source: CosSim(E0, Ei) (or 1 / distance)
    text_match: np.ndarray  # per source: sigmoid(a (sim - b)), the probability that it applies
    lam: np.ndarray  # eq. 14's lambda, index 0 the target
    eq14: np.ndarray  # lambda / sum(lambda): the paper's weights, index 0 the target
    no_transfer: float  # prior probability that no source applies
    family: np.ndarray  # per source: prior probability that it is the one that applies

    @property
    def text_shares(self) -> np.ndarray:
        """The sources' eq. 14 shares lambda_i / sum_{j >= 1} lambda_j (the similarity-weighted sources)."""
        tot = self.eq14[1:].sum()
        return self.eq14[1:] / tot if tot > 0 else np.full(len(self.family), 1 / len(self.family))


def source_prior(target_items: int, source_items: list[int], sims: np.ndarray, settings: TransferSettings) -> SourcePrior:
    """eq. 14's lambdas and the default method's prior: no transfer against each source (module docstring)."""
    sizes = np.array([target_items, *source_items], dtype=float)
    all_sims = np.concatenate(([self_similarity(sims, settings.eq14.similarity)], sims))
    lam = transfer_weights(sizes, all_sims, settings)
    eq14 = lam / lam.sum() if lam.sum() > 0 else np.full(len(lam), 1 / len(lam))
    g = text_match(sims, settings)
    if settings.applies.no_transfer_prior is None:
        p0 = float(eq14[0])
    elif settings.applies.source_prior == "fixed":
        p0 = settings.applies.no_transfer_prior
    elif settings.applies.source_prior == "noisy-or":
        p0 = max(settings.applies.no_transfer_prior, float(np.prod(1 - g)))
    else:
        p0 = max(settings.applies.no_transfer_prior, 1 - float(g.max()))
    share = np.asarray(eq14[1:], dtype=float) ** settings.applies.similarity_power
    share = share / share.sum() if share.sum() > 0 else np.full(len(share), 1 / len(share))
    return SourcePrior(np.asarray(sims, dtype=float), g, lam, eq14, p0, (1 - p0) * share)
