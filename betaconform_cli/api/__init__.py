"""One function per command: read the inputs, compute, and return a result that offers its views (report/).

The CLI parses options into the arguments below, calls one of these, and emits what it returns; a script can
call them directly. Warnings and skipped lines become the result's `notes`; nothing here prints.

Each command has its module (`_fit`: fit and report, `_sample`, `_transfer`, `_evaluate`, `_judges`: doctor and
judges, `_score`, `_drift`, `_plan`); the public names are this package's. Each is imported when it is first used (PEP 562), so that
a command loads its own module only: `betaconform --help` and a parse error load none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._common import Progress, SaveTo, skip_note
    from ._drift import drift
    from ._evaluate import evaluate
    from ._fit import fit, report
    from ._judges import doctor, judges
    from ._plan import plan
    from ._sample import sample, sample_live, sample_replay
    from ._score import score, votes_clusters
    from ._transfer import transfer, transfer_settings

_HOME = {"Progress": "_common", "SaveTo": "_common", "skip_note": "_common", "drift": "_drift", "evaluate": "_evaluate", "fit": "_fit",
         "report": "_fit", "doctor": "_judges", "judges": "_judges", "plan": "_plan", "sample": "_sample", "sample_live": "_sample",
         "sample_replay": "_sample", "score": "_score", "votes_clusters": "_score", "transfer": "_transfer",
         "transfer_settings": "_transfer"}

__all__ = ["Progress", "SaveTo", "doctor", "drift", "evaluate", "fit", "judges", "plan", "report", "sample", "sample_live", "sample_replay",
           "score", "skip_note", "transfer", "transfer_settings", "votes_clusters"]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
