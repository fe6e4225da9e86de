"""One function per command: read the inputs, compute, and return a result that offers its views (report/).

The CLI parses options into the arguments below, calls one of these, and emits what it returns; a script can
call them directly. Warnings and skipped lines become the result's `notes`; nothing here prints.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .atomic import check_target, file_stem, file_stems, refuse_inputs
from .errors import FitWarning, InputError, OutputError, ParameterError, UsageError
from .gate import Gate, ScoreGate
from .inputs import Dataset, InputOptions, Keep, begin_read, read_inputs
from .settings import FitSettings, check_seed

if TYPE_CHECKING:
    from .embeddings import EmbedOptions
    from .evaluate import EvaluateSettings
    from .fit import FitResult
    from .report.doctor import DoctorReport
    from .report.evaluate import EvaluationReport
    from .report.fit import FitReport
    from .report.judges import JudgesReport
    from .report.sample import LiveReport, ReplayReport
    from .report.score import ScoreReport
    from .report.transfer import TransferReport
    from .transfer import TransferSettings

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class SaveTo:
    """Where saved fits go: one file (`path`, one input only) or one <dataset>.yaml per input in `directory`."""

    path: Path | None = None
    directory: Path | None = None

    def __post_init__(self) -> None:
        if self.path is not None and self.directory is not None:
            raise ParameterError(("save", "save_dir"), "use {0} or {1}, not both")
        if self.directory is not None and self.directory.exists() and not self.directory.is_dir():
            raise OutputError(f"{self.directory}: cannot save fits there: not a directory")
        if self.path is not None:
            check_target(self.path, "saved fit")
            from .savedfit import check_fit_name

            check_fit_name(self.path)

    def __bool__(self) -> bool:
        return self.path is not None or self.directory is not None

    def targets(self, names: Sequence[str]) -> list[Path]:
        """One file per dataset inside `directory`, named by atomic.file_stems; two datasets with one name would
        overwrite each other, so they are refused."""
        if self.path is not None:
            if len(names) > 1:
                raise ParameterError(("save", "save_dir"), f"{{0}} takes one input, got {len(names)}; use {{1}} for many")
            return [self.path]
        assert self.directory is not None
        seen: dict[str, int] = {}
        for n in names:
            seen[n] = seen.get(n, 0) + 1
        dup = next((n for n, c in seen.items() if c > 1), None)
        if dup is not None:
            raise OutputError(f"{self.directory}: two inputs are both named {dup!r}, so both would be saved as "
                              f"{file_stem(dup)}.yaml; rename one or save them separately")
        # names come from data (a dataset column, an inspect task): never a path ("../x", "/etc/x", "a/b")
        return [self.directory / f"{stem}.yaml" for stem in file_stems(names)]


def skip_note(ds: Dataset) -> list[str]:
    """What reading skipped, for stderr: files of the arguments left out (this tool's own outputs), invalid lines
    of a JSON Lines file, or items and why."""
    if not ds.skipped:
        return list(ds.left_out)
    if ds.reading is None or ds.reading.unit == "line":
        return [*ds.left_out, f"{ds.source}: skipped {ds.skipped} invalid line(s)"]
    why = "; ".join(f"{s.count} {s.reason}" for s in ds.reading.skips)
    return [*ds.left_out, f"{ds.source}: skipped {ds.skipped} item(s) of {ds.name} ({why})"]


def _fit_one(ds: Dataset, settings: FitSettings, seed: int, notes: list[str], unlabeled: bool = True) -> FitResult:
    import numpy as np

    from .votes import analyse_with_votes

    notes += skip_note(ds)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FitWarning)
        result = analyse_with_votes(ds.table, ds.votes, settings, np.random.default_rng(seed), unlabeled)
    notes += [f"warning: {ds.source}: {w.message}" for w in caught if issubclass(w.category, FitWarning)]
    est = result.unlabeled
    if est is not None and not est.used_unlabeled and unlabeled:
        notes.append(f"{ds.source}: {est.unlabeled_items} unlabeled item(s) not used: {est.reason}")
    return result


def fit(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), settings: FitSettings = FitSettings(), seed: int = 0,
    gate: Gate | None = None, chart: bool = True, save: SaveTo = SaveTo(), embed: EmbedOptions | None = None,
    progress: Progress | None = None, unlabeled: bool = True,
) -> FitReport:
    """Fit every input and return its error table beside the baselines (and the gate's verdict). Items without gold
    count too (`unlabeled=False`: labels only): their verdicts inform the estimate where the labels vouch for it
    (votes.analyse_with_votes).

    progress(done, total, what): after each dataset (a folder of many files can take a while)."""
    from .report.fit import FitReport, fit_document, saved_document

    check_seed(seed)
    if embed is not None and not save:
        raise ParameterError(("embed", "save", "save_dir"), "{0} adds the mean embedding to a saved fit: add {1} FILE or {2} DIR")
    # a big file's workers start counting now, while this process imports scipy (~0.2 s), then count a smaller
    # first share itself (parent_share 0.2 was fastest of 0.2, 0.5, 1 on 2 cores: 0.69 vs 0.72 vs 0.80 s)
    pending = begin_read(arguments, opts, Keep.ITEMS if embed is not None else Keep.COUNTS, parent_share=0.2)
    from .fit import fitted_counts

    datasets = pending.result()
    targets = save.targets([ds.name for ds in datasets]) if save else []
    notes: list[str] = []
    docs = []
    checks = []
    counts = []
    saves: list[tuple[Path, dict[str, Any]]] = []
    embedder = None
    for i, ds in enumerate(datasets):
        result = _fit_one(ds, settings, seed, notes, unlabeled)
        check = gate.check(ds.name, [r.to_dict() for r in result.rows]) if gate is not None else None
        doc = fit_document("fit", ds.name, ds.source, ds.table, result, seed, ds.skipped, check, unlabeled=ds.unlabeled_items)
        docs.append(doc)
        counts.append(fitted_counts(ds.table.histogram_by_judges(), result.fit.mixture))
        checks += [check] if check is not None else []
        if progress is not None:
            progress(i + 1, len(datasets), f"fit: {ds.name}")
        if targets:
            vector = None
            if embed is not None:
                from . import embeddings

                embedder = embedder or embeddings.embedder_for(embed)
                vector = embeddings.dataset_embedding(embedder, ds)
            saves.append((targets[i], saved_document(doc, vector)))
    return FitReport(tuple(docs), tuple(checks), chart, tuple(notes), tuple(saves), tuple(counts))


def report(paths: Sequence[str], gate: Gate | None = None, chart: bool = True) -> FitReport:
    """The saved fits' tables, as `fit` printed them (and the gate's verdict)."""
    from .distributions import Mixture
    from .fit import fitted_counts
    from .report.fit import FitReport, document_from_saved
    from .savedfit import expand_fits, load_fit

    docs = []
    checks = []
    counts = []
    for p in expand_fits(paths):
        saved = load_fit(p)
        check = gate.check(saved["dataset"], saved["error_rates"]) if gate is not None else None
        docs.append(document_from_saved(saved, str(p), check))
        counts.append(fitted_counts(saved["histogram"], Mixture.from_dict(saved["model"])))
        checks += [check] if check is not None else []
    return FitReport(tuple(docs), tuple(checks), chart, counts=tuple(counts))


# --- sample -------------------------------------------------------------------------------------------------


def _rule_doc(rule: Any) -> dict[str, Any]:
    return {"rule": rule.name, "rule_settings": rule.describe(), "theoretical_samples": rule.theoretical_samples()}


def sample_replay(
    pool: str, rule: Any, settings: FitSettings = FitSettings(), seed: int = 0, runs: int = 1,
    opts: InputOptions = InputOptions(), progress: Progress | None = None,
) -> ReplayReport:
    """Replay `rule` on a fully labeled pool in `runs` random orders (the paper's Tables 1 and 3 protocol)."""
    import numpy as np

    from .evaluate.settings import MAX_RUNS
    from .fit import empirical_errors
    from .report.sample import ReplayReport
    from .stopping.live import check_ids
    from .stopping.replay import pool_arrays, replay_one, summarize

    check_seed(seed)
    if not 1 <= runs <= MAX_RUNS:
        raise ParameterError("runs", f"must be from 1 to {MAX_RUNS}; got {runs}")
    (ds,) = read_inputs([pool], opts, Keep.ITEMS)
    items = ds.items or ()
    check_ids(items, ds.source, need_ids=True, id_field=opts.id_field)
    items = tuple(sorted(items, key=lambda it: it.id or ""))  # by id: the same pool in any line order replays alike
    actual = empirical_errors(ds.table, settings.ks)
    rng = np.random.default_rng(seed)
    arrays = pool_arrays(items)
    results = []
    for i in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)
            results.append(replay_one(rule, items, settings, rng, i, ds.table, actual, arrays))
        if progress is not None:
            progress(i + 1, runs, "replays")
    return ReplayReport(ds.name, ds.source, len(items), seed, _rule_doc(rule), tuple(r.to_dict() for r in results), summarize(results))


def sample_live(
    labeled: str, rule: Any, pool: str | None = None, settings: FitSettings = FitSettings(), seed: int = 0,
    batch: int | None = None, opts: InputOptions = InputOptions(), show_next: bool = True,
) -> LiveReport:
    """Stop, or keep labeling (and which pool items next), given the items labeled so far in labeling order."""
    import numpy as np

    from .counts import CountTable
    from .fit import analyse
    from .report.fit import fit_document
    from .report.sample import LiveReport
    from .stopping.live import (
        check_ids,
        check_labeled_in_pool,
        decide,
        decide_with_votes,
        next_pool_items,
        pool_verdicts,
    )
    from .stopping.select import pool_result

    check_seed(seed)
    if batch is not None and batch < 1:
        raise ParameterError("batch", f"must be at least 1; got {batch}")
    if pool is not None and labeled == "-" and pool == "-":
        raise ParameterError("pool", "{0} and the labeled items cannot both be '-': standard input can be read only once")
    (ds,) = read_inputs([labeled], opts, Keep.ITEMS)
    items = list(ds.items or ())
    check_ids(items, ds.source, need_ids=pool is not None, id_field=opts.id_field)
    pool_ds, pool_items = _read_live_pool(pool, opts, rule, labeled) if pool is not None else (None, None)
    if pool_items is not None:
        check_labeled_in_pool(items, pool_items, ds.source, opts.id_field)
    joined, why = (None, "") if pool_ds is None or pool_ds.votes is None else pool_verdicts(pool_ds.votes, ds.votes)
    if joined is not None:
        decision, check = decide_with_votes(rule, items, joined.verdicts, joined.gold, np.random.default_rng(seed), joined.n_classes,
                                            by_split=True)
    else:
        decision, check = decide(rule, items, np.random.default_rng(seed), len(pool_items) if pool_items is not None else None), None
    table = CountTable.from_pairs([it.judges for it in items], [it.correct for it in items])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)
        result = analyse(table, settings, np.random.default_rng(seed))
        if joined is not None:  # the items may have been chosen by split: the labels alone are no random sample
            result = pool_result(result, joined.verdicts, joined.gold, joined.n_classes, settings, np.random.default_rng(seed))
    nxt = []
    if not decision.stopped and pool_items is not None:
        labeled_ids = {it.id for it in items if it.id is not None}
        nxt = next_pool_items(pool_items, labeled_ids, batch or decision.more, np.random.default_rng(seed), joined, check)
    extra, message = _live_extra(rule, decision, items, check, pool is not None, why, pool_ds)
    doc = fit_document("sample", ds.name, ds.source, table, result, seed, **extra, message=message,
                       next_ids=[p.id for p in nxt])
    return LiveReport(doc, tuple(p.raw for p in nxt), show_next)


