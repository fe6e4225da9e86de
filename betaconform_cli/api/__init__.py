"""One function per command: read the inputs, compute, and return a result that offers its views (report/).

The CLI parses options into the arguments below, calls one of these, and emits what it returns; a script can
call them directly. Warnings and skipped lines become the result's `notes`; nothing here prints.

Each command has its module (`_fit`: fit and report, `_sample`, `_transfer`, `_evaluate`, `_judges`: doctor and
judges, `_score`, `_drift`, `_plan`); the public names are this package's.
"""

from ._common import Progress, SaveTo, skip_note
from ._drift import drift
from ._evaluate import evaluate
from ._fit import fit, report
from ._judges import doctor, judges
from ._plan import plan
from ._sample import sample, sample_live, sample_replay
from ._score import score, votes_clusters
from ._transfer import transfer, transfer_settings

__all__ = ["Progress", "SaveTo", "doctor", "drift", "evaluate", "fit", "judges", "plan", "report", "sample", "sample_live", "sample_replay",
           "score", "skip_note", "transfer", "transfer_settings", "votes_clusters"]
