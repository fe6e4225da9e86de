"""Subsets of judges: the labeled items' own majority error, every subset's posterior error draws, beam search.

Exact enumeration of all 2^J - 1 subsets when J <= `exact_max_judges` (2,047 for 11 judges); beyond, a beam
search per size: the kept subsets of size k - 1 each extended by every other judge, ranked on a few posterior
draws, the best `beam_width` kept, narrowing to stay within a fixed work budget (docs/JUDGES.md, "Search").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..distributions import majority_error_weights
from .maxent import maxent_subset_errors
from .model import ClassPosterior, all_subset_error_draws


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


RANK_DRAWS = 50  # posterior draws (evenly spaced) that rank a beam's candidates; the kept ones get every draw
SEARCH_BUDGET = 1.5e9  # a beam search's work in (candidate x draw x class x count) cells, all sizes together


def beam_tables(
    correct: np.ndarray,
    posterior: ClassPosterior,
    max_size: int,
    width: int,
    score: Callable[[SubsetTable], np.ndarray],
    rank_draws: int = RANK_DRAWS,
    budget: float = SEARCH_BUDGET,
    progress: Callable[[int], None] | None = None,
) -> dict[int, SubsetTable]:
    """Beam search: size-k candidates are the kept size-(k-1) subsets, each plus one more judge.

    Every judge alone and (from it) every pair are candidates; `score` ranks candidates (lower is better) on
    `rank_draws` evenly spaced posterior draws, and the best `width` of each size are kept with every draw. The
    count pmfs of kept subsets are carried from size to size (one convolution per candidate, counts above
    max_size // 2 dropped: they never decide an error), and the labels' own errors likewise (one column per
    candidate), so a size costs (candidates x draws x classes x counts), not k times that. The beam narrows (to
    1, a greedy search) so that the whole search stays within `budget` cells: bounded time and memory for any
    number of judges.
    """
    t, c, n_judges = posterior.accuracy.shape
    bins = max_size // 2 + 1
    sel = np.unique(np.linspace(0, t - 1, min(t, rank_draws)).round().astype(np.int64))
    acc_full = posterior.accuracy.reshape(t * c, n_judges).T.astype(np.float32)  # (J, T*C)
    acc_rank = posterior.accuracy[sel].reshape(len(sel) * c, n_judges).T.astype(np.float32)
    seen = ~np.isnan(correct)
    right = np.where(seen, correct, 0.0).astype(np.int32)
    n_items = len(correct)
    # the kept subsets of the previous size: members, count pmfs (count, subset, draw x class), complete items, right counts
    members = np.zeros((1, 0), dtype=np.int64)
    pmf_full = np.ones((1, 1, t * c), dtype=np.float32)
    pmf_rank = np.ones((1, 1, len(sel) * c), dtype=np.float32)
    full = np.ones((n_items, 1), dtype=bool)
    count = np.zeros((n_items, 1), dtype=np.int32)
    out: dict[int, SubsetTable] = {}
    per_size = budget / max(max_size, 1)
    for k in range(1, max_size + 1):
        cand, parent, added = _extended(members, n_judges, k)
        width_k = len(cand) if k == 1 else width
        e = majority_error_weights(k)[: min(k + 1, bins)]
        items, emp = _label_errors(full, count, seen, right, parent, added, e)
        if len(cand) > width_k:
            rank_draws_k = _grown_errors(pmf_rank, parent, acc_rank[added], majority_error_weights(k), posterior.weights[sel])
            order = np.lexsort((np.arange(len(cand)), score(SubsetTable(k, cand, rank_draws_k, emp, items, exact=False))))
            keep = np.sort(order[:width_k])
        else:
            keep = np.arange(len(cand))
        pmf_full = _grow(pmf_full, parent[keep], acc_full[added[keep]], bins)
        pmf_rank = _grow(pmf_rank, parent[keep], acc_rank[added[keep]], bins)
        full, count = full[:, parent[keep]] & seen[:, added[keep]], count[:, parent[keep]] + right[:, added[keep]]
        members = cand[keep]
        exact = len(members) == _n_choose(n_judges, k)
        out[k] = SubsetTable(k, members, _errors(pmf_full, e, posterior.weights), emp[keep], items[keep], exact=exact)
        # the next size's beam: as wide as the budget allows (each kept subset yields up to J candidates)
        cells = n_judges * (len(sel) * c) * min(k + 2, bins)
        width = max(1, min(width, int(per_size // max(cells, 1))))
        if progress is not None:
            progress(k)
    return out


def _extended(members: np.ndarray, n_judges: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The size-k candidates, each kept size-(k-1) subset plus one more judge, once each in sorted order:
    (members, the parent subset's row, the judge added)."""
    seen_rows: dict[tuple[int, ...], int] = {}
    parent_list: list[int] = []
    added_list: list[int] = []
    for b, row in enumerate(members):
        for j in range(n_judges):
            if j in row:
                continue
            key = tuple(sorted((*row.tolist(), j)))
            if key not in seen_rows:
                seen_rows[key] = len(parent_list)
                parent_list.append(b)
                added_list.append(j)
    keys = sorted(seen_rows)
    pick = np.array([seen_rows[key] for key in keys], dtype=np.int64)
    parent, added = np.array(parent_list, dtype=np.int64)[pick], np.array(added_list, dtype=np.int64)[pick]
    return np.array(keys, dtype=np.int64).reshape(-1, k), parent, added


