"""The prediction of `score`: a latent-class model of all judges' pass / not-pass verdicts, whose classes' pass
rates come from the gold labels, each labeled item's from the OTHER labels (leave one out: cross-fitting).

Dawid-Skene (betaconform_cli.dawid_skene) is the two-class latent-class model whose classes ARE pass and not pass;
when the judges' mistakes coincide (hard items on which the weak judges are all fooled, the strong ones less so)
its two classes absorb that structure and its posterior is overconfident. With C = 3 classes fitted to the
verdicts alone (each class a pass rate per judge, verdicts independent given the class) the classes are groups of
items the judges treat alike, e.g. clear passes, clear fails, and the items on which they split; the labels say
how often each group passes:
    pi_c = (sum_L w_i r_ic y_i + a * m_c) / (sum_L w_i r_ic + a),      f_i = sum_c r_ic pi_c,             eq. (5)
r_ic the item's class responsibilities, m_c the class's mean Dawid-Skene posterior (where the pass rate goes
when the class holds few labels), a = PRIOR_ITEMS pseudo-items. A labeled item's own label is left out of the pi
that predicts it (with clusters, its whole cluster's), so f on the labeled items is a fixed function of data
independent of their labels, as prediction-powered inference needs. The choice (C = 3, a = 2) was made in
benchmarks/score.py --alternatives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import em

CLASSES = 3
PRIOR_ITEMS = 2.0  # pseudo-items of a class's mean Dawid-Skene posterior in its pass rate (eq. 5)
MAX_ITER = 5000
TOL = 1e-8


@dataclass(frozen=True)
class LatentClasses:
    """A fitted latent-class model of the verdicts: class weights, each class's per-judge pass-verdict rates, and each
    row's class responsibilities."""

    weights: np.ndarray = field(repr=False)
    rates: np.ndarray = field(repr=False)  # classes x judges: P(judge says pass | class)
    responsibilities: np.ndarray = field(repr=False)  # rows x classes
    converged: bool = True
    n_iter: int = 0
    log_likelihood: float = float("nan")


def _start(pos: np.ndarray, neg: np.ndarray, classes: int) -> np.ndarray:
    """Soft start from each item's smoothed share of pass verdicts s: Binomial(C - 1, s) over the classes (fails,
    split, passes for C = 3); a function of the item's own verdicts, so the fit does not depend on row order."""
    share = (pos.sum(axis=1) + 0.5) / (pos.sum(axis=1) + neg.sum(axis=1) + 1.0)
    c = np.arange(classes)
    binomial = np.array([math.comb(classes - 1, k) for k in c], dtype=float)
    start: np.ndarray = binomial[None, :] * share[:, None] ** c * (1 - share[:, None]) ** (classes - 1 - c)
    return start


def fit_latent_classes(
    verdicts: np.ndarray,
    weights: np.ndarray | None = None,
    classes: int = CLASSES,
    max_iter: int = MAX_ITER,
    tol: float = TOL,
) -> LatentClasses:
    """EM for a `classes`-class latent-class model of pass (1) / not-pass (0) / none (-1) verdicts, rows x judges
    (`weights`: items per row); MAP with a Beta(2, 2) on every rate and a pseudo-item per class weight. Classes are
    ordered by their mean pass-verdict rate, so the answer does not depend on row order."""
    w = np.ones(verdicts.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    pos = (verdicts == 1).astype(float)
    neg = (verdicts == 0).astype(float)

    def m_step(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # MAP: Beta(2, 2) on every rate
        wr = r * w[:, None]
        return (wr.sum(axis=0) + 1.0) / (w.sum() + classes), (wr.T @ pos + 1.0) / (wr.T @ (pos + neg) + 2.0)

    def e_step(params: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, float]:
        class_w, rates = params
        log_post, norm = em.log_normalise(np.log(class_w) + pos @ np.log(rates).T + neg @ np.log1p(-rates).T)
        return np.exp(log_post), float(w @ norm)

    fit = em.run([_start(pos, neg, classes)], m_step, e_step, max_iter=max_iter, tol=tol, name="latent-class")
    (class_w, rates), r = fit.params, fit.posterior
    order = np.argsort(rates.mean(axis=1), kind="stable")
    return LatentClasses(class_w[order], rates[order], r[:, order], fit.converged, fit.n_iter, fit.objective)


def cross_fitted_prediction(
    responsibilities: np.ndarray,
    prior: np.ndarray,
    y: np.ndarray,
    labeled: np.ndarray,
    w: np.ndarray,
    cluster: np.ndarray | None = None,
    prior_items: float = PRIOR_ITEMS,
) -> np.ndarray:
    """f per row, eq. (5): unlabeled rows from all labels, a labeled row from the labels of the other items (its
    own item left out; with `cluster`, one code per row, its whole cluster left out). `prior`: each row's value
    where the labels are few (the Dawid-Skene posterior); rows with w > 1 are that many identical items."""
    r = responsibilities
    mass = np.maximum((r * w[:, None]).sum(axis=0), 1e-300)
    m = (r * w[:, None]).T @ prior / mass  # each class's mean prior
    lab = labeled.astype(float)
    s_all = (r * (w * lab * y)[:, None]).sum(axis=0)
    t_all = (r * (w * lab)[:, None]).sum(axis=0)
    f = r @ ((s_all + prior_items * m) / (t_all + prior_items))
    if cluster is None:  # one item of the row out
        s_out, t_out = r * (lab * y)[:, None], r * lab[:, None]
    else:  # the row's whole cluster out
        k = int(cluster.max()) + 1 if cluster.size else 0
        s_g = np.stack([np.bincount(cluster, weights=r[:, c] * w * lab * y, minlength=k) for c in range(r.shape[1])], 1)
        t_g = np.stack([np.bincount(cluster, weights=r[:, c] * w * lab, minlength=k) for c in range(r.shape[1])], 1)
        s_out, t_out = s_g[cluster], t_g[cluster]
    pi_out = (s_all - s_out + prior_items * m) / (t_all - t_out + prior_items)
    out: np.ndarray = np.where(labeled, (r * pi_out).sum(axis=1), f)
    return out
