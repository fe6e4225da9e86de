"""docs/ARCHITECTURE.md's "Walkthrough: a command", done once in a test-only fixture.

`betaconform agree FILE` prints the judges' pairwise agreement, built exactly as the walkthrough says: (1) an api
function that reads with `read_inputs(arguments, opts, Keep.JUDGMENTS)`, checks its options and returns a report,
exported by `api`; (2) the report with `blocks()`, `json()` (a schema) and `csv()`, its CSV header registered
as a `formats.OutputTable` (render.to_csv writes no other; a folder skips it); (3) a typer command `@app.command() @grouped def agree(data, inp: InputOptions,
out: OutputGroup)` that calls `output_format` (the format, and no output overwriting an input), the api function
once and `emit`. Nothing else in the package changes, and the app is left as it was.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from betaconform_cli import api, formats
from betaconform_cli.cli.emit import emit, output_format
from betaconform_cli.cli.options import OutputGroup, grouped
from betaconform_cli.errors import ParameterError
from betaconform_cli.inputs import Dataset, InputOptions, Keep, read_inputs
from betaconform_cli.report import Verdictless
from betaconform_cli.report.render import to_csv, to_json
from betaconform_cli.report.views import Block, TableView

from .conftest import invoke

CSV_COLUMNS = ("dataset", "a", "b", "items", "agreement")


# (2) report/agree.py: the result and its views.
@dataclass(frozen=True)
class AgreeReport(Verdictless):
    """Each dataset's judge pairs: (a, b, items both judged, the share of them on which a and b agree)."""

    documents: tuple[dict[str, Any], ...]

    def blocks(self, markdown: bool = False) -> list[Block]:
        return [TableView(f"{d['dataset']}: pairwise agreement", ("judges", "items", "agreement"),
                          tuple((f"{p['a']} & {p['b']}", str(p["items"]), f"{p['agreement']:.3f}") for p in d["pairs"]))
                for d in self.documents]

    def json(self) -> str:
        return to_json(list(self.documents))

    def csv(self) -> str:
        return to_csv(CSV_COLUMNS, ([d["dataset"], p["a"], p["b"], p["items"], p["agreement"]]
                                    for d in self.documents for p in d["pairs"]))


# (1) api/_agree.py: read, check the options together, compute, return the report.
def agree(arguments: Sequence[str], opts: InputOptions = InputOptions(), min_items: int = 1) -> AgreeReport:
    if min_items < 1:
        raise ParameterError("min_items", f"must be at least 1; got {min_items}")
    return AgreeReport(tuple(_document(ds, min_items) for ds in read_inputs(arguments, opts, Keep.JUDGMENTS)))


def _document(ds: Dataset, min_items: int) -> dict[str, Any]:
    marks = [item.marks for item in ds.items or () if item.marks is not None]
    pairs = []
    for (i, a), (j, b) in combinations(enumerate(ds.judge_names), 2):
        both = [(m[i], m[j]) for m in marks if m[i] is not None and m[j] is not None]
        if len(both) >= min_items:
            pairs.append({"a": a, "b": b, "items": len(both), "agreement": sum(x == y for x, y in both) / len(both)})
    return {"schema": "betaconform/1", "command": "agree", "dataset": ds.name, "pairs": pairs}


# (3) cli/agree.py: parse -> one api call -> emit.
def register(app: typer.Typer) -> None:
    @app.command()
    @grouped
    def agree(
        data: Annotated[list[str], typer.Argument(help="labeled items with named judges")],
        inp: InputOptions,
        out: OutputGroup,
        min_items: Annotated[int, typer.Option("--min-items", help="pairs judged together on fewer items are left out")] = 1,
    ) -> None:
        """The judges' pairwise agreement."""
        fmt = output_format(out, data)
        raise typer.Exit(emit(api.agree(data, inp, min_items), out, fmt))


@contextmanager
def agree_added() -> Iterator[None]:
    """The command's three places, as a module each would add them: `api.agree` (api/__init__.py's export), the
    CSV header (an OutputTable in formats.py) and the command on the app (cli/__init__.py's import of cli/agree.py). The
    patches stand for those edits and are undone on leaving; the app's command list is put back as it was."""
    from betaconform_cli.cli import app

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(api, "agree", agree, raising=False)
        formats.register_output_table(formats.OutputTable("agree", CSV_COLUMNS))
        before = list(app.registered_commands)
        register(app)
        try:
            yield
        finally:
            app.registered_commands[:] = before
            formats.unregister_output_table("agree")


