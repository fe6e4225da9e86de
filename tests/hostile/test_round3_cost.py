"""Issue 25, items 7 and 8 as real processes: cost stays bounded (too many judges, wide tables, deep JSON, FIFOs
nobody writes to, the job summary's size) and the papercuts (warnings, JSON layout by -o's name, score's
tool_version, partial --cost prices). Each class has several members; each run is memory-capped (conftest)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from .conftest import MIXED, SAMPLE, Q, cli_env, one_error_line, q_rows, run_cli, write_jsonl

DEEP = 1000  # '[[[[...' a thousand deep: Python's own parser and repr recurse about that far


def deep_list(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int = DEEP) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def verdict_rows(judges: int, items: int = 12) -> list[dict[str, object]]:
    return [{"id": f"i{i}", "verdicts": {f"j{j}": "pass" if (i + j) % 3 else "fail" for j in range(judges)},
             "label": "pass" if i % 2 else "fail"} for i in range(items)]


class TestJudgesLimit:
    """More judges than the largest ensemble size: refused naming the judges, never --ks (which was not given)."""

    @pytest.mark.parametrize("extra", [[], ["--ks", "3"]])
    def test_202_judges(self, tmp_path: Path, extra: list[str]) -> None:
        data = write_jsonl(tmp_path / "many.jsonl", verdict_rows(202, items=6))
        err = one_error_line(run_cli("judges", data, *extra))
        assert "202 judges" in err and "at most 201" in err and "--ks" not in err, err


class TestWideTables:
    """10^4 columns are refused from the header, in seconds: neither a quadratic Python step nor DuckDB's load."""

    @staticmethod
    def wide_csv(path: Path, columns: int, rows: int = 4) -> Path:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("id,gold," + ",".join(f"j{i}" for i in range(columns)) + "\n")
            for r in range(rows):
                fh.write(f"i{r},pass," + ",".join("pass" if (r + i) % 2 else "fail" for i in range(columns)) + "\n")
        return path

    @pytest.mark.parametrize("command", ["doctor"])
    def test_ten_thousand_columns(self, tmp_path: Path, command: str) -> None:
        data = self.wide_csv(tmp_path / "wide.csv", 10_000)
        start = time.monotonic()
        err = one_error_line(run_cli(command, data))
        assert "10002 columns" in err and "at most 2000" in err, err
        assert time.monotonic() - start < 20  # ~1.5 s here with start-up; quadratic steps took 30 s

    def test_ten_thousand_columns_tsv_labels(self, tmp_path: Path) -> None:
        labels = tmp_path / "labels.tsv"
        labels.write_text("id\tlabel\t" + "\t".join(f"c{i}" for i in range(10_000)) + "\nsys-000\tpass" + "\t" * 10_000 + "\n")
        err = one_error_line(run_cli("fit", SAMPLE / "system_verdicts.jsonl", "--labels", labels))
        assert "10002 columns" in err, err

    def test_more_judge_columns_than_judges_per_item(self, tmp_path: Path) -> None:
        data = self.wide_csv(tmp_path / "wide.csv", 1500)
        err = one_error_line(run_cli("fit", data))
        assert "1500 judge columns" in err and "at most 1000" in err, err

    def test_parquet(self, tmp_path: Path) -> None:
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        cols = {"id": ["a", "b"], "gold": ["pass", "fail"], **{f"j{i}": ["pass", "fail"] for i in range(5000)}}
        pq.write_table(pa.table(cols), tmp_path / "wide.parquet")
        err = one_error_line(run_cli("fit", tmp_path / "wide.parquet"))
        assert "5002 columns" in err, err


