"""Inputs that exhaust memory, arrive through pipes, carry huge numbers, or point at a broken model (issue 10,
items 6, 9, 13, 16, 22, 23 and 24's embedding cache)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from .conftest import Q, cli_env, invoke, one_error_line, q_rows, run_cli, write_jsonl


class TestLineCap:
    """Item 9: a line longer than 16 MiB (a file without line ends) stops with an error naming the cap, for every
    way a judgment file is read; the process stays under the memory cap."""

    @pytest.fixture(scope="class")
    def endless(self, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
        d = tmp_path_factory.mktemp("endless")
        (d / "zero.jsonl").symlink_to("/dev/zero")
        bomb = d / "bomb.jsonl.gz"  # 100 KB that inflate to one 100 MiB line
        with gzip.open(bomb, "wb", compresslevel=9) as fh:
            for _ in range(100):
                fh.write(b"0" * (1 << 20))
        return {"zero": d / "zero.jsonl", "bomb": bomb}

    @pytest.mark.parametrize("how", ["fit", "fit-gz", "evaluate", "sample", "pool", "replay", "stdin"])
    def test_capped(self, endless: dict[str, Path], how: str) -> None:
        zero, bomb = endless["zero"], endless["bomb"]
        args = {"fit": ["fit", zero], "fit-gz": ["fit", bomb], "evaluate": ["evaluate", zero], "sample": ["sample", zero],
                "pool": ["sample", Q, "--pool", zero], "replay": ["sample", bomb, "--replay"], "stdin": ["fit", "-"]}[how]
        p = run_cli(*args, input=b"1" * (20 << 20) if how == "stdin" else None)
        assert "longer than 16 MiB" in one_error_line(p)


class TestStreams:
    """Item 16: '-' is standard input; /dev/stdin, process substitution (/dev/fd/N of a pipe) and FIFOs are read as
    streams, for every command that reads judgments or fits; standard input is read once."""

    def test_dash_and_dev_stdin(self, saved_fit: Path) -> None:
        data = Q.read_bytes()
        for args in (["fit", "-"], ["fit", "/dev/stdin"]):  # a real pipe
            p = run_cli(*args, "-f", "csv", input=data)
            assert p.returncode == 0 and p.stdout.count(b"\n") == 12, (args, p.stderr[-300:])
        from typer.testing import CliRunner

        from betaconform_cli.cli import app

        for args, stdin in ((["evaluate", "-", "--r", "10", "--runs", "2"], data), (["sample", "-", "--replay", "--runs", "2"], data),
                            (["report", "-"], saved_fit.read_bytes()), (["sample", "-", "--pool", str(Q)], b"".join(data.splitlines(keepends=True)[:12]))):
            res = CliRunner().invoke(app, [*args, "-f", "csv"], input=stdin, catch_exceptions=False)
            assert res.exit_code in (0, 1) and res.stdout.count("\n") > 2, (args, res.output[-300:])

    def test_labels_from_stdin_pool_from_a_pipe(self) -> None:
        labeled = b"".join(Q.read_bytes().splitlines(keepends=True)[:12])
        r, w = os.pipe()
        writer = threading.Thread(target=lambda: (os.write(w, Q.read_bytes()), os.close(w)), daemon=True)
        writer.start()
        try:
            p = run_cli("sample", "-", "--pool", f"/dev/fd/{r}", input=labeled, pass_fds=(r,))  # as <(cat pool) gives
        finally:
            os.close(r)
            writer.join()
        assert p.returncode == 1 and b"next:" in p.stdout, p.stderr

    def test_fifo_beside_a_file(self, tmp_path: Path) -> None:
        fifo = tmp_path / "in.jsonl"
        os.mkfifo(fifo)
        writer = threading.Thread(target=lambda: fifo.write_bytes(Q.read_bytes()), daemon=True)
        writer.start()
        p = run_cli("fit", fifo, Q, "-f", "csv")
        writer.join(timeout=30)
        assert p.returncode == 0 and p.stdout.count(b"\n") == 23, p.stderr

    @pytest.mark.parametrize("args", [["fit", "-", "-"], ["sample", "-", "--pool", "-"], ["report", "-", "-"]])
    def test_stdin_once(self, args: list[str]) -> None:
        assert "only once" in one_error_line(run_cli(*args, input=Q.read_bytes()))

    def test_dash_is_not_a_file_name(self, tmp_path: Path) -> None:
        (tmp_path / "-").write_bytes(b"not json\n")  # a file literally named '-' is not read: stdin is
        p = run_cli("fit", "-", "-f", "csv", input=Q.read_bytes(), cwd=tmp_path)
        assert p.returncode == 0 and b"stdin" in p.stdout


class TestBigNumbers:
    """Item 22: integers beyond 64 bits are echoed as written and compared exactly, never as floats."""

    def test_ids(self, tmp_path: Path) -> None:
        rows = q_rows()[:20]
        for kind, ids in (("big", [str(2**64 + i) for i in range(20)]), ("huge", [str(10**30 + i) for i in range(20)]),
                          ("negative", [str(-(2**70) - i) for i in range(20)])):
            f = tmp_path / f"{kind}.jsonl"
            f.write_text("".join(f'{{"id": {i}, "judgments": {json.dumps(r["judgments"])}}}\n' for i, r in zip(ids, rows)))
            res = invoke("sample", f, "--pool", f, "-f", "json")
            assert res.exit_code in (0, 1), res.stderr  # no "appears again"
            assert json.loads(res.stdout)["labeled_ids"] == ids

    @pytest.mark.parametrize("line,shown", [
        ('{"correct": 3, "judges": 999999999999999999999999999999}', "999999999999999999999999999999 judges"),
        ('{"correct": 99999999999999999999999, "judges": 5}', "correct (99999999999999999999999)"),
        ('{"judgments": [1, 18446744073709551617, 0]}', "got 18446744073709551617"),
        ('{"judgments": {"a": 1, "b": 18446744073709551617}}', "got 18446744073709551617"),
        ('{"correct": 1, "judges": 3, "count": 99999999999999999999}', "got 99999999999999999999"),
    ])
    def test_messages(self, tmp_path: Path, line: str, shown: str) -> None:
        f = tmp_path / "big.jsonl"
        f.write_text(line + "\n")
        res = invoke("fit", f)
        assert res.exit_code == 2 and shown in res.stderr and "e+" not in res.stderr, res.stderr

    def test_seed_bounds(self) -> None:
        for seed in ("18446744073709551616", "-1", "9223372036854775808", str(2**53)):  # one range: what JSON carries exactly
            res = invoke("fit", Q, "--seed", seed, "-f", "json")
            assert res.exit_code == 2 and "2^53 - 1" in res.stderr
        assert json.loads(invoke("fit", Q, "--seed", str(2**53 - 1), "-f", "json").stdout)["seed"] == 2**53 - 1


class TestMessages:
    """Item 23's input members: each says what is wrong."""

    def test_inputs(self, tmp_path: Path) -> None:
        (tmp_path / "loop.jsonl").symlink_to("loop2.jsonl")
        (tmp_path / "loop2.jsonl").symlink_to("loop.jsonl")
        (tmp_path / "u16.jsonl").write_bytes(Q.read_text().encode("utf-16"))
        (tmp_path / "u16le.jsonl").write_bytes(Q.read_text().encode("utf-16-le"))
        (tmp_path / "latin1.jsonl").write_bytes('{"id": "caf\xe9", "judgments": [1, 0]}\n'.encode("latin-1"))
        cases = {"loop.jsonl": "symbolic link loop", "u16.jsonl": "UTF-16", "u16le.jsonl": "UTF-16",
                 "latin1.jsonl": "not UTF-8"}
        for name, words in cases.items():
            res = invoke("fit", tmp_path / name)
            assert res.exit_code == 2 and words in res.stderr and "surrogates" not in res.stderr, (name, res.stderr)
        for ks, words in (("5-1", "backwards"), ("0", "from 1 to"), ("1-", "cannot read")):
            res = invoke("fit", Q, "--ks", ks)
            assert res.exit_code == 2 and words in res.stderr and "positive integers" not in res.stderr


