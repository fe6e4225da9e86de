"""What a value in an input means: the one rule every reader follows (JSON Lines, tables, promptfoo, inspect).

- A **correctness** value (a judgment, a correctness column, promptfoo's `pass`, a gold pass/fail label) is
  1/0 (as a number or as text that reads as one: "1.0", "1e0"), true/false (JSON booleans too), or one of the
  words in TRUE / FALSE (case and surrounding spaces ignored).
- A **missing** value is no verdict (or, for gold, no gold): JSON null, an empty cell, a float NaN, or one of the
  words in MISSING ("NA", "N/A", "NaN", "null", "None", case ignored).
- A **verdict is scored against gold** by `agree`: both missing-free; numbers (or text that reads as a number)
  compare as numbers (1 = 1.0; within the tolerance when one is given); anything else compares as text with
  surrounding spaces trimmed (case kept). Lists and objects are neither: an error.
- **Text reads as a number** when it is a decimal number written in ASCII (NUMBER: "1", "-0.5", "1e3", ".5"):
  digits of other scripts ("١", fullwidth "１"), "1_000", "inf" and hexadecimal are text, in JSON Lines exactly as in
  tables (Python's float() and DuckDB's cast would each accept some of them, differently).
- **Gold and verdicts share a vocabulary**: where no verdict on a labeled item is of any class the gold labels use
  (PASS/FAIL against pass/fail, Yes against yes, 1/0 against true/false), every verdict would count as wrong;
  `vocabulary_problem` says so and every command refuses the input (doctor shows both lists and exits 2). The same
  holds for one verdict class beside the gold's (`written_apart`): where "PASS" or "yes" stands among verdicts that are
  otherwise pass/fail against pass/fail gold (one judge written in capitals, another in yes/no), each would count as
  wrong; it is refused, naming the class and the gold class it would mean; so is a gold class beside the verdicts'
  ("Pass" on a few items of pass/fail gold).

Anything else is an error that names the value; the reader adds the file, line or row, and field. tables.py builds
the same rules in SQL from these word lists (`sql_mark`, `sql_missing`, `sql_agree`), so that DuckDB reads a table
exactly as Python reads a JSON line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

TRUE = ("1", "1.0", "true", "t", "yes", "y", "pass", "passed", "correct")
FALSE = ("0", "0.0", "false", "f", "no", "n", "fail", "failed", "incorrect")
MISSING = ("", "na", "n/a", "nan", "null", "none")
MARK_WORDS = "1/0, true/false, yes/no, pass/fail or correct/incorrect"
MISSING_WORDS = "empty, null, NA, N/A, NaN or None"
NUMBER = r"[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?"  # ASCII decimal text (regexp_full_match in SQL too)
_NUMBER = re.compile(NUMBER)


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


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words, for a message ("null", "a list"; not Python's "NoneType")."""
    kinds = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "text", list: "a list",
             dict: "an object"}
    return kinds.get(type(value), f"a {type(value).__name__}")


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
    raise ValueProblem(f"must be {MARK_WORDS} (null, empty or NA: no verdict), got {shown(value)}{comma_hint(value)}")


def number(value: Any) -> float | None:
    """A number, or text that reads as a finite number; None otherwise (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not _NUMBER.fullmatch(text):
            return None
        x = float(text)
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
            raise ValueProblem(f"a tolerance compares numbers, got the verdict {shown(verdict)}{comma_hint(verdict)}")
        if g is None:
            raise ValueProblem(f"a tolerance compares numbers, got the gold label {shown(gold)}{comma_hint(gold)}")
        return int(abs(v - g) <= tolerance)
    if v is not None and g is not None:
        return int(v == g)
    return int(_text(verdict) == _text(gold))


def comma_hint(value: Any) -> str:
    """" (a decimal comma: write 4.5)" for text that is a number written with a comma; empty otherwise."""
    x = decimal_comma(value) if isinstance(value, str) else None
    return f" (a decimal comma: write {x:g})" if x is not None else ""


def vocabulary_problem(gold: Sequence[str], verdicts: Sequence[str]) -> str | None:
    """Why verdicts cannot be scored against gold when the two share no class (None when some verdict class is a
    gold class, or either list is empty): both vocabularies named, and how they would match."""
    if not gold or not verdicts or set(gold) & set(verdicts):
        return None
    folded = {g.lower() for g in gold} & {v.lower() for v in verdicts}
    alike = {_letters(g) for g in gold} & {_letters(v) for v in verdicts}
    marks = {_mark_or_none(g) for g in gold} & {_mark_or_none(v) for v in verdicts} - {None}
    numeric = all(number(c) is not None for c in (*gold, *verdicts))
    odd = next((h for h in map(hidden, (*gold, *verdicts)) if h), "")
    hint = ("they differ only in case: write them alike" if folded else
            f"they differ in letters of another script that look Latin or in invisible characters{odd}: write them "
            "alike" if alike and odd else
            "numeric scores are compared within a tolerance: give --tolerance" if numeric else
            f"they mean the same pass/fail ({MARK_WORDS}) but are written differently: write them alike"
            if marks else "write them in one vocabulary")
    return (f"the gold labels and the verdicts share no class (gold: {listing(gold)}; verdicts: {listing(verdicts)}), "
            f"so every verdict would count as wrong; {hint}")


def written_apart(gold: Sequence[str], verdicts: Sequence[str]) -> list[tuple[str, str]]:
    """(verdict class, gold class) for each verdict class that is no gold class and never agrees with one, although
    it means one: the same text in another case or wrapped (brackets, quotes, a full stop: "PASS", "Pass." against
    "pass"; "(A)" against "A"; not "A-" against "A", nor "A=B" against "A>B"), or the same pass/fail written in other words of TRUE / FALSE ("yes" against "pass", "1" against
    "true"). Such a verdict would count as wrong on every item; a class of its own (a third answer, "maybe") is not
    one of these. Called with the two lists swapped: the gold classes written apart from the verdicts'."""
    out = []
    for v in verdicts:
        if v in gold or any(agree(v, g) == 1 for g in gold):
            continue
        hit = next((g for g in gold if _means(v, g)), None)
        if hit is not None:
            out.append((v, hit))
    return out