class TestDeepJson:
    """JSON nested ~1000 deep: one line, exit 2, in every reader (never RecursionError, exit 70)."""

    @pytest.mark.parametrize("command,line", [
        ("fit", f'{{"id": "i5", "verdicts": {{"j0": "pass"}}, "label": "pass", "x": {deep_object()}}}'),  # unread field
        ("judges", f'{{"id": "i5", "verdicts": {deep_list()}, "label": "pass"}}'),  # the verdicts themselves
        ("doctor", f'{{"id": "i5", "verdicts": {{"j0": "pass"}}, "label": {deep_list(200)}}}'),  # past 128, no recursion
        ("score", f'{{"id": "i5", "verdicts": {{"j0": "pass"}}, "label": "pass", "text": {deep_object(990)}}}'),
    ])
    def test_json_lines(self, tmp_path: Path, command: str, line: str) -> None:
        rows = [json.dumps(r) for r in verdict_rows(3)]
        rows[5] = line
        data = tmp_path / "deep.jsonl"
        data.write_text("\n".join(rows) + "\n")
        err = one_error_line(run_cli(command, data))
        assert "deep.jsonl:6" in err and "nested deeper than 128" in err, (command, err)

    def test_fast_path_agrees(self, tmp_path: Path) -> None:
        """A big list-shaped file is counted by the fast path, which skips unused fields: the same line is refused."""
        lines = [json.dumps({"id": f"q{i}", "judgments": [1, 0, 1, 1, 0]}) for i in range(60_000)]
        lines[40_000] = lines[40_000][:-1] + f', "meta": {deep_list(600)}}}'
        data = tmp_path / "big.jsonl"
        data.write_text("\n".join(lines) + "\n")
        err = one_error_line(run_cli("fit", data))
        assert "big.jsonl:40001" in err and "nested deeper than 128" in err, err

    @pytest.mark.parametrize("doc", [
        '{"results": {"version": 3, "results": [{"testCase": {"vars": %s}}]}}',  # promptfoo
        '{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": [{"id": 1, "scores": %s}]}',  # inspect
    ])
    def test_json_documents(self, tmp_path: Path, doc: str) -> None:
        data = tmp_path / "deep.json"
        data.write_text(doc % deep_object())
        err = one_error_line(run_cli("fit", data))
        assert "deep.json" in err and "nested deeper than 128" in err, err

    def test_labels_file(self, tmp_path: Path) -> None:
        labels = tmp_path / "labels.jsonl"
        labels.write_text(f'{{"id": "sys-000", "label": {deep_list()}}}\n')
        one_error_line(run_cli("fit", SAMPLE / "system_verdicts.jsonl", "--labels", labels))

    def test_pool(self, tmp_path: Path) -> None:
        pool = tmp_path / "pool.jsonl"
        pool.write_text(f'{{"id": "p1", "text": "a"}}\n{{"id": "p2", "x": {deep_list()}}}\n')
        err = one_error_line(run_cli("sample", Q, "--pool", pool))
        assert "nested deeper than 128" in err, err

    @pytest.mark.parametrize("value", [deep_list(), deep_object(300)])
    def test_saved_fit(self, saved_fit: Path, tmp_path: Path, value: str) -> None:
        fit = tmp_path / "deep.fit.yaml"
        fit.write_text(saved_fit.read_text() + f"extra: {value}\n")
        err = one_error_line(run_cli("report", fit))
        assert "deep.fit.yaml" in err and "nested deeper than 128" in err, err


class TestFifos:
    """A FIFO nobody writes to, where a file is read: refused in seconds, never waited on forever; a FIFO or pipe
    that has a writer is read as before."""

    @pytest.fixture
    def fifo(self, tmp_path: Path) -> Path:
        path = tmp_path / "in.jsonl"
        os.mkfifo(path)
        return path

    def _refused(self, *args: object) -> str:
        start = time.monotonic()
        err = one_error_line(run_cli(*args, timeout=30))
        assert time.monotonic() - start < 20, err
        return err

    def test_data(self, fifo: Path) -> None:
        assert "nothing wrote to" in self._refused("fit", fifo)

    def test_labels(self, tmp_path: Path) -> None:
        labels = tmp_path / "labels.csv"
        os.mkfifo(labels)
        assert "labels.csv" in self._refused("fit", SAMPLE / "system_verdicts.jsonl", "--labels", labels)

    def test_saved_fit(self, tmp_path: Path) -> None:
        fit = tmp_path / "q.fit.yaml"
        os.mkfifo(fit)
        assert "q.fit.yaml" in self._refused("report", fit)

    def test_config(self, tmp_path: Path, saved_fit: Path) -> None:
        config = tmp_path / "transfer.yaml"
        os.mkfifo(config)
        assert "transfer.yaml" in self._refused("transfer", Q, "--sources", saved_fit, "--config", config)

    @pytest.mark.parametrize("name", ["modules.json", "1_Pooling/config.json"])
    def test_embedding_model_file(self, tmp_path: Path, name: str) -> None:
        model = tmp_path / "model"
        (model / "1_Pooling").mkdir(parents=True)
        (model / "config.json").write_text("{}")
        os.mkfifo(model / name)
        err = self._refused("fit", Q, "--save", tmp_path / "x.fit.yaml", "--embed", "--embedding-model", model)
        assert name in err and "not a regular file" in err, err

    def test_a_writer_is_waited_for(self, fifo: Path) -> None:
        def write() -> None:
            time.sleep(0.5)
            fifo.write_bytes(Q.read_bytes())

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        p = run_cli("fit", fifo, "-f", "csv")
        writer.join(timeout=30)
        assert p.returncode == 0 and p.stdout.count(b"\n") == 12, p.stderr

    def test_a_pipe_with_a_slow_writer(self) -> None:
        """`<(sleep 3; cat f)`: a writer holds the pipe open and writes late; waited for like any pipe."""
        r, w = os.pipe()

        def write() -> None:
            time.sleep(3)
            os.write(w, Q.read_bytes())
            os.close(w)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        p = run_cli("fit", f"/dev/fd/{r}", "-f", "csv", pass_fds=(r,))
        writer.join(timeout=30)
        os.close(r)
        assert p.returncode == 0 and p.stdout.count(b"\n") == 12, p.stderr


