"""`judges` on every item: the judges' verdicts on unlabeled items, through a Dawid-Skene model with gold (issue 17).

The data: each judge's verdict (a class code, -1 none) on every item, and gold on some items (-1: unlabeled), as
distinct patterns with counts (`inputs.dataset.Votes`). The model (Dawid and Skene 1979, with gold where known):
an item's true class c has prior pi_c; given c, judge j says c with probability a_jc and each other class with
(1 - a_jc) / (C - 1) (class-conditional accuracy; for two classes this is the full confusion matrix), judges
independent given c: the one Dawid-Skene model (betaconform_cli.dawid_skene.DawidSkene). Fitted by EM (MAP:
Dirichlet(2) on pi, Beta(1.5, 1.5) on each a_jc), the gold clamped on the labeled items, from two starts (fit_classes). Its posterior w[p, c] = P(gold = c | verdicts of pattern p) is one-hot on labeled patterns.

A subset S's error on the items read (finite population, the target when there are unlabeled items): over the
items on which every member of S gave a verdict, labeled items contribute their exact majority error (fewer than
half of S give the gold class: 1, exactly half: 1/2), unlabeled items their posterior expected error
sum_c w[p, c] err_S(p, c). Interval (normal): the unlabeled items' own Bernoulli spread given w, plus the model's
misfit as the labeled items show it: on them, the exact error minus the error the model predicts from their
verdicts alone (gold hidden), whose mean square over r labeled items (with MISFIT_PRIOR's pseudo-items), scaled
by the unlabeled share, is added (the rectifier's variance of prediction-powered inference, plus its squared mean). The estimate is not rectified (that bias term is noisy at
r = 10); the interval is widened by `widening` (benchmarks/judges.py --unlabeled).

Guard (as votes.py's): the unlabeled verdicts are used only where the labels vouch for the model: the labeled
golds' log-probability under the model's prediction from verdicts (gold hidden) must beat the class prior's by at
least `min_evidence` nats. When the verdicts carry no information about gold, it does not, and `judges` keeps
its labels-only per-judge figures and pick (the ensembles' errors stay the all-items estimates: judges/every.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dawid_skene import Coded, DawidSkene, coded, log_likelihood, normalise, one_hot, vote_shares
from ..distributions import majority_error_weights
from ..intervals import enclose, z_value

if TYPE_CHECKING:
    from ..inputs.dataset import Votes

MIN_EVIDENCE = 2.0  # nats: the labels' log-likelihood gain of the model's prediction over the class prior
MISFIT_PRIOR = (2.0, 0.05)  # (pseudo-items, their residual variance) in the misfit's variance
WIDENING = 1.0  # the normal interval's half-width multiplied by this (benchmarks/judges.py --unlabeled)
ALPHA, BETA = 1.5, 1.5  # Beta prior of each a_jc (symmetric: the labels, not the prior, say who beats chance)
TEMPERS = np.round(np.linspace(0.0, 1.5, 31), 2)  # the grid of tau (0: the verdicts ignored)
CHUNK_CELLS = 4_000_000  # subsets x patterns x classes per block (bounded memory)
MODEL = DawidSkene(ALPHA - 1, BETA - 1, map_objective=True)  # Beta(ALPHA, BETA) on each a_jc, Dirichlet(2) on pi


@dataclass(frozen=True)
class Verdicts:
    """Verdict patterns (class codes, -1 none) in the analysis's judge order, gold (-1 unlabeled) and counts."""

    patterns: np.ndarray = field(repr=False)  # (m, J) int
    gold: np.ndarray = field(repr=False)  # (m,) int
    counts: np.ndarray = field(repr=False)  # (m,) int
    classes: int

    @property
    def labeled(self) -> np.ndarray:
        out: np.ndarray = self.gold >= 0
        return out

    @property
    def labeled_items(self) -> int:
        return int(self.counts[self.labeled].sum())

    @property
    def unlabeled_items(self) -> int:
        return int(self.counts[~self.labeled].sum())


