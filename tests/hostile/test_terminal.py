"""What reaches a terminal, a pipe or a log (issue 10, items 7, 11, 19, 20, 21): escapes in names, streams that
cannot encode, narrow and piped tables, usage errors, Ctrl-C, readers that leave."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import (
    MIXED,
    Q,
    alive,
    children,
    cli_env,
    drain,
    invoke,
    one_error_line,
    popen_cli,
    q_rows,
    run_cli,
    write_jsonl,
)

EVIL = "\x1b]0;pwned\x07\x1b[2J\u202e=cmd|'/c calc'!A0\nstop: enough labels"
RAW = (b"\x1b", b"\x07", "\u202e".encode())


@pytest.fixture(scope="module")
def evil_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A dataset whose file name and item ids hold terminal escapes, a newline and a bidi override; a labeled
    prefix of it, a saved fit of it."""
    d = tmp_path_factory.mktemp("evil")
    rows = [dict(r, id=f"{EVIL}{i}") for i, r in enumerate(q_rows())]
    data = write_jsonl(d / "=\x1b[31mred\x1b]0;t\x07\u202e.jsonl", rows)
    labeled = write_jsonl(d / "labeled.jsonl", rows[:12])
    fit = d / "fit.yaml"
    assert invoke("fit", data, "--save", fit, "-f", "csv").exit_code == 0
    return {"data": data, "labeled": labeled, "fit": fit}


class TestControlCharacters:
    """Item 7: no rendering writes a control character, a bidi override, or a line a name could forge."""

    @pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
    def test_every_command_every_format(self, evil_files: dict[str, Path], fmt: str) -> None:
        f = evil_files
        for args in (("fit", f["data"]), ("report", f["fit"], f["fit"]), ("sample", f["labeled"], "--pool", f["data"]),
                     ("sample", f["data"], "--replay", "--runs", "2"), ("evaluate", f["data"], "--r", "10", "--runs", "2"),
                     ("fit", f["data"].with_name("missing\x1b[2J.jsonl"))):
            res = invoke(*args, "-f", fmt)
            out = (res.stdout + res.stderr).encode()
            assert not [c for c in RAW[:2] if c in out], (args, fmt)
            if fmt != "json":  # JSON carries the id exactly (escaped by JSON itself), the rest shows escapes
                assert RAW[2] not in out, (args, fmt)
            assert "\nstop: enough labels" not in res.stdout, (args, fmt)  # a forged decision line

    def test_csv_formula_guard(self, evil_files: dict[str, Path]) -> None:
        rows = list(csv.reader(io.StringIO(invoke("fit", evil_files["data"], "-f", "csv").stdout)))
        assert rows[1][0].startswith("'=") and all(not cell.startswith(("=", "+", "@")) for r in rows[1:] for cell in r)

    def test_json_keeps_names_exactly(self, evil_files: dict[str, Path]) -> None:
        doc = json.loads(invoke("sample", evil_files["labeled"], "--pool", evil_files["data"], "-f", "json").stdout)
        assert doc["labeled_ids"][0] == f"{EVIL}0"


def _names(tmp_path: Path) -> Path:
    rows = [dict(r, id=f"é{i}") for i, r in enumerate(q_rows())]
    return write_jsonl(tmp_path / "données_✓_日本.jsonl", rows)