class TestJobSummaryCap:
    """GitHub drops a job summary over 1 MiB, gates included: what is appended keeps the file under it."""

    LIMIT = 1 << 20

    def test_room_left(self, tmp_path: Path) -> None:
        summary = tmp_path / "summary.md"
        summary.write_bytes(b"x" * (self.LIMIT - 4000) + b"\n")
        p = run_cli("fit", SAMPLE, "--max-error", "0.2", "--at-k", "5", env=cli_env(GITHUB_STEP_SUMMARY=str(summary)))
        assert p.returncode == 1, p.stderr
        text = summary.read_bytes()
        assert len(text) <= self.LIMIT
        added = text[self.LIMIT - 4000:].decode()
        assert "gate failed" in added and "left out" in added  # the gates first, then the cut and its note
        assert "qa_judges (max-error" in added

    def test_full(self, tmp_path: Path) -> None:
        summary = tmp_path / "summary.md"
        summary.write_bytes(b"x" * self.LIMIT)
        p = run_cli("fit", Q, env=cli_env(GITHUB_STEP_SUMMARY=str(summary)))
        assert p.returncode == 0 and b"is full" in p.stderr
        assert summary.stat().st_size == self.LIMIT


class TestPapercuts:
    def test_json_array_and_lines_by_name(self, tmp_path: Path) -> None:
        """The rule is the emitter's (render.json_for_file, unit-tested for every layout): one command each way here."""
        data = [SAMPLE / "system_verdicts.jsonl", SAMPLE / "system_b_verdicts.jsonl"]
        arr, lines = tmp_path / "score.json", tmp_path / "doctor.ndjson"
        assert run_cli("score", *data, "-o", arr).returncode == 0
        assert run_cli("doctor", *data, "-o", lines).returncode == 0
        docs = json.loads(arr.read_text())
        assert isinstance(docs, list) and [d["dataset"] for d in docs] == ["system_verdicts", "system_b_verdicts"]
        assert [json.loads(x)["dataset"] for x in lines.read_text().splitlines()] == ["system_verdicts", "system_b_verdicts"]

    def test_score_says_tool_version(self) -> None:
        doc = json.loads(run_cli("score", SAMPLE / "system_verdicts.jsonl", "--compare", SAMPLE / "system_b_verdicts.jsonl",
                                 "-f", "json").stdout)
        for d in (doc, doc["a"], doc["b"]):
            assert "tool_version" in d and "version" not in d

    def test_partial_prices_are_said(self) -> None:
        p = run_cli("judges", MIXED, "--cost", "gpt-4o=5,claude-3.5=3", "--max-error", "0.5")
        err = p.stderr.decode()
        assert p.returncode in (0, 1) and "prices 2 of 7 judges" in err and "'command-r'" in err, err
        assert b"left out (no price)" in p.stdout

    def test_csv_names_round_trip(self, tmp_path: Path) -> None:
        import csv
        import io

        names = ['a,b', 'c"d', "e'f", "=cmd", "line\nbreak", "tab\there", "x;y"]
        rows = [{"id": r["id"], "judgments": dict(zip(names, r["judgments"]))} for r in q_rows()]
        data = write_jsonl(tmp_path / "named.jsonl", rows)
        p = run_cli("judges", data, "-f", "csv")
        assert p.returncode == 0, p.stderr
        got = list(csv.DictReader(io.StringIO(p.stdout.decode())))
        every = {m for row in got for m in json.loads(row["members"])}
        assert every == set(names)
