"""Format-neutral pieces of every result's output: tables and lines of text, already formatted as strings.

A result (report/fit.py, evaluate.py, transfer.py, sample.py, judges.py) turns into a list of blocks; the
renderings (render.py) turn blocks into Markdown or plain text, and the CLI into rich tables. Nothing here
knows about a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

TIE_NOTE = "* even k: a tie (k/2 correct) counts as half an error"


def tie_note(ks: Iterable[int]) -> str:
    """The footnote for k_label's '*', where a table shows an even k; "" where it shows none."""
    return TIE_NOTE if any(int(k) % 2 == 0 for k in ks) else ""


def caption_of(*parts: str, sep: str = "\n") -> str:
    """A caption of the parts that are not empty."""
    return sep.join(p for p in parts if p)


@dataclass(frozen=True)
class TableView:
    """A table: a title, column headers and rows of already formatted cells, a caption under it.

    align: one of l/r per column (default: first left, the rest right). `terminal_only`: a block that the
    Markdown rendering leaves out (a chart or a diagnostics table that a job summary does not need). `summary`:
    the overview of several datasets, last in a terminal (seen when the output stops) and first on the HTML page
    (under the gates: a long page is read from the top).
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""
    align: str = ""
    terminal_only: bool = False
    summary: bool = False

    def alignment(self) -> str:
        return self.align or "l" + "r" * (len(self.columns) - 1)


@dataclass(frozen=True)
class Lines:
    """Plain text: each line printed as is (never read as markup). `heading` in Markdown becomes '## text'."""

    lines: tuple[str, ...]
    heading: bool = False
    terminal_only: bool = False


@dataclass(frozen=True)
class Series:
    """One line of a chart: y per x (None where the tables say the value is undefined: nothing is drawn there),
    with an optional interval (low, high) per x."""

    name: str
    y: tuple[float | None, ...]
    low: tuple[float | None, ...] = ()
    high: tuple[float | None, ...] = ()
    key: str = ""  # what it is (an estimator's name: estimators.REGISTRY): drawn alike in every chart (svg.style)


@dataclass(frozen=True)
class Chart:
    """A figure, format-neutral: HTML draws it as inline SVG (report/svg.py); a terminal prints `text` (the
    text chart, or nothing); Markdown leaves it out.

    kind "lines": `x` numbers, `series` lines (the first one's interval drawn as a band, the others' as bars); an x
    ending in BEYOND ("9‡": k beyond the most judges any item has) and every x after it are shaded (extrapolated);
    kind "bars": `x` categories, `series[0]` bars (observed), `series[1:]` markers (fitted);
    kind "heatmap": `x` column labels, `rows` row labels, `cells[row][col]` a value (None: no number);
    kind "hbars": `rows` labels, `series[0]` one value per row, with its interval when given (`score`'s
    judges-vs-corrected bar).
    """

    kind: str
    title: str
    x: tuple[str, ...] = ()
    series: tuple[Series, ...] = ()
    rows: tuple[str, ...] = ()
    cells: tuple[tuple[float | None, ...], ...] = ()
    x_label: str = ""
    y_label: str = ""
    percent: bool = True  # values are fractions, shown as %
    caption: str = ""
    text: tuple[str, ...] = ()
    terminal_only: bool = True  # never in Markdown


Block = TableView | Lines | Chart

BLANK = Lines(("",))


def pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{100 * x:.{digits}f}%"


def k_label(k: int, extrapolated: bool = False, beyond: bool = False) -> str:
    """'4*' for an even k (ties count half), '†' where the mixture extrapolates missing judges, '‡' where k is
    beyond the most judges any item has (the whole row is the model's extrapolation: BEYOND_NOTE)."""
    return f"{k}{'*' if k % 2 == 0 else ''}{'‡' if beyond else '†' if extrapolated else ''}"


BEYOND = "‡"


def beyond_note(most: int | None) -> str:
    """The footnote of rows beyond the data (k_label's '‡')."""
    items = f"any item has ({most})" if most else "any item has"
    return (f"‡ extrapolated: more judges than {items}; no item was judged by k, the row is the model's alone, and its "
            "interval is widened to at least the width at the most judges observed (docs/EXTRAPOLATION.md)")