def scores_apart(gold: Sequence[str], verdicts: Sequence[str]) -> list[str]:
    """The verdict classes that are numbers other than 1 and 0 where the gold is pass/fail (each gold class a mark),
    when they are at least two and outnumber the verdicts' pass/fail classes: continuous scores (0.2, 0.7, 0.9) given
    as verdicts, each of which would count as wrong unless it is exactly the gold. Empty otherwise (one partial
    credit 0.5 among 1/0 verdicts is a class of its own)."""
    if not gold or any(_mark_or_none(g) is None for g in gold):
        return []
    scores = [v for v in verdicts if number(v) is not None and _mark_or_none(v) is None]
    return scores if len(scores) >= 2 and len(scores) > len(verdicts) - len(scores) else []


_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,([0-9]{1,2}|[0-9]{4,})")  # "1,0", "0,75"; not "1,000" (a thousands comma?)


def decimal_comma(text: str) -> float | None:
    """The number a text with a decimal comma means ("1,0": 1.0, as a European spreadsheet writes it); None for any
    other text, and for "1,000", which may as well be a thousand. A number is never read so (NUMBER is the rule):
    this only says what a refused or unmatched value means, for a message or for `written_apart`."""
    t = text.strip()
    return float(t.replace(",", ".")) if _DECIMAL_COMMA.fullmatch(t) else None


def _means(a: str, b: str) -> bool:
    """Whether two classes that do not agree mean one thing: numbers only as pass/fail marks ("1" and "true"; "-1" is
    not "1"), text without what wraps it ("PASS." is "pass"; "A-" is not "A") or as marks ("Yes!" is "pass"), or a
    number written with a decimal comma ("1,0" is "1")."""
    ca, cb = decimal_comma(a), decimal_comma(b)
    if (ca is not None or cb is not None) and (ca if ca is not None else number(a)) == (cb if cb is not None else number(b)):
        return True
    if number(a) is not None or number(b) is not None:
        ma = _word_mark(a)
        return ma is not None and ma == _word_mark(b)
    la, lb = _letters(a), _letters(b)
    if la and la == lb:
        return True
    ma = _word_mark(la or a)
    return ma is not None and ma == _word_mark(lb or b)


def _word_mark(text: str) -> int | None:
    """`mark` of a class, but a single letter (t, f, y, n) means no pass/fail here: beside a gold "1", a verdict "y"
    is more likely a class of its own (a letter answer) than a yes written apart."""
    return None if len(text.strip()) == 1 and not text.strip().isdigit() else _mark_or_none(text)


WRAPPING = " \t\r\n()[]{}\"'`*.,:;!?"  # what an LLM writes around a class: spaces, brackets, quotes, emphasis, a full stop


def _letters(text: str) -> str:
    """A class in lower case without what wraps it: "PASS." and " (a)" as "pass" and "a", as an LLM writes them. What
    is inside stays, and a sign at its end: "A-" is not "A" (a grade), "A=B" not "A>B" (a tie against a preference).
    Letters that only look otherwise are read as what they look like (`seen`): "раss" in Cyrillic is "pass"."""
    return seen(text).casefold().strip(WRAPPING)


