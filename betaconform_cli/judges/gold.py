"""`judges`: each judge against the gold, and the panel among themselves (issue 27; docs/AGREEMENT.md).

One entry point, `agreement(verdicts, names, classes, ...)`: a pure function of the verdict patterns of the items
given (labeled and unlabeled), so that a subset of the items (a slice) is the same call on its patterns.

Per judge, on the labeled items it judged (labels only): accuracy and each class's recall (P(verdict c | gold c):
for two classes with a pass class, sensitivity = the pass class's recall, specificity = the other's; false-fail
rate 1 - sensitivity, false-pass rate 1 - specificity) with Wilson intervals; Cohen's kappa, Gwet's AC1 and
Krippendorff's alpha with delta-method intervals (Fleiss-Cohen-Everitt's and Gwet's variances) on the Fisher z scale,
the variance taken at the table plus half an item per cell (agreement.coefficient_interval); the confusion table.

Model-based, where unlabeled items exist and the labels vouch for the Dawid-Skene model (judges/unlabeled.py's fit
and guard): the same figures from the judge's whole confusion table estimated by prediction-powered inference
(Angelopoulos et al. 2023): each item's cell shares z_i = onehot(gold) x onehot(verdict) are predicted by
f_i = P(gold | every judge's verdicts, gold hidden) x onehot(verdict); the table is
    p = mean_unlabeled(f) + mean_labeled(z - f),
unbiased for the judge's table whatever the model's misfit (the labels rectify it), with covariance
Cov_unlabeled(f) / N_u + Cov_labeled(z - f) / r (the labeled part with ppi.PSEUDO_ITEMS pseudo-items of the
labels-only covariance, so that a few labels that the model happens to get right do not make it certain); every
figure is a function of p and its interval the delta method's. Measured: benchmarks/agreement.py.

The panel: Fleiss' kappa (items every judge judged) and Krippendorff's alpha (every item with two verdicts or more),
on every item read (no gold needed), percentile bootstrap intervals; which pairs err together more than their
accuracies explain is the shared-mistakes table (descriptive.pair_table / every.Every.pairs): `dependent_pairs`
are its pairs whose one-sided Fisher p-value passes Holm's procedure at 1 - confidence level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..score.ppi import PSEUDO_ITEMS, Interval
from . import agreement as ag
from .clustered import Compositions, cell_covariance, design_effect, resample_clusters
from .descriptive import wilson_interval
from .results import PairRow
from .unlabeled import ClassModel, Verdicts

if TYPE_CHECKING:
    from ..inputs.dataset import Votes

MAX_CLASSES = 20  # the delta method's covariance is (C^2 x C^2): beyond this many classes `judges` leaves agreement out (30: 9 s)
METHODS = {
    "accuracy": "Wilson score interval",
    "recall": "Wilson score interval (sensitivity, specificity; false-pass = 1 - specificity, false-fail = 1 - sensitivity)",
    "kappa": "Cohen's kappa; delta-method interval (the Fleiss-Cohen-Everitt variance) on the Fisher z scale, the "
             "variance taken at the table plus half an item per cell",
    "ac1": "Gwet's AC1; delta-method interval (Gwet's 2008 variance), as kappa's",
    "alpha": "Krippendorff's alpha (nominal); delta-method interval, as kappa's",
    "model": "prediction-powered: the Dawid-Skene prediction of each item's gold, rectified by the labeled items; "
             "delta-method intervals (kappa, AC1, alpha on the Fisher z scale)",
    "panel": "Fleiss' kappa (items judged by every judge) and Krippendorff's alpha (nominal), percentile bootstrap "
             "over items",
}


@dataclass(frozen=True)
class Binary:
    """Two classes, one of them the pass class: sensitivity, specificity and the two error rates."""

    positive: str
    sensitivity: Interval | None
    specificity: Interval | None
    false_pass: Interval | None  # P(judge says pass | gold is not pass)
    false_fail: Interval | None  # P(judge says not pass | gold is pass)


@dataclass(frozen=True)
class Figures:
    """One judge's figures from one table: labels only (counts) or model-based (estimated shares)."""

    items: int
    accuracy: Interval | None
    recall: tuple[Interval | None, ...]  # per class, in the classes' order
    binary: Binary | None
    kappa: Interval | None
    ac1: Interval | None
    alpha: Interval | None


