"""The terminal side of emit.py: rich consoles and tables that never cut a number. Imported only when a table is
shown or a console is needed (a JSON, CSV or Markdown report and `--help` never load it)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from ..escape import clean, rich_markup, terminal
from ..report.views import Block, Chart, TableView
from .streams import ASCII, WIDE, can_encode, discard, encodable


class _Console(Console):
    """A console whose reader may leave (`| head`): the rest of the output is dropped, the command goes on (its
    files are written, its exit code is the verdict's), instead of rich's exit code 1 ("gate failed")."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        discard(sys.stderr if self.stderr else sys.stdout)


def stderr() -> Console:
    return _Console(stderr=True, highlight=False, soft_wrap=True, width=None if sys.stderr.isatty() else WIDE)


def rich_table(view: TableView, ascii_only: bool = False, encoding: str = "utf-8", widths: list[int] | None = None) -> Table:
    """A rich Table of a view: every string is escaped (no markup, no control characters, no line breaks but the
    caption's); no cell is cut: cells fold, at `widths` (column_widths) when given."""
    fit = _fitter(ascii_only, encoding)

    def text(s: str) -> str:
        return rich_markup(fit(clean(s, keep_newlines=False)))

    caption = rich_markup(fit(clean(view.caption))) if view.caption else None
    t = Table(title=text(view.title) or None, caption=caption, title_justify="left", caption_justify="left")
    for i, (c, a) in enumerate(zip(view.columns, view.alignment())):
        t.add_column(text(c), justify="left" if a == "l" else "right", overflow="fold", width=widths[i] if widths else None)
    for row in view.rows:
        t.add_row(*(text(cell) for cell in row))
    return t


def _fitter(ascii_only: bool, encoding: str) -> Callable[[str], str]:
    if not ascii_only:
        return lambda s: s
    return lambda s: encodable(s.translate(ASCII), encoding)


FIRST_COLUMN_MIN = 24  # a first-column label (a dataset name) up to this long stays on one line; longer ones fold


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=1)


def min_widths(view: TableView, fit: Callable[[str], str] = lambda s: s) -> list[int]:
    """Each column's narrowest width: its longest word (header or cell), so that a number is never broken. The
    first column keeps whole labels up to FIRST_COLUMN_MIN characters on one line; longer ones fold."""
    out = []
    for i, c in enumerate(view.columns):
        cells = [fit(clean(row[i], keep_newlines=False)) for row in view.rows if i < len(row)]
        head = _longest_word(fit(clean(c, keep_newlines=False)))
        if i == 0:
            out.append(max(head, min(max((len(x) for x in cells), default=1), FIRST_COLUMN_MIN)))
        else:
            out.append(max(head, max((_longest_word(x) for x in cells), default=1)))
    return out


def table_width(widths: list[int]) -> int:
    """A rich table's width for these column widths: one space either side of each cell, a border between and
    around them."""
    return sum(widths) + 3 * len(widths) + 1


def column_widths(view: TableView, width: int, fit: Callable[[str], str] = lambda s: s) -> list[int]:
    """Each column's width in a table at most `width` wide: its natural width (its longest cell) when the table
    fits; else its narrowest (min_widths) plus a share of what is left, in proportion to what it lacks. Never
    below the narrowest: a table that cannot fit is wider than `width` (the terminal wraps it, nothing is cut)."""
    least = min_widths(view, fit)
    natural = [max([len(fit(clean(c, keep_newlines=False)))] + [len(fit(clean(row[i], keep_newlines=False)))
                                                               for row in view.rows if i < len(row)])
               for i, c in enumerate(view.columns)]
    natural = [max(n, m) for n, m in zip(natural, least)]
    if table_width(natural) <= width:
        return natural
    spare = width - table_width(least)
    lack = [n - m for n, m in zip(natural, least)]
    if spare <= 0 or not sum(lack):
        return least
    shares = [spare * x / sum(lack) for x in lack]
    out = [m + int(x) for m, x in zip(least, shares)]
    for i in sorted(range(len(out)), key=lambda j: int(shares[j]) - shares[j])[: spare - sum(int(x) for x in shares)]:
        out[i] += 1
    return out


def split_columns(view: TableView, width: int, fit: Callable[[str], str] = lambda s: s) -> list[TableView]:
    """The view as one table if its columns fit `width` at their narrowest, else as several tables, each with the
    first column and as many of the others as fit (at least one); later parts say "(continued)"."""
    least = min_widths(view, fit)
    if len(view.columns) < 3 or table_width(least) <= width:
        return [view]
    groups: list[list[int]] = [[]]
    for i in range(1, len(view.columns)):
        if groups[-1] and table_width([least[0]] + [least[j] for j in groups[-1] + [i]]) > width:
            groups.append([])
        groups[-1].append(i)
    if len(groups) == 1:
        return [view]
    align = view.alignment()
    parts = []
    for n, g in enumerate(groups):
        keep = [0, *g]
        title = view.title if n == 0 else (f"{view.title} (continued)" if view.title else "(continued)")
        parts.append(TableView(
            title=title, columns=tuple(view.columns[j] for j in keep),
            rows=tuple(tuple(row[j] for j in keep) for row in view.rows),
            caption=view.caption if n == len(groups) - 1 else "", align="".join(align[j] for j in keep),
            terminal_only=view.terminal_only,
        ))
    return parts


def show(blocks: list[Block], console: Console) -> None:
    """Blocks on a console: tables that never cut a number (split when too wide), lines as plain text."""
    encoding = console.encoding
    ascii_only = not can_encode(encoding, "█┃—±†┏")
    fit = _fitter(ascii_only, encoding)
    for b in blocks:
        if isinstance(b, TableView):
            for part in split_columns(b, console.width, fit):
                widths = column_widths(part, console.width, fit)
                # our widths, not rich's: rich squeezes columns below their longest word when a table is too wide
                console.print(rich_table(part, ascii_only, encoding, widths), crop=False,
                              width=max(console.width, table_width(widths)))
        else:
            for line in b.text if isinstance(b, Chart) else b.lines:
                console.print(fit(terminal(line)), markup=False, highlight=False)


def stdout_console() -> Console:
    tty = sys.stdout.isatty()
    width = None if tty or os.environ.get("COLUMNS") else WIDE
    return _Console(highlight=False, soft_wrap=False, width=width)
