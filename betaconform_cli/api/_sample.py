"""`sample`: when to stop labeling (live), and a stopping rule replayed on a fully labeled pool."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import P0, P1, P2, FitWarning, InputError, ParameterError
from ..inputs import Dataset, InputOptions, Keep, read_inputs
from ..parameters import check, check_optional
from ..seeds import check_seed, generator, generators
from ..settings import FitSettings
from ._common import Progress

if TYPE_CHECKING:
    from ..report.sample import LiveReport, ReplayReport


def _listed(source: Any) -> Any:
    """One path as the list of paths the readers take; data in memory (the library's DataFrame, records) as it is."""
    return [str(source)] if isinstance(source, (str, Path)) else source


def _one_dataset(source: Any, opts: InputOptions) -> Dataset:
    """The one dataset a live loop or a replay runs on: a file of several (a dataset column, --by) is an InputError
    naming them, as a pool of several is (it was a ValueError, an internal error)."""
    found = read_inputs(_listed(source), opts, Keep.ITEMS)
    if len(found) != 1:
        names = ", ".join(repr(d.name) for d in found[:4]) + (", ..." if len(found) > 4 else "")
        raise InputError(found[0].source, f"holds {len(found)} datasets ({names}); sample runs on one dataset: give a "
                                          "file of one")
    return found[0]


def one_per_cluster(ds: Dataset, items: list[Any]) -> list[Any]:
    """The items a stopping rule counts: every item, or where the items are clustered (an inspect-ai log's epochs)
    the first item of each cluster, so that the rule's sequential statistic sees independent items (docs/FORMATS.md,
    "Epochs": the rule then counts samples, not sample-epochs)."""
    if ds.clusters is None:
        return items
    seen: set[int] = set()
    out = []
    for it, code in zip(items, ds.clusters.cluster.tolist()):
        if code not in seen:
            seen.add(code)
            out.append(it)
    return out


def sample_replay(
    pool: Any, rule: Any, settings: FitSettings = FitSettings(), seed: int = 0, runs: int = 1,
    opts: InputOptions = InputOptions(), progress: Progress | None = None,
) -> ReplayReport:
    """Replay `rule` on a fully labeled pool in `runs` random orders (the paper's Tables 1 and 3 protocol)."""
    from ..counts import CountTable
    from ..mixtures import empirical_errors
    from ..report.sample import ReplayReport
    from ..stopping.document import replay_documents
    from ..stopping.live import check_ids
    from ..stopping.replay import pool_arrays, replay_one, summarize

    check_seed(seed)
    check("runs", runs)
    ds = _one_dataset(pool, opts)
    items = tuple(one_per_cluster(ds, list(ds.items or ())))
    check_ids(items, ds.source, need_ids=True, id_field=opts.record.id_field)
    items = tuple(sorted(items, key=lambda it: it.id or ""))  # by id: the same pool in any line order replays alike
    table = ds.table if ds.clusters is None else CountTable.from_pairs([it.judges for it in items], [it.correct for it in items])
    actual = empirical_errors(table, settings.ks)
    rng = generator(seed)
    arrays = pool_arrays(items)
    results = []
    for i in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)
            results.append(replay_one(rule, items, settings, rng, i, table, actual, arrays))
        if progress is not None:
            progress(i + 1, runs, "replays")
    run_docs, last = replay_documents(ds.name, ds.source, len(items), seed, rule, results, summarize(results))
    return ReplayReport(run_docs, last)


def sample(
    labeled: Any, rule: Any, settings: FitSettings = FitSettings(), seed: int = 0, opts: InputOptions = InputOptions(),
    replay: bool = False, runs: int = 1, pool: str | None = None, batch: int | None = None, show_next: bool = True,
    progress: Progress | None = None,
) -> ReplayReport | LiveReport:
    """`sample` as the command runs it: the rule replayed on the fully labeled pool `labeled` (`replay`), else the
    live decision; an option of the other mode is refused, never dropped."""
    if replay:
        if pool is not None or batch is not None:
            raise ParameterError(("replay", "pool", "batch"), f"{P0} takes the labeled pool as its argument: drop {P1} and {P2}")
        return sample_replay(labeled, rule, settings, seed, runs, opts, progress)
    if runs != 1:
        raise ParameterError(("runs", "replay"), f"{P0} needs {P1}")
    return sample_live(labeled, rule, pool, settings, seed, batch, opts, show_next)


