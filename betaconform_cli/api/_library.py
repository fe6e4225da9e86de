"""The library's functions (`betaconform_cli.fit(source, **options)`, docs/API.md): each command's options by their
Python names (`gold_col=`, `judge_cols=`, `confidence_level=`, `max_error=`), turned into the typed arguments of the
api function the CLI calls (api.fit, api.score, ...), with the same constructors and checks (InputOptions,
FitSettings, make_gate, make_rule): the computation is one path, and the CLI's one-line errors are raised here too.

`source`: a path (str or Path), a list of paths, a pandas or polars DataFrame, a pyarrow Table, a list of dicts,
or {name: DataFrame or list of dicts} (inputs/memory.py); `name=` names the one dataset of data in memory.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ParameterError
from ..inputs import InputOptions
from ..parameters import CONFIDENCE_LEVEL, DRIFT_CONFIDENCE_LEVEL, check
from ..settings import FitSettings, parse_ks

if TYPE_CHECKING:
    from ..report.doctor import DoctorReport
    from ..report.drift import DriftReport
    from ..report.fit import FitReport
    from ..report.judges import JudgesReport
    from ..report.plan import PlanReport
    from ..report.sample import LiveReport, ReplayReport
    from ..report.score import ScoreReport
    from ..report.slices import SlicesReport


def input_options(options: dict[str, Any], slices: bool = False, command: str = "") -> InputOptions:
    """InputOptions from the CLI's input options by their Python names (`gold_col`, `judge_cols`, `labels`, ...);
    `judge_cols` may be a list of names or globs, `labels` a Path. An unknown name is a TypeError, as Python's own,
    naming `command` and the nearest option names (`gold_column` -> did you mean 'gold_col'?).
    `by` (slices) only where the command reports slices (`slices`: fit, judges, score)."""
    given = dict(options)
    _known(given, command)
    if given.get("by") is not None and not slices:
        raise ParameterError("by", "slices are reported by fit, judges and score only (docs/SLICES.md)")
    cols = given.get("judge_cols")
    if cols is not None and not isinstance(cols, str):
        given["judge_cols"] = ",".join(str(c) for c in cols)
    labels = given.get("labels")
    if labels is not None:
        from ..inputs.memory import in_memory

        if not isinstance(labels, (str, os.PathLike)) or in_memory(labels) is not None:
            raise ParameterError("labels", f"is the path of a gold file (CSV, JSON Lines); got a {type(labels).__name__}: "
                                           "for gold in memory, give it in the data's own gold column "
                                           "(df.merge(gold, on='item_id'))")
        given["labels"] = os.fspath(labels)
    return InputOptions(**given)


def _known(given: dict[str, Any], command: str) -> None:
    """TypeError for an option no reader and not `command` takes, as Python words it, with the nearest names."""
    import difflib
    import inspect

    readers = _reader_options()
    unknown = sorted(set(given) - set(readers))
    if not unknown:
        return
    own = [n for n in inspect.signature(globals()[command]).parameters if n != "source"] if command in globals() else []
    near = difflib.get_close_matches(unknown[0], [*own, *sorted(readers)], n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(map(repr, near))}?)" if near else " (docs/API.md lists the options)"
    raise TypeError(f"{command or 'InputOptions'}() got an unexpected keyword argument {unknown[0]!r}{hint}")


def _seed(seed: Any) -> Any:
    """numpy's integers as the int they are (the seed is written into every output); anything else is checked as given."""
    import numbers

    return int(seed) if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) else seed


def _source(source: Any, name: str | None) -> Any:
    """Data in memory under its dataset name; `name` with paths is refused (a file's dataset is its stem)."""
    from ..inputs.memory import given

    source = given(source)
    if name is None:
        return source
    from ..inputs.memory import in_memory

    if in_memory(source) not in ("frame", "records"):
        raise ParameterError("name", "names data in memory (a DataFrame, an Arrow table or records); a file's dataset "
                                     "is named by the file")
    return {str(name): source}


def _ks(ks: str | int | Sequence[int] | None, default: str = "1-11") -> tuple[int, ...]:
    """'1-11', '1,3,5', a list of ints, one int, or None (the command's default)."""
    if ks is None:
        return parse_ks(default)
    if isinstance(ks, str):
        return parse_ks(ks)
    given: list[Any] = list(ks) if hasattr(ks, "__iter__") else [ks]  # one size: ks=3 is ks=[3], as --ks 3 is
    # checked as the CLI's --ks is: 1.7 is not truncated to 1, [] or 0 or 300 not passed on
    check("ks", given)
    return tuple(sorted({int(k) for k in given}))


def _real(x: Any) -> Any:
    """An int given for a fraction or a cost as the float the CLI parses (its messages then say -1.0, as the CLI's)."""
    return float(x) if type(x) is int else x


def _settings(ks: Any, confidence_level: float, method: str, components: int | str) -> FitSettings:
    return FitSettings(method=method, components=components, ks=_ks(ks), confidence_level=confidence_level)


