"""Trace stores' exports (issue 29, item 2; docs/FORMATS.md): each fixture under tests/fixtures/<format>/ is read
as its format (by content, with no --from), `doctor` shows its judges, its gold and its labeled and unlabeled
items, and `fit` gives exactly the document of canonical JSON Lines holding the same items, written here by hand
from the plan that made the fixture (each fixture's script or README states the plan)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from .conftest import invoke

FIXTURES = Path(__file__).resolve().parent / "fixtures"
Y, N = "yes", "no"

# MLflow (scripts/fixtures/make_mlflow_fixture.py): question "correctness", trace n -> judges' verdicts, human gold.
# Trace 6: claude-3.5's feedback is an error (no verdict); trace 9: a human overrode llama-3's "no" with "yes" (the
# judge's verdict stays "no", the human's "yes" is the gold); traces 10 and 11 have no human label (unlabeled).
MLFLOW_CORRECTNESS = {
    1: ((Y, Y, Y), Y), 2: ((N, Y, N), N), 3: ((Y, Y, N), Y), 4: ((Y, N, N), Y), 5: ((N, N, N), N),
    6: ((Y, None, Y), N), 7: ((Y, Y, Y), Y), 8: ((N, Y, Y), Y), 9: ((Y, Y, N), Y), 10: ((N, N, Y), None),
    11: ((Y, Y, Y), None),
}
MLFLOW_SAFE = {1: ((True, True), True), 2: ((True, False), False), 3: ((False, False), False), 4: ((True, True), None),
               5: ((True, True), True)}


def canonical(plan: dict[Any, tuple[tuple[Any, ...], Any]], judges: tuple[str, ...]) -> str:
    """The same items as this tool's own JSON Lines: verdicts by judge, the gold as `label` (absent: unlabeled)."""
    lines = []
    for item, (verdicts, gold) in plan.items():
        row: dict[str, Any] = {"id": str(item), "verdicts": dict(zip(judges, verdicts))}
        if gold is not None:
            row["label"] = gold
        lines.append(json.dumps(row))
    return "\n".join(lines) + "\n"


def _fit(path: Path, *args: str) -> list[dict[str, Any]]:
    res = invoke(CliRunner(), "fit", path, "-f", "json", "--seed", "1", *args)
    assert res.exit_code == 0, res.output
    text = res.stdout.strip()
    docs = [json.loads(line) for line in text.splitlines()] if text.startswith('{"') else [json.loads(text)]
    for d in docs:
        d.pop("source")
        d.pop("dataset")
    return docs


def same_fit(fixture: Path, plan: dict[Any, tuple[tuple[Any, ...], Any]], judges: tuple[str, ...], tmp_path: Path,
             *args: str) -> None:
    canon = tmp_path / "canonical.jsonl"
    canon.write_text(canonical(plan, judges), encoding="utf-8")
    got, want = _fit(fixture, *args), _fit(canon, *args)
    assert len(got) == 1 and got == want


def doctor(path: Path, *args: str) -> list[dict[str, Any]]:
    res = invoke(CliRunner(), "doctor", path, "-f", "json", *args)
    assert res.exit_code == 0, res.output
    text = res.stdout.strip()
    return [json.loads(line) for line in text.splitlines()] if text.startswith('{"') else [json.loads(text)]


class TestMLflow:
    JUDGES = ("gpt-4o", "claude-3.5", "llama-3")

    @pytest.mark.parametrize("name", ["traces.jsonl", "traces.parquet", "trace_dicts.jsonl"])
    def test_doctor(self, name: str) -> None:
        (d,) = doctor(FIXTURES / "mlflow" / name)
        assert d["format"] == "mlflow" and (d["items"], d["unlabeled_items"]) == (9, 2)
        assert [(j["name"], j["verdicts"]) for j in d["judges"]] == [("gpt-4o", 9), ("claude-3.5", 8), ("llama-3", 9)]
        assert d["roles"]["gold"] == "source_type HUMAN" and d["roles"]["item"] == "trace_id"
        assert d["notes"] == ["left out: 11 CODE assessment(s)"]

    @pytest.mark.parametrize("name", ["traces.jsonl", "traces.parquet", "trace_dicts.jsonl"])
    def test_fit_is_the_canonical_fit(self, name: str, tmp_path: Path) -> None:
        plan = {f"t{n}": v for n, v in MLFLOW_CORRECTNESS.items()}
        same_fit(FIXTURES / "mlflow" / name, plan, self.JUDGES, tmp_path)

    def test_boolean_values(self, tmp_path: Path) -> None:
        (d,) = doctor(FIXTURES / "mlflow" / "safety.jsonl")
        assert (d["items"], d["unlabeled_items"], d["classes"]) == (4, 1, ["false", "true"])
        same_fit(FIXTURES / "mlflow" / "safety.jsonl", MLFLOW_SAFE, ("gpt-4o", "claude-3.5"), tmp_path)

    def test_labels_file_joins_on_the_trace_id(self, tmp_path: Path) -> None:
        """--labels gives the unlabeled traces their gold (joined on trace_id); a label that contradicts the human's
        is an error naming both places."""
        ids = [json.loads(line)["trace_id"] for line in (FIXTURES / "mlflow" / "traces.jsonl").read_text().splitlines()]
        labels = tmp_path / "gold.csv"
        labels.write_text(f"id,label\n{ids[9]},no\n{ids[10]},yes\n", encoding="utf-8")
        (d,) = doctor(FIXTURES / "mlflow" / "traces.jsonl", "--labels", str(labels))
        assert (d["items"], d["unlabeled_items"]) == (11, 0)
        assert d["notes"][-1] == f"labels file {labels}: 2 of its 2 labels matched an item here"
        plan = {f"t{n}": (v[0], v[1] if v[1] is not None else {10: N, 11: Y}[n]) for n, v in MLFLOW_CORRECTNESS.items()}
        canon = tmp_path / "canonical.jsonl"
        canon.write_text(canonical(plan, self.JUDGES), encoding="utf-8")
        assert _fit(FIXTURES / "mlflow" / "traces.jsonl", "--labels", str(labels)) == _fit(canon)
        labels.write_text(f"id,label\n{ids[0]},no\n", encoding="utf-8")
        res = invoke(CliRunner(), "fit", FIXTURES / "mlflow" / "traces.jsonl", "--labels", labels)
        assert res.exit_code == 2 and "contradicts the labels file" in res.stderr and res.stderr.count("\n") == 1


