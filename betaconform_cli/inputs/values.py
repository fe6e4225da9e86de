"""What a value in an input means: the one rule every reader follows (JSON Lines, tables, promptfoo, inspect).

- A **correctness** value (a judgment, a correctness column, promptfoo's `pass`, a gold pass/fail label) is
  1/0 (as a number or as text that reads as one: "1.0", "1e0"), true/false (JSON booleans too), or one of the
  words in TRUE / FALSE (case and surrounding spaces ignored).
- A **missing** value is no verdict (or, for gold, no gold): JSON null, an empty cell, a float NaN, or one of the
  words in MISSING ("NA", "N/A", "NaN", "null", "None", case ignored).
- A **verdict is scored against gold** by `agree`: both missing-free; numbers (or text that reads as a number)
  compare as numbers (1 = 1.0; within the tolerance when one is given); anything else compares as text with
  surrounding spaces trimmed (case kept). Lists and objects are neither: an error.

Anything else is an error that names the value; the reader adds the file, line or row, and field. tables.py builds
the same rules in SQL from these word lists (`sql_mark`, `sql_missing`, `sql_agree`), so that DuckDB reads a table
exactly as Python reads a JSON line.
"""

from __future__ import annotations

import math
from typing import Any

TRUE = ("1", "1.0", "true", "t", "yes", "y", "pass", "passed", "correct")
FALSE = ("0", "0.0", "false", "f", "no", "n", "fail", "failed", "incorrect")
MISSING = ("", "na", "n/a", "nan", "null", "none")
MARK_WORDS = "1/0, true/false, yes/no, pass/fail or correct/incorrect"
MISSING_WORDS = "empty, null, NA, N/A, NaN or None"


class ValueProblem(ValueError):
    """A value that no rule reads; the message describes it (the reader says where it is)."""


def shown(value: Any) -> str:
    """A value for a message: text quoted, 40 characters at most."""
    import orjson

    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def is_missing(value: Any) -> bool:
    """No verdict / no gold: None, NaN, or a MISSING word."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str):
        return value.strip().lower() in MISSING
    return False


def mark(value: Any) -> int | None:
    """A correctness value as 1, 0 or None (no verdict); ValueProblem for anything else."""
    if value is True or value is False:
        return int(value)
    if type(value) in (int, float):
        if value == 1 or value == 0:
            return int(value)
        if isinstance(value, float) and math.isnan(value):
            return None
    elif value is None:
        return None
    elif isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE:
            return 1
        if word in FALSE:
            return 0
        if word in MISSING:
            return None
        x = number(word)  # "1.00", "1e0", " 0 "
        if x == 1 or x == 0:
            return int(x)
    raise ValueProblem(f"must be {MARK_WORDS} (null, empty or NA: no verdict), got {shown(value)}")


def number(value: Any) -> float | None:
    """A number, or text that reads as a finite number; None otherwise (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            x = float(value.strip())
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def check_scalar(value: Any, what: str) -> None:
    """ValueProblem when a verdict or gold label is a list or an object."""
    if isinstance(value, (list, dict, tuple)):
        raise ValueProblem(f"{what} must be one value (text, a number or a boolean), got {shown(value)}")


def agree(verdict: Any, gold: Any, tolerance: float | None = None) -> int | None:
    """1 when a verdict agrees with gold, 0 when not, None when either is missing; ValueProblem when they cannot be
    compared (a list or an object; text with a tolerance). The one scorer of every format."""
    check_scalar(verdict, "a verdict")
    check_scalar(gold, "the gold label")
    if is_missing(verdict) or is_missing(gold):
        return None
    v, g = number(verdict), number(gold)
    if tolerance is not None:
        if v is None:
            raise ValueProblem(f"a tolerance compares numbers, got the verdict {shown(verdict)}")
        if g is None:
            raise ValueProblem(f"a tolerance compares numbers, got the gold label {shown(gold)}")
        return int(abs(v - g) <= tolerance)
    if v is not None and g is not None:
        return int(v == g)
    return int(_text(verdict) == _text(gold))


# The same rules in SQL (DuckDB), for the table reader.

def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_missing(text: str) -> str:
    """SQL: true when a VARCHAR expression is a missing value (NULL or a MISSING word)."""
    return f"({text} IS NULL OR lower(trim({text})) IN ({', '.join(map(_lit, MISSING))}))"


def sql_mark(text: str, bad: int) -> str:
    """SQL: a VARCHAR expression as 1, 0, NULL (missing) or `bad`."""
    s = f"lower(trim({text}))"
    yes, no = ", ".join(map(_lit, TRUE)), ", ".join(map(_lit, FALSE))
    x = f"TRY_CAST({s} AS DOUBLE)"
    return (f"CASE WHEN {sql_missing(text)} THEN NULL WHEN {s} IN ({yes}) THEN 1 WHEN {s} IN ({no}) THEN 0 "
            f"WHEN {x} = 1 THEN 1 WHEN {x} = 0 THEN 0 ELSE {bad} END")


def sql_agree(verdict: str, gold: str, tolerance: float | None, bad: int) -> str:
    """SQL: two VARCHAR expressions scored as `agree` scores them: 1, 0, NULL (either missing) or `bad`."""
    vn, gn = f"TRY_CAST(trim({verdict}) AS DOUBLE)", f"TRY_CAST(trim({gold}) AS DOUBLE)"
    finite = f"{vn} IS NOT NULL AND isfinite({vn}) AND {gn} IS NOT NULL AND isfinite({gn})"
    if tolerance is not None:
        return (f"CASE WHEN {sql_missing(verdict)} OR {sql_missing(gold)} THEN NULL WHEN NOT coalesce({finite}, false) THEN {bad} "
                f"WHEN abs({vn} - {gn}) <= {float(tolerance)!r} THEN 1 ELSE 0 END")
    return (f"CASE WHEN {sql_missing(verdict)} OR {sql_missing(gold)} THEN NULL WHEN coalesce({finite}, false) THEN "
            f"CAST({vn} = {gn} AS INTEGER) ELSE CAST(trim({verdict}) = trim({gold}) AS INTEGER) END")


def nul_hint(raw: bytes) -> str:
    """Why text holds NUL bytes, as a message: UTF-16 (a byte order mark, or every other byte zero) or binary data."""
    head = raw[:64]
    half = len(head) // 2 - 1
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(head) >= 4 and (head[1::2].count(0) >= half or head[::2].count(0) >= half)):
        return "not UTF-8 text (it looks like UTF-16: save the file as UTF-8)"
    return f"a NUL byte at byte {raw.index(0) + 1}: binary data or a damaged file, not text"


def json_problem(raw: bytes, exc: Exception) -> str:
    """Why a line is not JSON, for a message: not UTF-8 (UTF-16, binary), or what the parser found and where in the
    line (its own "line 2 column 1" counts the line end, which reads as the wrong line)."""
    if b"\x00" in raw:
        return nul_hint(raw)
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "not UTF-8 text (it looks like UTF-16: save the file as UTF-8)"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text (save the file as UTF-8)"
    import re

    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    found = re.search(r"^(.*?): line \d+ column \d+ \(char (\d+)\)$", text)
    return f"malformed JSON ({found.group(1)} at character {int(found.group(2)) + 1})" if found else f"malformed JSON ({text})"
