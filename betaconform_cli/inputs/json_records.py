"""A table as a JSON document of records (docs/FORMATS.md#json_records): `[{"item_id": .., "judge": .., "verdict": ..,
"gold": ..}, ...]` as `df.to_json(orient="records")`, a spreadsheet or an API writes it, long or wide, or such a list
under one of detect.LIST_KEYS (`{"data": [...]}`). Read as the CSV of the same rows is: the same column roles, options,
value rules and SQL (tables.py), through a JSON Lines copy of the records, one record a line, so that a row number is
the record's. Errors name the record (from 1) and the field.

Known by its first record (formats.InputFormat.claims, asked after every tool's export that is also a JSON list):
flat (each value text, a number, a boolean or null) and holding a column a table's role is known by (tables.ROLE_NAMES).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from .dataset import Dataset
from .detect import Plan, Source
from .options import InputOptions, Keep

_SCALAR = (str, int, float, bool, type(None))
_ROLES = ("item", "judge", "correct", "verdict", "gold")  # a key of one of these roles says "a table's row"


def table_record(first: Any) -> bool:
    """The claim: a flat object with a column of a table's role (item_id, judge, verdict, gold, correct, ...), or a
    counts table's `judges` and `correct`; or an item record of judgment JSON Lines (`item_record`)."""
    from .table_open import ROLE_NAMES, role_key

    if item_record(first):
        return True
    if not isinstance(first, dict) or not first or not all(isinstance(v, _SCALAR) for v in first.values()):
        return False
    keys = {role_key(str(k)) for k in first}
    return any(keys & set(ROLE_NAMES[r]) for r in _ROLES) or {"judges", "correct"} <= keys


def item_record(first: Any) -> bool:
    """A judgment JSON Lines line's object (`judgments` or `verdicts` holding a list or an object), as
    `json.dump(items, f)` writes a list of them: read as the JSON Lines file of the same records (`_read_items`)."""
    return isinstance(first, dict) and any(isinstance(first.get(k), (list, dict)) for k in ("judgments", "verdicts"))


def read_json_records(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The json_records format's reader (formats.py): the datasets of the table the records make, its shape the
    plan's (`--from long` / `wide` / `counts`) or guessed from the columns as a CSV's is."""
    import orjson

    from .annotations import reason_of, records
    from .build import with_skips
    from .tables import read_table
    from .values import shown

    skip = opts.handling.skip_invalid
    skipped: list[tuple[str | None, str, int]] = []  # skip_invalid: a record that is no object, or holds a list
    fd, tmp = tempfile.mkstemp(prefix="betaconform-records-", suffix=".jsonl")
    try:
        items = False
        with os.fdopen(fd, "wb") as out:
            at = 0
            for n, rec in records(dataclasses.replace(src, plan=Plan(src.plan.reader, "json")), skipped if skip else None):
                items = items or (at == 0 and item_record(rec))
                out.write(b"\n" * (n - at - 1))  # a skipped record is a blank line (skipped unsaid): record n is line n
                at = n
                bad = None if items else next((k for k, v in rec.items() if not isinstance(v, _SCALAR)), None)
                if bad is not None:
                    err = InputError(src.where, f"must be one value (text, a number or a boolean), got {shown(rec[bad])}",
                                     line=n, field=str(bad), unit="record")
                    if not skip:
                        raise err
                    skipped.append((None, reason_of(err), n))
                    rec = {}
                out.write(orjson.dumps(rec, option=orjson.OPT_NON_STR_KEYS) + b"\n" if rec else b"\n")
        copy = Source(Path(tmp), Plan("table", "jsonl", src.plan.shape), src.name, src.where)
        try:
            found = _read_items(Path(tmp), opts, keep, src) if items else read_table(copy, opts, keep)
        except InputError as exc:
            if exc.path != src.where:
                raise
            raise InputError(src.where, re.sub(r"\b(?:lines?|rows?) (\d+)", r"record \1", exc.reason), line=exc.line,
                             field=exc.field, unit="record" if exc.line else "") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return [_as_records(ds) for ds in with_skips(found, src.name, skipped)]


def _read_items(path: Path, opts: InputOptions, keep: Keep, src: Source) -> list[Dataset]:
    """The item records' JSON Lines copy (record n is line n), read by the judgment JSON Lines reader; `--from
    json_records`, the document's format, is not the copy's (JSON Lines), while a table shape (`--from long`) stays,
    and that reader refuses it."""
    from .dispatch import read_path

    as_lines = dataclasses.replace(opts, source_format="jsonl") if opts.source_format == "json_records" else opts
    return read_path(path, as_lines, keep, name=src.name, where=src.where)


def _as_records(ds: Dataset) -> Dataset:
    """A dataset read through the JSON Lines copy, said to be of a JSON document's records."""
    r = ds.reading
    if r is None:
        return ds
    shown = r.source_format.replace("(jsonl)", "(json)").replace("jsonl (", "json list of items (")
    return dataclasses.replace(ds, reading=dataclasses.replace(r, source_format=shown, unit="record"))
