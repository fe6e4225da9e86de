"""Step 6: the result — the transferred fit, the no-transfer fit of the same labels, and the source table.

Per source: its eq. 14 terms (similarity, lambda), its judge profile (judges per item, accuracy, overdispersion)
and whether it has the target's number of judges, its prior, the labels' evidence for it (the Bayes factor of its
own candidates, as it is and shifted, against no transfer), its final weight (the posterior weight of every
centre it takes part in, times its part: 1 for its own centres and shifted copies, t or 1 - t for a point between
two sources, its share of the pool) and its `shift` (the posterior mean of delta over its shifted copies: how much
higher (+) or lower (-) a judge's log-odds of being right are in the target than in the source).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
from scipy.special import logsumexp

from ..counts import CountTable
from ..distributions import Mixture
from ..fit import FitResult
from ..fit_document import TransferRecord, TransferSource, fit_document
from .candidates import Candidates, shifted_mixture
from .evidence import Posterior
from .pooled import combined
from .settings import NO_SOURCE_LEVEL, TransferSettings
from .similarity import SourcePrior
from .sources import JudgeProfile, Source


@dataclass(frozen=True)
class SourceWeight:
    """One source's place in a transfer."""

    name: str
    items: int
    similarity: float
    transfer_weight: float  # lambda_i (eq. 14)
    prior_weight: float  # default: prior probability that this source applies; paper: lambda_i / sum_j lambda_j
    log_evidence: float | None  # default: log marginal likelihood of the target's labels under it as it is (best kappa)
    weight: float  # final weight: posterior weight (default) or normalised lambda (paper)
    shift: float | None = None  # default: the labels' estimate of delta (posterior mean over its shifted copies)
    profile: JudgeProfile | None = None
    same_judge_count: float = 1.0  # share of the target's items whose number of judges this source also has
    log_bayes_factor: float | None = None  # default: log P(labels | this source) - log P(labels | no transfer)

    def record(self) -> TransferSource:
        """Its row in the document's `sources` (fit_document.TransferSource)."""
        p = self.profile
        return TransferSource(
            name=self.name, items=self.items, similarity=self.similarity, lambda_=self.transfer_weight,
            prior_weight=self.prior_weight, log_evidence=self.log_evidence, log_bayes_factor=self.log_bayes_factor,
            weight=self.weight, shift=self.shift, judges=list(p.judges) if p else None, accuracy=p.accuracy if p else None,
            overdispersion=p.overdispersion if p else None, same_judge_count=self.same_judge_count,
        )


@dataclass(frozen=True)
class TransferResult:
    """The transferred estimate, the no-transfer estimate of the same labels, and how sources were weighted."""

    settings: TransferSettings
    result: FitResult
    without: FitResult
    sources: tuple[SourceWeight, ...]
    target_weight: float  # final weight of index 0 (no transfer / the target's own fit)
    target_prior_weight: float
    conflict: bool
    conflict_reason: str
    no_source_applies: bool = False
    no_source_reason: str = ""
    limited: tuple[int, ...] = ()  # the k at which max_move held the estimate back
    target_profile: JudgeProfile | None = None

    def record(self) -> TransferRecord:
        """The document's `transfer` record (fit_document.TransferRecord): how no transfer and the sources were weighted."""
        return TransferRecord(
            settings=self.settings.to_dict(), target_weight=self.target_weight, target_prior_weight=self.target_prior_weight,
            no_source_applies=self.no_source_applies, no_source_reason=self.no_source_reason, limited_at_k=list(self.limited),
            target_profile=self.target_profile.record() if self.target_profile else None, prior_conflict=self.conflict,
            prior_conflict_reason=self.conflict_reason,
        )

    def document(self, name: str, source: str, table: CountTable, seed: int, skipped: int = 0) -> Any:
        """The printed document of one target (fit_document.fit_document_type()): `fit`'s, with the transfer's method,
        and "sources", "without_transfer" and "transfer"."""
        from .settings import METHOD_DESCRIPTIONS

        fit = msgspec.structs.replace(self.result.record(), method=f"transfer-{self.settings.method}",
                                      method_description=METHOD_DESCRIPTIONS[self.settings.method])
        return fit_document("transfer", name, source, table, fit, seed, skipped,
                            transfer=([s.record() for s in self.sources], [r.document() for r in self.without.rows],
                                      self.record()))


