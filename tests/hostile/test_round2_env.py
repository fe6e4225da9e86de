"""Issue 16, classes 2-4 (and items 8 and 9 in part): names from data never become paths; no traceback, ever --
types are checked where values enter and every fault of the environment is one line and exit 2; such a fault is
never taken for Ctrl-C; a fallback rewrite never truncates the user's file; `./-` is the file named '-'.

Each class is tested on several members, each as a real, memory-capped CLI process (conftest.run_cli)."""

from __future__ import annotations

import errno
import gzip
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .conftest import MEMORY_CAP, ROOT, Q, cli_env, one_error_line, q_rows, run_cli, write_jsonl

FIXTURES = ROOT / "tests" / "fixtures"
PROMPTFOO = FIXTURES / "promptfoo" / "results.json"
INSPECT_JSON = next((FIXTURES / "inspect" / "main_json").glob("*.json"))
LEGACY_EVAL = next((FIXTURES / "inspect" / "legacy_eval").glob("*.eval"))  # deflate: readable without inspect-ai


def long_csv(path: Path, datasets: list[str], items: int = 6) -> Path:
    """A long table with a dataset column: every dataset the same small, valid judgments."""
    rows = ["dataset,item_id,judge,correct"]
    for ds in datasets:
        quoted = '"' + ds.replace('"', '""') + '"'
        rows += [f"{quoted},{i},{j},{(i + k) % 3 != 0:d}" for i in range(items) for k, j in enumerate("abc")]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def every_file(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


class TestNamesNeverPaths:
    """Class 2: a file a command writes stays inside the folder the user chose, whatever the data calls itself."""

    def test_dataset_column_names(self, tmp_path: Path) -> None:
        outside = tmp_path / "outside"
        names = ["../victim", f"{outside}/abs", "a/b", "..", ".hidden", "CON", "ok", "x\\y"]
        data = long_csv(tmp_path / "evil.csv", names)
        p = run_cli("fit", data, "--dataset-col", "dataset", "--save-dir", tmp_path / "fits", "-f", "csv", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        written = every_file(tmp_path) - {data}
        assert written and all(f.parent == tmp_path / "fits" for f in written), sorted(map(str, written))
        assert not outside.exists() and not (tmp_path / "victim.yaml").exists()
        assert {f.name for f in written} == {"victim.yaml", f"{str(outside).strip('/').replace('/', '_')}_abs.yaml",
                                            "a_b.yaml", "dataset.yaml", "hidden.yaml", "_CON.yaml", "ok.yaml", "x_y.yaml"}
        assert all(f.read_text().startswith("schema:") for f in written)
        saved = json.loads(run_cli("report", tmp_path / "fits" / "victim.yaml", "-f", "json").stdout)
        assert saved["dataset"] == "../victim"  # the name itself is kept, as data, inside the file

    def test_collisions_get_distinct_files(self, tmp_path: Path) -> None:
        """'a/b' and 'a_b' (and '../a_b') would share a_b.yaml: the one that is its own file name keeps it, each
        other gets a hash of its own name, whatever else is saved beside it."""
        fits = tmp_path / "fits"
        p = run_cli("fit", long_csv(tmp_path / "c.csv", ["a/b", "a_b", "../a_b"]), "--dataset-col", "dataset",
                    "--save-dir", fits, "-f", "csv")
        assert p.returncode == 0, p.stderr
        names = sorted(f.name for f in fits.iterdir())
        assert len(names) == 3 and "a_b.yaml" in names and all(n.startswith("a_b") for n in names), names
        alone = run_cli("fit", long_csv(tmp_path / "d.csv", ["a/b", "a_b"]), "--dataset-col", "dataset",
                        "--save-dir", tmp_path / "fits2", "-f", "csv")
        assert alone.returncode == 0
        assert {f.name for f in (tmp_path / "fits2").iterdir()} <= set(names)  # the same name for the same dataset

    def test_inspect_task_name(self, tmp_path: Path) -> None:
        log = json.loads(INSPECT_JSON.read_text())
        log["eval"]["task"] = "../pwned"
        (tmp_path / "in").mkdir()
        (tmp_path / "in" / "log.json").write_text(json.dumps(log))
        p = run_cli("fit", tmp_path / "in" / "log.json", "--save-dir", tmp_path / "in" / "fits", "-f", "csv")
        assert p.returncode == 0, p.stderr
        assert not (tmp_path / "pwned.yaml").exists()
        assert [f.name for f in (tmp_path / "in" / "fits").iterdir()] == ["pwned.yaml"]

    def test_logs_of_one_task_are_distinct_datasets(self, tmp_path: Path) -> None:
        logs = tmp_path / "logs"
        logs.mkdir()
        for run in ("run1", "run2"):
            shutil.copy(INSPECT_JSON, logs / f"{run}.json")
        p = run_cli("fit", logs, "--save-dir", tmp_path / "fits", "-f", "json")
        assert p.returncode == 0, p.stderr
        names = [json.loads(line)["dataset"] for line in p.stdout.splitlines()]
        assert names == ["run1", "run2"]
        assert sorted(f.name for f in (tmp_path / "fits").iterdir()) == ["run1.yaml", "run2.yaml"]

    def test_equal_names_still_refused(self, tmp_path: Path) -> None:
        for sub in ("x", "y"):
            (tmp_path / sub).mkdir()
            write_jsonl(tmp_path / sub / "t.jsonl", q_rows()[:20])
        p = run_cli("fit", tmp_path / "x" / "t.jsonl", tmp_path / "y" / "t.jsonl", "--save-dir", tmp_path / "fits")
        assert "both named 't'" in one_error_line(p) and not (tmp_path / "fits").exists()

    def test_transfer_save_dir(self, tmp_path: Path, embedded_fit: tuple[Path, Path]) -> None:
        """transfer --save-dir builds its names in the same place: a target dataset named '../t' stays inside."""
        from betaconform_cli import embeddings

        from .conftest import fake_vector

        saved, cache = embedded_fit
        rows = ["dataset,item_id,judge,correct,text"]
        texts = [f"question {i}" for i in range(10)]
        rows += [f"../t,{i},{j},{(i + k) % 3 != 0:d},{texts[i]}" for i in range(10) for k, j in enumerate("abc")]
        (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
        own = tmp_path / "cache"
        shutil.copytree(cache, own)
        embedder = embeddings.load_embedder(None, own)
        assert embedder.cache is not None
        for t in texts:
            embedder.cache.put(t, fake_vector(t, embedder.dimension))
        out = tmp_path / "out"
        p = run_cli("transfer", tmp_path / "t.csv", "--dataset-col", "dataset", "--sources", saved, "--cache-dir", own,
                    "--save-dir", out, "-f", "csv")
        assert p.returncode == 0, p.stderr
        assert [f.name for f in out.iterdir()] == ["t.yaml"] and not (tmp_path / "t.yaml").exists()

    @pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../b", "..", ".", "", " ", "\x00", "a\nb",
                                      "é/ü", "x" * 400, "\udcff", "nul", "LPT1.txt", "./-"])
    def test_file_stem(self, name: str) -> None:
        from betaconform_cli.file_names import MAX_STEM_BYTES, file_stem

        stem = file_stem(name)
        assert stem and not stem.startswith(".") and "/" not in stem and "\\" not in stem
        assert not any(ord(c) < 32 for c in stem) and len(stem.encode("utf-8")) <= MAX_STEM_BYTES
        assert file_stem(stem) == stem and file_stem(name) == stem  # stable, and a safe name is itself
        assert os.path.dirname(os.path.normpath(os.path.join("fits", stem + ".yaml"))) == "fits"


def _promptfoo(tmp_path: Path, change: Any) -> Path:
    doc = json.loads(PROMPTFOO.read_text())
    change(doc["results"]["results"])
    out = tmp_path / "results.json"
    out.write_text(json.dumps(doc))
    return out


def _parquet(path: Path, select: str) -> Path:
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"COPY ({select}) TO '{path}' (FORMAT PARQUET)")
    finally:
        con.close()
    return path


