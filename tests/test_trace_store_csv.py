"""Trace stores' CSV exports and --skip-invalid (issue 29, items 2 and 5; docs/FORMATS.md): Langfuse's and Braintrust's
UI exports as CSV (tests/fixtures/{langfuse,braintrust}/*.csv, built by scripts/fixtures/make_csv_exports.py from
the published export columns) are read by the same modules as their JSON exports, known by their header, and give
the same datasets and the same fit as the canonical JSON Lines of the plan (test_inputs_trace_stores.py states it);
a bad record of a trace store's export is skipped and counted with --skip-invalid, as a bad line of JSON Lines is."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from . import test_inputs_trace_stores as ts
from .conftest import invoke
from .test_inputs_trace_stores import FIXTURES, _fit, canonical, doctor, same_fit


def test_langfuse_csv_is_the_json_export() -> None:
    a, b = doctor(FIXTURES / "langfuse" / "scores.csv")
    assert (a["dataset"], a["format"], a["items"], a["unlabeled_items"]) == ("correctness", "langfuse", 5, 1)
    assert [j["name"] for j in a["judges"]] == ["gpt-4o", "claude-3.5", "llama-3"]  # metadata's JSON text, decoded
    assert (b["dataset"], b["items"], b["unlabeled_items"]) == ("helpful", 3, 1)
    assert a["roles"]["gold"] == "source ANNOTATION" and a["notes"] == ["left out: 1 CORRECTION score(s)"]


CHEAP = ("--ks", "3", "--components", "1")  # the same items give the same document at any settings: cheap ones
KEYS = ("items", "unlabeled_items", "histogram", "vote_splits", "judges")


def test_langfuse_csv_fit_is_the_canonical_fit(tmp_path: Path) -> None:
    got = _fit(FIXTURES / "langfuse" / "scores.csv", *CHEAP)
    read = doctor(FIXTURES / "langfuse" / "scores.csv")
    plans = (ts.TestLangfuse.CORRECTNESS, ("gpt-4o", "claude-3.5", "llama-3")), (ts.TestLangfuse.HELPFUL, ("gpt-4o", "claude-3.5"))
    assert len(got) == len(read) == 2
    for i, (doc, (plan, judges)) in enumerate(zip(got, plans)):
        canon = tmp_path / "canonical.jsonl"
        canon.write_text(canonical(plan, judges), encoding="utf-8")
        (want,) = doctor(canon)
        assert {k: read[i][k] for k in KEYS} == {k: want[k] for k in KEYS}
        if i == 0:
            assert [doc] == _fit(canon, *CHEAP)


def test_braintrust_csv_is_the_json_export(tmp_path: Path) -> None:
    (d,) = doctor(FIXTURES / "braintrust" / "experiment.csv")
    assert (d["format"], d["items"], d["unlabeled_items"]) == ("braintrust", 4, 1)
    assert [j["name"] for j in d["judges"]] == ["Factuality", "ClosedQA"] and d["roles"]["gold"] == "scores.Human review"
    same_fit(FIXTURES / "braintrust" / "experiment.csv", ts.TestBraintrust.PLAN, ("Factuality", "ClosedQA"), tmp_path, *CHEAP)


def test_braintrust_csv_with_score_columns(tmp_path: Path) -> None:
    """Scores flattened into one column each (`scores.Factuality`, ...), read with --from braintrust."""
    rows = json.loads((FIXTURES / "braintrust" / "experiment.json").read_text(encoding="utf-8"))
    names = ("Factuality", "ClosedQA", "Human review")
    path = tmp_path / "flat.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(("id", "root_span_id", "is_root", "input", *(f"scores.{n}" for n in names)))
        for r in rows:
            out.writerow((r["id"], r["root_span_id"], str(r["is_root"]).lower(), json.dumps(r["input"]),
                          *("" if r["scores"].get(n) is None else r["scores"][n] for n in names)))
    (d,) = doctor(path, "--from", "braintrust")
    canon = tmp_path / "canonical.jsonl"
    canon.write_text(canonical(ts.TestBraintrust.PLAN, ("Factuality", "ClosedQA")), encoding="utf-8")
    (want,) = doctor(canon)
    assert (d["items"], d["unlabeled_items"]) == (4, 1) and {k: d[k] for k in KEYS} == {k: want[k] for k in KEYS}


def test_skip_invalid_counts_bad_records(tmp_path: Path) -> None:
    """A line that is not JSON, a value that is a list, a source Langfuse has not: each an error naming the record
    (and field), or with --skip-invalid skipped and counted with its first message; the rest read as before."""
    scores = json.loads((FIXTURES / "langfuse" / "scores.json").read_text(encoding="utf-8"))["data"]
    lines = [json.dumps(s) for s in scores]
    bad_value, bad_source = dict(scores[3], stringValue=["yes"]), dict(scores[4], source="HUMAN")
    lines[2:2] = ["{not json"]
    lines[5:5] = [json.dumps(bad_value)]
    lines[7:7] = [json.dumps(bad_source)]
    path = tmp_path / "scores.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = invoke(CliRunner(), "doctor", path)
    assert res.exit_code == 2 and f"{path}:3: malformed JSON" in res.output and "Traceback" not in res.output
    a, _ = doctor(path, "--skip-invalid")
    assert (a["items"], a["unlabeled_items"]) == (5, 1)
    assert a["skipped"] == [
        {"reason": "malformed JSON", "count": 1, "first": 3},
        {"reason": "field 'source': must be one of EVAL, API, ANNOTATION, got 'HUMAN'", "count": 1, "first": 8},
        {"reason": "field 'stringValue': a human label must be one value (text, a number or a boolean), got [\"yes\"]",
         "count": 1, "first": 6}]
    without = invoke(CliRunner(), "doctor", path, "--skip-invalid", "--from", "langfuse")
    assert without.exit_code == 0


def test_skip_invalid_counts_a_malformed_csv_row(tmp_path: Path) -> None:
    lines = (FIXTURES / "langfuse" / "scores.csv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "scores.csv"
    path.write_text("\n".join([*lines[:3], "x,y", *lines[3:]]) + "\n", encoding="utf-8")
    res = invoke(CliRunner(), "doctor", path)
    assert res.exit_code == 2 and f"{path}: row 3: 2 cells under a header of 18 columns" in res.output
    a, _ = doctor(path, "--skip-invalid")
    assert a["items"] == 5 and a["skipped"] == [
        {"reason": "malformed CSV row (2 cells under a header of 18 columns)", "count": 1, "first": 3}]


def test_langfuse_csv_timestamp_is_read_inside_its_json_quotes() -> None:
    """Langfuse's CSV writer quotes every cell and JSON-stringifies the score's Date (stringify.ts `stringifyForCsv`):
    the fixture's header and cells are quoted so, and its timestamp cell holds "...Z" in its own quotes; a time or
    cluster read from it is the ISO text, as in the JSON export (the CSV's Date carries milliseconds)."""
    from betaconform_cli.inputs import read_inputs
    from betaconform_cli.inputs.options import InputOptions, Keep, RecordFields

    raw = (FIXTURES / "langfuse" / "scores.csv").read_text(encoding="utf-8").splitlines()
    assert raw[0].startswith('"id","traceId",') and '"""2026-11-27T09:00:00.000Z"""' in raw[1]
    opts = InputOptions(record=RecordFields(cluster_field="timestamp"))
    got = [sorted(set(d.votes.clusters or ())) for d in read_inputs([str(FIXTURES / "langfuse" / "scores.csv")], opts, Keep.ITEMS)]
    assert got == [["2026-11-27T09:00:00.000Z"]] * 2


def test_braintrust_btql_json_and_parquet_are_the_json_export(tmp_path: Path) -> None:
    """Braintrust's published machine exports are the SQL API's (`POST /btql`, `fmt` json, jsonl or parquet): the
    json response holds the rows under `data`, and a Parquet file of the same rows keeps objects as structs (scores,
    input) and ids as whatever type the writer chose (DuckDB types them UUID here). Both read as the JSON export."""
    import duckdb

    rows = json.loads((FIXTURES / "braintrust" / "experiment.json").read_text(encoding="utf-8"))
    response = tmp_path / "btql.json"
    response.write_text(json.dumps({"data": rows, "schema": {"type": "array"}}), encoding="utf-8")
    lines = tmp_path / "rows.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    parquet = tmp_path / "btql.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_json_auto('{lines}')) TO '{parquet}' (FORMAT parquet)")
    assert "STRUCT" in str(duckdb.sql(f"DESCRIBE SELECT scores FROM '{parquet}'").fetchall())
    for path in (response, parquet):
        (d,) = doctor(path)
        assert (d["format"], d["items"], d["unlabeled_items"]) == ("braintrust", 4, 1)
        assert [j["name"] for j in d["judges"]] == ["Factuality", "ClosedQA"] and d["roles"]["gold"] == "scores.Human review"
    same_fit(parquet, ts.TestBraintrust.PLAN, ("Factuality", "ClosedQA"), tmp_path, *CHEAP)


