"""What the trace-store readers share (MLflow, Langfuse, LangSmith, Phoenix, Braintrust; docs/FORMATS.md): their
exports' records, and the step from annotations to Datasets.

A trace store keeps every verdict as one *annotation*: an item (a trace, a span, a run), a question (the
annotation's name: the same name is one question), who gave it, and a value. A format's reader says, for each
annotation, whether it is a judge's verdict or a human's label (the gold) and where its value is (`Note`);
`datasets` does the rest the same way for every format: one dataset per question (the file's name when it holds
one), an item's gold from its human labels (several must agree) or from `--labels` (joined on the item id), each
judge's verdict scored against the gold by the one value rule (values.agree) and kept as its class for the vote
patterns, through build.from_marks like every other reader.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any
from uuid import UUID

import orjson

from ..errors import InputError
from ..formats import kind_by_name, load_json
from . import values
from .build import Mark, from_marks, with_skips
from .dataset import Dataset, Reading
from .detect import LIST_KEYS, Source
from .options import InputOptions, Keep
from .paths import iter_lines, iter_objects, open_binary
from .slices import mark_slices, named

ONLY_GOLD = "a human label and no judge verdict"


@dataclass(frozen=True)
class Note:
    """One annotation: `judge` is the judge's name, or None for a human's label (the gold); `field` is where its
    value is in record `record` (for messages); `cluster` its item's cluster (`cluster_field` of its record)."""

    item: str
    question: str
    judge: str | None
    value: Any
    record: int
    field: str
    text: str | None = None
    cluster: str | None = None


Skipped = list[tuple[str | None, str, int]]  # (dataset or None, reason, record): records skipped (skip_invalid)


def records(src: Source, skipped: Skipped | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(record number, record) of an export: JSON Lines (a record a line), a JSON document (a list of records, or
    an object holding one under data, rows, results, ...), a Parquet file (a record a row, read by DuckDB) or a CSV
    export (a record a row, the header its field names: `csv_records`). `skipped` (skip_invalid): a line that is
    not a JSON object, or a record that is not an object, is counted there instead of stopping the read."""
    kind = src.plan.kind if src.plan.kind in ("parquet", "json", "jsonl", "csv", "tsv") else kind_by_name(src.path) or "jsonl"
    if kind == "parquet":
        yield from _parquet(src)
        return
    if kind in ("csv", "tsv"):
        yield from csv_records(src, "\t" if kind == "tsv" else ",", skipped)
        return
    with open_binary(src.path) as fh:
        head = bytes(fh.peek(64)[:64]).lstrip(b"\xef\xbb\xbf \t\r\n")  # type: ignore[attr-defined]
    if kind == "json" or head.startswith(b"["):
        yield from _document(src, skipped)
        return
    if skipped is None:
        yield from iter_objects(src.path, src.where)
        return
    for n, raw in iter_lines(src.path):
        try:
            obj = load_json(raw)
        except orjson.JSONDecodeError:
            skipped.append((None, "malformed JSON", n))
            continue
        if isinstance(obj, dict):
            yield n, obj
        else:
            skipped.append((None, "not a JSON object", n))


def read_notes(src: Source, opts: InputOptions, of: Callable[[int, dict[str, Any]], Note | Iterable[Note] | None],
               rows: Iterable[tuple[int, dict[str, Any]]] | None = None, skipped: Skipped | None = None,
               unit: str = "record") -> tuple[list[Note], Skipped]:
    """Every record's annotations (`of`: the format's reading of one record: a Note, several, or None) and the
    records skipped. With skip_invalid a record that cannot be read (malformed JSON, not an object, a field the
    format refuses) is skipped and counted with its first message, as JSON Lines and tables count theirs
    (`datasets(skipped=...)`); without it the record's error stands. `rows`: the records when the reader has read
    them already (`records(src, skipped)`), with the records that reading skipped. `cluster_field`: each note
    carries its record's value of that field as its item's cluster (every record needs one)."""
    skip = opts.handling.skip_invalid
    field = opts.record.cluster_field
    skipped = [] if skipped is None else skipped
    notes: list[Note] = []
    for n, rec in records(src, skipped if skip else None) if rows is None else rows:
        try:
            got = of(n, rec)
            cluster = None if field is None or got is None else _cluster(rec, field, src.where, n, unit)
        except InputError as exc:
            if not skip:
                raise
            skipped.append((None, reason_of(exc), n))
            continue
        if got is not None:
            mine = [got] if isinstance(got, Note) else list(got)
            notes.extend(mine if cluster is None else (replace(note, cluster=cluster) for note in mine))
    return notes, skipped


def _cluster(rec: dict[str, Any], field: str, where: str, n: int, unit: str) -> str:
    from .records import RecordError, cluster_id

    try:
        return cluster_id(rec, field)
    except RecordError as err:
        raise InputError(where, err.message, line=n, field=field, unit=unit) from None


def reason_of(exc: InputError) -> str:
    """A skipped record's reason: its error's message and field, without the file and the record."""
    return exc.reason if exc.field is None else f"field '{exc.field}': {exc.reason}"


NUMERIC = ("value", "scores.", "result.score")  # CSV columns whose cells are numbers in the JSON export (a name, or a prefix)


def csv_records(src: Source, delimiter: str = ",", skipped: Skipped | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row) of a CSV export, the header its field names: an empty cell is null, a number in a NUMERIC
    column a number (CSV has no types: the JSON export's `1` and the CSV's "1" are one value), the rest text (a
    categorical "1" stays text, as in the JSON). Cells holding JSON (an object or a list: metadata, scores) stay
    text until `decoded` reads them. A row of more or fewer cells than the header is an error, or counted in
    `skipped` (skip_invalid)."""
    import csv
    import io

    with open_binary(src.path) as fh:
        text = io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")
        try:
            reader = csv.reader(text, delimiter=delimiter)
            header = next(reader, None)
            if header is None:
                return
            for n, row in enumerate(reader, start=1):
                if not any(c.strip() for c in row):
                    continue
                if len(row) != len(header):
                    why = f"{len(row)} cells under a header of {len(header)} columns"
                    if skipped is None:
                        raise InputError(src.where, why, line=n, unit="row")
                    skipped.append((None, f"malformed CSV row ({why})", n))
                    continue
                yield n, {k: csv_value(v) if _numeric(k) else (v if v != "" else None) for k, v in zip(header, row)}
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(src.where, f"not a readable CSV file ({exc})") from None


