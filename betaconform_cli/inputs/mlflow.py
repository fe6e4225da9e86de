"""MLflow 3 traces with assessments, exported from `mlflow.search_traces()` (docs/FORMATS.md#mlflow).

A record is a trace: a row of `search_traces`' frame (`trace_id`, `assessments`, `request`; written with
`to_json(orient="records", lines=True)` or `to_parquet()`), or a trace's own `Trace.to_dict()` (`info.trace_id`,
`info.assessments`). The item is the trace id; each assessment's `assessment_name` is one question. An assessment
whose `source.source_type` is LLM_JUDGE is a judge's verdict (the judge: `source.source_id`); HUMAN is a human's
label, the gold; CODE (and any other source) is left out and counted. The value is `feedback.value` (or
`expectation.value`); a feedback with an `error` and no value is no verdict. A verdict a human overrode
(`mlflow.override_feedback`: the judge's assessment kept with `valid: false`, the human's with `overrides`) stays
the judge's verdict, and the human's becomes the trace's gold; a human label that was overridden is not gold.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..errors import InputError
from .annotations import Note, as_text, datasets, decoded, first_text, read_notes
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

JUDGE, HUMAN = "LLM_JUDGE", "HUMAN"




def _value(a: dict[str, Any]) -> tuple[Any, str]:
    for kind in ("feedback", "expectation"):
        part = a.get(kind)
        if isinstance(part, dict):
            return part.get("value"), f"{kind}.value"
    return a.get("value"), "value"


def _notes(n: int, record: dict[str, Any], where: str, left: Counter[str]) -> list[Note]:
    info = record["info"] if isinstance(record.get("info"), dict) else record
    trace = first_text(info, "trace_id", "request_id")
    if trace is None:
        raise InputError(where, "no trace id", line=n, field="trace_id", unit="record")
    listed = decoded(info.get("assessments"), where, n, "assessments")
    if listed is None:
        listed = []
    if not isinstance(listed, list) or not all(isinstance(a, dict) for a in listed):
        raise InputError(where, "must be a list of assessments (objects)", line=n, field="assessments", unit="record")
    text = first_text(record, "request_preview", "info.request_preview", "request") or as_text(record.get("request"))
    overridden = {str(a.get("overrides")) for a in listed if a.get("overrides")}
    judged: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
    out: list[Note] = []
    for k, a in enumerate(listed):
        name = first_text(a, "assessment_name", "name")
        if name is None:
            raise InputError(where, "an assessment without a name", line=n, field=f"assessments[{k}].assessment_name", unit="record")
        source = a.get("source") if isinstance(a.get("source"), dict) else {}
        kind = str(source.get("source_type") or "no source")
        if kind == JUDGE:
            judged.setdefault((name, first_text(source, "source_id") or JUDGE), []).append((k, a))
        elif kind == HUMAN:
            if a.get("valid") is False and str(a.get("assessment_id")) in overridden:
                continue  # a human label that another replaced
            value, at = _value(a)
            out.append(Note(trace, name, None, value, n, f"assessments[{k}].{at}", text))
        else:  # mlflow.genai.evaluate records a judge that failed (no JSON in its reply) as a CODE feedback with an error
            error = a["feedback"].get("error") if isinstance(a.get("feedback"), dict) else None
            code = error.get("error_code") if isinstance(error, dict) else None
            left[f"{kind} assessment(s)" + (f" with an error ({code or 'no value'}: a scorer that failed, no verdict)"
                                           if error else "")] += 1
    for (name, judge), given in judged.items():
        valid = [(k, a) for k, a in given if a.get("valid") is not False]
        for k, a in valid or given[:1]:  # the judge's current verdict; the original of one a human overrode
            value, at = _value(a)
            out.append(Note(trace, name, judge, value, n, f"assessments[{k}].{at}", text))
    return out


def read_mlflow(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The mlflow format's reader (formats.py)."""
    left: Counter[str] = Counter()
    notes, skipped = read_notes(src, opts, lambda n, rec: _notes(n, rec, src.where, left))
    if not notes:
        raise InputError(src.where, "no assessments in this MLflow export (search_traces: were the traces assessed?)")
    reading = Reading("mlflow", (("item", "trace_id"), ("question", "assessments[].assessment_name"),
                                 ("judges", "source_type LLM_JUDGE: source.source_id"), ("gold", "source_type HUMAN")),
                      unit="record")
    return datasets(notes, src, opts, keep, reading, left, skipped=skipped)