# Letters of Cyrillic and Greek that a reader cannot tell from Latin ones (Unicode's confusables, the common ones),
# Latin's dotless i and the dashes that look like a hyphen: a class typed or generated in another keyboard layout, or
# through a word processor, looks like the gold's and never equals it.
_LOOK_ALIKE = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458\u0501\u04bb\u04cf\u051b\u051d"  # а е о р с у х ѕ і ј ԁ һ ӏ ԛ ԝ
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0405\u0406\u0408"  # А В Е К М Н О Р С Т Х Ѕ І Ј
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03bf\u03bd\u0131"  # Α Β Ε Ζ Η Ι Κ Μ Ν Ο Ρ Τ Υ Χ ο ν ı
    "\u2010\u2011\u2012\u2013\u2212",  # hyphens, the figure and en dash, the minus sign: a word processor's "-"
    "aeopcyxsijdhlqw" "ABEKMHOPCTXSIJ" "ABEZHIKMNOPTYXovi" "-----")


def seen(text: str) -> str:
    """Text as a reader sees it: compatibility forms as their plain letters (fullwidth "ｐａｓｓ", NFKC), invisible
    format characters left out (a zero-width space, a byte order mark, a soft hyphen, direction marks: category Cf),
    and Cyrillic or Greek letters that look Latin as the Latin ones."""
    import unicodedata

    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf").translate(_LOOK_ALIKE)


def hidden(text: str) -> str:
    """What in `text` a reader does not see, for a message: " (it holds U+0440 CYRILLIC SMALL LETTER ER, ...)"
    naming the characters that `seen` reads otherwise (the first four); empty when there is none."""
    import unicodedata

    if text.isascii():
        return ""
    odd = list(dict.fromkeys(c for c in text if not c.isascii() and seen(c) != c))
    names = [f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in odd[:4]]
    return f" (it holds {', '.join(names)}{' and more' if len(odd) > 4 else ''})" if names else ""


def quote_judges(names: Sequence[str], most: int = 4) -> str:
    """Judge names for a message: quoted, the first `most`, then how many more."""
    head = ", ".join(shown(n) for n in list(names)[:most])
    return head + (f" and {len(names) - most} more" if len(names) > most else "")


def listing(classes: Sequence[str], most: int = 8) -> str:
    shown_ = ", ".join(shown(c) for c in list(classes)[:most])
    return shown_ + (f", ... ({len(classes)} classes)" if len(classes) > most else "")


def is_mark(value: str) -> bool:
    """Whether a class is a pass/fail mark (`mark` reads it as 1 or 0)."""
    return _mark_or_none(value) is not None


def _mark_or_none(value: str) -> int | None:
    try:
        return mark(value)
    except ValueProblem:
        return None


# The same rules in SQL (DuckDB), for the table reader.

def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_missing(text: str) -> str:
    """SQL: true when a VARCHAR expression is a missing value (NULL or a MISSING word)."""
    return f"({text} IS NULL OR lower(trim({text})) IN ({', '.join(map(_lit, MISSING))}))"


def sql_number(text: str) -> str:
    """SQL: a VARCHAR expression as a DOUBLE when it is NUMBER's text (trimmed), else NULL: `number`'s rule."""
    t = f"trim({text})"
    return f"(CASE WHEN regexp_full_match({t}, {_lit(NUMBER)}) THEN CAST({t} AS DOUBLE) END)"


def sql_mark(text: str, bad: int) -> str:
    """SQL: a VARCHAR expression as 1, 0, NULL (missing) or `bad`."""
    s = f"lower(trim({text}))"
    yes, no = ", ".join(map(_lit, TRUE)), ", ".join(map(_lit, FALSE))
    x = sql_number(text)
    return (f"CASE WHEN {sql_missing(text)} THEN NULL WHEN {s} IN ({yes}) THEN 1 WHEN {s} IN ({no}) THEN 0 "
            f"WHEN {x} = 1 THEN 1 WHEN {x} = 0 THEN 0 ELSE {bad} END")


def sql_agree(verdict: str, gold: str, tolerance: float | None, bad: int) -> str:
    """SQL: two VARCHAR expressions scored as `agree` scores them: 1, 0, NULL (either missing) or `bad`."""
    vn, gn = sql_number(verdict), sql_number(gold)
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
    why = f"malformed JSON ({found.group(1)} at character {int(found.group(2)) + 1})" if found else f"malformed JSON ({text})"
    if b"\r" in raw.rstrip(b"\r\n"):  # lines ended by CR alone (a classic Mac file, some exports): one "line" here
        why += "; its lines end in a carriage return alone (CR): end them with a line feed (LF or CRLF)"
    return why
