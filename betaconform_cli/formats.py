"""File suffixes, format names and limits: the one list of each (issue 20), read by the inputs, the saved fits, the
outputs and the CLI's choices alike.

Input formats are one registry, an `InputFormat` entry each (its reader, named "module:function" so that nothing
here imports it, its file kinds and their name endings, its content sniff, its `--from` choices): the detection
and dispatch in inputs/, folder and glob scanning, dataset names, `--from`'s choices and InputOptions' check are all
read from it. A file's kind (how its bytes are laid out) comes from its name, compared without regard to case:
`DATA.JSONL`, `a.ndjson` and `b.jsonl.gz` are all JSON Lines, wherever they are named -- alone, in a folder or by a
glob. `input_formats()` are the `--from` choices (a reader or a table shape, not a kind); `--format`'s are
output_formats.py's registry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# --- limits -------------------------------------------------------------------------------------------------
MAX_K = 201  # the largest ensemble size k
MAX_JUDGES = 1000  # judges on one item: the (judges, correct) table is (K+1)^2 cells
# columns of one table, checked on its header before DuckDB loads it (its load grows with the square of the columns:
# 10^4 took 3 s for five rows): a wide table's judges and as many other columns
MAX_TABLE_COLUMNS = 2 * MAX_JUDGES
# the one seed range, for every command and the library: JSON readers (and saved fits) carry integers below 2^53
# exactly, so a larger seed could not be written into the output and read back as the seed that was used
MAX_SEED = 2**53 - 1
MAX_LINE_BYTES = 16 << 20  # one line of a text input: a file without line ends (/dev/zero) stops with an error
MAX_YAML_BYTES = 16 << 20  # a saved fit or a config: a real fit is a few KB (1000 judges: ~1 MB)
# how deep a JSON text (a line, a document) may nest: DuckDB's limit too, so that JSON Lines read as records and as a
# table refuse the same lines; far below the depth at which Python's own parser, repr or a writer would recurse
MAX_JSON_DEPTH = 128


def load_json(raw: bytes | str, stdlib: bool = False) -> Any:
    """The one JSON parse of every JSON reader (JSON Lines, promptfoo, inspect, labels, a model's config): orjson, or
    with `stdlib` the standard library (bare NaN, as inspect writes it; integers beyond 64 bits exact). A text nested
    deeper than MAX_JSON_DEPTH raises `too_deep` (an orjson.JSONDecodeError, so a json.JSONDecodeError and a ValueError:
    every reader's except clause for malformed JSON takes it), never RecursionError."""
    import orjson

    if raw[:1] in (b"\xef", "\ufeff"):  # a byte order mark, as Windows tools (Notepad, PowerShell) start a file
        raw = raw.removeprefix(b"\xef\xbb\xbf") if isinstance(raw, bytes) else raw.removeprefix("\ufeff")
    try:
        value = __import__("json").loads(raw) if stdlib else orjson.loads(raw)
    except RecursionError:  # the standard library recurses: '[[[[...' a thousand deep
        raise too_deep(raw) from None
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc) or "depth" in str(exc):  # orjson's own limit (1024)
            raise too_deep(raw) from None
        raise
    opened = raw.count(b"[") + raw.count(b"{") if isinstance(raw, bytes) else raw.count("[") + raw.count("{")
    if opened > MAX_JSON_DEPTH and json_depth(value) > MAX_JSON_DEPTH:  # fewer brackets cannot nest deeper
        raise too_deep(raw)
    return value


def _too_deep() -> type[ValueError]:
    import orjson

    class TooDeepError(orjson.JSONDecodeError):
        """JSON nested deeper than MAX_JSON_DEPTH; its text is the reason alone (no position: the whole text)."""

        def __init__(self, raw: bytes | str):
            super().__init__(f"nested deeper than {MAX_JSON_DEPTH} levels", str(raw[:80]), 0)

        def __str__(self) -> str:
            return f"nested deeper than {MAX_JSON_DEPTH} levels"

    return TooDeepError


@functools.cache
def _too_deep_type() -> type[ValueError]:  # built on first use: the registry is imported without orjson
    return _too_deep()


def too_deep(raw: bytes | str) -> ValueError:
    """The error for JSON nested deeper than MAX_JSON_DEPTH (an orjson.JSONDecodeError)."""
    return _too_deep_type()(raw)


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep lists and objects nest in a parsed JSON value (a scalar 0), without recursion; counting stops
    just past `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest

# --- inputs -------------------------------------------------------------------------------------------------
DUPLICATES = ("error", "first", "last")
_BLANK = b"\xef\xbb\xbf \t\r\n"  # what text may start with before its first byte of content (a UTF-8 byte order mark)


@dataclass(frozen=True)
class InputFormat:
    """One input format, everything the inputs and the CLI know of it in one entry (the registry below).

    `name`: the reader's name (a detect.Plan's `reader`) and, unless `choices` names others, its `--from` choice.
    `reader`: `read(source: inputs.detect.Source, opts: InputOptions, keep: Keep) -> list[Dataset]`, as
    "module:function" (imported when a file of this format is read, so that the CLI starts without any reader) or
    the function itself. `kinds`: the file kinds it reads when the format is "auto", each with the name endings
    that say it (compared without regard to case; ".gz": gzip, decompressed on the fly). `sniff(first bytes) ->
    one of its kinds or None` ("module:function" or the function): the kind of a file whose name says nothing
    (standard input, an unknown ending), tried in the registry's order before the last resort, a CSV or TSV table.
    `claims`: for a format whose files are of a kind another format owns (a trace store's JSON Lines export), the
    test of the first record that says a file is its own.
    """

    name: str
    reader: str | Callable[..., Any]
    kinds: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    choices: tuple[str, ...] = ()  # its --from choices when not (name,): a table's shapes
    sniff: str | Callable[[bytes], str | None] | None = None
    binary: tuple[str, ...] = ()  # kinds that are not text: a stream is copied byte for byte, NUL bytes are no error
    reads: tuple[str, ...] = ()  # other kinds it reads when asked for (a table: JSON Lines, as a long table)
    as_kind: str | None = None  # asked for on a file of a kind it does not read: read it as this kind (None: as it is)
    streams: bool = False  # reads standard input or a pipe as it comes (else a stream is first copied to a file)
    folders: bool = False  # reads a folder as one input (a hive-partitioned table)
    # kinds it shares with other formats (JSON Lines, JSON, Parquet), each with its test of a file's first record
    # (a JSON Lines file's first object, a JSON document, a Parquet file's first row): "module:function" or the
    # function. detect.py asks these, in the registry's order, before the built-in guesses.
    claims: Mapping[str, str | Callable[[Any], bool]] = field(default_factory=dict)
    # `beside(file, the folder's data files) -> what it is, or None`: a file its tool writes beside its data in one
    # folder that holds no judgments (lm-eval's results_<date>.json beside samples_*.jsonl): skipped in a folder, with
    # a note; named alone it is read, and its reader says what to read instead
    beside: str | Callable[[Path, list[Path]], str | None] | None = None

    @property
    def from_choices(self) -> tuple[str, ...]:
        return self.choices or (self.name,)


def _sniff_jsonl(head: bytes) -> str | None:
    import orjson

    text = head.lstrip(_BLANK)
    if not text.startswith(b"{"):
        return None
    try:
        load_json(text.split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        return None
    return "jsonl"


def _sniff_json(head: bytes) -> str | None:  # after _sniff_jsonl: an object whose first line is not one, or a list
    text = head.lstrip(_BLANK)  # of objects (not a CSV header such as "[provider] prompt")
    return "json" if text.startswith(b"{") or text[:1] == b"[" and text[1:].lstrip(_BLANK)[:1] in (b"{", b"]") else None


def record_has(*alternatives: str) -> Callable[[Any], bool]:
    """A claim (InputFormat.claims) as keys: the record holds every key of one alternative, each "key", "a.b" (nested)
    or "key=A|B" (with one of these values). `record_has("trace_id assessments", "info.trace_id info.assessments")`."""
    specs = [[(k, v.split("|") if v else None) for k, _, v in (t.partition("=") for t in alt.split())] for alt in alternatives]

    def get(record: Any, path: str) -> Any:
        for part in path.split("."):
            if not isinstance(record, dict) or part not in record:
                return _ABSENT
            record = record[part]
        return record

    def test(record: Any) -> bool:
        return any(all((got := get(record, k)) is not _ABSENT and (allowed is None or got in allowed) for k, allowed in spec)
                   for spec in specs)

    return test


_ABSENT = object()


_LANGFUSE = record_has(*(f"name source=EVAL|API|ANNOTATION {k}" for k in ("traceId", "trace_id", "observationId", "observation_id")))


def _langfuse_score(record: Any) -> bool:
    """A Langfuse score: a name, a source and a trace or observation id -- and no `annotator_kind`, which a Phoenix
    trace annotation (name, trace_id, source "API") has and a Langfuse score never does."""
    return _LANGFUSE(record) and "annotator_kind" not in record


def _promptfoo_csv(row: Any) -> bool:
    """`promptfoo eval -o results.csv`: a `[provider] prompt` column per prompt, each followed by Status, Score, Named
    Scores, Grader Reason and Comment (claimed so that its reader can refuse it with what to write instead)."""
    return isinstance(row, dict) and {"Status", "Score", "Grader Reason"} <= row.keys() and any(str(k).startswith("[") for k in row)


def _promptfoo_document(doc: Any) -> bool:
    """A promptfoo results file: an eval id or a results object (an inspect-ai log, which has one too, has `eval`;
    lm-evaluation-harness's aggregated results have `configs` and `versions` beside theirs: lm_eval claims them)."""
    return isinstance(doc, dict) and "eval" not in doc and ("evalId" in doc or isinstance(doc.get("results"), dict)
                                                           and not ("configs" in doc and "versions" in doc))


_INPUTS: dict[str, InputFormat] = {}  # the registry: reader name -> entry, in the order of --from's choices


def register_input_format(fmt: InputFormat) -> None:
    """Add a format: every command, folder, glob, dataset name and InputOptions' check knows it at once (the CLI's
    `--from` choices are read when the CLI is imported). Its name, choices, kinds and endings must be new."""
    endings = [s for suffixes in fmt.kinds.values() for s in suffixes]
    taken = ({fmt.name} & set(_INPUTS)) | (set(fmt.from_choices) & set(input_formats())) \
        | (set(fmt.kinds) & set(kind_suffixes())) | (set(endings) & set(data_suffixes()))
    if taken:
        raise ValueError(f"input format {fmt.name!r}: {', '.join(sorted(taken))} already taken")
    bad = [s for s in endings if not s.startswith(".") or s != s.lower()]
    if bad or len(set(endings)) < len(endings):
        raise ValueError(f"input format {fmt.name!r}: endings are distinct, lower case and start with '.' ({bad or endings})")
    _INPUTS[fmt.name] = fmt


def unregister_input_format(name: str) -> None:
    """Remove a format added by register_input_format (KeyError when there is none by that name)."""
    del _INPUTS[name]


def input_formats() -> tuple[str, ...]:
    """The `--from` choices and InputOptions' `source_format` values: auto, then each format's choices."""
    return ("auto", *(c for f in _INPUTS.values() for c in f.from_choices))


def registered() -> tuple[InputFormat, ...]:
    """Every registered format, in the order of `--from`'s choices."""
    return tuple(_INPUTS.values())


def input_format(name: str) -> InputFormat:
    """A format by its reader's name (KeyError when none is registered by it)."""
    return _INPUTS[name]


def format_for(choice: str) -> InputFormat:
    """The format a `--from` choice names (KeyError for "auto" or an unknown choice)."""
    found = next((f for f in _INPUTS.values() if choice in f.from_choices), None)
    if found is None:
        raise KeyError(choice)
    return found


def kind_format(kind: str) -> InputFormat:
    """The format that reads a file of this kind when the format is "auto" (KeyError for a kind none has)."""
    found = next((f for f in _INPUTS.values() if kind in f.kinds), None)
    if found is None:
        raise KeyError(kind)
    return found


def kind_suffixes() -> dict[str, tuple[str, ...]]:
    """kind -> the name endings that say it (every format's kinds, in the registry's order)."""
    return {kind: suffixes for f in _INPUTS.values() for kind, suffixes in f.kinds.items()}


def data_suffixes() -> tuple[str, ...]:
    """What a folder's data files end in: every kind's endings."""
    return tuple(s for suffixes in kind_suffixes().values() for s in suffixes)


def claimant(kind: str, first: Any) -> str | None:
    """The format whose claim on this kind accepts the file's first record (formats' order), else None."""
    for f in _INPUTS.values():
        test = f.claims.get(kind)
        if test is not None and first is not None and resolve(test)(first):
            return f.name
    return None


def claimed_kinds() -> set[str]:
    return {kind for f in _INPUTS.values() for kind in f.claims}


def is_binary_kind(kind: str) -> bool:
    return any(kind in f.binary for f in _INPUTS.values())


def kind_by_content(head: bytes) -> str:
    """The kind a file's first bytes say: the first format's sniff that knows them, else a text table (TSV when
    its first line holds a tab, else CSV)."""
    for f in _INPUTS.values():
        kind = resolve(f.sniff)(head) if f.sniff is not None else None
        if kind is not None:
            return str(kind)
    return "tsv" if b"\t" in head.lstrip(_BLANK).split(b"\n", 1)[0] else "csv"


def beside_data(path: Path, siblings: list[Path]) -> str | None:
    """What `path` is when a registered format's tool wrote it beside its data in the folder (InputFormat.beside)."""
    for fmt in _INPUTS.values():
        what = resolve(fmt.beside)(path, siblings) if fmt.beside is not None else None
        if what is not None:
            return str(what)
    return None


def resolve(ref: str | Callable[..., Any]) -> Callable[..., Any]:
    """A function named "module:function" (imported now), or the function itself."""
    if callable(ref):
        return ref
    import importlib

    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


for _fmt in (  # the built-in formats; `--from`'s choices in this order. JSON kinds are shared: each format that
    # reads a kind another owns claims its files by their first record (a JSON document, a JSON Lines file's first line);
    # detect.py then tells judgments from long tables by the first line
    InputFormat("jsonl", "betaconform_cli.inputs.jsonl:read_source", {"jsonl": (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")},
                sniff=_sniff_jsonl, streams=True),
    InputFormat("table", "betaconform_cli.inputs.tables:read_table",
                {"parquet": (".parquet",), "csv": (".csv", ".csv.gz"), "tsv": (".tsv", ".tsv.gz", ".tab", ".tab.gz")},
                choices=("long", "wide", "counts"), sniff=lambda head: "parquet" if head.startswith(b"PAR1") else None,
                binary=("parquet",), reads=("jsonl",), as_kind="csv", folders=True),
    InputFormat("promptfoo", "betaconform_cli.inputs.promptfoo:read_promptfoo", {"json": (".json", ".json.gz")},
                sniff=_sniff_json, claims={"json": _promptfoo_document,
                                           "jsonl": record_has("gradingResult", "testCase", "testIdx"),
                                           "csv": _promptfoo_csv}),
    InputFormat("inspect", "betaconform_cli.inputs.inspect_logs:read_inspect", {"eval": (".eval",)},
                sniff=lambda head: "eval" if head.startswith(b"PK") else None, binary=("eval",),
                claims={"json": record_has("eval samples", "eval version")},
                beside="betaconform_cli.inputs.inspect_logs:beside_logs"),
    # eval frameworks (issue 29; docs/FORMATS.md): files of kinds the formats above own, known by their first record
    # (lm-eval's aggregated results_<date>.json is claimed too: its reader refuses it with what to read instead)
    *(InputFormat(name, f"betaconform_cli.inputs.{name}:read_{name}", claims={k: record_has(*keys) for k, keys in claims},
                  beside=beside)
      for name, claims, beside in (
          ("deepeval", (("json", ("testCases", "testRunData.testCases")),), "betaconform_cli.inputs.deepeval:beside_run"),
          ("lm_eval", (("jsonl", ("doc_id filtered_resps metrics",)), ("json", ("results configs versions",))),
           "betaconform_cli.inputs.lm_eval:results_beside_samples"),
          ("openai_evals", (("jsonl", ("spec.eval_name spec.run_id",)),), None))),
    # Ragas' results (EvaluationResult.to_pandas() as CSV or JSON Lines), known by its sample fields (a multi-turn
    # sample's by its conversation)
    InputFormat("ragas", "betaconform_cli.inputs.ragas:read_ragas",
                claims=dict.fromkeys(("csv", "jsonl", "json", "parquet"), "betaconform_cli.inputs.ragas:sample_record")),
    # trace stores (issue 29; docs/FORMATS.md): exports in kinds the formats above own, known by their first record
    *(InputFormat(name, f"betaconform_cli.inputs.{name}:read_{name}",
                  claims=dict.fromkeys(kinds, keys if callable(keys) else record_has(*keys)))
      for name, kinds, keys in (
          ("mlflow", ("jsonl", "json", "parquet"), ("trace_id assessments", "request_id assessments", "info.trace_id info.assessments")),
          ("langfuse", ("jsonl", "json", "parquet", "csv"), _langfuse_score),
          ("langsmith", ("jsonl", "json"), ("key run_id feedback_source", "run_type feedback")),
          ("phoenix", ("jsonl", "json", "parquet", "csv"), (*(f"annotator_kind name {k}" for k in ("span_id", "trace_id", "session_id")),
                                                       "annotator_kind annotation_name span_id")),
          ("braintrust", ("jsonl", "json", "csv", "parquet"), (*(f"scores {s} {io}" for s in ("root_span_id", "span_id")
                                                       for io in ("input", "output", "expected")),
                                                     "span_id root_span_id is_root")))),
    # a table as a JSON list of records (df.to_json(orient="records")): last, so that every export above claims its own
    InputFormat("json_records", "betaconform_cli.inputs.json_records:read_json_records",
                claims={"json": "betaconform_cli.inputs.json_records:table_record"}),
):
    register_input_format(_fmt)

# --- saved fits and outputs ---------------------------------------------------------------------------------
FIT_SUFFIXES = (".yaml", ".yml")
# output formats (`-f`, `-o`'s endings): their registry is output_formats.py



# --- this tool's own outputs: what a folder's reading skips ------------------------------------------------
# `fit batch/ -o batch/summary.csv` must not make the next `fit batch/` read its own output. A JSON document this
# tool writes starts with "schema": "betaconform/..." (OUTPUT_SCHEMAS: the marker). A CSV report is known by its
# header: every CSV this tool writes is built by report/render.to_csv, which refuses a header that is not one of
# the tables registered here, so no command can write a CSV that a folder would read as data.
OUTPUT_SCHEMAS = ("betaconform/", "betaconform-evaluate/")


@dataclass(frozen=True)
class OutputTable:
    """One CSV report: the commands that write it, its columns (its whole header, or with `more` the leading
    columns that other columns follow: fit's estimators, evaluate's margin_k<k>). The report module takes its
    columns from here (`output_columns`)."""

    name: str
    columns: tuple[str, ...]
    more: bool = False


_OUTPUT_TABLES: dict[str, OutputTable] = {}


def register_output_table(table: OutputTable) -> None:
    """Add a CSV report (a new command's; a test's): render.to_csv then writes it and folders skip it."""
    if table.name in _OUTPUT_TABLES:
        raise ValueError(f"output table {table.name!r} already registered")
    _OUTPUT_TABLES[table.name] = table


def unregister_output_table(name: str) -> None:
    del _OUTPUT_TABLES[name]


def output_tables() -> tuple[OutputTable, ...]:
    return tuple(_OUTPUT_TABLES.values())


def output_columns(name: str) -> tuple[str, ...]:
    """A registered CSV report's columns (its leading ones when `more`)."""
    return _OUTPUT_TABLES[name].columns


def output_table_of(header: tuple[str, ...] | list[str]) -> OutputTable | None:
    """The registered CSV report whose header this is (exactly, or its leading columns when `more`), else None; a
    last column `error` is a batch's (report/failed.py: the inputs that failed)."""
    cols = tuple(header)
    if len(cols) > 1 and cols[-1] == "error":
        cols = cols[:-1]
    return next((t for t in _OUTPUT_TABLES.values()
                 if cols == t.columns or (t.more and cols[:len(t.columns)] == t.columns)), None)


for _table in (
    OutputTable("fit", ("dataset", "k", "estimate", "low", "high"), more=True),  # fit, report, transfer, sample; then estimators.csv_columns()
    OutputTable("judges", ("dataset", "k", "members", "estimate", "low", "high", "random_k", "all_judges", "empirical", "search")),
    OutputTable("judges --csv-table agreement", ("dataset", "judge", "basis", "items", "positive", *(
        f"{name}{end}" for name in ("accuracy", "sensitivity", "specificity", "false_pass_rate", "false_fail_rate", "kappa",
                                    "ac1", "alpha") for end in ("", "_low", "_high")))),
    OutputTable("doctor", ("dataset", "items", "unlabeled_items", "format", "kind", "judge", "other", "agreement", "count")),
    OutputTable("doctor before unlabeled items", ("dataset", "judge", "verdicts", "items", "format")),  # files of older versions
    OutputTable("sample --replay", ("run", "stopped", "samples", "margin")),
    OutputTable("evaluate", ("dataset", "items", "r", "runs", "method", "margin_mean", "margin_sd", "margin_se", "coverage",
                             "width_mean"), more=True),  # then margin_k<k>, condition, samples_mean, samples_sd
    OutputTable("score", ("dataset", "positive", "estimate", "low", "high", "judges_say", "bias", "bias_low", "bias_high",
                          "labels_only", "labels_low", "labels_high", "labeled_items", "unlabeled_items", "judges", "clusters",
                          "target", "confidence_level", "method", "lambda", "no_verdict_items", "no_verdict_labeled")),
    OutputTable("score before no_verdict", ("dataset", "positive", "estimate", "low", "high", "judges_say", "bias", "bias_low",
                                            "bias_high", "labels_only", "labels_low", "labels_high", "labeled_items",
                                            "unlabeled_items", "judges", "clusters", "target", "confidence_level", "method",
                                            "lambda")),  # files of older versions
    OutputTable("plan", ("dataset", "what", "k", "labels", "low", "high", "more", "reached", "cost", "target", "confidence_level",
                         "items", "labeled")),
    OutputTable("drift", ("old", "new", "name", "kind", "old_accuracy", "old_items", "new_accuracy", "new_items", "paired",
                          "pairs", "change", "low", "high", "labels_drifted", "statistic", "p_value", "p_holm",
                          "patterns_drifted", "drifted")),
    OutputTable("slices", ("dataset", "slice", "by", "labeled_items", "unlabeled_items", "figure", "estimate", "low", "high",
                           "interval_level", "adjust", "gate_passed", "gate_alpha", "note")),  # fit, judges and score --by
    OutputTable("score --compare", ("a", "b", "positive", "difference", "low", "high", "estimate_a", "estimate_b",
                                    "shared_items", "labeled_both", "target", "confidence_level")),
):
    register_output_table(_table)


def kind_by_name(path: str | Path) -> str | None:
    """The kind a file's name says (parquet, csv, tsv, jsonl, json, eval, or a registered format's), or None."""
    name = Path(path).name.lower()
    return next((kind for kind, suffixes in kind_suffixes().items() if name.endswith(suffixes)), None)


def is_data_name(path: str | Path) -> bool:
    """A name a folder's data file has (any kind above)."""
    return kind_by_name(path) is not None


def is_gzip_name(path: str | Path) -> bool:
    """A name that says gzip (`.gz`, any case); readers also know gzip by its first bytes."""
    return str(path).lower().endswith(".gz")


def is_fit_name(path: str | Path) -> bool:
    """A saved fit's name (.yaml or .yml, any case)."""
    return Path(path).suffix.lower() in FIT_SUFFIXES


def stem(path: str | Path) -> str:
    """A file's name without its data or saved-fit ending, any case (`a.csv.gz` -> `a`, `B.NDJSON` -> `B`); a name
    that is only an ending is kept."""
    name = Path(path).name
    # the endings a dataset's name leaves out ("runs/a.jsonl.gz" is dataset "a"; so is a saved fit "a.yaml")
    kinds = tuple(sorted({*data_suffixes(), *FIT_SUFFIXES}, key=len, reverse=True))
    for endings in ((".gz",), kinds):  # any gzip file first ("a.gz" is dataset "a"), then the kind
        cut = next((s for s in endings if name.lower().endswith(s) and len(name) > len(s)), "")
        name = name[: len(name) - len(cut)]
    return name


def temp_suffix(kind: str) -> str:
    """The suffix a stream of this kind is copied to a temporary file under (so that DuckDB reads it as such)."""
    return kind_suffixes()[kind][0]
