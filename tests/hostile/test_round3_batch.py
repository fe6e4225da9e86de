"""Issue 26: one bad input among several fails alone, as real processes: a folder where one file is bad (score and
fit), a CSV table whose gold and verdicts share no class beside a good file (doctor shows it, judges refuses it
alone), a file that does not exist; each time the good inputs' documents, the bad one's error row, its one line on
stderr and exit code 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import run_cli

SAMPLE = Path(__file__).resolve().parent.parent.parent / "sample_data"


def _documents(stdout: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]


@pytest.mark.parametrize("command", ["score", "fit"])
def test_a_folder_with_one_bad_file(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(SAMPLE / "system_verdicts.jsonl", folder / "a.jsonl")
    (folder / "b.jsonl").write_text('{"id": 1, "verdicts": ["pass", "fail"], "label": "pass"}\n{"id": 2, "verdicts": ["pass"], "label": ["pass"]}\n')
    p = run_cli(command, folder, "-f", "json")
    assert p.returncode == 2
    err = p.stderr.decode().splitlines()
    assert err[-1].startswith(f"error: {folder / 'b.jsonl'}:2: field 'label': ") and "Traceback" not in p.stderr.decode()
    docs = _documents(p.stdout)
    assert [d["dataset"] for d in docs] == ["a", "b"] and docs[1]["line"] == 2 and docs[1]["field"] == "label"


def test_a_table_refused_by_its_checks_and_a_missing_file(tmp_path: Path) -> None:
    shout = tmp_path / "shout.csv"
    shout.write_text("id,j1,j2,label\n" + "".join(f"{i},pass,fail,PASS\n" for i in range(6)))
    gone = tmp_path / "gone.jsonl"
    p = run_cli("score", SAMPLE / "system_verdicts.jsonl", shout, gone, "-f", "csv")
    assert p.returncode == 2
    rows = p.stdout.decode().splitlines()
    assert rows[0].endswith(",error") and rows[1].startswith("system_verdicts,") and len(rows) == 4
    err = p.stderr.decode()
    assert f"error: {shout}: " in err and f"error: {gone}: no such file or directory" in err
