"""A table as a JSON list of records (betaconform_cli/inputs/json_records.py; docs/FORMATS.md#json_records): what
pandas' `df.to_json(orient="records")` writes (tests/fixtures/json_records/, scripts/fixtures/make_json_records.py)
reads as the CSV pandas writes of the same rows -- the same doctor document: everything fit reads (histogram, vote
splits, classes, roles, judges) -- and its histogram is the one
counted by hand from the script's verdicts. Bad records are refused naming the record (from 1) and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from betaconform_cli.formats import claimant, kind_by_content

from .conftest import invoke
from .test_inputs_trace_stores import doctor

DIR = Path(__file__).resolve().parent / "fixtures" / "json_records"
# counted from make_json_records.py's GOLD and SAYS by hand: q5 has two verdicts (one right); of the six items with
# three, q1 and q2 have one right, q6 two, q0, q3 and q4 three; q7 has no gold
HISTOGRAM = {"2": [0, 1, 0], "3": [0, 2, 1, 3]}


@pytest.mark.parametrize("shape", ["long", "wide"])
def test_records_read_as_the_csv_of_the_same_rows(shape: str) -> None:
    (got,), (want,) = doctor(DIR / f"{shape}.json"), doctor(DIR / f"{shape}.csv")
    assert got["histogram"] == HISTOGRAM and (got["items"], got["unlabeled_items"]) == (7, 1)
    assert got.pop("format") == f"{shape} table (json)" and want.pop("format") == f"{shape} table (csv)"
    assert {k: v for k, v in got.items() if k != "source"} == {k: v for k, v in want.items() if k != "source"}


def test_from_long_and_a_wrapped_list(tmp_path: Path) -> None:
    (d,) = doctor(DIR / "long.json", "--from", "long")
    assert d["histogram"] == HISTOGRAM
    wrapped = tmp_path / "api.json"  # an API's response: the records under "data"
    wrapped.write_text(json.dumps({"data": json.loads((DIR / "wide.json").read_text()), "next": None}))
    assert doctor(wrapped)[0]["histogram"] == HISTOGRAM


@pytest.mark.parametrize(("records", "message"), [
    ([{"item_id": "a", "judge": "x", "verdict": 1, "gold": 1}, {"item_id": "b", "judge": "x", "verdict": [1], "gold": 1}],
     "record 2: field 'verdict': must be one value"),
    ([{"item_id": "a", "judge": "x", "verdict": 1, "gold": 1}, 5], "record 2: each record must be an object"),
    ([{"item_id": "a", "judge": "x", "correct": 1}, {"item_id": "b", "judge": "x", "correct": 1},
      {"item_id": "c", "judge": "x", "correct": "maybe"}], "record 3: field 'correct': must be 1/0"),
    ([{"item_id": "a", "judge": "x", "verdict": 1, "gold": 1}, {"item_id": "a", "judge": "x", "verdict": 0, "gold": 1}],
     "record 2: item 'a' and judge 'x' appear again (first at record 1)"),
])
def test_a_bad_record_is_named(tmp_path: Path, records: list[object], message: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(records))
    res = invoke(CliRunner(), "doctor", path)
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert res.output.startswith(f"error: {path}: {message}"), res.output


def test_trace_store_lists_keep_their_reader_and_stdin_is_sniffed() -> None:
    braintrust = json.loads((DIR.parent / "braintrust" / "experiment.json").read_text())
    assert claimant("json", braintrust[0]) == "braintrust"  # asked before json_records: every export keeps its own
    assert claimant("json", {"item_id": "q0", "judge": "a", "verdict": "pass"}) == "json_records"
    assert claimant("json", {"item_id": "q0", "judge": {"name": "a"}}) is None  # not flat: no table's row
    assert claimant("json", {"foo": 1}) is None
    assert kind_by_content(b' [\n {"item_id": 1}]') == "json" and kind_by_content(b"[]") == "json"
    assert kind_by_content(b"[openai:gpt-4o] prompt,Status,Score\n") == "csv"  # promptfoo's CSV header is not JSON


def test_skip_invalid_skips_a_record_that_is_no_row(tmp_path: Path) -> None:
    """--skip-invalid: a record that is not an object, or holds a list where a cell is, is skipped and counted like
    a bad row of a table (before, both stopped the read); the records after it keep their numbers."""
    rows = json.loads((DIR / "long.json").read_text())
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([rows[0], 7, {**rows[1], "verdict": ["x"]}, *rows[1:]]))
    (got,) = doctor(path, "--skip-invalid")
    assert got["histogram"] == HISTOGRAM
    assert got["skipped"] == [{"reason": "not a JSON object", "count": 1, "first": 2},
                              {"reason": 'field \'verdict\': must be one value (text, a number or a boolean), got ["x"]',
                               "count": 1, "first": 3}]
    path.write_text(json.dumps([rows[0], 7, rows[0]]))  # record 3 repeats record 1: the numbers are the records'
    res = invoke(CliRunner(), "doctor", path, "--skip-invalid")
    assert res.exit_code == 2 and "record 3: item " in res.output and "(first at record 1)" in res.output
