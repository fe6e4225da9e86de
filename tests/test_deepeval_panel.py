"""DeepEval with one metric class run as a panel (issue 29 done-when re-check): a test run DeepEval wrote
(tests/fixtures/deepeval/make.sh, run_panel.py) holds two metrics named "Answer Relevancy" (models gpt-4o and
claude-3) and two named "geval" (no model). Each is its own judge; before, the log was refused as duplicates.
Truth from run_panel.py's hashes and thresholds, never from the file."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import numpy as np

from betaconform_cli.inputs import InputOptions, Keep, read_dataset

from .conftest import invoke

FIX = Path(__file__).parent / "fixtures" / "deepeval"
RUN = next((FIX / "results_panel").glob("test_run_*.json"))
JUDGES = ["Answer Relevancy [gpt-4o]", "Answer Relevancy [claude-3]", "geval #1", "geval #2", "boom"]


def plan() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deepeval_run_panel", FIX / "run_panel.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_repeated_metric_names_are_separate_judges() -> None:
    p = plan()
    gold = {True: 1, False: 0, "pass": 1}  # 1 and 0 hash as True and False
    rows = []
    for case, label in enumerate(p.LABELS[:-1]):  # the last case has no label
        says = [None if (name, case) == p.RAISES else int(p.score(name, model, case) >= t) for name, t, model in p.METRICS]
        rows.append([np.nan if v is None else float(v == gold[label]) for v in says])
    ds = read_dataset(RUN, InputOptions(), Keep.JUDGMENTS)
    assert list(ds.judge_names) == JUDGES
    order = {it.id: i for i, it in enumerate(ds.items or ())}
    got = ds.judgment_matrix()[[order[f"test_case_{c}"] for c in range(5)]]
    np.testing.assert_array_equal(got, np.array(rows))


def test_doctor_counts_the_unlabeled_case(runner) -> None:
    doc = json.loads(invoke(runner, "doctor", RUN, "-f", "json").stdout)
    assert doc["items"] == 5 and doc["unlabeled_items"] == 1 and [j["name"] for j in doc["judges"]] == JUDGES