def _numeric(column: str) -> bool:
    return column in NUMERIC or column.startswith(tuple(p for p in NUMERIC if p.endswith(".")))


def csv_value(cell: str) -> Any:
    """A CSV cell as the JSON export holds the value: empty is null, a decimal number a number, else the text."""
    if cell == "":
        return None
    try:
        number = float(cell)
    except ValueError:
        return cell
    if not math.isfinite(number) or cell.strip() != cell or cell.lower().startswith(("inf", "nan", "+", "-inf", "-nan")):
        return cell
    return int(cell) if cell.lstrip("-").isdigit() else number


def _document(src: Source, skipped: Skipped | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_binary(src.path) as fh:
        raw = fh.read()
    try:
        doc = load_json(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(src.where, values.json_problem(raw[:4096], exc)) from None
    rows = doc if isinstance(doc, list) else next((doc[k] for k in LIST_KEYS if isinstance(doc, dict) and isinstance(doc.get(k), list)), None)
    if rows is None:
        rows = [doc] if isinstance(doc, dict) else None
    if rows is None:
        raise InputError(src.where, f"must be a list of records or an object, got {values.shown(doc)}")
    for n, obj in enumerate(rows, start=1):
        if not isinstance(obj, dict):
            if skipped is not None:
                skipped.append((None, "not a JSON object", n))
                continue
            raise InputError(src.where, f"each record must be an object, got {values.shown(obj)}", line=n, unit="record")
        yield n, obj


def _plain(value: Any) -> Any:
    """A Parquet cell as its JSON export holds it: a UUID (a column an engine typed so) is its text, in lists and
    structs too; the rest as DuckDB gives it."""
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _parquet(src: Source) -> Iterator[tuple[int, dict[str, Any]]]:
    from .tables import connect

    con = connect()
    try:
        cur = con.execute("SELECT * FROM read_parquet(?)", [str(src.path)])
        names = [d[0] for d in cur.description]
        for n, row in enumerate(cur.fetchall(), start=1):
            yield n, {k: _plain(v) for k, v in zip(names, row)}
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - DuckDB's errors on a damaged file are about the user's file
        raise InputError(src.where, f"not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()


def decoded(value: Any, where: str, n: int, field: str, unit: str = "record") -> Any:
    """A field that may hold JSON as text (a CSV or Parquet export of a nested column), decoded."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return load_json(value)
        except orjson.JSONDecodeError:
            raise InputError(where, "must be JSON (a list or an object), got malformed text", line=n, field=field, unit=unit) from None
    return value


def first_text(obj: Any, *paths: str) -> str | None:
    """The first of these dotted paths that holds non-empty text (or a number), as text."""
    from .records import get

    for p in paths:
        v = get(obj, p, None)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip():
            return str(v).strip()
    return None


def as_text(value: Any) -> str | None:
    """A structured value (a request's inputs) as compact JSON text, for an item's text; None when empty."""
    if value is None or value == {} or value == []:
        return None
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return str(value)


def datasets(notes: Iterable[Note], src: Source, opts: InputOptions, keep: Keep, reading: Reading,
             left_out: Counter[str], judges_named: str = "", skipped: Skipped | None = None,
             correctness: bool = False) -> list[Dataset]:
    """Datasets from annotations (the module's docstring): one per question, gold from the humans or --labels. A
    judge's second verdict on an item is an error (`judges_named`: how the format names judges, for the message),
    unless `duplicates` keeps the first or the last. `skipped`: records read_notes skipped (skip_invalid), to
    which a verdict or label that is not one value (a list, an object) is added, counted in the readings.
    `correctness`: the verdicts are pass/fail marks (1/0: Ragas' scores), so every gold, a human's or the labels
    file's, is read as one (values.mark: pass/fail, yes/no, true/false, 1/0), an error naming where it came from."""
    unit = reading.unit
    skipped = list(skipped or [])
    if opts.handling.skip_invalid:
        notes = _valid(notes, src.where, unit, skipped)
    by_q: dict[str, list[Note]] = {}
    for note in _one_cluster(_once(notes, src.where, opts.handling.duplicates, unit, judges_named), src.where, unit):
        by_q.setdefault(note.question, []).append(note)
    if not any(n.judge is not None for ns in by_q.values() for n in ns):
        found = ", ".join(f"{k} ({v})" for k, v in left_out.items()) or "none"
        raise InputError(src.where, f"no judge verdicts: nothing plays a judge in this {reading.source_format} export "
                                    f"(left out: {found}); docs/FORMATS.md says what each format's judges are")
    several = len(by_q) > 1
    labels_used: set[str] = set()
    marks: list[Mark] = []
    for question, ns in by_q.items():
        ds = question if several else None
        gold = _golds(ns, src.where, opts, unit, labels_used)
        if correctness:
            gold = {item: (_as_mark(g, src.where, row, unit), row) for item, (g, row) in gold.items()}
        judged = {n.item for n in ns if n.judge is not None}
        skipped += [(ds, ONLY_GOLD, row) for item, (_, row) in gold.items() if item not in judged]
        for n in ns:
            if n.judge is not None:
                marks.append(_mark(n, gold.get(n.item, (None, 0))[0], ds, src.where, opts, unit))
    notes_out = tuple(f"left out: {v} {k}" for k, v in left_out.items()) + _labels_note(opts, labels_used)
    info = Reading(reading.source_format, reading.roles, unit=unit, notes=reading.notes + notes_out)
    if opts.record.by is not None:  # --by: each item's slice from its first annotation's record
        marks = mark_slices(marks, dict(records(src)), opts.record.by, src.where)
    out = with_skips(from_marks(marks, src.name, src.where, info, keep, unit, with_votes=opts.handling.tolerance is None),
                     src.name, skipped)
    return out if opts.record.by is None else named(out, src.name, opts.record.by)


def _one_cluster(notes: list[Note], where: str, unit: str) -> list[Note]:
    """The notes, each item in one cluster: an item whose records name two is an error naming the second."""
    seen: dict[str, tuple[str, int]] = {}
    for n in notes:
        if n.cluster is None:
            continue
        first = seen.setdefault(n.item, (n.cluster, n.record))
        if first[0] != n.cluster:
            raise InputError(where, f"item {n.item!r} is in cluster {first[0]!r} ({unit} {first[1]}) and {n.cluster!r} here; "
                                    "an item's records must name one cluster", line=n.record, unit=unit)
    return notes


def _as_mark(gold: Any, where: str, row: int, unit: str) -> int | None:
    try:
        return values.mark(gold)
    except values.ValueProblem as exc:
        raise InputError(where, f"a gold label {exc}", line=row or None, field=None if row else "--labels", unit=unit) from None


def _valid(notes: Iterable[Note], where: str, unit: str, skipped: Skipped) -> list[Note]:
    """The notes whose value is one value; the others skipped and counted (skip_invalid), their record's number."""
    out = []
    for n in notes:
        try:
            _scalar(n.value, where, n, unit)
        except InputError as exc:
            skipped.append((None, reason_of(exc), n.record))
            continue
        out.append(n)
    return out


def _once(notes: Iterable[Note], where: str, duplicates: str, unit: str, judges_named: str) -> list[Note]:
    """Each judge's one verdict per item and question (human labels are all kept: several must agree)."""
    kept: dict[tuple[str, str, str], int] = {}
    out: list[Note] = []
    for n in notes:
        if n.judge is None:
            out.append(n)
            continue
        key = (n.question, n.item, n.judge)
        if key not in kept:
            kept[key] = len(out)
            out.append(n)
        elif duplicates == "last":
            out[kept[key]] = n
        elif duplicates == "error":
            first = out[kept[key]].record
            raise InputError(where, f"judge {n.judge!r} gives item {n.item!r} a second verdict on {n.question!r} (first at "
                                    f"{unit} {first}){'; ' + judges_named if judges_named else ''}; or keep the first or the "
                                    "last with `duplicates`", line=n.record, field=n.field, unit=unit)
    return out


def _labels_note(opts: InputOptions, used: set[str]) -> tuple[str, ...]:
    from .labels import load

    lab = load(opts) if opts.labels is not None else None
    return () if lab is None else (lab.note(len(used)),)


def _golds(ns: list[Note], where: str, opts: InputOptions, unit: str, used: set[str]) -> dict[str, tuple[Any, int]]:
    """item -> (its gold, the record it came from): the humans' labels (several on one item must agree), then the
    labels file for items without one (and checked against those with one)."""
    gold: dict[str, tuple[Any, int, str]] = {}
    for n in ns:
        if n.judge is not None:
            continue
        _scalar(n.value, where, n, unit)
        if values.is_missing(n.value):
            continue
        seen = gold.get(n.item)
        if seen is None:
            gold[n.item] = (n.value, n.record, n.field)
        elif not values.agree(seen[0], n.value):
            raise InputError(where, f"two human labels of item {n.item!r} differ ({values.shown(seen[0])} at {unit} "
                                    f"{seen[1]}, {values.shown(n.value)} here); keep one", line=n.record, field=n.field, unit=unit)
    out = {item: (g[0], g[1]) for item, g in gold.items()}
    if opts.labels is not None:
        from .labels import load

        lab = load(opts)
        if lab is not None:
            for item in dict.fromkeys(n.item for n in ns):
                own = out.get(item, (None, 0))
                used.update([item] if lab.get(item) is not None else [])
                try:
                    label = lab.gold(item, own[0])
                except values.ValueProblem as exc:
                    raise InputError(where, str(exc), line=own[1] or None, unit=unit) from None
                if not values.is_missing(label):
                    out[item] = (label, own[1])
    return out


def _scalar(value: Any, where: str, n: Note, unit: str) -> None:
    try:
        values.check_scalar(value, "a verdict" if n.judge is not None else "a human label")
    except values.ValueProblem as exc:
        raise InputError(where, str(exc), line=n.record, field=n.field, unit=unit) from None


def _mark(n: Note, gold: Any, ds: str | None, where: str, opts: InputOptions, unit: str) -> Mark:
    from .patterns import class_text

    _scalar(n.value, where, n, unit)
    no_gold = gold is None or values.is_missing(gold)
    try:
        mark = None if no_gold else values.agree(n.value, gold, opts.handling.tolerance)
    except values.ValueProblem as exc:
        raise InputError(where, str(exc), line=n.record, field=n.field, unit=unit) from None
    return Mark(n.item, str(n.judge), mark, n.record, ds, n.text, no_gold, class_text(n.value),
                None if no_gold else class_text(gold), n.cluster)