def _live_extra(rule: Any, decision: Any, items: list[Any], check: Any, has_pool: bool, why: str,
                pool_ds: Dataset | None) -> tuple[dict[str, Any], str]:
    """The live report's decision keys and its message: the rule, the decision, and how the pool's verdicts were
    used (`check`: the vote-split check; None: the labels decided) and how the next items were chosen."""
    if decision.stopped_by == "pool exhausted":
        message = f"stop: pool exhausted (r = {decision.samples}): every pool item is labeled and the target was missed"
    elif decision.stopped:
        message = f"stop: enough labels (r = {decision.samples})"
    else:
        message = f"continue: label about {decision.more} more"
    extra: dict[str, Any] = {
        "mode": "live", **_rule_doc(rule), "stopped": decision.stopped, "stopped_by": decision.stopped_by,
        "samples": decision.samples, "stop_at": decision.stop_at, "more_needed": decision.more,
        "statistic": decision.statistic, "labeled_ids": [it.id for it in items],
    }
    if check is not None:
        est = check.estimate
        extra["pool_verdicts"] = {"used": True, "method": est.method, "reason": est.reason, "labeled_items": est.labeled_items,
                                  "unlabeled_items": est.unlabeled_items, "half_width": decision.statistic, "at_k": check.at_k,
                                  "monitoring_level": est.confidence_level, "next_by": "vote split",
                                  "decided_by": "vote split" if est.used_unlabeled else "post-stratified by split"}
        extra["stopping_intervals"] = [{"k": r.k, "low": r.low, "high": r.high, "estimate": r.estimate} for r in est.rows]
        message += f" (precision checked on all {est.labeled_items + est.unlabeled_items} pool items' verdicts)"
    else:
        if has_pool:
            extra["pool_verdicts"] = {"used": False, "reason": why or _pool_votes_absent(rule, pool_ds), "next_by": "random"}
        if "last" in decision.path.extra:
            extra["stopping_intervals"] = [{"k": k, **v} for k, v in decision.path.extra["last"].items()]
    return extra, message


