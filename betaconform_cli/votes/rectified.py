"""The rectified (prediction-powered) estimate of the error at k (docs/UNLABELED.md, "round 4"): a label-free
prediction of every item's error, corrected by the labeled items' residuals.

f_i(k) = sum_c q_ic e_k(n_i, count of class c), q_i the one-coin Dawid-Skene posterior of item i's gold given its
verdicts, fitted with the gold ignored (`agreement.label_free_posterior`), e_k the exact majority error of k judges
drawn from the item's n_i (`posterior.cell_errors`). With y_i(k) the labeled items' exact error, the estimate is the
difference estimator

    theta = mean over all N items of f + mean over the r labeled items of (y - f),

unbiased when the labeled items are a random sample, whatever the model (the model only sets the variance). Its
variance is (1 - r/N) s^2 / r, s^2 the larger of the labeled residuals' variance and the model's own mean predictive
variance of y - f over all items (at r = 10 the residuals are often all near 0 while the model knows better); the
interval is Student-t with r - 1 degrees of freedom, clipped to [0, 1]. No constant is tuned.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..intervals import t_value


def item_terms(counts: np.ndarray, gold: np.ndarray, logq: np.ndarray, err: Callable[[int], np.ndarray],
               n_ks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item (rows of `counts`, items x classes): the prediction f (items x ks), the model's predictive variance
    of y (items x ks), and y, the exact error where gold is known (NaN elsewhere)."""
    n_items = len(counts)
    f, v, y = np.zeros((n_items, n_ks)), np.zeros((n_items, n_ks)), np.full((n_items, n_ks), np.nan)
    q = np.exp(logq)
    q /= q.sum(axis=1, keepdims=True)
    n = counts.sum(axis=1)
    for size in np.unique(n):
        at = np.flatnonzero(n == size)
        e = err(int(size))  # (size + 1) x ks
        vals = e[counts[at]]  # items x classes x ks
        f[at] = np.einsum("ic,ick->ik", q[at], vals)
        v[at] = np.einsum("ic,ick->ik", q[at], (vals - f[at][:, None, :]) ** 2)
        lab = at[gold[at] >= 0]
        y[lab] = e[counts[lab, gold[lab]]]
    return f, v, y


def rectified(f: np.ndarray, v: np.ndarray, y: np.ndarray, weight: np.ndarray,
              confidence_level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) at each k from item_terms' arrays; `weight`: items per row. Needs at least 2 labeled
    items."""
    lab = ~np.isnan(y[:, 0])
    w_all, w_lab = weight.astype(float), weight[lab].astype(float)
    big_n, r = float(w_all.sum()), float(w_lab.sum())
    resid = y[lab] - f[lab]
    mean_resid = (w_lab @ resid) / r
    centre = (w_all @ f) / big_n + mean_resid
    s2_labels = (w_lab @ (resid - mean_resid) ** 2) / max(r - 1.0, 1.0)
    s2_model = (w_all @ v) / big_n
    var = max(1.0 - r / big_n, 0.0) * np.maximum(s2_labels, s2_model) / r
    half = t_value(confidence_level, max(r - 1.0, 1.0)) * np.sqrt(var)
    return centre, np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