class TestEncodings:
    """Item 11: a stream that cannot encode the output gets ASCII stand-ins and escapes, never a traceback; JSON
    stays the same JSON; files are UTF-8 whatever the locale."""

    ENVS = {"ascii": {"LC_ALL": "C", "PYTHONIOENCODING": "ascii"}, "latin-1": {"PYTHONIOENCODING": "latin-1"}}

    @pytest.mark.parametrize("env", list(ENVS))
    def test_every_format(self, tmp_path: Path, env: str) -> None:
        data = _names(tmp_path)
        e = cli_env(**self.ENVS[env])
        for fmt in ("table", "json", "csv", "markdown") if env == "ascii" else ("table", "json"):
            p = run_cli("fit", data, "-f", fmt, env=e)
            assert p.returncode == 0 and b"Traceback" not in p.stderr, (fmt, p.stderr[-500:])
            p.stdout.decode(env)  # encodable: it was written
            if fmt == "json":
                assert json.loads(p.stdout.decode(env))["dataset"] == "données_✓_日本"
            else:
                assert b"donn" in p.stdout
        labeled = write_jsonl(tmp_path / "lab.jsonl", [dict(r, id=f"é{i}") for i, r in enumerate(q_rows()[:12])])
        p = run_cli("sample", labeled, "--pool", data, env=e)
        assert p.returncode == 1 and b"next:" in p.stdout and b"Traceback" not in p.stderr, p.stderr[-500:]

    def test_output_file_is_utf8_after_the_table(self, tmp_path: Path) -> None:
        data = _names(tmp_path)
        p = run_cli("fit", data, "-o", tmp_path / "out.md", env=cli_env(**self.ENVS["ascii"]))
        assert p.returncode == 0, p.stderr[-500:]
        assert "données_✓_日本" in (tmp_path / "out.md").read_text(encoding="utf-8")

    def test_messages_on_an_ascii_stderr(self, tmp_path: Path) -> None:
        p = run_cli("fit", tmp_path / "nowhere_é.jsonl", env=cli_env(**self.ENVS["ascii"]))
        assert "no such file" in one_error_line(p)

    def test_undecodable_file_name(self, tmp_path: Path) -> None:
        """A file name that is not UTF-8 (Latin-1 bytes): shown with \\xNN escapes in every format, in files and
        in saved fits that read back (in this process: Python decodes such a name the same way for argv)."""
        name = os.path.join(os.fsencode(tmp_path), b"donn\xe9es.jsonl")
        with open(name, "wb") as fh:
            fh.write(Q.read_bytes())
        for fmt in ("table", "json", "csv", "markdown"):
            res = invoke("fit", os.fsdecode(name), "-f", fmt, "--save", tmp_path / f"s_{fmt}.yaml", "-o", tmp_path / f"o_{fmt}")
            assert res.exit_code == 0, res.output[-500:]
            assert "donn\\xe9es" in res.stdout  # the table
            written = (tmp_path / f"o_{fmt}").read_text(encoding="utf-8")
            assert "donn\\xe9es" in (json.loads(written)["dataset"] if fmt == "json" else written)
        p = run_cli("report", tmp_path / "s_json.yaml", "-o", tmp_path / "r.json")
        assert p.returncode == 0 and "donn\\xe9es" in json.loads((tmp_path / "r.json").read_text())["source"]