LONG = "SELECT i::VARCHAR AS item_id, j AS judge, {correct} AS correct FROM range(6) t(i), (VALUES ('a'), ('b')) u(j)"


class TestTypesWhereValuesEnter:
    """Class 3, data: a value of the wrong type is one line naming the file, the record or column and the field."""

    @pytest.mark.parametrize("change,field", [
        (lambda rs: rs[0]["gradingResult"]["componentResults"].__setitem__(0, "oops"), "componentResults[0]"),
        (lambda rs: rs[0]["gradingResult"]["componentResults"].__setitem__(1, None), "componentResults[1]"),
        (lambda rs: rs[1]["gradingResult"].__setitem__("componentResults", "x"), "gradingResult.componentResults"),
        (lambda rs: rs[2]["gradingResult"]["componentResults"][0].__setitem__("assertion", ["llm-rubric"]), "assertion"),
        (lambda rs: rs[0].__setitem__("testCase", "case"), "testCase"),
        (lambda rs: rs[0].__setitem__("testIdx", [0]), "testIdx"),
        (lambda rs: rs.__setitem__(3, [1, 2]), "results.results"),
    ])
    def test_promptfoo(self, tmp_path: Path, change: Any, field: str) -> None:
        line = one_error_line(run_cli("fit", _promptfoo(tmp_path, change), "--label-field", "vars.gold"))
        assert "results.json: record" in line and field in line, line

    @pytest.mark.parametrize("select,column", [
        (LONG.format(correct="[1, 0]"), "correct"),
        (LONG.format(correct="{'x': 1}"), "correct"),
        ("SELECT [i] AS item_id, 'a' AS judge, 1 AS correct FROM range(4) t(i)", "item_id"),
        ("SELECT i::VARCHAR AS item_id, [1] AS a, [0] AS b FROM range(4) t(i)", "a"),
        ("SELECT [3] AS judges, 1 AS correct, 2 AS count", "judges"),
        ("SELECT 3 AS judges, 1 AS correct, MAP {'a': 1} AS count", "count"),
    ])
    def test_parquet_nested_columns(self, tmp_path: Path, select: str, column: str) -> None:
        line = one_error_line(run_cli("fit", _parquet(tmp_path / "t.parquet", select)))
        assert f"column '{column}'" in line and "one value" in line, line

    @pytest.mark.parametrize("command", ["fit", "judges", "doctor", "sample", "evaluate"])
    def test_counts_all_zero(self, tmp_path: Path, command: str) -> None:
        data = tmp_path / "zero.csv"
        data.write_text("dataset,judges,correct,count\na,3,0,0\na,3,1,0\na,3,3,0\n")
        assert "every count is 0" in one_error_line(run_cli(command, data))

    @pytest.mark.parametrize("value", [True, [1, 0], {"a": 1}])
    def test_inspect_score_values(self, tmp_path: Path, value: Any) -> None:
        """A scorer giving a boolean, a list or an object is left out (doctor says why), never compared."""
        log = json.loads(INSPECT_JSON.read_text())
        scorer = next(iter(log["samples"][0]["scores"]))
        log["samples"][0]["scores"][scorer]["value"] = value
        f = tmp_path / "log.json"
        f.write_text(json.dumps(log))
        for env in (None, _without_inspect_ai(tmp_path)):
            assert run_cli("fit", f, "-f", "csv", env=env).returncode == 0
            p = run_cli("doctor", f, env=env)
            assert p.returncode == 0 and f"{scorer}: left out" in p.stdout.decode(), p.stdout[-800:]

    @pytest.mark.parametrize("where,value,field", [
        ("samples", {"a": 1}, "samples"), ("samples.0", "s", "samples[]"), ("samples.0.scores", [1], "scores"),
        ("samples.0.epoch", "two", "epoch"), ("samples.0.scores.*", "C", "scores."), ("eval", [1], "eval"),
    ])
    def test_inspect_shapes(self, tmp_path: Path, where: str, value: Any, field: str) -> None:
        log = json.loads(INSPECT_JSON.read_text())
        *parents, last = where.split(".")
        node: Any = log
        for k in parents:
            node = node[int(k)] if k.isdigit() else node[k]
        if last == "*":
            last = next(iter(node))
        node[int(last) if last.isdigit() else last] = value
        f = tmp_path / "log.json"
        f.write_text(json.dumps(log))
        line = one_error_line(run_cli("fit", f, env=_without_inspect_ai(tmp_path)))
        assert "log.json" in line and field in line, line


    @pytest.mark.parametrize("forced", [None, "inspect", "promptfoo"])
    def test_json_nested_too_deeply(self, tmp_path: Path, forced: str | None) -> None:
        """The standard library's JSON parser recurses: a document 200 000 levels deep is refused, not a
        RecursionError."""
        f = tmp_path / "deep.json"
        f.write_text('{"eval": ' + "[" * 200_000 + "]" * 200_000 + "}")
        line = one_error_line(run_cli("fit", f, *(["--from", forced] if forced else []), env=_without_inspect_ai(tmp_path)))
        assert "deep.json" in line and ("deep" in line.split("deep.json", 1)[1] or "depth" in line), line


