"""One JSON record (a line of a judgment file) into (judges, correct) and each judge's mark.

Four shapes; the first valid record of a file fixes its shape:

- ``{"judgments": [1, 0, true, null, ...]}``  per-judge correctness by position (null: no verdict);
- ``{"judgments": {"judge-a": 1, ...}}``      the same keyed by judge name;
- ``{"correct": 7, "judges": 11}``             counts only (an optional "count" weights the record);
- ``{"verdicts": ["A", "B", ...], "label": "A"}`` raw outputs and the gold label (equality, or
  ``|verdict - label| <= tolerance`` for numeric scores); verdicts may be keyed by judge name too.

Field names are dotted paths into nested objects ("vars.gold").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..formats import load_json
from . import values
from .dataset import MAX_JUDGES
from .options import InputOptions

_MISSING = object()


class RecordError(Exception):
    """A bad record: the field (dotted path, with an index) and what is wrong."""

    def __init__(self, field: str | None, message: str):
        self.field = field
        self.message = message


class NoVerdict(RecordError):
    """A record no judge gave a verdict on (empty, or every verdict null): skipped and counted, as tables skip such
    an item, not an error. `parsed`: the record as read (a verdicts record's gold class: score counts the item in
    its population, Votes.no_verdict)."""

    def __init__(self, field: str | None, message: str, parsed: Parsed | None = None):
        super().__init__(field, message)
        self.parsed = parsed


@dataclass(frozen=True)
class Parsed:
    """One record: its counts, how many items it stands for, and each judge's mark (names for dict shapes)."""

    judges: int
    correct: int
    weight: int = 1
    marks: tuple[int | None, ...] | None = None
    names: tuple[str, ...] | None = None
    classes: tuple[str | None, ...] | None = None  # verdicts shape: each verdict's class (patterns.class_text)
    gold: str | None = None  # and the gold's class; None with classes set: an unlabeled item

    @property
    def unlabeled(self) -> bool:
        return self.classes is not None and self.gold is None


def get(obj: Any, path: str, default: Any = _MISSING) -> Any:
    """obj[a][b] for path "a.b" (a key containing the whole dotted path wins); `default` when absent."""
    if isinstance(obj, dict) and path in obj:
        return obj[path]
    cur = obj
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return default
    return cur


def has(obj: Any, path: str) -> bool:
    return get(obj, path) is not _MISSING


def show(value: Any, raw: bytes | None = None) -> str:
    """A value as JSON for a message (40 characters at most); big integers exactly as written."""
    if isinstance(value, float) and value.is_integer() and abs(value) >= 2**53 and raw is not None:
        return _exact_number(raw, value)
    try:
        return orjson.dumps(value).decode()[:40]
    except TypeError:
        return repr(value)[:40]


def _exact_number(raw: bytes, value: float) -> str:
    """orjson reads integers beyond 64 bits as floats; the standard library keeps them exact."""
    try:
        exact = load_json(raw, stdlib=True)
    except ValueError:
        return orjson.dumps(value).decode()
    found = _find_int(exact, value)
    text = str(found) if found is not None else orjson.dumps(value).decode()
    return text if len(text) <= 40 else text[:37] + "..."


def _find_int(obj: Any, approx: float) -> int | None:
    if isinstance(obj, bool):
        return None
    if isinstance(obj, int) and float(obj) == approx:
        return obj
    children = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ()
    for c in children:
        found = _find_int(c, approx)
        if found is not None:
            return found
    return None


