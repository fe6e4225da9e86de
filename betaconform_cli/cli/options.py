"""Every option shared by several commands, declared once, in groups that `--help` shows as panels.

A command names a group as a parameter (`out: OutputGroup`; the input options are the core's own
`inp: InputOptions`); `@grouped` expands the group's fields into options and hands the command one frozen group
object (sqlite-utils' output_options decorator, for typer). Choices are the core's own tuples
(formats.input_formats(), estimators.METHODS, gate.GATE_ON, ...) read by typer as a Literal of their values, so that
`--help` lists them, a wrong value is a usage error, and a value added to the core is a choice at once (an input
format registered at run time, after this module is imported, is read by its name and content, not offered as
`--from`: typer's choices are fixed here). `--format`'s choices are the output formats' registry as it is when typer
builds a command (`Format`, an Enum class whose iteration reads the registry), so an output format registered later
is a choice too.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum, EnumMeta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

import typer

from ..choices import (
    COMPONENTS,
    JUDGES_CSV_TABLES,
    PRECISION_METHODS,
    RULES,
    SCORE_TARGETS,
    SIMILARITIES,
    SIZE_WEIGHTS,
    SLICE_ADJUSTMENTS,
    TRANSFER_METHODS,
)
from ..errors import P0, ParameterError
from ..estimators import METHODS
from ..formats import DUPLICATES, MAX_K, input_formats
from ..gate import GATE_ON, SCORE_ON, Gate, ScoreGate, make_gate, make_score_gate
from ..inputs import InputOptions
from ..output_formats import output_endings, output_formats
from ..parameters import CONFIDENCE_LEVEL
from ..settings import FitSettings
from ..settings import (
    parse_ks as parse_ks,  # cli/plan.py takes it from here
)
from .protected_inputs import protect_inputs

INPUT, OUTPUT, MODEL, GATE, EMBED, SCORE = "Input", "Output", "Model", "Gate", "Embeddings", "Score"
SLICES = "Slices"


if TYPE_CHECKING:
    from ..embeddings import EmbedOptions  # numpy: imported by EmbedGroup.build, when --embed is given

if TYPE_CHECKING:  # to mypy a choice is the str it is; Literal[...] of a tuple known only at run time is not a type
    Format: TypeAlias = str
    SourceFormat: TypeAlias = str
    Duplicates: TypeAlias = str
    Method: TypeAlias = str
    Components: TypeAlias = str
    ScoreOn: TypeAlias = str
    Target: TypeAlias = str
    GateOn: TypeAlias = str
    Rule: TypeAlias = str
    PrecisionMethod: TypeAlias = str
    TransferMethod: TypeAlias = str
    SizeWeight: TypeAlias = str
    Similarity: TypeAlias = str
    CsvTable: TypeAlias = str
    Adjust: TypeAlias = str
else:  # typer reads a Literal as the choice of its values (a click Choice, as it reads an enum)
    class _Registered(EnumMeta):
        """typer reads an Enum's choices by iterating its class each time it builds a command (for --help and for a
        value): this one iterates the output formats' registry then, so a format registered after this import
        (a plugin, a test) is a `-f` choice, and one unregistered is none."""

        def __iter__(cls) -> Iterator[str]:
            return iter(output_formats())

        def __len__(cls) -> int:
            return len(output_formats())

    class Format(str, Enum, metaclass=_Registered):  # its "members" are the registry's names, as plain str
        pass

    SourceFormat, Duplicates = Literal[input_formats()], Literal[DUPLICATES]
    Method, Components = Literal[METHODS], Literal[tuple(str(c) for c in COMPONENTS)]  # --method: estimators.METHODS
    ScoreOn, Target, GateOn, Rule = Literal[SCORE_ON], Literal[SCORE_TARGETS], Literal[GATE_ON], Literal[RULES]
    PrecisionMethod = Literal[PRECISION_METHODS]  # sample
    TransferMethod, SizeWeight, Similarity = Literal[TRANSFER_METHODS], Literal[SIZE_WEIGHTS], Literal[SIMILARITIES]  # transfer
    CsvTable = Literal[JUDGES_CSV_TABLES]  # judges -f csv
    Adjust = Literal[SLICE_ADJUSTMENTS]  # --by's --adjust


def _opt(*names: str, help: str, panel: str, **kw: Any) -> Any:  # noqa: A002 - typer's own keyword
    return typer.Option(*names, help=help, rich_help_panel=panel, **kw)


# How inputs are read (every reading command): the command's parameter is the core's InputOptions itself, which
# declares each field, its type and default once; here only each field's flags and help, in --help's order
# `grouped` expands them and constructs the InputOptions.
INPUT_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "source_format": (("--from",), "input format (auto: from the file's name and content)"),
    "judgments_field": (("--judgments-field",), "JSON field with per-judge correctness (list or object)"),
    "correct_field": (("--correct-field",), "JSON field with the count of correct judges"),
    "judges_field": (("--judges-field",), "JSON field with the number of judges"),
    "verdicts_field": (("--verdicts-field",), "JSON field with raw judge verdicts"),
    "label_field": (("--label-field",), "field with the gold label (dotted path, e.g. vars.gold)"),
    "id_field": (("--id-field",), "JSON field with the item id"),
    "text_field": (("--text-field",), "JSON field with the item text"),
    "cluster_field": (("--cluster-field",), "JSON field (a table's column) with a cluster id: items that share it (samples or epochs of one prompt) are "
                                           "correlated, and every interval counts them as one cluster (inspect-ai logs: the epochs)"),
    "item_col": (("--item-col", "--id-col"), "table (and --labels file): the item id column (default: guessed)"),
    "judge_col": (("--judge-col",), "long table: the judge name column"),
    "correct_col": (("--correct-col",), "long table: the correctness column (0/1/true/false)"),
    "verdict_col": (("--verdict-col",), "table: the verdict column, compared with the gold column"),
    "gold_col": (("--gold-col",), "table: the gold label column"),
    "text_col": (("--text-col",), "table: the item text column"),
    "dataset_col": (("--dataset-col",), "table: a column that splits one file into datasets"),
    "judge_cols": (("--judge-cols",), "wide table: judge columns, names or globs ('gpt*,claude*')"),
    "tolerance": (("--tolerance",), "scoring judges: a verdict is correct when |verdict - gold| <= T"),
    "threshold": (("--threshold",), "Ragas results: a metric's continuous score of at least T is a pass, below it a fail"),
    "duplicates": (("--duplicates",), "a repeated item (the same id on two JSON lines, in a pool, or the same item and judge on two "
                                      "table rows) is an error, or keep the first or the last"),
    "labels": (("--labels",), "a separate gold file (CSV, TSV, JSONL, Parquet: an id and a label column) joined to the verdicts "
                              "by id"),
    "skip_invalid": (("--skip-invalid",), "skip bad lines and rows (and say how many) instead of stopping"),
}
INPUT_CHOICES: dict[str, Any] = {"source_format": SourceFormat, "duplicates": Duplicates}


def input_parameters() -> list[inspect.Parameter]:
    """InputOptions' options as typer options: the core's type and default (of the option's group), the CLI's
    flags, help and choices."""
    out = []
    for name, (flags, text) in INPUT_OPTIONS.items():
        group = input_group(name)
        default = next(f.default for f in dataclasses.fields(group) if f.name == name)
        typ = INPUT_CHOICES.get(name, _hints(group)[name])
        option = _opt(*flags, help=text, panel=INPUT)
        out.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[typ, option]))
    return out


_HINTS: dict[tuple[type[Any], bool], dict[str, Any]] = {}


def _hints(cls: type[Any], extras: bool = False) -> dict[str, Any]:
    """A class's evaluated annotations, once per class (every command takes the same groups; evaluating the string
    annotations again for each option and command was a third of `--help`'s own time)."""
    if (cls, extras) not in _HINTS:
        _HINTS[cls, extras] = typing.get_type_hints(cls, include_extras=extras)
    return _HINTS[cls, extras]


def input_group(name: str) -> type[Any]:
    """The class that declares an input option: one of InputOptions' groups, or InputOptions itself."""
    from ..inputs.options import GROUP_OF, GROUPS

    return GROUPS[GROUP_OF[name]] if name in GROUP_OF else InputOptions


def input_options(values: dict[str, Any]) -> InputOptions:
    """The one InputOptions of a command line: its input options' values (by their flat names)."""
    return InputOptions(**values)


@dataclass(frozen=True)
class OutputGroup:
    """Where and how results are written (every command)."""

    fmt: Annotated[Format | None, _opt("--format", "-f", help="output format (default: from -o's extension, else table)", panel=OUTPUT)] = None
    output: Annotated[Path | None, _opt("--output", "-o", help=f"write the result to FILE (atomically; {' '.join(output_endings())}); the table still shows", panel=OUTPUT)] = None
    junit: Annotated[Path | None, _opt("--junit", help="also write a JUnit XML file: one test case per dataset and gate (for CI test reports)", panel=OUTPUT)] = None
    step_summary: Annotated[bool, _opt("--step-summary/--no-step-summary", help="append the Markdown report to $GITHUB_STEP_SUMMARY when it is set (GitHub Actions' job page)", panel=OUTPUT)] = True


Judgments = Annotated[list[str], typer.Argument(help="judgment files, directories or globs; '-' reads standard input")]
Chart = Annotated[bool, _opt("--chart/--no-chart", help="show the histogram chart and fit diagnostics", panel=OUTPUT)]
Unlabeled = Annotated[bool, _opt("--unlabeled/--no-unlabeled", help="use the verdicts on items without gold (where the labels vouch for them; docs/UNLABELED.md)", panel=MODEL)]
ConfidenceLevel = Annotated[float, _opt("--confidence-level", help="interval level, strictly between 0 and 1", panel=MODEL)]


@dataclass(frozen=True)
class EstimateGroup:
    """The error table's ks, interval level and seed (every computing command)."""

    ks: Annotated[str | None, _opt("--ks", help=f"ensemble sizes k: '1-11', '1,3,5' or '1..21' (at most {MAX_K}; default 1-11)", panel=MODEL)] = None
    confidence_level: ConfidenceLevel = CONFIDENCE_LEVEL
    seed: Annotated[int, _opt("--seed", help="seed for every random draw, 0 to 2^53 - 1; written to the output", panel=MODEL)] = 0

    def ks_tuple(self, default: str | None = "1-11") -> tuple[int, ...]:
        return parse_ks(self.ks if self.ks is not None else (default or ""))


@dataclass(frozen=True)
class JudgesEstimateGroup(EstimateGroup):
    """EstimateGroup with `judges`' own default ks (each command's --help states its own default)."""

    ks: Annotated[str | None, _opt("--ks", help=f"ensemble sizes k: '1-11', '1,3,5' or '1..21' (at most {MAX_K}; default 1, 3, 5, ... up to the number of judges)", panel=MODEL)] = None


@dataclass(frozen=True)
class ModelGroup:
    """The fitted model (fit and sample)."""

    method: Annotated[Method, _opt("--method", help="default, plugin (the MAP mixture as is) or paper (the paper's EM)", panel=MODEL)] = "default"
    components: Annotated[Components, _opt("--components", help="mixture components (auto: lowest BIC)", panel=MODEL)] = "auto"

    def settings(self, est: EstimateGroup) -> FitSettings:
        comp: int | str = "auto" if self.components == "auto" else int(self.components)
        return FitSettings(method=self.method, components=comp, ks=est.ks_tuple(), confidence_level=est.confidence_level)


@dataclass(frozen=True)
class GateGroup:
    """The CI gate (fit and report)."""

    max_error: Annotated[float | None, _opt("--max-error", help="exit 1 when the error at --at-k exceeds X (a fraction: 0.1 = 10%)", panel=GATE)] = None
    at_k: Annotated[int | None, _opt("--at-k", help="the ensemble size k to check", panel=GATE)] = None
    on: Annotated[GateOn, _opt("--on", help="check the interval's upper bound (default) or the estimate", panel=GATE)] = "upper"

    def build(self) -> Gate | None:
        return make_gate(self.max_error, self.at_k, self.on)


@dataclass(frozen=True)
class EmbedGroup:
    """The text embedding model and its cache (transfer, fit --embed, evaluate --transfer)."""

    embedding_model: Annotated[str | None, _opt("--embedding-model", help="local sentence-transformers model folder (default: the bundled all-MiniLM-L6-v2)", panel=EMBED)] = None
    cache_dir: Annotated[Path | None, _opt("--cache-dir", help="embedding cache directory (default: ~/.cache/betaconform/embeddings)", panel=EMBED)] = None
    no_cache: Annotated[bool, _opt("--no-cache", help="neither read nor write the embedding cache", panel=EMBED)] = False

    def build(self) -> EmbedOptions:
        from ..embeddings import EmbedOptions

        return EmbedOptions(self.embedding_model, self.cache_dir, not self.no_cache)

    @property
    def given(self) -> bool:
        return self.embedding_model is not None or self.cache_dir is not None or self.no_cache


@dataclass(frozen=True)
class SaveGroup:
    """Saved fits (fit and transfer)."""

    save: Annotated[Path | None, _opt("--save", help="save the fit as YAML for `report` and `transfer` (one input only)", panel=OUTPUT)] = None
    save_dir: Annotated[Path | None, _opt("--save-dir", help="save one <dataset>.yaml per input in DIR", panel=OUTPUT)] = None


@dataclass(frozen=True)
class ScoreGroup:
    """The evaluated system's pass rate: which class passes, the interval's target, the gate, a comparison (score)."""

    positive: Annotated[str | None, _opt("--positive", help="the gold class that counts as a pass (default: true, pass, yes, 1, correct, ...; inspect's C of C/I; A/B preferences: --positive A)", panel=SCORE)] = None
    target: Annotated[Target, _opt("--target", help="the interval is for the pass rate of these items (set) or of new items like them (new)", panel=SCORE)] = "set"
    confidence_level: ConfidenceLevel = CONFIDENCE_LEVEL
    compare: Annotated[bool, _opt("--compare", help="two inputs a b: the difference a - b on the items they share, paired by item id", panel=SCORE)] = False
    min_score: Annotated[float | None, _opt("--min-score", help="exit 1 when the corrected pass rate's lower bound is below X (a fraction: 0.8 = 80%; with --compare the difference, may be negative)", panel=GATE)] = None
    on: Annotated[ScoreOn | None, _opt("--on", help="check the interval's lower bound (default) or the estimate", panel=GATE)] = None

    def gate(self) -> ScoreGate | None:
        return make_score_gate(self.min_score, self.on, self.compare)


@dataclass(frozen=True)
class SliceGroup:
    """Slices (fit, judges, score --by; docs/SLICES.md): the field to slice by and the multiplicity adjustment."""

    by: Annotated[str | None, _opt("--by", help="the numbers per slice: a JSON field (dotted: metadata.category), a table column, or "
                                                "length:FIELD[:N] (the text length of FIELD in N quantile buckets, default 4); "
                                                "an item without it is in '(missing)'", panel=SLICES)] = None
    adjust: Annotated[Adjust | None, _opt("--adjust", help="with --by: intervals at the Bonferroni level and gates by Holm's "
                                                           "step-down (holm, the default: family-wise), Benjamini-Hochberg's "
                                                           "step-up (bh, false discovery rate), or none", panel=SLICES)] = None

    def inputs(self, opts: InputOptions) -> InputOptions:
        """The input options with the field to slice by: the reader keeps each item's slice key."""
        if self.by is None:
            return opts
        return dataclasses.replace(opts, record=dataclasses.replace(opts.record, by=self.by))


GROUPS: tuple[type, ...] = (OutputGroup, EstimateGroup, JudgesEstimateGroup, ModelGroup, GateGroup, EmbedGroup, SaveGroup,
                           ScoreGroup, SliceGroup)


def grouped(func: Callable[..., Any]) -> Callable[..., Any]:
    """Expand each parameter annotated with a group class into that group's options, and build the group back
    from them when the command runs."""
    sig = inspect.signature(func)
    hints = typing.get_type_hints(func, include_extras=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, type] = {}
    inputs: str | None = None
    for p in sig.parameters.values():
        ann = hints.get(p.name)
        if ann is InputOptions:
            inputs = p.name
            params.extend(input_parameters())
        elif ann in GROUPS:
            groups[p.name] = ann
            field_hints = _hints(ann, True)
            for f in dataclasses.fields(ann):
                params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=field_hints[f.name]))
        else:
            params.append(p.replace(annotation=ann, kind=inspect.Parameter.KEYWORD_ONLY))

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        check_integers(kwargs)
        protect_inputs(kwargs)
        for name, cls in groups.items():
            kwargs[name] = cls(**{f.name: kwargs.pop(f.name) for f in dataclasses.fields(cls)})
        if inputs is not None:
            kwargs[inputs] = input_options({k: kwargs.pop(k) for k in INPUT_OPTIONS})
        try:
            return func(**kwargs)
        finally:
            from .. import protect

            protect.clear()  # this command's inputs: not a later caller's in the same process (a notebook, a test)

    wrapper.__signature__ = sig.replace(parameters=params, return_annotation=None)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer must see the expanded signature, not the original
    return wrapper


