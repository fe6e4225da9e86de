"""The hostile suite: every command run the way a careless or hostile user would, as real processes where it
matters (terminals, encodings, signals, pipes, FIFOs, devices), each under a memory cap and a timeout, so that a
regression fails a test instead of taking the machine down. The embedding model is never loaded: transfer runs
read vectors that the `embedding_cache` fixture puts in the cache first.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_vector, fill_embedding_cache  # noqa: F401 - fake_vector: the hostile tests import it from here

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
Q = SAMPLE / "qa_judges.jsonl"
MIXED = SAMPLE / "code_review.jsonl"  # 5 to 7 judges per item: extrapolated rows
MEMORY_CAP = 2 << 30  # bytes of address space per CLI process (a fit with a figure needs ~0.6 GiB)
TIMEOUT = 60


def _cap_memory() -> None:
    """The child's memory cap, and Ctrl-C as a terminal delivers it: a test run started in the background (a CI
    runner, `make test &`) inherits SIGINT ignored, and Python then never turns it into KeyboardInterrupt."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli_env(**extra: str | None) -> dict[str, str]:
    """The environment of a CLI process: this checkout first on the path, one BLAS thread, no colour; `extra`
    adds (or with None removes) variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
    env.update(PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", NO_COLOR="1", TERM="dumb")
    env.pop("COLUMNS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)  # a test run inside GitHub Actions: not its job page
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


# read by the CLI when a command runs, never at import or by the interpreter's start-up: a server started under
# other values serves them unchanged (each test's own cache folder, tests/conftest.py; the job summary's path,
# cli/ci_outputs.py and cli/emit.py), and a run whose env= differs from cli_env() in these alone is forked too
RUN_TIME_VARIABLES = frozenset({"XDG_CACHE_HOME", "HOME", "TMPDIR", "GITHUB_STEP_SUMMARY"})


class _ForkServer:
    """The client of tests/hostile/forkserver.py: one server per pytest worker, started on first use."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: Any = None
        self.env: dict[str, str] = {}
        self.child_cpu = 0.0  # CPU seconds of the children run so far (read by tests/cpu_times.py)
        import atexit

        atexit.register(self.stop)

    def _start(self, env: dict[str, str]) -> None:
        import socket

        self.stop()
        self.env = env
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        main_path = str(ROOT / "betaconform_cli" / "__main__.py")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("forkserver.py")), str(theirs.fileno()),
                                      str(MEMORY_CAP), main_path], env=env, pass_fds=(theirs.fileno(),),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        theirs.close()
        self.sock = ours

    def stop(self) -> None:
        if self.proc is not None:
            self.sock.close()
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, args: list[str], cwd: Path | None, timeout: float, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
        import socket
        import tempfile

        with self.lock:  # the child runs in `env`; a change beyond the variables read at run time restarts the server
            changed = {k for k in env.keys() | self.env.keys() if env.get(k) != self.env.get(k)} - RUN_TIME_VARIABLES
            if self.proc is None or self.proc.poll() is not None or changed:
                self._start(env)
            with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
                request = json.dumps({"args": args, "cwd": None if cwd is None else str(cwd), "env": env}).encode()
                socket.send_fds(self.sock, [request], [out.fileno(), err.fileno()])
                pid = json.loads(self.sock.recv(1 << 16))["pid"]
                self.sock.settimeout(timeout)
                try:
                    reply = json.loads(self.sock.recv(1 << 16))
                except TimeoutError:
                    os.kill(pid, signal.SIGKILL)
                    self.sock.settimeout(None)
                    self.child_cpu += json.loads(self.sock.recv(1 << 16))["cpu"]
                    raise subprocess.TimeoutExpired([sys.executable, "-m", "betaconform_cli", *args], timeout) from None
                finally:
                    self.sock.settimeout(None)
                self.child_cpu += reply["cpu"]
                out.seek(0)
                err.seek(0)
                return subprocess.CompletedProcess([sys.executable, "-m", "betaconform_cli", *args],
                                                   os.waitstatus_to_exitcode(reply["status"]), out.read(), err.read())


_FORK_SERVER = _ForkServer()


def run_cli(*args: Any, env: dict[str, str] | None = None, input: bytes | None = None, cwd: Path | None = None,
            timeout: float = TIMEOUT, **popen: Any) -> subprocess.CompletedProcess[bytes]:
    """`python -m betaconform_cli ARGS` as its own process (memory-capped), stdout and stderr as bytes. In the default
    environment (or one that differs from it only in RUN_TIME_VARIABLES), with nothing on stdin and no other Popen
    option, the process is forked from a server that has imported the package already (forkserver.py;
    BETACONFORM_FORKSERVER=0 starts a fresh interpreter every time)."""
    if input is None and not popen and os.environ.get("BETACONFORM_FORKSERVER", "1") != "0":
        default = cli_env()
        if env is None or {k for k in env.keys() | default.keys() if env.get(k) != default.get(k)} <= RUN_TIME_VARIABLES:
            return _FORK_SERVER.run([str(a) for a in args], cwd, timeout, default if env is None else env)
    return subprocess.run(
        [sys.executable, "-m", "betaconform_cli", *map(str, args)], capture_output=True, input=input, cwd=cwd,
        env=env or cli_env(), timeout=timeout, preexec_fn=_cap_memory, check=False, **popen,
    )


def popen_cli(*args: Any, env: dict[str, str] | None = None, **popen: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "betaconform_cli", *map(str, args)], env=env or cli_env(),
                            preexec_fn=_cap_memory, **popen)


def drain(master: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closes it; the master is closed."""
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side has closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return out


def one_error_line(p: subprocess.CompletedProcess[bytes], code: int = 2) -> str:
    """The process failed as a user error: exit `code`, one line on stderr, no traceback; returns the line."""
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == code, (p.returncode, err[-2000:])
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("error: "), err[-2000:]
    return err


def invoke(*args: Any) -> Any:
    """The app in this process (CliRunner): for checks that need no real terminal, signal or encoding."""
    from typer.testing import CliRunner

    from betaconform_cli.cli import app

    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def q_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in Q.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session")
def saved_fit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """qa_judges saved by `fit --save` (made once): the base for hand-edited fits."""
    out = tmp_path_factory.mktemp("fit") / "q.yaml"
    res = invoke("fit", Q, "--save", out, "-f", "json")
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="session")
def embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """A cache directory holding a vector for every text of the given files, for the default model: a transfer
    run then never loads the model (a missing text would, and fail under the memory cap)."""
    root = tmp_path_factory.mktemp("cache")

    def fill(*files: Path) -> Path:
        return fill_embedding_cache(root, *files)

    return fill


@pytest.fixture
def q_copy(tmp_path: Path) -> Path:
    p = tmp_path / "q.jsonl"
    p.write_bytes(Q.read_bytes())
    return p


def children(pid: int) -> list[int]:
    """Child processes of `pid` (Linux /proc)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie has exited
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.fixture
def reaped() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test started: killed (by pid) if still running when it ends."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)


@pytest.fixture(scope="session")
def embedded_fit(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Callable[..., Path]) -> tuple[Path, Path]:
    """(qa_judges saved with its mean embedding, the cache holding qa_judges' and code_review's texts)."""
    cache = embedding_cache(Q, MIXED)
    out = tmp_path_factory.mktemp("embedded") / "q.yaml"
    res = invoke("fit", Q, "--save", out, "--embed", "--cache-dir", cache, "-f", "csv")
    assert res.exit_code == 0, res.output
    return out, cache
