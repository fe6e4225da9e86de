"""Ragas results (issue 29, item 2; docs/FORMATS.md#ragas): tests/fixtures/ragas/results.{csv,jsonl} were written by
ragas 0.4.3's own evaluate() (tests/fixtures/ragas/make.sh, run.py) from the plan below (plan.py, stated again here
by hand): each metric is a judge, a continuous score passes at --threshold, the person's `human_label` is the gold."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from .conftest import invoke
from .test_inputs_trace_stores import FIXTURES, _fit, canonical, doctor

CHEAP = ("--ks", "3", "--components", "1")  # the same items give the same document at any settings: cheap ones


def read_alike(path: Path, canon: Path, *args: str) -> None:
    """doctor reads the file as the canonical JSON Lines: the same histogram, vote splits and judges' verdicts."""
    keys = ("items", "unlabeled_items", "histogram", "vote_splits", "judges")
    (got,), (want,) = doctor(path, *args), doctor(canon)
    assert {k: got[k] for k in keys} == {k: want[k] for k in keys}

METRICS = ("critic_gpt4o", "critic_claude", "critic_llama", "grounded")
SCORES = {"0": (1, 1, 0, 0.92), "1": (0, 0, 0, 0.10), "2": (1, 0, 1, 0.75), "3": (1, 1, 1, 0.40), "4": (0, 1, None, 0.66),
          "5": (1, 1, 1, 0.95), "6": (0, 1, 0, 0.30), "7": (1, 1, 1, 0.81)}  # q1..q8 by pandas' row; None: the metric raised
GOLD = {"0": 1, "1": 0, "2": 0, "3": 1, "4": 1, "5": 1}  # pass / fail; rows 6 and 7 are not labeled


def plan(threshold: float) -> dict[str, tuple[tuple[int | None, ...], int | None]]:
    return {row: (tuple(None if s is None else int(s >= threshold) for s in scores), GOLD.get(row))
            for row, scores in SCORES.items()}


@pytest.mark.parametrize("name", ["results.csv", "results.jsonl", "results.parquet"])
def test_doctor_and_fit(name: str, tmp_path: Path) -> None:
    path = FIXTURES / "ragas" / name
    (d,) = doctor(path, "--threshold", "0.5")
    assert (d["format"], d["items"], d["unlabeled_items"]) == ("ragas", 6, 2)
    assert [j["name"] for j in d["judges"]] == list(METRICS) and d["roles"]["gold"] == "human_label"
    assert "clusters" not in d  # rows are independent items
    canon = tmp_path / "canonical.jsonl"
    canon.write_text(canonical(plan(0.5), METRICS), encoding="utf-8")
    read_alike(path, canon, "--threshold", "0.5")
    if name == "results.csv":  # and fit's document is the canonical one (every format reads into the same dataset)
        assert _fit(path, "--threshold", "0.5", *CHEAP) == _fit(canon, *CHEAP)


def test_threshold_moves_the_verdicts(tmp_path: Path) -> None:
    canon = tmp_path / "canonical.jsonl"
    canon.write_text(canonical(plan(0.7), METRICS), encoding="utf-8")
    read_alike(FIXTURES / "ragas" / "results.csv", canon, "--threshold", "0.7")


def test_continuous_score_needs_a_threshold_and_only_ragas_takes_one(tmp_path: Path) -> None:
    res = invoke(CliRunner(), "fit", FIXTURES / "ragas" / "results.jsonl")
    assert res.exit_code == 2 and "results.jsonl: row 1: column 'grounded': a continuous score (0.92)" in res.output
    canon = tmp_path / "canonical.jsonl"
    canon.write_text(canonical(plan(0.5), METRICS), encoding="utf-8")
    res = invoke(CliRunner(), "fit", canon, "--threshold", "0.5")
    assert res.exit_code == 2 and "--threshold 0.5 reads continuous scores" in res.output and "Traceback" not in res.output


def test_labels_file_and_a_bad_cell(tmp_path: Path) -> None:
    """Without the label column every row is unlabeled and --labels joins a gold file on the row; a score that is
    not a number is an error naming the row and the column, or with --skip-invalid that row is skipped."""
    import json

    rows = [json.loads(line) for line in (FIXTURES / "ragas" / "results.jsonl").read_text().splitlines()]
    for r in rows:
        del r["human_label"]
    rows[2]["critic_claude"] = "n/a (timeout)"
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    labels = tmp_path / "gold.csv"
    labels.write_text("id,label\n0,pass\n1,fail\n3,pass\n", encoding="utf-8")
    res = invoke(CliRunner(), "doctor", path, "--threshold", "0.5")
    assert res.exit_code == 2 and "row 3: column 'critic_claude': must be a score" in res.output
    (d,) = doctor(path, "--threshold", "0.5", "--skip-invalid", "--labels", labels)
    assert (d["items"], d["unlabeled_items"], d["roles"]["gold"]) == (3, 4, "none: --labels")
    assert d["skipped"] == [{"reason": "field 'critic_claude': must be a score (a number), got \"n/a (timeout)\"",
                             "count": 1, "first": 3}]
