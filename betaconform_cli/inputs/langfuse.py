"""Langfuse scores, exported (docs/FORMATS.md#langfuse): the public API's scores (`GET /api/public/v2/scores`:
{"data": [...]}; the Python SDK's `langfuse.api` Score models), JSON Lines of them, or the blob-storage export's
scores table (the same fields in snake_case).

A score's `name` is one question; its item is the trace (`traceId`), or the observation within it when the score
names one (`traceId/observationId`). `source` EVAL (Langfuse's LLM-as-a-judge evaluators) and API (scores an
SDK sent) are judges' verdicts, ANNOTATION a human's label (the gold). Langfuse records no judge on a score: the
judge is the score's `metadata.judge` (or `metadata.model`, `metadata.evaluator`), else its source (EVAL, API), so
several judges of one question each write their name in the metadata. The value is `stringValue` for a CATEGORICAL
score, else `value` (BOOLEAN: 1/0); CORRECTION and TEXT scores (an edited output, free text) are left out and
counted.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..errors import InputError
from .annotations import Note, Skipped, datasets, decoded, first_text, read_notes, records
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

SOURCES = ("EVAL", "API", "ANNOTATION")
JUDGE_KEYS = ("metadata.judge", "metadata.model", "metadata.evaluator")




def _note(n: int, s: dict[str, Any], where: str, left: Counter[str]) -> Note | None:
    if isinstance(s.get("metadata"), str):  # the CSV export writes the metadata object as JSON text
        s = {**s, "metadata": decoded(s["metadata"], where, n, "metadata")}
    trace = first_text(s, "traceId", "trace_id")
    observation = first_text(s, "observationId", "observation_id")
    name = first_text(s, "name")
    if trace is None or name is None:
        field = "traceId" if trace is None else "name"
        raise InputError(where, "a score without a trace or a name", line=n, field=field, unit="record")
    item = trace if observation is None else f"{trace}/{observation}"
    kind = str(s.get("dataType") or s.get("data_type") or "NUMERIC").upper()
    if kind in ("CORRECTION", "TEXT"):
        left[f"{kind} score(s)"] += 1
        return None
    at = ("stringValue" if "stringValue" in s else "string_value") if kind == "CATEGORICAL" else "value"
    source = str(s.get("source"))
    judge = None if source == "ANNOTATION" else first_text(s, *JUDGE_KEYS) or source
    if source not in SOURCES:
        raise InputError(where, f"must be one of {', '.join(SOURCES)}, got {s.get('source')!r}", line=n, field="source", unit="record")
    return Note(item, name, judge, s.get(at), n, at, None)


def _dated(rec: dict[str, Any]) -> dict[str, Any]:
    """A CSV export's row with its `timestamp` as the JSON export holds it: Langfuse's CSV writer passes every
    non-string value through JSON.stringify (transforms/stringify.ts `stringifyForCsv`), so the score's Date arrives
    as "2026-11-27T09:00:00.000Z" in its own quotes; --time-field and --cluster-field read the text inside them."""
    t = rec.get("timestamp")
    if isinstance(t, str) and len(t) > 1 and t[0] == t[-1] == '"':
        try:
            return {**rec, "timestamp": json.loads(t)}
        except ValueError:
            return rec
    return rec


def read_langfuse(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The langfuse format's reader (formats.py)."""
    left: Counter[str] = Counter()
    skipped: Skipped = []
    rows = None
    if src.plan.kind in ("csv", "tsv"):
        rows = ((n, _dated(rec)) for n, rec in records(src, skipped if opts.handling.skip_invalid else None))
    notes, skipped = read_notes(src, opts, lambda n, rec: _note(n, rec, src.where, left), rows, skipped)
    reading = Reading("langfuse", (("item", "traceId[/observationId]"), ("question", "name"),
                                   ("judges", "source EVAL/API: metadata.judge, else the source"), ("gold", "source ANNOTATION")),
                      unit="record")
    return datasets(notes, src, opts, keep, reading, left, "a Langfuse score names no judge: write each judge's name "
                                                           "into its scores' metadata.judge (docs/FORMATS.md#langfuse)", skipped=skipped)