@dataclass(frozen=True)
class JudgeAgreement:
    """A judge against the gold: its confusion table (rows gold, columns verdict), labels only and model-based."""

    name: str
    confusion: tuple[tuple[int, ...], ...]
    labels: Figures
    model: Figures | None


@dataclass(frozen=True)
class Panel:
    """The judges among themselves."""

    items: int  # items with two verdicts or more (alpha's)
    complete_items: int  # items every judge judged (Fleiss')
    fleiss_kappa: Interval | None
    alpha: Interval | None
    dependent_pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Agreement:
    """Everything of issue 27's item 1 for one set of items."""

    classes: tuple[str, ...]
    positive: str | None
    judges: tuple[JudgeAgreement, ...]
    panel: Panel
    model_used: bool
    model_note: str
    confidence_level: float


def _flip(x: Interval | None) -> Interval | None:
    return None if x is None else Interval(1 - x.estimate, 1 - x.high, 1 - x.low)


def _wilson(successes: float, n: float, level: float, deff: float = 1.0) -> Interval | None:
    """Wilson's interval of successes / n, at the effective number of items n / deff where items are clustered."""
    if n <= 0:
        return None
    if deff > 1.0:
        lo, hi = wilson_interval(successes / deff, n / deff, level)
    else:
        lo, hi = wilson_interval(int(round(successes)), int(round(n)), level)
    return Interval(successes / n, lo, hi)


def _binary(recalls: Sequence[Interval | None], classes: Sequence[str], positive: int | None) -> Binary | None:
    if positive is None or len(classes) != 2:
        return None
    sens, spec = recalls[positive], recalls[1 - positive]
    return Binary(classes[positive], sens, spec, _flip(spec), _flip(sens))


def labels_figures(table: np.ndarray, classes: Sequence[str], positive: int | None, level: float,
                   covariance: np.ndarray | None = None, largest: int = 1) -> Figures:
    """A judge's labels-only figures from its confusion table of counts t[gold, verdict]. `covariance`: the clusters'
    covariance of its shares (clustered.cell_covariance) where items are clustered: every interval is then taken at
    its statistic's design effect (clustered.design_effect; Wilson's at n / deff, the coefficients' variance times
    deff)."""
    t = np.asarray(table, dtype=float)
    n = float(t.sum())
    if n == 0:
        return Figures(0, None, tuple(None for _ in classes), _binary([None] * len(classes), classes, positive), None, None, None)

    def deff(stat: ag.Stat) -> float:
        return design_effect(stat, t, covariance, largest)

    def recall_of(c: int) -> ag.Stat:
        return lambda x: ag.recall(x, c)

    recalls = tuple(_wilson(t[c, c], t[c].sum(), level, deff(recall_of(c))) for c in range(len(classes)))

    def alpha(x: np.ndarray) -> np.ndarray:
        return ag.krippendorff_alpha_pair(x * n)

    return Figures(int(n), _wilson(np.trace(t), n, level, deff(ag.accuracy)), recalls, _binary(recalls, classes, positive),
                   *(ag.coefficient_interval(f, t, level, deff(f)) for f in (ag.cohen_kappa, ag.gwet_ac1, alpha)))


