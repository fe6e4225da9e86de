"""`transfer`: the default method's steps in order, or the paper's (eq. 14-15); `transfer_many` for many targets.

1. similarity.source_prior: eq. 14 and the prior that no source applies;
2. candidates.build_candidates: each source as it is, between two, pooled, and shifted;
3. evidence.posterior_weights: prior x the labels' evidence (no transfer's: evidence.no_transfer_dirichlet_log_evidence);
4. pooled.pooled_estimate and pooled.limit_move: the posterior-weighted estimate, within max_move of the labels';
5. pooled.pooled_interval: the pooled posterior draws;
6. result.source_table: what each source contributed, and whether any applies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..blas import one_thread
from ..counts import CountTable
from ..distributions import Mixture
from ..errors import ParameterError
from ..fit import FitResult, analyse
from ..mixtures import MixtureFit, fit_paper_em
from ..posterior import cell_posterior
from ..settings import FitSettings
from .candidates import Cells, build_candidates, source_centre, target_cells
from .evidence import (
    as_is_strengths,
    dirichlet_multinomial_log_ml_many,
    no_transfer_dirichlet_log_evidence,
    no_transfer_log_evidence,
    posterior_weights,
    prior_conflict,
)
from .paper import paper_transfer
from .pooled import candidate_means, error_rows, limit_move, pooled_estimate, pooled_interval
from .result import SourceWeight, TransferResult, no_source_verdict, source_table, summary_mixture
from .settings import TransferSettings
from .similarity import similarities, source_prior
from .sources import Source, profile, same_judge_count


def transfer(
    target: CountTable,
    target_embedding: np.ndarray,
    sources: Sequence[Source],
    settings: TransferSettings = TransferSettings(),
    fit_settings: FitSettings = FitSettings(),
    rng: np.random.Generator | None = None,
    without: FitResult | None = None,
    source_fits: Mapping[str, Mixture] | None = None,
) -> TransferResult:
    """Transfer from `sources` to a target with a few labels (its histogram and mean text embedding).

    `without`: the target's no-transfer fit when already computed; `source_fits`: the paper method's EM fit
    of each source by name (computed here when missing; pass them to reuse across many targets).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    if not sources:
        raise ParameterError("sources", "must hold at least one source fit")
    if target.items < 1:
        raise ParameterError("target", "has no labeled items")
    srcs = list(sources)
    ks = tuple(fit_settings.ks)
    base = replace(fit_settings, method="default")
    without = without if without is not None else analyse(target, base, rng)
    sims = similarities(target_embedding, [s.embedding for s in srcs], settings.eq14.similarity)
    prior = source_prior(target.items, [s.items for s in srcs], sims, settings)
    cells = target_cells(target, ks)
    kappas = np.asarray(settings.offers.strengths, dtype=float)
    flat = fit_settings.flat
    singles = [source_centre(target, cells, s, settings.offers.histogram_smoothing) for s in srcs]
    single_lml, log_ml0, conflict, reason = _evidence(target, cells, singles, prior.text_shares, settings, flat)
    profiles = [profile(s.table, s.mixture) for s in srcs]
    target_profile = profile(target, without.beta_binomial.mixture)

    if settings.method == "paper":
        result = paper_transfer(target, srcs, prior.lam, fit_settings, rng, without, source_fits)
        rows = tuple(
            SourceWeight(s.name, s.items, float(sims[i]), float(prior.lam[i + 1]), float(prior.eq14[i + 1]), None,
                         float(prior.eq14[i + 1]), None, profiles[i])
            for i, s in enumerate(srcs)
        )
        return TransferResult(settings, result, without, rows, float(prior.eq14[0]), float(prior.eq14[0]), conflict, reason,
                              target_profile=target_profile)

    match = np.array([same_judge_count(target, s) if settings.applies.match_judge_count else 1.0 for s in srcs])
    cands, p0 = build_candidates(cells, srcs, singles, prior, match, settings)
    post = posterior_weights(cells, cands, kappas, flat, p0, log_ml0, settings.offers.as_is_min_strength)
    centre = pooled_estimate(without, candidate_means(cells, cands, post), post)
    centre, held = limit_move(centre, without, settings.applies.max_move, fit_settings.confidence_level)
    own = cell_posterior(target, without.fit.mixture, ks, fit_settings.strength, flat)
    low, high = pooled_interval(rng, cells, cands, post, own, target.items + flat, fit_settings.n_draws,
                                fit_settings.confidence_level)
    rows, as_is_w, shifts = source_table(srcs, prior, cands, post, single_lml, match, profiles)
    mixture = summary_mixture(without.fit.mixture, srcs, post.no_transfer, as_is_w, shifts, cands, post)
    fit = MixtureFit.on(target, mixture, "transfer")
    result = FitResult(base, fit, without.binomial, without.beta_binomial, error_rows(ks, centre, low, high, mixture, without))
    none, none_reason = no_source_verdict(post.no_transfer, p0)
    return TransferResult(settings, result, without, rows, post.no_transfer, p0, conflict, reason, none, none_reason,
                          tuple(k for k, h in zip(ks, held) if h), target_profile)


def _evidence(
    target: CountTable, cells: Cells, singles: list[tuple[np.ndarray, np.ndarray]], text_shares: np.ndarray,
    settings: TransferSettings, flat: float,
) -> tuple[np.ndarray, float, bool, str]:
    """Step 3's evidence: each source as it is at the strengths it takes (log marginal likelihood of the labels),
    no transfer's, and whether the labels conflict with the text's prior (with its reason)."""
    kappas = np.asarray(settings.offers.strengths, dtype=float)
    single_alpha = kappas[None, :, None] * np.array([q for q, _ in singles])[:, None, :] + flat * cells.flat
    single_lml = dirichlet_multinomial_log_ml_many(cells.counts, single_alpha)
    log_ml0 = no_transfer_log_evidence(target, settings.evidence.grid_means, settings.evidence.grid_concentrations)
    single_lml = single_lml[:, as_is_strengths(kappas, settings.offers.as_is_min_strength)]  # the kappas a source as it is takes
    conflict, reason = prior_conflict(single_lml, text_shares, log_ml0, settings.evidence.conflict_bayes_factor)
    if settings.evidence.no_transfer_evidence == "dirichlet":
        log_ml0 = no_transfer_dirichlet_log_evidence(cells, settings.evidence.grid_means, settings.evidence.grid_concentrations, kappas, flat)
    return single_lml, log_ml0, conflict, reason


def transfer_many(
    targets: Sequence[tuple[CountTable, np.ndarray]],
    sources: Sequence[Source],
    settings: TransferSettings = TransferSettings(),
    fit_settings: FitSettings = FitSettings(),
    seed: int = 0,
) -> list[TransferResult]:
    """`transfer` for each (table, mean embedding); source fits are shared; target i draws with seed [seed, i]."""
    with one_thread():
        fits = {s.name: fit_paper_em(s.table).mixture for s in sources} if settings.method == "paper" else None
        out = []
        for i, (t, e) in enumerate(targets):
            # the no-transfer fit with `fit --seed seed`'s generator: identical to what `fit` prints
            without = analyse(t, replace(fit_settings, method="default"), np.random.default_rng(seed))
            out.append(transfer(t, e, sources, settings, fit_settings, np.random.default_rng([seed, i]), without, fits))
        return out
