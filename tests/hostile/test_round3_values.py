"""Issue 25, items 4 to 6, as real processes (and the app in-process for the format x command matrix): one value rule
and one set of refusals in every format and every command (no quiet misread), valid input read (unlabeled items,
pools, streams), and rows past the data marked and widened in every output (no silent extrapolation)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from .conftest import ROOT, cli_env, invoke, one_error_line, run_cli, write_jsonl

PANDAS = ROOT / "tests" / "fixtures" / "pandas"
JUDGES = ("j1", "j2", "j3", "j4", "j5")


def items(n: int = 40, seed: int = 1) -> list[tuple[str, str, list[str]]]:
    """(id, gold, five verdicts) with gold and verdicts pass/fail; judges right 80% of the time."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        g = rng.choice(("pass", "fail"))
        out.append((f"i{i}", g, [g if rng.random() < 0.8 else ("fail" if g == "pass" else "pass") for _ in JUDGES]))
    return out


def spell(value: str, how: str) -> str:
    """pass/fail in another vocabulary: upper case, capitalised yes/no, 1/0 or true/false."""
    return {"upper": value.upper(), "yes": "Yes" if value == "pass" else "No", "yes_lower": "yes" if value == "pass" else "no",
            "digit": "1" if value == "pass" else "0", "bool": "true" if value == "pass" else "false"}.get(how, value)


def one_document(out: bytes | str) -> dict[str, object]:
    """The document of one dataset (an object; a list when the command writes one)."""
    doc = json.loads(out)
    return doc[0] if isinstance(doc, list) else doc


# --- writers: the same items in each format, gold spelled `gold_as`, verdicts `verdict_as` ----------------------

def as_jsonl(d: Path, rows, gold_as: str, verdict_as: str) -> list[str]:
    p = write_jsonl(d / "v.jsonl", [{"id": i, "verdicts": dict(zip(JUDGES, (spell(v, verdict_as) for v in vs))),
                                     "label": spell(g, gold_as)} for i, g, vs in rows])
    return [str(p)]


def as_long_csv(d: Path, rows, gold_as: str, verdict_as: str) -> list[str]:
    p = d / "long.csv"
    p.write_text("item_id,judge,verdict,gold\n" + "".join(
        f"{i},{j},{spell(v, verdict_as)},{spell(g, gold_as)}\n" for i, g, vs in rows for j, v in zip(JUDGES, vs)))
    return [str(p)]


def as_wide_csv(d: Path, rows, gold_as: str, verdict_as: str) -> list[str]:
    p = d / "wide.csv"
    p.write_text("id," + ",".join(JUDGES) + ",gold\n" + "".join(
        f"{i}," + ",".join(spell(v, verdict_as) for v in vs) + f",{spell(g, gold_as)}\n" for i, g, vs in rows))
    return [str(p)]


def as_long_jsonl(d: Path, rows, gold_as: str, verdict_as: str) -> list[str]:
    p = write_jsonl(d / "long_rows.jsonl", [{"sample_id": i, "grader": j, "verdict": spell(v, verdict_as),
                                             "gold": spell(g, gold_as)} for i, g, vs in rows for j, v in zip(JUDGES, vs)])
    return [str(p)]


def as_parquet(d: Path, rows, gold_as: str, verdict_as: str) -> list[str]:
    (csv,) = as_long_csv(d, rows, gold_as, verdict_as)
    p = d / "long.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM read_csv('{csv}', all_varchar = true)) TO '{p}'")
    Path(csv).unlink()
    return [str(p)]


def as_labels_join(d: Path, rows, gold_as: str, verdict_as: str) -> list[str]:
    bare = write_jsonl(d / "bare.jsonl", [{"id": i, "verdicts": dict(zip(JUDGES, (spell(v, verdict_as) for v in vs)))}
                                          for i, _, vs in rows])
    gold = d / "gold.csv"
    gold.write_text("id,gold\n" + "".join(f"{i},{spell(g, gold_as)}\n" for i, g, _ in rows))
    return [str(bare), "--labels", str(gold)]


