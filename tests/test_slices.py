"""Slices (`--by`, issue 27 item 2; inputs/slices.py, slicing.py, api/_slices.py): each slice's numbers are the
command's own on a file of the slice's items alone (filtered here, from the raw lines), at the adjusted level;
Holm's and Benjamini-Hochberg's procedures run on the gates agree with statsmodels' `multipletests` on p-values;
a slice with too few labels shows no number and is not gated; the gate names the failing slice (exit 1); a field
that is missing, not one value, or not carried by the format is handled as docs/SLICES.md says."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from betaconform_cli import api
from betaconform_cli.errors import InputError
from betaconform_cli.gate import make_score_gate
from betaconform_cli.inputs import InputOptions
from betaconform_cli.slicing import benjamini_hochberg, holm, interval_level, step_down, step_up

from .conftest import invoke

multitest = pytest.importorskip("statsmodels.stats.multitest")

ACCURACY = {"math": 0.92, "code": 0.8, "chat": 0.62}


def rows(n: int = 240, seed: int = 3) -> list[dict[str, Any]]:
    """Verdicts of 4 judges, gold on 3 items in 4; judges' accuracy by category; a rare category of 4 labeled items;
    every 7th item without metadata (the `(missing)` slice)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        cat = ("math", "code", "chat")[i % 3]
        gold = rng.choice(["yes", "no"])
        verdicts = {j: gold if rng.random() < ACCURACY[cat] else ("no" if gold == "yes" else "yes") for j in "abcd"}
        rec: dict[str, Any] = {"id": f"i{i}", "verdicts": verdicts, "text": "w" * rng.randint(1, 300)}
        if i % 7:
            rec["metadata"] = {"category": cat}
        if i % 4 != 3:
            rec["label"] = gold
        out.append(rec)
    for i in range(4):
        out.append({"id": f"r{i}", "verdicts": {"a": "yes", "b": "no", "c": "yes", "d": "yes"}, "label": "yes",
                    "metadata": {"category": "rare"}, "text": "w"})
    return out