def _without_inspect_ai(tmp_path: Path) -> dict[str, str]:
    """The environment of a CLI process that cannot import inspect-ai (the standard-library reader runs)."""
    shadow = tmp_path / "no-inspect"
    (shadow / "inspect_ai").mkdir(parents=True, exist_ok=True)
    (shadow / "inspect_ai" / "__init__.py").write_text("raise ImportError('inspect-ai is not installed here')\n")
    return cli_env(PYTHONPATH=f"{shadow}{os.pathsep}{ROOT}")


class TestOptionsWhereTheyEnter:
    """Class 3, options: an integer option beyond what the computation can hold is a usage error naming it."""

    @pytest.mark.parametrize("args,flag", [
        (["judges", Q, "--population", "99999999999999999999"], "--population"),
        (["judges", Q, "--population", str(2**63 - 1)], "--population"),
        (["sample", Q, "--pool", Q, "--batch", "99999999999999999999"], "--batch"),
        (["fit", Q, "--at-k", "99999999999999999999", "--max-error", "0.1"], "--at-k"),
        (["evaluate", Q, "--runs", "-99999999999999999999"], "--runs"),
        (["sample", Q, "--replay", "--patience", "99999999999999999999"], "--patience"),
    ])
    def test_huge_integers(self, args: list[Any], flag: str) -> None:
        assert flag in one_error_line(run_cli(*args))