def as_long_labels_join(d: Path, rows, gold_as: str, verdict_as: str) -> list[str]:
    """A long table of verdicts without gold (a pool) beside a long table that holds the gold on every row."""
    pool = d / "pool.csv"
    pool.write_text("item_id,judge,verdict\n" + "".join(
        f"{i},{j},{spell(v, verdict_as)}\n" for i, _, vs in rows for j, v in zip(JUDGES, vs)))
    (labels,) = as_long_csv(d, rows, gold_as, "plain")
    return [str(pool), "--labels", labels]


FORMATS: dict[str, Callable[..., list[str]]] = {
    "jsonl": as_jsonl, "long_csv": as_long_csv, "wide_csv": as_wide_csv, "long_jsonl": as_long_jsonl,
    "parquet": as_parquet, "labels_join": as_labels_join, "long_labels_join": as_long_labels_join,
}
COMMANDS = {"fit": ["fit"], "judges": ["judges"], "score": ["score", "--positive", "pass"], "doctor": ["doctor"],
            "sample": ["sample", "--replay", "--runs", "1"], "evaluate": ["evaluate", "--runs", "2", "--r", "10"]}
VOCABULARIES = [("upper", "plain"), ("yes", "yes_lower"), ("bool", "digit")]


class TestNoQuietMisread:
    """Item 4: gold in another vocabulary than the verdicts is refused (exit 2, both vocabularies and the file named)
    in every format and every command; doctor shows both lists first."""

    @pytest.mark.parametrize("fmt", list(FORMATS))
    @pytest.mark.parametrize("command", list(COMMANDS))
    def test_matrix(self, tmp_path: Path, fmt: str, command: str) -> None:
        at = list(FORMATS).index(fmt) + list(COMMANDS).index(command)
        gold_as, verdict_as = VOCABULARIES[at % len(VOCABULARIES)]  # each vocabulary pair met across the grid
        if command == "sample" and fmt.endswith("labels_join") or command == "evaluate" and fmt == "long_labels_join":
            gold_as, verdict_as = "upper", "plain"
        args = FORMATS[fmt](tmp_path, items(), gold_as, verdict_as)
        res = invoke(*COMMANDS[command], *args)
        assert res.exit_code == 2, (fmt, command, res.output)
        err = res.stderr
        assert "share no class" in err and "gold: " in err and "verdicts: " in err, err
        assert err.startswith("error: ") and Path(args[0]).name in err, err
        gold = {spell(g, gold_as) for g in ("pass", "fail")}
        assert all(f'"{g}"' in err for g in gold), err
        if command == "doctor":
            assert "classes: gold against verdicts" in res.stdout and "PROBLEM" in res.stdout

    @pytest.mark.parametrize("fmt", ["jsonl", "long_csv", "labels_join"])
    def test_the_same_vocabulary_is_read(self, tmp_path: Path, fmt: str) -> None:
        """The control: the same items with gold and verdicts spelled alike fit, and give the same histogram."""
        args = FORMATS[fmt](tmp_path, items(), "upper", "upper")
        res = invoke("fit", *args, "-f", "json", "--ks", "1-5")
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["histogram"]["5"][0] < 5  # not every verdict wrong

    def test_real_process_doctor_lists_and_refuses(self, tmp_path: Path) -> None:
        (path,) = as_jsonl(tmp_path, items(), "upper", "plain")
        p = run_cli("doctor", path, "-f", "json")
        assert "share no class" in one_error_line(p)
        doc = one_document(p.stdout)
        assert doc["vocabularies"] == {"gold": ["FAIL", "PASS"], "verdicts": ["fail", "pass"], "unlabeled_verdicts": []}
        assert doc["problems"] and "share no class" in doc["problems"][0]

    def test_positive_that_two_spellings_answer_to_is_ambiguous(self, tmp_path: Path) -> None:
        rows = [{"id": f"i{n}", "verdicts": ["pass", "Pass", "fail"][n % 3:] + ["pass"], "label": ["pass", "Pass", "fail"][n % 3]}
                for n in range(30)]
        path = write_jsonl(tmp_path / "mixed.jsonl", rows)
        for given in ("pass", "Pass", "PASS"):
            err = one_error_line(run_cli("score", path, "--positive", given))
            assert "ambiguous" in err and "'Pass', 'pass'" in err
        ok = write_jsonl(tmp_path / "one.jsonl", [r | {"label": r["label"].lower(), "verdicts": [v.lower() for v in r["verdicts"]]}
                                                  for r in rows])
        res = run_cli("score", ok, "--positive", "PASS", "-f", "json")
        assert res.returncode == 0 and json.loads(res.stdout)["positive"] == "pass"

    @pytest.mark.parametrize("name", ["wide_verdicts.csv", "wide_verdicts_twice.csv", "wide_correct.csv", "wide_correct.tsv"])
    def test_pandas_index_is_never_a_judge(self, name: str) -> None:
        """Files pandas' to_csv() wrote (tests/fixtures/pandas/make.py): the index column is skipped and doctor says so."""
        res = invoke("doctor", PANDAS / name, "-f", "json")
        assert res.exit_code == 0, res.output
        doc = one_document(res.stdout)
        assert [j["name"] for j in doc["judges"]] == ["gpt-4o", "claude", "llama"]
        assert any("row index pandas writes" in n for n in doc["notes"])
        fit = invoke("fit", PANDAS / name, "-f", "json", "--ks", "1-3")
        assert fit.exit_code == 0 and json.loads(fit.stdout)["judges"] == 3 and json.loads(fit.stdout)["items"] == 12

    @pytest.mark.parametrize("label", ['["pass"]', '{"v": "pass"}', "[]"])
    def test_a_labels_value_that_is_a_list_or_object_is_refused(self, tmp_path: Path, label: str) -> None:
        bare = write_jsonl(tmp_path / "bare.jsonl", [{"id": f"i{n}", "verdicts": ["pass", "fail"]} for n in range(3)])
        gold = tmp_path / "gold.jsonl"
        gold.write_text('{"id": "i0", "gold": "pass"}\n{"id": "i1", "gold": ' + label + '}\n{"id": "i2", "gold": "fail"}\n')
        for command in ("fit", "doctor"):
            err = one_error_line(run_cli(command, bare, "--labels", gold))
            assert f"{gold}:2: field 'gold': must be one value" in err, err

    def test_a_parquet_labels_column_of_lists_is_refused(self, tmp_path: Path) -> None:
        bare = write_jsonl(tmp_path / "bare.jsonl", [{"id": "i0", "verdicts": ["pass", "fail"]}])
        gold = tmp_path / "gold.parquet"
        duckdb.connect().execute(f"COPY (SELECT 'i0' AS id, ['pass'] AS gold) TO '{gold}'")
        err = one_error_line(run_cli("fit", bare, "--labels", gold))
        assert "column 'gold'" in err and "must be one value" in err

    @pytest.mark.parametrize("digit", ["١", "１", "1_0"])
    def test_non_ascii_digits_are_text_in_json_lines_and_tables_alike(self, tmp_path: Path, digit: str) -> None:
        rows = [(f"i{n}", "1", [digit if n % 2 else "1", "0", "1"]) for n in range(12)]
        j = write_jsonl(tmp_path / "d.jsonl", [{"id": i, "verdicts": vs, "label": g} for i, g, vs in rows])
        t = tmp_path / "d.csv"
        t.write_text("item_id,judge,verdict,gold\n" + "".join(f"{i},j{k},{v},{g}\n" for i, g, vs in rows for k, v in enumerate(vs)))
        got = [json.loads(invoke("fit", p, "-f", "json", "--ks", "1-3").stdout)["histogram"] for p in (j, t)]
        assert got[0] == got[1] == {"3": [0, 6, 6, 0]}  # "١" is never the number 1, in either format

    @pytest.mark.parametrize("command", ["fit", "judges", "doctor", "score"])
    def test_two_golds_on_one_item_refused_by_every_command(self, tmp_path: Path, command: str) -> None:
        t = tmp_path / "two.csv"
        t.write_text("item_id,judge,verdict,gold\ni1,a,pass,pass\ni1,b,fail,fail\ni2,a,pass,pass\ni2,b,pass,pass\n"
                     "i3,a,fail,fail\ni3,b,fail,fail\n")
        err = one_error_line(run_cli(command, t, *(["--positive", "pass"] if command == "score" else [])))
        assert "row 2: column 'gold': item 'i1' has two different gold labels" in err