@pytest.fixture
def agree_command() -> Iterator[None]:
    with agree_added():
        yield


ITEMS = [  # judges a, b, c: a and b agree on 3 of 4 items, a and c on 2 of 4, b and c on 3 of 4 (c misses none)
    {"id": "1", "judgments": {"a": 1, "b": 1, "c": 1}},
    {"id": "2", "judgments": {"a": 1, "b": 0, "c": 0}},
    {"id": "3", "judgments": {"a": 0, "b": 0, "c": 1}},
    {"id": "4", "judgments": {"a": 1, "b": 1, "c": 0}},
]


def _hand_count() -> dict[tuple[str, str], float]:
    """The agreement of each pair, counted here from ITEMS."""
    out = {}
    for a, b in combinations("abc", 2):
        same = [row["judgments"][a] == row["judgments"][b] for row in ITEMS]  # type: ignore[index]
        out[(a, b)] = sum(same) / len(same)
    return out


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / "judged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ITEMS), encoding="utf-8")
    return path


class TestCommandWalkthrough:
    """A command added as the walkthrough says runs as a table, JSON and CSV, and a bad input is one line, exit 2."""

    def test_table(self, agree_command: None, runner: CliRunner, data: Path) -> None:
        r = invoke(runner, "agree", data)
        assert r.exit_code == 0, r.output
        assert "judged: pairwise agreement" in r.stdout
        for (a, b), share in _hand_count().items():
            assert any(f"{a} & {b}" in line and f"{share:.3f}" in line for line in r.stdout.splitlines())

    def test_json_matches_a_count_by_hand(self, agree_command: None, runner: CliRunner, data: Path) -> None:
        r = invoke(runner, "agree", data, "-f", "json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert (doc["schema"], doc["command"], doc["dataset"]) == ("betaconform/1", "agree", "judged")
        assert {(p["a"], p["b"]): p["agreement"] for p in doc["pairs"]} == _hand_count()
        assert {p["items"] for p in doc["pairs"]} == {len(ITEMS)}

    def test_csv_written_into_the_data_folder_is_not_read_back(self, agree_command: None, runner: CliRunner,
                                                                 data: Path) -> None:
        """The CSV header registered (formats.OutputTable): the report written beside the data is skipped when the folder is
        read again (the walkthrough's step 2), and reading the folder gives the file's numbers."""
        out = data.parent / "agree.csv"
        assert invoke(runner, "agree", data, "-o", out).exit_code == 0
        rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
        assert {(r["a"], r["b"]): float(r["agreement"]) for r in rows} == _hand_count()
        again = invoke(runner, "agree", data.parent, "-f", "csv")
        assert again.exit_code == 0, again.output
        assert list(csv.DictReader(io.StringIO(again.stdout))) == rows

    def test_bad_input_is_one_line(self, agree_command: None, runner: CliRunner, data: Path, tmp_path: Path) -> None:
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"id": "1", "judgments": {"a": 1}}\n{"id": "2", "judgments": "yes"}\n', encoding="utf-8")
        r = invoke(runner, "agree", bad)
        assert r.exit_code == 2 and r.stdout == ""
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
        assert f"{bad}:2: field 'judgments'" in r.stderr  # the file, the line and the field

    def test_api_check_names_the_option(self, agree_command: None, runner: CliRunner, data: Path) -> None:
        """The api's ParameterError names `min_items`; the CLI shows the option that sets it."""
        r = invoke(runner, "agree", data, "--min-items", "0")
        assert r.exit_code == 2 and r.stderr == "error: --min-items must be at least 1; got 0\n"

    def test_help_lists_the_shared_groups(self, agree_command: None, runner: CliRunner) -> None:
        r = invoke(runner, "agree", "--help")
        assert r.exit_code == 0
        for flag in ("--judgments-field", "--from", "--format", "--output", "--min-items"):
            assert flag in r.stdout


class TestAppLeftAsItWas:
    """The fixture leaves the app, `api` and the CSV headers as they were."""

    def test_left_as_it_was(self, runner: CliRunner, data: Path) -> None:
        from betaconform_cli.cli import app

        commands, headers = list(app.registered_commands), formats.output_tables()
        with agree_added():
            assert invoke(runner, "agree", data).exit_code == 0
            assert len(app.registered_commands) == len(commands) + 1
        assert app.registered_commands == commands and formats.output_tables() == headers and not hasattr(api, "agree")
        r = invoke(runner, "agree", data)
        assert r.exit_code == 2 and "No such command 'agree'" in r.stderr
