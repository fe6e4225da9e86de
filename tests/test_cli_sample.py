"""`betaconform sample` through CliRunner: exit codes, next items, replays, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from betaconform_cli.cli import app

runner = CliRunner()


def write_pool(path: Path, n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        p = 0.85 if rng.random() < 0.7 else 0.3
        rows.append({"id": f"q{i}", "judgments": [int(v) for v in rng.random(11) < p]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


class TestLive:
    """Live decisions on the items labeled so far."""

    def test_continue_writes_fresh_next_items(self, tmp_path: Path) -> None:
        """Few labels: exit 1, 'continue', and --batch next items none of which is already labeled."""
        rows = write_pool(tmp_path / "pool.jsonl", 120)
        (tmp_path / "lab.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:5]))
        res = runner.invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / "pool.jsonl"),
                                  "--batch", "4", "-o", str(tmp_path / "next.jsonl")])
        assert res.exit_code == 1, res.output
        assert "continue: label about" in res.stdout
        nxt = [json.loads(x)["id"] for x in (tmp_path / "next.jsonl").read_text().splitlines()]
        assert len(nxt) == 4 and not set(nxt) & {f"q{i}" for i in range(5)}

    def test_stop_prints_table(self, tmp_path: Path) -> None:
        """Many labels of a stable stream: exit 0, 'stop: enough labels (r = n)', JSON with the required keys."""
        write_pool(tmp_path / "pool.jsonl", 150)
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--xi", "0.06", "-f", "json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        for key in ("schema", "command", "rule", "stopped", "samples", "theoretical_samples", "labeled_ids", "error_rates"):
            assert key in doc
        assert doc["command"] == "sample" and doc["stopped"] is True and doc["samples"] == 150
        assert doc["theoretical_samples"] == 36 and doc["labeled_ids"][:2] == ["q0", "q1"]
        assert doc["message"] == "stop: enough labels (r = 150)"

    def test_loop_terminates(self, tmp_path: Path) -> None:
        """The documented until-loop ends: labels grow by the proposed items until the rule says stop."""
        rows = write_pool(tmp_path / "pool.jsonl", 300)
        by_id = {r["id"]: r for r in rows}
        lab = tmp_path / "lab.jsonl"
        lab.write_text("")
        lab.write_text(json.dumps(rows[0]) + "\n")
        for _ in range(40):
            res = runner.invoke(app, ["sample", str(lab), "--pool", str(tmp_path / "pool.jsonl"), "--batch", "10",
                                      "--xi", "0.06", "-o", str(tmp_path / "next.jsonl")])
            if res.exit_code == 0:
                break
            assert res.exit_code == 1, res.output
            with lab.open("a") as fh:
                for line in (tmp_path / "next.jsonl").read_text().splitlines():
                    fh.write(json.dumps(by_id[json.loads(line)["id"]]) + "\n")
        assert res.exit_code == 0
        ids = [json.loads(x)["id"] for x in lab.read_text().splitlines()]
        assert len(ids) == len(set(ids))


class TestBadInput:
    """Bad input exits 2 with one line naming the problem."""

    def test_labeled_id_missing_from_pool(self, tmp_path: Path) -> None:
        write_pool(tmp_path / "pool.jsonl", 20)
        (tmp_path / "lab.jsonl").write_text(json.dumps({"id": "zz", "judgments": [1, 0, 1]}) + "\n")
        res = runner.invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / "pool.jsonl")])
        assert res.exit_code == 2 and "'zz' is not in the pool" in res.stderr

    def test_duplicate_ids(self, tmp_path: Path) -> None:
        rows = write_pool(tmp_path / "pool.jsonl", 20)
        (tmp_path / "lab.jsonl").write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[0]) + "\n")
        res = runner.invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / "pool.jsonl")])
        assert res.exit_code == 2 and "lab.jsonl:2" in res.stderr and "appears again" in res.stderr

    @pytest.mark.parametrize("replay", [False, True])
    def test_a_file_of_two_datasets_is_one_line(self, tmp_path: Path, replay: bool) -> None:
        """A table with a dataset column holds several datasets; a live loop or a replay runs on one: exit 2 naming
        them (it was ValueError: too many values to unpack, an internal error)."""
        rows = ["item_id,judge,verdict,gold,dataset"] + [f"q{i},j{j},pass,pass,d{i % 2}" for i in range(6) for j in range(3)]
        (tmp_path / "two.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        res = runner.invoke(app, ["sample", str(tmp_path / "two.csv"), *(["--replay"] if replay else [])])
        assert res.exit_code == 2, res.output
        assert res.stderr.strip().splitlines() == [f"error: {tmp_path / 'two.csv'}: holds 2 datasets ('d0', 'd1'); sample "
                                                   "runs on one dataset: give a file of one"]

    def test_pool_without_ids(self, tmp_path: Path) -> None:
        (tmp_path / "pool.jsonl").write_text(json.dumps({"judgments": [1, 1, 0]}) + "\n")
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--replay"])
        assert res.exit_code == 2 and "pool.jsonl:1" in res.stderr and "no id" in res.stderr

    @pytest.mark.parametrize("pool_text", ['{"text": "no id"}\n', "", '{"id": "a"}\n{"id": "a"}\n', "not json\n"])
    def test_a_bad_pool_is_the_only_line_on_stderr(self, tmp_path: Path, pool_text: str) -> None:
        """The conformal rule's 'Proposition 4.1: r >= ...' line used to be printed before the pool was read."""
        rows = write_pool(tmp_path / "all.jsonl", 20)
        (tmp_path / "lab.jsonl").write_text(json.dumps(rows[0]) + "\n")
        (tmp_path / "pool.jsonl").write_text(pool_text)
        res = runner.invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / "pool.jsonl")])
        lines = res.stderr.strip().splitlines()
        assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "pool.jsonl" in lines[0]

    def test_a_labeled_id_missing_from_the_pool_is_the_only_line(self, tmp_path: Path) -> None:
        write_pool(tmp_path / "pool.jsonl", 20)
        (tmp_path / "lab.jsonl").write_text(json.dumps({"id": "zz", "judgments": [1, 0, 1]}) + "\n")
        res = runner.invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / "pool.jsonl")])
        assert res.exit_code == 2 and res.stderr.strip() == f"error: {tmp_path / 'lab.jsonl'}:1: field 'id': labeled id 'zz' is not in the pool"

    def test_missing_id_names_the_id_field_in_use(self, tmp_path: Path) -> None:
        write_pool(tmp_path / "pool.jsonl", 20)
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--replay", "--id-field", "key"])
        assert res.exit_code == 2 and res.stderr.strip() == f"error: {tmp_path / 'pool.jsonl'}:1: field 'key': item has no id (every item needs one; name its field with --id-field)"

    @pytest.mark.parametrize("args", [["--xi", "nan"], ["--tau", "nan"], ["--xi", "inf"], ["--xi", "1e-300"], ["--xi", "5e-324"],
                                      ["--xi-units", "sd", "--reference-sd", "nan"], ["--rule", "variance", "--xi", "nan"], ["--seed", "-1"]])
    def test_bad_rule_numbers_are_one_line_errors(self, tmp_path: Path, args: list[str]) -> None:
        """NaN used to crash in int(), and xi = 1e-300 looped forever in Proposition 4.1's walk."""
        write_pool(tmp_path / "pool.jsonl", 20)
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--replay", *args])
        assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1 and res.stderr.startswith("error: ")

    def test_option_of_another_rule(self, tmp_path: Path) -> None:
        write_pool(tmp_path / "pool.jsonl", 20)
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--rule", "precision", "--xi", "0.03"])
        assert res.exit_code == 2 and "does not take --xi" in res.stderr


