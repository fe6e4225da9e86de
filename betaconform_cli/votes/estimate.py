"""The estimate: labeled items' exact error plus unlabeled items' expected error under P(plurality wrong | split),
its interval from posterior draws, the guard that falls back to labels only, and `fit`'s entry point."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..counts import CountTable, ItemClusters
from ..errors import P0, P1, ParameterError
from ..fit import FitResult, analyse
from ..intervals import enclose_value, equal_tailed
from ..parameters import CONFIDENCE_LEVEL
from ..posterior import cell_errors
from ..settings import FitSettings
from .agreement import (
    CHANCE_Z,
    DISTINCT_D,
    EXCHANGEABLE_P,
    agreement_z,
    dependence_share,
    label_free_posterior,
    plurality_cochran,
    split_offsets,
)
from .difficulty import difficulty_posterior
from .folded import _fit_folded
from .model import DEFAULT_KS, METHOD_LABELS, METHOD_VOTES, Method, SplitModel, SplitPrior, VoteEstimate, VoteRow
from .patterns import (
    _STEPS,
    Splits,
    _check,
    _check_counts,
    _splits,
    _weighted_margin_code,
    class_counts,
    distinct_patterns,
)
from .posterior import _SplitPosterior
from .rectified import item_terms, rectified

if TYPE_CHECKING:
    from ..inputs.dataset import Votes

MIN_LABELED_SPLITS = 5
_BLOCK = 16
OUTCOMES = ("normal", "binomial")
ESTIMATORS = ("vote_split", "rectified", "rectified_if_distinct", "tempered_if_interchangeable")
# round 5's switch (docs/UNLABELED.md): where a label-free test says the judges are not interchangeable, the flat model
# alone (tau = 1, guarded) instead of `prior`, unless a `distinct_prior` is given
NOT_INTERCHANGEABLE_PRIOR = SplitPrior(models=("flat",))
RECTIFIED_REASON = "labeled items' residuals correct a label-free Dawid-Skene prediction of every item's error"


@dataclass(frozen=True)
class _Items:
    """The items with at least one verdict: class counts, gold (-1 = none), how many items each row stands for, the
    judges' verdicts; the labeled rows' number of verdicts and correct count; and the counts the estimate reports."""

    votes: np.ndarray
    counts: np.ndarray
    gold: np.ndarray
    weight: np.ndarray
    classes: int
    dropped: int

    @property
    def labeled(self) -> np.ndarray:
        out: np.ndarray = self.gold >= 0
        return out

    @property
    def n_labeled(self) -> int:
        return int(self.weight[self.labeled].sum())

    @property
    def n_unlabeled(self) -> int:
        return int(self.weight[~self.labeled].sum())

    @property
    def s_lab(self) -> np.ndarray:
        lab = self.labeled
        out: np.ndarray = self.counts[lab, self.gold[lab]]
        return out

    @property
    def k_lab(self) -> np.ndarray:
        out: np.ndarray = self.counts[self.labeled].sum(axis=1)
        return out


def _items(votes: Any, gold: Any, ks: tuple[int, ...], confidence_level: float, n_classes: int | None,
           counts: Any) -> _Items:
    """Checked inputs, items without any verdict (or with weight 0) dropped; at least one labeled item is required."""
    v, g, classes = _check(votes, gold, ks, confidence_level, n_classes)
    weights = _check_counts(counts, v.shape[0])
    cc = class_counts(v, classes)
    n_all = cc.sum(axis=1)
    keep = (n_all > 0) & (weights > 0)
    items = _Items(v[keep], cc[keep], g[keep], weights[keep], classes, int(weights[n_all == 0].sum()))
    if items.n_labeled == 0:
        raise ParameterError("gold", "labels no item that has a verdict: at least one labeled item is needed")
    return items


def _labels_only_fit(items: _Items, ks: tuple[int, ...], confidence_level: float, settings: FitSettings | None,
                     labels_only: FitResult | None, rng: np.random.Generator) -> FitResult:
    """The labels-only `fit.analyse` of the labeled items' histogram (or the one passed, checked against `ks`)."""
    if labels_only is not None:
        if tuple(labels_only.settings.ks) != ks:
            raise ParameterError(("labels_only", "ks"), f"{P0} was computed for other ks than {P1}")
        return labels_only
    k_lab, s_lab = items.k_lab, items.s_lab
    cells = np.zeros((int(max(k_lab.max(), 1)) + 1,) * 2, dtype=np.int64)
    np.add.at(cells, (k_lab, s_lab), items.weight[items.labeled])
    fs = settings if settings is not None else FitSettings(ks=ks, confidence_level=confidence_level)
    if tuple(fs.ks) != ks or fs.confidence_level != confidence_level:
        raise ParameterError(("settings", "ks"), f"{P0} must use the same ks and confidence_level as the call")
    return analyse(CountTable(cells), fs, rng)


