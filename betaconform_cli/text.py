"""Text from the user's files shown safely: control characters as escapes (`clean`). Light on purpose (the CLI's
one-line messages use it before anything else is imported); report/render.py applies it to every rendering."""

from __future__ import annotations

import re

# C0 and C1 controls (not tab and newline), bidirectional embeddings, overrides and isolates, the line and
# paragraph separators, and lone surrogates (undecodable bytes of a file name)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def escape_char(m: re.Match[str]) -> str:
    """One matched character as \\xNN or \\uNNNN."""
    code = ord(m.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by the surrogateescape error handler
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: str, keep_newlines: bool = True) -> str:
    """Control characters shown as escapes (ESC -> \\x1b, U+202E -> \\u202e); newlines kept unless
    `keep_newlines` is False."""
    out = _CONTROL.sub(escape_char, str(text))
    return out if keep_newlines else out.replace("\n", "\\n")
