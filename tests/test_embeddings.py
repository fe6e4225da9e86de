"""Embeddings: the cache, the protocol, missing texts, and that fit/report never import torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from betaconform_cli import embeddings
from betaconform_cli.errors import InputError
from betaconform_cli.inputs import Keep, read_dataset

ROOT = Path(__file__).resolve().parent.parent


class LetterEmbedder:
    """Deterministic fake: normalised letter counts a-z (similar texts get similar vectors)."""

    name = "fake-letters"
    dimension = 26

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls.append(list(texts))
        out = np.zeros((len(texts), 26))
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
            out[i] /= max(np.linalg.norm(out[i]), 1e-12)
        return out


class TestCache:
    """Cached texts never reach the model; writes are atomic files keyed by model and text hash."""

    def test_second_run_spends_no_model_time(self, tmp_path: Path) -> None:
        fake = LetterEmbedder()
        first = embeddings.CachedEmbedder(fake, embeddings.EmbeddingCache(tmp_path, fake.name, fake.dimension))
        a = first.embed(["abc", "xyz", "abc"])
        assert first.model_texts == 2  # the repeated text is embedded once
        second = embeddings.CachedEmbedder(fake, embeddings.EmbeddingCache(tmp_path, fake.name, fake.dimension))
        b = second.embed(["xyz", "abc"])
        assert second.model_texts == 0
        np.testing.assert_allclose(b, a[[1, 0]], rtol=1e-6)
        files = list(tmp_path.rglob("*.npy"))
        assert len(files) == 2 and not list(tmp_path.rglob("*.tmp"))
        assert {f.stem for f in files} == {embeddings.text_hash("abc"), embeddings.text_hash("xyz")}

    def test_other_model_other_key(self, tmp_path: Path) -> None:
        fake = LetterEmbedder()
        c1 = embeddings.EmbeddingCache(tmp_path, "m1", 26)
        c2 = embeddings.EmbeddingCache(tmp_path, "m2", 26)
        c1.put("abc", np.ones(26))
        assert c2.get("abc") is None and c1.get("abc") is not None
        assert embeddings.EmbeddingCache(tmp_path, "m1", 25).get("abc") is None
        del fake

    def test_no_cache_runs_model_every_time(self) -> None:
        fake = LetterEmbedder()
        e = embeddings.CachedEmbedder(fake, None)
        e.embed(["abc"])
        e.embed(["abc"])
        assert e.model_texts == 2

    def test_progress_reports_each_batch(self, tmp_path: Path) -> None:
        e = embeddings.CachedEmbedder(LetterEmbedder(), None, batch_size=2)
        seen: list[tuple[int, int]] = []
        e.progress = lambda done, total: seen.append((done, total))
        e.embed(["a", "b", "c"])
        assert seen == [(0, 3), (2, 3), (3, 3)]

    def test_cache_path_follows_xdg(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
        assert embeddings.cache_path() == tmp_path / "betaconform" / "embeddings"
        assert embeddings.cache_path(tmp_path / "x") == tmp_path / "x"


class TestDatasetEmbedding:
    """The saved mean embedding and a clear error for an item without text."""

    def test_mean_of_item_vectors(self, write_jsonl) -> None:
        p = write_jsonl("t.jsonl", [{"text": "aaa", "judgments": [1, 0]}, {"text": "bbb", "judgments": [1, 1]}])
        d = embeddings.dataset_embedding(LetterEmbedder(), read_dataset(p, keep=Keep.ITEMS))
        expected = np.zeros(26)
        expected[0] = expected[1] = 0.5
        assert d["model"] == "fake-letters" and d["dimension"] == 26 and d["texts"] == 2
        np.testing.assert_allclose(d["mean"], expected)

    def test_missing_text_names_the_line(self, write_jsonl) -> None:
        p = write_jsonl("t.jsonl", [{"text": "aaa", "judgments": [1, 0]}, {"judgments": [1, 1]}])
        with pytest.raises(InputError) as exc:
            embeddings.dataset_embedding(LetterEmbedder(), read_dataset(p, keep=Keep.ITEMS))
        assert exc.value.line == 2 and exc.value.field == "text"
        assert f"{p}:2" in str(exc.value)

    def test_dimension_read_from_config(self) -> None:
        assert embeddings.model_dimension(embeddings.default_model_path()) == 384


class TestLazyImports:
    """fit and report never load torch or sentence-transformers."""

    def test_fit_does_not_import_torch(self, tmp_path: Path) -> None:
        code = (
            "import sys\n"
            "from betaconform_cli.cli import app\n"
            "from typer.testing import CliRunner\n"
            f"r = CliRunner().invoke(app, ['fit', r'{ROOT / 'sample_data' / 'qa_judges.jsonl'}', '--no-chart', "
            f"'--save', r'{tmp_path / 'f.yaml'}'])\n"
            "assert r.exit_code == 0, r.output\n"
            "bad = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
            "print('LOADED', bad)\n"
        )
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
        assert res.returncode == 0, res.stderr
        assert "LOADED []" in res.stdout


@pytest.mark.model
class TestRealModel:
    """The bundled offline all-MiniLM-L6-v2: loads without network, normalised 384-d vectors, cached."""

    def test_real_model(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        e = embeddings.load_embedder(None, cache_dir=tmp_path)
        v = e.embed(["Is the answer correct?", "Is this answer right?", "The stock market fell sharply today."])
        assert v.shape == (3, 384) and e.name == "all-MiniLM-L6-v2"
        np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
        assert v[0] @ v[1] > v[0] @ v[2]  # paraphrases are closer than an unrelated sentence
        again = embeddings.load_embedder(None, cache_dir=tmp_path)
        np.testing.assert_allclose(again.embed(["Is this answer right?"])[0], v[1], atol=1e-6)
        assert again.model_texts == 0 and again.inner._model is None  # served from disk, model never loaded
