"""Ragas evaluation results (docs/FORMATS.md#ragas): `EvaluationResult.to_pandas()` written with `to_csv()` (pandas'
index as the first column) or `to_json(orient="records", lines=True)` (or a JSON list of its records).

A row is an item (the `--id-field` column when there is one, else pandas' index, else the row's number from 0, as
pandas numbers it). Ragas' sample fields (user_input, response, reference, retrieved_contexts, ...) are the item;
every other column holding numbers is a metric (a cell of it that is not a number is an error naming the row and
the column, or skipped with --skip-invalid), and each metric is a judge (an AspectCritic is one LLM judge's 0/1
verdict). A metric's score is the judge's pass (1) or fail (0); a continuous score (Faithfulness' 0.83) is read as
a pass when it is at least `--threshold T`, and without it is an error naming the row and the column. A score
Ragas could not compute (NaN, empty) is no verdict. The gold is a person's pass/fail, which Ragas does not keep: the
column `--label-field` names (default `label`), else the one column whose name holds "human", else none (every
item unlabeled; `--labels FILE` joins a gold file on the item id). `reference` is the reference answer the metrics
compare with, not a verdict, and is never read as gold.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..errors import InputError
from . import values
from .annotations import Note, Skipped, datasets, read_notes, records
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

QUESTION = "ragas"
# SingleTurnSample's and MultiTurnSample's fields (ragas.dataset_schema, ragas 0.4.3): the item, never a metric
SAMPLE_FIELDS = frozenset({
    "user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids",
    "response", "multi_responses", "reference", "rubrics", "persona_name", "query_style", "query_length",
    "reference_tool_calls", "reference_topics"})
INDEX = ("", "Unnamed: 0", "index")  # pandas' index column in to_csv's output
SINGLE_TURN = ("response", "retrieved_contexts", "reference")  # beside user_input: a single-turn sample
MESSAGE_TYPES = ("human", "ai", "tool")  # ragas.messages: HumanMessage, AIMessage, ToolMessage (their `type`)


def sample_record(first: Any) -> bool:
    """The claim (formats.py): a first record with `user_input` and one of SINGLE_TURN (a single-turn sample), or
    whose `user_input` is a conversation (a multi-turn sample, often without a reference): a list of messages, each
    an object with `content` and a `type` of MESSAGE_TYPES (JSON, Parquet), or that list as pandas' to_csv writes it."""
    if not isinstance(first, dict) or "user_input" not in first:
        return False
    return any(k in first for k in SINGLE_TURN) or _conversation(first["user_input"]) is not None


def _conversation(value: Any) -> str | None:
    """A multi-turn sample's user_input as text (its messages' contents, one a line), None when it is none."""
    if isinstance(value, str) and value.startswith("[{'content': ") and any(f"'type': '{t}'" in value for t in MESSAGE_TYPES):
        return value  # a CSV cell: the list as Python shows it
    if isinstance(value, list) and value and all(isinstance(m, dict) and m.get("type") in MESSAGE_TYPES and "content" in m
                                                 for m in value):
        return "\n".join(str(m["content"]) for m in value)
    return None


def _columns(rows: list[tuple[int, dict[str, Any]]], opts: InputOptions) -> tuple[str | None, str | None, list[str], list[str]]:
    """(the id column, the gold column, the metric columns, the other columns left out)."""
    names = list(dict.fromkeys(k for _, r in rows for k in r))
    ident = opts.record.id_field if opts.record.id_field in names else next((k for k in INDEX if k in names), None)
    gold: str | None = opts.record.label_field if opts.record.label_field in names else None
    if gold is None:
        human = [k for k in names if "human" in k.lower()]
        gold = human[0] if len(human) == 1 else None
    metrics: list[str] = []
    other: list[str] = []
    for k in names:
        if k in SAMPLE_FIELDS or k in (ident, gold):
            continue
        scores = [r.get(k) for _, r in rows]  # a metric holds numbers; a cell of it that is not one is an error
        (metrics if any(values.number(v) is not None for v in scores) else other).append(k)
    return ident, gold, metrics, other


def verdict(value: Any, threshold: float | None, where: str, n: int, column: str) -> int | None:
    """A metric's score as pass (1) or fail (0), None where Ragas computed none: 0 and 1 as they are, any other
    score against the threshold (an error without one)."""
    if values.is_missing(value):
        return None
    x = values.number(value)
    if x is None:
        raise InputError(where, f"must be a score (a number), got {values.shown(value)}", line=n, field=column, unit="row")
    if threshold is not None:
        return int(x >= threshold)
    if x in (0.0, 1.0):
        return int(x)
    raise InputError(where, f"a continuous score ({values.shown(value)}): give --threshold T to read a score of at least T as a "
                            "pass (docs/FORMATS.md#ragas)", line=n, field=column, unit="row")


def _notes(n: int, r: dict[str, Any], cols: tuple[str | None, str | None, list[str]], opts: InputOptions,
           where: str) -> list[Note]:
    ident, gold, metrics = cols
    item = str(r[ident]).strip() if ident is not None and not values.is_missing(r.get(ident)) else str(n - 1)
    text = r.get("user_input") if isinstance(r.get("user_input"), str) else _conversation(r.get("user_input"))
    out = []
    if gold is not None:
        try:
            label = values.mark(r.get(gold))
        except values.ValueProblem as exc:
            raise InputError(where, str(exc), line=n, field=gold, unit="row") from None
        out.append(Note(item, QUESTION, None, label, n, gold, text))
    threshold = opts.handling.threshold
    return out + [Note(item, QUESTION, m, verdict(r.get(m), threshold, where, n, m), n, m, text) for m in metrics]


def read_ragas(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The ragas format's reader (formats.py)."""
    skipped: Skipped = []
    rows = list(records(src, skipped if opts.handling.skip_invalid else None))
    ident, gold, metrics, other = _columns(rows, opts)
    if not metrics:
        raise InputError(src.where, "no metric columns: every column is one of Ragas' sample fields or holds no scores")
    notes, skipped = read_notes(src, opts, lambda n, r: _notes(n, r, (ident, gold, metrics), opts, src.where), rows, skipped,
                                 "row")
    shown = "pandas' index" if ident == "" else ident or "the row (from 0)"
    roles: tuple[tuple[str, str], ...] = (("item", shown), ("judges", ", ".join(metrics)),
                                          ("gold", gold or "none: --labels"))
    if opts.handling.threshold is not None:
        roles += (("threshold", f"a score >= {opts.handling.threshold:g} passes"),)
    left = Counter({f"column(s) that hold no scores ({', '.join(other)})": len(other)} if other else {})
    return datasets(notes, src, opts, keep, Reading("ragas", roles, unit="row"), left, skipped=skipped, correctness=True)
