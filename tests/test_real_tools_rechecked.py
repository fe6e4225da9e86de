"""Readers checked again on files the real tools wrote in ways the first fixtures did not use (issue 29, "checked
again"; docs/FORMATS.md "Checked again"). One small fixture and one cheap test per reader bug found; the truth comes
from each fixture's plan, never from the tool's file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

from betaconform_cli.inputs import InputOptions, Keep, read_dataset
from betaconform_cli.inputs.options import RecordFields

from .conftest import invoke

FIXTURES = Path(__file__).parent / "fixtures"


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"rechecked_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


class TestPromptfooRepeatAndPrompts:
    """`promptfoo eval --repeat 2` with two prompts (tests/fixtures/promptfoo/make_repeat.sh): before, the second
    prompt's result and every repeat were taken for the same item given again (an error asking for --duplicates)."""

    def test_prompts_are_items_and_repeats_one_cluster(self) -> None:
        plan = _module(FIXTURES / "promptfoo" / "plan.py")
        ds = read_dataset(FIXTURES / "promptfoo" / "repeat.jsonl", InputOptions(record=RecordFields(label_field="vars.gold")),
                          Keep.JUDGMENTS)
        assert list(ds.judge_names) == ["strict", "file://judge_plain.py"]
        items = [it.id for it in ds.items or ()]
        # 2 tests x 2 prompts x 2 repeats: eight items, each (test, prompt) once per repeat
        assert len(items) == len(set(items)) == 8
        assert sum("[Reply in one sentence: {{question}}] #2" in i for i in items) == 2
        assert ds.clusters is not None and ds.clusters.clusters == 4
        gold = {"q01": "pass", "q02": "fail"}
        want = [[float(plan.verdict(plan.judge_by_key(k), i[:3]) == gold[i[:3]]) for k in ("strict", "plain")] for i in items]
        np.testing.assert_array_equal(ds.judgment_matrix(), np.array(want))

    def test_tests_sharing_a_description_stay_apart(self, tmp_path: Path) -> None:
        """Different tests (vars apart) given one description are different items, each named by its testIdx too:
        before, the second was "the same item given again" (an error whose remedy, --duplicates, dropped tests)."""
        import json

        doc = json.loads((FIXTURES / "promptfoo" / "results.json").read_text(encoding="utf-8"))
        for r in doc["results"]["results"]:
            r["testCase"]["description"] = "factuality"
        (tmp_path / "same.json").write_text(json.dumps(doc), encoding="utf-8")
        opts = InputOptions(record=RecordFields(label_field="vars.gold"))
        ds = read_dataset(tmp_path / "same.json", opts, Keep.JUDGMENTS)
        want = read_dataset(FIXTURES / "promptfoo" / "results.json", opts, Keep.JUDGMENTS)
        assert [it.id for it in ds.items or ()][:2] == ["factuality (test 0)", "factuality (test 1)"]
        np.testing.assert_array_equal(ds.judgment_matrix(), want.judgment_matrix())

    def test_grader_from_options_provider_is_named(self) -> None:
        """An llm-rubric graded by defaultTest.options.provider or by `eval --grader` (no provider of its own): before,
        "assertion 0"."""
        plan = _module(FIXTURES / "promptfoo" / "plan.py")
        ds = read_dataset(FIXTURES / "promptfoo" / "options_provider.json",
                          InputOptions(record=RecordFields(label_field="vars.gold")), Keep.JUDGMENTS)
        assert list(ds.judge_names) == ["strict", "file://judge_plain.py"]
        gold = {"q01": "pass", "q02": "fail"}
        want = [[float(plan.verdict(plan.judge_by_key(k), it.id[:3]) == gold[it.id[:3]]) for k in ("strict", "plain")]
                for it in ds.items or ()]
        np.testing.assert_array_equal(ds.judgment_matrix(), np.array(want))
        # `eval --grader file://judge_plain.py`: promptfoo writes the provider object (no id, an empty label)
        ds = read_dataset(FIXTURES / "promptfoo" / "grader_flag.json.gz",
                          InputOptions(record=RecordFields(label_field="vars.gold")), Keep.JUDGMENTS)
        assert list(ds.judge_names) == ["file://judge_plain.py"]
        want = [[float(plan.verdict(plan.judge_by_key("plain"), it.id[:3]) == gold[it.id[:3]])] for it in ds.items or ()]
        np.testing.assert_array_equal(ds.judgment_matrix(), np.array(want))

    def test_csv_and_yaml_outputs_are_refused_with_what_to_write(self, runner) -> None:
        """promptfoo's CSV output has no grader verdicts; its YAML output was taken for a saved fit ("show it with
        betaconform report")."""
        for name, why in (("repeat.csv", "not the graders' verdicts"), ("first_result.yaml", "promptfoo results written as YAML")):
            res = invoke(runner, "doctor", FIXTURES / "promptfoo" / name)
            line = res.output.strip()
            assert res.exit_code == 2 and "\n" not in line and name in line and why in line and "-o results.json" in line