class TestEnvironmentFaults:
    """Class 3, environment: a file that cannot be read, a stream that cannot be written, a corrupt compressed
    stream -- one line naming it, exit 2."""

    def test_corrupt_parquet_pages(self, tmp_path: Path) -> None:
        """Bits flipped anywhere in a Parquet file: whichever query meets the damage (the first, or a later one
        such as the judge-name scan), the reader says the file cannot be read. Forty damaged copies are read in
        this process; the first that fails is then run as a CLI process."""
        import random

        from betaconform_cli.errors import InputError
        from betaconform_cli.inputs import Keep, read_inputs

        good = _parquet(tmp_path / "good.parquet", "SELECT (i % 50)::VARCHAR AS item_id, 'j' || (i // 50)::VARCHAR AS "
                                                   "judge, (hash(i) % 2)::INTEGER AS correct FROM range(500) t(i)")
        data, rng, failed = good.read_bytes(), random.Random(3), None
        for n in range(40):
            damaged = bytearray(data)
            for _ in range(4):
                damaged[rng.randrange(4, len(damaged) - 8)] ^= 1 << rng.randrange(8)
            f = tmp_path / f"bad{n}.parquet"
            f.write_bytes(bytes(damaged))
            for keep in (Keep.COUNTS, Keep.JUDGMENTS):
                try:
                    read_inputs([str(f)], keep=keep)
                except InputError as exc:
                    assert f"bad{n}.parquet" in str(exc)
                    failed = failed or f
        assert failed is not None
        assert failed.name in one_error_line(run_cli("judges", failed))

    @pytest.mark.parametrize("args", [["doctor", Q], ["fit", Q, "-f", "json"], ["fit", Q], ["judges", Q, "-f", "csv"],
                                      ["fit", "--help"], ["--version"]])
    def test_stdout_full(self, args: list[Any]) -> None:
        with open("/dev/full", "wb") as full:
            p = subprocess.run([sys.executable, "-m", "betaconform_cli", *map(str, args)], stdout=full, stderr=subprocess.PIPE,
                               env=cli_env(), timeout=60, preexec_fn=_file_size_cap(None), check=False)
        line = one_error_line(p)
        assert "<stdout>" in line and "No space left" in line

    def test_corrupt_deflate_without_inspect_ai(self, tmp_path: Path) -> None:
        import zipfile

        data = bytearray(LEGACY_EVAL.read_bytes())
        info = zipfile.ZipFile(LEGACY_EVAL).infolist()[1]
        start = info.header_offset + 30 + len(info.filename) + len(info.extra)
        for i in range(start + 5, start + min(info.compress_size, 40)):
            data[i] ^= 0x55
        bad = tmp_path / "bad.eval"
        bad.write_bytes(bytes(data))
        line = one_error_line(run_cli("fit", bad, env=_without_inspect_ai(tmp_path)))
        assert "bad.eval" in line and "compressed" in line

    @pytest.mark.parametrize("name", ["q.jsonl", "results.json", "fit.yaml", "log.eval"])
    def test_permission_denied(self, tmp_path: Path, name: str, saved_fit: Path) -> None:
        """Root reads any file, so for root the refusal is made by the system call itself (an audit hook in the
        child raises PermissionError on opening that one file); others get a real chmod 000 file."""
        src = {"q.jsonl": Q, "results.json": PROMPTFOO, "fit.yaml": saved_fit, "log.eval": LEGACY_EVAL}[name]
        f = tmp_path / name
        shutil.copy(src, f)
        command = "report" if name.endswith(".yaml") else "fit"
        if os.geteuid() != 0:
            f.chmod(0)
            p = run_cli(command, f)
        else:
            p = _run_denied(tmp_path, f, command)
        line = one_error_line(p)
        assert name in line and "ermission denied" in line, line


