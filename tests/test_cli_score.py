"""`betaconform score` end to end: the issue's JSON, the pass class, the gate, the paired comparison, clusters,
and one-line errors. Numbers are checked against the core called on arrays parsed here independently of the
readers (the core itself is checked against independent computations in test_score.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from betaconform_cli.score import score as core_score
from betaconform_cli.score import wilson_fpc

from .conftest import SAMPLE, invoke

SYSTEM = SAMPLE / "system_verdicts.jsonl"  # 7 named judges pass/fail on 150 answers, gold on the first 40
SYSTEM_B = SAMPLE / "system_b_verdicts.jsonl"  # the same 150 item ids, another system
PAIRWISE = SAMPLE / "pairwise_verdicts.jsonl"  # A/B preferences, gold on every item


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def arrays(rows: list[dict[str, Any]], positive: Any, label: str = "label") -> tuple[np.ndarray, np.ndarray]:
    """Pass (1) / not (0) / none (-1) per item and judge, and per item's gold, straight from the JSON."""
    verdicts = []
    for r in rows:
        v = r["verdicts"]
        values = list(v.values()) if isinstance(v, dict) else v
        verdicts.append([-1 if x is None else int(x == positive) for x in values])
    gold = [int(r[label] == positive) if label in r else -1 for r in rows]
    return np.asarray(verdicts), np.asarray(gold)


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_json(runner, *args: Any) -> dict[str, Any]:
    res = invoke(runner, "score", *args, "-f", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def error_line(res: Any) -> str:
    assert res.exit_code == 2, res.output
    err = res.stderr
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


class TestOutput:
    """The fields the issue names, equal to the core's numbers on the file's own arrays."""

    def test_json_fields(self, runner) -> None:
        doc = run_json(runner, SYSTEM)
        assert doc["command"] == "score" and doc["dataset"] == "system_verdicts"
        for key in ("score", "labels_only"):
            assert set(doc[key]) == {"estimate", "low", "high"}
            assert doc[key]["low"] <= doc[key]["estimate"] <= doc[key]["high"]
        assert {"estimate", "bias"} <= set(doc["judges_say"])
        assert doc["positive"] == "pass" and doc["labeled_items"] == 40 and doc["unlabeled_items"] == 110
        assert doc["target"] == "set" and doc["confidence_level"] == 0.9 and doc["judges"] == 7
        assert "latent-class" in doc["method"] and 0 <= doc["ppi_estimate"] <= 1

    def test_numbers_are_the_cores_on_the_files_arrays(self, runner) -> None:
        doc = run_json(runner, SYSTEM)
        verdicts, gold = arrays(rows_of(SYSTEM), "pass")
        want = core_score(verdicts, gold, 1)
        for key in ("estimate", "low", "high"):
            assert doc["score"][key] == pytest.approx(getattr(want.score, key), abs=1e-12)
        # what the judges say and what the labels say, counted here
        pos, neg = (verdicts == 1).sum(1), (verdicts == 0).sum(1)
        majority = np.where(pos > neg, 1.0, np.where(neg > pos, 0.0, 0.5))
        assert doc["judges_say"]["estimate"] == pytest.approx(majority.mean(), abs=1e-12)
        assert doc["judges_say"]["bias"]["estimate"] == pytest.approx(majority.mean() - doc["score"]["estimate"], abs=1e-12)
        labeled = gold[gold >= 0]
        assert doc["labels_only"]["estimate"] == pytest.approx(labeled.mean(), abs=1e-12)
        wilson = wilson_fpc(int(labeled.sum()), len(labeled), 0.9, len(gold))
        assert doc["labels_only"]["low"] == pytest.approx(wilson.low, abs=1e-12)

    def test_level_and_target_widen_the_interval(self, runner) -> None:
        doc = run_json(runner, SYSTEM)
        base = doc["score"]
        wider = run_json(runner, SYSTEM, "--confidence-level", "0.99")["score"]
        new = run_json(runner, SYSTEM, "--target", "new")
        assert wider["high"] - wider["low"] > base["high"] - base["low"]
        assert new["target"] == "new" and new["score"]["high"] - new["score"]["low"] > base["high"] - base["low"]
        assert new["ppi_estimate"] == pytest.approx(doc["ppi_estimate"], abs=1e-12)  # the centre; eq. 4 uses the sd

    def test_table_markdown_csv(self, runner) -> None:
        table = invoke(runner, "score", SYSTEM)
        assert table.exit_code == 0 and "corrected pass rate" in table.stdout and "judges say" in table.stdout
        assert "labels only" in table.stdout and "these items" in table.stdout
        md = invoke(runner, "score", SYSTEM, "-f", "markdown").stdout
        assert "| corrected pass rate |" in md and "## system_verdicts" in md
        csv = invoke(runner, "score", SYSTEM, SYSTEM_B, "-f", "csv").stdout.splitlines()
        assert csv[0].startswith("dataset,positive,estimate,low,high,judges_say") and len(csv) == 3
        assert csv[1].startswith("system_verdicts,pass,") and csv[2].startswith("system_b_verdicts,pass,")

    def test_html_draws_the_bar(self, runner, tmp_path: Path) -> None:
        out = tmp_path / "score.html"
        res = invoke(runner, "score", SYSTEM, "-o", out)
        assert res.exit_code == 0, res.output
        html = out.read_text()
        assert html.count("<svg") == 1 and "judges say" in html and "corrected" in html and "labels only" in html

    def test_all_items_labeled_gives_the_exact_rate_for_the_set(self, runner, tmp_path: Path) -> None:
        """Target set with every item labeled: the pass rate of the set is known, the interval has no width."""
        rows = [r | {"label": r.get("label", "pass" if i % 3 else "fail")} for i, r in enumerate(rows_of(SYSTEM)[:60])]
        doc = run_json(runner, write_rows(tmp_path / "all.jsonl", rows))
        rate = np.mean([r["label"] == "pass" for r in rows])
        assert doc["score"]["estimate"] == pytest.approx(rate, abs=1e-12)
        assert doc["score"]["high"] - doc["score"]["low"] == pytest.approx(0, abs=1e-9)
        assert doc["unlabeled_items"] == 0


class TestPositive:
    """Pass is the gold's pass-like class by default; --positive names another (case-insensitive)."""

    def test_ab_preferences_need_positive(self, runner) -> None:
        err = error_line(invoke(runner, "score", PAIRWISE))
        assert "pairwise_verdicts.jsonl" in err and "--positive" in err and "A, B" in err

    def test_positive_a_is_the_share_where_a_is_better(self, runner) -> None:
        doc = run_json(runner, PAIRWISE, "--positive", "a")
        labels = [r["label"] for r in rows_of(PAIRWISE)]
        assert doc["positive"] == "A" and doc["labels_only"]["estimate"] == pytest.approx(labels.count("A") / len(labels))

    def test_unknown_positive_names_the_classes(self, runner) -> None:
        err = error_line(invoke(runner, "score", SYSTEM, "--positive", "passed"))
        assert "--positive" in err and "fail, pass" in err and "system_verdicts.jsonl" in err

    @pytest.mark.parametrize(("yes", "no"), [(True, False), ("yes", "no"), (1, 0), ("correct", "incorrect"), ("PASS", "FAIL")])
    def test_default_pass_classes(self, runner, tmp_path: Path, yes: Any, no: Any) -> None:
        rng = random.Random(3)
        rows = []
        for i in range(40):
            gold = rng.random() < 0.6
            verdicts = [yes if (rng.random() < 0.8) == gold else no for _ in range(5)]
            rows.append({"id": f"i{i}", "verdicts": verdicts, "label": yes if gold else no})
        doc = run_json(runner, write_rows(tmp_path / "d.jsonl", rows))
        assert str(doc["positive"]).lower() == str(yes).lower()
        share = np.mean([r["label"] == yes for r in rows])
        assert doc["labels_only"]["estimate"] == pytest.approx(share)

    def test_multi_class_gold_is_the_share_of_one_class(self, runner, tmp_path: Path) -> None:
        rng = random.Random(5)
        classes = ["high", "medium", "low"]
        rows = [{"id": f"i{i}", "verdicts": [rng.choice(classes) for _ in range(4)], "label": rng.choice(classes)}
                for i in range(50)]
        path = write_rows(tmp_path / "m.jsonl", rows)
        err = error_line(invoke(runner, "score", path))
        assert "m.jsonl" in err and "--positive" in err
        doc = run_json(runner, path, "--positive", "medium")
        assert doc["labels_only"]["estimate"] == pytest.approx(np.mean([r["label"] == "medium" for r in rows]))
        verdicts, gold = arrays(rows, "medium")
        assert doc["score"]["estimate"] == pytest.approx(core_score(verdicts, gold, 1).score.estimate, abs=1e-12)


class TestGate:
    """--min-score: exit 1 when the lower bound (or, --on estimate, the estimate) is below it; the reason on stderr."""

    def test_lower_bound_and_estimate(self, runner) -> None:
        s = run_json(runner, SYSTEM)["score"]
        between = f"{(s['low'] + s['estimate']) / 2:.4f}"
        fails = invoke(runner, "score", SYSTEM, "--min-score", between)
        assert fails.exit_code == 1 and "gate failed: system_verdicts" in fails.stderr and "lower interval bound" in fails.stderr
        assert invoke(runner, "score", SYSTEM, "--min-score", between, "--on", "estimate").exit_code == 0
        assert invoke(runner, "score", SYSTEM, "--min-score", f"{s['low'] - 0.01:.4f}").exit_code == 0
        above = f"{s['estimate'] + 0.01:.4f}"
        assert invoke(runner, "score", SYSTEM, "--min-score", above, "--on", "estimate").exit_code == 1

    def test_gate_in_json_and_junit(self, runner, tmp_path: Path) -> None:
        junit = tmp_path / "j.xml"
        res = invoke(runner, "score", SYSTEM, SYSTEM_B, "--min-score", "0.99", "-f", "json", "--junit", junit)
        assert res.exit_code == 1
        docs = [json.loads(line) for line in res.stdout.splitlines()]
        assert [d["gate"]["passed"] for d in docs] == [False, False] and docs[0]["gate"]["min_score"] == 0.99
        xml = junit.read_text()
        assert xml.count("<testcase") == 2 and xml.count("<failure") == 2 and "min-score 99%" in xml

    @pytest.mark.parametrize("args", [["--on", "estimate"], ["--min-score", "1.5"], ["--min-score", "-0.1"],
                                      ["--min-score", "nan"], ["--confidence-level", "1"], ["--target", "all"]])
    def test_bad_gate_and_options_are_one_line(self, runner, args: list[str]) -> None:
        res = invoke(runner, "score", SYSTEM, *args)
        assert res.exit_code == 2 and res.stderr.startswith(("error: ", "Usage", "Error")) or "error" in res.output.lower()


class TestCompare:
    """a - b on the items both have, paired by item id."""

    def test_difference_is_a_minus_b(self, runner) -> None:
        doc = run_json(runner, SYSTEM, SYSTEM_B, "--compare")
        a, b = run_json(runner, SYSTEM), run_json(runner, SYSTEM_B)
        d = doc["difference"]
        assert d["estimate"] == pytest.approx(a["ppi_estimate"] - b["ppi_estimate"], abs=1e-12)
        assert d["low"] <= d["estimate"] <= d["high"] and doc["shared_items"] == 150 and doc["labeled_both"] == 40
        assert doc["a"]["dataset"] == "system_verdicts" and doc["b"]["dataset"] == "system_b_verdicts"

    def test_paired_by_id_not_by_line(self, runner, tmp_path: Path) -> None:
        rows = rows_of(SYSTEM_B)
        random.Random(1).shuffle(rows)
        shuffled = write_rows(tmp_path / "system_b_verdicts.jsonl", rows)
        assert run_json(runner, SYSTEM, shuffled, "--compare")["difference"] == run_json(runner, SYSTEM, SYSTEM_B, "--compare")["difference"]

    def test_only_shared_items(self, runner, tmp_path: Path) -> None:
        rows = rows_of(SYSTEM_B)[:100]
        doc = run_json(runner, SYSTEM, write_rows(tmp_path / "b.jsonl", rows), "--compare")
        assert doc["shared_items"] == 100 and doc["a"]["labeled_items"] + doc["a"]["unlabeled_items"] == 100

    def test_same_system_differs_by_nothing(self, runner, tmp_path: Path) -> None:
        copy = write_rows(tmp_path / "copy.jsonl", rows_of(SYSTEM))
        d = run_json(runner, SYSTEM, copy, "--compare")["difference"]
        assert d["estimate"] == 0 and d["low"] <= 0 <= d["high"]

    def test_gate_on_the_difference(self, runner) -> None:
        d = run_json(runner, SYSTEM, SYSTEM_B, "--compare")["difference"]
        assert invoke(runner, "score", SYSTEM, SYSTEM_B, "--compare", "--min-score", f"{d['low'] - 0.01:.4f}").exit_code == 0
        res = invoke(runner, "score", SYSTEM, SYSTEM_B, "--compare", "--min-score", f"{d['low'] + 0.01:.4f}")
        assert res.exit_code == 1 and "difference" in res.stderr

    def test_clusters_reach_the_paired_interval(self, runner) -> None:
        from betaconform_cli.score import compare_scores

        doc = run_json(runner, SYSTEM, SYSTEM_B, "--compare", "--cluster-field", "prompt")
        ra, rb = rows_of(SYSTEM), rows_of(SYSTEM_B)
        (va, ga), (vb, gb) = arrays(ra, "pass"), arrays(rb, "pass")
        want = compare_scores(va, ga, vb, gb, 1, clusters=[r["prompt"] for r in ra]).difference
        assert doc["difference"] == pytest.approx(want.to_dict(), abs=1e-12) and doc["a"]["clusters"] == 14

    def test_needs_two_inputs(self, runner) -> None:
        assert "exactly two" in error_line(invoke(runner, "score", SYSTEM, "--compare"))
        assert "exactly two" in error_line(invoke(runner, "score", SYSTEM, SYSTEM_B, PAIRWISE, "--compare"))

    def test_no_shared_ids(self, runner, tmp_path: Path) -> None:
        rows = [r | {"id": "x" + r["id"]} for r in rows_of(SYSTEM_B)]
        err = error_line(invoke(runner, "score", SYSTEM, write_rows(tmp_path / "b.jsonl", rows), "--compare"))
        assert "share no item id" in err and "b.jsonl" in err

    def test_repeated_or_missing_ids_name_the_file(self, runner, tmp_path: Path) -> None:
        rows = rows_of(SYSTEM_B)
        rows[5]["id"] = rows[4]["id"]
        err = error_line(invoke(runner, "score", SYSTEM, write_rows(tmp_path / "dup.jsonl", rows), "--compare"))
        assert "dup.jsonl" in err
        rows = [{k: v for k, v in r.items() if k != "id"} for r in rows_of(SYSTEM_B)]
        err = error_line(invoke(runner, "score", SYSTEM, write_rows(tmp_path / "noid.jsonl", rows), "--compare"))
        assert "noid.jsonl" in err and "id" in err


class TestInputs:
    """Inputs score cannot use: one line naming the file."""

    @pytest.mark.parametrize("name", ["qa_judges.jsonl", "code_review.jsonl", "counts_only.jsonl"])
    def test_correctness_only_inputs(self, runner, name: str) -> None:
        err = error_line(invoke(runner, "score", SAMPLE / name))
        assert name in err and "verdicts" in err

    @pytest.mark.parametrize("labeled", [0, 1])
    def test_too_few_labels(self, runner, tmp_path: Path, labeled: int) -> None:
        rows = [{k: v for k, v in r.items() if k != "label"} for r in rows_of(SYSTEM)]
        for r in rows[:labeled]:
            r["label"] = "pass"
        err = error_line(invoke(runner, "score", write_rows(tmp_path / "few.jsonl", rows)))
        assert "few.jsonl" in err and "label" in err


class TestClusters:
    """--cluster-field: samples of one prompt are one cluster; the interval counts clusters, not rows."""

    def test_cluster_field_reaches_the_core(self, runner) -> None:
        doc = run_json(runner, SYSTEM, "--cluster-field", "prompt")
        rows = rows_of(SYSTEM)
        verdicts, gold = arrays(rows, "pass")
        want = core_score(verdicts, gold, 1, clusters=[r["prompt"] for r in rows])
        assert doc["clusters"] == len({r["prompt"] for r in rows if "label" in r}) == 14
        assert doc["score"]["low"] == pytest.approx(want.score.low, abs=1e-12)
        assert doc["score"]["high"] == pytest.approx(want.score.high, abs=1e-12)

    def test_copies_of_an_item_do_not_narrow_the_interval(self, runner, tmp_path: Path) -> None:
        """Each item three times: as rows, the interval narrows by about sqrt(3); as one cluster each, it does not."""
        rows = rows_of(SYSTEM)
        tripled = [r | {"id": f"{r['id']}-{c}", "prompt": r["id"]} for r in rows for c in range(3)]
        path = write_rows(tmp_path / "tripled.jsonl", tripled)
        width = lambda d: d["score"]["high"] - d["score"]["low"]  # noqa: E731
        once = width(run_json(runner, SYSTEM, "--target", "new"))
        as_rows = width(run_json(runner, path, "--target", "new"))
        as_clusters = width(run_json(runner, path, "--target", "new", "--cluster-field", "prompt"))
        assert as_rows < 0.7 * once
        assert as_clusters == pytest.approx(once, rel=0.1)

    def test_cluster_field_missing_is_one_line(self, runner) -> None:
        err = error_line(invoke(runner, "score", SYSTEM, "--cluster-field", "nope"))
        assert "system_verdicts.jsonl" in err and "nope" in err


class TestTables:
    """Long and wide tables give the JSON Lines numbers; what they cannot carry (ids, clusters) is one line."""

    @pytest.fixture
    def tables(self, tmp_path: Path) -> tuple[Path, Path]:
        rows = rows_of(SYSTEM)
        judges = list(rows[0]["verdicts"])
        long = tmp_path / "long.csv"
        long.write_text("item,judge,verdict,gold\n" + "".join(
            f"{r['id']},{j},{v},{r.get('label', '')}\n" for r in rows for j, v in r["verdicts"].items()))
        wide = tmp_path / "wide.csv"
        wide.write_text("item," + ",".join(judges) + ",gold\n" + "".join(
            r["id"] + "," + ",".join(r["verdicts"][j] for j in judges) + "," + r.get("label", "") + "\n" for r in rows))
        return long, wide

    def test_long_and_wide_equal_jsonl(self, runner, tables: tuple[Path, Path]) -> None:
        want = run_json(runner, SYSTEM)
        long, wide = tables
        for doc in (run_json(runner, long, "--verdict-col", "verdict", "--gold-col", "gold"), run_json(runner, wide, "--gold-col", "gold")):
            assert (doc["labeled_items"], doc["unlabeled_items"], doc["judges"]) == (40, 110, 7)
            for key in ("score", "labels_only"):
                assert doc[key] == pytest.approx(want[key], abs=1e-12)

    def test_compare_pairs_table_items_by_id(self, runner, tables: tuple[Path, Path]) -> None:
        long, wide = tables
        doc = run_json(runner, long, wide, "--gold-col", "gold", "--verdict-col", "verdict", "--compare")
        assert doc["shared_items"] == 150 and doc["difference"]["estimate"] == pytest.approx(0, abs=1e-12)

    def test_cluster_field_on_a_table_is_one_line(self, runner, tables: tuple[Path, Path]) -> None:
        long, _ = tables
        err = error_line(invoke(runner, "score", long, "--verdict-col", "verdict", "--gold-col", "gold", "--cluster-field", "p"))
        assert "long.csv" in err and "--cluster-field" in err

    def test_correctness_table(self, runner, tmp_path: Path) -> None:
        table = tmp_path / "correct.csv"
        table.write_text("item,judge,correct\n" + "".join(f"i{i},j{j},{(i + j) % 2}\n" for i in range(10) for j in range(3)))
        err = error_line(invoke(runner, "score", table))
        assert "correct.csv" in err and "verdicts" in err