def ppi_table(cells: np.ndarray, predicted: np.ndarray, labeled: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, covariance): the prediction-powered estimate of the mean of `cells` (m, D) per pattern, `predicted` (m, D)
    their prediction, `labeled` (m,) which patterns carry gold, `counts` (m,) items per pattern."""
    w = np.asarray(counts, dtype=float)
    wl, wu = w * labeled, w * ~labeled
    r, nu = wl.sum(), wu.sum()
    f_mean = wu @ predicted / nu
    resid = cells - predicted
    e_mean = wl @ resid / r
    fc, ec = predicted - f_mean, resid - e_mean
    cov_f = (fc * wu[:, None]).T @ fc / max(nu - 1.0, 1.0) / nu
    z_mean = wl @ cells / r
    smooth = (z_mean * r + 1.0 / cells.shape[1]) / (r + 1.0)  # the labels-only shares, one pseudo-item spread evenly
    v0 = np.diag(smooth) - np.outer(smooth, smooth)
    cov_e = ((ec * wl[:, None]).T @ ec + PSEUDO_ITEMS * v0) / (r - 1.0 + PSEUDO_ITEMS) / r
    p = np.maximum(f_mean + e_mean, 0.0)
    return p / p.sum(), cov_f + cov_e


def model_figures(v: Verdicts, model: ClassModel, j: int, classes: Sequence[str], positive: int | None,
                  level: float) -> Figures | None:
    """Judge j's model-based figures (module docstring) on the items it judged; None without labeled or unlabeled
    items among them."""
    said = v.patterns[:, j] >= 0
    labeled = v.labeled[said]
    if not labeled.any() or labeled.all():
        return None
    c = v.classes
    verdict = np.eye(c)[v.patterns[said, j]]  # (m, C)
    gold = np.eye(c)[np.maximum(v.gold[said], 0)] * labeled[:, None]
    cells = (gold[:, :, None] * verdict[:, None, :]).reshape(-1, c * c)
    predicted = (model.predictive[said][:, :, None] * verdict[:, None, :]).reshape(-1, c * c)
    p, cov = ppi_table(cells, predicted, labeled, v.counts[said])
    table, items = p.reshape(c, c), float(v.counts[said].sum())  # alpha's small-sample term needs the count

    def recall_of(k: int) -> ag.Stat:
        return lambda t: ag.recall(t, k)

    recalls = tuple(ag.delta_interval(recall_of(k), table, cov, level, 0.0, 1.0, wilson=items) for k in range(c))
    return Figures(int(items), ag.delta_interval(ag.accuracy, table, cov, level, 0.0, 1.0, wilson=items), recalls,
                   _binary(recalls, classes, positive), ag.delta_interval(ag.cohen_kappa, table, cov, level, fisher_z=True),
                   ag.delta_interval(ag.gwet_ac1, table, cov, level, fisher_z=True),
                   ag.delta_interval(lambda t: ag.krippendorff_alpha_pair(t * items), table, cov, level, fisher_z=True))


def confusion(v: Verdicts, j: int) -> np.ndarray:
    """Judge j's confusion table of counts on the labeled items it judged: rows gold, columns its verdict."""
    ok = v.labeled & (v.patterns[:, j] >= 0)
    out = np.zeros((v.classes, v.classes))
    np.add.at(out, (v.gold[ok], v.patterns[ok, j]), v.counts[ok])
    return out


def panel(v: Verdicts, names: Sequence[str], pairs: Sequence[PairRow], level: float, rng: np.random.Generator,
          draws: int = ag.BOOTSTRAP_DRAWS, clusters: Compositions | None = None) -> Panel:
    """The panel's agreement on every item read, and the pairs that err together beyond their accuracies; the
    bootstrap resamples items, or `clusters` where items are clustered."""
    n_uc = ag.class_counts(v.patterns, v.classes)
    m_u = n_uc.sum(axis=1)
    counts = v.counts.astype(float)
    boot = ag.resample(counts, rng, draws) if clusters is None else resample_clusters(clusters, rng, draws)
    fleiss = ag.bootstrap_interval(float(ag.fleiss_kappa(n_uc, counts)), ag.fleiss_kappa(n_uc, boot), level)
    alpha = ag.bootstrap_interval(float(ag.panel_alpha(n_uc, counts)), ag.panel_alpha(n_uc, boot), level)
    p = np.array([np.nan if x.p_value is None else x.p_value for x in pairs])
    reject = ag.holm(p, 1 - level) if len(p) else np.zeros(0, dtype=bool)
    dependent = tuple((x.a, x.b) for x, r in zip(pairs, reject) if r)
    return Panel(int(counts[m_u >= 2].sum()), int(counts[m_u == len(names)].sum()), fleiss, alpha, dependent)


