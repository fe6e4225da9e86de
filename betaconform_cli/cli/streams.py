"""What a standard stream can take: text in an encoding it can write (box and block characters as ASCII, the rest as
escapes; JSON as \\uXXXX, so it stays the same JSON), one message line on stderr (`say`), and a reader that has gone
(`discard`). emit.py (the output path) and terminal.py (its rich side) both write through these."""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

from ..escape import clean, terminal

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
WIDE = 1000  # "no limit": a pipe or a file gets each table at its natural width
ASCII = str.maketrans({"█": "#", "┃": "|", "—": "-", "–": "-", "±": "+/-", "†": "+", "…": "...", "’": "'", "×": "x"})


def discard(stream: TextIO) -> None:
    """The reader of `stream` has gone: send what is still written there to /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def say(message: str) -> None:
    """One message on stderr, on one line whatever names from the data it quotes: control characters, ANSI escapes
    and newlines escaped (\\x1b, \\n), ASCII where stderr cannot encode more."""
    _print_text(sys.stderr, terminal(message))


def _print_text(stream: TextIO, text: str) -> None:
    text = encodable(clean(text), getattr(stream, "encoding", None) or "utf-8")
    try:
        stream.write(text + "\n")
        stream.flush()
    except BrokenPipeError:
        discard(stream)
    except (OSError, ValueError):  # stderr closed (2>&-): the message has nowhere to go
        pass


def encodable(text: str, encoding: str) -> str:
    """`text` as the stream's encoding can write it: box and block characters as ASCII, the rest as escapes."""
    if can_encode(encoding, text):
        return text
    text = text.translate(ASCII)
    try:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text.encode("ascii", "backslashreplace").decode("ascii")


def json_encodable(text: str, encoding: str) -> str:
    """JSON text as the stream's encoding can write it: characters it cannot encode as \\uXXXX escapes (outside
    strings JSON is ASCII, so the result is the same JSON)."""
    if can_encode(encoding, text):
        return text

    def escape_char(m: re.Match[str]) -> str:
        c = m.group()
        if can_encode(encoding, c):
            return c
        code = ord(c)
        if code > 0xFFFF:
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"

    return _NON_ASCII.sub(escape_char, text)


def can_encode(encoding: str, text: str) -> bool:
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True