class _FolderModel:
    @staticmethod
    def make(folder: Path, modules: bytes | None, config: dict[str, object] | None = None) -> Path:
        folder.mkdir(parents=True)
        if modules is not None:
            (folder / "modules.json").write_bytes(modules)
        (folder / "config.json").write_text(json.dumps(config or {"hidden_size": 8}))
        return folder


class TestModelFolder:
    """Item 13: a model folder whose modules.json is broken is one error line naming the folder and the file;
    item 6: the cache is keyed by the folder's resolved path and content, not its base name."""

    @pytest.mark.parametrize("content,words", [
        (b"{bad", "not valid JSON"), (b"[1, 2]", "got a int in it"), (b'{"a": 1}', "got dict"),
        (b"\xff\xfe[", "not UTF-8"), (None, "not a regular file"), (b"[" * 100000, "nested deeper than 128 levels"),
    ])
    def test_broken_modules_json(self, tmp_path: Path, content: bytes | None, words: str) -> None:
        folder = _FolderModel.make(tmp_path / "model", content)
        if content is None:
            (folder / "modules.json").symlink_to("/dev/zero")
        p = run_cli("fit", Q, "--save", tmp_path / "f.yaml", "--embed", "--embedding-model", folder)
        assert words in one_error_line(p)

    def test_same_base_name_different_models(self, tmp_path: Path) -> None:
        from betaconform_cli import embeddings

        modules = json.dumps([{"idx": 0, "name": "1", "path": "pool", "type": "sentence_transformers.models.Pooling"}])
        keys, names = [], []
        for where, dim in (("a", 8), ("b", 8), ("c", 16)):
            folder = _FolderModel.make(tmp_path / where / "model", modules.encode())
            (folder / "pool").mkdir()
            (folder / "pool" / "config.json").write_text(json.dumps({"word_embedding_dimension": dim, "pooling_mode_mean_tokens": True}))
            (folder / "model.safetensors").write_bytes(where.encode() * 100)
            e = embeddings.load_embedder(folder, tmp_path / "cache")
            assert e.cache is not None and e.name.startswith("model@")  # what a saved fit records: named by content
            keys.append(e.cache.dir)
            names.append(e.name)
        assert len(set(keys)) == 3 and len(set(names)) == 3  # one per model, though all three folders are "model"
        again = embeddings.load_embedder(tmp_path / "a" / "model", tmp_path / "cache")
        assert again.cache is not None and again.cache.dir == keys[0]
        (tmp_path / "a" / "model" / "model.safetensors").write_bytes(b"changed weights")
        changed = embeddings.load_embedder(tmp_path / "a" / "model", tmp_path / "cache")
        assert changed.cache is not None and changed.cache.dir != keys[0]