def sample_live(
    labeled: Any, rule: Any, pool: str | None = None, settings: FitSettings = FitSettings(), seed: int = 0,
    batch: int | None = None, opts: InputOptions = InputOptions(), show_next: bool = True,
) -> LiveReport:
    """Stop, or keep labeling (and which pool items next), given the items labeled so far in labeling order. The
    decision, the fit's draws and the choice of next items each have their own generator (seeds.generators)."""
    from ..counts import CountTable
    from ..fit import analyse
    from ..fit_document import fit_document
    from ..report.sample import LiveReport
    from ..stopping.document import live_document
    from ..stopping.live import check_ids, check_labeled_in_pool, next_pool_items, pool_result

    check_optional("batch", batch)
    if pool is not None and not isinstance(labeled, (str, Path)):
        raise ParameterError("pool", f"{P0} is read with the labeled items' file as its gold (by id): give the labeled items "
                                     "as a file, not as data in memory")
    if pool is not None and labeled == "-" and pool == "-":
        raise ParameterError("pool", f"{P0} and the labeled items cannot both be '-': standard input can be read only once")
    fit_rng, decide_rng, next_rng = generators(seed, 3)  # the fit draws as `fit` does: its table is fit's
    ds = _one_dataset(labeled, opts)
    items = list(ds.items or ())
    check_ids(items, ds.source, need_ids=pool is not None, id_field=opts.record.id_field)
    pool_ds, pool_items = _read_live_pool(pool, opts, rule, labeled) if pool is not None else (None, None)
    if pool_items is not None:
        check_labeled_in_pool(items, pool_items, ds.source, opts.record.id_field)
    decision, check, why, joined = _live_decision(rule, one_per_cluster(ds, items), ds, pool_ds, pool_items, decide_rng)
    table = CountTable.from_pairs([it.judges for it in items], [it.correct for it in items])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)
        result = analyse(table, settings, fit_rng, clusters=ds.clusters)
        if joined is not None:  # the items may have been chosen by split: the labels alone are no random sample
            result = pool_result(result, joined.verdicts, joined.gold, joined.n_classes, settings, generator(seed))
    nxt = []
    if not decision.stopped and pool_items is not None:
        labeled_ids = {it.id for it in items if it.id is not None}
        nxt = next_pool_items(pool_items, labeled_ids, batch or decision.more, next_rng, joined, check)
    doc = live_document(fit_document("sample", ds.name, ds.source, table, result.record(), seed), rule, decision, check,
                        [it.id for it in items], None if pool is None else (why or _pool_votes_absent(rule, pool_ds)),
                        [p.id for p in nxt])
    return LiveReport(doc, tuple(p.raw for p in nxt), show_next)


def _live_decision(rule: Any, items: list[Any], ds: Dataset, pool_ds: Dataset | None, pool_items: list[Any] | None,
                   rng: Any) -> tuple[Any, Any, str, Any]:
    """The rule's decision: on every pool item's verdicts where the pool carries them (and the rule uses them),
    else on the labeled items; with the pool check (or None) and why the pool's verdicts were not used."""
    from ..stopping.live import decide, decide_with_votes, pool_verdicts

    joined, why = (None, "") if pool_ds is None or pool_ds.votes is None else pool_verdicts(pool_ds.votes, ds.votes)
    if joined is not None:
        decision, check = decide_with_votes(rule, items, joined.verdicts, joined.gold, rng, joined.n_classes, by_split=True)
        return decision, check, why, joined
    return decide(rule, items, rng, len(pool_items) if pool_items is not None else None), None, why, None


def _read_live_pool(pool: str, opts: InputOptions, rule: Any, labeled: str) -> tuple[Dataset | None, list[Any]]:
    """The live pool: its items (id and the line written back as a next item) and, where the rule can use them
    (stopping.live.uses_pool_votes), its verdicts through the input layer (any format it reads). A JSON Lines pool
    keeps its own lines; another format's next items are written as {"id": ...} lines. A pool the input layer
    cannot read as verdicts (ids only) is used for its ids, as before issue 17. The pool is read with the labeled
    file as its `--labels` (unless one is given): a pool without any gold of its own is then not "no labeled items"
    (which gold counts is decided by id in stopping.live.pool_verdicts, from the labeled file alone)."""
    import dataclasses

    import orjson

    from ..inputs import PoolItem, read_pool
    from ..inputs.detect import plan
    from ..inputs.paths import is_regular, is_stdin
    from ..stopping.live import uses_pool_votes

    path = Path(pool)
    jsonl = is_stdin(path) or not is_regular(path) or plan(path, opts).kind == "jsonl"
    ds = None
    if not is_stdin(path) and (uses_pool_votes(rule) or not jsonl):  # a table's ids come with its verdicts
        try:
            with_gold = opts if opts.labels is not None or labeled == "-" else dataclasses.replace(opts, labels=labeled)
            found = read_inputs([pool], with_gold, Keep.ITEMS)
            if len(found) != 1:
                raise InputError(pool, f"holds {len(found)} datasets; the pool of one live loop is one dataset")
            ds = found[0]
        except InputError:
            if not jsonl:
                raise  # not JSON Lines: its verdicts are the only way to read it
            ds = None  # a JSON Lines pool of ids (and other fields) only
    if jsonl:
        return ds, read_pool(pool, opts.record.id_field, opts.handling.duplicates)
    if ds is None or ds.votes is None or ds.votes.ids is None:
        raise InputError(pool, "a pool that is not JSON Lines is read through its verdicts by item id, and this "
                               f"{ds.reading.source_format if ds is not None and ds.reading is not None else 'input'} "
                               "does not keep item ids with them; give the pool as JSON Lines (one item per line, with "
                               "its id)", field=opts.record.id_field)
    items = [PoolItem(i, orjson.dumps({opts.record.id_field: i}) + b"\n", n + 1) for n, i in enumerate(ds.votes.ids)]
    return (ds if uses_pool_votes(rule) else None), items


def _pool_votes_absent(rule: Any, pool_ds: Dataset | None) -> str:
    from ..stopping.live import uses_pool_votes

    if not uses_pool_votes(rule):
        return "only the calibrated precision rule (patience 1) checks the pool's verdicts; this rule watches the labels"
    if pool_ds is None:
        return "the pool carries ids only (no judges' verdicts the input layer reads)"
    return "the pool carries correctness only, not the judges' verdicts"

