"""One BLAS thread: every matrix here is tiny, and OpenBLAS threads that spin on a busy 2-core machine made fits
5-10x slower (measured: 0.06 s vs 0.4-0.7 s per fit under load; 21 s vs 1.3 s for a 5-draw evaluation)."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any


def pin_before_numpy() -> None:
    """Ask OpenBLAS for one thread through the environment: works only before numpy is first imported."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def one_thread() -> contextlib.AbstractContextManager[Any]:
    """Limit BLAS to one thread for the duration (threadpoolctl; nothing changes without it).

    threadpoolctl limits the libraries loaded when it is entered: before numpy's import there are none, and the CLI
    enters this first, so it then skips threadpoolctl's import (~3 ms before the readers fork), which would change
    nothing; numpy imported afterwards reads OPENBLAS_NUM_THREADS (`pin_before_numpy`)."""
    if "numpy" not in sys.modules:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[Any] = threadpool_limits(limits=1, user_api="blas")
    return limits
