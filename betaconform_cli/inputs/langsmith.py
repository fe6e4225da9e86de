"""LangSmith feedback, exported (docs/FORMATS.md#langsmith): JSON Lines (or a JSON list) of Feedback records
(`Client.list_feedback`, `langsmith.schemas.Feedback`), or of Runs (`langsmith.schemas.Run`) each carrying its
feedback in a `feedback` list.

The item is the run (`run_id`; a Run's `id`); a feedback's `key` is one question. A feedback whose
`feedback_source.type` is "model" is a judge's verdict (the judge: `feedback_source.metadata.judge`, `.model`,
`.ls_model_name` or `.model_name`, else "model"); any other source ("api", "app": a person through the SDK or the
app) is a human's label, the gold. A `correction` on a feedback is a human's correction of that verdict: the
verdict stays the judge's and the correction (its `score` or `value` when it is an object) is the run's gold.
The value is `score`, else `value`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..errors import InputError
from .annotations import Note, datasets, decoded, first_text, read_notes
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

JUDGE_KEYS = ("metadata.judge", "metadata.model", "metadata.ls_model_name", "metadata.model_name")




def _feedback(n: int, record: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(run id, feedback, its field) of a record: a Feedback, or a Run with a feedback list."""
    if "run_type" in record and "feedback" in record:
        listed = decoded(record.get("feedback"), where, n, "feedback") or []
        if not isinstance(listed, list):
            raise InputError(where, "must be a list of feedback", line=n, field="feedback", unit="record")
        for k, f in enumerate(listed):
            if not isinstance(f, dict):
                raise InputError(where, "must be a feedback object", line=n, field=f"feedback[{k}]", unit="record")
            yield first_text(f, "run_id") or first_text(record, "id") or "", f, f"feedback[{k}]."
        return
    yield first_text(record, "run_id") or "", record, ""


def _value(f: dict[str, Any]) -> tuple[Any, str]:
    return (f.get("score"), "score") if f.get("score") is not None else (f.get("value"), "value")


def _notes(n: int, record: dict[str, Any], where: str, left: Counter[str]) -> list[Note]:
    out = []
    for run, f, at in _feedback(n, record, where):
        key = first_text(f, "key")
        if not run or key is None:
            raise InputError(where, "a feedback without a run or a key", line=n, field=at + ("run_id" if not run else "key"), unit="record")
        source: dict[str, Any] = f["feedback_source"] if isinstance(f.get("feedback_source"), dict) else {}
        kind = str(source.get("type") or "api")
        value, vat = _value(f)
        judge = (first_text(source, *JUDGE_KEYS) or "model") if kind == "model" else None
        out.append(Note(run, key, judge, value, n, at + vat))
        correction = f.get("correction")
        if correction is not None:
            if isinstance(correction, dict):
                fixed, cat = _value(correction)
                out.append(Note(run, key, None, fixed, n, f"{at}correction.{cat}"))
            else:
                out.append(Note(run, key, None, correction, n, f"{at}correction"))
    return out


def read_langsmith(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The langsmith format's reader (formats.py)."""
    left: Counter[str] = Counter()
    notes, skipped = read_notes(src, opts, lambda n, rec: _notes(n, rec, src.where, left))
    reading = Reading("langsmith", (("item", "run_id"), ("question", "key"),
                                    ("judges", "feedback_source.type model: metadata.judge/model"),
                                    ("gold", "feedback_source.type api/app, or correction")), unit="record")
    return datasets(notes, src, opts, keep, reading, left, "name each judge in its feedback_source.metadata.judge or "
                                                           ".model (docs/FORMATS.md#langsmith)", skipped=skipped)