class TestValidInputIsRead:
    """Item 5: items nobody judged are skipped and counted (by score: part of its population), pools of unlabeled items are read by doctor, a judge seen
    only on unlabeled items is kept, a long pool beside long labels is joined, and a labels stream is read."""

    def rows(self) -> list[dict[str, object]]:
        out: list[dict[str, object]] = [{"id": i, "verdicts": dict(zip(JUDGES, vs)), "label": g} for i, g, vs in items(30)]
        out += [{"id": "nobody", "verdicts": {}}, {"id": "nulls", "verdicts": {"j1": None, "j2": None}},
                {"id": "gold-only", "verdicts": [], "label": "pass"}]
        out += [{"id": f"u{n}", "verdicts": {"j1": "pass", "j2": "pass", "late": "fail"}} for n in range(6)]
        return out

    @pytest.mark.parametrize("command", ["fit", "judges", "doctor", "score"])
    def test_items_nobody_judged_are_skipped_and_counted(self, tmp_path: Path, command: str) -> None:
        path = write_jsonl(tmp_path / "mixed.jsonl", self.rows())
        p = run_cli(command, path, "-f", "json", *(["--positive", "pass"] if command == "score" else []))
        assert p.returncode == 0, p.stderr.decode()
        doc = one_document(p.stdout)
        if command == "doctor":
            assert doc["skipped"] == [{"reason": "no judge gave a verdict", "count": 3, "first": 31}]
            late = next(j for j in doc["judges"] if j["name"] == "late")
            assert late == {"name": "late", "verdicts": 0, "unlabeled": 6}  # kept, its unlabeled verdicts counted
        elif command == "score":  # part of score's population (issue 26), not skipped: one labeled, two predicted
            assert (doc["no_verdict_items"], doc["no_verdict_labeled"]) == (3, 1)
            assert "no judge gave a verdict" not in p.stderr.decode()
        else:
            assert "3 no judge gave a verdict" in p.stderr.decode()

    def test_a_judge_seen_only_on_unlabeled_items_is_not_unknown(self, tmp_path: Path) -> None:
        path = write_jsonl(tmp_path / "late.jsonl", self.rows())
        err = one_error_line(run_cli("judges", path, "--ensemble", "j1,late"))
        assert "unknown judge" not in err and "'late' gave verdicts only on unlabeled items" in err

    @pytest.mark.parametrize("kind", ["jsonl", "long_csv"])
    def test_doctor_reads_a_pool_of_unlabeled_items(self, tmp_path: Path, kind: str) -> None:
        rows = items(20)
        if kind == "jsonl":
            path = write_jsonl(tmp_path / "pool.jsonl", [{"id": i, "verdicts": vs} for i, _, vs in rows])
        else:
            path = tmp_path / "pool.csv"
            path.write_text("item_id,judge,verdict\n" + "".join(f"{i},{j},{v}\n" for i, _, vs in rows for j, v in zip(JUDGES, vs)))
        p = run_cli("doctor", path, "-f", "json")
        assert p.returncode == 0, p.stderr.decode()
        doc = one_document(p.stdout)
        assert doc["items"] == 0 and doc["unlabeled_items"] == 20 and doc["most_judges"] == 5
        assert [j["unlabeled"] for j in doc["judges"]] == [20] * 5 and any("a pool" in n for n in doc["notes"])
        assert "no labeled items" in one_error_line(run_cli("fit", path))

    def test_a_long_pool_beside_long_labels(self, tmp_path: Path) -> None:
        args = as_long_labels_join(tmp_path, items(), "plain", "plain")
        res = run_cli("fit", *args, "-f", "json", "--ks", "1-5")
        assert res.returncode == 0, res.stderr.decode()
        assert json.loads(res.stdout)["items"] == 40
        live = run_cli("sample", args[2], "--pool", args[0], "-f", "json")
        assert live.returncode in (0, 1), live.stderr.decode()

    def test_labels_from_a_process_substitution_and_a_pipe(self, tmp_path: Path) -> None:
        (bare, _, gold) = as_labels_join(tmp_path, items(), "plain", "plain")
        want = json.loads(run_cli("fit", bare, "--labels", gold, "-f", "json", "--ks", "1-3").stdout)["histogram"]
        script = f'"{sys.executable}" -m betaconform_cli fit "{bare}" --labels <(cat "{gold}") -f json --ks 1-3'
        sub = subprocess.run(["bash", "-c", script], capture_output=True, env=cli_env(), timeout=60, check=False)
        assert sub.returncode == 0, sub.stderr.decode()
        assert json.loads(sub.stdout)["histogram"] == want
        piped = run_cli("fit", bare, "--labels", "/dev/stdin", "-f", "json", "--ks", "1-3", input=Path(gold).read_bytes())
        assert piped.returncode == 0 and json.loads(piped.stdout)["histogram"] == want


