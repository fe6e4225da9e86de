"""Outputs that are lost or overwrite data (issue 10, items 1-4 and 24's file handling): -o's format, special
files and links, outputs that are inputs, two outputs of one name, stale temporary files, read-only folders."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from .conftest import MIXED, Q, cli_env, invoke, one_error_line, q_rows, run_cli, write_jsonl


class TestOutputFormat:
    """Item 1: -o's extension picks the format; .txt is the table; no or an unknown extension is a usage error
    before any work -- never a 0-byte file with 'wrote' and exit 0."""

    @pytest.mark.parametrize("command", ["fit", "report", "evaluate", "replay"])
    def test_txt_is_the_table(self, command: str, tmp_path: Path, saved_fit: Path) -> None:
        args = {"fit": ["fit", Q], "report": ["report", saved_fit], "evaluate": ["evaluate", Q, "--r", "10", "--runs", "2"],
                "replay": ["sample", Q, "--replay", "--runs", "2"]}[command]
        out = tmp_path / "out.txt"
        res = invoke(*args, "-o", out)
        assert res.exit_code == 0, res.output
        text = out.read_text(encoding="utf-8")
        assert "┃" in text and not text.startswith(("{", "dataset,", "|"))  # the table, not another format
        numbers = re.compile(r"-?\d+\.\d+%?")
        assert numbers.findall(text) and sorted(numbers.findall(text)) == sorted(numbers.findall(res.stdout))

    @pytest.mark.parametrize("name", ["out", "out.xyz", "out.tsv", "out.yaml", "out.png", "out.txt.bak"])
    @pytest.mark.parametrize("command", ["fit", "report", "evaluate", "replay", "transfer"])
    def test_unknown_extension_is_refused_before_work(self, name: str, command: str, tmp_path: Path, saved_fit: Path) -> None:
        args = {"fit": ["fit", Q], "report": ["report", saved_fit], "evaluate": ["evaluate", Q, "--r", "10", "--runs", "2"],
                "replay": ["sample", Q, "--replay"], "transfer": ["transfer", Q, "--sources", saved_fit]}[command]
        res = invoke(*args, "-o", tmp_path / name)
        assert res.exit_code == 2 and "--output" in res.stderr and res.stderr.count("\n") == 1, res.stderr
        assert not (tmp_path / name).exists()

    def test_explicit_format_takes_any_name(self, tmp_path: Path) -> None:
        out = tmp_path / "result"
        assert invoke("fit", Q, "-o", out, "-f", "json").exit_code == 0
        assert json.loads(out.read_text())["dataset"] == "qa_judges"

    @pytest.mark.parametrize("name", ["fit.csv", "fit.json", "fit"])
    def test_saved_fit_needs_a_yaml_name(self, name: str, tmp_path: Path) -> None:
        res = invoke("fit", Q, "--save", tmp_path / name)
        assert res.exit_code == 2 and "--save" in res.stderr and ".yaml" in res.stderr
        assert not (tmp_path / name).exists()

    def test_live_output_needs_a_pool(self, tmp_path: Path) -> None:
        labeled = write_jsonl(tmp_path / "lab.jsonl", q_rows()[:12])
        res = invoke("sample", labeled, "-o", tmp_path / "next.jsonl")
        assert res.exit_code == 2 and "--pool" in res.stderr and not (tmp_path / "next.jsonl").exists()
        res = invoke("sample", labeled, "--pool", Q, "-o", tmp_path / "next.csv")
        assert res.exit_code == 2 and ".jsonl" in res.stderr and not (tmp_path / "next.csv").exists()


class TestSpecialFiles:
    """Item 2: devices, FIFOs and links are written through, never replaced by a regular file."""

    def test_fifo(self, tmp_path: Path) -> None:
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
        reader.start()
        p = run_cli("fit", Q, "-o", fifo, "-f", "json", "--no-chart")
        reader.join(timeout=30)
        assert p.returncode == 0, p.stderr
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and json.loads(got[0])["dataset"] == "qa_judges"

    def test_dev_null_stays_a_device(self) -> None:
        before = os.stat("/dev/null")
        p = run_cli("fit", Q, "-o", "/dev/null", "-f", "csv", "--no-chart")
        assert p.returncode == 0, p.stderr
        after = os.stat("/dev/null")
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev

    def test_symlinks_stay_links(self, tmp_path: Path) -> None:
        target = tmp_path / "real.json"
        target.write_text("old")
        link = tmp_path / "link.json"
        link.symlink_to(target.name)
        dangling = tmp_path / "dangling.json"
        dangling.symlink_to("made.json")
        relative = tmp_path / "sub" / "rel.json"
        relative.parent.mkdir()
        relative.symlink_to("../rel_target.json")
        for path in (link, dangling, relative):
            assert invoke("fit", Q, "-o", path, "--no-chart").exit_code == 0
            assert path.is_symlink()
        assert json.loads(target.read_text())["dataset"] == "qa_judges"
        assert (tmp_path / "made.json").exists() and (tmp_path / "rel_target.json").exists()
        fit_link = tmp_path / "fit.yaml"
        fit_link.symlink_to("fit_target.yaml")
        assert invoke("fit", Q, "--save", fit_link, "-f", "csv").exit_code == 0
        assert fit_link.is_symlink() and (tmp_path / "fit_target.yaml").read_text().startswith("schema:")

    def test_symlink_loop(self, tmp_path: Path) -> None:
        (tmp_path / "a.json").symlink_to("b.json")
        (tmp_path / "b.json").symlink_to("a.json")
        res = invoke("fit", Q, "-o", tmp_path / "a.json")
        assert res.exit_code == 2 and "symbolic link loop" in res.stderr

    def test_dev_stdout_to_a_pipe(self) -> None:
        p = run_cli("fit", Q, "-o", "/dev/stdout", "-f", "csv", "--no-chart")
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith(b"dataset,k,estimate") and b"majority-vote error" in p.stdout

    def test_dev_stdout_appended_never_replaces_the_file(self, tmp_path: Path) -> None:
        log = tmp_path / "log.txt"
        log.write_text("earlier line\n")
        with open(log, "ab") as fh:
            p = subprocess.run(["sh", "-c", f'exec "$0" -m betaconform_cli fit {Q} -o /dev/stdout -f json --no-chart',
                                os.sys.executable], stdout=fh, stderr=subprocess.PIPE, env=cli_env(), timeout=60, check=False)
        assert p.returncode == 0, p.stderr
        text = log.read_text()
        assert text.startswith("earlier line\n") and '"schema": "betaconform/1"' in text and "majority-vote" in text

    def test_other_open_descriptor(self, tmp_path: Path) -> None:
        out = tmp_path / "fd3.csv"
        with open(out, "wb") as fh:
            p = run_cli("fit", Q, "-o", f"/dev/fd/{fh.fileno()}", "-f", "csv", "--no-chart", pass_fds=(fh.fileno(),))
        assert p.returncode == 0, p.stderr
        assert out.read_text().startswith("dataset,k")
        p = run_cli("fit", Q, "-o", "/dev/fd/9", "-f", "csv")
        assert "Bad file descriptor" in one_error_line(p)

    def test_full_device(self) -> None:
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full")
        assert "No space left" in one_error_line(run_cli("fit", Q, "-o", "/dev/full", "-f", "csv", "--no-chart"))


class TestOutputIsAnInput:
    """Item 3: an output that is also an input (by any path) is refused before anything is written."""

    def test_fit_every_path_to_the_input(self, q_copy: Path, tmp_path: Path) -> None:
        before = q_copy.read_bytes()
        (tmp_path / "link.jsonl").symlink_to(q_copy.name)
        os.link(q_copy, tmp_path / "hard.jsonl")
        cases = [
            ("fit", q_copy, "-o", q_copy, "-f", "json"),
            ("fit", q_copy, "--save", tmp_path / "hard.jsonl"),
            ("fit", tmp_path / "link.jsonl", "-o", q_copy, "-f", "json"),
            ("fit", q_copy, "-o", tmp_path / "hard.jsonl", "-f", "csv"),
            ("fit", tmp_path, "-o", tmp_path / "q.jsonl", "-f", "json"),
            ("fit", str(tmp_path / "*.jsonl"), "-o", tmp_path / "link.jsonl", "-f", "json"),
            ("sample", q_copy, "--replay", "-o", q_copy, "-f", "json"),
            ("evaluate", q_copy, "--r", "10", "--runs", "2", "-o", q_copy, "-f", "json"),
        ]
        for args in cases:
            res = invoke(*args)
            assert res.exit_code == 2 and "overwrite the input" in res.stderr, (args, res.stderr)
        assert q_copy.read_bytes() == before

    def test_sample_next_items_onto_labels_or_pool(self, tmp_path: Path) -> None:
        labeled = write_jsonl(tmp_path / "labels.jsonl", q_rows()[:15])
        pool = write_jsonl(tmp_path / "pool.jsonl", q_rows())
        for target in (labeled, pool):
            before = target.read_bytes()
            res = invoke("sample", labeled, "--pool", pool, "-o", target)
            assert res.exit_code == 2 and "overwrite the input" in res.stderr
            assert target.read_bytes() == before

    def test_report_output_onto_a_fit(self, saved_fit: Path, tmp_path: Path) -> None:
        fit = tmp_path / "fits" / "q.yaml"
        fit.parent.mkdir()
        fit.write_bytes(saved_fit.read_bytes())
        for args in (("report", fit, "-o", fit, "-f", "json"), ("report", fit.parent, "-o", fit, "-f", "csv"),
                     ("report", str(fit.parent / "*.yaml"), "-o", fit, "-f", "json")):
            res = invoke(*args)
            assert res.exit_code == 2 and "overwrite the input" in res.stderr, res.stderr
        assert fit.read_bytes() == saved_fit.read_bytes()

    def test_transfer_outputs_onto_sources_and_config(self, embedded_fit: tuple[Path, Path], tmp_path: Path) -> None:
        saved_fit, cache = embedded_fit
        src = tmp_path / "srcs" / "q.yaml"
        src.parent.mkdir()
        src.write_bytes(saved_fit.read_bytes())
        config = tmp_path / "transfer.yaml"
        config.write_text("sigmoid_a: 10\n")
        target = write_jsonl(tmp_path / "q.jsonl", q_rows()[:10])
        for args in (("--save", src), ("-o", config, "-f", "json"), ("--save", config), ("-o", src, "-f", "json")):
            res = invoke("transfer", target, "--sources", src.parent, "--config", config, *args)
            assert res.exit_code == 2 and "overwrite the input" in res.stderr, res.stderr
        # --save-dir: the target is named like a source file in that folder
        res = invoke("transfer", target, "--sources", src.parent, "--save-dir", src.parent, "--cache-dir", cache)
        assert res.exit_code == 2 and "overwrite the input" in res.stderr, res.stderr
        assert src.read_bytes() == saved_fit.read_bytes() and config.read_text() == "sigmoid_a: 10\n"

    def test_two_outputs_of_one_name(self, tmp_path: Path) -> None:
        for args in (("-o", tmp_path / "x.json", "--save", tmp_path / "x.json"),
                     ("-o", tmp_path / "x.md", "--save", tmp_path / "./x.md"),
                     ("-f", "json", "-o", tmp_path / "d" / "qa_judges.yaml", "--save-dir", tmp_path / "d")):
            res = invoke("fit", Q, *args)
            assert res.exit_code == 2 and "same file" in res.stderr, res.stderr
        res = invoke("evaluate", Q, "--r", "10", "--runs", "2", "-f", "json", "-o", tmp_path / "e.png", "--plot", tmp_path / "e.png")
        assert res.exit_code == 2 and "same file" in res.stderr


class TestSaveDirNames:
    """Item 4: two inputs of one dataset name would be saved to one file; refused, for fit and transfer."""

    def test_fit(self, tmp_path: Path) -> None:
        for sub, suffix in (("x", ".jsonl"), ("y", ".jsonl"), ("z", ".jsonl.gz")):
            (tmp_path / sub).mkdir()
            data = Q.read_bytes()
            if suffix.endswith(".gz"):
                import gzip

                data = gzip.compress(data)
            (tmp_path / sub / f"data{suffix}").write_bytes(data)
        for pair in (("x", "y"), ("x", "z")):
            a, b = (next((tmp_path / s).iterdir()) for s in pair)
            res = invoke("fit", a, b, "--save-dir", tmp_path / "out")
            assert res.exit_code == 2 and "both named 'data'" in res.stderr, res.stderr
            assert not (tmp_path / "out" / "data.yaml").exists()

    def test_transfer(self, embedded_fit: tuple[Path, Path], tmp_path: Path) -> None:
        saved_fit, cache = embedded_fit
        for sub in ("x", "y"):
            (tmp_path / sub).mkdir()
            write_jsonl(tmp_path / sub / "t.jsonl", q_rows()[:10])
        res = invoke("transfer", tmp_path / "x" / "t.jsonl", tmp_path / "y" / "t.jsonl", "--sources", saved_fit,
                     "--save-dir", tmp_path / "out", "--cache-dir", cache)
        assert res.exit_code == 2 and "both named 't'" in res.stderr, res.stderr


class TestTemporaryFiles:
    """Item 24: a killed writer's temporary file is cleaned by the next write to that name (at once when no live
    writer holds it); a live writer's is never touched; a writable file in a read-only folder is rewritten."""

    def _temp(self, folder: Path, name: str, age: float) -> Path:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.bc-", suffix=".tmp", dir=folder)
        os.close(fd)
        os.utime(tmp, (time.time() - age, time.time() - age))
        return Path(tmp)

    def test_sigkilled_writers_temp_removed_at_once(self, tmp_path: Path) -> None:
        from betaconform_cli import atomic

        dead = self._temp(tmp_path, "out.json", age=5)  # nobody holds its lock: its writer is gone
        fresh = self._temp(tmp_path, "out.json", age=0)  # too young to tell: a writer may be locking it right now
        other = self._temp(tmp_path, "other.json", age=5000)  # another name: not ours to judge
        atomic.write_text(tmp_path / "out.json", "new")
        assert not dead.exists() and fresh.exists() and other.exists()
        assert (tmp_path / "out.json").read_text() == "new"

    def test_live_writers_temp_is_kept(self, tmp_path: Path) -> None:
        from betaconform_cli import atomic

        held = self._temp(tmp_path, "out.json", age=5)
        fd = os.open(held, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            atomic.write_text(tmp_path / "out.json", "new")
            assert held.exists()
        finally:
            os.close(fd)

    def test_really_killed_writer(self, tmp_path: Path) -> None:
        """A writer SIGKILLed in the middle of its write: the next run removes what it left."""
        import signal

        code = ("import sys, time; sys.path.insert(0, sys.argv[2]); from betaconform_cli import atomic\n"
                "def slow(fh):\n    fh.write(b'x'); fh.flush(); print('writing', flush=True); time.sleep(60)\n"
                "atomic.atomic_write(sys.argv[1], slow)\n")
        target = tmp_path / "fit.yaml"
        p = subprocess.Popen([os.sys.executable, "-c", code, str(target), str(Path(__file__).resolve().parents[2])],
                             stdout=subprocess.PIPE)
        try:
            assert p.stdout is not None and p.stdout.readline() == b"writing\n"
            left = list(tmp_path.glob(".fit.yaml.bc-*.tmp"))
            assert len(left) == 1
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=10)
        os.utime(left[0], (time.time() - 3, time.time() - 3))
        assert invoke("fit", Q, "--save", target, "-f", "csv").exit_code == 0
        assert not left[0].exists() and target.read_text().startswith("schema:")

    def test_read_only_folder(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Root may write anywhere, so the folder's refusal is simulated where the temporary file is made."""
        from betaconform_cli import atomic

        target = tmp_path / "out.json"
        target.write_text("old content that is longer than the new one")
        os.chmod(target, 0o640)

        def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse)
        atomic.write_text(target, "new")
        assert target.read_text() == "new" and stat.S_IMODE(os.stat(target).st_mode) == 0o640
        with pytest.raises(atomic.OutputError, match="Permission denied"):
            atomic.write_text(tmp_path / "absent.json", "new")  # nothing to rewrite in place

    def test_mixed_judges_fixture_is_readable(self) -> None:
        assert MIXED.exists()
