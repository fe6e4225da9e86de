"""Issue 26 item 2, round 4: the picked ensemble's error on every item by a CROSS-FITTED, POWER-TUNED
prediction-powered estimate (PPI++), and how far any such estimate can get (oracle predictions).

For a fixed subset S of k judges and the N items read (r labeled, N_u = N - r unlabeled; every judge gave a
verdict on every item in this protocol), Y_S(i) is S's exact majority error on item i (odd k) and F_S(i) a
prediction of it from the verdicts alone. The labeled items are split at random into K = 5 folds; for fold f the
label-free model is fitted with that fold's gold hidden (its items become unlabeled to it), so F on a labeled item
never saw that item's gold, and lambda_f (the power-tuning weight) is estimated on the labeled items OUTSIDE fold
f: lambda = Cov(Y, F) / Var(F) over their cross-fitted pairs, clipped to [0, 1] (the weight minimising the
rectifier's variance; lambda = 0 is the labels' own error, lambda = 1 plain PPI). Cross-PPI (Zrnic and Candes 2024)
with the finite-population target (the labeled part is known exactly):

    theta_S = ( sum_lab Y + (1/K) sum_f lambda_f sum_unl F_f + N_u * mean_j (Y_j - lambda_f(j) F_f(j)(j)) ) / N

unbiased for S's error on the N items when S is fixed, whatever the model; error variance
(N_u / N)^2 s^2 (1/r + 1/N_u), s^2 the rectified residuals' variance: the normal 90% interval. The prediction F
(two are measured): the Dawid-Skene posterior expected error (judges/unlabeled.py, tempered by the fold's labels:
calibrated on the other folds), and the shipped all-items model per item (the mean of Dawid-Skene and the vote
split, judges/splits.py, its q calibrated on the other folds' labels pooled over every candidate).

The pick is made on all labels, so S's own residuals on them carry the winner's curse. Three ways to rectify the
picked S (the prediction term is always S's own):
- own: S's own cross-fitted residuals (selection ignored: the comparison);
- pooled: the mean over every candidate of the size of their rectifiers (no selection: every candidate weighs the
  same; what every candidate shares is the error LEVEL of the draw, which round 3 found to be most of the miss);
- fold pick: for fold f, the naive pick on the OTHER folds' labels (ties by the shipped estimate), its residuals on
  fold f (selected on folds other than those reporting; it rectifies with another subset where the picks differ).

Oracles (references, not methods; they read every item's gold): F_S(i) = the mean of Y_S over the items with the
same verdict pattern up to a flip (what any label-free model could at best predict from the verdicts, with perfect
calibration), in-sample (the item itself included: optimistic; a unique pattern is predicted exactly) and leave-one-
out (the item left out; a unique pattern gets the dataset's mean). With lambda = 1. Diagnostic: the share of
Var(Y_S) over all items left unexplained by each prediction (1 - R^2 at the best lambda), the quantity that bounds
how much closer than the labels' own error any rectified estimate can get (its error's sd is sqrt of it times
the labels' own).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from judges_rectified import pick_order
from scipy import stats

from betaconform_cli.distributions import majority_error_weights
from betaconform_cli.judges.splits import _by_stratum, _strata
from betaconform_cli.judges.unlabeled import ClassModel, Verdicts, fit_classes, pattern_errors

FOLDS = 5
SPLIT_A = 20.0  # the vote split's pseudo-items, as shipped (splits.SPLIT_PSEUDO_ITEMS)


def item_errors(correct: np.ndarray, members: np.ndarray) -> np.ndarray:
    """(n, N): each candidate's exact majority error on each item from the correctness matrix (ties half)."""
    k = members.shape[1]
    counts = correct[:, members].sum(axis=2).T.astype(np.intp)
    out: np.ndarray = majority_error_weights(k)[counts]
    return out


