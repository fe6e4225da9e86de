"""Braintrust experiment exports (docs/FORMATS.md#braintrust): the experiment's rows (ExperimentEvent records, as
the app's JSON export or `braintrust.init(..., open=True).fetch()` writes them) as a JSON list or JSON Lines.

A root row (`is_root`, or a row without `span_parents`) is an item (`root_span_id`, else `id`); rows of child
spans (the scorers' own spans, LLM calls) are passed over. All the row's `scores` answer one question, "is the
output right": each score key is a judge, but the gold. The gold is the field `--label-field` names (a dotted path
such as `scores.human_review` or `metadata.gold`), else the one score key whose name holds "human" (a human review
score), else `expected` when it is one value. The value rule compares each score with the gold (a graded score
0.6 against the gold 1 is wrong unless `--tolerance` says it is close enough).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..errors import InputError
from . import records as paths_in
from .annotations import Note, as_text, datasets, first_text, records
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

QUESTION = "scores"




def _gold_field(rows: list[tuple[int, dict[str, Any]]], opts: InputOptions) -> str:
    if opts.record.label_field != "label":
        return opts.record.label_field
    keys = dict.fromkeys(k for _, r in rows for k in (r.get("scores") or {}) if "human" in str(k).lower())
    if len(keys) == 1:
        return f"scores.{next(iter(keys))}"
    return "expected"


def read_braintrust(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The braintrust format's reader (formats.py)."""
    rows = [(n, r) for n, r in records(src) if r.get("is_root") or (r.get("is_root") is None and not r.get("span_parents"))]
    gold_at = _gold_field(rows, opts)
    if gold_at == "expected" and opts.record.label_field == "label":
        shaped = next(((n, r) for n, r in rows if isinstance(r.get("expected"), (dict, list))), None)
        if shaped is not None:
            raise InputError(src.where, "no gold: no score key names a human review and `expected` is not one value; name "
                                        "the gold with `label_field` (e.g. scores.NAME or metadata.gold)", line=shaped[0],
                             field="expected", unit="record")
    left: Counter[str] = Counter()
    notes = []
    for n, r in rows:
        item = first_text(r, "root_span_id", "id")
        if item is None:
            raise InputError(src.where, "a row without an id", line=n, field="root_span_id", unit="record")
        scores = r.get("scores") or {}
        if not isinstance(scores, dict):
            raise InputError(src.where, "must be an object of scores", line=n, field="scores", unit="record")
        text = first_text(r, "input") or as_text(r.get("input"))
        notes.append(Note(item, QUESTION, None, paths_in.get(r, gold_at, None), n, gold_at, text))
        notes += [Note(item, QUESTION, str(k), v, n, f"scores.{k}", text) for k, v in scores.items() if f"scores.{k}" != gold_at]
    reading = Reading("braintrust", (("item", "root_span_id"), ("judges", "scores.*"), ("gold", gold_at)), unit="record")
    return datasets(notes, src, opts, keep, reading, left)
