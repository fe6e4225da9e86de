"""DeepEval, lm-evaluation-harness and OpenAI evals files as the real tools wrote them (tests/fixtures/<tool>/make.sh,
offline, with planned judges), read against the truth that each fixture's plan computes from its own seeds, never
from the tool's output (issue 29 item 2)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from betaconform_cli.inputs import InputOptions, Keep, read_dataset

from .conftest import invoke

FIX = Path(__file__).parent / "fixtures"
DEEPEVAL = next((FIX / "deepeval" / "results").glob("test_run_*.json"))
LM_EVAL = next((FIX / "lm_eval" / "output").glob("*/samples_judge_answers_*.jsonl"))
OAI = FIX / "openai_evals" / "logs"


def plan(tool: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{tool}_plan", FIX / tool / "plan.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def deepeval_truth() -> tuple[list[str], list[str], list[list[int | None]], list[int]]:
    """(judges, case names, marks per case (None: no verdict or no gold), the unlabeled cases' indices)."""
    p = plan("deepeval")
    judges = [m[0] for m in p.METRICS]
    names, rows, unlabeled = [], [], []
    for i, (_, _, label) in enumerate(p.CASES):
        names.append(f"case_{i:02d}")
        if label is None:
            unlabeled.append(i)
        row: list[int | None] = []
        for name, _, threshold in p.METRICS:
            verdict = None if (name, i) == p.RAISES else p.score(name, i) >= threshold
            row.append(None if verdict is None or label is None else int(verdict == (label == "pass")))
        rows.append(row)
    return judges, names, rows, unlabeled


def lm_eval_truth() -> tuple[list[str], list[list[int]]]:
    p = plan("lm_eval")
    return ["exact_match,strict", "exact_match,loose"], [[int(p.exact_match(d, f)) for f in ("strict", "loose")]
                                                         for d in range(len(p.DOCS))]


def oai_truth(run: str) -> tuple[list[str], dict[str, list[int | None]]]:
    p = plan("openai_evals")
    graders = ["g1"] if run == "judge-meta" else list(p.GRADERS)
    names = ["planned-g1"] if run == "judge-meta" else graders
    rows = {f"{run}.dev.{i}": [None if (g, i) == p.INVALID else int(p.says(g, i) == human) for g in graders]
            for i, (_, _, human) in enumerate(p.SAMPLES)}
    return names, rows


def matrix(ds: Any, ids: list[str], every: bool = True) -> np.ndarray:
    order = {it.id: i for i, it in enumerate(ds.items)}
    assert sorted(order) == sorted(ids) or not every
    return ds.judgment_matrix()[[order[i] for i in ids]]  # type: ignore[no-any-return]


def nan(rows: list[list[int | None]]) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)


def canonical(tmp_path: Path, judges: list[str], rows: dict[str, list[int | None]]) -> Path:
    """The same items as JSON Lines of judgments, written here from the plan."""
    out = tmp_path / "canon.jsonl"
    out.write_text("".join(json.dumps({"id": i, "judgments": dict(zip(judges, r))}) + "\n" for i, r in rows.items()
                           if any(v is not None for v in r)), encoding="utf-8")
    return out


def same_histogram(runner, tmp_path: Path, path: Path, judges: list[str], rows: dict[str, list[int | None]],
                   *extra: str) -> dict[str, Any]:
    a = invoke(runner, "fit", path, "-f", "json", *extra)
    b = invoke(runner, "fit", canonical(tmp_path, judges, rows), "-f", "json")
    assert a.exit_code == 0 and b.exit_code == 0, a.stderr + b.stderr
    da, db = json.loads(a.stdout), json.loads(b.stdout)
    assert da["histogram"] == db["histogram"] and da["items"] == db["items"]
    return da  # type: ignore[no-any-return]


class TestDeepEval:
    def test_against_the_plan(self) -> None:
        judges, names, rows, unlabeled = deepeval_truth()
        ds = read_dataset(DEEPEVAL, InputOptions(), Keep.JUDGMENTS)
        labeled = [n for i, n in enumerate(names) if i not in unlabeled]
        assert list(ds.judge_names) == judges and ds.unlabeled_items == len(unlabeled) == 2
        np.testing.assert_array_equal(matrix(ds, labeled), nan([r for i, r in enumerate(rows) if i not in unlabeled]))

    def test_doctor(self, runner) -> None:
        doc = json.loads(invoke(runner, "doctor", DEEPEVAL, "-f", "json").stdout)
        assert doc["format"] == "deepeval" and doc["roles"]["gold"] == "metadata.label"
        assert [(j["name"], j["verdicts"]) for j in doc["judges"]] == [("strict_judge", 10), ("lenient_judge", 10), ("flaky_judge", 9)]
        assert doc["items"] == 10 and doc["unlabeled_items"] == 2 and "clusters" not in doc

    def test_fit_histogram(self, runner, tmp_path: Path) -> None:
        judges, names, rows, unlabeled = deepeval_truth()
        same_histogram(runner, tmp_path, DEEPEVAL, judges, {n: r for i, (n, r) in enumerate(zip(names, rows)) if i not in unlabeled})

    def test_labels_file_joins_on_the_case_name(self, tmp_path: Path) -> None:
        """The two cases DeepEval has no label for get theirs from --labels; a label contradicting the run's is an
        error naming the labels file's row."""
        p = plan("deepeval")
        labels = tmp_path / "labels.csv"
        labels.write_text("id,label\ncase_04,pass\ncase_09,fail\n", encoding="utf-8")
        ds = read_dataset(DEEPEVAL, InputOptions(labels=str(labels)), Keep.JUDGMENTS)
        assert ds.n_items == 12 and ds.unlabeled_items == 0
        row = matrix(ds, ["case_04"], every=False)[0]
        want = [int((p.score(n, 4) >= t) == True) for n, _, t in p.METRICS]  # noqa: E712 - label "pass"
        np.testing.assert_array_equal(row, want)
        labels.write_text("id,label\ncase_00,fail\n", encoding="utf-8")  # case_00's own label is pass
        from betaconform_cli.errors import InputError

        with pytest.raises(InputError, match="contradicts the labels file"):
            read_dataset(DEEPEVAL, InputOptions(labels=str(labels)), Keep.JUDGMENTS)

    def test_latest_test_run_wraps_the_run(self, tmp_path: Path) -> None:
        """.deepeval/.latest_test_run.json holds the run under testRunData: read alike, known by content."""
        wrapped = tmp_path / ".latest_test_run.json"
        wrapped.write_text(json.dumps({"testRunData": json.loads(DEEPEVAL.read_text(encoding="utf-8"))}), encoding="utf-8")
        a, b = (read_dataset(p, InputOptions(), Keep.JUDGMENTS) for p in (DEEPEVAL, wrapped))
        assert b.reading is not None and b.reading.source_format == "deepeval"
        np.testing.assert_array_equal(a.judgment_matrix(), b.judgment_matrix())

    def test_a_bad_gold_is_one_line(self, runner, tmp_path: Path) -> None:
        doc = json.loads(DEEPEVAL.read_text(encoding="utf-8"))
        doc["testCases"][3]["metadata"]["label"] = "maybe"
        bad = tmp_path / "run.json"
        bad.write_text(json.dumps(doc), encoding="utf-8")
        res = invoke(runner, "fit", bad)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1
        assert "test case 4" in res.stderr and "testCases[3].metadata.label" in res.stderr and "maybe" in res.stderr