@dataclass(frozen=True)
class _SplitTable:
    """Every distinct split (labeled or not): its sorted class counts, its labeled items and how many of them had a
    wrong plurality, its unlabeled items, its margin x, and the distinct unlabeled rows with their counts."""

    rows: np.ndarray
    trials: np.ndarray
    wrongs: np.ndarray
    unlabeled: np.ndarray
    x: np.ndarray | None
    unl_rows: np.ndarray
    unl_count: np.ndarray
    item_split: np.ndarray


def _split_table(items: _Items, weighted: bool) -> _SplitTable:
    """The labeled and unlabeled items grouped by split (with `weighted`, by split and weighted-margin code)."""
    lab, wt, classes = items.labeled, items.weight, items.classes
    key = _weighted_margin_code(items.votes, items.counts, wt) if weighted else None
    lab_rows, lab_count, lab_inv = distinct_patterns(items.counts[lab], True, None if key is None else key[lab], wt[lab])
    wrong_item = items.s_lab < lab_rows[lab_inv, 0]
    lab_wrong = np.bincount(lab_inv, weights=wrong_item * wt[lab], minlength=len(lab_rows))
    unl_rows, unl_count, unl_inv = distinct_patterns(items.counts[~lab], True, None if key is None else key[~lab], wt[~lab])
    index: dict[tuple[int, ...], int] = {}
    for row in (*lab_rows, *unl_rows):
        index.setdefault(tuple(int(c) for c in row), len(index))
    keys_all = np.array(list(index), dtype=np.int64).reshape(len(index), lab_rows.shape[1])
    n_pat = len(keys_all)
    trials, wrongs, unl_n = np.zeros(n_pat), np.zeros(n_pat), np.zeros(n_pat)
    pos_l = np.array([index[tuple(int(c) for c in r)] for r in lab_rows], dtype=np.int64)
    trials[pos_l] = lab_count
    wrongs[pos_l] = lab_wrong
    pos_u = np.array([index[tuple(int(c) for c in r)] for r in unl_rows], dtype=np.int64)
    unl_n[pos_u] = unl_count
    x = None if key is None else keys_all[:, classes] / _STEPS - 1.0
    item_split = np.zeros(len(lab), dtype=np.int64)
    item_split[lab] = pos_l[lab_inv]
    item_split[~lab] = pos_u[unl_inv]
    return _SplitTable(keys_all[:, :classes], trials, wrongs, unl_n, x, unl_rows[:, :classes], unl_count, item_split)


def _labeled_sum(items: _Items, err: Callable[[int], np.ndarray], n_ks: int) -> np.ndarray:
    """The labeled items' exact error at each k, summed over items."""
    out = np.zeros(n_ks)
    cells, inv = np.unique(np.column_stack([items.k_lab, items.s_lab]), axis=0, return_inverse=True)
    how_many = np.bincount(np.asarray(inv).ravel(), weights=items.weight[items.labeled], minlength=len(cells))
    for (kk, ss), c in zip(cells, how_many):
        out += c * err(int(kk))[int(ss)]
    return out


def _unlabeled_terms(table: _SplitTable, split: Splits, err: Callable[[int], np.ndarray],
                     n_ks: int) -> tuple[np.ndarray, np.ndarray]:
    """Per split with unlabeled items: the summed error if every plurality is right (a), and per split the error
    if wrong minus if right (d): the expected error is a + sum_j n_j p_j d_j."""
    a_sum = np.zeros(n_ks)
    d_rows = np.zeros((len(table.rows), n_ks))
    for i in np.nonzero(table.unlabeled)[0]:
        row = table.rows[i]
        e = err(int(row.sum()))
        a = e[int(row[0])]
        a_sum += table.unlabeled[i] * a
        if split.always_right[i]:
            continue
        alt_s, alt_w = split.alternatives[i]
        d_rows[i] = (alt_w[:, None] * e[alt_s]).sum(axis=0) - a
    return a_sum, d_rows