def no_source_verdict(posterior_none: float, prior_none: float) -> tuple[bool, str]:
    """"No source applies" when the labels leave no transfer at least NO_SOURCE_LEVEL posterior probability."""
    if posterior_none < NO_SOURCE_LEVEL:
        return False, ""
    return True, (f"no source applies: no transfer keeps posterior probability {posterior_none:.2f} (prior "
                  f"{prior_none:.2f}); no source describes these labels better than their own fit")


def log_bayes_factors(cands: Candidates, post: Posterior, n_sources: int) -> list[float | None]:
    """Per source: log of its own candidates' prior-weighted evidence (as it is and shifted, averaged over the
    kappas with their prior, evidence.strength_prior) over the no-transfer evidence."""
    out: list[float | None] = []
    own = np.array([k in ("source", "shifted") for k in cands.kind], dtype=bool)
    for i in range(n_sources):
        mine = own & (cands.membership[:, i] == 1.0) if len(cands.prior) else np.zeros(0, dtype=bool)
        p = cands.prior[mine]
        if not mine.any() or p.sum() <= 0:
            out.append(None)
            continue
        lml = post.log_ml[mine]
        split = post.strength_prior[mine] if post.strength_prior is not None else np.full(lml.shape, 1 / lml.shape[1])
        out.append(float(logsumexp(lml, b=(p / p.sum())[:, None] * split) - post.log_ml0))
    return out


def source_table(
    sources: list[Source], prior: SourcePrior, cands: Candidates, post: Posterior, single_log_ml: np.ndarray,
    match: np.ndarray, profiles: list[JudgeProfile],
) -> tuple[tuple[SourceWeight, ...], np.ndarray, list[float | None]]:
    """The sources' rows, and each source's posterior weight as it is and its estimated shift (for the summary)."""
    n = len(sources)
    cand_w = post.by_centre()
    final = cand_w @ cands.membership if len(cand_w) else np.zeros(n)
    shifted = np.array([k == "shifted" for k in cands.kind], dtype=bool)
    as_is_w = cand_w[~shifted] @ cands.membership[~shifted] if len(cand_w) else np.zeros(n)
    shifts: list[float | None] = [None] * n
    for i in range(n):
        mine = shifted & (cands.membership[:, i] == 1.0)
        if mine.any():
            w = cand_w[mine]
            shifts[i] = float(w @ cands.shift[mine] / w.sum()) if w.sum() > 0 else 0.0
    bf = log_bayes_factors(cands, post, n)
    rows = tuple(
        SourceWeight(s.name, s.items, float(prior.similarity[i]), float(prior.lam[i + 1]), float(prior.family[i]),
                     float(single_log_ml[i].max()), float(final[i]), shifts[i], profiles[i], float(match[i]), bf[i])
        for i, s in enumerate(sources)
    )
    return rows, as_is_w, shifts


def summary_mixture(own: Mixture, sources: list[Source], weight0: float, as_is_w: np.ndarray, shifts: list[float | None],
                    cands: Candidates, post: Posterior) -> Mixture:
    """No transfer, each source as it is, and each at its estimated shift, merged to at most three Betas
    (pooled.combined)."""
    mixtures = [own] + [s.mixture for s in sources]
    weights = [weight0, *as_is_w]
    shifted = np.array([k == "shifted" for k in cands.kind], dtype=bool)
    if shifted.any():
        cand_w = post.by_centre()
        for i, s in enumerate(sources):
            mine = shifted & (cands.membership[:, i] == 1.0)
            if mine.any():
                mixtures.append(shifted_mixture(s.mixture, float(shifts[i] or 0.0)))
                weights.append(float(cand_w[mine].sum()))
    if sum(weights) <= 0 or not math.isfinite(sum(weights)):
        return own
    return combined(mixtures, weights)
