"""A pytest plugin that records each test's CPU time (its own process's plus the child processes it waited for),
so that test costs can be compared on a machine shared with other work, where wall times are inflated and vary
(docs/TESTING.md). Off unless asked for:

    BETACONFORM_CPU_LOG=/tmp/cpu.tsv python -m pytest -p tests.cpu_times -n 2 ...

Each process (xdist worker) appends one line per test: worker, nodeid, CPU seconds (setup + call + teardown),
wall seconds, and the wall-clock time the test ended; `python -m tests.cpu_times /tmp/cpu.tsv` sums them per file
and per worker (the slowest worker is the suite's critical path)."""

from __future__ import annotations

import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from typing import Any

import pytest


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    hostile = sys.modules.get("tests.hostile.conftest")  # the fork server's children, reaped by the server
    forked = hostile._FORK_SERVER.child_cpu if hostile is not None else 0.0
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + forked


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Generator[None, None, None]:
    log = os.environ.get("BETACONFORM_CPU_LOG")
    cpu, wall = _cpu(), time.monotonic()
    yield
    if log:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{worker}\t{item.nodeid}\t{_cpu() - cpu:.3f}\t{time.monotonic() - wall:.3f}\t{time.time():.3f}\n")


def summary(path: str, top: int = 25) -> str:
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])  # type: ignore[arg-type, return-value]
    workers: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, float("inf"), 0.0])
    tests = []
    for line in open(path, encoding="utf-8"):
        worker, nodeid, cpu, wall, end = line.rstrip("\n").split("\t")
        f = files[nodeid.split("::")[0]]
        f[0] += float(cpu)
        f[1] += float(wall)
        f[2] += 1
        w = workers[worker]
        w[0] += float(cpu)
        w[1] += float(wall)
        w[2] = min(w[2], float(end) - float(wall))
        w[3] = max(w[3], float(end))
        tests.append((float(cpu), float(wall), nodeid))
    out = [f"total CPU {sum(f[0] for f in files.values()):.1f} s over {sum(int(f[2]) for f in files.values())} tests"]
    out.append("worker: CPU s, wall s in tests, first start to last end")
    out += [f"  {k}: {w[0]:.1f}  {w[1]:.1f}  {w[3] - w[2]:.1f}" for k, w in sorted(workers.items())]
    out.append("files by CPU (CPU s, wall s, tests):")
    out += [f"  {f[0]:7.1f} {f[1]:7.1f} {int(f[2]):4d}  {k}" for k, f in sorted(files.items(), key=lambda x: -x[1][0])[:top]]
    out.append("tests by CPU (CPU s, wall s):")
    out += [f"  {c:7.2f} {w:7.2f}  {n}" for c, w, n in sorted(tests, reverse=True)[:top]]
    return "\n".join(out)


if __name__ == "__main__":
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25))