def _expected(post: _SplitPosterior, table: _SplitTable, d_rows: np.ndarray, can_err: np.ndarray, n_draws: int,
              rng: np.random.Generator, outcomes: str = "normal") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum over unlabeled items of (p - 0) d at the posterior mean, per posterior draw, and the Bernoulli variance per
    draw: the centre and the interval's draws come from these. outcomes "binomial": each draw's sum counts the
    unlabeled items' own outcomes exactly instead (split j's wrong pluralities ~ Binomial(its unlabeled items, p_j)
    at that draw's p_j: the items of a split share p_j, so their sum is exactly binomial), and the variance is 0.
    With more than two classes, which other class is gold when the plurality is wrong stays at its expectation."""
    n_ks = d_rows.shape[1]
    idx = post.draw(rng, n_draws)
    mean_sum, draw_sum, var_sum = np.zeros(n_ks), np.zeros((n_draws, n_ks)), np.zeros((n_draws, n_ks))
    todo = np.nonzero((table.unlabeled > 0) & can_err)[0]
    for lo_i in range(0, len(todo), _BLOCK):  # blocks: grid x patterns x nodes stays small for many-class data
        blk = todo[lo_i: lo_i + _BLOCK]
        D = table.unlabeled[blk, None] * d_rows[blk]
        p_mean, p_draw = post.p_wrong(blk, idx, rng)
        mean_sum += p_mean @ D
        if outcomes == "binomial":
            draw_sum += rng.binomial(np.rint(table.unlabeled[blk]).astype(np.int64), p_draw) @ d_rows[blk]
            continue
        Q = table.unlabeled[blk, None] * d_rows[blk] ** 2
        draw_sum += p_draw @ D
        var_sum += (p_draw * (1 - p_draw)) @ Q
    return mean_sum, draw_sum, var_sum


def _rows(ks: tuple[int, ...], lo_rows: Any, fewest: int, centre: np.ndarray | None = None,
          low: np.ndarray | None = None, high: np.ndarray | None = None) -> tuple[VoteRow, ...]:
    """The error table: the vote split's (centre, low, high) beside the labels-only rows, or the labels-only rows
    alone when `centre` is None; k above the fewest judges of an item is extrapolated."""
    if centre is None or low is None or high is None:
        return tuple(VoteRow(k, r.estimate, r.low, r.high, r.estimate, r.low, r.high, k > fewest) for k, r in zip(ks, lo_rows))
    inside = [enclose_value(centre[i], low[i], high[i]) for i in range(len(ks))]
    return tuple(
        VoteRow(k, float(centre[i]), float(inside[i][0]), float(inside[i][1]), r.estimate, r.low, r.high, k > fewest)
        for i, (k, r) in enumerate(zip(ks, lo_rows))
    )


def estimate_errors(
    votes: Any,
    gold: Any,
    ks: tuple[int, ...] = DEFAULT_KS,
    confidence_level: float = CONFIDENCE_LEVEL,
    rng: np.random.Generator | None = None,
    *,
    n_classes: int | None = None,
    settings: FitSettings | None = None,
    labels_only: FitResult | None = None,
    prior: SplitPrior = SplitPrior(),
    n_draws: int = 4000,
    use_unlabeled: bool = True,
    guard: bool = True,
    counts: Any = None,
    outcomes: str = "normal",
    keep_draws: bool = False,
    estimator: str = "vote_split",
    distinct_prior: SplitPrior | None = None,
) -> VoteEstimate:
    """The majority-vote error at each k over every item with a verdict, from the labeled items' gold and every
    item's verdicts (the package docstring). `rng` is required (it seeds the fits and the interval's draws).

    `labels_only`: the labels-only `fit.analyse` result of these labeled items, if already computed (its
    settings' ks must equal `ks`). `use_unlabeled=False` gives the labels-only estimate over the labeled items.
    `counts`: how many items each row of (votes, gold) stands for (a reader's distinct patterns; default 1 each).
    `outcomes`: how the interval's draws count the unlabeled items' own outcomes: "normal" (a normal approximation
    of their sum, `fit`'s) or "binomial" (exactly, `_expected`); `keep_draws`: the estimate carries the draws of the
    error over every item (`VoteEstimate.draws`; `sample`'s check reads its simultaneous band from them).
    `estimator` ("rectified", "rectified_if_distinct") and `distinct_prior`: round 4's options (_rectify, _pick_prior).
    """
    rng = _check_options(rng, outcomes, estimator)
    ks = tuple(int(k) for k in ks)
    items = _items(votes, gold, ks, confidence_level, n_classes, counts)
    labels_only = _labels_only_fit(items, ks, confidence_level, settings, labels_only, rng)
    fewest = int(items.counts.sum(axis=1).min())  # k above it: some item's missing judges come from the labels-only mixture

    def result(method: Method, reason: str, model: SplitModel | None, rows: tuple[VoteRow, ...] | None = None,
               draws: np.ndarray | None = None) -> VoteEstimate:
        return VoteEstimate(ks, rows or _rows(ks, labels_only.rows, fewest), method, reason, items.n_labeled,
                            items.n_unlabeled, items.dropped, confidence_level, prior, model, labels_only,
                            draws if keep_draws else None)

    if not use_unlabeled:
        return result(METHOD_LABELS, "unlabeled items not used (asked)", None)
    if items.n_unlabeled == 0:
        return result(METHOD_LABELS, "no unlabeled items", None)
    prior, share, p_same = _pick_prior(items, prior, distinct_prior, estimator)
    model, (centre, low, high), draws = _vote_split(items, ks, confidence_level, settings, labels_only, prior, n_draws,
                                                    rng, outcomes)
    model = replace(model, dependence=share, interchangeable_p=p_same)
    use, reason = _guard(model) if guard else (True, "the vote split model (guard off)")
    if estimator in ("rectified", "rectified_if_distinct"):
        model, rect = _rectify(items, ks, confidence_level, labels_only, model, estimator == "rectified")
        if rect is not None:
            vs = _rows(ks, labels_only.rows, fewest, centre, low, high) if use else _rows(ks, labels_only.rows, fewest)
            return result(METHOD_VOTES, f"rectified: {RECTIFIED_REASON}", model, _replace_rows(vs, rect, fewest), None)
    if not use:
        return result(METHOD_LABELS, reason, model)
    return result(METHOD_VOTES, reason, model, _rows(ks, labels_only.rows, fewest, centre, low, high), draws)


def _check_options(rng: np.random.Generator | None, outcomes: str, estimator: str) -> np.random.Generator:
    """The generator, once the options are checked. `estimator`: "vote_split" (the default), "rectified"
    (votes/rectified.py: a label-free prediction corrected by the labels, at every k up to the fewest judges of an
    item) or "rectified_if_distinct" (rectified where the judges count as distinct, agreement.dependence_share <
    DISTINCT_D, the vote split elsewhere); measured in docs/UNLABELED.md, "round 4"; "tempered_if_interchangeable"
    (round 5): the vote split with `prior` where the judges are interchangeable, the flat model elsewhere (_pick_prior)."""
    if rng is None:
        raise ParameterError("rng", "is required: pass a numpy Generator (numpy.random.default_rng(seed))")
    if outcomes not in OUTCOMES:
        raise ParameterError("outcomes", f"must be one of {list(OUTCOMES)}; got {outcomes!r}")
    if estimator not in ESTIMATORS:
        raise ParameterError("estimator", f"must be one of {list(ESTIMATORS)}; got {estimator!r}")
    return rng


def _pick_prior(items: _Items, prior: SplitPrior, distinct_prior: SplitPrior | None,
                estimator: str = "vote_split") -> tuple[SplitPrior, float | None, float | None]:
    """(the prior to fit, the judges' dependence share, Cochran's Q p-value): with "tempered_if_interchangeable",
    `prior` where the judges are interchangeable (agreement.plurality_cochran's p >= EXCHANGEABLE_P), `distinct_prior`
    (default NOT_INTERCHANGEABLE_PRIOR) elsewhere; otherwise `distinct_prior` where the judges count as distinct
    (agreement.dependence_share < DISTINCT_D), `prior` elsewhere (nothing computed without a `distinct_prior`)."""
    weight = items.weight.astype(float)
    if estimator == "tempered_if_interchangeable":
        p_same = plurality_cochran(items.votes, weight, items.classes)[1]
        return (prior if p_same >= EXCHANGEABLE_P else distinct_prior or NOT_INTERCHANGEABLE_PRIOR), None, p_same
    if distinct_prior is None:
        return prior, None, None
    share = dependence_share(items.votes, weight, items.classes, label_free_posterior(items.votes, weight, items.classes)[1])
    return (distinct_prior if share < DISTINCT_D else prior), share, None


def _replace_rows(rows: tuple[VoteRow, ...], rect: tuple[np.ndarray, np.ndarray, np.ndarray],
                  fewest: int) -> tuple[VoteRow, ...]:
    """The rectified (estimate, low, high) at every k up to the fewest judges of an item; the rows above kept."""
    return tuple(replace(v, estimate=float(rect[0][i]), low=float(rect[1][i]), high=float(rect[2][i]))
                 if v.k <= fewest else v for i, v in enumerate(rows))


def _error_tables(labels_only: FitResult, ks: tuple[int, ...]) -> Callable[[int], np.ndarray]:
    """err(n): the exact error at each k of an item with S = 0..n of its n judges right (cached per n)."""
    mixture = labels_only.fit.mixture
    errors_by_n: dict[int, np.ndarray] = {}

    def err(n: int) -> np.ndarray:
        if n not in errors_by_n:
            errors_by_n[n] = cell_errors(n, mixture, ks)
        return errors_by_n[n]

    return err


def _vote_split(items: _Items, ks: tuple[int, ...], confidence_level: float, settings: FitSettings | None,
                labels_only: FitResult, prior: SplitPrior, n_draws: int, rng: np.random.Generator,
                outcomes: str = "normal") -> tuple[SplitModel, tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The vote-split model fitted to these items, its estimate with the interval's bounds at each k, and the
    interval's draws of the error over every item (draws x ks)."""
    err = _error_tables(labels_only, ks)
    labeled_sum = _labeled_sum(items, err, len(ks))
    table = _split_table(items, prior.weighted)
    bb = None
    if "folded" in prior.models:
        bb = _fit_folded(items.k_lab, items.s_lab, table.unl_rows, table.unl_count, items.classes, settings,
                         items.weight[items.labeled].astype(float))
    split_flat = _splits(table.rows, items.classes, None)
    split_bb = _splits(table.rows, items.classes, bb) if bb is not None else split_flat
    offsets = _offsets(items, table, split_bb, prior)
    a_sum, d_rows = _unlabeled_terms(table, split_bb, err, len(ks))
    can_err = ~split_flat.always_right
    post = _SplitPosterior(split_flat.x if table.x is None else table.x, offsets, table.wrongs, table.trials, can_err, prior)
    total = items.n_labeled + items.n_unlabeled
    mean_sum, draw_sum, var_sum = _expected(post, table, d_rows, can_err, n_draws, rng, outcomes)
    centre = (labeled_sum + a_sum + mean_sum) / total
    mean_draw = (labeled_sum + a_sum + draw_sum) / total
    if outcomes == "binomial":
        draws = np.clip(mean_draw, 0.0, 1.0)
    else:
        draws = np.clip(mean_draw + np.sqrt(np.maximum(var_sum, 0.0)) / total * rng.standard_normal(mean_draw.shape), 0.0, 1.0)
    bounds = (centre, *equal_tailed(draws, confidence_level))
    margin = post.means(tempered=False) or (prior.mean0, prior.mean1)
    model = SplitModel(margin[0], margin[1], bb, post.model_probabilities(), int(table.trials[can_err].sum()),
                       int(table.wrongs[can_err].sum()), post.means(tempered=True) if "tempered" in prior.models else None,
                       agreement_z(items.votes, items.weight.astype(float), items.classes))
    return model, bounds, draws


def _rectify(items: _Items, ks: tuple[int, ...], confidence_level: float, labels_only: FitResult, model: SplitModel,
             always: bool) -> tuple[SplitModel, tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """The rectified estimate (votes/rectified.py) with the model carrying the judges' dependence share; None instead
    of the estimate when `always` is off and the judges do not count as distinct, or fewer than 2 items are labeled."""
    weight = items.weight.astype(float)
    logq, acc = label_free_posterior(items.votes, weight, items.classes)
    share = dependence_share(items.votes, weight, items.classes, acc)
    model = replace(model, dependence=share)
    if items.n_labeled < 2 or not (always or share < DISTINCT_D):
        return model, None
    f, v, y = item_terms(items.counts, items.gold, logq, _error_tables(labels_only, ks), len(ks))
    centre, low, high = rectified(f, v, y, weight, confidence_level)
    centre = np.clip(centre, 0.0, 1.0)
    return model, (centre, np.minimum(low, centre), np.maximum(high, centre))


def _offsets(items: _Items, table: _SplitTable, split_bb: Splits, prior: SplitPrior) -> np.ndarray:
    """Each model's offset per split: the folded Beta-Binomial's log odds, the judges' agreement model's, or 0."""
    agree = None
    if "agreement" in prior.models or "tempered" in prior.models:
        agree = split_offsets(items.votes, items.counts, items.weight.astype(float), items.classes, table.item_split,
                              len(table.rows))
    zeros = np.zeros(len(table.rows))
    hard = None
    if "difficulty" in prior.models:
        weight = items.weight.astype(float)
        hard = split_offsets(items.votes, items.counts, weight, items.classes, table.item_split, len(table.rows),
                             difficulty_posterior(items.votes, weight, items.classes))
    return np.array([split_bb.offset if m == "folded" else agree if m in ("agreement", "tempered") and agree is not None
                     else hard if m == "difficulty" and hard is not None else zeros for m in prior.models])


def estimate_from_votes(
    votes: Votes, ks: tuple[int, ...] = DEFAULT_KS, confidence_level: float = CONFIDENCE_LEVEL,
    rng: np.random.Generator | None = None, **options: Any,
) -> VoteEstimate:
    """`estimate_errors` on a reader's `Dataset.votes` (distinct patterns with their counts, classes by name)."""
    return estimate_errors(votes.patterns, votes.gold, ks, confidence_level, rng,
                           n_classes=max(len(votes.classes), 2), counts=votes.counts, **options)


def _guard(model: SplitModel) -> tuple[bool, str]:
    """Use the unlabeled items only where they can help: (1) at least MIN_LABELED_SPLITS labeled items whose
    plurality could be wrong (with fewer, the model rests on its prior); (2) the judges agree beyond chance
    (agreement.agreement_z, a one-sided 5% test on every item's verdicts, no labels: judges that vote independently
    of each other carry no common signal, and then of the gold neither); (3) when the "constant" model is among the
    averaged ones (issue 17's product), the labels' marginal likelihood does not favour it. Issue 26 dropped (3)
    from the default: at r = 10 it fell back on informative verdicts too often (docs/UNLABELED.md)."""
    if model.labeled_splits < MIN_LABELED_SPLITS:
        return False, (
            f"labels only: {model.labeled_splits} labeled item(s) whose plurality could be wrong, fewer than "
            f"{MIN_LABELED_SPLITS}, cannot say how often the judges' plurality errs"
        )
    if model.agreement_z is not None and model.agreement_z < CHANCE_Z:
        return False, (
            f"labels only: the judges agree no more than chance would make them (z = {model.agreement_z:.2f} < "
            f"{CHANCE_Z:.2f}, one-sided 5%), so their verdicts on unlabeled items carry no signal to use"
        )
    probs = model.model_probabilities
    if "constant" in probs and len(probs) > 1 and probs["constant"] >= max(v for m, v in probs.items() if m != "constant"):
        return False, (
            f"labels only: the labels favour the model in which the vote split says nothing about correctness "
            f"(posterior probability {probs['constant']:.2f})"
        )
    return True, "vote split: labeled items exact, unlabeled items by P(plurality wrong | split)"


def analyse_with_votes(
    table: CountTable, votes: Votes | None, settings: FitSettings, rng: np.random.Generator, use_unlabeled: bool = True,
    clusters: ItemClusters | None = None,
) -> FitResult:
    """`fit.analyse` of the labeled histogram `table`, then, when `votes` holds unlabeled items, the error table over
    every item from `estimate_from_votes`: the estimate and interval are the vote split's where the guard lets it
    use the unlabeled verdicts, the labels-only ones otherwise (and with `use_unlabeled=False`); either way each row
    keeps the labels-only estimate beside it and the result carries the `VoteEstimate` (method, reason, counts).
    Without unlabeled items the result is `fit.analyse`'s, unchanged (same draws of `rng`); `clusters`: the labeled
    items' clusters, for fit.analyse's interval."""
    if votes is None or votes.unlabeled_items == 0 or votes.labeled_items == 0:
        return analyse(table, settings, rng, clusters=clusters)
    from ..extrapolation import beyond_rows, reference_ks

    most = max(table.max_judges, int((votes.patterns >= 0).sum(axis=1).max(initial=0)))  # any item, labeled or not
    run = reference_ks(settings.ks, most)
    result = analyse(table, settings if run == tuple(settings.ks) else replace(settings, ks=run), rng, clusters=clusters)
    est = estimate_from_votes(votes, tuple(run), settings.confidence_level, rng, labels_only=result,
                              use_unlabeled=use_unlabeled)
    rows = []
    for r in result.rows:
        v = est.row(r.k)
        lo = (r.estimate, r.low, r.high)
        if est.used_unlabeled:
            rows.append(replace(r, estimate=v.estimate, low=v.low, high=v.high, labels_only=lo, extrapolated_all=v.extrapolated))
        else:
            rows.append(replace(r, labels_only=lo))
    return replace(result, settings=settings, rows=beyond_rows(rows, most, settings.ks), unlabeled=est)