def _run_denied(tmp_path: Path, denied: Path, *args: Any) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a child in which opening `denied` fails with EACCES (sys.addaudithook sees every open())."""
    shim = tmp_path / "deny"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(
        "import errno, os, sys\n"
        "_DENIED = os.environ['BC_DENIED']\n"
        "def _hook(event, args):\n"
        "    if event == 'open' and args and isinstance(args[0], (str, bytes, os.PathLike)) \\\n"
        "            and os.path.abspath(os.fsdecode(args[0])) == _DENIED:\n"
        "        raise PermissionError(errno.EACCES, 'Permission denied', os.fsdecode(args[0]))\n"
        "sys.addaudithook(_hook)\n")
    env = cli_env(PYTHONPATH=f"{shim}{os.pathsep}{ROOT}", BC_DENIED=str(denied.resolve()))
    return run_cli(*args, denied, env=env)


class TestFaultsAreNotInterrupts:
    """Class 4: a truncated or empty file is a read error (exit 2, naming it), never "interrupted" (130)."""

    @pytest.mark.parametrize("name,source", [("r.json.gz", PROMPTFOO), ("q.jsonl.gz", Q), ("log.eval", LEGACY_EVAL),
                                             ("empty.json.gz", None), ("results.json", PROMPTFOO)])
    def test_truncated(self, tmp_path: Path, name: str, source: Path | None) -> None:
        data = b"" if source is None else source.read_bytes()
        if name.endswith(".gz"):
            data = gzip.compress(data)[: len(gzip.compress(data)) // 2] if data else b"\x1f\x8b"
        else:
            data = data[: len(data) // 2]
        f = tmp_path / name
        f.write_bytes(data)
        for command in ("fit", "doctor"):
            p = run_cli(command, f, env=_without_inspect_ai(tmp_path))
            assert b"interrupted" not in p.stderr
            assert name in one_error_line(p)

    def test_empty_cache_entry(self, tmp_path: Path) -> None:
        """An empty cached vector is recomputed, here by a model folder that cannot load: exit 2 naming it."""
        from betaconform_cli import embeddings

        from .conftest import fake_vector

        model = tmp_path / "model"
        (model / "pool").mkdir(parents=True)
        (model / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "pool",
                                                         "type": "sentence_transformers.models.Pooling"}]))
        (model / "config.json").write_text("{}")
        (model / "pool" / "config.json").write_text(json.dumps({"word_embedding_dimension": 8}))
        data = write_jsonl(tmp_path / "q.jsonl", q_rows()[:15])
        embedder = embeddings.load_embedder(model, tmp_path / "cache")
        assert embedder.cache is not None
        for row in q_rows()[:15]:
            embedder.cache.put(row["text"], fake_vector(row["text"], 8))
        first = embedder.cache._file(embeddings.text_hash(q_rows()[0]["text"]))
        first.write_bytes(b"")
        p = run_cli("fit", data, "--save", tmp_path / "f.yaml", "--embed", "--embedding-model", model,
                    "--cache-dir", tmp_path / "cache")
        assert p.returncode == 2 and b"interrupted" not in p.stderr
        assert "embedding model" in one_error_line(p)

    @pytest.mark.parametrize("content", [b"", b"\x93NUMPY\x01\x00", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (26,), }"])
    def test_cut_entries_recomputed(self, tmp_path: Path, content: bytes) -> None:
        from betaconform_cli import embeddings

        from ..test_embeddings import LetterEmbedder

        cache = embeddings.EmbeddingCache(tmp_path, "fake-letters", 26)
        f = cache._file(embeddings.text_hash("hello"))
        f.parent.mkdir(parents=True)
        f.write_bytes(content)
        e = embeddings.CachedEmbedder(LetterEmbedder(), cache)
        assert np.all(np.isfinite(e.embed(["hello"]))) and e.model_texts == 1
        assert cache.get("hello") is not None  # rewritten whole

    def test_cache_entries_are_synced(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from betaconform_cli import embeddings

        synced: list[int] = []
        real = os.fsync
        monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
        cache = embeddings.EmbeddingCache(tmp_path, "fake", 4)
        cache.put("a", np.ones(4))
        assert synced and cache.get("a") is not None
        assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


@pytest.fixture
def immutable(tmp_path: Path) -> Iterator[Path]:
    """A folder in which no file can be made (chattr +i: root too), whose existing file stays writable."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "out.json").write_text("the user's own file, which must survive\n")
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False).returncode:
            pytest.skip("no chattr +i here: a read-only folder cannot be made for root")
    else:
        folder.chmod(0o555)
    try:
        yield folder
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=False)
        folder.chmod(0o755)