def _read_live_pool(pool: str, opts: InputOptions, rule: Any, labeled: str) -> tuple[Dataset | None, list[Any]]:
    """The live pool: its items (id and the line written back as a next item) and, where the rule can use them
    (stopping.live.uses_pool_votes), its verdicts through the input layer (any format it reads). A JSON Lines pool
    keeps its own lines; another format's next items are written as {"id": ...} lines. A pool the input layer
    cannot read as verdicts (ids only) is used for its ids, as before issue 17. The pool is read with the labeled
    file as its `--labels` (unless one is given): a pool without any gold of its own is then not "no labeled items"
    (which gold counts is decided by id in stopping.live.pool_verdicts, from the labeled file alone)."""
    import dataclasses

    import orjson

    from .errors import InputError
    from .inputs import PoolItem, read_pool
    from .inputs.detect import plan
    from .inputs.paths import is_regular, is_stdin
    from .stopping.live import uses_pool_votes

    path = Path(pool)
    jsonl = is_stdin(path) or not is_regular(path) or plan(path, opts).kind == "jsonl"
    ds = None
    if not is_stdin(path) and uses_pool_votes(rule):
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
        return ds, read_pool(pool, opts.id_field, opts.duplicates)
    if ds is None or ds.votes is None or ds.votes.ids is None:
        raise InputError(pool, "a pool that is not JSON Lines is read through its verdicts by item id, and this "
                               f"{ds.reading.source_format if ds is not None and ds.reading is not None else 'input'} "
                               "does not keep item ids with them; give the pool as JSON Lines (one item per line, with "
                               "its id)", field=opts.id_field)
    items = [PoolItem(i, orjson.dumps({opts.id_field: i}) + b"\n", n + 1) for n, i in enumerate(ds.votes.ids)]
    return ds, items


