"""`betaconform judges` end to end: the JSON the issue names, exit codes, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .conftest import SAMPLE, invoke

CODE = SAMPLE / "code_review.jsonl"  # 7 named judges, some items with a judge missing


def write_named(path: Path, rows: list[dict[str, int | None]]) -> Path:
    path.write_text("".join(json.dumps({"id": f"i{i}", "judgments": r}) + "\n" for i, r in enumerate(rows)))
    return path


class TestOutput:
    """The issue's JSON fields, the default ks, and the named ensemble beside fit's estimators."""

    def test_json_fields(self, runner) -> None:
        res = invoke(runner, "judges", CODE, "-f", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["schema"] == "betaconform/1" and doc["command"] == "judges" and doc["dataset"] == "code_review"
        assert {"name", "accuracy", "low", "high", "items"} <= set(doc["judges"][0])
        assert {"a", "b", "both_wrong", "expected_if_independent"} <= set(doc["pairs"][0])
        assert {"k", "members", "estimate", "low", "high", "random_k", "all_judges"} <= set(doc["ensembles"][0])
        assert [e["k"] for e in doc["ensembles"]] == [1, 3, 5, 7]  # odd k up to the 7 judges
        names = [j["name"] for j in doc["judges"]]
        assert names == sorted(names) and names[:2] == ["claude-3.5", "command-r"] and len(names) == 7  # by name: line order cannot move them
        for e in doc["ensembles"]:
            assert len(e["members"]) == e["k"] and set(e["members"]) <= set(names)
            assert e["low"] <= e["estimate"] <= e["high"]

    def test_accuracy_is_each_judges_own(self, runner) -> None:
        """Per-judge accuracy: the share of its verdicts that agreed with gold, counted here independently."""
        res = invoke(runner, "judges", CODE, "-f", "json")
        doc = json.loads(res.stdout)
        rows = [json.loads(line)["judgments"] for line in CODE.read_text().splitlines()]
        for j in doc["judges"]:
            marks = [r[j["name"]] for r in rows if r.get(j["name"]) is not None]
            assert j["items"] == len(marks) and j["accuracy"] == np.mean(marks)

    def test_named_ensemble(self, runner) -> None:
        res = invoke(runner, "judges", CODE, "--ensemble", "gpt-4o,claude-3.5,gemini-1.5", "-f", "json")
        e = json.loads(res.stdout)["ensemble"]
        assert e["members"] == ["claude-3.5", "gemini-1.5", "gpt-4o"] and e["low"] <= e["estimate"] <= e["high"]
        assert {"estimate", "low", "high", "binomial", "beta_binomial"} <= set(e["fit"])

    def test_table_and_csv(self, runner) -> None:
        res = invoke(runner, "judges", CODE)
        assert res.exit_code == 0 and "the ensemble to run for each size k" in res.stdout and "shared mistakes" in res.stdout
        csv_out = invoke(runner, "judges", CODE, "-f", "csv").stdout.splitlines()
        assert csv_out[0].startswith("dataset,k,members,estimate") and len(csv_out) == 5


class TestCost:
    """--cost with --max-error: the cheapest ensemble under the limit, or exit 1 saying none is."""

    def test_met_and_not_met(self, runner) -> None:
        prices = "gpt-4o=5,claude-3.5=4,llama-3-70b=1,qwen-2.5-72b=1,gemini-1.5=3,mistral-large=2,command-r=1"
        ok = invoke(runner, "judges", CODE, "--cost", prices, "--max-error", "0.9", "-f", "json")
        assert ok.exit_code == 0 and json.loads(ok.stdout)["cost"]["met"]
        strict = invoke(runner, "judges", CODE, "--cost", prices, "--max-error", "0.01")
        assert strict.exit_code == 1 and "no ensemble meets max error 1.0%" in strict.stderr


class TestBadInput:
    """One line, exit 2."""

    def test_errors(self, runner, tmp_path: Path) -> None:
        one = write_named(tmp_path / "one.jsonl", [{"a": 1}, {"a": 0}, {"a": 1}])
        cases = [
            ([one], "at least 2"),
            ([CODE, "--ensemble", "gpt-4o,nobody"], "gpt-4o"),  # the known judges are listed
            ([CODE, "--cost", "nobody=1", "--max-error", "0.2"], "nobody"),
            ([CODE, "--cost", "gpt-4o=-1", "--max-error", "0.2"], "gpt-4o"),
            ([CODE, "--cost", "gpt-4o"], "--cost"),
            ([SAMPLE / "counts_only.jsonl"], "per-judge"),
        ]
        for args, needle in cases:
            res = invoke(runner, "judges", *args)
            assert res.exit_code == 2 and res.stderr.count("\n") == 1 and needle in res.stderr, (args, res.stderr)

    def test_judges_that_never_meet(self, runner, tmp_path: Path) -> None:
        rows = [{"a": 1, "b": 0, "c": None} if i % 2 else {"a": 0, "b": None, "c": 1} for i in range(20)]
        res = invoke(runner, "judges", write_named(tmp_path / "apart.jsonl", rows), "-f", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert ["b", "c"] in doc["pairs_without_data"]
        bc = next(p for p in doc["pairs"] if {p["a"], p["b"]} == {"b", "c"})
        assert bc["both_wrong"] is None and bc["expected_if_independent"] is None
