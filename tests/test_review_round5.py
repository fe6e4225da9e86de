"""Review of round 5's merged changes (helper V2): each test failed before its fix (docs/REVIEW_ROUND5.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def test_phoenix_metadata_whose_python_literal_cannot_be_built_is_no_metadata() -> None:
    """A CSV cell "{[1]: 2}" parses as Python but a list is no dict key: ast.literal_eval raised TypeError, which
    escaped the reader as an internal error (exit 70). It is text that is no metadata, as any other such text."""
    from betaconform_cli.inputs.phoenix import _metadata

    for cell in ("{[1]: 2}", "{'a': {{}: 1}}"):
        assert _metadata({"span_id": "s1", "metadata": cell})["metadata"] is None
    assert _metadata({"metadata": "{'model': 'gpt-4o'}"})["metadata"] == {"model": "gpt-4o"}  # pandas' to_csv, read


def test_lm_eval_runs_folder_beside_this_tool_s_own_output(tmp_path: Path) -> None:
    """`fit runs/ -o runs/summary.csv` wrote a report into lm-eval's --output_path; the next `fit runs/` then found a
    data file in the folder itself, did not take it for a folder of runs, and failed: "directory holds only outputs
    of betaconform". This tool's outputs are no data there, as in any folder (paths.tool_output)."""
    import shutil

    from betaconform_cli.inputs.paths import expand_paths, runs_folder

    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "tests" / "fixtures" / "lm_eval_runs" / "out", runs)
    want = runs_folder(runs)
    assert want is not None and len(want) == 4
    (runs / "summary.csv").write_text("dataset,k,estimate,low,high\njudge_mc,1,0.1,0.0,0.2\n")  # fit's CSV report
    (runs / "judge-a" / "fit.json").write_text('{"schema": "betaconform/fit/1", "datasets": []}')
    assert runs_folder(runs) == want and expand_paths([str(runs)]) == [runs]


def test_lm_eval_runs_read_by_a_field_with_a_blank_line(tmp_path: Path) -> None:
    """A folder of lm-eval runs read with --by: each file's lines were kept under line number + the count of lines
    kept before, so a blank line in one run's file (its numbers skip one) made the next file's first line take the
    last one's key: an item then read the other item's field, silently ("What is 2 + 1?" held 2 items, "2 + 10?" none).
    Every question is its own slice, one item each, blank line or not."""
    import shutil

    from betaconform_cli.inputs import InputOptions
    from betaconform_cli.inputs.dispatch import read_path

    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "tests" / "fixtures" / "lm_eval_runs" / "out", runs)
    first = next((runs / "judge-a").glob("samples_judge_mc_*.jsonl"))
    lines = first.read_text().splitlines(keepends=True)
    first.write_text("".join(lines[:2]) + "\n" + "".join(lines[2:]))
    got = [d.table.items for d in read_path(runs, InputOptions(by="doc.question")) if d.name.startswith("judge_mc[")]
    assert got == [1] * 10


def test_a_json_list_of_items_read_with_from_json_records(tmp_path: Path) -> None:
    """A .json list of judgment items is read as the JSON Lines of its records; with `--from json_records` (the
    format that reads it) the copy was read as a JSON document again: "malformed JSON (... at character 157)", a
    place in the temporary copy, for a valid file. Forced or not, the same datasets."""
    from betaconform_cli.inputs import InputOptions
    from betaconform_cli.inputs.dispatch import read_path

    lines = (ROOT / "sample_data" / "qa_judges.jsonl").read_text().splitlines()[:12]
    path = tmp_path / "items.json"
    path.write_text(json.dumps([json.loads(line) for line in lines]))
    auto = read_path(path)
    forced = read_path(path, InputOptions(source_format="json_records"))
    assert [(d.name, [c.tolist() for c in d.table.cells()]) for d in forced] == \
        [(d.name, [c.tolist() for c in d.table.cells()]) for d in auto]
    assert auto[0].table.items == 12


def test_a_labels_note_is_said_once_for_all_slices(tmp_path: Path, runner: Any) -> None:
    """Labels of a --labels file that match no item are said by every command (hostile round 4); the note is the
    input's, read once, yet with --by it was said once per slice (the same line N times). Said once."""
    from .conftest import invoke

    lines, labels = [], ["id,label"]
    for i in range(8):
        lines.append(json.dumps({"id": f"q{i}", "group": "ab"[i % 2], "verdicts": {"x": i % 2, "y": i % 2, "z": 1}}))
        labels.append(f"q{i},{i % 2}")
    (tmp_path / "items.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "labels.csv").write_text("\n".join([*labels, "extra,1"]) + "\n")
    res = invoke(runner, "fit", tmp_path / "items.jsonl", "--labels", tmp_path / "labels.csv", "--by", "group", "-f", "csv")
    assert res.exit_code == 0 and res.stderr.count("1 matched no item here") == 1