def _pool_votes_absent(rule: Any, pool_ds: Dataset | None) -> str:
    from .stopping.live import uses_pool_votes

    if not uses_pool_votes(rule):
        return "only the calibrated precision rule (patience 1) checks the pool's verdicts; this rule watches the labels"
    if pool_ds is None:
        return "the pool carries ids only (no judges' verdicts the input layer reads)"
    return "the pool carries correctness only, not the judges' verdicts"


# --- transfer -----------------------------------------------------------------------------------------------


def transfer(
    targets: Sequence[str], sources: Sequence[str], tsettings: TransferSettings, settings: FitSettings = FitSettings(),
    seed: int = 0, opts: InputOptions = InputOptions(), embed: EmbedOptions | None = None, save: SaveTo = SaveTo(),
    progress: Callable[[int, int], None] | None = None,
) -> TransferReport:
    """Borrow strength from saved source fits for targets with a few labeled items (with texts)."""
    from . import embeddings
    from . import transfer as tr
    from .report.fit import saved_document
    from .report.transfer import TransferReport, transfer_document
    from .savedfit import expand_fits, load_fit

    check_seed(seed)
    fits = [t for t in targets if t.endswith((".yaml", ".yml"))]
    if fits:
        raise ParameterError("sources", f"{fits[0]}: a target must be judgment data; this looks like a saved fit. Give each "
                                        "source its own {0}, or one quoted glob: {0} 'fits/*.yaml'")
    source_paths = expand_fits(sources, what="source")
    srcs = [tr.Source.from_saved(load_fit(p), str(p)) for p in source_paths]
    datasets = read_inputs(targets, opts, Keep.ITEMS)
    save_paths = save.targets([ds.name for ds in datasets]) if save else []
    refuse_inputs([("saved fit", p) for p in save_paths], source_paths)  # --save-dir onto a source of the same name
    texts = {ds.name: embeddings.item_texts(ds) for ds in datasets}  # a missing text fails before any model time
    embedder = embeddings.embedder_for(embed or embeddings.EmbedOptions())
    tr.check_embeddings(srcs, embedder.name, embedder.dimension)
    embedder.progress = progress
    vectors = {name: embeddings.mean_embedding(embedder, t) for name, t in texts.items()}
    embedder.progress = None
    results = tr.transfer_many([(ds.table, vectors[ds.name]) for ds in datasets], srcs, tsettings, settings, seed)
    notes: list[str] = []
    docs = []
    saves = []
    for i, (ds, res) in enumerate(zip(datasets, results)):
        notes += skip_note(ds)
        if res.conflict:
            notes.append(f"warning: {ds.name}: prior conflict: {res.conflict_reason}")
        elif res.no_source_applies:
            notes.append(f"{ds.name}: no source applies ({res.no_source_reason}): the estimate is the labels' own")
        doc = transfer_document(ds.name, ds.source, ds.table, res, seed, ds.skipped)
        docs.append(doc)
        if save_paths:
            emb = {"model": embedder.name, "dimension": int(embedder.dimension), "texts": len(texts[ds.name]),
                   "mean": [float(x) for x in vectors[ds.name]]}
            saves.append((save_paths[i], saved_document(doc, emb)))
    return TransferReport(tuple(docs), (), False, tuple(notes), tuple(saves))