def item_predictions(v: Verdicts, model: ClassModel, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Dawid-Skene, shipped mean of Dawid-Skene and vote split): (n, m) predicted majority errors, label-free on
    the items unlabeled in v (the vote split's q from v's labeled items, pooled over the candidates)."""
    k = members.shape[1]
    ds = pattern_errors(v, model, members).posterior
    st = _strata(v, model, members)
    lab = v.labeled[None, :] * np.ones((len(members), 1), dtype=bool)
    n_lab = _by_stratum(lab.astype(float), st.stratum, k)
    n_wrong = _by_stratum((lab & st.wrong).astype(float), st.stratum, k)
    pool = (n_wrong.sum(axis=0) + 0.5) / (n_lab.sum(axis=0) + 1.0)
    q = (n_wrong + SPLIT_A * pool) / (n_lab + SPLIT_A)
    q_item = np.take_along_axis(q, np.maximum(st.stratum, 0), axis=1)
    split = np.where(st.stratum >= 0, (1.0 - q_item) * st.err_top + q_item * st.err_alt, ds)
    return ds, 0.5 * (ds + split)


@dataclass(frozen=True)
class CrossFit:
    """Cross-fitted predictions: on the labeled items (n, r; each from the model that did not see its gold), their
    fold, and per fold the sum of each candidate's predictions over the unlabeled items (n, K)."""

    labeled: np.ndarray
    fold: np.ndarray
    unlabeled_sums: np.ndarray


def cross_fit(v: Verdicts, members: np.ndarray, rng: np.random.Generator) -> dict[str, CrossFit]:
    """K-fold cross-fitted predictions, one per prediction kind ("Dawid-Skene", "shipped model")."""
    lab = np.flatnonzero(v.labeled)
    r = len(lab)
    fold = rng.permutation(np.arange(r) % FOLDS)
    unl = ~v.labeled
    out = {name: (np.zeros((len(members), r)), np.zeros((len(members), FOLDS))) for name in ("Dawid-Skene", "shipped model")}
    for f in range(FOLDS):
        gold = v.gold.copy()
        gold[lab[fold == f]] = -1
        vf = Verdicts(v.patterns, gold, v.counts, v.classes)
        for name, pred in zip(out, item_predictions(vf, fit_classes(vf), members), strict=True):
            out[name][0][:, fold == f] = pred[:, lab[fold == f]]
            out[name][1][:, f] = pred[:, unl].sum(axis=1)
    return {name: CrossFit(a, fold, b) for name, (a, b) in out.items()}


@dataclass(frozen=True)
class Estimates:
    """Every candidate's cross-fitted estimate: the known labeled part, the prediction term, the rectified residuals
    (n, r) and the sizes; `at` builds the estimate of one candidate with a given rectifier."""

    labeled_sum: np.ndarray  # (n,)
    predicted_sum: np.ndarray  # (n,) (1/K) sum_f lambda_f sum_unl F_f
    residuals: np.ndarray  # (n, r) Y - lambda F
    lam: np.ndarray  # (n, K) lambda per fold
    n_unlabeled: int

    def at(self, i: int, resid: np.ndarray, level: float = 0.9) -> tuple[float, float, float]:
        """(estimate, low, high) of candidate i rectified by `resid` (its mean; its variance for the interval)."""
        r = len(resid)
        n_u, n = self.n_unlabeled, self.n_unlabeled + r
        est = (float(self.labeled_sum[i]) + float(self.predicted_sum[i]) + n_u * float(resid.mean())) / n
        s2 = float(resid.var(ddof=1)) if r > 1 else 0.25
        half = float(stats.norm.ppf(0.5 + level / 2)) * (n_u / n) * float(np.sqrt(s2 * (1.0 / r + 1.0 / max(n_u, 1))))
        floor = float(self.labeled_sum[i]) / n
        est = min(max(est, floor), floor + n_u / n)
        return est, max(est - half, floor), min(est + half, floor + n_u / n)