def test_braintrust_bt_sync_pull_part_is_the_json_export(tmp_path: Path) -> None:
    """Braintrust's CLI, `bt sync pull experiment:<id>` (github.com/braintrustdata/bt, src/sync.rs), writes the SQL
    API's span rows (`select: * | from: experiment(...) spans | sort: _pagination_key DESC`), one a line, into
    `part-000001.jsonl`: children before their root, `_pagination_key` on each row, and an LLM call's span (no
    scores, null fields) first. It reads as the JSON export: the same doctor document (items, judges, gold, histogram, vote splits)."""
    rows = json.loads((FIXTURES / "braintrust" / "experiment.json").read_text(encoding="utf-8"))[::-1]
    root = rows[-1]
    llm = {"id": "llm-1", "span_id": "llm-1", "root_span_id": root["root_span_id"], "span_parents": [root["span_id"]],
           "is_root": False, "input": [{"role": "user", "content": "q"}], "output": [{"role": "assistant", "content": "a"}],
           "expected": None, "scores": None, "metadata": None, "metrics": {"prompt_tokens": 3},
           "span_attributes": {"name": "Chat Completion", "type": "llm"}}
    part = tmp_path / "part-000001.jsonl"
    part.write_text("".join(json.dumps({**r, "_pagination_key": f"p{len(rows) - i:04d}"}) + "\n"
                            for i, r in enumerate([llm, *rows])), encoding="utf-8")
    (d,) = doctor(part)
    (want,) = doctor(FIXTURES / "braintrust" / "experiment.json")
    assert (d["format"], d["items"], d["unlabeled_items"]) == ("braintrust", 4, 1)
    # everything fit reads (histogram, vote splits, classes, roles, judges), as the JSON export gives it
    assert {k: v for k, v in d.items() if k not in ("dataset", "source")} == {
        k: v for k, v in want.items() if k not in ("dataset", "source")}