def _tty(args: list[str], cols: int) -> tuple[int, bytes]:
    """Run the CLI on a pseudo-terminal `cols` wide; (exit code, everything it wrote)."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    p = popen_cli(*args, env=cli_env(TERM="xterm", COLUMNS=None), stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    out = drain(master)
    # a transient progress bar draws (and erases) a label cut to the width: only what stays on the screen counts
    return p.wait(timeout=60), out.rsplit(b"\x1b[?25h", 1)[-1]


NUMBER = re.compile(r"\d+\.\d+")


class TestNarrowAndPiped:
    """Item 19: no cell is ever cut, on a narrow terminal (COLUMNS, a real pty) or in a pipe; every number the
    JSON has is in the table."""

    @pytest.fixture(scope="class")
    def inputs(self, tmp_path_factory: pytest.TempPathFactory, saved_fit: Path) -> dict[str, Path]:
        d = tmp_path_factory.mktemp("narrow")
        long = d / "a_very_long_dataset_name_that_goes_on_and_on_for_ever_and_ever.jsonl"
        long.write_bytes(Q.read_bytes())
        write_jsonl(d / "lab.jsonl", q_rows()[:12])
        return {"long": long, "mixed": MIXED, "lab": d / "lab.jsonl", "fit": saved_fit}

    def commands(self, i: dict[str, Path]) -> list[list[str]]:
        return [
            ["fit", str(i["long"]), str(i["mixed"]), "--ks", "1-15"],
            ["report", str(i["fit"]), str(i["fit"])],
            ["sample", str(i["lab"]), "--pool", str(i["long"])],
            ["sample", str(i["long"]), "--replay", "--runs", "2"],
            ["evaluate", str(i["long"]), str(i["mixed"]), "--r", "10", "--runs", "2"],
            ["evaluate", str(i["long"]), "--rule", "precision", "--runs", "2", "--target", "0.05"],
            ["fit", "--help"], ["sample", "--help"], ["evaluate", "--help"], ["transfer", "--help"], ["--help"],
        ]

    @pytest.mark.parametrize("columns", ["40", None])
    def test_piped(self, inputs: dict[str, Path], columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
        """In this process: the runner's stdout is not a terminal, exactly as a pipe (tables at their natural
        width unless COLUMNS says otherwise)."""
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        for args in self.commands(inputs):
            res = invoke(*args)
            assert res.exit_code in (0, 1), (args, res.output[-500:])
            text = res.stdout
            assert "…" not in text, (args, columns)
            if columns is None and args[0] in ("fit", "evaluate") and "--help" not in args:
                assert max(len(line) for line in text.splitlines()) > 80  # natural width, not a default 80
            if "--help" in args or args[0] == "sample" and "--replay" not in args:
                continue
            j = invoke(*args, "-f", "json").stdout
            want = {f"{100 * float(x):.1f}" for x in re.findall(r'"(?:estimate|low|high)": ([0-9.e-]+)', j)}
            got = set(NUMBER.findall(text))
            assert want <= got, (args, sorted(want - got)[:5])

    def test_real_terminal(self, inputs: dict[str, Path]) -> None:
        for args in self.commands(inputs)[4:7]:
            for cols in (30, 50):
                code, out = _tty(args, cols)
                assert code in (0, 1) and "…".encode() not in out, (args, cols, out[-800:])

    def test_width_is_respected_when_it_can_be(self, inputs: dict[str, Path]) -> None:
        p = run_cli("evaluate", inputs["long"], inputs["mixed"], "--r", "10", "--runs", "2", env=cli_env(COLUMNS="60"))
        tables = [line for line in p.stdout.decode().splitlines() if line.startswith(("┃", "│", "┏", "└"))]
        assert tables and max(map(len, tables)) <= 60 and "(continued)" in p.stdout.decode()


class TestUsageErrors:
    """Item 20: one line on stderr, exit 2, whoever finds the mistake (click or the core)."""

    @pytest.mark.parametrize("args", [
        [], ["fit"], ["bogus"], ["fit", str(Q), "--bogus"], ["fit", str(Q), "--seed", "abc"], ["fit", str(Q), "-o"],
        ["fit", str(Q), "--format", "xml"], ["sample", str(Q), str(Q)], ["transfer", str(Q)], ["evaluate", str(Q), "--runs", "1e3"],
        ["fit", str(Q), "--ks", "5-1"], ["fit", str(Q), "--seed", "18446744073709551616"], ["sample", str(Q), "--tau", "nan"],
        ["report"], ["evaluate", str(Q), "--r", "10", "--rule", "variance"],
    ])
    def test_one_line(self, args: list[str]) -> None:
        res = invoke(*args)
        if not args:  # no arguments: the help, and no stray line on stderr
            assert res.exit_code == 2 and "Usage" in res.stdout and res.stderr == ""
            return
        assert res.exit_code == 2 and res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.output

    @pytest.mark.parametrize("args", [["fit"], ["fit", str(Q), "--bogus"], ["fit", str(Q), "--ks", "5-1"]])
    def test_console_process(self, args: list[str]) -> None:
        one_error_line(run_cli(*args))


class TestInterrupt:
    """Item 21: Ctrl-C (SIGINT to the whole process group, as a terminal sends it) is 'interrupted' and exit 130,
    at start-up, during an evaluation, and while forked workers count a big file; no worker is left behind."""

    def _interrupt(self, reaped: list[subprocess.Popen[bytes]], args: list[str], when: float | None = None,
                   wait_for_children: bool = False) -> tuple[int, bytes, list[int]]:
        p = popen_cli(*args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        reaped.append(p)
        kids: list[int] = []
        if wait_for_children:
            deadline = time.time() + 30
            while not kids and time.time() < deadline and p.poll() is None:
                kids = children(p.pid)
                time.sleep(0.01)
            assert kids, "the read did not fork workers"
        else:
            time.sleep(when or 0)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)
        return p.returncode, err, kids

    @pytest.mark.parametrize("when", [0.2, 0.5])
    def test_during_start_up(self, reaped: list[subprocess.Popen[bytes]], when: float) -> None:
        code, err, _ = self._interrupt(reaped, ["fit", str(Q)], when)
        # or it had already finished; or, on a loaded machine, the signal came while the interpreter itself was
        # still starting, before any of our code ran (Python's own KeyboardInterrupt, not from our package)
        before_us = code != 0 and b"KeyboardInterrupt" in err and b"betaconform_cli/cli/" not in err
        assert (code, err) == (130, b"interrupted\n") or (code == 0 and not err) or before_us, (code, err[-500:])

    def test_during_evaluate(self, reaped: list[subprocess.Popen[bytes]]) -> None:
        code, err, _ = self._interrupt(reaped, ["evaluate", str(Q), "--runs", "2000", "--r", "10"], 1.5)
        assert (code, err) == (130, b"interrupted\n")

    def test_during_a_forked_read(self, reaped: list[subprocess.Popen[bytes]], tmp_path: Path) -> None:
        big = tmp_path / "big.jsonl"
        line = b'{"judgments": [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1]}\n'
        for size in (40, 160):  # MiB, above PARALLEL_MIN_BYTES: forked workers count ranges
            big.write_bytes(line * (size * 2**20 // len(line)))
            code, err, kids = self._interrupt(reaped, ["fit", str(big)], wait_for_children=True)
            # on a loaded machine this test may see the workers only as the finished read tears them down, and the
            # signal then lands after the output (exit 0, nothing on stderr): once, with a 4x longer read, again
            if (code, err) != (0, b""):
                break
        assert (code, err) == (130, b"interrupted\n")
        deadline = time.time() + 10
        while any(alive(k) for k in kids) and time.time() < deadline:
            time.sleep(0.05)
        assert not [k for k in kids if alive(k)]


class TestReadersThatLeave:
    """A pipe closed early (| head) keeps the verdict's exit code; closed standard streams are not a traceback."""

    def test_head(self) -> None:
        for args, code in ((["fit", str(Q)], 0), (["fit", str(Q), "--max-error", "0.01", "--at-k", "3"], 1),
                           (["evaluate", str(Q), "--runs", "30", "--r", "10", "--per-run", "-f", "json"], 0)):
            p = popen_cli(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert p.stdout is not None and p.stderr is not None
            p.stdout.read(1)  # the reader takes one byte and leaves, as `| head -c 1` does
            p.stdout.close()
            err = p.stderr.read()
            assert p.wait(timeout=60) == code and b"Traceback" not in err, (args, err[-500:])

    def test_closed_stdout(self) -> None:
        p = subprocess.run([sys.executable, "-m", "betaconform_cli", "fit", str(Q), "--max-error", "0.01", "--at-k", "3"],
                           env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60, check=False,
                           preexec_fn=lambda: os.close(1))
        assert p.returncode == 1 and b"gate failed" in p.stderr and b"Traceback" not in p.stderr
