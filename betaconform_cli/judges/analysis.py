"""`judges`: per-judge accuracy, shared mistakes, and the ensemble to run for each size k, with its error.

Pure core (numpy/scipy; no printing). One entry point, `analyse_judges`. Method and measurements: docs/JUDGES.md.

- Per judge, pairs, exchangeability: descriptive.py.
- Ensembles: the latent-class posterior (model.py) gives every subset's error on new items; the pairwise
  maximum-entropy model (maxent.py) ranks them. The choice for each size k minimises the posterior mean of a
  Dirichlet posterior over response patterns centred on the ranking model and worth `pseudo_items` items (the
  labels' own error of the subset weighs as many items as it has):
      score_S = (n_S emp_S + a me_S) / (n_S + a),
  and, when the size of the whole set is known (`population`), the labeled share f of that set is known exactly:
      target_S = f emp_S + (1 - f) * (error on the unlabeled rest).
  The reported estimate is the model's posterior mean of the target, not the score that was minimised (which is
  optimistic for the winner: the winner's curse); the interval is its equal-tailed posterior (predictive)
  interval, widened about the estimate by `interval_widening` (a factor calibrated held out in
  benchmarks/judges.py --calibrate: the model is misspecified on real data) and kept within the target's range. Baselines: `fit`'s random-k error at k and its all-judges error, on the same labels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import P0, P1, ParameterError, UsageError, quote, quote_all
from ..fit import FitResult, analyse
from ..formats import MAX_K
from ..parameters import check
from ..settings import FitSettings
from .clustered import Clustered, clustered, clustered_items, widened, widened_search
from .costs import cheapest as _cheapest
from .descriptive import cochran_q, count_table, pair_table, wilson_interval
from .every import Every, every_item
from .model import ClassPosterior, sample_posterior, subset_error_draws
from .request import JudgesRequest as JudgesRequest
from .results import (
    EnsembleRow,
    JudgeRow,
    JudgesModels,
    JudgesResult,
    JudgesScope,
    NamedEnsemble,
    PairRow,
    Picks,
)
from .search import Search as Search  # the search's names, importable from here as before it had a module
from .search import _Target as _Target
from .search import _target, canonical_order
from .search import canonical_rows as canonical_rows
from .search import pick_lowest as pick_lowest
from .search import rescore as rescore
from .search import search_ensembles as search_ensembles
from .search import widen as widen
from .subsets import SubsetTable, empirical_subset_errors

if TYPE_CHECKING:
    from ..inputs.dataset import Votes

MAX_POPULATION = 2**53  # items in the whole set (--population): exact as a float

# --- validation -------------------------------------------------------------------------------------------


def check_inputs(correct: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """The matrix as float (items, judges) with values 0, 1 or NaN; names one per column, unique."""
    arr = np.asarray(correct, dtype=float)
    if arr.ndim != 2:
        raise UsageError(f"correct must be a 2-D array (items, judges); got {arr.ndim} dimensions")
    if len(names) != arr.shape[1]:
        raise UsageError(f"names must name every judge column: {arr.shape[1]} columns, {len(names)} names")
    if arr.shape[1] < 2:
        raise UsageError(f"judges needs at least 2 named judges; got {arr.shape[1]} ({quote_all(names) or 'none'})")
    dup = sorted({n for n in names if list(names).count(n) > 1})
    if dup:
        raise UsageError(f"judge names must be unique; repeated: {quote_all(dup)}")
    values = arr[~np.isnan(arr)]
    if not np.isin(values, (0.0, 1.0)).all():
        raise UsageError("correct must hold 1 (agreed with the gold label), 0 (did not) or NaN (no verdict)")
    silent = [n for n, col in zip(names, arr.T) if np.isnan(col).all()]
    if silent:
        raise UsageError(f"judge {quote(silent[0])} gave no verdict on any item; drop it (judges without verdicts: {quote_all(silent)})")
    return arr


DATA_SEEDED = "seeded by the data (common random numbers): the same labels give the same answer for any line order or --seed"


def data_seed(correct: np.ndarray, names: Sequence[str]) -> int:
    """A seed drawn from the data itself: a digest of the canonical matrix (judges by name, items by verdicts).

    The model's Monte Carlo (Gibbs draws, the unlabeled rest's binomial draws) then uses the same random numbers
    for the same labels whatever the line order or --seed (common random numbers): the Gibbs chain's error at a
    fixed number of draws is about half a point on an estimate (more sweeps barely shrink it: the chain moves
    between modes), so a seed-driven draw could flip a --max-error gate or a near tie; seeded by the data it cannot.
    """
    import hashlib

    names, arr = canonical_order(check_inputs(correct, tuple(str(n) for n in names)), tuple(str(n) for n in names))
    code = np.where(np.isnan(arr), 2, arr).astype(np.int8)
    digest = hashlib.blake2b(np.ascontiguousarray(code).tobytes(), digest_size=8)
    digest.update(repr(code.shape).encode())
    return int.from_bytes(digest.digest(), "little")


def _check_options(n_judges: int, ks: Sequence[int], confidence_level: float, population: int | None, items: int) -> None:
    bad = [k for k in ks if not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= min(n_judges, MAX_K)]
    if not ks or bad:
        raise ParameterError("ks", f"must be integers between 1 and {min(n_judges, MAX_K)} (the number of judges); got {list(ks)}")
    check("confidence_level", confidence_level)
    if population is not None and (not isinstance(population, (int, np.integer)) or not items <= population <= MAX_POPULATION):
        raise ParameterError("population", f"must be an integer from the {items} labeled items to {MAX_POPULATION}; got {population}")


def _resolve(members: Sequence[str], names: Sequence[str], what: str) -> tuple[int, ...]:
    unknown = [m for m in members if m not in names]
    if unknown:
        raise ParameterError(what, f"{P0}: unknown judge {quote(unknown[0])}; known judges: {quote_all(names)}")
    if len(set(members)) != len(members):
        raise ParameterError(what, f"{P0}: a judge is named twice ({quote_all(members)})")
    return tuple(sorted(names.index(m) for m in members))


def _check_costs(costs: Mapping[str, float], names: Sequence[str], max_error: float) -> None:
    _resolve(list(costs), names, "costs")
    for n, price in costs.items():
        if not (isinstance(price, (int, float)) and math.isfinite(price) and price >= 0):
            raise ParameterError("costs", f"{P0}: the price of {quote(n)} must be a finite number >= 0; got {price!r}")
    check("judges.max_error", max_error)


def default_ks(n_judges: int) -> tuple[int, ...]:
    """1, 3, 5, ... up to the number of judges (odd sizes: no ties)."""
    return tuple(range(1, n_judges + 1, 2))


# --- the entry point --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Prepared:
    """The checked, canonically ordered labeled matrix and the request's resolved options."""

    names: tuple[str, ...]
    correct: np.ndarray
    dropped: int
    ks: tuple[int, ...]
    named: tuple[int, ...] | None


