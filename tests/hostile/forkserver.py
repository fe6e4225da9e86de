"""A fork server for the hostile suite's plain CLI runs: one process per pytest worker imports the package (and the
scipy every fit needs) once, then forks a child per run. Each child is a real process of its own -- its own pid,
standard streams, working directory, memory cap and exit status -- that runs `python -m betaconform_cli ARGS` as a
fresh one would, minus the ~0.2-0.4 s of imports every fresh process pays (docs/TESTING.md). conftest.run_cli uses
it only for runs in the default environment, without input on stdin and without other Popen options; everything
about start-up, the environment, terminals, encodings and signals keeps a fresh interpreter.
BETACONFORM_FORKSERVER=0 turns it off.

The protocol, over a SOCK_SEQPACKET pair: the test sends {"args": [...], "cwd": ...} with the child's stdout and
stderr file descriptors; the server answers {"pid": N} once forked and {"status": S} once the child has ended.
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


def serve(fd: int, cap: int, main_path: str) -> None:
    import betaconform_cli.cli  # noqa: F401 - the imports every run pays, paid once
    import betaconform_cli.fit  # noqa: F401

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
        _, status = os.waitpid(pid, 0)
        sock.send(json.dumps({"status": status}).encode())


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