def agreement(v: Verdicts, names: Sequence[str], classes: Sequence[str], positive: int | None, pairs: Sequence[PairRow],
              confidence_level: float, rng: np.random.Generator, model: ClassModel | None = None,
              model_note: str = "labels only: no unlabeled item", clusters: Compositions | None = None) -> Agreement:
    """Every judge against the gold and the panel, on the items of `v` (columns in the order of `names`); `model`:
    the fitted Dawid-Skene model where the labels vouch for it (judges/unlabeled.py's guard), else None;
    `clusters`: the items' clusters (clustered.compositions), which every interval then counts."""
    rows = []
    for j, name in enumerate(names):
        t = confusion(v, j)
        cov = None if clusters is None else cell_covariance(v, j, clusters)
        largest = 1 if clusters is None else clusters.largest
        rows.append(JudgeAgreement(name, tuple(tuple(int(x) for x in r) for r in t),
                                   labels_figures(t, classes, positive, confidence_level, cov, largest),
                                   None if model is None else model_figures(v, model, j, classes, positive, confidence_level)))
    return Agreement(tuple(classes), None if positive is None else classes[positive], tuple(rows),
                     panel(v, names, pairs, confidence_level, rng, clusters=clusters), model is not None, model_note,
                     confidence_level)


def pass_class(classes: Sequence[str], positive: str | None) -> int | None:
    """The pass class's code: `positive` (an error when it is not a class), else the one class named like a pass
    (score.resolve_positive's rule), else None (two classes such as A/B preferences: no pass class, each class's
    recall instead of sensitivity and specificity)."""
    from ..errors import ParameterError
    from ..score import resolve_positive

    if positive is not None:
        return resolve_positive(classes, positive)
    try:
        return resolve_positive(classes) if len(classes) == 2 else None
    except ParameterError:
        return None


def votes_agreement(votes: Votes, names: Sequence[str], pairs: Sequence[PairRow], confidence_level: float,
                    rng: np.random.Generator, positive: str | None = None, use_unlabeled: bool = True) -> Agreement:
    """`agreement` on a dataset's votes (labeled and unlabeled items; a slice's votes alike): the Dawid-Skene model
    fitted and checked as `judges` does (unlabeled.fit_classes, unlabeled.guard) where there are unlabeled items
    and `use_unlabeled`."""
    from .clustered import compositions
    from .unlabeled import fit_classes, guard

    v, clusters = compositions(votes, names)
    classes = tuple(votes.classes) + tuple("(other)" if c == 1 else f"(other {c})" for c in range(len(votes.classes), v.classes))
    code = pass_class(classes, positive)
    model, note = None, "labels only: no unlabeled item"
    if v.unlabeled_items and clusters is not None and clusters.largest > 1:  # the model takes items as independent
        note = f"labels only: the items are clustered ({clusters.clusters} clusters); the unlabeled items are not used"
    elif v.unlabeled_items and not use_unlabeled:
        note = "labels only: the unlabeled items were not asked for (--no-unlabeled)"
    elif v.unlabeled_items:
        fitted = fit_classes(v)
        used, note = guard(fitted, v)
        model = fitted if used else None
        if used:
            note = (f"model-based: the Dawid-Skene prediction of the {v.unlabeled_items} unlabeled items' gold, rectified "
                    f"by the {v.labeled_items} labeled items (prediction-powered); the labels' log-likelihood gain "
                    f"{fitted.evidence:.1f} nats")
    return agreement(v, names, classes, code, pairs, confidence_level, rng, model, note, clusters)
