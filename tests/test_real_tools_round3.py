"""Readers checked on files the real tools wrote, round 3 (docs/FORMATS.md "Checked again, round 3"): a real Phoenix
server's exports, MLflow 3.18, Ragas multi-turn, lm-eval groups, promptfoo max-score. One small fixture and one cheap
test per reader bug found; the truth comes from each fixture's plan, never from the tool's file."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from betaconform_cli.inputs import InputOptions, Keep, read_inputs

from .conftest import invoke

FIXTURES = Path(__file__).parent / "fixtures"


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"round3_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _classes(path: Path, opts: InputOptions = InputOptions()) -> dict[str, dict[str, dict[str, str]]]:
    """{dataset: {item: {judge or "GOLD": class}}}: what the reader made of every item, labeled or not."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for ds in read_inputs([path], opts, Keep.ITEMS, need_labels=False):
        v = ds.votes
        assert v is not None and v.ids is not None and v.item_pattern is not None
        for item, p in zip(v.ids, v.item_pattern, strict=True):
            row = {j: v.classes[c] for j, c in zip(v.judges, v.patterns[p], strict=True) if c >= 0}
            out.setdefault(ds.name, {})[item] = row | ({"GOLD": v.classes[v.gold[p]]} if v.gold[p] >= 0 else {})
    return out


class TestPhoenixServer:
    """A real Phoenix server's REST exports of trace and session annotations (tests/fixtures/phoenix_server/make.sh):
    before, a trace annotation (`trace_id`, `source` API) was claimed by the Langfuse reader ("judge 'API' gives item
    ... a second verdict") and session annotations (`session_id`) were no known format."""

    @pytest.mark.parametrize(("kind", "field"), [("trace", "trace_id"), ("session", "session_id")])
    def test_trace_and_session_annotations(self, runner, kind: str, field: str) -> None:
        here = FIXTURES / "phoenix_server"
        plan = _module(here / "plan.py")
        ids = json.loads((here / "ids.json").read_text(encoding="utf-8"))[kind]
        assert _classes(here / f"{kind}_annotations_rest.json") == plan.expected(ids)
        res = invoke(runner, "doctor", here / f"{kind}_annotations_rest.json", "-f", "json")
        doc = json.loads(res.stdout.splitlines()[0])
        assert res.exit_code == 0 and (doc["format"], doc["roles"]["item"]) == ("phoenix", field)
        assert doc["notes"] == ["left out: 8 CODE annotation(s)"]

    def test_the_clients_data_frame_as_csv(self) -> None:
        """`get_span_annotations_dataframe(...).to_csv()`: span_id the index (the first column), metadata as Python
        shows a dict. Before, the file was taken for a wide table ("column 'span_id': must be 1/0 ..."), and with
        `--from phoenix` the judge logged without an identifier was "LLM" (its metadata.model unread)."""
        here = FIXTURES / "phoenix_server"
        plan = _module(here / "plan.py")
        ids = json.loads((here / "ids.json").read_text(encoding="utf-8"))["span"]
        assert _classes(here / "annotations_frame.csv") == plan.expected(ids)

    def test_a_span_note_is_left_out_and_counted(self) -> None:
        """The REST response without `exclude_annotation_names=note` holds the span's note (name "note", HUMAN, no
        label): a comment, counted; before, it vanished unsaid."""
        here = FIXTURES / "phoenix_server"
        plan = _module(here / "plan.py")
        first = json.loads((here / "ids.json").read_text(encoding="utf-8"))["span"][:1]
        datasets = read_inputs([here / "span_notes_rest.json"], InputOptions(), Keep.ITEMS, need_labels=False)
        assert _classes(here / "span_notes_rest.json") == plan.expected(first)
        assert datasets[0].reading is not None and "left out: 1 note(s) (Phoenix's span notes, comments)" in datasets[0].reading.notes

    def test_a_question_without_gold_is_left_out_and_said(self, tmp_path: Path) -> None:
        """The file's "relevance" question has no human label: left out with a line that says so, and "correct" (7
        labeled items) is read; before, the whole file was refused, naming only the file. With no labeled question
        at all, the error names the question."""
        from betaconform_cli.errors import InputError

        path = FIXTURES / "phoenix_server" / "trace_annotations_rest.json"
        (ds,) = read_inputs([path])
        assert ds.name == "correct" and ds.table.items == 7
        assert ds.left_out == (f"{path}: dataset 'relevance' left out: no labeled items: 8 items have verdicts but no "
                               "gold label ('annotator_kind HUMAN'); label some, or give the gold in a separate file with "
                               "`labels`",)
        doc = json.loads(path.read_text(encoding="utf-8"))
        (tmp_path / "judges_only.json").write_text(json.dumps({"data": [a for a in doc["data"] if a["annotator_kind"] != "HUMAN"]}))
        with pytest.raises(InputError, match="dataset '(correct|relevance)' \\(one of 2 it holds\\): no labeled items"):
            read_inputs([tmp_path / "judges_only.json"])


