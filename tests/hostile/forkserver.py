"""A fork server for the hostile suite's plain CLI runs: one process per pytest worker imports the package (and the
scipy every fit needs) once, then forks a child per run. Each child is a real process of its own -- its own pid,
standard streams, working directory, memory cap and exit status -- that runs `python -m betaconform_cli ARGS` as a
fresh one would, minus the ~0.2-0.4 s of imports every fresh process pays (docs/TESTING.md). conftest.run_cli uses
it only for runs in the default environment, without input on stdin and without other Popen options; everything
about start-up, the environment, terminals, encodings and signals keeps a fresh interpreter.
BETACONFORM_FORKSERVER=0 turns it off.

The protocol, over a SOCK_SEQPACKET pair: the test sends {"args": [...], "cwd": ...} with the child's stdout and
stderr file descriptors; the server answers {"pid": N} once forked and {"status": S, "cpu": seconds} once the child has ended (its CPU time,
which tests/cpu_times.py adds to the test's: the server is not a child the worker waits for until the end).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys


def _child(request: dict, fds: list[int], sock: socket.socket, cap: int, main_path: str) -> None:
    try:
        sock.close()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        for fd in (null, *fds):
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])  # the run's environment (the server restarts where imports would differ)
        if request.get("cwd"):
            os.chdir(request["cwd"])
        sys.path[0] = os.getcwd()  # as `python -m` puts the working directory first
        sys.argv = [main_path, *request["args"]]
        from betaconform_cli.cli import main

        main()  # ends the process itself (cli._exit_now)
        os._exit(0)
    except BaseException:  # noqa: BLE001 - as an uncaught exception ends a fresh interpreter
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


# Imported once by the server besides the package's own modules: what a command imports when it runs (scipy.stats
# alone is ~0.5 s of CPU per `judges` or `score` run). Never matplotlib (it reads XDG_CACHE_HOME and MPLCONFIGDIR
# when imported, and each test has its own cache) nor the embedding model's torch: children import those themselves.
PRELOAD = ("scipy.stats", "scipy.optimize", "scipy.special", "duckdb", "pydantic", "yaml", "orjson", "csv", "zipfile",
           "hashlib", "secrets", "importlib.metadata", "email.message", "numpy.random", "numpy.ma",
           "inspect_ai.log")  # ~1 s per run that reads an Inspect log (an extra: skipped where not installed)
LEFT_TO_THE_CHILD = ("betaconform_cli.__main__",)  # importing it runs the CLI


def preload() -> None:
    """The package's every module and PRELOAD, as a run would import them, so that each child pays only its own work
    (their import-time code reads no environment variable that changes between runs; what could, is checked below)."""
    import importlib
    import pkgutil

    import betaconform_cli
    import betaconform_cli.cli  # noqa: F401 - the imports every run pays, paid once

    for info in pkgutil.walk_packages(betaconform_cli.__path__, "betaconform_cli."):
        if info.name not in LEFT_TO_THE_CHILD:
            try:
                importlib.import_module(info.name)
            except ImportError:  # a module of an extra this environment lacks (the light install)
                pass
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # likewise: its runs import (and fail) as a fresh process would
            pass
    import tempfile

    # a run's TMPDIR and cache folder are read when it runs: nothing imported here may have fixed them already
    fixed = [m for m in ("matplotlib", "torch") if m in sys.modules] + (["tempfile.tempdir"] if tempfile.tempdir else [])
    if fixed:
        raise SystemExit(f"forkserver: the preload fixed what each run must read itself: {fixed}")


def serve(fd: int, cap: int, main_path: str) -> None:
    preload()
    sock = socket.socket(fileno=fd)
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 2)
        except OSError:
            return
        if not msg:
            return
        request = json.loads(msg)
        pid = os.fork()
        if pid == 0:
            _child(request, fds, sock, cap, main_path)
        for f in fds:
            os.close(f)
        sock.send(json.dumps({"pid": pid}).encode())
        _, status, usage = os.wait4(pid, 0)
        sock.send(json.dumps({"status": status, "cpu": usage.ru_utime + usage.ru_stime}).encode())


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