def from_votes(votes: Votes, names: Sequence[str]) -> Verdicts:
    """The dataset's votes with columns in the order of `names` (judges named in votes), patterns without any
    verdict dropped, equal patterns merged and sorted (the same items in any order give the same arrays, so the
    same sums to the last bit)."""
    return indexed_votes(votes, names)[0]


def indexed_votes(votes: Votes, names: Sequence[str]) -> tuple[Verdicts, np.ndarray]:
    """`from_votes`, and for each of the votes' patterns its row in the Verdicts (-1: dropped, no verdict)."""
    col = [votes.judges.index(n) for n in names]
    patterns = np.asarray(votes.patterns, dtype=np.int64)[:, col]
    keep = (patterns >= 0).any(axis=1) & (np.asarray(votes.counts) > 0)
    rows = np.column_stack([patterns[keep], np.asarray(votes.gold, dtype=np.int64)[keep]])
    keys, inverse = np.unique(rows, axis=0, return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=np.asarray(votes.counts)[keep], minlength=len(keys)).astype(np.int64)
    index = np.full(len(keep), -1, dtype=np.int64)
    index[np.flatnonzero(keep)] = inverse.reshape(-1)
    return Verdicts(keys[:, :-1], keys[:, -1], counts, max(len(votes.classes), 2)), index


@dataclass(frozen=True)
class ClassModel:
    """The fitted Dawid-Skene model and what it says about each pattern's gold."""

    prior: np.ndarray = field(repr=False)  # (C,) pi
    accuracy: np.ndarray = field(repr=False)  # (J, C) a_jc = P(judge j says c | gold c)
    posterior: np.ndarray = field(repr=False)  # (m, C) P(gold | verdicts, gold where known)
    predictive: np.ndarray = field(repr=False)  # (m, C) P(gold | verdicts): gold hidden
    evidence: float  # labeled golds' log P under `predictive` minus under `prior` (nats)
    iterations: int
    converged: bool
    temper: float = 1.0  # the mean power on the likelihood, weighted by the labels (_tempered)

    def to_dict(self) -> dict[str, Any]:
        return {"model": "dawid_skene_class_accuracy", "iterations": self.iterations, "converged": self.converged,
                "evidence_nats": self.evidence, "temper": self.temper, "class_prior": self.prior.tolist()}


def _coded(v: Verdicts) -> Coded:
    return coded(v.patterns, v.classes, v.counts.astype(float), v.gold)


def fit_classes(v: Verdicts, max_iter: int = 500, tol: float = 1e-10) -> ClassModel:
    """The one Dawid-Skene model (dawid_skene.DawidSkene: class-conditional, MAP, gold clamped on labeled patterns),
    stopping when no accuracy moves by more than `tol`, without a warning at the cap (ClassModel reports `converged`
    in the JSON instead). Two starts: the vote shares (judges better than chance) and the labeled items' own
    accuracies (judges who err together, e.g. adversarial items where the majority is mostly wrong); the one with
    the higher posterior density is kept."""
    x = _coded(v)
    starts = [vote_shares(x, 0.1)]
    if x.labeled.any():  # one E-step from the M-step (add-one smoothing) on the labeled items alone
        lab = x.labeled
        on_labels = coded(v.patterns[lab], v.classes, x.weight[lab], v.gold[lab])
        prior, acc = DawidSkene().m_step(on_labels, on_labels.clamp)
        starts.append(normalise(log_likelihood(x, acc) + np.log(prior)[None, :]))
    fit = MODEL.fit(x, starts, max_iter=max_iter, tol=tol, watch_accuracy=True)
    prior, accuracy = fit.params
    predictive, temper, evidence = _tempered(v, log_likelihood(x, accuracy), prior)
    posterior = np.where(x.labeled[:, None], x.clamp, predictive)
    return ClassModel(prior, accuracy, posterior, predictive, evidence, fit.n_iter, fit.converged, temper)