class TestExtrapolationIsNeverSilent:
    """Item 6: rows past the most judges any item has are marked in every output, never narrower than at that k,
    and a gate there says so."""

    @pytest.fixture
    def five(self, tmp_path: Path) -> Path:
        rng = random.Random(5)
        rows = []
        for n in range(60):
            p = rng.choice((0.55, 0.8, 0.95))
            rows.append({"id": f"i{n}", "judgments": [int(rng.random() < p) for _ in range(5)]})
        return write_jsonl(tmp_path / "five.jsonl", rows)

    def test_json_csv_and_table(self, five: Path) -> None:
        doc = json.loads(run_cli("fit", five, "-f", "json").stdout)
        rows = {r["k"]: r for r in doc["error_rates"]}
        assert [k for k, r in rows.items() if r["beyond_data"]] == [6, 7, 8, 9, 10, 11]
        width5 = rows[5]["high"] - rows[5]["low"]
        assert all(rows[k]["high"] - rows[k]["low"] >= width5 - 1e-12 for k in range(6, 12))
        assert all(rows[k]["low"] <= rows[k]["estimate"] <= rows[k]["high"] for k in rows)
        csv = run_cli("fit", five, "-f", "csv").stdout.decode().splitlines()
        assert csv[0].endswith(",beyond_data") and [line.rsplit(",", 1)[1] for line in csv[1:]] == ["false"] * 5 + ["true"] * 6
        table = run_cli("fit", five).stdout.decode()
        assert "9‡" in table and "‡ extrapolated: more judges than any item has (5)" in table

    def test_a_k_beyond_alone_is_widened_against_the_data(self, five: Path) -> None:
        """--ks 9 alone: the reference row at 5 is computed (and not shown), the same as in the full table."""
        alone = json.loads(run_cli("fit", five, "-f", "json", "--ks", "9").stdout)["error_rates"]
        full = {r["k"]: r for r in json.loads(run_cli("fit", five, "-f", "json").stdout)["error_rates"]}
        assert [r["k"] for r in alone] == [9] and alone[0]["beyond_data"]
        assert alone[0]["low"] == pytest.approx(full[9]["low"]) and alone[0]["high"] == pytest.approx(full[9]["high"])

    def test_gate_json_junit_summary_and_html(self, five: Path, tmp_path: Path) -> None:
        summary = tmp_path / "summary.md"
        junit = tmp_path / "j.xml"
        html = tmp_path / "r.html"
        p = run_cli("fit", five, "--max-error", "0.9", "--at-k", "9", "--junit", junit, "-o", html, "-f", "html",
                    env=cli_env(GITHUB_STEP_SUMMARY=str(summary)))
        assert p.returncode == 0, p.stderr.decode()
        assert "beyond the 5 judges any item has" in p.stderr.decode()
        assert 'class="extrapolated"' in html.read_text()
        assert "(extrapolated)" in junit.read_text()
        assert "extrapolated: no item has more than 5 judges" in summary.read_text()
        doc = json.loads(run_cli("fit", five, "--max-error", "0.9", "--at-k", "9", "-f", "json").stdout)
        assert doc["gate"]["extrapolated"] is True
        within = json.loads(run_cli("fit", five, "--max-error", "0.9", "--at-k", "5", "-f", "json").stdout)
        assert within["gate"]["extrapolated"] is False

    def test_report_of_a_saved_fit_marks_the_rows(self, five: Path, tmp_path: Path) -> None:
        saved = tmp_path / "five.yaml"
        assert run_cli("fit", five, "--save", saved).returncode == 0
        out = run_cli("report", saved, "--max-error", "0.9", "--at-k", "11", "-f", "json")
        doc = json.loads(out.stdout)
        assert doc["gate"]["extrapolated"] is True and doc["error_rates"][-1]["beyond_data"] is True
