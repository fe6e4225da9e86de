"""The renderings every result shares: JSON documents, one CSV writer, one Markdown writer.

Text from the user's files (dataset names, item ids, judge names) may hold control characters; every rendering
shows them escaped (`clean`), so a name cannot move the cursor, set the terminal title, clear the screen or
reorder the text around it (bidirectional overrides), and a file name that is not valid UTF-8 (a lone surrogate
in Python) shows its bytes as \\xNN instead of failing to encode. CSV cells that a spreadsheet would run as a
formula (starting with = + - @) get a leading apostrophe; a cell that holds a list (an ensemble's members) is a
JSON list, in every command's CSV.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from ..text import clean as clean
from ..text import escape_char as _escape
from .views import Block, Chart, TableView

_SURROGATE = re.compile("[\ud800-\udfff]")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _valid_utf8(obj: Any) -> Any:
    """Strings with lone surrogates (undecodable file-name bytes) escaped, in nested documents."""
    if isinstance(obj, str):
        return _SURROGATE.sub(_escape, obj)
    if isinstance(obj, dict):
        return {_valid_utf8(k): _valid_utf8(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_valid_utf8(v) for v in obj]
    return obj


def _json_option(indent: bool) -> int:
    option = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
    return option | orjson.OPT_INDENT_2 if indent else option


def _dumps(doc: dict[str, Any], indent: bool) -> str:
    try:
        return orjson.dumps(doc, option=_json_option(indent)).decode()
    except orjson.JSONEncodeError:
        if not _has_surrogate(doc):
            raise  # a value JSON cannot carry is a bug here: saved fits and inputs are checked on reading
        return orjson.dumps(_valid_utf8(doc), option=_json_option(indent)).decode()


def _dumps_value(value: Any) -> str:
    """One JSON value on one line (control characters and newlines escaped by JSON itself)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(_valid_utf8(value), option=orjson.OPT_SERIALIZE_NUMPY).decode()


def _has_surrogate(obj: Any) -> bool:
    if isinstance(obj, str):
        return _SURROGATE.search(obj) is not None
    if isinstance(obj, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return any(_has_surrogate(v) for v in obj)
    return False


def to_json(docs: Sequence[dict[str, Any]], lines: bool | None = None) -> str:
    """One indented object for one document; JSON Lines for several (or when `lines` is True)."""
    if not lines and len(docs) == 1:
        return _dumps(docs[0], True) + "\n"
    return "".join(_dumps(d, False) + "\n" for d in docs)


def _csv_cell(value: Any) -> Any:
    """A CSV cell: a list (an ensemble's members) as a JSON list, so that names with spaces, commas, quotes or
    newlines come back as they were (`json.loads(cell)`); strings cleaned; empty for None."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return _dumps_value(list(value))
    if isinstance(value, str):
        text = clean(value, keep_newlines=False)
        if text.startswith(_FORMULA) and not _is_number(text):
            return "'" + text
        return text
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def to_csv(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for row in rows:
        w.writerow([_csv_cell(v) for v in row])
    return buf.getvalue()


def _md_cell(text: str) -> str:
    return clean(text, keep_newlines=False).replace("|", "\\|")


def markdown_table(view: TableView) -> str:
    align = view.alignment()
    lines = []
    if view.title:
        lines += [f"**{_md_cell(view.title)}**", ""]
    lines.append("| " + " | ".join(_md_cell(c) for c in view.columns) + " |")
    lines.append("|" + "|".join("---" if a == "l" else "---:" for a in align) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in view.rows]
    if view.caption:
        lines += ["", "_" + clean(view.caption, keep_newlines=False).replace("\\n", " ") + "_"]
    return "\n".join(lines)


def to_markdown(blocks: Sequence[Block]) -> str:
    """Blocks as Markdown: headings, paragraphs and tables separated by blank lines (charts left out)."""
    parts: list[str] = []
    for b in blocks:
        if b.terminal_only or isinstance(b, Chart):  # charts: drawn in HTML only
            continue
        if isinstance(b, TableView):
            parts.append(markdown_table(b))
        elif b.heading:
            parts.append("## " + clean(" ".join(b.lines), keep_newlines=False))
        else:
            text = "\n".join(clean(x, keep_newlines=False) for x in b.lines).strip("\n")
            if text:
                parts.append(text)
    return "\n\n".join(parts) + "\n"
