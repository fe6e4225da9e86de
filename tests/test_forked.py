"""inputs/forked.py: the reader's forked workers (results in order, a worker's error raised, a killed worker)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from betaconform_cli.errors import InputError
from betaconform_cli.inputs.forked import Forked

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the reader forks only on Linux")


def _square(job: int) -> int:
    if job == 3:
        raise InputError("f.jsonl", "bad", 7, "judgments")
    if job == 4:
        os.kill(os.getpid(), signal.SIGKILL)
    return job * job + os.getpid() * 0


def _fail_even(job: int) -> int:
    if job % 2 == 0:
        raise ValueError(f"job {job}")
    return job


def _nothing() -> None:
    pass


def test_results_in_order_from_other_processes() -> None:
    got = Forked(lambda job: (job, os.getpid()), [5, 1, 2], _nothing).get()
    assert [j for j, _ in got] == [5, 1, 2]
    assert os.getpid() not in {pid for _, pid in got} and len({pid for _, pid in got}) == 3


def test_worker_error_raised_first_in_job_order() -> None:
    with pytest.raises(ValueError, match="job 2"):
        Forked(_fail_even, [1, 2, 3, 4], _nothing).get()
    # an exception that does not unpickle (InputError's arguments) comes back as an OSError with its message
    with pytest.raises(OSError, match="f.jsonl:7: field 'judgments': bad"):
        Forked(_square, [1, 3, 2], _nothing).get()


def test_killed_worker_is_an_oserror_and_terminate_reaps() -> None:
    with pytest.raises(OSError, match="ended early"):
        Forked(_square, [4], _nothing).get()
    pending = Forked(lambda job: signal.pause(), [0, 1], _nothing)
    pids = [pid for pid, _ in pending._children]
    pending.terminate()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