def _prepare(correct: np.ndarray, names: Sequence[str], req: JudgesRequest) -> _Prepared:
    """Inputs checked (judges by name, items by verdicts), items without any verdict dropped, options checked."""
    names = tuple(str(n) for n in names)
    names, arr = canonical_order(check_inputs(correct, names), names)
    answered = ~np.isnan(arr).all(axis=1)
    arr = arr[answered]
    n_items, n_judges = arr.shape
    if n_items == 0:
        raise UsageError("correct has no item with a verdict")
    if n_judges > MAX_K:  # the ensemble of every judge is one of the sizes compared, and a size is at most MAX_K
        raise UsageError(f"{n_judges} judges: judges compares at most {MAX_K} (every ensemble, the one of all judges "
                         f"too, is a size k of at most {MAX_K}); keep at most {MAX_K} judges in the input")
    ks = tuple(int(k) for k in (default_ks(n_judges) if req.ks is None else req.ks))
    _check_options(n_judges, ks, req.confidence_level, req.population, n_items)
    named = None if req.ensemble is None else _resolve(list(req.ensemble), names, "ensemble")
    if named is not None and not named:
        raise ParameterError("ensemble", "must name at least one judge")
    if req.costs is not None and req.max_error is None:
        raise ParameterError(("costs", "max_error"), f"{P0} needs {P1}: the cheapest ensemble whose upper bound is at most {P1}")
    if req.max_error is not None:
        _check_costs(req.costs or {}, names, req.max_error)
    return _Prepared(names, arr, int((~answered).sum()), ks, named)


