"""Forked workers for a read's byte ranges (inputs/jsonl.py): one `os.fork` per job and a pipe for its pickled result.

multiprocessing's Pool did this before; its import and start-up (three threads, queues, pipes) took ~20 ms of wall
time before the parent could begin its own share of the file (numpy loaded: `Pool(1)` 14-17 ms of CPU, 20-26 ms wall,
plus 5 ms to import multiprocessing; a fork and a pipe ~1-3 ms), all of it on the 1M-item fit's critical path
(docs/SPEED.md). Linux only, as before (the reader forks only there)."""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable, Sequence
from typing import Any


class Forked:
    """`fn(job)` for each job in its own forked process, started at once; `get()` collects the results in order."""

    def __init__(self, fn: Callable[[Any], Any], jobs: Sequence[Any], initializer: Callable[[], None]):
        self._children: list[tuple[int, int]] = []  # (pid, read end of its pipe), until collected or ended
        try:
            for job in jobs:
                read_end, write_end = os.pipe()
                pid = os.fork()
                if pid == 0:  # the worker: never returns
                    os.close(read_end)
                    _work(fn, job, initializer, write_end)
                os.close(write_end)
                self._children.append((pid, read_end))
        except BaseException:
            self.terminate()
            raise

    def get(self) -> list[Any]:
        """Each job's result in job order; a worker's exception is raised here (the first in job order), after every
        worker has ended. A worker that ended without a result (killed) is an OSError."""
        outcomes = []
        try:
            while self._children:
                pid, read_end = self._children[0]
                with os.fdopen(read_end, "rb") as fh:
                    self._children[0] = (pid, -1)
                    payload = fh.read()
                os.waitpid(pid, 0)
                self._children.pop(0)
                outcomes.append(pickle.loads(payload) if payload else (False, OSError("a reading worker ended early")))
        except BaseException:
            self.terminate()
            raise
        for ok, value in outcomes:
            if not ok:
                raise value
        return [value for _, value in outcomes]

    def terminate(self) -> None:
        """End the workers not collected yet (Ctrl-C, an error in this process's own share)."""
        while self._children:
            pid, read_end = self._children.pop()
            if read_end >= 0:
                os.close(read_end)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass

    def __del__(self) -> None:  # a read dropped before its result: no worker left blocked on its pipe
        self.terminate()


def _work(fn: Callable[[Any], Any], job: Any, initializer: Callable[[], None], write_end: int) -> None:
    """In the forked worker: run the job, send (True, result) or (False, exception) pickled, and leave at once
    (os._exit: no atexit handlers, no flush of buffers inherited from the parent)."""
    code = 1
    try:
        initializer()
        try:
            outcome = (True, fn(job))
        except BaseException as exc:  # noqa: BLE001 - every error goes to the parent, which raises it
            outcome = (False, exc)
        payload = pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
        if not outcome[0]:
            try:  # an exception whose class does not unpickle (InputError's arguments): its message as an OSError
                pickle.loads(payload)
            except Exception:  # noqa: BLE001
                payload = pickle.dumps((False, OSError(str(outcome[1]))), pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as fh:
            fh.write(payload)
        code = 0
    finally:
        os._exit(code)