def test_braintrust_bt_sync_pull_folder_of_parts_is_one_experiment(tmp_path: Path) -> None:
    """`bt sync pull` splits an experiment into part-000001.jsonl, part-000002.jsonl, ... in one folder: the folder
    is read as ONE dataset (the folder's name), doctor says which parts it joined, and the experiment is the JSON
    export's (a root row in one part, its children in the other: the parts are joined before reading). An error
    names the part and the part's own line."""
    rows = json.loads((FIXTURES / "braintrust" / "experiment.json").read_text(encoding="utf-8"))[::-1]
    lines = [json.dumps({**r, "_pagination_key": f"p{len(rows) - i:04d}"}) for i, r in enumerate(rows)]
    folder = tmp_path / "exp-1"
    folder.mkdir()
    (folder / "part-000001.jsonl").write_text("\n".join(lines[:7]) + "\n", encoding="utf-8")
    (folder / "part-000002.jsonl").write_text("\n".join(lines[7:]), encoding="utf-8")  # no last line end
    (d,) = doctor(folder)
    (want,) = doctor(FIXTURES / "braintrust" / "experiment.json")
    assert (d["dataset"], d["format"], d["items"], d["unlabeled_items"]) == ("exp-1", "braintrust", 4, 1)
    assert d.pop("notes")[0] == "2 part(s) of one export (part-000001.jsonl .. part-000002.jsonl) read as one dataset, the folder's"
    assert {k: v for k, v in d.items() if k not in ("dataset", "source")} == {
        k: v for k, v in want.items() if k not in ("dataset", "source", "notes")}
    with (folder / "part-000002.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('\n{"id": "x", "span_id": "x", "root_span_id": "x", "is_root": true, "scores": 5}\n')
    res = invoke(CliRunner(), "doctor", folder)
    assert res.exit_code == 2 and res.output.strip() == (f"error: {folder / 'part-000002.jsonl'}: record {len(lines) - 7 + 1}: "
                                                         "field 'scores': must be an object of scores")
