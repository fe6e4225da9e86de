"""The paper's method (eq. 14-15): the lambda-weighted average of (w, alpha_j, beta_j) over the target's own fit
and every source's fit, each by the paper's two-component EM (components matched by mean), plug-in. The
interval is the default Dirichlet interval around the averaged mixture with the spread of the target's items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..counts import CountTable
from ..distributions import Mixture
from ..errors import ParameterError
from ..fit import FitResult
from ..mixtures import MixtureFit, fit_paper_em
from ..posterior import cell_posterior, mixture_cells
from ..settings import FitSettings
from .pooled import error_rows
from .sources import Source


def average_mixtures(mixtures: Sequence[Mixture], lambdas: np.ndarray) -> Mixture:
    """w, alpha_j, beta_j averaged with weights lambda (eq. 15); components matched by their order (by mean)."""
    lam = np.asarray(lambdas, dtype=float)
    if lam.sum() <= 0:
        raise ParameterError("sources", "every transfer weight (eq. 14's lambda) is zero: nothing to average")
    c = mixtures[0].n_components
    if any(m.n_components != c for m in mixtures):
        raise ParameterError("method", "the paper's averaging needs mixtures with the same number of components")
    lam = lam / lam.sum()
    w = sum(li * np.asarray(m.weights) for li, m in zip(lam, mixtures))
    a = sum(li * np.asarray(m.alphas) for li, m in zip(lam, mixtures))
    b = sum(li * np.asarray(m.betas) for li, m in zip(lam, mixtures))
    w = np.asarray(w) / np.sum(w)
    return Mixture(tuple(map(float, w)), tuple(map(float, a)), tuple(map(float, b)))


def paper_transfer(
    target: CountTable, sources: Sequence[Source], lam: np.ndarray, fit_settings: FitSettings, rng: np.random.Generator,
    without: FitResult, source_fits: Mapping[str, Mixture] | None = None,
) -> FitResult:
    """Eq. 15 with eq. 14's lambdas (index 0 the target); `source_fits`: each source's EM fit by name, when known."""
    fits = dict(source_fits or {})
    mixtures = [fit_paper_em(target).mixture]
    for s in sources:
        if s.name not in fits:
            fits[s.name] = fit_paper_em(s.table).mixture
        mixtures.append(fits[s.name])
    avg = average_mixtures(mixtures, lam)
    ks = tuple(fit_settings.ks)
    post = cell_posterior(target, avg, ks, fit_settings.strength, fit_settings.flat)
    cells = mixture_cells(target, avg)  # the averaged mixture's own cells: the estimate, and its interval around it
    centre = cells @ post.errors
    low, high = post.interval_scaled(rng, fit_settings.confidence_level, target.items + fit_settings.flat,
                                     fit_settings.n_draws, cells)
    fit = MixtureFit.on(target, avg, "paper-transfer")
    base = replace(fit_settings, method="default")
    return FitResult(base, fit, without.binomial, without.beta_binomial, error_rows(ks, centre, low, high, avg, without))