def _embed(embedding_model: str | Path | None, cache_dir: str | Path | None, use_cache: bool) -> Any:
    from ..embeddings import EmbedOptions

    return EmbedOptions(None if embedding_model is None else str(embedding_model),
                        None if cache_dir is None else Path(cache_dir), use_cache)


def fit(
    source: Any, *, name: str | None = None, ks: str | int | Sequence[int] | None = None, confidence_level: float = CONFIDENCE_LEVEL,
    seed: int = 0, method: str = "default", components: int | str = "auto", max_error: float | None = None,
    at_k: int | None = None, on: str = "upper", save: str | Path | None = None, save_dir: str | Path | None = None,
    embed: bool = False, embedding_model: str | Path | None = None, cache_dir: str | Path | None = None,
    use_cache: bool = True, unlabeled: bool = True, chart: bool = True,
    progress: Callable[[int, int, str], None] | None = None, adjust: str | None = None, **input_opts: Any,
) -> FitReport | SlicesReport:
    """`betaconform fit`: the majority-vote error for k judges beside the baselines (api.fit). `save`/`save_dir`
    write the saved fits as the CLI does; `result.error(k, confidence_level=...)` at another level fits again.
    `by="metadata.category"` (any field, column or `length:FIELD[:N]`): the numbers per slice, adjusted by `adjust`
    (holm, bh, none; docs/SLICES.md)."""
    from ..inputs.memory import given
    from ..savedfit import dump_fit
    from . import SaveTo
    from . import fit as api_fit

    source = given(source)  # a generator read once, here: the refit below reads the same records
    opts = input_options(input_opts, slices=True, command="fit")
    settings = _settings(ks, confidence_level, method, components)
    from ..gate import make_gate

    target = SaveTo(None if save is None else Path(save), None if save_dir is None else Path(save_dir))
    report = api_fit(_source(source, name), opts, settings, _seed(seed), make_gate(max_error, at_k, on), chart, target,
                     _embed(embedding_model, cache_dir, use_cache) if embed else None, progress, unlabeled, adjust)
    from ..report.fit import FitReport as Fitted

    if not isinstance(report, Fitted):  # slices (by=): no saved fit, no refit
        return report
    for path, body in report.saves:
        dump_fit(path, body)
    refit = Refit(source, {"name": name, "ks": ks, "seed": seed, "method": method, "components": components,
                           "max_error": max_error, "at_k": at_k, "on": on, "unlabeled": unlabeled, "chart": chart,
                           **input_opts})
    from ..report.failed import WithFailures, with_failures

    if isinstance(report, WithFailures):  # some inputs failed (failed_inputs.py): the good ones' result refits
        inner: FitReport = report.inner
        return with_failures(dataclasses.replace(inner, refit=refit), report.failed_inputs)
    return dataclasses.replace(report, refit=refit)


@dataclasses.dataclass(frozen=True)
class Refit:
    """`fit` again with the same source and options at another confidence level (FitReport.error(k, alpha=...)): an
    object, not a closure, so that a result pickles (with its source: a DataFrame, records or paths)."""

    source: Any
    options: dict[str, Any]

    def __call__(self, level: float) -> FitReport:
        from ..report.fit import FitReport as Fitted

        again = fit(self.source, confidence_level=level, **self.options)
        assert isinstance(again, Fitted)
        return again


def load_fit(path: str | Path | Sequence[str | Path], *, max_error: float | None = None, at_k: int | None = None,
             on: str = "upper") -> FitReport:
    """`betaconform report`: saved fits (a file, a folder, a glob, or a list of them) as `fit` showed them."""
    from ..gate import make_gate
    from . import report

    paths = [str(path)] if isinstance(path, (str, Path)) else [str(p) for p in path]
    return report(paths, make_gate(max_error, at_k, on))


def score(
    source: Any, *, name: str | None = None, positive: str | None = None, confidence_level: float = CONFIDENCE_LEVEL,
    target: str = "set", cluster_field: str | None = None, compare: bool = False, min_score: float | None = None,
    on: str | None = None, adjust: str | None = None, **input_opts: Any,
) -> ScoreReport | SlicesReport:
    """`betaconform score`: the evaluated system's judge-corrected pass rate (api.score); `compare=True` with two
    inputs: the difference a - b; `by=`: per slice, adjusted by `adjust` (docs/SLICES.md)."""
    from ..gate import make_score_gate
    from . import score as api_score

    opts = input_options({**input_opts, "cluster_field": cluster_field} if cluster_field is not None else input_opts, slices=True,
                         command="score")
    return api_score(_source(source, name), opts, positive, confidence_level, target,
                     make_score_gate(min_score, on, compare), compare, adjust)