def test_bad_value_names_file_record_and_field(tmp_path: Path) -> None:
    """One value rule (item 5): a verdict that is a list is an error naming the file, the record and the field."""
    line = json.loads((FIXTURES / "mlflow" / "traces.jsonl").read_text().splitlines()[0])
    line["assessments"][1]["feedback"]["value"] = ["yes", "no"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n", encoding="utf-8")
    res = invoke(CliRunner(), "fit", bad)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert f"{bad}: record 1: field 'assessments[1].feedback.value'" in res.stderr


class TestLangfuse:
    """scores.json: two questions (two datasets); t6/o6 is an observation's score; a CORRECTION score is left out."""

    CORRECTNESS = {"t1": ((Y, Y, N), Y), "t2": ((N, N, N), N), "t3": ((Y, N, Y), N), "t4": ((Y, Y, Y), Y),
                   "t5": ((N, Y, Y), None), "t6/o6": ((Y, Y, N), Y)}
    HELPFUL = {"t1": ((1, 1), 1), "t2": ((0, 1), 0), "t3": ((1, 1), 0), "t4": ((1, 0), None)}  # BOOLEAN: value 1/0

    def test_doctor(self) -> None:
        a, b = doctor(FIXTURES / "langfuse" / "scores.json")
        assert (a["dataset"], a["format"], a["items"], a["unlabeled_items"]) == ("correctness", "langfuse", 5, 1)
        assert [j["name"] for j in a["judges"]] == ["gpt-4o", "claude-3.5", "llama-3"]  # EVAL's metadata.model, API's metadata.judge
        assert (b["dataset"], b["items"], b["unlabeled_items"]) == ("helpful", 3, 1)
        assert a["roles"]["gold"] == "source ANNOTATION" and a["notes"] == ["left out: 1 CORRECTION score(s)"]

    def test_fit_is_the_canonical_fit(self, tmp_path: Path) -> None:
        got = _fit(FIXTURES / "langfuse" / "scores.json")
        for doc, plan, judges in zip(got, (self.CORRECTNESS, self.HELPFUL), (("gpt-4o", "claude-3.5", "llama-3"), ("gpt-4o", "claude-3.5"))):
            canon = tmp_path / "canonical.jsonl"
            canon.write_text(canonical(plan, judges), encoding="utf-8")
            assert [doc] == _fit(canon)
        assert len(got) == 2


class TestLangSmith:
    """Feedback records, and Runs carrying them: r5's gold is a human's correction of gpt-4o's verdict."""

    PLAN = {"r1": ((1, 1, 0), 1), "r2": ((0, 1, 0), 0), "r3": ((1, 1, 1), 1), "r4": ((1, 0, 0), 0), "r5": ((0, 0, 1), 1),
            "r6": ((1, 1, 1), None)}

    @pytest.mark.parametrize("name", ["feedback.jsonl", "runs.jsonl"])
    def test_doctor_and_fit(self, name: str, tmp_path: Path) -> None:
        (d,) = doctor(FIXTURES / "langsmith" / name)
        assert (d["format"], d["items"], d["unlabeled_items"]) == ("langsmith", 5, 1)
        assert [j["name"] for j in d["judges"]] == ["gpt-4o", "claude-3.5", "llama-3"]
        assert d["roles"]["gold"] == "feedback_source.type api/app, or correction"
        same_fit(FIXTURES / "langsmith" / name, self.PLAN, ("gpt-4o", "claude-3.5", "llama-3"), tmp_path)


class TestPhoenix:
    PLAN = {"s1": (("correct", "correct"), "correct"), "s2": (("incorrect", "correct"), "incorrect"),
            "s3": (("correct", "incorrect"), "correct"), "s4": (("incorrect", "incorrect"), "incorrect"),
            "s5": (("correct", "correct"), None)}

    @pytest.mark.parametrize("name", ["span_annotations.json", "annotations_frame.parquet"])
    def test_doctor_and_fit(self, name: str, tmp_path: Path) -> None:
        """The REST response, and the client's data frame of it (flat `result.label`, `annotation_name`) as Parquet."""
        (d,) = doctor(FIXTURES / "phoenix" / name)
        assert (d["format"], d["items"], d["unlabeled_items"]) == ("phoenix", 4, 1)
        assert [j["name"] for j in d["judges"]] == ["gpt-4o", "claude-3.5"] and d["roles"]["gold"] == "annotator_kind HUMAN"
        assert d["notes"] == ["left out: 5 CODE annotation(s)"]
        same_fit(FIXTURES / "phoenix" / name, self.PLAN, ("gpt-4o", "claude-3.5"), tmp_path)


class TestBraintrust:
    PLAN = {"c1": ((1, 1), 1), "c2": ((0, 1), 0), "c3": ((1, 0), 1), "c4": ((0, 0), 0), "c5": ((1, 1), None)}

    def test_doctor_and_fit(self, tmp_path: Path) -> None:
        """Root rows are items (the scorers' child spans are not); the "Human review" score is the gold."""
        (d,) = doctor(FIXTURES / "braintrust" / "experiment.json")
        assert (d["format"], d["items"], d["unlabeled_items"]) == ("braintrust", 4, 1)
        assert [j["name"] for j in d["judges"]] == ["Factuality", "ClosedQA"] and d["roles"]["gold"] == "scores.Human review"
        same_fit(FIXTURES / "braintrust" / "experiment.json", self.PLAN, ("Factuality", "ClosedQA"), tmp_path)

    def test_label_field_names_the_gold(self) -> None:
        """--label-field picks the gold: with scores.Factuality, Factuality is the gold of every case and the other
        score keys (the human's among them) are the judges."""
        (d,) = doctor(FIXTURES / "braintrust" / "experiment.json", "--label-field", "scores.Factuality")
        assert (d["items"], d["unlabeled_items"], d["roles"]["gold"]) == (5, 0, "scores.Factuality")
        assert [(j["name"], j["verdicts"]) for j in d["judges"]] == [("ClosedQA", 5), ("Human review", 4)]


def test_known_by_content_in_a_folder_by_stdin_and_gzipped(tmp_path: Path) -> None:
    """Every fixture in one folder is read as its own format; a trace store's JSON Lines and Parquet piped to
    standard input, and its JSON Lines gzipped, are known by their first record too."""
    import gzip
    import shutil

    from betaconform_cli.cli import app
    from betaconform_cli.inputs import read_inputs

    for fmt in ("mlflow", "langfuse", "langsmith", "phoenix", "braintrust"):
        for f in (FIXTURES / fmt).iterdir():
            shutil.copy(f, tmp_path / f.name)
    got = {(d.name, d.shape) for d in read_inputs([str(tmp_path)])}
    assert got == {("traces", "mlflow"), ("trace_dicts", "mlflow"), ("safety", "mlflow"), ("correctness", "langfuse"),
                   ("helpful", "langfuse"), ("feedback", "langsmith"), ("runs", "langsmith"),
                   ("span_annotations", "phoenix"), ("annotations_frame", "phoenix"), ("experiment", "braintrust")}
    runner = CliRunner()
    for name in ("traces.jsonl", "traces.parquet"):
        res = runner.invoke(app, ["doctor", "-", "-f", "json"], input=(FIXTURES / "mlflow" / name).read_bytes())
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["format"] == "mlflow"
    packed = tmp_path / "packed.jsonl.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "langsmith" / "feedback.jsonl").read_bytes()))
    (d,) = doctor(packed)
    assert (d["format"], d["items"]) == ("langsmith", 5)


def test_a_judge_twice_on_an_item_says_how_to_name_judges(tmp_path: Path) -> None:
    """LangSmith feedback from model evaluators that name no model are one judge, "model", twice on a run: an
    error naming the record and field and how to name judges; --duplicates first keeps the first."""
    rows = [json.loads(line) for line in (FIXTURES / "langsmith" / "feedback.jsonl").read_text().splitlines()]
    for r in rows:
        r["feedback_source"]["metadata"] = {}
    bad = tmp_path / "anonymous.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = invoke(CliRunner(), "fit", bad)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert f"{bad}: record 2: field 'score'" in res.stderr and "feedback_source.metadata.judge" in res.stderr
    (d,) = doctor(bad, "--duplicates", "first")
    assert [j["name"] for j in d["judges"]] == ["model"] and (d["items"], d["unlabeled_items"]) == (5, 1)
