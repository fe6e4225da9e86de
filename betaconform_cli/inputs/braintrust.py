"""Braintrust experiment exports (docs/FORMATS.md#braintrust): the experiment's rows (ExperimentEvent records, as
the app's JSON export or `braintrust.init(..., open=True).fetch()` writes them) as a JSON list or JSON Lines, or the
app's CSV export of them (a row per record, objects as JSON in their cells, or the scores as `scores.NAME` columns).

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
from .annotations import Note, Skipped, as_text, datasets, decoded, first_text, read_notes, reason_of, records
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

QUESTION = "scores"




JSON_CELLS = ("scores", "span_parents")  # objects in a CSV export's cells, JSON or an error
MAYBE_JSON = ("expected", "metadata")  # JSON when they parse (a gold's path may go into them), else their text


def _row(n: int, r: dict[str, Any], where: str, csv: bool) -> dict[str, Any]:
    """A record as the JSON export holds it: a CSV row's JSON cells decoded (`scores`, `span_parents`, ...), its
    `scores.NAME` columns gathered into `scores`, `is_root` a boolean."""
    if not csv:
        return r
    out = {k: v for k, v in r.items() if not k.startswith("scores.")}
    for k in JSON_CELLS:
        out[k] = decoded(out.get(k), where, n, k, "row")
    for k in MAYBE_JSON:
        try:
            out[k] = decoded(out.get(k), where, n, k, "row")
        except InputError:
            pass  # free text that happens to start with a bracket
    flat = {k[len("scores."):]: v for k, v in r.items() if k.startswith("scores.")}
    if flat:
        out["scores"] = {**(out.get("scores") or {}), **flat} if isinstance(out.get("scores") or {}, dict) else out["scores"]
    root = str(out.get("is_root")).strip().lower()
    out["is_root"] = True if root == "true" else False if root == "false" else None
    return out


def _gold_field(rows: list[tuple[int, dict[str, Any]]], opts: InputOptions) -> str:
    if opts.record.label_field != "label":
        return opts.record.label_field
    keys = dict.fromkeys(k for _, r in rows if isinstance(r.get("scores"), dict)  # else refused with its record
                         for k in r["scores"] if "human" in str(k).lower())
    if len(keys) == 1:
        return f"scores.{next(iter(keys))}"
    return "expected"


def _notes(n: int, r: dict[str, Any], gold_at: str, where: str) -> list[Note]:
    """A root row's notes: the gold, and each score but the gold's a judge's verdict."""
    item = first_text(r, "root_span_id", "id")
    if item is None:
        raise InputError(where, "a row without an id", line=n, field="root_span_id", unit="record")
    scores = r.get("scores") or {}
    if not isinstance(scores, dict):
        raise InputError(where, "must be an object of scores", line=n, field="scores", unit="record")
    text = first_text(r, "input") or as_text(r.get("input"))
    return [Note(item, QUESTION, None, paths_in.get(r, gold_at, None), n, gold_at, text),
            *(Note(item, QUESTION, str(k), v, n, f"scores.{k}", text) for k, v in scores.items() if f"scores.{k}" != gold_at)]


def _rows(src: Source, opts: InputOptions, skipped: Skipped) -> list[tuple[int, dict[str, Any]]]:
    """The export's root rows (`is_root`, or no `span_parents`), CSV rows as JSON records (`_row`)."""
    csv = src.plan.kind in ("csv", "tsv")
    rows = []
    for n, r in records(src, skipped if opts.handling.skip_invalid else None):
        try:
            r = _row(n, r, src.where, csv)
        except InputError as exc:
            if not opts.handling.skip_invalid:
                raise
            skipped.append((None, reason_of(exc), n))
            continue
        if r.get("is_root") or (r.get("is_root") is None and not r.get("span_parents")):
            rows.append((n, r))
    return rows


def read_braintrust(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The braintrust format's reader (formats.py)."""
    skipped: Skipped = []
    rows = _rows(src, opts, skipped)
    gold_at = _gold_field(rows, opts)
    if gold_at == "expected" and opts.record.label_field == "label":
        shaped = next(((n, r) for n, r in rows if isinstance(r.get("expected"), (dict, list))), None)
        if shaped is not None:
            raise InputError(src.where, "no gold: no score key names a human review and `expected` is not one value; name "
                                        "the gold with `label_field` (e.g. scores.NAME or metadata.gold)", line=shaped[0],
                             field="expected", unit="record")
    notes, skipped = read_notes(src, opts, lambda n, r: _notes(n, r, gold_at, src.where), rows, skipped)
    reading = Reading("braintrust", (("item", "root_span_id"), ("judges", "scores.*"), ("gold", gold_at)), unit="record")
    return datasets(notes, src, opts, keep, reading, Counter(), skipped=skipped)
