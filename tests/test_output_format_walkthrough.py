"""docs/ARCHITECTURE.md's "Walkthrough: an output format", done once in a test-only fixture.

A toy output format `psv` (the CSV table with `|` between cells, `-o *.psv`) is one registration,
`output_formats.register_output_format(OutputFormat("psv", "module:function", (".psv",)))`, plus its writer
`writer(report, path) -> text`, touching no other module. While the fixture holds it, `fit`, `judges` and `score`
write it for `-f psv` (standard output) and for `-o FILE.psv` (the file, the table on standard output), and
`--help` offers it; once the fixture ends `-f psv` and `-o FILE.psv` are refused again with one line, exit 2.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from betaconform_cli import formats
from betaconform_cli.output_formats import (
    OutputFormat,
    output_formats,
    register_output_format,
    unregister_output_format,
)

from .conftest import SAMPLE, invoke


def to_psv(report: Any, path: Path | None) -> str:
    """The toy writer: the report's CSV table, its cells joined by `|` (a `|` inside a cell as `\\|`)."""
    rows = csv.reader(io.StringIO(report.csv()))
    return "".join("|".join(cell.replace("|", "\\|") for cell in row) + "\n" for row in rows)


PSV = OutputFormat("psv", f"{__name__}:to_psv", (".psv",))


@pytest.fixture
def psv() -> Iterator[OutputFormat]:
    """The toy output format, registered for this test only."""
    register_output_format(PSV)
    try:
        yield PSV
    finally:
        unregister_output_format(PSV.name)


SYSTEM = str(SAMPLE / "system_verdicts.jsonl")  # 7 named judges, 40 labeled + 110 unlabeled items
# each command on a small input: its CSV table (formats' OutputTable registry: the leading columns) and its rows
COMMANDS = {
    "fit": ([str(SAMPLE / "qa_judges.jsonl"), "--ks", "1,3,5"], "fit", 3),
    "judges": ([SYSTEM, "--ks", "1"], "judges", 1),
    "score": ([SYSTEM], "score", 1),
}


def _cells(text: str) -> list[list[str]]:
    return [line.split("|") for line in text.splitlines()]


class TestAToyOutputFormat:
    """An output format is one registration and its writer: `-f NAME` and `-o FILE.EXT` reach it in every command."""

    @pytest.mark.parametrize("command", list(COMMANDS))
    def test_chosen_by_name_and_by_ending(self, command: str, psv: OutputFormat, runner: CliRunner, tmp_path: Path) -> None:
        """`-f psv` writes the table with `|` to standard output, `-o x.psv` the same text to the file."""
        args, table, rows = COMMANDS[command]
        shown = invoke(runner, command, *args, "-f", "psv")
        assert shown.exit_code == 0, shown.output
        cells = _cells(shown.stdout)
        columns = formats.output_columns(table)
        assert tuple(cells[0][:len(columns)]) == columns  # the command's registered CSV header, split at `|`
        assert len(cells) == 1 + rows and all(len(row) == len(cells[0]) for row in cells)
        target = tmp_path / "out.PSV"  # any case, as the built-in endings
        written = invoke(runner, command, *args, "-o", target)
        assert written.exit_code == 0, written.output
        assert target.read_text(encoding="utf-8") == shown.stdout
        assert "|" not in written.stdout.splitlines()[0] and f"wrote {target}" in written.stderr

    def test_offered_by_help_while_registered(self, psv: OutputFormat, runner: CliRunner) -> None:
        """--format's choices are the registry's when typer builds the command."""
        assert output_formats()[-1] == "psv"
        assert "|html|psv>" in invoke(runner, "fit", "--help").stdout

    def test_a_taken_name_or_ending_is_refused(self, psv: OutputFormat) -> None:
        """A second `psv`, or another format claiming `.csv`, is a ValueError naming what is taken."""
        with pytest.raises(ValueError, match="psv"):
            register_output_format(PSV)
        with pytest.raises(ValueError, match=r"\.csv"):
            register_output_format(OutputFormat("commas", to_psv, (".csv",)))


class TestGoneAgain:
    """Without the registration `psv` is no format: one line, exit 2, nothing written."""

    def test_refused_by_name_and_by_ending(self, runner: CliRunner, tmp_path: Path) -> None:
        assert "psv" not in output_formats()
        by_name = invoke(runner, "fit", str(SAMPLE / "qa_judges.jsonl"), "-f", "psv")
        assert by_name.exit_code == 2 and "'psv' is not one of" in by_name.stderr
        by_ending = invoke(runner, "fit", str(SAMPLE / "qa_judges.jsonl"), "-o", tmp_path / "x.psv")
        assert by_ending.exit_code == 2 and len(by_ending.stderr.splitlines()) == 1
        assert "unknown extension '.psv' (use .txt, .json, .csv, .md or .html)" in by_ending.stderr
        assert not (tmp_path / "x.psv").exists()
        assert "|html>" in invoke(runner, "fit", "--help").stdout
