"""Descriptive statistics of named judges: Wilson intervals, shared mistakes of pairs, Cochran's Q.

- Accuracy: Wilson score interval (as scipy.stats.binomtest(...).proportion_ci(method="wilson")).
- Pairs: share of co-judged items on which both erred, against the product of their error rates on those items
  (what independence predicts); one-sided Fisher exact p-value (hypergeometric tail). No co-judged item: no number.
- Cochran's Q (Cochran 1950) of equal accuracy on the items every judge judged:
  Q = (J - 1) (J sum_j C_j^2 - N^2) / (J N - sum_i R_i^2) ~ chi2(J - 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from ..counts import CountTable
from ..intervals import wilson
from .results import Exchangeability, PairRow


def wilson_interval(successes: float, n: float, confidence_level: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (as scipy.stats.binomtest(...).proportion_ci)."""
    return wilson(successes / n, n, confidence_level)


def pair_table(correct: np.ndarray, names: Sequence[str]) -> tuple[PairRow, ...]:
    """Every pair a < b: both wrong vs independence on their co-judged items; Fisher one-sided p-value."""
    seen = ~np.isnan(correct)
    wrong = np.where(seen, 1.0 - correct, 0.0)
    both_seen = seen.T.astype(float) @ seen.astype(float)  # items judged by both
    both_wrong = wrong.T @ wrong
    wrong_a_on_ab = wrong.T @ seen.astype(float)  # [a, b]: a wrong on items b judged too (and a judged)
    a_idx, b_idx = np.triu_indices(len(names), 1)
    n = both_seen[a_idx, b_idx]
    wa, wb, ww = wrong_a_on_ab[a_idx, b_idx], wrong_a_on_ab[b_idx, a_idx], both_wrong[a_idx, b_idx]
    p = np.minimum(1.0, stats.hypergeom.sf(ww - 1, np.maximum(n, 1), wa, wb)) if len(n) else n  # one call for every pair
    rows = []
    for i, (a, b) in enumerate(zip(a_idx.tolist(), b_idx.tolist())):
        if n[i] == 0:
            rows.append(PairRow(names[a], names[b], 0, None, None, None))
            continue
        m = float(n[i])
        rows.append(PairRow(names[a], names[b], int(n[i]), float(ww[i] / m), float(wa[i] * wb[i] / (m * m)), float(p[i])))
    return tuple(rows)


def cochran_q(correct: np.ndarray) -> Exchangeability:
    """Cochran's Q on the items every judge judged."""
    complete = correct[~np.isnan(correct).any(axis=1)]
    n_judges = correct.shape[1]
    df = n_judges - 1
    if len(complete) < 2:
        return Exchangeability(None, df, None, len(complete), "fewer than 2 items were judged by every judge")
    col = complete.sum(axis=0)
    row = complete.sum(axis=1)
    total = float(col.sum())
    denom = n_judges * total - float((row**2).sum())
    if denom <= 0:
        return Exchangeability(None, df, None, len(complete), "every item was judged the same by all judges: no test")
    q = (n_judges - 1) * (n_judges * float((col**2).sum()) - total**2) / denom
    p = float(stats.chi2.sf(q, df))
    verdict = "judges' accuracies differ" if p < 0.05 else "no evidence that accuracies differ"
    note = f"{verdict} (p = {p:.3g}); equal accuracy alone does not make judges exchangeable: see the pairs"
    return Exchangeability(float(q), df, p, len(complete), note)


def count_table(correct: np.ndarray, columns: Sequence[int] | None = None) -> CountTable:
    """fit's sufficient statistic: (judges with a verdict, correct) per item, over the given columns."""
    sub = correct if columns is None else correct[:, list(columns)]
    seen = ~np.isnan(sub)
    keep = seen.any(axis=1)
    return CountTable.from_pairs(seen.sum(axis=1)[keep], np.nansum(sub, axis=1)[keep].astype(np.int64))