def judges(
    source: Any, *, name: str | None = None, ks: str | int | Sequence[int] | None = None, confidence_level: float = CONFIDENCE_LEVEL,
    seed: int = 0, ensemble: str | Sequence[str] | None = None, cost: dict[str, float] | None = None,
    max_error: float | None = None, population: int | None = None, unlabeled: bool = True, positive: str | None = None,
    csv_table: str = "ensembles", progress: Callable[[int, int, str], None] | None = None, adjust: str | None = None,
    **input_opts: Any,
) -> JudgesReport | SlicesReport:
    """`betaconform judges`: per-judge accuracy, shared mistakes, the ensemble to run for each k (api.judges).
    `ensemble`: 'a,b,c' or a list of judge names; `cost`: {judge: price}; `by=`: per slice, adjusted by `adjust`
    (docs/SLICES.md)."""
    from . import judges as api_judges

    members = [m.strip() for m in ensemble.split(",") if m.strip()] if isinstance(ensemble, str) else \
        (list(ensemble) if ensemble is not None else None)
    return api_judges(_source(source, name), input_options(input_opts, slices=True, command="judges"),
                      _ks(ks) if ks is not None else None, confidence_level, _seed(seed), members, dict(cost) if cost is not None else None, max_error, population,
                      progress, unlabeled, positive, csv_table, adjust)


def doctor(source: Any, *, name: str | None = None, **input_opts: Any) -> DoctorReport:
    """`betaconform doctor`: how each input is read (format, column roles, items, judges), without fitting."""
    from . import doctor as api_doctor

    return api_doctor(_source(source, name), input_options(input_opts, command="doctor"))


RULE_OPTIONS = ("xi", "epsilon", "tau", "patience", "min_samples", "score_scale", "centre", "xi_units", "reference_sd",
                "target", "at_k", "precision_method")


def sample(
    source: Any, *, name: str | None = None, rule: str = "conformal", pool: str | Path | None = None,
    batch: int | None = None, replay: bool = False, runs: int = 1, ks: str | int | Sequence[int] | None = None,
    confidence_level: float = CONFIDENCE_LEVEL, seed: int = 0, method: str = "default", components: int | str = "auto",
    **options: Any,
) -> LiveReport | ReplayReport:
    """`betaconform sample`: stop labeling or label more (and which pool items next), from the labeled items in
    labeling order; `replay=True`: the rule replayed on a fully labeled pool. The rule's options (`xi`, `target`,
    `precision_method`, ... as in the CLI) go with the input options."""
    from ..stopping.rules import make_rule
    from . import sample as api_sample

    settings = _settings(ks, confidence_level, method, components)
    given = {k: options.pop(k) for k in RULE_OPTIONS if k in options}
    if rule == "precision":
        given.update(ks=settings.ks, confidence_level=settings.confidence_level)
    the_rule = make_rule(rule, **given)
    return api_sample(_source(source, name), the_rule, settings, _seed(seed), input_options(options, command="sample"), replay, runs,
                      None if pool is None else str(pool), batch)


def drift(
    old: Any, new: Any = None, *, confidence_level: float = DRIFT_CONFIDENCE_LEVEL, max_change: float = 0.0,
    permutations: int = 999, seed: int = 0, fail_on_drift: bool = False, time_field: str | None = None,
    split_at: str | None = None, **input_opts: Any,
) -> DriftReport:
    """`betaconform drift`: have the same judges changed between two runs (api.drift)? `old` and `new` are each one
    run (a path, a DataFrame, an Arrow table or a list of dicts; data in memory is named "old" and "new" unless
    given as {name: data}); or `old` alone cut in time at `split_at` of its `time_field`. `fail_on_drift=True`:
    `exit_code` 1 and `failures` when a judge or the panel drifted (beyond `max_change`)."""
    from ..inputs.memory import given, in_memory
    from . import drift as api_drift

    def run(source: Any, title: str) -> Any:
        source = given(source)
        return _source(source, title) if in_memory(source) in ("frame", "records") else source

    return api_drift(run(old, "old"), None if new is None else run(new, "new"), input_options(input_opts, command="drift"),
                     _real(confidence_level), _real(max_change), permutations, _seed(seed), fail_on_drift, time_field, split_at)


def plan(
    source: Any, *, name: str | None = None, target: float = 0.05, ks: str | int | Sequence[int] | None = None,
    positive: str | None = None, label_cost: float | None = None, confidence_level: float = CONFIDENCE_LEVEL,
    draws: int = 200, seed: int = 0, **input_opts: Any,
) -> PlanReport:
    """`betaconform plan`: the labels a target half-width needs (the error at each k, the score), forecast from the
    judges' verdicts before labeling (api.plan); `label_cost`: the cost of one label, for the labels still to make."""
    from . import plan as api_plan

    return api_plan(_source(source, name), input_options(input_opts, command="plan"), _real(target), _ks(ks),
                    _real(confidence_level), draws, _seed(seed), None if label_cost is None else _real(label_cost), positive)


def _reader_options() -> tuple[str, ...]:
    """The input options every reading function takes through `**input_opts`: the one table of them
    (inputs/options.py), with the format and the gold file."""
    from ..inputs.options import GROUP_OF

    return ("source_format", "labels", *GROUP_OF)


def _input_doc() -> str:
    """The input options, listed for help(betaconform_cli.fit) and a notebook's `fit?`."""
    names = ", ".join(_reader_options())
    return (f"\n\n    Input options (the CLI's, by their Python names; docs/API.md): {names}. An unknown name is a "
            "TypeError naming the nearest ones.")


for _f in (fit, score, judges, doctor, sample, drift, plan):
    _f.__doc__ = (_f.__doc__ or "") + _input_doc()
del _f
