"""`betaconform transfer` end to end with a deterministic fake embedder (no torch)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import msgspec
import numpy as np
import pytest

from betaconform_cli import embeddings, fit_document

from .conftest import invoke
from .test_embeddings import LetterEmbedder

HARD = "why does the adversarial trick question fool every judge"
EASY = "a plain easy summary task"


@pytest.fixture(autouse=True)
def fake_model(monkeypatch: pytest.MonkeyPatch) -> list[embeddings.CachedEmbedder]:
    """load_embedder -> the letter-count fake behind the real cache; records every embedder made."""
    made: list[embeddings.CachedEmbedder] = []

    def load(model=None, cache_dir=None):  # type: ignore[no-untyped-def]
        inner = LetterEmbedder()
        if model is not None:
            inner.name = str(model)
        e = embeddings.CachedEmbedder(inner, embeddings.EmbeddingCache(cache_dir, inner.name, 26) if cache_dir else None)
        made.append(e)
        return e

    monkeypatch.setattr(embeddings, "load_embedder", load)
    return made


def rows(text: str, correct: list[int], judges: int = 9) -> list[dict]:
    return [{"id": f"i{i}", "text": f"{text} {i}", "correct": int(c), "judges": judges} for i, c in enumerate(correct)]


@pytest.fixture
def sources(runner, write_jsonl, tmp_path: Path) -> Path:
    rng = np.random.default_rng(1)
    hard = write_jsonl("hard.jsonl", rows(HARD, list(rng.binomial(9, 0.3, 120))))
    easy = write_jsonl("easy.jsonl", rows(EASY, list(rng.binomial(9, 0.9, 120))))
    out = tmp_path / "src"
    res = invoke(runner, "fit", hard, easy, "--save-dir", out, "--embed", "--format", "csv")
    assert res.exit_code == 0, res.output
    return out


class TestTransfer:
    """Output fields, the side-by-side no-transfer fit, saving, and many targets in one call."""

    def test_json_fields(self, runner, sources: Path, write_jsonl) -> None:
        target = write_jsonl("t.jsonl", rows(HARD, [2, 3, 1, 4, 2, 3, 2, 5, 3, 2]))
        res = invoke(runner, "transfer", target, "--sources", sources, "--format", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert [s["name"] for s in doc["sources"]] == ["easy", "hard"]
        assert set(doc["sources"][0]) >= {"name", "similarity", "weight"}
        # similarity: cosine of the mean letter-count vectors, computed here independently
        fake = LetterEmbedder()
        t = fake.embed([r["text"] for r in rows(HARD, [0] * 10)]).mean(axis=0)
        h = fake.embed([r["text"] for r in rows(HARD, [0] * 120)]).mean(axis=0)
        assert doc["sources"][1]["similarity"] == pytest.approx(t @ h / np.linalg.norm(t) / np.linalg.norm(h), abs=1e-6)
        # the labels favour the hard source
        w = {s["name"]: s["weight"] for s in doc["sources"]}
        assert w["hard"] > w["easy"]
        # without_transfer is exactly what `fit` prints for the same labels and seed
        fit = json.loads(invoke(runner, "fit", target, "--format", "json").stdout)
        assert [r["estimate"] for r in doc["without_transfer"]] == [r["estimate"] for r in fit["error_rates"]]
        assert doc["command"] == "transfer" and doc["method"] == "transfer-default" and doc["seed"] == 0

    def test_table_shows_both_fits(self, runner, sources: Path, write_jsonl) -> None:
        target = write_jsonl("t.jsonl", rows(HARD, [9, 9, 9, 9, 9, 9, 9, 8, 9, 9]))  # looks hard, judged easy
        res = invoke(runner, "transfer", target, "--sources", sources, "--sources", sources / "easy.yaml")
        assert res.exit_code == 0, res.output
        assert "with transfer" in res.stdout and "without transfer" in res.stdout and "(no transfer)" in res.stdout

    def test_conflict_warns(self, runner, tmp_path: Path, write_jsonl) -> None:
        hard = write_jsonl("hard.jsonl", rows(HARD, list(np.random.default_rng(2).binomial(9, 0.2, 100))))
        assert invoke(runner, "fit", hard, "--save", tmp_path / "hard.yaml", "--embed", "--format", "csv").exit_code == 0
        target = write_jsonl("t.jsonl", rows(HARD, [9] * 10))
        res = invoke(runner, "transfer", target, "--sources", tmp_path / "hard.yaml", "--format", "json")
        assert "prior conflict" in res.stderr
        assert json.loads(res.stdout)["transfer"]["prior_conflict"] is True

    def test_save_then_report(self, runner, sources: Path, write_jsonl, tmp_path: Path) -> None:
        target = write_jsonl("t.jsonl", rows(EASY, [8, 9, 9, 7, 9, 8, 9, 9, 6, 9]))
        saved = tmp_path / "out.yaml"
        res = invoke(runner, "transfer", target, "--sources", str(sources / "*.yaml"), "--save", saved, "--format", "json")
        assert res.exit_code == 0, res.output
        rep = invoke(runner, "report", saved, "--format", "json", "--no-chart")
        assert rep.exit_code == 0, rep.output
        doc, again = json.loads(res.stdout), json.loads(rep.stdout)
        assert [r["estimate"] for r in again["error_rates"]] == [r["estimate"] for r in doc["error_rates"]]
        assert again["fitted_by"] == "transfer"

    def test_many_targets_one_model(self, runner, sources: Path, write_jsonl, fake_model) -> None:
        a = write_jsonl("a.jsonl", rows(EASY, [8, 9, 9, 7, 9, 8, 9, 9, 6, 9]))
        b = write_jsonl("b.jsonl", rows(HARD, [2, 3, 1, 4, 2, 3, 2, 5, 3, 2]))
        before = len(fake_model)
        res = invoke(runner, "transfer", a, b, "--sources", sources, "--format", "json")
        assert res.exit_code == 0, res.output
        docs = [json.loads(line) for line in res.stdout.splitlines()]
        assert [d["dataset"] for d in docs] == ["a", "b"] and len(fake_model) == before + 1

    def test_ablation_options_change_lambda(self, runner, sources: Path, write_jsonl) -> None:
        target = write_jsonl("t.jsonl", rows(HARD, [2, 3, 1, 4, 2, 3, 2, 5, 3, 2]))
        res = invoke(runner, "transfer", target, "--sources", sources, "--method", "paper", "--size-weight", "linear", "--no-sigmoid", "--format", "json")
        assert res.exit_code == 0, res.output
        for s in json.loads(res.stdout)["sources"]:
            assert s["lambda"] == pytest.approx(s["items"] * s["similarity"])
        res = invoke(runner, "transfer", target, "--sources", sources, "--method", "paper", "--format", "json")
        for s in json.loads(res.stdout)["sources"]:
            assert s["lambda"] == pytest.approx(math.log(s["items"]) / (1 + math.exp(-10 * (s["similarity"] - 0.5))))


class TestErrors:
    """Exit 2 and one clear line."""

    def test_model_mismatch(self, runner, sources: Path, write_jsonl) -> None:
        target = write_jsonl("t.jsonl", rows(HARD, [2, 3, 1, 4]))
        res = invoke(runner, "transfer", target, "--sources", sources, "--embedding-model", "other-model")
        assert res.exit_code == 2 and "embedded with model 'fake-letters'" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1

    def test_missing_text_names_line(self, runner, sources: Path, write_jsonl) -> None:
        data = rows(HARD, [2, 3, 1])
        del data[1]["text"]
        target = write_jsonl("t.jsonl", data)
        res = invoke(runner, "transfer", target, "--sources", sources)
        assert res.exit_code == 2 and f"{target}:2: field 'text'" in res.stderr

    def test_source_without_embedding(self, runner, write_jsonl, tmp_path: Path) -> None:
        src = write_jsonl("s.jsonl", rows(EASY, [8, 9, 7]))
        assert invoke(runner, "fit", src, "--save", tmp_path / "s.yaml", "--format", "csv").exit_code == 0
        res = invoke(runner, "transfer", src, "--sources", tmp_path / "s.yaml")
        assert res.exit_code == 2 and "--embed" in res.stderr

    @pytest.mark.parametrize("content,expected", [
        (b"\x8e\xff\x00binary", "cannot read the transfer config: not UTF-8"),
        (b"sigmoid_a: [1,\n", "cfg.yaml:2: malformed YAML in the transfer config"),
    ])
    def test_unreadable_config_is_one_line(self, runner, sources: Path, write_jsonl, tmp_path: Path, content: bytes, expected: str) -> None:
        """A binary config raised UnicodeDecodeError; a malformed one printed PyYAML's several-line message."""
        target = write_jsonl("t.jsonl", rows(HARD, [2, 3, 1, 4]))
        cfg = tmp_path / "cfg.yaml"
        cfg.write_bytes(content)
        res = invoke(runner, "transfer", target, "--sources", sources, "--config", cfg)
        assert res.exit_code == 2 and expected in res.stderr and len(res.stderr.strip().splitlines()) == 1

    def test_no_sources_found(self, runner, write_jsonl, tmp_path: Path) -> None:
        src = write_jsonl("s.jsonl", rows(EASY, [8, 9, 7]))
        res = invoke(runner, "transfer", src, "--sources", str(tmp_path / "nothing*.yaml"))
        assert res.exit_code == 2 and "pattern matches no source" in res.stderr


