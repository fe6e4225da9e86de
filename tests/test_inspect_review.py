"""inspect-ai as teams write it (issue 29 done-when re-check): the target is a reference answer ("Paris"), scorers
grade C/I, and a human edited some scores. The edits are the gold of their samples; the target is no verdict, so the
other samples are unlabeled (before the fix they were "labeled" with "Lima" and every verdict on them counted wrong).

The logs were written by inspect-ai (tests/fixtures/inspect_review/make.sh); the truth comes from task.py's hashes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from .conftest import invoke

HERE = Path(__file__).parent / "fixtures" / "inspect_review"
RAW = next((HERE / "logs").glob("*.eval"))
REVIEWED = HERE / "logs" / "reviewed" / "reviewed.eval"
JUDGES = ("ja", "jb", "jc")


def task() -> ModuleType:
    """task.py's plan without inspect's decorators: only its pure helpers are used."""
    spec = importlib.util.spec_from_file_location("inspect_review_task", HERE / "task.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_edits_are_the_gold_and_reference_targets_leave_the_rest_unlabeled(runner) -> None:
    t = task()
    doc = json.loads(invoke(runner, "doctor", REVIEWED, "-f", "json").stdout)
    assert doc["items"] == 3 and doc["unlabeled_items"] == 3  # items: the labeled ones
    assert any("reference answers, not verdicts" in n for n in doc["notes"])
    fit = json.loads(invoke(runner, "fit", REVIEWED, "-f", "json").stdout)
    # independent truth: on the reviewed samples c0..c2 a judge is right unless its hash flipped it
    correct = [sum(t.uniform(j, f"c{i}") >= 0.25 for j in JUDGES) for i in range(3)]
    assert fit["histogram"] == {"3": [correct.count(k) for k in range(4)]}


def test_unreviewed_log_with_reference_targets_is_refused(runner) -> None:
    res = invoke(runner, "fit", RAW)
    assert res.exit_code == 2 and "share no class" in res.output and "Traceback" not in res.output


def test_labels_file_gives_gold_beside_reference_targets(runner, tmp_path: Path) -> None:
    """--labels on the unreviewed log: the file's labels are the gold (before, each contradicted target "Paris")."""
    t = task()
    rows = [(f"c{i}", "C" if t.answer_of(f"c{i}") == t.CAPITALS[i][1] else "I") for i in (1, 3, 4, 5)]
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label\n" + "".join(f"{i},{g}\n" for i, g in rows), encoding="utf-8")
    doc = json.loads(invoke(runner, "fit", RAW, "--labels", labels, "-f", "json").stdout)
    correct = [sum(t.uniform(j, i) >= 0.25 for j in JUDGES) for i, _ in rows]
    assert doc["items"] == 4 and doc["unlabeled_items"] == 2
    assert doc["histogram"] == {"3": [correct.count(k) for k in range(4)]}