class TestLmEval:
    def test_against_the_plan(self) -> None:
        judges, rows = lm_eval_truth()
        ds = read_dataset(LM_EVAL, InputOptions(), Keep.JUDGMENTS)
        assert ds.name == "judge_answers" and list(ds.judge_names) == judges
        np.testing.assert_array_equal(matrix(ds, [str(d) for d in range(len(rows))]), np.array(rows, dtype=float))

    def test_doctor_and_fit(self, runner, tmp_path: Path) -> None:
        doc = json.loads(invoke(runner, "doctor", LM_EVAL, "-f", "json").stdout)
        assert doc["format"] == "lm_eval" and doc["items"] == 14 and doc["unlabeled_items"] == 0
        assert [j["name"] for j in doc["judges"]] == lm_eval_truth()[0] and doc["roles"]["gold"].startswith("target")
        judges, rows = lm_eval_truth()
        same_histogram(runner, tmp_path, LM_EVAL, judges, {str(d): list(r) for d, r in enumerate(rows)})

    def test_its_results_file_says_what_to_read(self, runner) -> None:
        res = invoke(runner, "fit", next(LM_EVAL.parent.glob("results_*.json")))
        assert res.exit_code == 2 and "samples_<task>_<date>.jsonl" in res.stderr

    def test_the_folder_lm_eval_wrote_reads_its_samples(self, runner) -> None:
        """The folder `--output_path` fills (results_<date>.json beside samples_*): its samples are read and the
        results file is skipped with a note; before, the folder was refused (exit 2) for the results file."""
        res = invoke(runner, "fit", LM_EVAL.parent, "-f", "json")
        assert res.exit_code == 0 and json.loads(res.stdout)["items"] == 14
        assert "results_" in res.stderr and "skipped, lm-evaluation-harness's aggregated results" in res.stderr

    def test_a_non_binary_metric_is_left_out(self, tmp_path: Path) -> None:
        lines = [json.loads(x) for x in LM_EVAL.read_text(encoding="utf-8").splitlines()]
        for x in lines:
            x["metrics"].append("bleu")
            x["bleu"] = 37.5
        path = tmp_path / "samples_t_2026-01-01T00-00-00.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        ds = read_dataset(path, InputOptions(), Keep.JUDGMENTS)
        assert "bleu,strict" not in ds.judge_names and any("bleu,strict: left out" in n for n in ds.reading.notes)  # type: ignore[union-attr]


class TestOpenAIEvals:
    @pytest.mark.parametrize("run", ["judge-meta", "judge-panel"])
    def test_against_the_plan(self, run: str) -> None:
        judges, rows = oai_truth(run)
        ds = read_dataset(OAI / f"{run}.jsonl", InputOptions(), Keep.JUDGMENTS)
        assert ds.name == run and list(ds.judge_names) == judges
        np.testing.assert_array_equal(matrix(ds, list(rows)), nan(list(rows.values())))

    def test_doctor_and_fit(self, runner, tmp_path: Path) -> None:
        doc = json.loads(invoke(runner, "doctor", OAI / "judge-panel.jsonl", "-f", "json").stdout)
        assert doc["format"] == "openai_evals" and doc["items"] == 10 and doc["unlabeled_items"] == 0
        assert [(j["name"], j["verdicts"]) for j in doc["judges"]] == [("g1", 10), ("g2", 10), ("g3", 9)]
        judges, rows = oai_truth("judge-panel")
        same_histogram(runner, tmp_path, OAI / "judge-panel.jsonl", judges, rows)

    def test_a_bad_metascore_is_one_line(self, runner, tmp_path: Path) -> None:
        lines = (OAI / "judge-meta.jsonl").read_text(encoding="utf-8").splitlines()
        rec = json.loads(lines[4])
        rec["data"]["metascore"] = "sometimes"
        lines[4] = json.dumps(rec)
        bad = tmp_path / "log.jsonl"
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        res = invoke(runner, "fit", bad)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "log.jsonl:5:" in res.stderr and "data.metascore" in res.stderr
