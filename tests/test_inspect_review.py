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
    assert any("human edits of 3 sample(s)" in n and "unlabeled" in n for n in doc["notes"])
    fit = json.loads(invoke(runner, "fit", REVIEWED, "-f", "json").stdout)
    # independent truth: on the reviewed samples c0..c2 a judge is right unless its hash flipped it
    correct = [sum(t.uniform(j, f"c{i}") >= 0.25 for j in JUDGES) for i in range(3)]
    assert fit["histogram"] == {"3": [correct.count(k) for k in range(4)]}


def test_unreviewed_log_with_reference_targets_is_refused(runner) -> None:
    res = invoke(runner, "fit", RAW)
    assert res.exit_code == 2 and "share no class" in res.output and "Traceback" not in res.output
