"""`score` as a careless user runs it, each as a real memory-capped process: inputs it cannot use, options that
contradict each other, outputs onto its inputs, and a failing gate: one line and exit 2, or exit 1 with the
reason, never a traceback, and nothing a user wrote lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import SAMPLE, one_error_line, run_cli, write_jsonl

SYSTEM = SAMPLE / "system_verdicts.jsonl"
SYSTEM_B = SAMPLE / "system_b_verdicts.jsonl"


class TestInputs:
    """Inputs without verdicts, without enough labels, or that cannot be paired."""

    def test_correctness_only_jsonl_and_counts_table(self, tmp_path: Path) -> None:
        assert "verdicts" in one_error_line(run_cli("score", SAMPLE / "qa_judges.jsonl"))
        counts = tmp_path / "counts.csv"
        counts.write_text("judges,correct,count\n5,4,10\n5,3,6\n5,1,2\n")
        line = one_error_line(run_cli("score", counts))
        assert "counts.csv" in line and "verdicts" in line

    def test_empty_file(self, tmp_path: Path) -> None:
        empty = tmp_path / "empty.jsonl"
        empty.write_text("")
        assert "empty.jsonl" in one_error_line(run_cli("score", empty))

    def test_no_labels(self, tmp_path: Path) -> None:
        rows = [{k: v for k, v in json.loads(line).items() if k != "label"} for line in SYSTEM.read_text().splitlines()]
        line = one_error_line(run_cli("score", write_jsonl(tmp_path / "nolabels.jsonl", rows)))
        assert "nolabels.jsonl" in line

    def test_ab_without_positive(self) -> None:
        line = one_error_line(run_cli("score", SAMPLE / "pairwise_verdicts.jsonl"))
        assert "pairwise_verdicts.jsonl" in line and "--positive" in line

    @pytest.mark.parametrize("args", [["--compare"], ["--on", "estimate"], ["--min-score", "2"], ["--target", "everything"],
                                      ["--confidence-level", "0"], ["--positive", ""]])
    def test_contradicting_or_bad_options(self, args: list[str]) -> None:
        one_error_line(run_cli("score", SYSTEM, *args))


class TestOutputs:
    """-o onto an input is refused before anything is written; a failed gate still writes the report."""

    def test_output_onto_an_input(self, tmp_path: Path) -> None:
        copy = tmp_path / "s.jsonl"
        copy.write_bytes(SYSTEM.read_bytes())
        for name in ("s.jsonl", "s.json"):
            target = tmp_path / name
            if name == "s.json":
                target.symlink_to(copy)
            one_error_line(run_cli("score", copy, "-o", target, "-f", "json"))
        assert copy.read_bytes() == SYSTEM.read_bytes()

    def test_failed_gate_writes_the_report_and_exits_1(self, tmp_path: Path) -> None:
        out, junit = tmp_path / "score.html", tmp_path / "junit.xml"
        p = run_cli("score", SYSTEM, SYSTEM_B, "--min-score", "0.9", "-o", out, "--junit", junit)
        err = p.stderr.decode()
        assert p.returncode == 1 and "Traceback" not in err and "gate failed: system_verdicts" in err
        assert out.read_text().count("<svg") == 2 and junit.read_text().count("<failure") == 2

    def test_compare_gate_passes(self) -> None:
        p = run_cli("score", SYSTEM, SYSTEM_B, "--compare", "--min-score", "-0.5", "-f", "json")
        assert p.returncode == 0, p.stderr.decode()
        assert -1 <= json.loads(p.stdout)["difference"]["estimate"] <= 1
