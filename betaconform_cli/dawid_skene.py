"""The one Dawid-Skene model (Dawid and Skene 1979): every judge's verdicts on every item, judges independent given
the item's true class, fitted by EM (em.run) with the gold clamped where it is known. Its users: `score`
(score/judge_model.py: two classes, pass / not pass), `judges` on unlabeled items (judges/unlabeled.fit_classes) and
the vote split's one-coin offset (votes/agreement.fit_one_coin). Each keeps only its start, its stopping rule and
what it does with the fit (orienting the classes, tempering the likelihood); the likelihood, the E-step and the
M-steps are here, once.

The model: an item's true class c (0 .. C-1) has prior pi_c; given c, judge j says c with probability a_jc and each
other class with (1 - a_jc) / (C - 1); a missing verdict (code -1) drops out of its item's likelihood.
- `DawidSkene`: class-conditional accuracy a_jc (for two classes, the full confusion matrix: a_j1 the
  sensitivity, a_j0 the specificity).
- `OneCoin`: one accuracy a_j per judge, the same for every class; it overrides only the M-step (as crowd-kit's
  OneCoinDawidSkene does).
M-step (MAP): a Beta(1 + a, 1 + b) prior on each accuracy, i.e. (hits + a) / (verdicts + a + b), and a Dirichlet(2)
prior on pi, i.e. (items of class c + 1) / (items + C); both with each row's weight (items per pattern).
E-step: P(c | verdicts) per row, one-hot on labeled rows; the objective is the log likelihood (verdicts, and the
gold where known), plus the prior's log density where `map_objective`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import em

Params = tuple[np.ndarray, np.ndarray]  # (prior pi (C,), accuracy (J, C) or, one coin, (J,))


@dataclass(frozen=True)
class Coded:
    """Verdict rows as the model reads them: one-hot verdicts (m, J, C; a row of zeros where a judge gave none), the
    items per row (m,), the gold one-hot where known (m, C; zero rows elsewhere) and which rows are labeled."""

    onehot: np.ndarray = field(repr=False)
    weight: np.ndarray = field(repr=False)
    clamp: np.ndarray = field(repr=False)
    labeled: np.ndarray = field(repr=False)
    classes: int

    def counts(self, w: np.ndarray) -> np.ndarray:
        """(J, C', C) sum over rows of w[m, c] where judge j said c' (one matrix product): the M-step's counts, its
        hits on the diagonal c' = c, its verdicts the sum over c'."""
        m, judges, c = self.onehot.shape
        out: np.ndarray = (self.onehot.reshape(m, judges * c).T @ w).reshape(judges, c, c)
        return out


def one_hot(verdicts: np.ndarray, classes: int) -> np.ndarray:
    """(rows, judges, classes) 1.0 where judge j said class c on row r (a missing verdict, -1, is all zeros)."""
    out: np.ndarray = (np.asarray(verdicts)[:, :, None] == np.arange(classes)[None, None, :]).astype(float)
    return out


def coded(verdicts: np.ndarray, classes: int, weight: np.ndarray | None = None,
          gold: np.ndarray | None = None) -> Coded:
    """Rows x judges of class codes (-1: no verdict), `classes` classes, items per row (default 1 each), gold per
    row (-1 or None: unknown)."""
    verdicts = np.asarray(verdicts)
    m = verdicts.shape[0]
    onehot = one_hot(verdicts, classes)
    g = np.full(m, -1, dtype=np.int64) if gold is None else np.asarray(gold, dtype=np.int64)
    labeled = g >= 0
    clamp = np.zeros((m, classes))
    clamp[np.flatnonzero(labeled), g[labeled]] = 1.0
    w = np.ones(m) if weight is None else np.asarray(weight, dtype=float)
    return Coded(onehot, w, clamp, labeled, classes)


def log_likelihood(x: Coded, accuracy: np.ndarray) -> np.ndarray:
    """(m, C) log P(a row's verdicts | class c): log a_jc for each judge that said c, log (1 - a_jc) / (C - 1) for
    each that said another class. A one-coin accuracy (J,) is the same in every class."""
    if accuracy.ndim == 1:
        accuracy = np.broadcast_to(accuracy[:, None], (len(accuracy), x.classes))
    log_right = np.log(accuracy)
    log_wrong = np.log((1.0 - accuracy) / max(x.classes - 1, 1))
    # table[j, c', c]: log P(judge j says c' | class c); the rows' sum over their verdicts is one matrix product
    table = np.where(np.eye(x.classes, dtype=bool)[None, :, :], log_right[:, None, :], log_wrong[:, None, :])
    m, judges, c = x.onehot.shape
    out: np.ndarray = x.onehot.reshape(m, judges * c) @ table.reshape(judges * c, c)
    return out


def posterior(log_joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(memberships, log normaliser) of rows of log joint probabilities, with one exponential per entry: shifted by
    the row's largest, exponentiated, divided by the row's sum, whose log (plus the shift) is the normaliser (what
    em.log_normalise gives, to the last bit, for finite rows)."""
    top = log_joint.max(axis=1, keepdims=True)
    w = np.exp(log_joint - top)
    total = w.sum(axis=1, keepdims=True)
    return w / total, (np.log(total) + top)[:, 0]


def normalise(log_joint: np.ndarray) -> np.ndarray:
    """Rows of log joint probabilities to memberships: shifted by the row's largest, exponentiated, divided."""
    return posterior(log_joint)[0]


def vote_shares(x: Coded, pseudo: float) -> np.ndarray:
    """The usual start: each row's share of verdicts per class, `pseudo` added to every class's count (a row with
    no count at all: zero memberships, so that it plays no part in the first M-step)."""
    shares = x.onehot.sum(axis=1) + pseudo
    total = shares.sum(axis=1, keepdims=True)
    out: np.ndarray = np.divide(shares, total, out=np.zeros_like(shares), where=total > 0)
    return out


@dataclass(frozen=True)
class DawidSkene:
    """The class-conditional model: MAP with Beta(1 + a, 1 + b) on each a_jc (`a`, `b`: pseudo-verdicts right and
    wrong); `map_objective`: EM's objective is the log posterior density, not the log likelihood."""

    a: float = 1.0
    b: float = 1.0
    map_objective: bool = False

    def m_step(self, x: Coded, w: np.ndarray) -> Params:
        """(prior, accuracy) from memberships w (m, C)."""
        nw = x.weight[:, None] * w
        counts, diagonal = x.counts(nw), np.arange(x.classes)
        hits, verdicts = counts[:, diagonal, diagonal], counts.sum(axis=1)
        return self._prior(x, nw), (hits + self.a) / (verdicts + self.a + self.b)

    @staticmethod
    def _prior(x: Coded, nw: np.ndarray) -> np.ndarray:
        prior: np.ndarray = (nw.sum(axis=0) + 1.0) / (x.weight.sum() + x.classes)  # Dirichlet(2) MAP
        return prior

    def e_step(self, x: Coded, params: Params) -> tuple[np.ndarray, float]:
        """(memberships, objective): P(c | verdicts), the gold clamped where known; the log likelihood of the
        verdicts (and of the gold on labeled rows), with the prior's log density where `map_objective`."""
        prior, accuracy = params
        joint = log_likelihood(x, accuracy) + np.log(prior)[None, :]
        member, log_p = posterior(joint)  # log P(verdicts) per row
        if x.labeled.any():  # log P(verdicts, gold) on labeled rows, whose memberships are their gold
            log_p = np.where(x.labeled, (joint * x.clamp).sum(axis=1), log_p)
            member = np.where(x.labeled[:, None], x.clamp, member)
        objective = float(x.weight @ log_p)
        if self.map_objective:
            objective += float(np.log(prior).sum()
                               + (self.a * np.log(accuracy) + self.b * np.log1p(-accuracy)).sum())
        return member, objective

    def fit(self, x: Coded, starts: list[np.ndarray], *, max_iter: int, tol: float, watch_accuracy: bool = False,
            watch_start: np.ndarray | None = None, name: str | None = None) -> em.EMFit[Params]:
        """em.run from each start's memberships (labeled rows clamped); stops on the objective, or on the
        accuracies where `watch_accuracy` (from `watch_start`); `name`: warn at the cap."""
        clamped = [np.where(x.labeled[:, None], x.clamp, s) for s in starts]
        return em.run(clamped, lambda w: self.m_step(x, w), lambda p: self.e_step(x, p), max_iter=max_iter, tol=tol,
                      watch=(lambda p: p[1]) if watch_accuracy else None, watch_start=watch_start, name=name,
                      stacklevel=4)


@dataclass(frozen=True)
class OneCoin(DawidSkene):
    """The one-coin model: a_j the same in every class; only the M-step differs (accuracies kept in [clip, 1 - clip])."""

    clip: float = 1e-6

    def m_step(self, x: Coded, w: np.ndarray) -> Params:
        nw = x.weight[:, None] * w
        counts, diagonal = x.counts(nw), np.arange(x.classes)
        hits, verdicts = counts[:, diagonal, diagonal].sum(axis=1), counts.sum(axis=(1, 2))
        acc = np.clip((hits + self.a) / (verdicts + self.a + self.b), self.clip, 1 - self.clip)
        return self._prior(x, nw), acc

