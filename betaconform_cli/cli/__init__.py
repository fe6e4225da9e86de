"""The typer app: a module per command (fit, report, sample, transfer, evaluate, judges, score, drift, doctor), each parse ->
one call into betaconform_cli.api -> emit. The only package that imports typer and rich.

Every error a user can cause is one line on stderr and exit code 2: the core's BetaConformError (a parameter
named by its option flag here), click's usage errors, and a fault of the environment (errors.fault_text: a file
that cannot be read or written, a full disk, a truncated stream) that no reader or writer turned into an error
naming its file. Ctrl-C -- a signal, never an EOFError -- prints "interrupted" and exits 130.
"""

from __future__ import annotations

import os
import signal
import threading


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C while the modules below load (~0.5 s): no half-imported traceback, just the message and 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)


_MAIN_THREAD = threading.current_thread() is threading.main_thread()
_SIGINT_BEFORE = signal.getsignal(signal.SIGINT) if _MAIN_THREAD else None
if _MAIN_THREAD and _SIGINT_BEFORE is signal.default_int_handler:  # not when a caller (a test runner) set its own
    signal.signal(signal.SIGINT, _interrupted_while_starting)

from ..blas import pin_before_numpy  # noqa: E402

pin_before_numpy()

import sys  # noqa: E402
from typing import Any  # noqa: E402

from . import doctor, drift, evaluate, fit, judges, plan, report, sample, score, transfer  # noqa: E402,F401  (each registers its command)
from .root import app  # noqa: E402
from .streams import say  # noqa: E402

if _MAIN_THREAD and signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on Ctrl-C is KeyboardInterrupt (see _Group)


def main() -> None:
    """Console-script entry point: BLAS pinned to one thread, and a quick exit (see _exit_now)."""
    from ..blas import one_thread

    _open_standard_streams()
    code: Any = 0
    try:
        with one_thread():
            try:
                app(prog_name="betaconform")
            except SystemExit as exc:
                code = exc.code
    except KeyboardInterrupt:  # a second Ctrl-C while the first one's cleanup ran, or one outside a command
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        say("interrupted")
        code = 130
    _exit_now(code)


def _open_standard_streams() -> None:
    """A closed stdin, stdout or stderr (`>&-`) becomes /dev/null: Python leaves sys.stdout None, and a file opened
    later would otherwise take descriptor 1 and receive what is printed."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDONLY if mode == "r" else os.O_WRONLY)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
            setattr(sys, name, open(fd, mode, closefd=False))


def _exit_now(code: Any) -> None:
    """Flush and leave without the interpreter's tear-down of numpy/scipy/typer modules, which took ~0.15 s of a
    0.8 s run (benchmarks/speed.py). Every file this tool writes is already closed (atomic writes), so nothing is
    lost; only the console-script path does this, not the app."""
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if not isinstance(code, int) and code is not None:
        sys.stderr.write(f"{code}\n")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # a closed pipe: the reader has gone, as with `| head`
            pass
        except (OSError, ValueError) as exc:  # output that was never written is not success (`> /dev/full`)
            if stream is sys.stdout and isinstance(exc, OSError):
                from .streams import discard

                discard(sys.stdout)
                say(f"error: <stdout>: cannot write: {exc.strerror or exc}")
                status = 2
    os._exit(status)
