"""Arize Phoenix span annotations, exported (docs/FORMATS.md#phoenix): the REST API's response (`GET
/v1/projects/{id}/span_annotations`: {"data": [SpanAnnotation, ...]}; the client's `phoenix.client` types), JSON
Lines of SpanAnnotation records, or the client's annotations data frame (`get_span_annotations_dataframe`:
`annotation_name`, `result.label`, `result.score`; its `span_id` index made a column with `reset_index()`, or kept
as the index) written as JSON Lines, Parquet or CSV.

The item is the span (`span_id`; a trace annotation's `trace_id`, a session annotation's `session_id`: the REST
API's `/trace_annotations` and `/session_annotations`); an annotation's `name` is one question.
`annotator_kind` LLM is a judge's verdict (the judge: `identifier` when set, else `metadata.judge` or
`metadata.model`, else "LLM"); HUMAN is a human's label, the gold; CODE is left out and counted. The value is
`result.label`, else `result.score`.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

import orjson

from ..errors import InputError
from ..formats import load_json
from .annotations import Note, datasets, first_text, read_notes
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep
from .values import is_missing

JUDGE_KEYS = ("identifier", "metadata.judge", "metadata.model")
ITEM_KEYS = ("span_id", "trace_id", "session_id")  # a span's, a trace's, a session's annotation




def _value(a: dict[str, Any]) -> tuple[Any, str]:
    """The label, else the score: nested (`result`), or flat columns of a data frame (`result.label`, `label`)."""
    result = a.get("result")
    if isinstance(result, dict):
        prefix, label, score = "result.", result.get("label"), result.get("score")
    else:
        prefix = "result." if "result.label" in a or "result.score" in a else ""
        label, score = a.get(prefix + "label"), a.get(prefix + "score")
    return (label, prefix + "label") if not is_missing(label) else (score, prefix + "score")


def _metadata(a: dict[str, Any]) -> dict[str, Any]:
    """The annotation with its metadata as an object: a CSV export holds it as text, JSON or -- pandas' to_csv of the
    client's data frame -- the object as Python shows it ("{'model': 'gpt-4o'}"); text that is neither is no metadata."""
    meta = a.get("metadata")
    if not isinstance(meta, str) or not meta.lstrip().startswith("{"):
        return a
    try:
        got: Any = load_json(meta)
    except orjson.JSONDecodeError:
        try:
            got = ast.literal_eval(meta) if len(meta) < 100_000 else None  # literals only: no code runs
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # TypeError: "{[1]: 2}", a list as key
            got = None
    return {**a, "metadata": got if isinstance(got, dict) else None}


def _note(n: int, a: dict[str, Any], where: str, left: Counter[str], keys: Counter[str]) -> Note | None:
    a = _metadata(a)
    item, name = first_text(a, *ITEM_KEYS), first_text(a, "name", "annotation_name")
    if item is None or name is None:
        raise InputError(where, "an annotation without a span or a name", line=n, field="span_id" if item is None else "name",
                         unit="record")
    keys[next(k for k in ITEM_KEYS if first_text(a, k) is not None)] += 1
    kind = str(a.get("annotator_kind"))
    if name == "note" and str(a.get("identifier") or "").startswith("px-span-note:"):  # add_span_note: a comment
        left["note(s) (Phoenix's span notes, comments)"] += 1
        return None
    if kind not in ("LLM", "HUMAN"):
        left[f"{kind} annotation(s)"] += 1
        return None
    value, at = _value(a)
    return Note(item, name, (first_text(a, *JUDGE_KEYS) or "LLM") if kind == "LLM" else None, value, n, at)


def read_phoenix(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The phoenix format's reader (formats.py)."""
    left: Counter[str] = Counter()
    keys: Counter[str] = Counter()
    notes, skipped = read_notes(src, opts, lambda n, rec: _note(n, rec, src.where, left, keys))
    item = "/".join(k for k in ITEM_KEYS if k in keys) or "span_id"
    reading = Reading("phoenix", (("item", item), ("question", "name"), ("judges", "annotator_kind LLM: identifier"),
                                  ("gold", "annotator_kind HUMAN")), unit="record")
    return datasets(notes, src, opts, keep, reading, left, "give each judge's annotations their own identifier "
                                                           "(docs/FORMATS.md#phoenix)", skipped=skipped)
