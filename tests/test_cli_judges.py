"""`betaconform judges` end to end: the JSON the issue names, exit codes, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from .conftest import SAMPLE, invoke

CODE = SAMPLE / "code_review.jsonl"  # 7 named judges, some items with a judge missing


def write_named(path: Path, rows: list[dict[str, int | None]]) -> Path:
    path.write_text("".join(json.dumps({"id": f"i{i}", "judgments": r}) + "\n" for i, r in enumerate(rows)))
    return path


class TestOutput:
    """The issue's JSON fields, the default ks, and the named ensemble beside fit's estimators."""

    def test_json_fields(self, runner) -> None:
        res = invoke(runner, "judges", CODE, "-f", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["schema"] == "betaconform/1" and doc["command"] == "judges" and doc["dataset"] == "code_review"
        assert {"name", "accuracy", "low", "high", "items"} <= set(doc["judges"][0])
        assert {"a", "b", "both_wrong", "expected_if_independent"} <= set(doc["pairs"][0])
        assert {"k", "members", "estimate", "low", "high", "random_k", "all_judges"} <= set(doc["ensembles"][0])
        assert [e["k"] for e in doc["ensembles"]] == [1, 3, 5, 7]  # odd k up to the 7 judges
        names = [j["name"] for j in doc["judges"]]
        assert names == sorted(names) and names[:2] == ["claude-3.5", "command-r"] and len(names) == 7  # by name: line order cannot move them
        for e in doc["ensembles"]:
            assert len(e["members"]) == e["k"] and set(e["members"]) <= set(names)
            assert e["low"] <= e["estimate"] <= e["high"]

    def test_accuracy_is_each_judges_own(self, runner) -> None:
        """Per-judge accuracy: the share of its verdicts that agreed with gold, counted here independently."""
        res = invoke(runner, "judges", CODE, "-f", "json")
        doc = json.loads(res.stdout)
        rows = [json.loads(line)["judgments"] for line in CODE.read_text().splitlines()]
        for j in doc["judges"]:
            marks = [r[j["name"]] for r in rows if r.get(j["name"]) is not None]
            assert j["items"] == len(marks) and j["accuracy"] == np.mean(marks)

    def test_named_ensemble(self, runner) -> None:
        res = invoke(runner, "judges", CODE, "--ensemble", "gpt-4o,claude-3.5,gemini-1.5", "-f", "json")
        e = json.loads(res.stdout)["ensemble"]
        assert e["members"] == ["claude-3.5", "gemini-1.5", "gpt-4o"] and e["low"] <= e["estimate"] <= e["high"]
        assert {"estimate", "low", "high", "binomial", "beta_binomial"} <= set(e["fit"])

    def test_table_and_csv(self, runner) -> None:
        res = invoke(runner, "judges", CODE)
        assert res.exit_code == 0 and "the ensemble to run for each size k" in res.stdout and "shared mistakes" in res.stdout
        csv_out = invoke(runner, "judges", CODE, "-f", "csv").stdout.splitlines()
        assert csv_out[0].startswith("dataset,k,members,estimate") and len(csv_out) == 5


class TestCost:
    """--cost with --max-error: the cheapest ensemble under the limit, or exit 1 saying none is."""

    def test_met_and_not_met(self, runner) -> None:
        prices = "gpt-4o=5,claude-3.5=4,llama-3-70b=1,qwen-2.5-72b=1,gemini-1.5=3,mistral-large=2,command-r=1"
        ok = invoke(runner, "judges", CODE, "--cost", prices, "--max-error", "0.9", "-f", "json")
        assert ok.exit_code == 0 and json.loads(ok.stdout)["cost"]["met"]
        strict = invoke(runner, "judges", CODE, "--cost", prices, "--max-error", "0.01")
        assert strict.exit_code == 1 and "no ensemble meets max error 1.0%" in strict.stderr


class TestBadInput:
    """One line, exit 2."""

    def test_errors(self, runner, tmp_path: Path) -> None:
        one = write_named(tmp_path / "one.jsonl", [{"a": 1}, {"a": 0}, {"a": 1}])
        cases = [
            ([one], "at least 2"),
            ([CODE, "--ensemble", "gpt-4o,nobody"], "gpt-4o"),  # the known judges are listed
            ([CODE, "--cost", "nobody=1", "--max-error", "0.2"], "nobody"),
            ([CODE, "--cost", "gpt-4o=-1", "--max-error", "0.2"], "gpt-4o"),
            ([CODE, "--cost", "gpt-4o"], "--cost"),
            ([SAMPLE / "counts_only.jsonl"], "per-judge"),
        ]
        for args, needle in cases:
            res = invoke(runner, "judges", *args)
            assert res.exit_code == 2 and res.stderr.count("\n") == 1 and needle in res.stderr, (args, res.stderr)

    def test_judges_that_never_meet(self, runner, tmp_path: Path) -> None:
        rows = [{"a": 1, "b": 0, "c": None} if i % 2 else {"a": 0, "b": None, "c": 1} for i in range(20)]
        res = invoke(runner, "judges", write_named(tmp_path / "apart.jsonl", rows), "-f", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert ["b", "c"] in doc["pairs_without_data"]
        bc = next(p for p in doc["pairs"] if {p["a"], p["b"]} == {"b", "c"})
        assert bc["both_wrong"] is None and bc["expected_if_independent"] is None


SYSTEM = SAMPLE / "system_verdicts.jsonl"  # verdicts pass/fail of 7 judges, 40 labeled + 110 unlabeled items
PAIRWISE = SAMPLE / "pairwise_verdicts.jsonl"  # A/B preferences of 9 judges, every item labeled


class TestAgreement:
    """Issue 27: each judge against the gold and the panel, in every output; figures from a hand count of the file."""

    def _hand_tables(self) -> dict[str, np.ndarray]:
        rows = [json.loads(line) for line in SYSTEM.read_text().splitlines() if line.strip()]
        out: dict[str, np.ndarray] = {}
        for r in rows:
            if r.get("label") is None:
                continue
            for name, said in r["verdicts"].items():
                if said is not None:
                    t = out.setdefault(name, np.zeros((2, 2)))
                    t[int(r["label"] == "pass"), int(said == "pass")] += 1  # classes sorted: fail, pass
        return out

    def test_json_matches_a_hand_count(self, runner) -> None:
        from statsmodels.stats.inter_rater import cohens_kappa

        res = invoke(runner, "judges", SYSTEM, "-f", "json", "--ks", "1")
        assert res.exit_code == 0, res.output
        a = json.loads(res.stdout)["agreement"]
        assert a["classes"] == ["fail", "pass"] and a["positive"] == "pass" and a["model_used"] is True
        tables = self._hand_tables()
        for j in a["judges"]:
            t = tables[j["name"]]
            assert j["confusion"] == t.astype(int).tolist()
            lab = j["labels"]
            assert lab["items"] == t.sum() and lab["accuracy"]["estimate"] == np.trace(t) / t.sum()
            b = lab["binary"]
            assert b["sensitivity"]["estimate"] == t[1, 1] / t[1].sum() and b["specificity"]["estimate"] == t[0, 0] / t[0].sum()
            assert b["false_pass_rate"]["estimate"] == pytest.approx(t[0, 1] / t[0].sum())
            assert b["false_fail_rate"]["estimate"] == pytest.approx(t[1, 0] / t[1].sum())
            k = cohens_kappa(t).kappa
            assert lab["kappa"]["estimate"] == pytest.approx(k, abs=1e-12)
            # the interval: on the Fisher z scale, the Fleiss-Cohen-Everitt variance at the table plus half an item
            # per cell (statsmodels' on t + 0.5, whose count is n + 2, rescaled to the n items)
            sd = cohens_kappa(t + 0.5).std_kappa * np.sqrt((t.sum() + 2) / t.sum())
            z = 1.6448536269514722
            lo, hi = np.tanh(np.arctanh(k) - z * sd / (1 - k * k)), np.tanh(np.arctanh(k) + z * sd / (1 - k * k))
            assert (lab["kappa"]["low"], lab["kappa"]["high"]) == pytest.approx((lo, hi), rel=1e-5)
            assert j["model"]["items"] == 150 and j["model"]["accuracy"]["low"] <= j["model"]["accuracy"]["estimate"]
        assert a["panel"]["complete_items"] == 150 and -1 <= a["panel"]["fleiss_kappa"]["estimate"] <= 1

    def test_positive_names_the_pass_class(self, runner) -> None:
        doc = json.loads(invoke(runner, "judges", SYSTEM, "-f", "json", "--positive", "fail", "--no-unlabeled").stdout)
        a = doc["agreement"]
        t = self._hand_tables()[a["judges"][0]["name"]]
        assert a["positive"] == "fail" and a["judges"][0]["labels"]["binary"]["sensitivity"]["estimate"] == t[0, 0] / t[0].sum()
        assert a["model_used"] is False and all(j["model"] is None for j in a["judges"])
        bad = invoke(runner, "judges", SYSTEM, "--positive", "maybe")
        assert bad.exit_code == 2 and "maybe" in bad.output and "Traceback" not in bad.output

    def test_no_pass_class_and_no_verdicts(self, runner) -> None:
        a = json.loads(invoke(runner, "judges", PAIRWISE, "-f", "json", "--ks", "1").stdout)["agreement"]
        assert a["positive"] is None and all(j["labels"]["binary"] is None and len(j["labels"]["recall"]) == 2 for j in a["judges"])
        doc = json.loads(invoke(runner, "judges", CODE, "-f", "json", "--ks", "1").stdout)
        assert doc["agreement"] is None  # correctness marks only: no classes to agree on
        assert "agreement with the gold" not in invoke(runner, "judges", CODE, "--ks", "1").stdout

    def test_csv_html_markdown(self, runner, tmp_path: Path) -> None:
        lines = invoke(runner, "judges", SYSTEM, "-f", "csv", "--csv-table", "agreement", "--ks", "1").stdout.splitlines()
        assert lines[0].startswith("dataset,judge,basis,items,positive,accuracy,accuracy_low,accuracy_high,sensitivity")
        assert len(lines) == 1 + 7 * 2 + 1  # each judge labels-only and model-based, then the panel
        assert invoke(runner, "judges", SYSTEM, "-f", "csv", "--ks", "1").stdout.startswith("dataset,k,members")
        out = tmp_path / "j.html"
        assert invoke(runner, "judges", SYSTEM, "--ks", "1", "-o", str(out)).exit_code == 0
        html = out.read_text()
        assert "Cohen&#x27;s kappa with the gold per judge" in html and html.count("<svg") == 2
        assert "agreement among the judges" in html and "sensitivity" in html
        md = invoke(runner, "judges", SYSTEM, "-f", "markdown", "--ks", "1").stdout
        assert "**agreement with the gold per judge: chance-corrected (90% intervals)**" in md and "<svg" not in md


def test_kappa_chart_draws_negative_values_left_of_zero() -> None:
    """hbars with a negative value: its bar ends left of the zero line, the axis runs below 0."""
    from betaconform_cli.report.svg import to_svg
    from betaconform_cli.report.views import Chart, Series

    svg = to_svg(Chart(kind="hbars", title="k", rows=("a", "b"), series=(Series("k", (-0.2, 0.6), (-0.4, 0.4), (0.1, 0.8)),),
                       percent=False))
    import re

    rects = [(float(x), float(w)) for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)]
    (xa, wa), (xb, wb) = rects
    assert xa + wa == pytest.approx(xb, abs=0.2)  # a's bar ends where b's starts: at zero
    assert "-0.20" in svg and "0.60" in svg and ">-0.5<" in svg


def test_agreement_left_out_beyond_max_classes(runner, tmp_path: Path) -> None:
    """More verdict classes than judges.gold.MAX_CLASSES: no agreement record, and a note that says why."""
    from betaconform_cli.judges.gold import MAX_CLASSES

    rng = np.random.default_rng(0)
    n = MAX_CLASSES + 5
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{i}", "verdicts": {j: str(rng.integers(n)) for j in "abc"}, "label": str(i % n)}) + "\n"
                            for i in range(60)))
    res = invoke(runner, "judges", path, "--ks", "1", "-f", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["agreement"] is None
    assert f"agreement with the gold left out: {n} verdict classes (at most {MAX_CLASSES}" in res.stderr
