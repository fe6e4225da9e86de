"""Every command's own output, written into a data folder, is skipped when the folder is read again (issue 29,
item 1): one registry says what this tool writes (formats.OutputTable for CSV reports, built by render.to_csv,
which writes no other header; the "schema" marker for JSON), and the list of commands below is checked against
the CLI's, so a new command cannot be left out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from betaconform_cli import formats
from betaconform_cli.inputs.paths import tool_output
from betaconform_cli.report.render import to_csv

from .conftest import SAMPLE, fill_embedding_cache, invoke

Q, C, S, SB = (SAMPLE / f for f in ("qa_judges.jsonl", "code_review.jsonl", "system_verdicts.jsonl", "system_b_verdicts.jsonl"))

# each command of the CLI, with the invocations that reach each of its outputs ({fits}: fit --save-dir's folder;
# {cache}: an embedding cache holding counts_only's texts, so that transfer does not load the model)
COMMANDS: dict[str, list[list[str]]] = {
    "fit": [["fit", str(Q)]],
    "report": [["report", "{fits}/qa_judges.yaml"]],
    "sample": [["sample", str(Q), "--replay", "--runs", "2"], ["sample", str(Q)]],
    "evaluate": [["evaluate", str(Q), "--r", "10", "--runs", "2"]],
    "judges": [["judges", str(C)], ["judges", str(S), "--csv-table", "agreement", "--ks", "1"]],
    "score": [["score", str(S)], ["score", str(S), str(SB), "--compare"]],
    "doctor": [["doctor", str(Q)], ["doctor", str(S)]],
    "drift": [["drift", str(S), str(SB), "--permutations", "99"]],
    "plan": [["plan", str(S), "--ks", "1", "--draws", "20", "--label-cost", "2"]],
    "transfer": [["transfer", str(SAMPLE / "counts_only.jsonl"), "--sources", "configs/priors/", "--cache-dir", "{cache}"]],
}


def test_every_command_is_listed() -> None:
    from betaconform_cli.cli import app

    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    assert names == set(COMMANDS)


@pytest.mark.slow  # every command twice (about 3 s of CPU); the fast tier keeps the case (score) below
def test_every_output_in_the_data_folder_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command's CSV and JSON, written into the folder of the data it was made from (as `> out.csv` writes
    it: sample's -o is its next items): each is known as this tool's output, `fit` on the folder reads the data
    alone, `doctor` says each was skipped, and one named alone is an error saying what it is."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # configs/priors/
    runner = CliRunner()
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(Q, data / "qa.jsonl")
    assert invoke(runner, "fit", Q, "--save-dir", tmp_path / "fits").exit_code == 0
    fill_embedding_cache(tmp_path / "cache", SAMPLE / "counts_only.jsonl")
    written = []
    for name, calls in COMMANDS.items():
        for n, args in enumerate(calls):
            for fmt in ("csv", "json"):
                res = invoke(runner, *[a.replace("{fits}", str(tmp_path / "fits")).replace("{cache}", str(tmp_path / "cache"))
                                      for a in args], "-f", fmt)
                assert res.exit_code in (0, 1) and res.stdout.strip(), (name, n, fmt, res.output)
                out = data / f"{name}-{n}.{fmt}"
                out.write_text(res.stdout, encoding="utf-8")
                assert tool_output(out) is not None, f"{out.name} is not known as this tool's output"
                written.append(out)
    fit = invoke(runner, "fit", data, "-f", "json")
    assert fit.exit_code == 0, fit.output
    assert json.loads(fit.stdout)["dataset"] == "qa"  # one document: the data alone
    doctor = invoke(runner, "doctor", data)
    assert doctor.exit_code == 0
    assert all(f"{out.name}: skipped" in doctor.stderr for out in written), doctor.stderr
    alone = invoke(runner, "fit", written[0])
    assert alone.exit_code == 2 and "not judgment data" in alone.stderr


def test_score_csv_in_its_folder(tmp_path: Path) -> None:
    """The issue's case: `score -f csv` written beside its data broke the next read of the folder."""
    runner = CliRunner()
    shutil.copy(S, tmp_path / "s.jsonl")
    assert invoke(runner, "score", tmp_path / "s.jsonl", "-f", "csv", "-o", tmp_path / "score.csv").exit_code == 0
    again = invoke(runner, "score", tmp_path, "-f", "json")
    assert again.exit_code == 0, again.output
    assert "score.csv: skipped, a CSV report written by betaconform (score)" in again.stderr


def test_an_unregistered_csv_header_is_refused() -> None:
    """render.to_csv writes only registered tables: a report with a header of its own would be read back as data."""
    with pytest.raises(ValueError, match="not a registered output table"):
        to_csv(("dataset", "judge", "correct"), [])
    formats.register_output_table(formats.OutputTable("toy", ("dataset", "judge", "correct")))
    try:
        assert to_csv(("dataset", "judge", "correct"), [["d", "a", 1]]) == "dataset,judge,correct\nd,a,1\n"
    finally:
        formats.unregister_output_table("toy")


def test_a_data_table_is_not_an_output(tmp_path: Path) -> None:
    """A user's table that shares leading columns with a report but is not one stays data."""
    f = tmp_path / "t.csv"
    f.write_text("dataset,k,estimate\nx,1,0.5\n", encoding="utf-8")  # fit's leading columns, cut short
    assert tool_output(f) is None
    f.write_text("run,stopped,samples,margin,judge\n1,1,1,1,a\n", encoding="utf-8")  # sample --replay's, extended
    assert tool_output(f) is None
