"""Every command pinned end to end: stdout, stderr and exit code on sample_data/ at a fixed width and seed.

A change in any word or count, or in a number beyond the tolerance of tests/tolerance.py (the one policy: floats
differ in their last digits between BLAS kernels), is a visible diff in tests/golden/cli/. Regenerate after an
intended change (and name the change in the commit):

    BETACONFORM_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_cli.py
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from betaconform_cli import embeddings

from .conftest import SAMPLE, invoke
from .test_embeddings import LetterEmbedder
from .tolerance import assert_text_close

GOLDEN = Path(__file__).parent / "golden" / "cli"
Q = "sample_data/qa_judges.jsonl"
C = "sample_data/code_review.jsonl"
S = "sample_data/system_verdicts.jsonl"
SB = "sample_data/system_b_verdicts.jsonl"


def _labels_and_pool(root: Path) -> None:
    """labels.jsonl: the first 15 items of Q; pool.jsonl: all of Q without the labels (ids kept)."""
    lines = (root / Q).read_text(encoding="utf-8").splitlines()
    (root / "labels.jsonl").write_text("\n".join(lines[:15]) + "\n", encoding="utf-8")
    (root / "labels40.jsonl").write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    pool = [json.dumps({"id": json.loads(x)["id"]}) for x in lines]
    (root / "pool.jsonl").write_text("\n".join(pool) + "\n", encoding="utf-8")


def _unlabeled(root: Path) -> None:
    """unlabeled.jsonl: pairwise_verdicts with the label of every third item removed (null or absent); bare.jsonl: no
    labels at all, gold.csv: the labels of every other item (with an id no item has)."""
    recs = [json.loads(x) for x in (root / "sample_data/pairwise_verdicts.jsonl").read_text(encoding="utf-8").splitlines()]
    out, bare, gold = [], [], ["id,label"]
    for i, r in enumerate(recs):
        label = r.pop("label")
        bare.append(json.dumps(r))
        if i % 2 == 0:
            gold.append(f"{r['id']},{label}")
        if i % 3 != 0:
            r["label"] = label
        elif i % 2:
            r["label"] = None
        out.append(json.dumps(r))
    (root / "unlabeled.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    (root / "bare.jsonl").write_text("\n".join(bare) + "\n", encoding="utf-8")
    (root / "gold.csv").write_text("\n".join(gold + ["no-such-item,A"]) + "\n", encoding="utf-8")


def _saved(root: Path) -> None:
    from typer.testing import CliRunner

    res = invoke(CliRunner(), "fit", Q, C, "--save-dir", "fits")
    assert res.exit_code == 0, res.output


def _bad(root: Path) -> None:
    (root / "bad.jsonl").write_text('{"judgments": [1, 0, 1]}\n{"judgments": [1, "x", 1]}\n', encoding="utf-8")
    (root / "empty.jsonl").write_text("", encoding="utf-8")
    (root / "notjson.jsonl").write_text("{not json\n", encoding="utf-8")
    (root / "broken.yaml").write_text("schema: betaconform/fit/1\ndataset: [\n", encoding="utf-8")
    (root / "python.yaml").write_text("!!python/object/apply:os.system ['true']\n", encoding="utf-8")


def _sources(root: Path) -> None:
    from typer.testing import CliRunner

    rng = np.random.default_rng(1)
    for name, text, p in (("hard", "why does the trick question fool every judge", 0.3), ("easy", "a plain easy task", 0.9)):
        rows = [{"id": f"i{i}", "text": f"{text} {i}", "correct": int(c), "judges": 9} for i, c in enumerate(rng.binomial(9, p, 120))]
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    target = [{"id": f"t{i}", "text": f"why does the trick question fool every judge {i}", "correct": c, "judges": 9}
              for i, c in enumerate([2, 3, 1, 4, 2, 3, 2, 5, 3, 2])]
    (root / "target.jsonl").write_text("".join(json.dumps(r) + "\n" for r in target), encoding="utf-8")
    res = invoke(CliRunner(), "fit", "hard.jsonl", "easy.jsonl", "--save-dir", "src", "--embed", "-f", "csv")
    assert res.exit_code == 0, res.output


def _rerun(root: Path) -> None:
    """rerun.jsonl: system_verdicts.jsonl judged again, the same items and gold, with command-r degraded (30% of
    its verdicts flipped, a fixed draw) and gpt-4o answering nothing on 10 items (issue 27's drift)."""
    import random

    draw = random.Random(27)
    out = []
    for i, line in enumerate((root / S).read_text(encoding="utf-8").splitlines()):
        rec = json.loads(line)
        if draw.random() < 0.3:
            rec["verdicts"]["command-r"] = "fail" if rec["verdicts"]["command-r"] == "pass" else "pass"
        if i % 15 == 0:
            del rec["verdicts"]["gpt-4o"]
        out.append(json.dumps(rec))
    (root / "rerun.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


Setup = Callable[[Path], None] | None

CASES: dict[str, tuple[list[str], Setup]] = {
    # fit
    "fit_table": (["fit", Q], None),
    "fit_dir_table": (["fit", "sample_data/"], None),
    "fit_json": (["fit", Q, "-f", "json"], None),
    "fit_dir_json": (["fit", "sample_data/", "-f", "json"], None),
    "fit_csv": (["fit", "sample_data/", "-f", "csv"], None),
    "fit_markdown": (["fit", "sample_data/", "-f", "markdown"], None),
    "fit_gate_fail": (["fit", Q, "--max-error", "0.2", "--at-k", "5", "-f", "markdown"], None),
    "fit_gate_pass": (["fit", Q, "--max-error", "0.3", "--at-k", "5", "--on", "estimate", "--no-chart"], None),
    "fit_options": (["fit", C, "--ks", "1,3,5", "--confidence-level", "0.95", "--components", "1", "--seed", "3"], None),
    "fit_paper": (["fit", Q, "--method", "paper", "--no-chart"], None),
    "fit_plugin_json": (["fit", Q, "--method", "plugin", "-f", "json", "--ks", "1-13"], None),
    "fit_counts": (["fit", "sample_data/counts_only.jsonl", "--no-chart"], None),
    "fit_output_md": (["fit", Q, "-o", "out.md"], None),
    # report
    "report_table": (["report", "fits/qa_judges.yaml"], _saved),
    "report_side_by_side": (["report", "fits/qa_judges.yaml", "fits/code_review.yaml", "--no-chart"], _saved),
    "report_json_gate": (["report", "fits/qa_judges.yaml", "-f", "json", "--max-error", "0.1", "--at-k", "3"], _saved),
    # sample
    "sample_replay": (["sample", Q, "--replay", "--runs", "5"], None),
    "sample_replay_json": (["sample", Q, "--replay", "--runs", "2", "-f", "json"], None),
    "sample_replay_precision": (["sample", Q, "--replay", "--runs", "3", "--rule", "precision", "--target", "0.08"], None),
    "sample_live_continue": (["sample", "labels.jsonl", "--pool", "pool.jsonl", "--batch", "4"], _labels_and_pool),
    "sample_live_next_file": (["sample", "labels.jsonl", "--pool", "pool.jsonl", "-o", "next.jsonl"], _labels_and_pool),
    "sample_live_stop": (["sample", "labels40.jsonl", "--rule", "variance", "--xi", "0.1"], _labels_and_pool),
    "sample_live_json": (["sample", "labels40.jsonl", "--rule", "precision", "--target", "0.2", "-f", "json"], _labels_and_pool),
    # evaluate
    "evaluate_table": (["evaluate", "sample_data/", "--r", "10,30", "--runs", "3"], None),
    "evaluate_json": (["evaluate", C, Q, "--r", "10", "--runs", "2", "-f", "json"], None),
    "evaluate_csv": (["evaluate", C, Q, "--r", "10", "--runs", "2", "-f", "csv"], None),
    "evaluate_markdown": (["evaluate", "sample_data/", "--r", "10", "--runs", "2", "-f", "markdown"], None),
    "evaluate_adaptive": (["evaluate", Q, "--rule", "conformal", "--xi", "0.06,0.03", "--runs", "3"], None),
    "evaluate_methods": (["evaluate", Q, "--r", "20", "--runs", "3", "--methods", "default,binomial", "--ks", "1,3,5"], None),
    # judges
    "judges_table": (["judges", C], None),
    "judges_json": (["judges", C, "--ensemble", "gpt-4o,claude-3.5,gemini-1.5", "-f", "json", "--ks", "1,3"], None),
    "judges_unlabeled_table": (["judges", S], None),  # 40 labeled + 110 unlabeled items
    "judges_unlabeled_json": (["judges", S, "--ensemble", "gpt-4o,claude-3.5,gemini-1.5", "-f", "json", "--ks", "1,3"], None),
    "judges_agreement_csv": (["judges", S, "-f", "csv", "--csv-table", "agreement", "--ks", "1"], None),  # issue 27
    "judges_pairwise_markdown": (["judges", "sample_data/pairwise_verdicts.jsonl", "-f", "markdown", "--ks", "1,3"], None),
    # score
    "plan_table": (["plan", S, "--label-cost", "0.8", "--draws", "50"], None),
    "plan_json": (["plan", S, "--target", "0.08", "--ks", "1,3,5", "--draws", "50", "-f", "json"], None),
    "score_table": (["score", S], None),
    "score_json": (["score", S, "-f", "json"], None),
    "score_csv": (["score", S, SB, "-f", "csv"], None),
    "score_compare_markdown": (["score", S, SB, "--compare", "-f", "markdown"], None),
    "score_gate_fail": (["score", S, "--min-score", "0.6", "--target", "new"], None),
    "score_by_length_gate": (["score", "sample_data/pairwise_verdicts.jsonl", "--by", "length:text:2", "--positive", "A",
                              "--min-score", "0.36", "--target", "new", "-f", "markdown"], None),  # docs/SLICES.md
    "score_clusters_json": (["score", S, "--cluster-field", "prompt", "-f", "json"], None),
    "score_positive": (["score", "sample_data/pairwise_verdicts.jsonl", "--positive", "A", "--confidence-level", "0.95"], None),
    "bad_score_positive": (["score", "sample_data/pairwise_verdicts.jsonl"], None),
    "bad_score_correctness": (["score", Q], None),
    "bad_score_compare": (["score", S, "--compare"], None),
    # drift (issue 27)
    "drift_table": (["drift", S, SB, "--permutations", "199"], None),
    "drift_rerun_gate_fail": (["drift", S, "rerun.jsonl", "--fail-on-drift"], _rerun),
    "drift_json": (["drift", S, "rerun.jsonl", "-f", "json", "--fail-on-drift", "--max-change", "0.05", "--seed", "3"], _rerun),
    "drift_csv": (["drift", S, "rerun.jsonl", "-f", "csv", "--permutations", "199"], _rerun),
    "drift_markdown": (["drift", S, SB, "-f", "markdown", "--permutations", "199", "--confidence-level", "0.95"], None),
    "bad_drift_correctness": (["drift", Q, S], None),
    "bad_drift_max_change": (["drift", S, SB, "--max-change", "1.5"], None),
    # doctor
    "doctor_table": (["doctor", C, Q], None),
    "doctor_unlabeled_table": (["doctor", "unlabeled.jsonl"], _unlabeled),
    "doctor_unlabeled_json": (["doctor", "unlabeled.jsonl", "-f", "json"], _unlabeled),
    "doctor_unlabeled_csv": (["doctor", "unlabeled.jsonl", "-f", "csv"], _unlabeled),
    "doctor_unlabeled_markdown": (["doctor", "unlabeled.jsonl", "-f", "markdown"], _unlabeled),
    "doctor_labels_file": (["doctor", "bare.jsonl", "--labels", "gold.csv"], _unlabeled),
    # transfer (fake embedder)
    "transfer_table": (["transfer", "target.jsonl", "--sources", "src"], _sources),
    "transfer_json": (["transfer", "target.jsonl", "--sources", "src", "-f", "json"], _sources),
    "transfer_paper": (["transfer", "target.jsonl", "--sources", "src", "--method", "paper", "--ks", "1,3,5"], _sources),
    # bad input and usage: one line on stderr, exit 2
    "bad_line": (["fit", "bad.jsonl"], _bad),
    "bad_empty": (["fit", "empty.jsonl"], _bad),
    "bad_json": (["fit", "notjson.jsonl"], _bad),
    "bad_missing": (["fit", "nope.jsonl"], None),
    "bad_yaml": (["report", "broken.yaml"], _bad),
    "bad_python_tag": (["report", "python.yaml"], _bad),
    "bad_format": (["fit", Q, "--format", "xml"], None),
    "bad_ks": (["fit", Q, "--ks", "0"], None),
    "bad_gate_half": (["fit", Q, "--max-error", "0.2"], None),
    "bad_gate_k": (["fit", Q, "--max-error", "0.2", "--at-k", "40"], None),
    "bad_confidence": (["fit", Q, "--confidence-level", "1.5"], None),
    "bad_seed": (["fit", Q, "--seed", "-1"], None),
    "bad_components": (["fit", Q, "--components", "7"], None),
    "bad_tolerance": (["fit", Q, "--tolerance", "nan"], None),
    "bad_rule": (["sample", Q, "--replay", "--rule", "magic"], None),
    "bad_runs": (["evaluate", Q, "--runs", "1"], None),
    "bad_r_and_rule": (["evaluate", Q, "--r", "10", "--rule", "conformal"], None),
    "bad_save_both": (["fit", Q, "--save", "a.yaml", "--save-dir", "d"], None),
    "bad_embed_nosave": (["fit", Q, "--embed"], None),
    "bad_sample_ids": (["sample", "sample_data/counts_only.jsonl", "--pool", "pool.jsonl"], _labels_and_pool),
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "sample_data", ignore=shutil.ignore_patterns("*.py"))
    monkeypatch.chdir(tmp_path)

    def load(model=None, cache_dir=None):  # type: ignore[no-untyped-def]
        return embeddings.CachedEmbedder(LetterEmbedder(), None)

    monkeypatch.setattr(embeddings, "load_embedder", load)
    return tmp_path


def _render(res: object, root: Path) -> str:
    stdout = res.stdout  # type: ignore[attr-defined]
    stderr = res.stderr  # type: ignore[attr-defined]
    written = sorted(p for p in root.iterdir() if p.is_file() and p.suffix in (".md", ".txt", ".csv", ".json") or p.name == "next.jsonl")
    parts = [f"exit: {res.exit_code}", "--- stdout", stdout, "--- stderr", stderr]  # type: ignore[attr-defined]
    for p in written:
        parts += [f"--- file {p.name}", p.read_text(encoding="utf-8")]
    return "\n".join(parts)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_cli(name: str, workdir: Path) -> None:
    from typer.testing import CliRunner

    args, setup = CASES[name]
    if setup is not None:
        setup(workdir)
    res = CliRunner().invoke(__import__("betaconform_cli.cli", fromlist=["app"]).app, args, catch_exceptions=False)
    got = _render(res, workdir)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("BETACONFORM_REGEN_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert_text_close(got, path.read_text(encoding="utf-8"), f"{name}: output differs from {path}")