class TestEmbeddingCache:
    """Item 24: a damaged cached vector is never used; a home that does not exist is never created."""

    @pytest.mark.parametrize("bad", [np.full(26, np.nan), np.full(26, np.inf), np.zeros(3), None])
    def test_damaged_vector_recomputed(self, tmp_path: Path, bad: np.ndarray | None) -> None:
        from betaconform_cli import embeddings

        from ..test_embeddings import LetterEmbedder

        cache = embeddings.EmbeddingCache(tmp_path, "fake-letters", 26)
        f = cache._file(embeddings.text_hash("hello"))
        f.parent.mkdir(parents=True)
        if bad is None:
            f.write_bytes(b"\x93NUMPY garbage")
        else:
            np.save(f, bad)
        e = embeddings.CachedEmbedder(LetterEmbedder(), cache)
        v = e.embed(["hello"])
        assert e.model_texts == 1 and np.all(np.isfinite(v)) and np.linalg.norm(v) == pytest.approx(1.0, rel=1e-6)

    def test_missing_home_is_not_created(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from betaconform_cli import embeddings

        home = tmp_path / "nonexistent"
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv("HOME", str(home))
        assert embeddings.cache_path() is None and not home.exists()
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert embeddings.cache_path() == tmp_path / "xdg" / "betaconform" / "embeddings"

    def test_transfer_stderr_is_clean(self, embedded_fit: tuple[Path, Path], tmp_path: Path) -> None:
        fit, cache = embedded_fit
        target = write_jsonl(tmp_path / "t.jsonl", q_rows()[:10])
        p = run_cli("transfer", target, "--sources", fit, "--cache-dir", cache, env=cli_env(HOME=str(tmp_path / "nohome")))
        assert p.returncode == 0 and p.stderr == b"", p.stderr
        assert not (tmp_path / "nohome").exists()


def test_yaml_reads_with_the_c_loader() -> None:
    """Item 24: the C loader when PyYAML has one (a 2 MB YAML took 29 s with the Python one). Which loader runs is
    checked here; how long it takes is a benchmark's business, not a timed test's (a loaded CI machine)."""
    import yaml

    from betaconform_cli import savedfit

    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML without libyaml")
    assert issubclass(savedfit._loader(), yaml.CSafeLoader)
    text = "histogram:\n" + "".join(f"  {k}: [{', '.join(['1'] * (k + 1))}]\n" for k in range(1, 500))
    doc = savedfit.safe_load(text, "big.yaml")
    assert len(text) > 250_000 and len(doc["histogram"]) == 499 and doc["histogram"][499] == [1] * 500


def test_cli_reads_pipes_without_seeking(tmp_path: Path) -> None:
    """`cat Q | betaconform fit /dev/stdin` used to fail with 'Illegal seek'."""
    p = subprocess.run(["sh", "-c", 'cat "$1" | "$2" -m betaconform_cli fit /dev/stdin -f csv', "sh", str(Q), os.sys.executable],
                       capture_output=True, env=cli_env(), timeout=60, check=False)
    assert p.returncode == 0 and b"Illegal seek" not in p.stderr, p.stderr