def transfer_settings(config: Path | None = None, **overrides: Any) -> TransferSettings:
    """The transfer's hyper-parameters: configs/transfer.yaml-like `config` (safe YAML), then `overrides`."""
    from .savedfit import read_yaml
    from .transfer import settings_from_config

    cfg = (read_yaml(config, "transfer config") or {}) if config is not None else {}
    return settings_from_config(cfg, str(config or "config"), **overrides)


# --- evaluate -----------------------------------------------------------------------------------------------


def evaluate(
    arguments: Sequence[str], settings: EvaluateSettings, seed: int = 0, opts: InputOptions = InputOptions(),
    rules: tuple[list[tuple[str, Any]], dict[str, Any]] | None = None, transfer: bool = False,
    embed: EmbedOptions | None = None, per_run: bool = False, progress: Progress | None = None,
) -> EvaluationReport:
    """The paper's experiments on fully labeled data: fixed r, adaptive stopping (`rules`) or leave-one-out
    transfer (`transfer`)."""
    from . import evaluate as ev
    from .report.evaluate import EvaluationReport

    check_seed(seed)
    datasets = read_inputs(arguments, opts, Keep.ITEMS if transfer else Keep.COUNTS)
    notes = [line for ds in datasets for line in skip_note(ds)]
    named = [(ds.name, ds.table) for ds in datasets]
    if transfer:
        ev.check_transfer_cells([(ds.name, _group(ds), ds.n_items) for ds in datasets], settings.sizes)  # before any embedding
        result = ev.evaluate_transfer(_transfer_data(datasets, embed), settings, seed, progress)
    elif rules is not None:
        result = ev.evaluate_adaptive(named, rules[0], settings, seed, progress, rules[1])
    else:
        result = ev.evaluate(named, settings, seed, progress)
    return EvaluationReport(result, per_run, tuple(notes))


def _group(ds: Dataset) -> str:
    """A dataset's group in leave-one-out transfer: the folder it came from."""
    return str(Path(ds.source).resolve().parent)


def _transfer_data(datasets: Sequence[Dataset], embed: EmbedOptions | None) -> list[Any]:
    """Each dataset's items and text embeddings; its group: the folder it came from."""
    import numpy as np

    from . import embeddings
    from .evaluate import TransferData

    embedder = embeddings.embedder_for(embed or embeddings.EmbedOptions())
    out = []
    for ds in datasets:
        items = ds.items or ()
        vectors = np.asarray(embedder.embed(embeddings.item_texts(ds)), dtype=np.float64)
        out.append(TransferData(
            ds.name, _group(ds),
            np.array([it.judges for it in items], dtype=np.int64), np.array([it.correct for it in items], dtype=np.int64),
            vectors, embedder.name,
        ))
    return out


