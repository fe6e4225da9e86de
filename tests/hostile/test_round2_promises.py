"""Issue 16, classes 9 and 10: what a command promises is what happens (one seed range, nothing printed before a
failing output, names from the data kept whole in CSV and on one line in messages, a pool that ran out is not
"enough labels"), and a newcomer's papercuts (this tool's own outputs in an input folder, the chart's item count,
footnotes, help texts, `make` saying what it does)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from betaconform_cli.inputs.paths import tool_output

from .conftest import MIXED, ROOT, Q, invoke, one_error_line, q_rows, run_cli, write_jsonl

MAX_SEED = 2**53 - 1
NAMES = ["gpt 4o", "claude, opus", 'llama "3"', "mix\nnew", "=plain"]  # a space, a comma, quotes, a newline, a formula


def named_judges(path: Path, items: int = 40) -> Path:
    """Items judged by NAMES (a fixed pattern: no randomness, every judge right on most items)."""
    rows = [{"id": f"i{i}", "judgments": {n: int((i * (j + 3)) % 7 != 0) for j, n in enumerate(NAMES)}} for i in range(items)]
    return write_jsonl(path, rows)


class TestOneSeedRange:
    """Class 9: one seed range (0 to 2^53 - 1, what JSON and saved fits carry exactly), checked where --seed
    enters, so that no command prints a table and then fails on the seed."""

    @pytest.mark.parametrize("seed", [MAX_SEED + 2, 2**63 - 1, -1])
    def test_fit_with_save_fails_before_any_output(self, seed: int, tmp_path: Path) -> None:
        saved = tmp_path / "x.yaml"
        p = run_cli("fit", Q, "--seed", seed, "--save", saved, "-o", tmp_path / "out.json")
        assert "2^53 - 1" in one_error_line(p) and p.stdout == b""
        assert not saved.exists() and not (tmp_path / "out.json").exists()

    @pytest.mark.parametrize("args", [["judges", "{named}"], ["sample", str(Q)], ["sample", str(Q), "--replay", "--runs", "2"],
                                      ["evaluate", str(Q), "--r", "10", "--runs", "2"], ["fit", str(Q), "-f", "csv"]])
    def test_every_command_has_the_same_range(self, args: list[str], tmp_path: Path) -> None:
        args = [a.replace("{named}", str(named_judges(tmp_path / "n.jsonl"))) for a in args]
        res = invoke(*args, "--seed", MAX_SEED + 1)
        assert res.exit_code == 2 and res.stdout == "" and "--seed must be an integer from 0 to 2^53 - 1" in res.stderr

    def test_the_largest_seed_is_saved_and_read_back(self, tmp_path: Path) -> None:
        saved = tmp_path / "x.yaml"
        p = run_cli("fit", Q, "--seed", MAX_SEED, "--save", saved, "-f", "json")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["seed"] == MAX_SEED
        back = run_cli("report", saved, "-f", "json")
        assert back.returncode == 0 and json.loads(back.stdout)["seed"] == MAX_SEED


class TestNothingPrintedBeforeAFailingOutput:
    """Class 9: every output is checked (distinct, writable, a folder where a folder must be) and written before
    the table is printed: a failing output is the only line shown, and no other output is left half done."""

    def test_save_under_a_file(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("mine\n")
        p = run_cli("fit", Q, "--save", tmp_path / "file" / "x.yaml", "-o", tmp_path / "out.json")
        assert "is not a folder" in one_error_line(p) and p.stdout == b""
        assert not (tmp_path / "out.json").exists() and (tmp_path / "file").read_text() == "mine\n"

    def test_save_dir_under_a_file(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("mine\n")
        p = run_cli("fit", Q, MIXED, "--save-dir", tmp_path / "file" / "fits")
        assert "is not a folder" in one_error_line(p) and p.stdout == b""

    def test_output_and_save_one_file(self, tmp_path: Path) -> None:
        p = run_cli("fit", Q, "-o", tmp_path / "x.yaml", "-f", "json", "--save", tmp_path / "x.yaml")
        assert "same file" in one_error_line(p) and p.stdout == b"" and not (tmp_path / "x.yaml").exists()

    def test_output_under_a_file(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("mine\n")
        p = run_cli("judges", named_judges(tmp_path / "n.jsonl"), "-o", tmp_path / "file" / "j.csv")
        assert "is not a folder" in one_error_line(p) and p.stdout == b""

    def test_live_next_items_under_a_file(self, tmp_path: Path) -> None:
        (tmp_path / "file").write_text("mine\n")
        labeled = write_jsonl(tmp_path / "labeled.jsonl", q_rows()[:12])
        p = run_cli("sample", labeled, "--pool", Q, "-o", tmp_path / "file" / "next.jsonl")
        assert "is not a folder" in one_error_line(p) and p.stdout == b""


def _csv_members(text: str) -> list[list[str]]:
    return [json.loads(row["members"]) for row in csv.DictReader(io.StringIO(text))]


class TestNamesSurvive:
    """Class 9: a list in a CSV cell is a JSON list (names with spaces, commas, quotes, newlines come back as they
    were); a name from the data quoted in a message keeps the message on one line."""

    def test_judges_csv_members_round_trip(self, tmp_path: Path) -> None:
        data = named_judges(tmp_path / "n.jsonl")
        as_json = run_cli("judges", data, "-f", "json")
        as_csv = run_cli("judges", data, "-f", "csv")
        assert as_json.returncode == 0 and as_csv.returncode == 0, as_csv.stderr
        expected = [e["members"] for e in json.loads(as_json.stdout)["ensembles"]]
        assert _csv_members(as_csv.stdout.decode()) == expected
        assert any(set(m) == set(NAMES) for m in expected)  # every odd name is in some ensemble

    def test_unknown_name_error_is_one_line(self, tmp_path: Path) -> None:
        out = tmp_path / "j.csv"
        p = run_cli("judges", named_judges(tmp_path / "n.jsonl"), "--ensemble", "mix\nnew,gpt 4o,claude, opus", "-o", out)
        # "claude, opus" cannot be named in --ensemble's comma list; the error says which name is unknown, on one line
        line = one_error_line(p)
        assert "'claude'" in line and "'mix\\nnew'" in line and not out.exists()

    @pytest.mark.parametrize("ensemble", ["nope", "=plain,=plain"])
    def test_error_quoting_a_judge_is_one_line(self, ensemble: str, tmp_path: Path) -> None:
        line = one_error_line(run_cli("judges", named_judges(tmp_path / "n.jsonl"), "--ensemble", ensemble))
        assert "\\n" in line or "'=plain', '=plain'" in line

    def test_gate_line_quoting_a_file_name_is_one_line(self, tmp_path: Path) -> None:
        odd = tmp_path / "two\nlines\x1b[31m.jsonl"
        shutil.copy(Q, odd)
        p = run_cli("fit", odd, "--max-error", "0.01", "--at-k", "1", "-f", "json")
        err = p.stderr.decode()
        assert p.returncode == 1 and err.count("\n") == 1 and "two\\nlines\\x1b[31m" in err and "\x1b" not in err


    def test_column_names_in_an_error_are_quoted(self, tmp_path: Path) -> None:
        table = tmp_path / "t.csv"
        table.write_text('item,judge,correct,"x, y"\n1,a,1,0\n1,b,0,0\n2,a,1,1\n2,b,1,1\n')
        line = one_error_line(run_cli("fit", table, "--item-col", "nope"))
        assert "'x, y'" in line and "'correct'" in line


class TestPoolExhausted:
    """Class 9: a rule that is met only because every pool item is labeled (a finite-pool interval has no width
    left) does not say "enough labels": the pool is exhausted and the target missed."""

    @pytest.mark.parametrize("method", ["calibrated", "sequential"])
    def test_live(self, method: str, tmp_path: Path) -> None:
        pool = write_jsonl(tmp_path / "pool.jsonl", q_rows()[:5])
        p = run_cli("sample", pool, "--pool", pool, "--rule", "precision", "--precision-method", method, "--min-samples", "2", "-f", "json")
        doc = json.loads(p.stdout)
        assert doc["stopped_by"] == "pool exhausted" and doc["stop_at"] is None
        assert "pool exhausted" in doc["message"] and "target was missed" in doc["message"] and "enough" not in doc["message"]

    def test_replay(self, tmp_path: Path) -> None:
        pool = write_jsonl(tmp_path / "pool.jsonl", q_rows()[:5])
        p = run_cli("sample", pool, "--replay", "--runs", "3", "--rule", "precision", "--min-samples", "2", "-f", "json")
        runs = [json.loads(line) for line in p.stdout.splitlines()][:-1]
        assert p.returncode == 0 and len(runs) == 3 and not any(r["stopped"] for r in runs)

    def test_met_before_the_end_is_still_enough(self, tmp_path: Path) -> None:
        pool = write_jsonl(tmp_path / "pool.jsonl", q_rows()[:30])
        doc = json.loads(run_cli("sample", pool, "--pool", pool, "-f", "json").stdout)
        assert doc["stopped_by"] == "rule" and doc["stop_at"] < 30 and doc["message"].startswith("stop: enough labels")


class TestOwnOutputsAreNotInputs:
    """Class 10: this tool's outputs (JSON documents with a betaconform schema, its CSV reports) found in an input
    folder or by a glob are skipped with a note on stderr; one named as an input is an error that says what it is."""

    def test_fit_folder_twice(self, tmp_path: Path) -> None:
        batch = tmp_path / "batch"
        batch.mkdir()
        shutil.copy(Q, batch / "qa.jsonl")
        shutil.copy(MIXED, batch / "cr.jsonl")
        first = run_cli("fit", batch, "-o", batch / "summary.json")
        second = run_cli("fit", batch, "-o", batch / "summary.csv", "-f", "csv")
        third = run_cli("fit", batch, "-f", "json")
        assert first.returncode == second.returncode == third.returncode == 0, third.stderr
        assert b"summary.json: skipped" in second.stderr and b"summary.csv: skipped" in third.stderr
        assert [json.loads(line)["dataset"] for line in third.stdout.splitlines()] == ["cr", "qa"]

    def test_named_output_is_an_error(self, tmp_path: Path) -> None:
        out = tmp_path / "summary.json"
        assert run_cli("fit", Q, "-o", out).returncode == 0
        line = one_error_line(run_cli("fit", out))
        assert "summary.json" in line and "betaconform output" in line

    def test_glob_of_only_outputs(self, tmp_path: Path) -> None:
        assert run_cli("judges", named_judges(tmp_path / "n.jsonl"), "-o", tmp_path / "j.csv").returncode == 0
        assert "only outputs of betaconform" in one_error_line(run_cli("fit", str(tmp_path / "*.csv")))

    @pytest.mark.parametrize("args", [
        ["fit", str(Q)], ["fit", str(Q), str(MIXED)], ["doctor", str(Q)], ["sample", str(Q)],
        ["sample", str(Q), "--replay", "--runs", "2"], ["evaluate", str(Q), "--r", "10", "--runs", "2"], ["judges", "{named}"],
    ])
    @pytest.mark.parametrize("fmt", ["json", "csv"])
    def test_every_output_is_recognised(self, args: list[str], fmt: str, tmp_path: Path) -> None:
        args = [a.replace("{named}", str(named_judges(tmp_path / "n.jsonl"))) for a in args]
        res = invoke(*args, "-f", fmt)
        assert res.exit_code in (0, 1), res.stderr
        out = tmp_path / f"out.{fmt}"
        out.write_text(res.stdout)
        assert tool_output(out) is not None
        assert tool_output(Q) is None and tool_output(named_judges(tmp_path / "m.json")) is None

    def test_doctor_notes_what_it_skipped(self, tmp_path: Path) -> None:
        shutil.copy(Q, tmp_path / "qa.jsonl")
        assert run_cli("evaluate", tmp_path, "--r", "10", "--runs", "2", "-o", tmp_path / "ev.json").returncode == 0
        p = run_cli("doctor", tmp_path)
        assert p.returncode == 0 and b"ev.json: skipped" in p.stderr


class TestPapercuts:
    """Class 10: the chart says which items it shows; the even-k footnote only under a table with an even k;
    no <bool> beside a flag; each command's --ks help states its own default; `make install` says what it does."""

    def test_chart_says_which_items(self) -> None:
        res = invoke("fit", MIXED)
        assert res.exit_code == 0 and "58 of 80 items: those with 7 judges" in res.stdout

    def test_chart_of_one_judge_count(self) -> None:
        out = invoke("fit", Q).stdout
        assert "out of 11" in out and " of 200 items" not in out

    @pytest.mark.parametrize("args", [["fit", str(Q)], ["fit", str(Q), str(MIXED)], ["fit", str(Q), "-f", "markdown"],
                                      ["sample", str(Q)]])
    def test_even_k_footnote_only_with_even_k(self, args: list[str]) -> None:
        odd = invoke(*args, "--ks", "1,3,5").stdout
        even = invoke(*args, "--ks", "1-4").stdout
        assert "even k" not in odd and "tie" not in odd
        assert "tie (k/2 correct) counts as half an error" in even

    @pytest.mark.parametrize("command", ["fit", "report", "sample", "transfer", "evaluate", "judges", "doctor"])
    def test_help(self, command: str) -> None:
        from typer.testing import CliRunner

        from betaconform_cli.cli import app

        res = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "250"})
        text = res.stdout
        assert res.exit_code == 0 and "<bool>" not in text and "--help" in text
        if command == "judges":
            assert "up to the number of judges" in text
        elif "--ks" in text:
            assert "default 1-11" in text and "judges: 1, 3, 5" not in text

    def test_make_install_says_what_it_does(self, tmp_path: Path) -> None:
        make = shutil.which("make")
        if make is None:
            pytest.skip("no make here")
        p = subprocess.run([make, "-n", "-C", str(ROOT), "install", f"VENV={tmp_path / 'venv'}"], capture_output=True, text=True, check=False)
        echoes = [line for line in p.stdout.splitlines() if line.startswith("echo ")]
        assert p.returncode == 0 and len(echoes) >= 3 and any("torch" in e for e in echoes), p.stdout