def exact_id(value: Any, raw: bytes, path: str) -> str | None:
    """An item id as text; an integer beyond 64 bits (read by orjson as a float) is re-read exactly."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) >= 2**53:
        try:
            value = get(load_json(raw, stdlib=True), path, value)
        except ValueError:
            pass
    return str(value)


def as_mark(value: Any, raw: bytes | None = None) -> int | None | str:
    """A correctness value (values.mark: 1/0, true/false, yes/no, pass/fail, ...) as 1/0, a missing one as None;
    anything else -> a description of the bad value."""
    try:
        return values.mark(value)
    except values.ValueProblem as exc:
        if isinstance(value, float) and value.is_integer() and abs(value) >= 2**53 and raw is not None:
            return str(exc).rsplit(", got ", 1)[0] + f", got {show(value, raw)}"
        return str(exc)


def is_int(v: Any) -> bool:
    return type(v) is int or (type(v) is float and v.is_integer())


def detect_shape(obj: dict[str, Any], opts: InputOptions) -> str:
    j = get(obj, opts.record.judgments_field, None)
    if isinstance(j, list):
        return "list"
    if isinstance(j, dict):
        return "dict"
    if has(obj, opts.record.judgments_field):
        raise RecordError(opts.record.judgments_field, f"must be a list or an object, got {values.json_kind(j)}")
    if has(obj, opts.record.correct_field) or has(obj, opts.record.judges_field):
        return "counts"
    if has(obj, opts.record.verdicts_field):
        return "verdicts"
    raise RecordError(
        None,
        f"no judgments: expected '{opts.record.judgments_field}', '{opts.record.correct_field}'+'{opts.record.judges_field}' "
        f"or '{opts.record.verdicts_field}'+'{opts.record.label_field}' (name other fields with the *-field options)",
    )


def count_marks(values: Sequence[Any], field: str, keys: Sequence[str] | None = None, raw: bytes | None = None) -> tuple[int, int]:
    """(judges, correct) of a list of marks; RecordError naming the bad element."""
    judges = correct = 0
    for i, v in enumerate(values):
        if v is None:
            continue
        if v is True or (type(v) is int and v == 1):
            judges += 1
            correct += 1
            continue
        if v is False or (type(v) is int and v == 0):
            judges += 1
            continue
        r = as_mark(v, raw)  # raw: a mark beyond 2^64 is named as written, not as orjson's float
        if isinstance(r, str):
            raise RecordError(f"{field}[{keys[i]!r}]" if keys is not None else f"{field}[{i}]", r)
        if r is not None:
            judges += 1
            correct += r
    return judges, correct


def parse(obj: Any, shape: str, opts: InputOptions, marks: bool = False, raw: bytes | None = None) -> Parsed:
    """The record's counts (and marks when asked); RecordError for a bad record or more than MAX_JUDGES judges."""
    if not isinstance(obj, dict):
        raise RecordError(None, f"each line must be a JSON object, got {values.json_kind(obj)}")
    if shape == "counts":
        return _counts(obj, opts, raw)
    if shape == "verdicts":
        p = _verdicts(obj, opts, marks)
        where = opts.record.verdicts_field
    else:
        p = _judgments(obj, shape, opts, marks, raw)
        where = opts.record.judgments_field
    if p.judges == 0:
        raise NoVerdict(where, "item has no judges (empty or all null)", p)
    if p.judges > MAX_JUDGES:
        raise RecordError(where, f"{p.judges} judges on one item; at most {MAX_JUDGES} are supported")
    return p


def _judgments(obj: dict[str, Any], shape: str, opts: InputOptions, marks: bool, raw: bytes | None = None) -> Parsed:
    field = opts.record.judgments_field
    j = get(obj, field)
    if j is _MISSING:
        raise RecordError(field, "missing")
    if shape == "list":
        if not isinstance(j, list):
            raise RecordError(field, f"must be a list like the file's first item, got {values.json_kind(j)}")
        n, c = count_marks(j, field, raw=raw)
        return Parsed(n, c, marks=tuple(as_mark(v) for v in j) if marks else None)  # type: ignore[misc]
    if not isinstance(j, dict):
        raise RecordError(field, f"must be an object like the file's first item, got {values.json_kind(j)}")
    keys = [str(k) for k in j]
    n, c = count_marks(list(j.values()), field, keys, raw)
    if not marks:
        return Parsed(n, c)
    return Parsed(n, c, marks=tuple(as_mark(v) for v in j.values()), names=tuple(keys))  # type: ignore[misc]


def _counts(obj: dict[str, Any], opts: InputOptions, raw: bytes | None) -> Parsed:
    c, n = get(obj, opts.record.correct_field), get(obj, opts.record.judges_field)
    if c is _MISSING:
        raise RecordError(opts.record.correct_field, "missing")
    if n is _MISSING:
        raise RecordError(opts.record.judges_field, "missing")
    if not is_int(c):
        raise RecordError(opts.record.correct_field, f"must be an integer, got {show(c, raw)}")
    if not is_int(n):
        raise RecordError(opts.record.judges_field, f"must be an integer, got {show(n, raw)}")
    if n > MAX_JUDGES:
        raise RecordError(opts.record.judges_field, f"{show(n, raw)} judges on one item; at most {MAX_JUDGES} are supported")
    c, n = int(c), int(n)
    if n < 1:
        raise RecordError(opts.record.judges_field, f"must be at least 1, got {n}")
    if c < 0:
        raise RecordError(opts.record.correct_field, f"must not be negative, got {c}")
    if c > n:
        raise RecordError(opts.record.correct_field, f"correct ({show(get(obj, opts.record.correct_field), raw)}) exceeds judges ({n})")
    weight = get(obj, "count", 1)
    if not is_int(weight) or weight < 0 or weight >= 2**53:
        raise RecordError("count", f"must be a non-negative integer (items in this cell), got {show(weight, raw)}")
    return Parsed(n, c, weight=int(weight))