def doctor(arguments: Sequence[str], opts: InputOptions = InputOptions()) -> DoctorReport:
    """How each input is read (format, column roles, items, judges, skipped rows), without fitting anything."""
    from .doctor import doctor_document
    from .report.doctor import DoctorReport

    datasets = read_inputs(arguments, opts, Keep.JUDGMENTS)
    return DoctorReport(tuple(doctor_document(ds) for ds in datasets), tuple(n for ds in datasets for n in ds.left_out))


def judges(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), ks: Sequence[int] | None = None,
    confidence_level: float = 0.9, seed: int = 0, ensemble: Sequence[str] | None = None,
    costs: dict[str, float] | None = None, max_error: float | None = None, population: int | None = None,
    progress: Progress | None = None, unlabeled: bool = True,
) -> JudgesReport:
    """Per-judge accuracy, shared mistakes, and the ensemble to run for each k (named judges; docs/JUDGES.md).
    Items with verdicts and no gold count too (`unlabeled=False`: labels only) where the labels vouch for their
    verdicts (judges/every.py)."""
    import numpy as np

    from .judges import analyse_judges
    from .judges.analysis import DATA_SEEDED, JudgesRequest, data_seed
    from .report.judges import JudgesReport, judges_document

    check_seed(seed)
    docs = []
    notes: list[str] = []
    for ds in read_inputs(arguments, opts, Keep.JUDGMENTS):
        notes += skip_note(ds)
        if len(ds.judge_names) < 2:
            raise ParameterError("judges", f"{ds.source}: needs at least 2 named judges; found {len(ds.judge_names)} "
                                           "(counts carry no per-judge verdicts; `fit` works on them)")
        matrix = ds.judgment_matrix()
        label = f"{ds.name}: "
        step = None if progress is None else (lambda done, total, what, _l=label: progress(done, total, _l + what))
        try:
            # common random numbers: the model's draws are seeded by the labels themselves, so the same data gives
            # the same ensembles, intervals and --max-error outcome for any line order and any --seed (data_seed)
            rng = np.random.default_rng(data_seed(matrix, ds.judge_names))
            request = JudgesRequest(ks, confidence_level, ensemble, costs, max_error, population, unlabeled)
            result = analyse_judges(matrix, ds.judge_names, request, rng, ds.votes, progress=step)
        except ParameterError as exc:  # the option, and the file it was checked against
            raise ParameterError(exc.params, ds.source.replace("{", "{{").replace("}", "}}") + ": " + exc.template) from None
        except UsageError as exc:
            raise UsageError(f"{ds.source}: {exc}") from None
        docs.append(judges_document(ds.name, ds.source, seed, {**result.to_dict(), "random_numbers": DATA_SEEDED}))
    return JudgesReport(tuple(docs), tuple(notes))


# --- score --------------------------------------------------------------------------------------------------

# core parameters that are the data, not an option: an error about them is an error in that input file
_DATA_PARAMS = frozenset({"gold", "verdicts", "counts", "clusters", "ids_a", "ids_b", "verdicts_a", "verdicts_b"})


class _About:
    """Turns the core's errors about one dataset into errors that name its file: the data's as InputError, an
    option's (`positive`) as the same ParameterError prefixed by the file."""

    def __init__(self, source: str):
        self.source = source

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if not isinstance(exc, ParameterError):
            return
        if exc.param in _DATA_PARAMS:
            raise InputError(self.source, exc.render(lambda p: p)) from None
        raise ParameterError(exc.params, self.source.replace("{", "{{").replace("}", "}}") + ": " + exc.template) from None


def _votes(ds: Dataset, opts: InputOptions) -> Any:
    """The dataset's verdicts, or an error that says score needs them (correctness-only inputs carry none)."""
    if ds.votes is None:
        raise InputError(ds.source, "carries no verdicts: judgments 0/1, correct counts and counts tables say only "
                                    "whether each judge was right, and score needs what each judge said on every item "
                                    f"(JSON Lines '{opts.verdicts_field}' with '{opts.label_field}' on some items; "
                                    "tables --verdict-col with --gold-col)")
    return ds.votes


