"""Subsets of judges: the labeled items' own majority error, every subset's posterior error draws, beam search.

Exact enumeration of all 2^J - 1 subsets when J <= `exact_max_judges` (2,047 for 11 judges); beyond, a beam
search per size: the `beam_width` best subsets of size k - 1 (by the choice score) each extended by every other
judge, the best `beam_width` kept (docs/JUDGES.md, "Search").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..distributions import majority_error_weights
from .maxent import maxent_subset_errors
from .model import ClassPosterior, all_subset_error_draws, all_subsets, subset_error_draws


def empirical_subset_errors(correct: np.ndarray, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(error, items) of each subset members[n, k] on the labeled items where all its members gave a verdict.

    error[n] is the mean majority error over those items (ties half), NaN where there are none.
    """
    members = np.asarray(members, dtype=np.int64)
    k = members.shape[1]
    seen = ~np.isnan(correct)
    right = np.where(seen, correct, 0.0)
    errors = np.zeros(len(members))
    items = np.zeros(len(members), dtype=np.int64)
    weights = majority_error_weights(k)
    for lo in range(0, len(members), 512):  # bounded memory: items x 512 x k
        chunk = members[lo : lo + 512]
        full = seen[:, chunk].all(axis=2)
        counts = right[:, chunk].sum(axis=2).astype(np.int64)
        e = weights[np.clip(counts, 0, k)] * full
        items[lo : lo + 512] = full.sum(axis=0)
        errors[lo : lo + 512] = e.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(items > 0, errors / np.maximum(items, 1), np.nan)
    return out, items


@dataclass(frozen=True)
class SubsetTable:
    """Candidate subsets of one size with their posterior error draws and the labels' own error."""

    size: int
    members: np.ndarray = field(repr=False)  # (n, size) judge indices, each row sorted
    draws: np.ndarray = field(repr=False)  # (T, n) posterior draws of the error on new items
    empirical: np.ndarray = field(repr=False)  # (n,) labels' own error, NaN without complete items
    items: np.ndarray = field(repr=False)  # (n,) labeled items on which all members gave a verdict
    exact: bool = True  # every subset of this size, or a beam's candidates
    ranking: np.ndarray | None = field(default=None, repr=False)  # the ranking model's error (None: the posterior mean)

    @property
    def model_mean(self) -> np.ndarray:
        out: np.ndarray = self.draws.mean(axis=0)
        return out

    @property
    def ranking_error(self) -> np.ndarray:
        """The model error that ranks candidates: the pairwise max-ent model's, else the posterior mean."""
        return self.model_mean if self.ranking is None else self.ranking


def exact_tables(correct: np.ndarray, posterior: ClassPosterior, max_size: int, pattern_probs: np.ndarray | None = None) -> dict[int, SubsetTable]:
    """Every subset of 1..max_size judges (ranked by the max-ent model when its pattern_probs are given)."""
    out: dict[int, SubsetTable] = {}
    for k, (members, draws) in all_subset_error_draws(posterior, max_size).items():
        emp, items = empirical_subset_errors(correct, members)
        ranking = None if pattern_probs is None else maxent_subset_errors(pattern_probs, members)
        out[k] = SubsetTable(k, members, draws, emp, items, exact=True, ranking=ranking)
    return out


def beam_tables(
    correct: np.ndarray,
    posterior: ClassPosterior,
    max_size: int,
    width: int,
    score: Callable[[SubsetTable], np.ndarray],
) -> dict[int, SubsetTable]:
    """Beam search: size-k candidates are the best `width` size-(k-1) subsets, each plus one more judge.

    Size 1 (and size 2, which has J(J-1)/2 subsets) are enumerated; `score` ranks candidates (lower is better).
    """
    n_judges = posterior.judges
    out: dict[int, SubsetTable] = {}
    beam: np.ndarray | None = None
    for k in range(1, max_size + 1):
        if k <= 2:
            members = all_subsets(n_judges, k)
        else:
            assert beam is not None
            grown = {tuple(sorted((*row, j))) for row in beam for j in range(n_judges) if j not in row}
            members = np.array(sorted(grown), dtype=np.int64).reshape(-1, k)
        draws = subset_error_draws(posterior, members)
        emp, items = empirical_subset_errors(correct, members)
        table = SubsetTable(k, members, draws, emp, items, exact=k <= 2 or len(members) == _n_choose(n_judges, k))
        out[k] = table
        order = np.lexsort((np.arange(len(members)), score(table)))
        beam = members[order[:width]]
    return out


def _n_choose(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)
