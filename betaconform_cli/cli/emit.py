"""The one output path: any result (report.Report) as a table, JSON, CSV or Markdown, to stdout or a file.

Data goes to stdout, messages to stderr. Tables never cut a number: cells wrap on a narrow terminal, and output
that is not a terminal (a pipe, a file) gets the table's natural width unless COLUMNS says otherwise. Where the
stream cannot encode the box and block characters (LC_ALL=C, PYTHONIOENCODING=ascii), plain ASCII stands in.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import atomic
from ..errors import ParameterError
from ..report import EXTENSIONS, Report
from ..report.render import clean, to_markdown
from ..report.views import Block, TableView
from .options import OutputGroup

WIDE = 1000  # "no limit": a pipe or a file gets each table at its natural width
ASCII = str.maketrans({"█": "#", "┃": "|", "—": "-", "–": "-", "±": "+/-", "†": "+", "…": "...", "’": "'", "×": "x"})


def stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True, width=None if sys.stderr.isatty() else WIDE)


def say(message: str) -> None:
    """One message on stderr, control characters escaped, ASCII where stderr cannot encode more."""
    _print_text(sys.stderr, message)


def _print_text(stream: TextIO, text: str) -> None:
    text = clean(text)
    enc = getattr(stream, "encoding", None) or "utf-8"
    if not _can_encode(enc, text):
        text = text.translate(ASCII).encode(enc, "replace").decode(enc)
    stream.write(text + "\n")
    stream.flush()


def _can_encode(encoding: str, text: str) -> bool:
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def resolve_format(out: OutputGroup) -> str:
    """--format, else -o's extension (.txt: the table; another extension is refused), else the table."""
    if out.output is not None:
        atomic.check_target(out.output)
    if out.fmt is not None:
        return out.fmt.value
    if out.output is None:
        return "table"
    suffix = out.output.suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    if not suffix:
        raise ParameterError(("output", "fmt"), f"{{0}} {out.output}: cannot tell the format without an extension; add {{1}}")
    raise ParameterError(("output", "fmt"), f"{{0}} {out.output}: unknown extension {suffix!r} (use .txt, .json, .csv or .md), or add {{1}}")


def rich_table(view: TableView, ascii_only: bool = False) -> Table:
    """A rich Table of a view: every string is escaped (no markup, no control characters); no cell is cut."""

    def text(s: str) -> str:
        s = escape(clean(s))
        return s.translate(ASCII) if ascii_only else s

    t = Table(title=text(view.title) or None, caption=text(view.caption) if view.caption else None,
              title_justify="left", caption_justify="left")
    for i, (c, a) in enumerate(zip(view.columns, view.alignment())):
        words = max((len(w) for w in c.split()), default=1)  # a header breaks between words, never inside one
        t.add_column(text(c), justify="left" if a == "l" else "right", no_wrap=i == 0, overflow="fold", min_width=words)
    for row in view.rows:
        t.add_row(*(text(cell) for cell in row))
    return t


def show(blocks: list[Block], console: Console) -> None:
    ascii_only = not _can_encode(console.encoding, "█┃—±†┏")
    for b in blocks:
        if isinstance(b, TableView):
            console.print(rich_table(b, ascii_only), crop=False)  # a table wider than the terminal wraps; nothing is cut
        elif not b.markdown_only:
            for line in b.lines:
                line = clean(line)
                console.print(line.translate(ASCII) if ascii_only else line, markup=False, highlight=False)


def stdout_console() -> Console:
    tty = sys.stdout.isatty()
    width = None if tty or os.environ.get("COLUMNS") else WIDE
    return Console(highlight=False, soft_wrap=False, width=width)


def text_of(report: Report, fmt: str) -> str:
    """The report in a data format, or its tables as plain text (for a .txt file)."""
    if fmt == "json":
        return report.json()
    if fmt == "csv":
        return report.csv()
    if fmt == "markdown":
        return to_markdown(report.blocks(markdown=True))
    buf = io.StringIO()
    show(report.blocks(), Console(file=buf, width=WIDE, highlight=False, soft_wrap=False, color_system=None,
                                  force_terminal=False, legacy_windows=False))
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def write_stdout(text: str) -> None:
    enc = getattr(sys.stdout, "encoding", None) or "utf-8"
    if not _can_encode(enc, text):
        text = text.translate(ASCII).encode(enc, "replace").decode(enc)
    sys.stdout.write(text)


def emit(report: Report, out: OutputGroup, fmt: str | None = None) -> int:
    """Notes to stderr; the report to stdout (the table also when -o writes a file); saved fits; the exit code."""
    fmt = fmt or resolve_format(out)
    for note in report.notes:
        say(note)
    if out.output is None:
        if fmt == "table":
            show(report.blocks(), stdout_console())
        else:
            write_stdout(text_of(report, fmt))
    else:
        atomic.write_text(out.output, text_of(report, fmt))
        show(report.blocks(), stdout_console())
        say(f"wrote {out.output}")
    for path, body in getattr(report, "saves", ()):
        from ..savedfit import dump_fit

        dump_fit(path, body)
        say(f"saved {path}")
    for line in report.failures:
        say(line)
    return report.exit_code


def refuse_overwrites(inputs: list[str], **outputs: Path | None) -> None:
    """No output may be one of the inputs (`fit d.jsonl -o d.jsonl` would destroy the data)."""
    from ..inputs import expand_paths

    try:
        paths = expand_paths(inputs)
    except Exception:  # noqa: BLE001 - a bad input is reported by the read itself, with its own message
        return
    atomic.refuse_inputs([(name.replace("_", " "), p) for name, p in outputs.items()], paths)


def write_lines(path: Path, lines: tuple[bytes, ...]) -> None:
    atomic.write_bytes(path, b"".join(lines))


@contextlib.contextmanager
def progress(what: str) -> Iterator[Callable[..., None]]:
    """A transient progress bar on stderr, only when stderr is a terminal (a log gets no stray lines); yields
    update(done, total, label=what)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = stderr()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(what, total=None)

        def update(done: int, total: int, label: str = what) -> None:
            bar.update(task, completed=done, total=total, description=label)

        yield update