class TestCacheThroughCli:
    """A second run on the same texts sends nothing to the model."""

    def test_second_run_uses_cache(self, runner, sources: Path, write_jsonl, fake_model, tmp_path: Path) -> None:
        target = write_jsonl("t.jsonl", rows(HARD, [2, 3, 1, 4, 2]))
        for _ in range(2):
            assert invoke(runner, "transfer", target, "--sources", sources, "--cache-dir", tmp_path / "c", "--format", "json").exit_code == 0
        assert fake_model[-2].model_texts == 5 and fake_model[-1].model_texts == 0


def test_source_files_given_as_targets_get_a_hint(tmp_path: Path) -> None:
    """`--sources a.yaml b.yaml` makes b.yaml a target: say how to pass several sources instead."""
    from typer.testing import CliRunner

    from betaconform_cli.cli import app

    target = tmp_path / "t.jsonl"
    target.write_text('{"text": "x", "judgments": [1, 0]}\n')
    res = CliRunner().invoke(app, ["transfer", str(target), "--sources", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert res.exit_code == 2 and "--sources" in res.stderr and "b.yaml" in res.stderr


class TestReportsWhereUsersLook:
    """transfer, like every command: the job summary, a JUnit case per target, the HTML page."""

    def test_summary_junit_html(self, runner, sources: Path, write_jsonl, tmp_path: Path, monkeypatch) -> None:
        from junitparser import JUnitXml

        target = write_jsonl("t.jsonl", rows(HARD, [2, 3, 1, 4, 2, 3, 2, 5, 3, 2]))
        summary = tmp_path / "summary.md"
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        page, junit = tmp_path / "t.html", tmp_path / "t.xml"
        res = invoke(runner, "transfer", target, "--sources", sources, "-o", page, "--junit", junit)
        assert res.exit_code == 0, res.output
        assert summary.read_text(encoding="utf-8").startswith("## betaconform transfer\n")
        cases = [(c.name, c.classname, list(c.result)) for s in JUnitXml.fromfile(str(junit)) for c in s]
        assert cases == [("t", "betaconform.transfer", [])]
        text = page.read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>") and "<table>" in text and "<script" not in text


class TestReportOfAnEmbeddedFit:
    """`report -f json` of a fit saved with --embed shows the embedding without its vector: the output is valid
    against the published docs/schema/fit.json (jsonschema on the file) and decodes as report's document type."""

    def _published(self) -> jsonschema.protocols.Validator:
        schema = json.loads((Path(__file__).resolve().parent.parent / "docs" / "schema" / "fit.json").read_text())
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)

    def test_valid_against_the_published_schema(self, runner, sources: Path) -> None:
        rep = invoke(runner, "report", sources / "hard.yaml", "--format", "json", "--no-chart")
        assert rep.exit_code == 0, rep.output
        doc = json.loads(rep.stdout)
        assert doc["embedding"] == {"model": "fake-letters", "dimension": 26, "texts": 120}  # the vector is not shown
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in self._published().iter_errors(doc)]
        assert not errors, errors[:3]
        typed = msgspec.json.decode(rep.stdout, type=fit_document.report_document_type())
        assert typed.embedding.model == "fake-letters" and typed.embedding.texts == 120
        with pytest.raises(msgspec.ValidationError, match="mean"):  # the printed fit document's embedding needs it
            msgspec.json.decode(rep.stdout, type=fit_document.fit_document_type())

    def test_a_broken_embedding_is_refused(self, runner, sources: Path) -> None:
        doc = json.loads(invoke(runner, "report", sources / "hard.yaml", "--format", "json", "--no-chart").stdout)
        doc["embedding"]["texts"] = -1
        assert list(self._published().iter_errors(doc))
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(json.dumps(doc), type=fit_document.report_document_type())

    def test_a_saved_transfer_reported(self, runner, sources: Path, write_jsonl, tmp_path: Path) -> None:
        """A saved transfer's typed sources and transfer records are read back, reported, and valid."""
        target = write_jsonl("t.jsonl", rows(EASY, [8, 9, 9, 7, 9, 8, 9, 9, 6, 9]))
        saved = tmp_path / "out.yaml"
        res = invoke(runner, "transfer", target, "--sources", str(sources / "*.yaml"), "--save", saved, "--format", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(invoke(runner, "report", saved, "--format", "json", "--no-chart").stdout)
        assert (doc["sources"], doc["transfer"]) == (json.loads(res.stdout)["sources"], json.loads(res.stdout)["transfer"])
        assert not list(self._published().iter_errors(doc))
        typed = msgspec.json.decode(json.dumps(doc), type=fit_document.report_document_type())
        assert [s.name for s in typed.sources] == ["easy", "hard"] and typed.sources[0].lambda_ == doc["sources"][0]["lambda"]
