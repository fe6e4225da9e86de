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
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from ..escape import clean, csv_cell, has_surrogate, json_text, markdown, surrogates
from .views import Block, Chart, TableView

__all__ = ["clean", "markdown_table", "to_csv", "to_json", "to_markdown"]


def _valid_utf8(obj: Any) -> Any:
    """Strings with lone surrogates (undecodable file-name bytes) escaped, in nested documents."""
    if isinstance(obj, str):
        return surrogates(obj)
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
        return json_text(orjson.dumps(doc, option=_json_option(indent)).decode())
    except orjson.JSONEncodeError:
        if not _has_surrogate(doc):
            raise  # a value JSON cannot carry is a bug here: saved fits and inputs are checked on reading
        return json_text(orjson.dumps(_valid_utf8(doc), option=_json_option(indent)).decode())


def _dumps_value(value: Any) -> str:
    """One JSON value on one line (control characters and newlines escaped by JSON itself)."""
    try:
        return json_text(orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode())
    except orjson.JSONEncodeError:
        return json_text(orjson.dumps(_valid_utf8(value), option=orjson.OPT_SERIALIZE_NUMPY).decode())


def _has_surrogate(obj: Any) -> bool:
    if isinstance(obj, str):
        return has_surrogate(obj)
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


JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


def json_for_file(text: str, name: str) -> str:
    """A report's JSON (to_json's: one indented document, or JSON Lines for several) in the layout a file's name
    asks for, the one rule for every command's `-o`: JSON Lines (one document a line) for .jsonl and .ndjson; any
    other name one JSON text, so several documents are one JSON array (a .json file that `json.load` reads)."""
    stripped = text.strip()
    if not stripped:
        return text
    try:
        docs: list[Any] = [orjson.loads(stripped)]
    except orjson.JSONDecodeError:  # several documents, one a line
        docs = [orjson.loads(line) for line in stripped.splitlines() if line.strip()]
    if name.lower().endswith(JSON_LINES_SUFFIXES):
        return "".join(_dumps(d, False) + "\n" for d in docs)
    return text if len(docs) == 1 else _dumps(docs, True) + "\n"  # type: ignore[arg-type]


def _csv_cell(value: Any) -> Any:
    """A CSV cell: a list (an ensemble's members) as a JSON list, so that names with spaces, commas, quotes or
    newlines come back as they were (`json.loads(cell)`); strings cleaned; empty for None."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return _dumps_value(list(value))
    if isinstance(value, str):
        return csv_cell(value)
    return value


def to_csv(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Every CSV this tool writes. Its header must be a registered output table (formats.OutputTable), so that a
    folder holding the report skips it (inputs/paths.tool_output): an unregistered header is a bug, refused here."""
    from ..formats import output_table_of

    if output_table_of(tuple(columns)) is None:
        raise ValueError(f"CSV header {','.join(columns)!r} is not a registered output table (formats.register_output_table)")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(str(c)) for c in columns])
    for row in rows:
        w.writerow([_csv_cell(v) for v in row])
    return buf.getvalue()


def markdown_table(view: TableView) -> str:
    align = view.alignment()
    lines = []
    if view.title:
        lines += [f"**{markdown(view.title)}**", ""]
    lines.append("| " + " | ".join(markdown(c) for c in view.columns) + " |")
    lines.append("|" + "|".join("---" if a == "l" else "---:" for a in align) + "|")
    lines += ["| " + " | ".join(markdown(c) for c in row) + " |" for row in view.rows]
    if view.caption:
        lines += ["", "_" + markdown(view.caption.replace("\n", " ")) + "_"]
    return "\n".join(lines)


def utf8_size(text: str) -> int:
    """Bytes of `text` as a file gets it (undecodable file-name bytes written as backslash escapes)."""
    return len(text.encode("utf-8", "backslashreplace"))


def cap_markdown(parts: Sequence[str], room: int, note: str) -> str:
    """The parts in order within `room` bytes (utf8_size): the first part that does not fit is cut at a line end,
    followed by `note` (in italics, after a blank line, so that it never lands inside a table), and nothing after
    it; "" when not even the note fits. The job summary puts the gates first, so they are the last thing cut."""
    out: list[str] = []
    used = 0
    for part in parts:
        size = utf8_size(part)
        if used + size <= room:
            out.append(part)
            used += size
            continue
        tail = f"\n\n_{note}_\n"
        budget = room - used - utf8_size(tail)
        if budget < 0:
            return "".join(out) if out else ""
        cut = part.encode("utf-8", "backslashreplace")[:budget].decode("utf-8", "ignore")
        cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else ""
        return "".join(out) + cut.rstrip("\n") + tail
    return "".join(out)


def to_markdown(blocks: Sequence[Block]) -> str:
    """Blocks as Markdown: headings, paragraphs and tables separated by blank lines (charts left out)."""
    parts: list[str] = []
    for b in blocks:
        if b.terminal_only or isinstance(b, Chart):  # charts: drawn in HTML only
            continue
        if isinstance(b, TableView):
            parts.append(markdown_table(b))
        elif b.heading:
            parts.append("## " + markdown(" ".join(b.lines)))
        else:
            text = "\n".join(markdown(x) for x in b.lines).strip("\n")
            if text:
                parts.append(text)
    return "\n\n".join(parts) + "\n"


def text_table(view: TableView) -> str:
    """A table as plain text, as the terminal shows it without its box: the title, the header over a rule, the
    rows (numbers right-aligned) and the caption."""
    cells = [tuple(clean(c, keep_newlines=False) for c in view.columns)]
    cells += [tuple(clean(c, keep_newlines=False) for c in row) for row in view.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(view.columns))]
    align = view.alignment()

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, align)).rstrip()

    out = [clean(view.title, keep_newlines=False)] if view.title else []
    out += [line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]]
    out += [clean(x, keep_newlines=False) for x in view.caption.split("\n")] if view.caption else []
    return "\n".join(out)


def to_text(blocks: Sequence[Block]) -> str:
    """Blocks as plain text (the library's `summary()`): the terminal's tables, lines and text charts, without the
    terminal (no colour, no box, no width limit)."""
    parts: list[str] = []
    for b in blocks:
        if isinstance(b, TableView):
            parts.append(text_table(b))
        else:
            parts.append("\n".join(clean(x, keep_newlines=False) for x in (b.text if isinstance(b, Chart) else b.lines)))
    return "\n".join(p.rstrip() for p in parts).strip("\n") + "\n"