def _tempered(v: Verdicts, loglik: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(predictive, tau, gain): P(gold = c | verdicts) averaged over the power tau on the likelihood,
    pi_c P(verdicts | c)^tau / Z for tau in TEMPERS, each weighted by how well it predicts the labeled golds (flat
    prior on the grid: judges who err together are fewer independent witnesses than their number, tau < 1, and a
    few labels that the model gets right do not make it certain); tau: the weights' mean; gain: the labels' log
    marginal likelihood over the class prior alone (nats; 0 when the verdicts are ignored, tau = 0)."""
    lab = v.labeled
    preds = np.stack([normalise(tau * loglik + np.log(prior)[None, :]) for tau in TEMPERS])  # (T, m, C)
    if not lab.any():
        return preds[np.flatnonzero(TEMPERS == 1.0)[0]], 1.0, 0.0
    rows, g, n = np.flatnonzero(lab), v.gold[lab], v.counts[lab].astype(float)
    ll = (n[None, :] * np.log(np.maximum(preds[:, rows, g], 1e-300))).sum(axis=1) - float((n * np.log(prior[g])).sum())
    weights = np.exp(ll - ll.max())
    weights /= weights.sum()
    gain = float(ll.max() + np.log(np.mean(np.exp(ll - ll.max()))))
    predictive: np.ndarray = np.einsum("t,tmc->mc", weights, preds)
    return predictive, float(weights @ TEMPERS), gain


def guard(model: ClassModel, v: Verdicts, min_evidence: float = MIN_EVIDENCE) -> tuple[bool, str]:
    """Whether the labels vouch for the model (see the module's docstring), and why (a line for the JSON)."""
    if v.unlabeled_items == 0:
        return False, "labels only: no unlabeled item"
    if v.labeled_items == 0:
        return False, "labels only: no labeled item to check the verdicts against"
    if model.evidence < min_evidence:
        return False, (f"labels only: the judges' verdicts predict the labeled items' gold no better than the class "
                       f"shares do (log-likelihood gain {model.evidence:.2f} nats < {min_evidence:g})")
    return True, (f"every item: labeled items exact, unlabeled items by the Dawid-Skene posterior of their gold "
                  f"(the labels' log-likelihood gain {model.evidence:.1f} nats); an ensemble's error averaged with "
                  f"its vote splits' (judges/splits.py)")


@dataclass(frozen=True)
class PatternErrors:
    """Each candidate subset's majority error on each pattern: under the posterior (gold where known) and under the
    prediction (gold hidden), its variance, and whether every member gave a verdict."""

    posterior: np.ndarray  # (n, m)
    predicted: np.ndarray  # (n, m)
    variance: np.ndarray  # (n, m) of the error given the posterior (0 on labeled patterns)
    complete: np.ndarray  # (n, m) bool


def pattern_errors(v: Verdicts, model: ClassModel, members: np.ndarray) -> PatternErrors:
    """Majority errors (ties half) of every subset members[n, k] on every pattern, in blocks of subsets."""
    members = np.asarray(members, dtype=np.int64)
    n_sub, k = members.shape
    onehot = one_hot(v.patterns, v.classes)
    said = v.patterns >= 0
    m = len(v.gold)
    out = [np.zeros((n_sub, m)) for _ in range(3)]
    complete = np.zeros((n_sub, m), dtype=bool)
    step = max(1, CHUNK_CELLS // max(m * v.classes, 1))
    for lo in range(0, n_sub, step):
        chunk = members[lo : lo + step]
        counts = onehot[:, chunk, :].sum(axis=2).transpose(1, 0, 2).astype(np.intp)  # (s, m, C): members giving class c
        err = majority_error_weights(k)[counts]
        e_post = np.einsum("smc,mc->sm", err, model.posterior)
        out[0][lo : lo + step] = e_post
        out[1][lo : lo + step] = np.einsum("smc,mc->sm", err, model.predictive)
        out[2][lo : lo + step] = np.einsum("smc,mc->sm", err * err, model.posterior) - e_post**2
        complete[lo : lo + step] = said[:, chunk].all(axis=2).T
    return PatternErrors(out[0], out[1], np.maximum(out[2], 0.0), complete)


@dataclass(frozen=True)
class SubsetEstimates:
    """Each candidate's error on the items read: estimate, interval, the labeled part's known range."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    floor: np.ndarray  # the labeled items' known share of the error
    ceiling: np.ndarray  # floor + the unlabeled share (all of them wrong)
    items: np.ndarray  # labeled + unlabeled items with every member's verdict


def subset_estimates(v: Verdicts, model: ClassModel, members: np.ndarray, confidence_level: float,
                     widening: float = WIDENING) -> SubsetEstimates:
    """The finite-population estimate and interval of each subset (module docstring)."""
    pe = pattern_errors(v, model, members)
    lab = v.labeled
    w = v.counts[None, :] * pe.complete  # (n, m) items per pattern that count for the subset
    total = w.sum(axis=1).astype(float)
    n_lab = (w * lab).sum(axis=1).astype(float)
    safe = np.maximum(total, 1.0)
    estimate = (w * pe.posterior).sum(axis=1) / safe
    floor = (w * pe.posterior * lab).sum(axis=1) / safe
    share = (total - n_lab) / safe  # unlabeled share
    bern = (w * pe.variance).sum(axis=1) / safe**2
    resid = (pe.posterior - pe.predicted) * lab
    mean = (w * resid).sum(axis=1) / np.maximum(n_lab, 1.0)
    # the residuals' variance with MISFIT_PRIOR[0] pseudo-items of variance MISFIT_PRIOR[1]: a few labels that the
    # model happens to get all right do not make its misfit zero
    nu, s2 = MISFIT_PRIOR
    var = ((w * lab * (resid - mean[:, None]) ** 2).sum(axis=1) + nu * s2) / np.maximum(n_lab - 1.0 + nu, 1.0)
    misfit = np.where(n_lab > 0, share**2 * (mean**2 + var / np.maximum(n_lab, 1.0)), share**2 * 0.25)
    z = z_value(confidence_level)
    half = widening * z * np.sqrt(bern + misfit)
    low = np.clip(estimate - half, floor, floor + share)
    high = np.clip(estimate + half, floor, floor + share)
    return SubsetEstimates(estimate, *enclose(estimate, low, high), floor, floor + share, total.astype(np.int64))


def judge_accuracy(v: Verdicts, model: ClassModel) -> tuple[np.ndarray, np.ndarray]:
    """(accuracy, items) of each judge on every item it judged: labeled exact, unlabeled P(gold = its verdict)."""
    said = v.patterns >= 0
    right = np.take_along_axis(model.posterior, np.maximum(v.patterns, 0), axis=1) * said  # (m, J)
    items = (v.counts[:, None] * said).sum(axis=0)
    acc = (v.counts[:, None] * right).sum(axis=0) / np.maximum(items, 1)
    return acc, items


def pair_errors(v: Verdicts, model: ClassModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(both wrong, a wrong, items) of every judge pair [a, b] over the items both judged (expected on unlabeled
    items: sum_c w_c [a wrong][b wrong]); a wrong is judge a's error rate on those items."""
    onehot = one_hot(v.patterns, v.classes)
    said = (v.patterns >= 0).astype(float)
    wrong = said[:, :, None] - onehot  # (m, J, C): judge j wrong if gold were c
    nw = v.counts[:, None] * model.posterior  # (m, C)
    both = np.einsum("mac,mbc,mc->ab", wrong, wrong, nw)
    a_wrong = np.einsum("mac,mb,mc->ab", wrong, said, nw)
    items = (v.counts[:, None] * said).T @ said
    return both, a_wrong, items