def _judge_rows(arr: np.ndarray, names: tuple[str, ...], pairs: Sequence[PairRow], confidence_level: float,
                every: tuple[np.ndarray, np.ndarray] | None, deff: np.ndarray | None = None) -> tuple[JudgeRow, ...]:
    """Accuracy (Wilson interval) per judge on its labeled items, or on every item (`every`: accuracy, items).

    With every item, the unlabeled items' gold is inferred, not observed: they move the accuracy but do not
    narrow its interval, which stays Wilson's at the judge's labeled count. An interval at the count of every item
    treats inferred gold as observed: it covered 63.5% where judges err together (tests/test_judges_unlabeled.py).
    `deff`: each judge's design effect where the items are clustered (judges/clustered.py): the interval is Wilson's
    at the effective count."""
    seen = ~np.isnan(arr)
    n_seen = n_labeled = seen.sum(axis=0)
    n_eff = n_labeled / (deff if deff is not None else 1.0)
    acc = np.nansum(arr, axis=0) / n_seen
    if every is not None:
        acc, n_seen = every
    excess: list[list[float]] = [[] for _ in names]
    for p in pairs:
        if p.excess is not None:
            excess[names.index(p.a)].append(p.excess)
            excess[names.index(p.b)].append(p.excess)
    return tuple(
        JudgeRow(name, float(acc[j]), *wilson_interval(acc[j] * n_eff[j] if deff is not None else int(round(acc[j] * n_labeled[j])),
                                                       n_eff[j] if deff is not None else int(n_labeled[j]), confidence_level),
                 int(n_seen[j]), float(acc[j] - acc.mean()), float(np.mean(excess[j])) if excess[j] else None)
        for j, name in enumerate(names)
    )


def _ensemble_rows(prep: _Prepared, search: Search, baseline: FitResult) -> tuple[EnsembleRow, ...]:
    n_judges = len(prep.names)
    rows = []
    for k in prep.ks:
        t, tg = search.tables[k], search.targets[k]
        i = search.pick(k)
        rows.append(EnsembleRow(
            k=k, members=tuple(prep.names[j] for j in t.members[i]), estimate=float(tg.estimate[i]),
            low=float(tg.low[i]), high=float(tg.high[i]),
            empirical=None if np.isnan(t.empirical[i]) else float(t.empirical[i]), items=int(t.items[i]),
            random_k=baseline.row(k).estimate, all_judges=baseline.row(n_judges).estimate,
            search="exact" if t.exact else "beam"))
    return tuple(rows)


def _named_ensemble(prep: _Prepared, posterior: ClassPosterior, req: JudgesRequest, population: int | None,
                    every: Every | None, rng: np.random.Generator, cl: Clustered | None = None) -> NamedEnsemble | None:
    idx = prep.named
    if idx is None:
        return None
    arr, n_items = prep.correct, len(prep.correct)
    members = np.array([idx])
    emp, items = empirical_subset_errors(arr, members)
    one = SubsetTable(len(idx), members, subset_error_draws(posterior, members), emp, items)
    tg = _target(one, n_items, population, req.settings.pseudo_items, req.confidence_level, rng, req.settings.interval_widening)
    if every is not None:
        tg = every.target(members, req.confidence_level, tg.score)
    if cl is not None:
        tg = widened(tg, cl.ensemble)
    sub = None if cl is None else clustered(arr[:, idx], cl.cells.cluster).cells
    fit_row = analyse(count_table(arr, idx), FitSettings(ks=(len(idx),), confidence_level=req.confidence_level), rng,
                      clusters=sub).row(len(idx))
    return NamedEnsemble(members=tuple(prep.names[j] for j in idx), estimate=float(tg.estimate[0]), low=float(tg.low[0]),
                         high=float(tg.high[0]), empirical=None if np.isnan(emp[0]) else float(emp[0]),
                         items=int(items[0]), fit=fit_row.document())


