"""Names from data never become markup, commands or outputs: the one place that makes a name (a dataset, judge,
item, file or slice name; anything a user's file or option holds) safe for each place it is written to.

Every target has one function, and every renderer and writer calls it for every string it did not write itself:

- `clean`: the base of all of them. Control and invisible characters shown as escapes (ESC -> \\x1b, U+202E ->
  \\u202e): C0 and C1 controls (not tab; newline kept unless asked), Unicode's format characters (bidirectional
  embeddings, overrides, isolates and marks; zero-width spaces and joiners; the byte-order mark; tag characters),
  the line and paragraph separators, and lone surrogates (a file name's undecodable bytes, shown as \\xNN). A name
  then cannot move the cursor, set the terminal title, reorder the text around it or hide in plain sight.
- `terminal`: one line of terminal text: `clean` without newlines, and a line that would start with `::` (a
  GitHub Actions workflow command, read from any step's output) gets a backslash first.
- `rich_markup`: text given to rich as markup (`[bold]` shown as written, never as a style): rich's own rule.
- `markdown`: Markdown text, a table cell or a heading (GitHub's job summary included): `clean` without newlines;
  `&`, `<`, `>` as HTML entities (no tag, no `<!--` hiding the rest of the page, no autolink); Markdown's
  punctuation backslash-escaped (no link, image, code span, emphasis, strike-through, math or table cell break);
  a leading `::` as `terminal`'s.
- `html` (and SVG, the same XML text and attribute rule): `clean` without newlines, then `&<>"'` as entities.
- `xml`: text and attributes of a JUnit file: `clean`, and what XML 1.0 cannot hold at all as escapes (the XML
  writer escapes `&<>"` itself).
- `csv_cell`: `clean` without newlines; a cell a spreadsheet would run as a formula (= + - @, tab, CR) or a runner
  as a workflow command (::) gets a leading apostrophe.
- `json_text`: JSON from an encoder, what `clean` escapes as JSON's own \\u escapes (the same value).
- `matplotlib`: a figure's text: `clean` without newlines, `$` escaped (math mode).
- File names built from data are `file_names.file_stems`' (it removes what `clean` escapes).
"""

from __future__ import annotations

import re

# Unicode's Cc, Cf, Zl, Zp and Cs code points (Unicode 15), tab and newline excepted: controls, invisible format
# characters (bidi, zero-width, BOM, tags), separators and lone surrogates
INVISIBLE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_CONTROL = re.compile(f"[{INVISIBLE}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# what GitHub's Markdown reads in inline text: `*`, backticks, `~`, `$` (math) and `|` (a table cell's end) anywhere;
# `[` (no bracket opened, no link, image, footnote or reference); `_` where it can open or close emphasis (not
# inside a word: qa_judges stays as it is); `&` where it starts an entity (&lt;); a backslash that would escape
# what follows or break the line
_MARKDOWN = re.compile(r"[`*~$|\[_]")
_MD_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)")
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_RICH_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")  # rich.markup's tag, as rich.markup.escape reads it
_FORMULA = ("=", "+", "-", "@", "\t", "\r", "::")
_WORKFLOW_COMMAND = re.compile(r"^(\s*)::")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by the surrogateescape error handler
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def clean(text: object, keep_newlines: bool = True) -> str:
    """Control and invisible characters as escapes; newlines kept unless `keep_newlines` is False (then \\n)."""
    out = _CONTROL.sub(_escape, str(text))
    return out if keep_newlines else out.replace("\n", "\\n")


def surrogates(text: str) -> str:
    """Only lone surrogates (undecodable file-name bytes) as escapes: what JSON and UTF-8 cannot carry."""
    return _SURROGATE.sub(_escape, text)


def json_text(text: str) -> str:
    """JSON text (from a JSON encoder: these characters can only stand inside its strings) with every character
    `clean` escapes written as a JSON escape (U+202E -> \\u202e): the same JSON value, nothing invisible."""
    return _CONTROL.sub(_json_escape, text)


def _json_escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def terminal(text: object) -> str:
    """One line for a terminal or a log (a CI runner reads `::command::` at a line's start)."""
    return _WORKFLOW_COMMAND.sub(r"\1\\::", clean(text, keep_newlines=False))


def rich_markup(text: str) -> str:
    """Text that rich reads as markup shown as written (rich.markup.escape's rule, without importing rich; a
    trailing backslash is left alone: each cell is markup of its own, never joined to a tag after it)."""
    return _RICH_TAG.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)


def markdown(text: object) -> str:
    """Markdown inline text (a cell, a heading, a line): shown as written, never read as markup."""
    out = _MD_BACKSLASH.sub(r"\\\\", clean(text, keep_newlines=False))
    out = _MD_ENTITY.sub("&amp;", out).replace("<", "&lt;").replace(">", "&gt;")

    def escape(m: re.Match[str]) -> str:
        i = m.start()
        if m.group() == "_" and 0 < i < len(out) - 1 and _in_word(out[i - 1]) and _in_word(out[i + 1]):
            return "_"  # inside a word (snake_case): never emphasis in GitHub's Markdown
        return "\\" + m.group()

    return _WORKFLOW_COMMAND.sub(r"\1\\::", _MARKDOWN.sub(escape, out))


def _in_word(c: str) -> bool:
    """Neither white space nor punctuation (ASCII punctuation, Unicode's P categories: the flanking rule of
    GitHub's cmark-gfm): a `_` between two of these is literal."""
    import unicodedata

    if c.isascii():
        return c.isalnum()
    return not c.isspace() and not unicodedata.category(c).startswith("P")


def html(text: object, keep_newlines: bool = False) -> str:
    """HTML or SVG text or attribute value (quoted with " or ')."""
    out = clean(text, keep_newlines=keep_newlines)
    return (out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#x27;"))


def xml(text: object, keep_newlines: bool = False) -> str:
    """Text or an attribute for an XML writer that escapes markup itself (ElementTree): what XML 1.0 cannot carry
    at all (escaping does not help) and what `clean` escapes, as escapes."""
    return _NOT_XML.sub(_escape, clean(text, keep_newlines=keep_newlines))


def csv_cell(text: str) -> str:
    out = clean(text, keep_newlines=False)
    if out.startswith(_FORMULA) and not _is_number(out):
        return "'" + out
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def matplotlib(text: object) -> str:
    """A figure's text as written: '$' would start matplotlib's math mode (and a lone one fail to parse)."""
    return clean(text, keep_newlines=False).replace("$", r"\$")