@pytest.mark.parametrize("name", ["results.csv", "results.jsonl", "results.parquet"])
def test_ragas_multi_turn_without_reference(name: str) -> None:
    """Ragas' MultiTurnSample conversations judged by AspectCritic (tests/fixtures/ragas_multiturn/make.sh), none with
    a reference: before, a file whose first record held only `user_input` and metrics was no known format (JSON
    Lines: "no judgments"; CSV: the conversation taken for a judge; Parquet: "holds STRUCT values")."""
    plan = _module(FIXTURES / "ragas_multiturn" / "plan.py")
    want = {str(i - 1): {f"correct_{j}": str(v) for j in plan.JUDGES if (v := plan.verdict(j, i)) is not None}
            | ({"GOLD": str(h)} if (h := plan.human(i)) is not None else {}) for i in plan.ITEMS}
    assert _classes(FIXTURES / "ragas_multiturn" / name) == {"results": want}


def test_promptfoo_comparison_assertions_are_no_judges() -> None:
    """max-score and select-best over two providers (tests/fixtures/promptfoo/make_repeat.sh, max_score.yaml): each
    passes the output it ranks best (max-score by the other assertions' scores, with no grader) and fails the other,
    whether right or wrong. Before, both were judges ("assertion 3", "file://select_judge.py"); now left out, noted."""
    from betaconform_cli.inputs import read_dataset
    from betaconform_cli.inputs.options import RecordFields

    plan = _module(FIXTURES / "promptfoo" / "plan.py")
    ds = read_dataset(FIXTURES / "promptfoo" / "max_score.jsonl", InputOptions(record=RecordFields(label_field="vars.gold")),
                      Keep.JUDGMENTS)
    assert list(ds.judge_names) == ["strict", "file://judge_plain.py"]
    gold = {"q01": "pass", "q02": "fail"}
    got = {it.id: list(row) for it, row in zip(ds.items or (), ds.judgment_matrix(), strict=True)}
    assert got == {f"{d} [{p}]": [float(plan.verdict(plan.judge_by_key(k), d[:3]) == gold[d[:3]]) for k in ("strict", "plain")]
                   for d in ("q01: What is the capital of France?", "q02: How many legs does a spider have?")
                   for p in ("model-a", "model-b")}
    assert ds.reading is not None and "left out: 4 select-best, 4 max-score assertion(s)" in " ".join(ds.reading.notes)


def test_lm_eval_runs_of_two_models_are_one_panel() -> None:
    """lm-eval's --output_path after two model runs of a task group (tests/fixtures/lm_eval_runs/make.sh): a folder per
    model. Before, the folder was "holds no data file", and each run's file was a dataset of its own; now each task is
    one dataset whose judges are every run's binary metrics."""
    from betaconform_cli.inputs import read_dataset

    plan = _module(FIXTURES / "lm_eval_runs" / "plan.py")
    (gen, mc) = read_inputs([FIXTURES / "lm_eval_runs" / "out"], InputOptions(), Keep.JUDGMENTS)
    assert (gen.name, mc.name) == ("judge_gen", "judge_mc")
    assert list(mc.judge_names) == [f"{m}: {k},none" for m in plan.MODELS for k in ("acc", "acc_norm")]
    got = {it.id: list(row) for it, row in zip(mc.items or (), mc.judgment_matrix(), strict=True)}
    assert got == {str(d): [float(plan.says(m, "mc", d) == label) for m in plan.MODELS for _ in range(2)]
                   for d, (_, _, label) in enumerate(plan.DOCS)}
    assert list(gen.judge_names) == [f"{m}: exact_match,none" for m in plan.MODELS]  # bleu is left out, noted
    assert gen.reading is not None and len([n for n in gen.reading.notes if "bleu,none: left out" in n]) == 2
    one = read_dataset(next((FIXTURES / "lm_eval_runs" / "out" / "judge-a").glob("samples_judge_mc_*.jsonl")),
                       InputOptions(), Keep.JUDGMENTS)
    assert list(one.judge_names) == ["acc,none", "acc_norm,none"]  # one run's file alone: as before
    # the run folders side by side: a dataset per run and task, named apart by the run (before: two "judge_mc")
    apart = read_inputs([FIXTURES / "lm_eval_runs" / "out" / m for m in plan.MODELS])
    assert [d.name for d in apart] == [f"judge_{t} [{m}]" for m in plan.MODELS for t in ("gen", "mc")]
