"""One bad input in a batch fails alone (issue 26): the others are analysed and reported as they are alone, the bad
one is an error row in every output and its one-line error on stderr, and the exit code is 2; one bad input
alone (or every input bad) is the single error line it always was."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import msgspec
import pytest

import betaconform_cli
from betaconform_cli.failed_inputs import InputFailure
from betaconform_cli.schemas import published

from .conftest import SAMPLE, invoke

SYSTEM = SAMPLE / "system_verdicts.jsonl"
QA = SAMPLE / "qa_judges.jsonl"
WHY = "field 'verdicts': must be a list or an object, got text"


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "verdicts": ["pass"], "label": "pass"}\n{"id": "y", "verdicts": "oops", "label": "pass"}\n')
    return path


def _docs(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _failure(doc: dict[str, object], command: str) -> InputFailure:
    """The document as the command's published schema types it (schemas.Published.type_for)."""
    kind = next(p for p in published() if command in p.commands).type_for(doc)
    assert kind is InputFailure
    return msgspec.convert(doc, InputFailure)


class TestScore:
    def test_the_good_file_as_alone_and_the_bad_one_as_an_error_row(self, runner, bad: Path) -> None:
        alone = invoke(runner, "score", SYSTEM, "-f", "json")
        both = invoke(runner, "score", SYSTEM, bad, "-f", "json")
        assert both.exit_code == 2
        assert both.stderr.splitlines()[-1] == f"error: {bad}:2: {WHY}"
        good, failed = _docs(both.stdout)
        assert good == json.loads(alone.stdout)
        f = _failure(failed, "score")
        assert (f.dataset, f.source, f.line, f.field, f.command) == ("bad", str(bad), 2, "verdicts", "score")

    def test_one_bad_file_alone_is_the_one_line_it_was(self, runner, bad: Path) -> None:
        res = invoke(runner, "score", bad, "-f", "json")
        assert (res.exit_code, res.stdout, res.stderr) == (2, "", f"error: {bad}:2: {WHY}\n")

    def test_a_failed_gate_and_a_bad_file_exit_2_and_say_both(self, runner, bad: Path, tmp_path: Path) -> None:
        junit = tmp_path / "junit.xml"
        res = invoke(runner, "score", SYSTEM, bad, "--min-score", "0.99", "--junit", junit)
        assert res.exit_code == 2
        assert "gate failed: system_verdicts" in res.stderr and f"error: {bad}:2:" in res.stderr
        xml = junit.read_text()
        assert xml.count("<failure") == 2 and 'name="bad: input"' in xml and 'type="input"' in xml

    def test_csv_and_a_json_file_carry_the_error_row(self, runner, bad: Path, tmp_path: Path) -> None:
        rows = list(csv.DictReader(io.StringIO(invoke(runner, "score", SYSTEM, bad, "-f", "csv").stdout)))
        assert [r["dataset"] for r in rows] == ["system_verdicts", "bad"]
        assert rows[0]["error"] == "" and rows[1]["error"] == f"{bad}:2: {WHY}" and rows[1]["estimate"] == ""
        out = tmp_path / "out.json"
        assert invoke(runner, "score", SYSTEM, bad, "-o", out).exit_code == 2
        assert [d.get("error") is not None for d in json.loads(out.read_text())] == [False, True]  # one JSON array


class TestOtherCommands:
    def test_fit_over_a_folder(self, runner, bad: Path, tmp_path: Path) -> None:
        folder = tmp_path / "runs"
        folder.mkdir()
        shutil.copy(QA, folder / "qa.jsonl")
        shutil.copy(bad, folder / "bad.jsonl")
        res = invoke(runner, "fit", folder, "-f", "json", "--ks", "1,3")
        assert res.exit_code == 2 and res.stderr.splitlines()[-1].startswith(f"error: {folder / 'bad.jsonl'}:2:")
        docs = _docs(res.stdout)
        assert [d["dataset"] for d in docs] == ["qa", "bad"] and _failure(docs[1], "fit").field == "verdicts"

    @pytest.mark.parametrize("command", ["doctor", "judges"])
    def test_doctor_and_judges(self, runner, bad: Path, command: str) -> None:
        res = invoke(runner, command, QA, bad, "-f", "json", *(["--ks", "3"] if command == "judges" else []))
        assert res.exit_code == 2 and f"error: {bad}:2: {WHY}" in res.stderr
        docs = _docs(res.stdout)
        assert docs[0]["dataset"] == "qa_judges" and _failure(docs[1], command).line == 2

    def test_a_missing_file_is_one_input_too(self, runner, tmp_path: Path) -> None:
        gone = tmp_path / "gone.jsonl"
        res = invoke(runner, "doctor", QA, gone, QA, "-f", "json")  # QA named twice is read once, as before
        assert res.exit_code == 2 and res.stderr.splitlines()[-1] == f"error: {gone}: no such file or directory"
        assert [d["dataset"] for d in _docs(res.stdout)] == ["qa_judges", "gone"]  # the failures after the good ones
        alone = invoke(runner, "doctor", gone)
        assert (alone.exit_code, alone.stderr) == (2, f"error: {gone}: no such file or directory\n")
        binary = tmp_path / "binary.jsonl"  # first: its format is sniffed before the read starts
        binary.write_bytes(b"hello\x00world\n")
        res = invoke(runner, "doctor", binary, QA, "-f", "json")
        assert res.exit_code == 2 and [d["dataset"] for d in _docs(res.stdout)] == ["qa_judges", "binary"]

    def test_a_check_failure_is_one_input_too(self, runner, tmp_path: Path) -> None:
        """Not only a line that cannot be read: a file the checks refuse (gold and verdicts share no class)."""
        other = tmp_path / "shout.jsonl"
        other.write_text("".join(json.dumps({"id": i, "verdicts": ["pass", "fail"], "label": "PASS"}) + "\n" for i in range(5)))
        res = invoke(runner, "score", SYSTEM, other, "-f", "json")
        assert res.exit_code == 2 and f"error: {other}: " in res.stderr
        assert [d["dataset"] for d in _docs(res.stdout)] == ["system_verdicts", "shout"]


class TestLibrary:
    def test_a_list_with_a_bad_file_returns_the_rest_with_its_failures(self, bad: Path) -> None:
        result = betaconform_cli.score([str(SYSTEM), str(bad)])
        assert result.exit_code == 2
        assert [f.dataset for f in result.failed_inputs] == ["bad"]  # type: ignore[attr-defined]
        assert result.interval("system_verdicts") == betaconform_cli.score(str(SYSTEM)).interval()
        assert [d.get("error") is not None for d in result.to_dict()] == [False, True]

    def test_one_bad_file_raises(self, bad: Path) -> None:
        with pytest.raises(betaconform_cli.InputError, match="field 'verdicts'"):
            betaconform_cli.score(str(bad))