MAX_INT = 2**63 - 1  # every integer option is a 64-bit integer for numpy (click reads any number of digits)


OWN_RANGE = frozenset({"population"})  # checked in full (any size) by its command, whose message names the file


def check_integers(values: dict[str, Any]) -> None:
    """Every integer option within a 64-bit integer, where the options enter: `--population 99999999999999999999`
    is a usage error naming the option, never numpy's ValueError deep in a computation. Each option's own range
    (seed >= 0, population >= the labeled items, ...) is checked where it is used."""
    from ..seeds import check_seed

    for name, v in values.items():
        if name in OWN_RANGE:
            continue
        if name == "seed" and isinstance(v, int) and not isinstance(v, bool):
            check_seed(v)  # one seed range everywhere, whatever the size: the message names it
        elif isinstance(v, int) and not isinstance(v, bool) and not -MAX_INT <= v <= MAX_INT:
            raise ParameterError(name, f"{P0}: {v} is too large; at most {MAX_INT} (2^63 - 1)")


def parse_numbers(text: str, param: str, kind: type = float) -> tuple[Any, ...]:
    """Comma-separated numbers ('0.06,0.03' or '10,30,56')."""
    try:
        values = tuple(kind(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        example = "0.06,0.03" if kind is float else "10,30,56"
        raise ParameterError(param, f"{P0}: cannot read {text!r}; use comma-separated numbers such as {example}") from None
    if not values:
        raise ParameterError(param, f"{P0}: give at least one value")
    return values


RULE = "Stopping rule"


@dataclass(frozen=True)
class RuleGroup:
    """The stopping rule's common options (sample and evaluate --rule)."""

    epsilon: Annotated[float | None, _opt("--epsilon", help="conformal: quantile level 1 - eps (default 0.1)", panel=RULE)] = None
    tau: Annotated[float | None, _opt("--tau", help="conformal: Proposition 4.1's scale (default 25)", panel=RULE)] = None
    patience: Annotated[int | None, _opt("--patience", help="consecutive passing checks to stop (conformal default 2, others 1)", panel=RULE)] = None
    min_samples: Annotated[int | None, _opt("--min-samples", help="never stop before this many labels (default 10)", panel=RULE)] = None

    def given(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


GROUPS = (*GROUPS, RuleGroup)
