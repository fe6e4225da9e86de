"""`betaconform evaluate` through CliRunner: formats, figures, errors; numbers equal to the core's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from betaconform_cli.cli import app
from betaconform_cli.evaluate import EvaluateSettings, evaluate
from betaconform_cli.inputs import read_dataset

runner = CliRunner()


def write_data(path: Path, n: int, seed: int, judges: int = 5) -> Path:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        p = 0.85 if rng.random() < 0.6 else 0.3
        rows.append({"id": f"q{i}", "judgments": [int(v) for v in rng.random(judges) < p]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    return [str(write_data(tmp_path / "alpha.jsonl", 14, 1)), str(write_data(tmp_path / "beta.jsonl", 9, 2))]


BASE = ["--r", "4,9", "--runs", "2", "--ks", "1-5"]


class TestOutputs:
    """Every format carries the evaluation; the table is shaped like the paper's (rows datasets)."""

    def test_table(self, files: list[str]) -> None:
        res = runner.invoke(app, ["evaluate", *files, *BASE])
        assert res.exit_code == 0, res.output
        assert "r = 4 labeled items" in res.stdout and "r = 9 labeled items" in res.stdout
        assert "alpha" in res.stdout and "paper EM" in res.stdout and "minus default" in res.stdout
        assert "skipped, fewer than r + 1 items: beta (9 items) at r = 9" in res.stderr

    def test_json_equals_core(self, files: list[str]) -> None:
        res = runner.invoke(app, ["evaluate", *files, *BASE, "--seed", "5", "--format", "json", "--per-run"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["seed"] == 5 and doc["settings"]["sizes"] == [4, 9]
        assert [(s["dataset"], s["r"]) for s in doc["skipped"]] == [("beta", 9)]
        ds = [read_dataset(f) for f in files]
        core = evaluate([(d.name, d.table) for d in ds], EvaluateSettings(sizes=(4, 9), runs=2, ks=(1, 2, 3, 4, 5)), 5)
        for cell in doc["cells"]:
            want = core.cell(cell["dataset"], cell["r"])
            for m in cell["methods"]:
                assert m["margin_mean"] == pytest.approx(want.summary(m["method"]).margin_mean, abs=1e-12)
            assert len(cell["margins_per_run"]["default"]) == 2

    def test_csv_and_markdown_file(self, files: list[str], tmp_path: Path) -> None:
        res = runner.invoke(app, ["evaluate", *files, *BASE, "--methods", "default,binomial", "-f", "csv"])
        assert res.exit_code == 0, res.output
        lines = res.stdout.splitlines()
        assert lines[0].startswith("dataset,items,r,runs,method,margin_mean")
        assert len(lines) == 1 + 3 * 2  # (alpha 4, alpha 9, beta 4) x 2 methods
        md = tmp_path / "out.md"
        res = runner.invoke(app, ["evaluate", *files, *BASE, "-o", str(md)])
        assert res.exit_code == 0, res.output
        assert "| alpha | 14 |" in md.read_text() and f"wrote {md}" in res.stderr

    def test_plot(self, files: list[str], tmp_path: Path) -> None:
        png = tmp_path / "fig" / "ev.png"
        res = runner.invoke(app, ["evaluate", *files, *BASE, "--plot", str(png), "--plot-r", "4", "-f", "json"])
        assert res.exit_code == 0, res.output
        assert png.read_bytes()[:4] == b"\x89PNG"


class TestErrors:
    """Bad options fail before the work, with one line and exit 2."""

    @pytest.mark.parametrize(
        ("args", "needle"),
        [
            (["--r", "ten"], "--r"),
            (["--r", "1"], "--r"),
            (["--runs", "1"], "--runs"),
            (["--methods", "default,bogus"], "--methods"),
            (["--plot", "x.gif"], ".png, .svg or .pdf"),
            (["--plot", "x.png", "--plot-r", "7"], "--plot-r"),
            (["--seed", "-1"], "--seed"),
            (["--format", "yaml"], "--format"),
            (["--runs", "100000000000"], "--runs must be an integer from 2 to 100000"),  # was a numpy MemoryError traceback (48 TiB)
            (["--rule", "conformal", "--xi", "nan"], "--xi must be a finite number"),  # ran to the end with NaN rules
        ],
    )
    def test_usage(self, files: list[str], args: list[str], needle: str) -> None:
        res = runner.invoke(app, ["evaluate", files[0], *args])
        assert res.exit_code == 2
        assert needle in res.stderr and res.stderr.startswith("error:")

    def test_output_to_a_directory_is_one_line(self, files: list[str], tmp_path: Path) -> None:
        """Refused before the draws (the write at the end used to raise IsADirectoryError after all the work)."""
        res = runner.invoke(app, ["evaluate", files[0], "--r", "10", "--runs", "2", "-o", str(tmp_path)])
        assert res.exit_code == 2 and res.stderr.strip() == f"error: {tmp_path}: cannot write the output: is a directory (give a file name)"

    def test_missing_file(self, tmp_path: Path) -> None:
        res = runner.invoke(app, ["evaluate", str(tmp_path / "nope.jsonl")])
        assert res.exit_code == 2 and "no such file" in res.stderr


class TestAdaptive:
    """--rule: random orders stopped by a stopping rule, samples reported; option conflicts fail early."""

    def test_variance_rule_json_and_plot(self, files: list[str], tmp_path: Path) -> None:
        png = tmp_path / "ad.png"
        res = runner.invoke(
            app,
            ["evaluate", files[0], "--rule", "variance", "--xi", "0.2,0.1", "--min-samples", "4", "--runs", "2",
             "--ks", "1-5", "--methods", "default,empirical", "-f", "json", "--plot", str(png)],
        )
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["mode"] == "adaptive" and doc["rule"]["rule"] == "variance" and doc["rule"]["values"] == [0.2, 0.1]
        assert [c["condition"] for c in doc["cells"]] == ["xi=0.2", "xi=0.1"]
        for c in doc["cells"]:
            assert all(4 <= s <= 14 for s in c["samples"])
        assert png.read_bytes()[:4] == b"\x89PNG"

    @pytest.mark.parametrize(
        ("args", "needle"),
        [
            (["--rule", "conformal", "--r", "10"], "use one of them"),
            (["--xi", "0.03"], "need --rule"),
            (["--rule", "precision", "--xi", "0.03"], "--target"),
            (["--rule", "bogus"], "--rule"),
            (["--rule", "conformal", "--xi", "abc"], "--xi"),
        ],
    )
    def test_conflicts(self, files: list[str], args: list[str], needle: str) -> None:
        res = runner.invoke(app, ["evaluate", files[0], *args])
        assert res.exit_code == 2 and needle in res.stderr


def test_help() -> None:
    """The command documents itself."""
    res = runner.invoke(app, ["evaluate", "--help"])
    assert res.exit_code == 0 and "paired random draws" in res.stdout and "--plot" in res.stdout


class TestTransfer:
    """--transfer: datasets of one folder are each other's sources; the embedder is a deterministic fake."""

    def test_leave_one_out(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        import hashlib

        from betaconform_cli import embeddings

        class Fake:
            name = "fake"
            dimension = 4

            def embed(self, texts: list[str]) -> np.ndarray:
                return np.array([[b / 255 for b in hashlib.sha256(t.encode()).digest()[:4]] for t in texts])

        monkeypatch.setattr(embeddings, "load_embedder", lambda *a, **k: Fake())
        folder = tmp_path / "collection"
        folder.mkdir()
        for name, seed in (("one", 1), ("two", 2)):
            path = write_data(folder / f"{name}.jsonl", 12, seed)
            rows = [json.loads(x) | {"text": f"{name} question {i}"} for i, x in enumerate(path.read_text().splitlines())]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        res = runner.invoke(app, ["evaluate", str(folder), "--transfer", "--r", "5", "--runs", "2", "--ks", "1-5", "-f", "json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["mode"] == "transfer" and [c["dataset"] for c in doc["cells"]] == ["one", "two"]
        assert [m["method"] for m in doc["cells"][0]["methods"]] == ["default", "transfer", "paper_transfer", "empirical"]

    def test_conflicts(self, files: list[str]) -> None:
        res = runner.invoke(app, ["evaluate", files[0], "--transfer", "--rule", "conformal"])
        assert res.exit_code == 2 and "separate modes" in res.stderr
        res = runner.invoke(app, ["evaluate", files[0], "--methods", "transfer"])
        assert res.exit_code == 2 and "only in transfer mode" in res.stderr