def _verdicts(obj: dict[str, Any], opts: InputOptions, marks: bool) -> Parsed:
    field = opts.record.verdicts_field
    verdicts = get(obj, field)
    if verdicts is _MISSING:
        raise RecordError(field, "missing")
    label = get(obj, opts.record.label_field, None)
    if isinstance(label, (list, dict)):
        raise RecordError(opts.record.label_field, f"must be one gold label (text, a number or a boolean), got {show(label)}")
    if opts.labels is not None:
        from .labels import load

        try:
            label = load(opts).gold(get(obj, opts.record.id_field, None), label)  # type: ignore[union-attr]
        except values.ValueProblem as exc:
            raise RecordError(opts.record.label_field, str(exc)) from None
    unlabeled = values.is_missing(label)
    if unlabeled and opts.handling.tolerance is not None:
        raise RecordError(opts.record.label_field, "missing (verdicts scored with a tolerance need the gold label: items "
                                            "without one are read only without --tolerance)")
    if opts.handling.tolerance is not None and values.number(label) is None:
        raise RecordError(opts.record.label_field, f"a tolerance compares numbers, got {show(label)}{values.comma_hint(label)}")
    if isinstance(verdicts, dict):
        keys: list[str] | None = [str(k) for k in verdicts]
        values_ = list(verdicts.values())
    elif isinstance(verdicts, list):
        keys, values_ = None, verdicts
    else:
        raise RecordError(field, f"must be a list or an object, got {values.json_kind(verdicts)}")
    out: list[int | None] = []
    for i, v in enumerate(values_):
        where = f"{field}[{keys[i]!r}]" if keys else f"{field}[{i}]"
        out.append(score(v, None if unlabeled else label, opts.handling.tolerance, where))
    classes: tuple[str | None, ...] | None = None
    gold: str | None = None
    if opts.handling.tolerance is None:  # a numeric score within a tolerance is not a class: no vote patterns then
        from .patterns import class_text

        classes = tuple(class_text(v) for v in values_)
        gold = class_text(label)
    if unlabeled:
        n = sum(c is not None for c in classes or ())
        return Parsed(n, 0, classes=classes, names=tuple(keys) if keys is not None else None)
    n = sum(m is not None for m in out)
    c = sum(m == 1 for m in out)
    names = tuple(keys) if keys is not None else None
    if not marks:
        return Parsed(n, c, names=names, classes=classes, gold=gold)
    return Parsed(n, c, marks=tuple(out), names=names, classes=classes, gold=gold)


def cluster_id(obj: dict[str, Any], field: str) -> str:
    """An item's cluster id (--cluster-field: the prompt several sampled answers share), as text; every item needs
    one, and it must be one value (a string, a number or a boolean)."""
    from .patterns import class_text  # 1, 1.0 and "1" are one cluster, as they are one class

    value = get(obj, field, None)
    if isinstance(value, (list, dict)):
        raise RecordError(field, f"must be one cluster id (text or a number), got {show(value)}")
    text = class_text(value)
    if text is None:
        raise RecordError(field, "missing (every item needs this field: --cluster-field's cluster id, e.g. the prompt it answers, "
                                 "or drift's --time-field)")
    return text


def score(verdict: Any, gold: Any, tolerance: float | None, where: str) -> int | None:
    """1 when a verdict agrees with the gold label, 0 when not, None when either is missing, by values.agree (the
    rule every format scores by; tables.py applies it in SQL, values.sql_agree); RecordError naming `where` when
    they cannot be compared. Used for the verdicts of a JSON record."""
    try:
        return values.agree(verdict, gold, tolerance)
    except values.ValueProblem as exc:
        raise RecordError(where, str(exc)) from None