class TestMlflowEvaluate:
    """mlflow.genai.evaluate with three make_judge judges of one name (tests/fixtures/mlflow_rechecked/evaluate/make.sh): each
    model is a judge, the expectation is the gold, and the judge that failed (MLflow records the failure as a CODE
    feedback with an error) gives no verdict there; the note says so (before: "1 CODE assessment(s)", unexplained)."""

    def test_judges_gold_and_the_failed_scorer(self, runner) -> None:
        plan = _module(FIXTURES / "mlflow_rechecked" / "evaluate" / "plan.py")
        ds = read_dataset(FIXTURES / "mlflow_rechecked" / "evaluate" / "evaluated.jsonl", InputOptions(), Keep.JUDGMENTS)
        assert sorted(ds.judge_names) == [f"openai:/{m}" for m in plan.JUDGES]
        nums = [int(str(it.text).split("item-")[1].split(":")[0]) for it in ds.items or ()]
        assert sorted(nums) == list(plan.ITEMS)
        want = [[np.nan if (v := plan.verdict(j.removeprefix("openai:/"), n)) is None else float(v == plan.gold(n))
                 for j in ds.judge_names] for n in nums]
        np.testing.assert_array_equal(ds.judgment_matrix(), np.array(want))
        notes = " ".join(invoke(runner, "doctor", FIXTURES / "mlflow_rechecked" / "evaluate" / "evaluated.jsonl").output.split())
        assert "1 CODE assessment(s) with an error (SCORER_ERROR: a scorer that failed, no verdict)" in notes


class TestInspectRunThatStopped:
    """An inspect-ai eval that stopped on an error (tests/fixtures/inspect_rechecked/make.sh): the log (status "error")
    holds the samples scored before and the failed ones; before, it was read as a finished run, silently."""

    def test_read_what_it_holds_and_say_it_did_not_finish(self, runner) -> None:
        task = _module(FIXTURES / "inspect_rechecked" / "task.py")
        log = next((FIXTURES / "inspect_rechecked" / "logs").iterdir())
        ds = read_dataset(log, InputOptions(), Keep.JUDGMENTS)
        got = {it.id: row[0] for it, row in zip(ds.items or (), ds.judgment_matrix())}
        # a3 raised; a4, run after it, was cancelled when the eval stopped: neither has a score
        assert got == {s: float(task.SAYS[s] == task.TARGETS[s]) for s in ("a1", "a2")} == {"a1": 1.0, "a2": 0.0}
        out = " ".join(invoke(runner, "doctor", log).output.split())
        assert "the log's status is 'error' (the eval did not finish: RuntimeError('solver crashed on purpose'))" in out
        assert "2 sample-epoch(s) ended in an error (first: a3#1: RuntimeError" in out


