"""promptfoo and inspect-ai files, as the real tools wrote them (tests/fixtures), read against the ground truth that
the fixtures' generator computed from its own seeds -- never from the tools' output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from betaconform_cli.inputs import InputOptions, Keep, read_dataset
from betaconform_cli.inputs.patterns import as_dict

from .conftest import invoke

FIX = Path(__file__).parent / "fixtures"
PROMPTFOO = FIX / "promptfoo"
INSPECT = FIX / "inspect"


def truth(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def expected_matrix(doc: dict[str, Any]) -> tuple[list[str], list[str], np.ndarray]:
    """Judges, item ids and the correctness matrix of the truth, items with no verdict at all left out (a reader
    skips them, and says so)."""
    judges = [j["name"] if isinstance(j, dict) else j for j in doc["judges"]]
    rows = [(it["id"], it["correct"]) for it in doc["items"] if any(c is not None for c in it["correct"])]
    m = np.array([[np.nan if c is None else c for c in cs] for _, cs in rows], dtype=float)
    return judges, [i for i, _ in rows], m


def check(ds: Any, doc: dict[str, Any]) -> None:
    judges, ids, m = expected_matrix(doc)
    assert list(ds.judge_names) == judges
    assert [it.id for it in ds.items] == ids
    np.testing.assert_array_equal(ds.judgment_matrix(), m)
    no_verdict = [it for it in doc["items"] if all(v is None for v in it.get("verdicts", it["correct"]))]
    unlabeled = [it for it in doc["items"] if it.get("gold", "?") is None and it not in no_verdict]
    assert ds.skipped == len(no_verdict) and ds.unlabeled_items == len(unlabeled)
    if "verdicts" in doc["items"][0] and ds.votes is not None:  # every item with a verdict, labeled or not, as read
        assert as_dict(ds.votes) == expected_votes(doc)


def expected_votes(doc: dict[str, Any]) -> dict[Any, int]:
    """The truth's vote patterns (patterns.as_dict's form): pass/fail as promptfoo's 1/0 classes."""
    judges = [j["name"] if isinstance(j, dict) else j for j in doc["judges"]]

    def cls(v: Any) -> str | None:
        return None if v is None else {"pass": "1", "fail": "0"}.get(v, str(v))

    out: dict[Any, int] = {}
    for it in doc["items"]:
        pairs = tuple(sorted((j, cls(v)) for j, v in zip(judges, it["verdicts"]) if v is not None))
        if pairs:
            key = (pairs, cls(it.get("gold")))
            out[key] = out.get(key, 0) + 1
    return out


class TestPromptfoo:
    """Judges are model-graded assertions named by provider label, id or position; gold from vars or human ratings."""

    @pytest.mark.parametrize("name", ["results.json", "results.jsonl"])
    def test_gold_from_a_test_variable(self, name: str) -> None:
        ds = read_dataset(PROMPTFOO / name, InputOptions(label_field="vars.gold"), Keep.JUDGMENTS)
        check(ds, truth(PROMPTFOO / "results.expected.json"))
        assert ds.reading is not None and ds.reading.source_format == "promptfoo"

    @pytest.mark.parametrize("name", ["results_human.json", "results_human.jsonl"])
    def test_gold_from_human_ratings(self, name: str) -> None:
        check(read_dataset(PROMPTFOO / name, InputOptions(), Keep.JUDGMENTS), truth(PROMPTFOO / "results_human.expected.json"))

    def test_no_gold_is_one_line(self, runner) -> None:
        res = invoke(runner, "fit", PROMPTFOO / "results.json")
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "--label-field" in res.stderr

    def test_counts_match_the_fit(self, runner) -> None:
        res = invoke(runner, "fit", PROMPTFOO / "results.json", "--label-field", "vars.gold", "-f", "json")
        doc = json.loads(res.stdout)
        judges, _, m = expected_matrix(truth(PROMPTFOO / "results.expected.json"))
        assert doc["items"] == len(m) and doc["skipped_lines"] == 1


class TestInspect:
    """Scorers are judges, sample x epoch items; gold from the target or metadata; text or numeric scorers."""

    @pytest.mark.parametrize("run", ["main_eval", "main_json", "legacy_eval", "edge_eval", "edge_json"])
    @pytest.mark.parametrize("gold", ["target", "metadata.human", "metadata.human_score"])
    def test_against_truth(self, run: str, gold: str) -> None:
        doc = truth(INSPECT / f"{run.split('_')[0].replace('legacy', 'main')}.{gold}.expected.json")
        opts = InputOptions(label_field=gold if gold != "target" else "label", tolerance=doc.get("tolerance"))
        (log,) = (INSPECT / run).iterdir()
        check(read_dataset(log, opts, Keep.JUDGMENTS), doc)

    def test_left_out_scorers_are_explained(self) -> None:
        (log,) = (INSPECT / "edge_json").iterdir()
        ds = read_dataset(log, InputOptions(), Keep.JUDGMENTS)
        notes = " ".join(ds.reading.notes)  # type: ignore[union-attr]
        assert "judge_score" in notes and "judge_multi" in notes

    def test_a_log_directory_is_read(self, runner) -> None:
        res = invoke(runner, "fit", INSPECT / "main_json", "-f", "json")
        assert res.exit_code == 0 and json.loads(res.stdout)["dataset"] == "judges"

    def test_without_the_extra(self) -> None:
        """The standard library reads .json logs and deflate archives; a zstd archive says what to install. In a fresh
        process with inspect-ai hidden (once imported, inspect-ai teaches zipfile zstd)."""
        code = (
            "import sys; sys.modules['inspect_ai'] = None\n"
            "from pathlib import Path\n"
            "from betaconform_cli.errors import InputError\n"
            "from betaconform_cli.inputs import InputOptions, Keep, read_dataset\n"
            "for run in ('main_json', 'legacy_eval'):\n"
            "    (log,) = Path(sys.argv[1], run).iterdir()\n"
            "    print(run, read_dataset(log, InputOptions(), Keep.JUDGMENTS).judgment_matrix().tolist())\n"
            "(log,) = Path(sys.argv[1], 'main_eval').iterdir()\n"
            "try:\n"
            "    read_dataset(log, InputOptions(), Keep.JUDGMENTS)\n"
            "except InputError as exc:\n"
            "    print('error', exc)\n"
        )
        out = subprocess.run([sys.executable, "-c", code, str(INSPECT)], capture_output=True, text=True, check=True).stdout
        _, _, m = expected_matrix(truth(INSPECT / "main.target.expected.json"))
        lines = out.splitlines()
        for line, run in zip(lines, ("main_json", "legacy_eval")):
            assert line.startswith(run) and np.array_equal(np.array(eval(line.split(" ", 1)[1].replace("nan", "float('nan')"))), m, equal_nan=True)
        assert lines[2].startswith("error") and "zstd" in lines[2] and "inspect" in lines[2]
