"""The built-in output formats' writers (output_formats.py names them): a report as the text of a format.

Each is `writer(report, path) -> str`, `path` the -o file (None for standard output); emit.py calls the one the
registry names for `-f`/`-o`, so a new output format is a registry entry and its writer, never a branch here.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from .streams import WIDE

if TYPE_CHECKING:
    from ..report import Report


def json_text(report: Report, path: Path | None) -> str:
    """The JSON document; written to `path`, in the layout its name asks for (render.json_for_file: an array in a
    .json file, JSON Lines in .jsonl)."""
    if path is None:
        return report.json()
    from ..report.render import json_for_file

    return json_for_file(report.json(), path.name)


def csv_text(report: Report, path: Path | None) -> str:
    return report.csv()


def markdown_text(report: Report, path: Path | None) -> str:
    from ..report.render import to_markdown

    return to_markdown(report.blocks(markdown=True))


def html_text(report: Report, path: Path | None) -> str:
    """One self-contained page, headed by the command and each gate's verdict."""
    from ..report import verdicts
    from ..report.html import to_html
    from .ci_outputs import command_name, verdict_line

    return to_html(report.blocks(), f"betaconform {command_name()}", [(v.passed, verdict_line(v)) for v in verdicts(report) if v.gate])


def table_text(report: Report, path: Path | None) -> str:
    """The terminal's tables as plain text (a .txt file): every table at its natural width, no colour."""
    from rich.console import Console

    from .terminal import show

    buf = io.StringIO()
    show(report.blocks(), Console(file=buf, width=WIDE, highlight=False, soft_wrap=False, color_system=None,
                                  force_terminal=False, legacy_windows=False))
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