def test_mlflow_cli_search_json_is_read() -> None:
    """`mlflow traces search --output json` (tests/fixtures/mlflow_rechecked/cli/make.sh) writes {"traces": [...],
    "next_page_token": ...}; before, it was "neither a promptfoo results file nor ..." (exit 2)."""
    plan = _module(FIXTURES / "mlflow_rechecked" / "cli" / "plan.py")
    ds = read_dataset(FIXTURES / "mlflow_rechecked" / "cli" / "search.json", InputOptions(), Keep.JUDGMENTS)
    assert list(ds.judge_names) == ["j1", "j2"]
    nums = [int(str(it.text).split("item-")[1][0]) for it in ds.items or ()]
    assert sorted(nums) == list(plan.ITEMS)
    want = [[float(plan.verdict(j, n) == plan.gold(n)) for j in ("j1", "j2")] for n in nums]
    np.testing.assert_array_equal(ds.judgment_matrix(), np.array(want))


def test_inspect_boolean_scorer_against_boolean_gold() -> None:
    """A scorer giving booleans with a person's boolean label (tests/fixtures/inspect_rechecked/bools.py): before, the
    booleans were "boolean values that cannot be compared with text gold" and the log was refused. A 1/0 scorer stays
    apart from boolean gold (the value rule: 1 and true are two classes)."""
    task = _module(FIXTURES / "inspect_rechecked" / "bools.py")
    log = next((FIXTURES / "inspect_rechecked" / "logs_bool").iterdir())
    ds = read_dataset(log, InputOptions(record=RecordFields(label_field="metadata.human")), Keep.JUDGMENTS)
    assert list(ds.judge_names) == ["boolean"]
    got = {it.id: row[0] for it, row in zip(ds.items or (), ds.judgment_matrix())}
    assert got == {s: float(task.SAYS[s] == h) for s, h in task.HUMAN.items()}
    assert ds.reading is not None and any("integer: left out" in n for n in ds.reading.notes)


def test_deepeval_test_run_folder_and_a_metric_that_raised(runner) -> None:
    """`deepeval test run` (tests/fixtures/deepeval_testrun/make.sh) leaves .deepeval/ with the run twice and a
    metric cache: the folder is read as one run (before: the run twice and an error on the cache). A metric that
    raised is written as `success: false` with no score and no error: no verdict (before: a fail it never gave)."""
    plan = _module(FIXTURES / "deepeval_testrun" / "plan.py")
    folder = FIXTURES / "deepeval_testrun" / ".deepeval"
    ds = read_dataset(folder / ".latest_run_full.json", InputOptions(), Keep.JUDGMENTS)
    assert list(ds.judge_names) == [f"Correctness [GEval] [{m}]" for m in plan.MODELS]
    cases = [int(it.id.removeprefix("case_")) for it in ds.items or ()]
    want = [[np.nan if (m, c) == plan.RAISES else float(plan.passes(m, c) == (plan.label(c) == "pass")) for m in plan.MODELS]
            for c in cases]
    assert sorted(cases) == list(plan.CASES)
    np.testing.assert_array_equal(ds.judgment_matrix(), np.array(want))
    res = invoke(runner, "doctor", folder, "-f", "json")
    assert res.exit_code == 0 and res.stdout.count('"format"') == 1 and "metric cache" in res.output


def test_inspect_eval_set_directory(runner) -> None:
    """`inspect eval-set` writes logs.json and eval-set.json beside the logs (tests/fixtures/inspect_rechecked/
    evalset/): skipped with a note; before, the directory was refused on them."""
    res = invoke(runner, "doctor", FIXTURES / "inspect_rechecked" / "evalset", "--label-field", "metadata.human")
    assert res.exit_code == 0 and "inspect, 4 items" in res.output
    assert "logs.json: skipped, inspect-ai's eval-set index" in res.output and "eval-set.json: skipped" in res.output