def _label_errors(
    full: np.ndarray, count: np.ndarray, seen: np.ndarray, right: np.ndarray, parent: np.ndarray, added: np.ndarray,
    e: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's labeled items (where every member has a mark) and their own majority error, from its
    parent's columns (complete, right counts) and its added judge's (seen, right): (items, error; NaN without).
    Candidates are taken a slice at a time: memory items x step, whatever their number."""
    n_items = len(full)
    items = np.zeros(len(parent), dtype=np.int64)
    errs = np.zeros(len(parent))
    step = max(1, (1 << 22) // max(n_items, 1))  # bounded memory: items x step
    for lo in range(0, len(parent), step):
        sl = slice(lo, lo + step)
        cf = full[:, parent[sl]] & seen[:, added[sl]]
        cc = count[:, parent[sl]] + right[:, added[sl]]
        items[sl] = cf.sum(axis=0)
        errs[sl] = (e[np.minimum(cc, len(e) - 1)] * (cc < len(e)) * cf).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        emp = np.where(items > 0, errs / np.maximum(items, 1), np.nan)
    return items, emp


def _grow(pmf: np.ndarray, parent: np.ndarray, p: np.ndarray, bins: int) -> np.ndarray:
    """pmf[count, subset, column] of each parent subset plus one Bernoulli(p[subset, column]), counts < bins."""
    old = pmf[:, parent, :]
    width = min(old.shape[0] + 1, bins)
    out = np.zeros((width,) + old.shape[1:], dtype=np.float32)
    out[: old.shape[0]] = old[:width] * (1 - p)[None]
    out[1:] += old[: width - 1] * p[None]
    return out


def _grown_errors(pmf: np.ndarray, parent: np.ndarray, p: np.ndarray, e: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(T, n) majority error per draw of each parent subset plus one Bernoulli(p[n, column]), without its pmf.

    With e the error weights of the grown size: sum_s e[s] (old[s] (1 - p) + old[s - 1] p) = A + p (B - A),
    A = sum_s e[s] old[s], B = sum_s e[s + 1] old[s]: per parent, then one multiply-add per candidate.
    """
    rows = pmf.shape[0]
    pad = np.zeros(rows + 1)
    pad[: min(len(e), rows + 1)] = e[: rows + 1]
    a = np.tensordot(pad[:rows].astype(np.float32), pmf, axes=(0, 0))  # (parents, T*C)
    b = np.tensordot(pad[1:].astype(np.float32), pmf, axes=(0, 0))
    lose = a[parent] + p * (b - a)[parent]  # (n, T*C)
    t, c = weights.shape
    out: np.ndarray = np.einsum("tc,ntc->tn", weights, lose.reshape(len(parent), t, c).astype(np.float64))
    return out


def _errors(pmf: np.ndarray, e: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(T, n) majority error per draw: the count pmf against the error weights e, classes mixed by weights (T, C)."""
    t, c = weights.shape
    lose = np.tensordot(e.astype(np.float32), pmf[: len(e)], axes=(0, 0))  # (n, T*C)
    out: np.ndarray = np.einsum("tc,ntc->tn", weights, lose.reshape(lose.shape[0], t, c).astype(np.float64))
    return out


def _n_choose(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)