def analyse_judges(
    correct: np.ndarray,
    names: Sequence[str],
    request: JudgesRequest | None = None,
    rng: np.random.Generator | None = None,
    votes: Votes | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    clusters: np.ndarray | None = None,
    **options: Any,
) -> JudgesResult:
    """Per-judge accuracy, shared mistakes, exchangeability, the ensemble for each k, a named ensemble, costs.

    correct[i, j]: 1.0 judge j agreed with the gold label on labeled item i, 0.0 it did not, NaN no verdict.
    votes: every item's verdicts (the dataset's `Votes`, unlabeled items included): with unlabeled items and
    `request.use_unlabeled`, accuracies and shared mistakes cover every item where the labels vouch for the
    verdicts (judges/unlabeled.py), else the labels alone; the ensembles' errors cover every item either way
    (judges/every.py). `options` are the request's fields (ks=, max_error=, settings=, ...) for a request given
    field by field.
    progress(done, total, what): called as the work advances (model sweeps, then ensemble sizes).
    clusters: each labeled item's cluster code (rows of `correct`) where items are not independent (epochs): the
    intervals count effective items (judges/clustered.py) and the unlabeled items are not used.
    """
    req = request if request is not None else JudgesRequest(**options)
    rng = rng if rng is not None else np.random.default_rng(0)
    prep = _prepare(correct, names, req)
    arr, n_judges = prep.correct, len(prep.names)
    cl = None if clusters is None else clustered_items(correct, names, clusters, arr)
    votes = votes if cl is None else None
    every = every_item(prep.names, votes, len(arr), req)
    population = req.population if every is None or every.population is None else every.population
    pairs = pair_table(arr, prep.names) if every is None or not every.used else every.pairs(prep.names, arr)
    judge_rows = _judge_rows(arr, prep.names, pairs, req.confidence_level, None if every is None or not every.used else every.accuracy(),
                             None if cl is None else cl.judges)
    fit_ks = tuple(sorted({*prep.ks, n_judges}))
    baseline = analyse(count_table(arr), FitSettings(ks=fit_ks, confidence_level=req.confidence_level), rng,
                       clusters=None if cl is None else cl.cells)
    sweeps = req.settings.model.sweeps

    def step(done: int, what: str) -> None:
        if progress is not None:
            progress(done, sweeps + n_judges, what)

    posterior = sample_posterior(arr, rng, req.settings.model, lambda i: step(i, "judges: model"))
    search = search_ensembles(arr, posterior, len(arr), population, req.confidence_level, rng, req.settings,
                              lambda k: step(sweeps + k, "judges: ensembles"))
    if every is not None and every.reports:
        search = every.search(search, req.confidence_level)
    if cl is not None:
        search = widened_search(search, cl.ensemble)
    cost = None if req.max_error is None else _cheapest(search.tables, search.targets, prep.names, req.costs, req.max_error, search.exact)
    return JudgesResult(
        names=prep.names, scope=JudgesScope(len(arr), prep.dropped, population),
        confidence_level=req.confidence_level, ks=prep.ks, settings=req.settings, judges=judge_rows, pairs=pairs,
        exchangeability=cochran_q(arr), ensembles=_ensemble_rows(prep, search, baseline),
        picks=Picks(_named_ensemble(prep, posterior, req, population, every if every is not None and every.reports else None,
                                    rng, cl), cost),
        models=JudgesModels(posterior, baseline),
        unlabeled=None if every is None else every.record(),
    )