class TestPrecisionMethods:
    """--precision-method picks the interval and says which promise it keeps."""

    @pytest.mark.parametrize("method,word", [("calibrated", "calibration benchmark"), ("sequential", "theorem")])
    def test_promise_named(self, tmp_path: Path, method: str, word: str) -> None:
        write_pool(tmp_path / "pool.jsonl", 60)
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--rule", "precision", "--precision-method", method, "-f", "json"])
        assert res.exit_code in (0, 1), res.output
        doc = json.loads(res.stdout)
        assert doc["rule_settings"]["method"] == method and word in doc["rule_settings"]["promise"]

    def test_sequential_needs_more_labels(self, tmp_path: Path) -> None:
        """Replayed on one pool with one seed, the confidence sequence stops later than the calibrated interval."""
        write_pool(tmp_path / "pool.jsonl", 300)
        n = {}
        for m in ("calibrated", "sequential"):
            res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--replay", "--rule", "precision", "--target", "0.05",
                                      "--ks", "1,3", "--precision-method", m, "-f", "json"])
            assert res.exit_code == 0, res.output
            n[m] = json.loads(res.stdout.splitlines()[-1])["summary"]["samples"]["mean"]
        assert n["calibrated"] < n["sequential"]

    def test_xi_units_sd_accepted(self, tmp_path: Path) -> None:
        write_pool(tmp_path / "pool.jsonl", 150)
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--xi-units", "sd", "-f", "json"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["rule_settings"]["xi_units"] == "sd"


class TestReplay:
    """--replay on a fully labeled pool."""

    def test_json_lines_per_run_and_summary(self, tmp_path: Path) -> None:
        """--runs 3: three run objects with actual and margin, then a summary line."""
        write_pool(tmp_path / "pool.jsonl", 150)
        res = runner.invoke(app, ["sample", str(tmp_path / "pool.jsonl"), "--replay", "--runs", "3", "--xi", "0.06", "-f", "json"])
        assert res.exit_code == 0, res.output
        lines = [json.loads(x) for x in res.stdout.splitlines()]
        assert len(lines) == 4 and lines[-1]["summary"]["runs"] == 3
        run = lines[0]
        assert {"actual", "margin", "samples", "labeled_ids", "error_rates", "theoretical_samples"} <= set(run)
        assert [a["k"] for a in run["actual"]] == list(range(1, 12))
        assert np.mean([r["samples"] for r in lines[:3]]) == pytest.approx(lines[-1]["summary"]["samples"]["mean"])

    def test_seed_reproducible(self, tmp_path: Path) -> None:
        """The same seed gives the same replay."""
        write_pool(tmp_path / "pool.jsonl", 100)
        args = ["sample", str(tmp_path / "pool.jsonl"), "--replay", "--seed", "3", "-f", "json"]
        assert runner.invoke(app, args).stdout == runner.invoke(app, args).stdout