def write(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def key_of(rec: dict[str, Any]) -> str:
    return rec.get("metadata", {}).get("category") or "(missing)"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    recs = rows()
    return write(tmp_path_factory.mktemp("slices") / "sys.jsonl", recs), recs


class TestProcedures:
    """The step procedures on the gates decide as Holm and BH on p-values (statsmodels' multipletests)."""

    CASES = [[0.001, 0.01, 0.02, 0.03, 0.5], [0.04, 0.041, 0.045, 0.9], [0.2, 0.3, 0.5], [0.001, 0.002],
             [0.01, 0.01, 0.04, 0.04, 0.04, 0.3], [0.015, 0.03, 0.045, 0.06]]

    @pytest.mark.parametrize("p,alpha", [(p, 0.1) for p in CASES] + [(list(np.random.default_rng(s).uniform(0, 0.08, 8)), 0.05)
                                                                     for s in range(2)])
    def test_against_statsmodels(self, p: list[float], alpha: float) -> None:  # statsmodels' holm takes 0.2 s a call
        expect_holm = list(multitest.multipletests(p, alpha, method="holm")[0])
        expect_bh = list(multitest.multipletests(p, alpha, method="fdr_bh")[0])
        assert holm(p, alpha) == expect_holm
        assert benjamini_hochberg(p, alpha) == expect_bh

        def passes(i: int, a: float) -> bool:  # an interval test: its bound at 1 - a passes exactly when p <= a
            return p[i] <= a + 1e-15

        assert [d is not None for d in step_down(len(p), alpha, passes)] == expect_holm
        assert [d is not None for d in step_up(len(p), alpha, passes)[0]] == expect_bh

    def test_bonferroni_level(self) -> None:
        assert interval_level(0.9, 4, "holm") == pytest.approx(0.975)
        assert interval_level(0.9, 4, "bh") == pytest.approx(0.975)
        assert interval_level(0.9, 4, "none") == 0.9 and interval_level(0.9, 1, "holm") == 0.9


class TestScore:
    """score --by: each slice is score on the slice's lines alone at 1 - alpha/m."""

    def test_slice_equals_filtered_file(self, data: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
        path, recs = data
        report = api.score([str(path)], InputOptions(by="metadata.category"), confidence_level=0.9)
        doc = report.to_dict()
        fam = doc["families"][0]
        assert [s["key"] for s in fam["slices"]] == ["chat", "code", "math", "rare", "(missing)"]
        assert fam["m"] == 4 and fam["interval_level"] == pytest.approx(1 - 0.1 / 4)
        for s in fam["slices"]:
            mine = [r for r in recs if key_of(r) == s["key"]]
            if s["key"] == "rare":
                assert s["figure"] is None
                assert s["note"].startswith("too few labels: 4 labeled items")
                continue
            alone = api.score([str(write(tmp_path / "alone.jsonl", mine))], confidence_level=1 - 0.1 / 4).to_dict()
            assert s["figure"]["estimate"] == pytest.approx(alone["score"]["estimate"], abs=1e-12)
            assert (s["figure"]["low"], s["figure"]["high"]) == pytest.approx((alone["score"]["low"], alone["score"]["high"]), abs=1e-12)
            assert s["labeled_items"] == alone["labeled_items"] and s["unlabeled_items"] == alone["unlabeled_items"]

    def test_same_answer_in_another_order(self, data: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
        path, recs = data
        shuffled = recs[:]
        random.Random(9).shuffle(shuffled)
        a = api.score([str(path)], InputOptions(by="metadata.category")).to_dict()["families"][0]["slices"]
        b = api.score([str(write(tmp_path / "sys.jsonl", shuffled))], InputOptions(by="metadata.category")).to_dict()
        for x, y in zip(a, b["families"][0]["slices"], strict=True):
            assert x["key"] == y["key"] and x["labeled_items"] == y["labeled_items"]
            if x.get("figure"):
                assert x["figure"]["estimate"] == pytest.approx(y["figure"]["estimate"], abs=1e-9)

    def test_a_table_column_slices_alike(self, data: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
        """The same items as a wide CSV, sliced by a column: the same slices and numbers as the JSON field."""
        _, recs = data
        lines = ["id,a,b,c,d,gold,category,text"] + [
            ",".join([r["id"], *(r["verdicts"][j] for j in "abcd"), r.get("label", ""), key_of(r) if key_of(r) != "(missing)" else "",
                      r["text"]]) for r in recs]
        csv = tmp_path / "sys.csv"
        csv.write_text("\n".join(lines) + "\n")
        a = api.score([str(data[0])], InputOptions(by="metadata.category")).to_dict()["families"][0]["slices"]
        b = api.score([str(csv)], InputOptions(by="category")).to_dict()["families"][0]["slices"]
        assert [s["key"] for s in a] == [s["key"] for s in b]
        for x, y in zip(a, b):
            assert x["labeled_items"] == y["labeled_items"] and x["unlabeled_items"] == y["unlabeled_items"]
            if x.get("figure"):
                assert x["figure"]["estimate"] == pytest.approx(y["figure"]["estimate"], abs=1e-12)
        # the CSV's category column is no judge: named, as --judge-cols does (read as one, it was refused: round 4)
        by_length = [[(s["key"], s["labeled_items"]) for s in api.score([str(p)], InputOptions(by="length:text:3", **kw)).to_dict()[
            "families"][0]["slices"]] for p, kw in ((data[0], {}), (csv, {"judge_cols": "a,b,c,d"}))]
        assert by_length[0] == by_length[1]  # DuckDB's quantile_cont and numpy's quantile: one rule
    def test_length_buckets(self, data: tuple[Path, list[dict[str, Any]]]) -> None:
        """length:text:3: edges from the items' lengths (numpy's quantiles, floored), each slice its items."""
        path, recs = data
        lengths = np.array([len(r["text"]) for r in recs])
        e1, e2 = (int(np.floor(np.quantile(lengths, q))) for q in (1 / 3, 2 / 3))
        doc = api.score([str(path)], InputOptions(by="length:text:3")).to_dict()["families"][0]["slices"]
        assert [s["key"] for s in doc] == [f"Q1 <={e1} chars", f"Q2 {e1 + 1}-{e2} chars", f"Q3 >{e2} chars"]
        labeled = [sum(1 for r, n in zip(recs, lengths) if "label" in r and lo < n <= hi)
                   for lo, hi in ((-1, e1), (e1, e2), (e2, 10 ** 9))]
        assert [s["labeled_items"] for s in doc] == labeled


class TestFitAndJudges:
    """fit and judges --by: a slice's error table and judges are the command's on the slice's lines alone."""

    def test_fit_slice(self, data: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
        _, recs = data
        path = write(tmp_path / "sys.jsonl", [r for r in recs if key_of(r) in ("math", "rare")])
        report = api.fit([str(path)], InputOptions(by="metadata.category"), adjust="none")
        doc = report.to_dict()
        math = next(r for r in doc["results"] if r["dataset"] == "sys[math]")
        alone = api.fit([str(write(tmp_path / "m.jsonl", [r for r in recs if key_of(r) == "math"]))]).to_dict()
        def flat(doc: dict[str, Any]) -> list[float]:
            return [x for r in doc["error_rates"] for x in (r["k"], r["estimate"], r["low"], r["high"])]

        assert flat(math) == pytest.approx(flat(alone), abs=1e-12)

    def test_judges_slice(self, data: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
        _, recs = data
        path = write(tmp_path / "sys.jsonl", [r for r in recs if key_of(r) in ("code", "chat")])
        doc = api.judges([str(path)], InputOptions(by="metadata.category"), ks=(1, 3), adjust="bh").to_dict()
        level = doc["families"][0]["interval_level"]
        code = next(r for r in doc["results"] if r["dataset"] == "sys[code]")
        assert level == pytest.approx(1 - 0.1 / 2)
        alone = api.judges([str(write(tmp_path / "c.jsonl", [r for r in recs if key_of(r) == "code"]))], ks=(1, 3),
                           confidence_level=level).to_dict()
        assert [j["accuracy"] for j in code["judges"]] == pytest.approx([j["accuracy"] for j in alone["judges"]], abs=1e-12)
        assert [e["members"] for e in code["ensembles"]] == [e["members"] for e in alone["ensembles"]]


class TestGatesAndOutputs:
    """The gate per slice: exit 1 naming the slice and its level; too few labels in every format, never gated."""

    def test_gate_names_the_failing_slice(self, data: tuple[Path, list[dict[str, Any]]], runner: Any) -> None:
        path, _ = data
        res = invoke(runner, "score", path, "--by", "metadata.category", "--min-score", "0.7", "-f", "csv")
        assert res.exit_code == 1
        failed = [line for line in res.stderr.splitlines() if line.startswith("gate failed")]
        assert failed and all("slice '" in line and "level: Holm's step-down over 4 slices" in line for line in failed)
        assert "rare: too few labels: 4 labeled items" in res.stderr or "sys[rare]: too few labels" in res.stderr

    def test_too_few_labels_in_every_format(self, data: tuple[Path, list[dict[str, Any]]]) -> None:
        path, _ = data
        report = api.score([str(path)], InputOptions(by="metadata.category"), gate=make_score_gate(0.1))
        say = "too few labels: 4 labeled items"
        assert say in report.summary()
        assert say in report.csv() and "sys[rare]" in report.csv()
        rare = next(s for s in report.to_dict()["families"][0]["slices"] if s["key"] == "rare")
        assert say in rare["note"] and "gate" not in rare and rare["figure"] is None
        from betaconform_cli.report.html import to_html
        from betaconform_cli.report.render import to_markdown

        assert say in to_markdown(report.blocks(markdown=True))
        page = to_html(report.blocks(), "t", [(v.passed, v.reason) for v in report.verdicts() if v.gate])
        assert "<svg" in page and "rare" in page
        assert next(v for v in report.verdicts() if v.dataset == "sys[rare]").gate == ""
        import jsonschema

        schemas = Path(__file__).resolve().parent.parent / "docs" / "schema"
        doc = report.to_dict()
        jsonschema.validate(doc, json.loads((schemas / "slices.json").read_text()))
        for result in doc["results"]:
            jsonschema.validate(result, json.loads((schemas / "score.json").read_text()))

    def test_score_gate_decided_by_holm(self, data: tuple[Path, list[dict[str, Any]]]) -> None:
        """Each slice's decision equals the gate on the slice alone at the level Holm's steps give it."""
        path, _ = data
        gate = make_score_gate(0.3)
        doc = api.score([str(path)], InputOptions(by="metadata.category"), gate=gate).to_dict()["families"][0]
        decided = [s for s in doc["slices"] if "gate" in s]
        assert len(decided) == doc["m"] == 4
        for s in decided:
            assert any(s["gate"]["alpha"] == pytest.approx(a) for a in (0.1 / 4, 0.1 / 3, 0.1 / 2, 0.1))


class TestFields:
    """A field missing from some items, from all, or not one value; a format that carries no field."""

    def test_missing_everywhere_is_refused(self, data: tuple[Path, list[dict[str, Any]]]) -> None:
        with pytest.raises(InputError, match=r"--by 'metadata.categry': no item has this field"):
            api.score([str(data[0])], InputOptions(by="metadata.categry"))

    def test_not_one_value(self, tmp_path: Path, runner: Any) -> None:
        path = write(tmp_path / "x.jsonl", [{"verdicts": ["a", "b"], "label": "a", "meta": {"c": [1]}}])
        res = invoke(runner, "score", path, "--by", "meta.c")
        assert res.exit_code == 2 and "x.jsonl:1" in res.stderr and "meta.c" in res.stderr and "Traceback" not in res.stderr

    def test_a_trace_store_without_the_field(self, runner: Any) -> None:
        fixture = Path(__file__).parent / "fixtures" / "langfuse" / "scores.json"
        res = invoke(runner, "fit", fixture, "--by", "metadata.topic")
        assert res.exit_code == 2 and "scores.json" in res.stderr and "--by 'metadata.topic': no item has this field" in res.stderr

    def test_eval_framework_lines(self) -> None:
        """lm-eval's per-sample lines by the length of doc.question: each slice holds the documents counted here."""
        path = next((Path(__file__).parent / "fixtures" / "lm_eval" / "output").rglob("samples_*.jsonl"))
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        first: dict[Any, int] = {}
        for x in lines:
            first.setdefault(x["doc_id"], len(x["doc"]["question"]))
        edge = int(np.floor(np.quantile(list(first.values()), 0.5)))
        doc = api.fit([str(path)], InputOptions(by="length:doc.question:2")).to_dict()["families"][0]["slices"]
        counts = [sum(n <= edge for n in first.values()), sum(n > edge for n in first.values())]
        assert [s["labeled_items"] for s in doc] == [c for c in counts if c]  # an empty bucket is no slice

    def test_tool_logs_slice_by_their_fields(self) -> None:
        """inspect-ai's samples (by the length of their input, two buckets) and promptfoo's results (by a var): each
        slice holds the samples a count by hand puts there."""
        fixtures = Path(__file__).parent / "fixtures"
        log = next((fixtures / "inspect" / "edge_json").glob("*.json"))
        samples = json.loads(log.read_text())["samples"]
        lengths = [len(s["input"]) for s in samples]
        edge = int(np.floor(np.quantile(lengths, 0.5)))
        doc = api.fit([str(log)], InputOptions(by="length:input:2", label_field="metadata.human")).to_dict()
        got = {s["key"]: s["labeled_items"] for s in doc["families"][0]["slices"]}
        assert got == {f"Q1 <={edge} chars": sum(n <= edge for n in lengths), f"Q2 >{edge} chars": sum(n > edge for n in lengths)}
        pf = api.fit([str(fixtures / "promptfoo" / "results_human.json")], InputOptions(by="vars.case_id")).to_dict()
        keys = [s["key"] for s in pf["families"][0]["slices"]]
        assert keys == sorted(keys) and len(keys) > 1

    def test_bad_spelling(self, runner: Any, data: tuple[Path, list[dict[str, Any]]]) -> None:
        res = invoke(runner, "fit", data[0], "--by", "length:text:20")
        assert res.exit_code == 2 and "--by" in res.stderr


    def test_adjust_needs_by(self, runner: Any, data: tuple[Path, list[dict[str, Any]]]) -> None:
        res = invoke(runner, "score", data[0], "--adjust", "bh")
        assert res.exit_code == 2 and "--adjust" in res.stderr and "--by" in res.stderr


class TestRun:
    """api/_slices.run: a slice whose data the command refuses leaves the family, and m and the level follow."""

    def test_refused_slice(self, tmp_path: Path) -> None:
        from betaconform_cli.api._slices import SliceJob, run
        from betaconform_cli.inputs import read_inputs

        recs = [{"verdicts": ["yes", "no"], "label": "yes", "c": "x" if i % 2 else "y"} for i in range(40)]
        datasets = read_inputs([str(write(tmp_path / "d.jsonl", recs))], InputOptions(by="c"))
        levels: dict[str, float] = {}

        def compute(ds: Any, level: float) -> float:
            if ds.slicing.key == "x":
                raise InputError(ds.source, "cannot do x")
            levels[ds.slicing.key] = level
            return level

        ((family, runs),) = run(datasets, SliceJob(compute, None, lambda r, ds: None, lambda r: ""), 0.9, "holm")
        assert family.m == 1 and family.interval_level == 0.9 and levels == {"y": 0.9}
        assert [e.note for e in family.slices] == ["not computed: cannot do x; not gated", ""]