def score(
    arguments: Sequence[str], opts: InputOptions = InputOptions(), positive: str | None = None,
    confidence_level: float = 0.9, target: str = "set", gate: ScoreGate | None = None, compare: bool = False,
) -> ScoreReport:
    """The evaluated system's judge-corrected pass rate per input (docs/SCORE.md); with `compare`, the difference
    a - b of two inputs on the items they share, paired by item id."""
    from . import score as core
    from .report.score import ScoreReport, score_document

    core.check_options(confidence_level, target)
    if gate is not None and gate.difference != compare:
        raise ParameterError(("min_score", "compare"), "{0} gates a difference only with {1}, and a score only without it")
    clustered = opts.cluster_field is not None
    datasets = read_inputs(arguments, opts, Keep.ITEMS if compare or clustered else Keep.COUNTS)
    notes: list[str] = []
    for ds in datasets:
        notes += skip_note(ds)
    if compare:
        if len(datasets) != 2:
            raise ParameterError("compare", f"compares exactly two inputs (a - b); got {len(datasets)}")
        doc = _compare(datasets[0], datasets[1], opts, positive, confidence_level, target)
        check = gate.check(doc["dataset"], doc["difference"]) if gate is not None else None
        if check is not None:
            doc["gate"] = check.to_dict()
        return ScoreReport((doc,), (check,) if check is not None else (), tuple(notes))
    docs = []
    checks = []
    for ds in datasets:
        votes = _votes(ds, opts)
        with _About(ds.source):
            result = core.score_votes(votes, positive, clusters=votes_clusters(ds, opts), confidence_level=confidence_level,
                                      target=target)
        check = gate.check(ds.name, result.score.to_dict()) if gate is not None else None
        docs.append(score_document(ds.name, ds.source, result.to_dict(), check))
        checks += [check] if check is not None else []
    return ScoreReport(tuple(docs), tuple(checks), tuple(notes))


def votes_clusters(ds: Dataset, opts: InputOptions) -> Any:
    """Each item's cluster id (in the votes' item order) when one was asked for (--cluster-field), else None; an
    error when it was asked for and the input's reader kept none (tables and tool logs keep no cluster ids)."""
    if opts.cluster_field is None:
        return None
    clusters = getattr(ds.votes, "clusters", None)
    if clusters is None:
        raise InputError(ds.source, f"--cluster-field '{opts.cluster_field}': clusters are read from JSON Lines only "
                                    f"(this input is {ds.shape}); write one line per item with the cluster id in a field")
    return clusters


def _compare(a: Dataset, b: Dataset, opts: InputOptions, positive: str | None, confidence_level: float,
             target: str) -> dict[str, Any]:
    import numpy as np

    from . import score as core
    from .report.score import compare_document, score_document

    sides = []
    for ds in (a, b):
        votes = _votes(ds, opts)
        if votes.ids is None or votes.item_pattern is None:
            raise InputError(ds.source, f"--compare pairs items by id, and this input ({ds.shape}) keeps no item ids "
                                        "with its verdicts; write it as JSON Lines with an id field (--id-field)")
        with _About(ds.source):
            code = core.resolve_positive(votes.classes, positive)
            if len(set(votes.ids)) != len(votes.ids):
                raise ParameterError("ids_a", "repeats an item id; a paired comparison needs each item once per system")
        verdicts, gold = votes.per_item()
        passes = (np.where(verdicts < 0, -1, verdicts == code).astype(np.int8),
                  np.where(gold < 0, -1, gold == code).astype(np.int8))
        clusters = votes_clusters(ds, opts)
        sides.append((ds, votes, votes.classes[code], passes, clusters))
    (da, va, pos_a, (vra, ga), ca), (db, vb, pos_b, (vrb, gb), cb) = sides
    if str(pos_a).strip().lower() != str(pos_b).strip().lower():
        raise ParameterError("positive", f"passes {pos_a!r} in {da.source} but {pos_b!r} in {db.source}; "
                                         "name the class that passes in both with {0}")
    if not set(va.ids) & set(vb.ids):
        raise InputError(f"{da.source} and {db.source}", f"share no item id ('{opts.id_field}'); --compare pairs the two "
                                                         "systems' answers to the same items by id")
    ia, ib = core.align_items(va.ids, vb.ids)
    clusters = None
    if ca is not None or cb is not None:
        clusters = np.asarray(ca if ca is not None else cb, dtype=object)[ia if ca is not None else ib]
    with _About(f"{da.source} and {db.source}"):
        result = core.compare_scores(vra[ia], ga[ia], vrb[ib], gb[ib], 1, clusters=clusters,
                                     confidence_level=confidence_level, target=target)
    doc_a = score_document(da.name, da.source, {**result.a.to_dict(), "positive": pos_a})
    doc_b = score_document(db.name, db.source, {**result.b.to_dict(), "positive": pos_b})
    return compare_document(doc_a, doc_b, result.to_dict())