def ppi(y_lab: np.ndarray, cf: CrossFit, n_unlabeled: int, tuned: str = "own") -> Estimates:
    """Cross-PPI++ (module docstring) for every candidate: lambda_f on the labeled items outside fold f, each
    candidate's own (`tuned="own"`), one for every candidate from their pooled covariances (`"common"`: the pick's
    own is estimated on the items it was picked on), or 1 (`"none"`: plain PPI)."""
    f_lab, fold = cf.labeled, cf.fold
    lam = np.ones((len(y_lab), FOLDS))
    if tuned != "none":
        for f in range(FOLDS):
            out = fold != f
            yc = y_lab[:, out] - y_lab[:, out].mean(axis=1, keepdims=True)
            fc = f_lab[:, out] - f_lab[:, out].mean(axis=1, keepdims=True)
            var, cov = (fc**2).sum(axis=1), (yc * fc).sum(axis=1)
            if tuned == "common":
                var, cov = np.full_like(var, var.sum()), np.full_like(cov, cov.sum())
            lam[:, f] = np.clip(np.where(var > 1e-12, cov / np.maximum(var, 1e-300), 0.0), 0.0, 1.0)
    resid = y_lab - lam[:, fold] * f_lab
    return Estimates(y_lab.sum(axis=1), (lam * cf.unlabeled_sums).mean(axis=1), resid, lam, n_unlabeled)


def residuals_with(est: Estimates, i: int, y_lab: np.ndarray, cf: CrossFit) -> np.ndarray:
    """(n, r): every candidate's residuals Y - lambda F with candidate i's lambdas (what i's prediction term uses),
    for rectifying i with other candidates' residuals."""
    out: np.ndarray = y_lab - est.lam[i, cf.fold][None, :] * cf.labeled
    return out


def fold_pick_residuals(resid: np.ndarray, y_lab: np.ndarray, fold: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """(r,): for each labeled item, the residual (a row of `resid`) of the subset the naive rule picks on the OTHER
    folds' labels."""
    out = np.empty(y_lab.shape[1])
    for f in range(FOLDS):
        pick = pick_order(y_lab[:, fold != f].mean(axis=1), tiebreak)
        out[fold == f] = resid[pick, fold == f]
    return out


def oracle(y_all: np.ndarray, votes: np.ndarray, leave_one_out: bool) -> np.ndarray:
    """(n, N): each candidate's mean error over the items with the same verdict pattern up to a flip (every item's
    gold read: a reference, not a method); leave-one-out drops the item itself (a lone pattern: the dataset's mean
    without the item)."""
    canon = votes ^ votes[:, :1]
    _, group = np.unique(canon, axis=0, return_inverse=True)
    group = group.ravel()
    g = group.max() + 1
    sums = np.stack([np.bincount(group, weights=row, minlength=g) for row in y_all])  # (n, g)
    sizes = np.bincount(group, minlength=g).astype(float)
    if not leave_one_out:
        out: np.ndarray = sums[:, group] / sizes[group][None, :]
        return out
    n_items = y_all.shape[1]
    rest = sizes[group] - 1.0
    fallback = (y_all.sum(axis=1, keepdims=True) - y_all) / max(n_items - 1, 1)
    loo = (sums[:, group] - y_all) / np.maximum(rest, 1.0)[None, :]
    return np.where(rest[None, :] > 0, loo, fallback)


def unexplained(y_all: np.ndarray, pred: np.ndarray) -> float:
    """Mean over candidates of Var(Y - lambda* F) / Var(Y) over all items, lambda* the best (1 - R^2); candidates
    whose error is constant are left out."""
    yc = y_all - y_all.mean(axis=1, keepdims=True)
    fc = pred - pred.mean(axis=1, keepdims=True)
    vy, vf, cov = (yc**2).mean(axis=1), (fc**2).mean(axis=1), (yc * fc).mean(axis=1)
    keep = vy > 1e-12
    r2 = np.where(vf > 1e-12, cov**2 / np.maximum(vf * vy, 1e-300), 0.0)
    return float(np.mean(1.0 - r2[keep])) if keep.any() else float("nan")
