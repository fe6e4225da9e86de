"""The fit and report commands end to end: formats, gate exit codes, saved fits, golden outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from betaconform_cli import __version__
from betaconform_cli.cli import app

from .conftest import ROOT, SAMPLE, invoke
from .tolerance import assert_close

GOLDEN = Path(__file__).parent / "golden"
REQUIRED = {"schema", "command", "source", "items", "judges", "method", "seed", "model", "error_rates"}
ROW = {"k", "estimate", "low", "high", "binomial", "beta_binomial", "empirical"}


class TestFitOutput:
    """Each output format carries the same numbers."""

    def test_table(self, runner) -> None:
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl")
        assert res.exit_code == 0
        assert "qa_judges: majority-vote error by number of judges k" in res.stdout
        assert "90% interval" in res.stdout and "fit diagnostics" in res.stdout and "even k" in res.stdout

    def test_json_schema(self, runner) -> None:
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "--format", "json", "--seed", "3")
        doc = json.loads(res.stdout)
        assert REQUIRED <= doc.keys() and doc["schema"] == "betaconform/1" and doc["seed"] == 3
        assert [r["k"] for r in doc["error_rates"]] == list(range(1, 12))
        assert all(ROW <= r.keys() for r in doc["error_rates"])
        assert doc["items"] == 120 and doc["judges"] == 11

    def test_several_inputs_give_json_lines_and_a_summary(self, runner) -> None:
        res = invoke(runner, "fit", SAMPLE, "--format", "json")
        lines = [json.loads(x) for x in res.stdout.splitlines()]
        assert [d["dataset"] for d in lines] == ["code_review", "counts_only", "pairwise_verdicts", "qa_judges", "system_b_verdicts", "system_verdicts"]
        table = invoke(runner, "fit", SAMPLE, "--no-chart")
        assert "summary: estimated majority-vote error" in table.stdout

    def test_empirical_null_where_items_have_fewer_judges(self, runner) -> None:
        doc = json.loads(invoke(runner, "fit", SAMPLE / "counts_only.jsonl", "-f", "json").stdout)
        by_k = {r["k"]: r for r in doc["error_rates"]}
        assert by_k[5]["empirical"] is not None and by_k[11]["empirical"] is None

    def test_csv_and_markdown_and_output_extension(self, runner, tmp_path: Path) -> None:
        csv_out = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "-f", "csv").stdout.splitlines()
        assert csv_out[0].startswith("dataset,k,estimate,low,high") and len(csv_out) == 12
        md = tmp_path / "summary.md"
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "-o", md)
        assert res.exit_code == 0 and md.read_text().startswith("## qa_judges") and "| k |" in md.read_text()
        js = tmp_path / "out.json"
        invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "-o", js)
        assert json.loads(js.read_text())["dataset"] == "qa_judges"

    def test_ks_option(self, runner) -> None:
        doc = json.loads(invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "-f", "json", "--ks", "1,3,21").stdout)
        assert [r["k"] for r in doc["error_rates"]] == [1, 3, 21]

    def test_paper_method(self, runner) -> None:
        doc = json.loads(invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "-f", "json", "--method", "paper").stdout)
        assert doc["method"] == "paper" and doc["model"]["method"] == "paper-em"


class TestGate:
    """--max-error / --at-k: exit 1 with the reason on stderr, output written all the same."""

    def test_gate_passes(self, runner) -> None:
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "--max-error", "0.5", "--at-k", "5")
        assert res.exit_code == 0

    def test_gate_fails_on_upper_bound_but_output_is_written(self, runner, tmp_path: Path) -> None:
        out = tmp_path / "r.json"
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "--max-error", "0.25", "--at-k", "5", "-o", out)
        assert res.exit_code == 1
        assert "gate failed: qa_judges: upper interval bound of the error at k=5" in res.stderr
        assert json.loads(out.read_text())["gate"]["passed"] is False

    def test_gate_on_estimate(self, runner) -> None:
        doc = json.loads(invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "-f", "json").stdout)
        row = next(r for r in doc["error_rates"] if r["k"] == 5)
        between = (row["estimate"] + row["high"]) / 2
        assert invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "--max-error", between, "--at-k", "5", "--on", "estimate").exit_code == 0
        assert invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "--max-error", between, "--at-k", "5").exit_code == 1

    @pytest.mark.parametrize("args", [["--max-error", "0.1"], ["--max-error", "2", "--at-k", "3"], ["--max-error", "0.1", "--at-k", "12"]])
    def test_gate_usage_errors(self, runner, args) -> None:
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", *args)
        assert res.exit_code == 2 and res.stderr.startswith("error: ")


class TestBadInput:
    """Exit 2 and one line on stderr; never a traceback."""

    def test_bad_line(self, runner, write_jsonl) -> None:
        p = write_jsonl("bad.jsonl", ['{"judgments": [1, 0]}', '{"judgments": [1, "x"]}'], raw=True)
        res = invoke(runner, "fit", p)
        assert res.exit_code == 2
        assert res.stderr.strip() == f"error: {p}:2: field 'judgments[1]': must be 1/0, true/false, yes/no, pass/fail or correct/incorrect (null, empty or NA: no verdict), got \"x\""

    @pytest.mark.parametrize("args", [["--method", "magic"], ["--components", "7"], ["--ks", "a-b"], ["--confidence-level", "1.5"], ["--format", "xml"],
                                      ["--ks", "3-300000000"], ["--seed", "-1"], ["--tolerance", "nan"]])
    def test_bad_options(self, runner, args) -> None:
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", *args)
        assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1

    @pytest.mark.parametrize("option", ["-o", "--save"])
    def test_output_to_a_directory_is_a_one_line_error(self, runner, tmp_path: Path, option: str) -> None:
        res = invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "--no-chart", option, tmp_path)
        assert res.exit_code == 2 and res.stderr.strip().splitlines()[-1] in (
            f"error: {tmp_path}: cannot write the output: is a directory (give a file name)",  # -o: refused before the fit
            f"error: {tmp_path}: cannot write the saved fit: is a directory (give a file name)",  # --save: too
        )
        assert list(tmp_path.iterdir()) == [] and not list(tmp_path.parent.glob(f".{tmp_path.name}.*"))

    def test_saved_fit_given_to_fit_points_to_report(self, runner, tmp_path: Path) -> None:
        y = tmp_path / "qa.yaml"
        invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "--save", y, "--no-chart")
        res = invoke(runner, "fit", y)
        assert res.exit_code == 2 and "betaconform report" in res.stderr

    def test_skip_invalid_reports_count(self, runner, write_jsonl) -> None:
        p = write_jsonl("s.jsonl", ['{"judgments": [1, 0]}', "nope", '{"judgments": [1, 1]}'], raw=True)
        res = invoke(runner, "fit", p, "--skip-invalid", "-f", "json")
        assert res.exit_code == 0 and "skipped 1 invalid line" in res.stderr and json.loads(res.stdout)["skipped_lines"] == 1


class TestSaveAndReport:
    """fit --save writes a versioned YAML; report prints the same numbers from it."""

    def test_save_then_report_same_numbers(self, runner, tmp_path: Path) -> None:
        y = tmp_path / "qa.yaml"
        fitted = json.loads(invoke(runner, "fit", SAMPLE / "qa_judges.jsonl", "-f", "json", "--save", y).stdout)
        saved = yaml.safe_load(y.read_text())
        assert saved["schema"] == "betaconform/fit/1" and saved["tool_version"] == __version__ and saved["embedding"] is None
        assert saved["histogram"] == {11: fitted["histogram"]["11"]}
        reported = json.loads(invoke(runner, "report", y, "-f", "json").stdout)
        assert reported["command"] == "report" and reported["error_rates"] == fitted["error_rates"]
        assert "qa_judges: majority-vote error" in invoke(runner, "report", y).stdout

    def test_save_dir_for_many_inputs(self, runner, tmp_path: Path) -> None:
        res = invoke(runner, "fit", SAMPLE, "--save-dir", tmp_path / "fits", "--no-chart")
        assert res.exit_code == 0
        names = sorted(p.name for p in (tmp_path / "fits").iterdir())
        assert names == ["code_review.yaml", "counts_only.yaml", "pairwise_verdicts.yaml", "qa_judges.yaml", "system_b_verdicts.yaml",
                         "system_verdicts.yaml"]
        fits = sorted((tmp_path / "fits").iterdir())
        both = invoke(runner, "report", *fits, "--no-chart")
        assert "summary" in both.stdout and "side by side" not in both.stdout  # four: too wide to put side by side
        three = invoke(runner, "report", *fits[:3], "--no-chart")
        assert "side by side" in three.stdout
        assert three.stdout.count("code_review") >= 3  # its own table, a side-by-side column, a summary row

    def test_save_refuses_many_inputs(self, runner, tmp_path: Path) -> None:
        res = invoke(runner, "fit", SAMPLE, "--save", tmp_path / "x.yaml")
        assert res.exit_code == 2 and "--save-dir" in res.stderr

    def test_report_refuses_python_tags(self, runner, tmp_path: Path) -> None:
        p = tmp_path / "evil.yaml"
        p.write_text("schema: !!python/object/apply:os.system ['echo pwned']\n")
        res = invoke(runner, "report", p)
        assert res.exit_code == 2 and "refused" in res.stderr and "pwned" not in res.stdout

    @pytest.mark.parametrize("edit,field", [
        (lambda d: d["error_rates"][0].update(estimate="x"), "error_rates[0].estimate"),
        (lambda d: d["error_rates"][0].update(k="x"), "error_rates[0].k"),
        (lambda d: d["model"]["components"][0].update(mean="x"), "model.components[0].mean"),
    ])
    def test_report_on_a_hand_edited_fit_is_one_line(self, runner, tmp_path: Path, edit, field: str) -> None:
        """These passed the schema check and then raised ValueError/TypeError in the table code."""
        doc = yaml.safe_load((ROOT / "configs" / "priors" / "snow_rte_rc.yaml").read_text())
        edit(doc)
        p = tmp_path / "edited.yaml"
        p.write_text(yaml.safe_dump(doc))
        res = invoke(runner, "report", p, "--no-chart")
        assert res.exit_code == 2 and res.stderr.strip().startswith(f"error: {p}: field '{field}'") and len(res.stderr.strip().splitlines()) == 1

    @pytest.mark.parametrize("how", ["absent", "null", "nan"])
    def test_report_fills_in_a_missing_component_mean(self, runner, tmp_path: Path, how: str) -> None:
        """A hand-written prior without a component's mean, or with null or .nan (read as null): the table shows
        alpha / (alpha + beta) (a null mean once ended in an internal error when the table formatted it)."""
        doc = yaml.safe_load((ROOT / "configs" / "priors" / "snow_rte_rc.yaml").read_text())
        for c in doc["model"]["components"]:
            if how == "absent":
                c.pop("mean")
            else:
                c["mean"] = None if how == "null" else float("nan")
        p = tmp_path / "prior.yaml"
        p.write_text(yaml.safe_dump(doc))
        res = invoke(runner, "report", p, "-f", "json")
        assert res.exit_code == 0, res.stderr
        for c in json.loads(res.stdout)["model"]["components"]:
            assert c["mean"] == pytest.approx(c["alpha"] / (c["alpha"] + c["beta"]), rel=1e-12)
        assert invoke(runner, "report", p, "--no-chart").exit_code == 0


class TestGolden:
    """sample_data fits are pinned: any change in the numbers is a visible diff in tests/golden/."""

    @pytest.mark.parametrize("name", ["qa_judges", "code_review", "pairwise_verdicts", "counts_only"])
    def test_golden(self, runner, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.chdir(ROOT)
        res = invoke(runner, "fit", f"sample_data/{name}.jsonl", "-f", "json", "--seed", "0")
        doc = json.loads(res.stdout)
        doc.pop("tool_version")
        path = GOLDEN / f"{name}.json"
        if os.environ.get("BETACONFORM_REGEN_GOLDEN"):
            path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        expected = json.loads(path.read_text())
        assert_close(doc, expected, name)


class TestMeta:
    """Help text for every command, the version, and start-up without torch."""

    def test_every_command_has_help(self, runner) -> None:
        import typer.main

        group = typer.main.get_command(app)
        for name, command in group.commands.items():  # type: ignore[attr-defined]
            assert command.help, name
            assert invoke(runner, name, "--help").exit_code == 0

    def test_version_matches_metadata(self, runner) -> None:
        from importlib.metadata import version

        assert __version__ == version("betaconform-cli")
        assert invoke(runner, "--version").stdout.strip() == f"betaconform {__version__}"

    @pytest.mark.process  # a fresh interpreter: what a new process imports
    def test_help_and_small_fit_never_import_torch(self) -> None:
        code = (
            "import sys\n"
            "from betaconform_cli.cli import app\n"
            "from typer.testing import CliRunner\n"
            f"r = CliRunner().invoke(app, ['fit', {str(SAMPLE / 'qa_judges.jsonl')!r}, '-f', 'json'])\n"
            "assert r.exit_code == 0, r.output\n"
            "r = CliRunner().invoke(app, ['--help'])\n"
            "bad = [m for m in ('torch', 'sentence_transformers', 'matplotlib', 'pandas') if m in sys.modules]\n"
            "print(','.join(bad))\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == ""

    def test_console_script_exit_code_for_bad_input(self, tmp_path: Path) -> None:
        exe = Path(sys.executable).parent / "betaconform"
        res = subprocess.run([str(exe), "fit", str(tmp_path / "missing.jsonl")], capture_output=True, text=True, check=False)
        assert res.returncode == 2 and "Traceback" not in res.stderr and res.stderr.count("\n") == 1


class TestInternalErrors:
    """A bug keeps its traceback but exits 70, never 1 (which CI reads as a failed gate) or 2."""

    def test_bug_exits_70(self, runner, monkeypatch: pytest.MonkeyPatch) -> None:
        from betaconform_cli import api

        def boom(*_a: object, **_k: object) -> None:
            raise ZeroDivisionError("simulated bug")

        monkeypatch.setattr(api, "fit", boom)
        res = runner.invoke(app, ["fit", str(SAMPLE / "qa_judges.jsonl")])
        assert res.exit_code == 70 and "Traceback" in res.stderr and "ZeroDivisionError" in res.stderr
        assert res.stderr.strip().splitlines()[-1].startswith("internal error")