def _file_size_cap(limit: int | None) -> Any:
    """The child's memory cap (as conftest.run_cli's), and a cap on the size of every file it writes."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the cap fails with EFBIG instead of killing
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return cap


class TestFallbackWrite:
    """Item 9: a rewrite in place (the folder refuses new files) that cannot finish never truncates the user's
    file; one that can replaces it whole."""

    def test_full_disk_in_a_read_only_folder(self, immutable: Path) -> None:
        target = immutable / "out.json"
        before = target.read_bytes()
        p = subprocess.run([sys.executable, "-m", "betaconform_cli", "fit", str(Q), "-o", str(target)],
                           capture_output=True, env=cli_env(), timeout=60, preexec_fn=_file_size_cap(200), check=False)
        line = one_error_line(p)
        assert "out.json" in line and "unchanged" in line, line
        assert target.read_bytes() == before

    def test_rewrite_in_a_read_only_folder(self, immutable: Path) -> None:
        target = immutable / "out.json"
        p = run_cli("fit", Q, "-o", target)
        assert p.returncode == 0, p.stderr
        assert json.loads(target.read_text())["dataset"] == "qa_judges"

    @pytest.mark.parametrize("fail", ["reserve", "write", "fsync"])
    def test_each_step_fails(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: str) -> None:
        from betaconform_cli import atomic

        target = tmp_path / "out.json"
        old = b"old content " * 10
        target.write_bytes(old)
        monkeypatch.setattr(atomic.tempfile, "mkstemp", _refuse)
        calls = {"n": 0}
        real_pwrite, real_fsync = os.pwrite, os.fsync

        def pwrite(fd: int, data: bytes, offset: int) -> int:
            calls["n"] += 1
            if fail == "write" and calls["n"] == 1:
                real_pwrite(fd, data[:7], offset)  # a part goes out, then the disk is full
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_pwrite(fd, data, offset)

        def fsync(fd: int) -> None:
            calls["n"] += 1
            if fail == "fsync" and calls["n"] <= 2:
                raise OSError(errno.EIO, "Input/output error")
            real_fsync(fd)

        def fallocate(fd: int, offset: int, length: int) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "pwrite", pwrite)
        monkeypatch.setattr(os, "fsync", fsync)
        if fail == "reserve":
            monkeypatch.setattr(os, "posix_fallocate", fallocate)
        with pytest.raises(atomic.OutputError, match="unchanged"):
            atomic.write_bytes(target, b"new " * 100)
        assert target.read_bytes() == old


def _refuse(*args: object, **kwargs: object) -> tuple[int, str]:
    raise PermissionError(errno.EACCES, "Permission denied")


class TestDashFile:
    """Item 8: `./-` is the file named '-'; only the argument '-' itself is standard input."""

    def test_data(self, tmp_path: Path) -> None:
        (tmp_path / "-").write_bytes(Q.read_bytes())
        p = run_cli("fit", "./-", "-f", "json", cwd=tmp_path, input=b"")
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        assert doc["items"] == 120 and doc["source"] != "<stdin>"
        (tmp_path / "sub").mkdir()
        p = run_cli("doctor", f"{tmp_path}/sub/../-", input=b"")
        assert p.returncode == 0 and b"120 items" in p.stdout, p.stderr

    def test_pool_and_saved_fit(self, tmp_path: Path, saved_fit: Path) -> None:
        (tmp_path / "-").write_bytes(Q.read_bytes())
        labeled = write_jsonl(tmp_path / "l.jsonl", q_rows()[:5])
        p = run_cli("sample", labeled, "--pool", "./-", "-f", "json", cwd=tmp_path, input=b"")
        assert p.returncode in (0, 1), p.stderr
        fits = tmp_path / "fits"
        fits.mkdir()
        shutil.copy(saved_fit, fits / "-")
        p = run_cli("report", "./-", "-f", "json", cwd=fits, input=b"")
        assert p.returncode == 0 and json.loads(p.stdout)["dataset"] == "qa_judges", p.stderr

    def test_dash_is_still_stdin(self, tmp_path: Path) -> None:
        (tmp_path / "-").write_bytes(b"not json\n")
        p = run_cli("fit", "-", "-f", "json", cwd=tmp_path, input=Q.read_bytes())
        assert p.returncode == 0 and json.loads(p.stdout)["source"] == "<stdin>"


def test_fault_text() -> None:
    """The one list of environment faults (errors.fault_text): faults get a line, bugs keep their traceback."""
    import zlib

    from betaconform_cli.errors import fault_text

    assert "ends too early" in (fault_text(EOFError("Compressed file ended")) or "")
    assert fault_text(OSError(errno.ENOSPC, "No space left on device")) == "No space left on device"
    assert fault_text(PermissionError(errno.EACCES, "Permission denied", "x.csv")) == "x.csv: Permission denied"
    assert fault_text(PermissionError(errno.EACCES, "Permission denied", "x.csv"), "x.csv") == "Permission denied"
    assert "corrupt compressed" in (fault_text(zlib.error("invalid code lengths set")) or "")
    assert "UTF-8" in (fault_text(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")) or "")
    for bug in (ValueError("a bug"), KeyError("a bug"), TypeError("a bug"), AttributeError("a bug"), IndexError()):
        assert fault_text(bug) is None
