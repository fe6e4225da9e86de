"""OpenAI evals logs (docs/FORMATS.md#openai-evals): the JSON Lines `oaieval` writes with its LocalRecorder
(`--record_path`, default /tmp/evallogs/<run_id>_<model>_<eval>.jsonl; evals/record.py): a `spec` line, a
`final_report` line, then one event a line (`run_id`, `event_id`, `sample_id`, `type`, `data`).

Items are the samples (`sample_id`). Judges, with their marks (1 agreed with the gold, 0 not):
- a `metrics` event's `metascore` (evals' metaeval: the model grader's `choice` equals the sample's human
  `choice`): the judge is the run's grader, the last of `spec.completion_fns`;
- a `metrics` event's `<name>_metascore` keys (several graders recorded in one event): one judge per name;
- a `match` event's `correct` (the sampled answer against the sample's `ideal`): the judge is the run's first
  completion fn, scored against the ideal.
The gold is the human's (the metaeval's `choice`, the `ideal`) and stays in the sample: the log keeps only the
marks, so the reading is correctness only. `final_report`, `sampling` and other events are not read.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from . import values
from .build import Mark, from_marks
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep
from .paths import iter_objects

SUFFIX = "_metascore"


def _judges(event: dict[str, Any], grader: str, model: str) -> list[tuple[str, Any, str]]:
    """(judge, mark value, field) of one event."""
    data = event.get("data")
    if not isinstance(data, dict):
        return []
    if event.get("type") == "match":
        return [(model, data.get("correct"), "data.correct")] if "correct" in data else []
    if event.get("type") != "metrics":
        return []
    out = [(grader, data["metascore"], "data.metascore")] if "metascore" in data else []
    return out + [(k[: -len(SUFFIX)], v, f"data.{k}") for k, v in data.items() if k.endswith(SUFFIX) and len(k) > len(SUFFIX)]


def read_openai_evals(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The openai_evals format's reader (formats.py)."""
    spec: dict[str, Any] = {}
    marks: list[Mark] = []
    kept: dict[int, Any] = {}  # --by: each event, for its sample's slice
    for n, rec in iter_objects(src.path, src.where):
        if opts.record.by is not None:
            kept[n] = rec
        if "spec" in rec:
            spec = rec["spec"] if isinstance(rec["spec"], dict) else {}
            continue
        if "final_report" in rec:
            continue
        fns = [str(f) for f in spec.get("completion_fns") or []] or ["model"]
        sample = rec.get("sample_id")
        for judge, value, field in _judges(rec, fns[-1], fns[0]):
            if not isinstance(sample, str) or not sample:
                raise InputError(src.where, f"an event with a verdict needs its sample id, got {values.shown(sample)}",
                                 line=n, field="sample_id")
            try:
                mark = values.mark(value)
            except values.ValueProblem as exc:
                raise InputError(src.where, str(exc), line=n, field=field) from None
            marks.append(Mark(sample, judge, mark, n))
    if not marks:
        raise InputError(src.where, "no match or metaeval events (metrics with metascore, <grader>_metascore): nothing "
                                    "plays a judge in this log")
    name = str(spec.get("base_eval") or spec.get("eval_name") or src.name)
    roles = (("item", "sample_id"), ("judges", "metrics: metascore, <grader>_metascore; match: correct"),
             ("gold", "the sample's choice / ideal (in the marks)"))
    reading = Reading("openai_evals", roles, unit="line")
    shown = src.name if src.stdin else name
    if opts.record.by is None:
        return from_marks(marks, shown, src.where, reading, keep, "line")
    from .slices import mark_slices, named  # --by: a field of the sample's first event (data.*, ...)

    return named(from_marks(mark_slices(marks, kept, opts.record.by, src.where), shown, src.where, reading, keep, "line"),
                 shown, opts.record.by)
