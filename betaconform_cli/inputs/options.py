"""How to read judgment files: the format, the field and column names, scoring options, what to keep."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from ..errors import ParameterError
from ..formats import DUPLICATES, input_formats


class Keep(str, Enum):
    """What a reader keeps besides the (judges, correct) histogram, which it always builds.

    COUNTS streams (memory flat in the number of items); ITEMS keeps each item's id, text and counts (`sample`,
    `transfer`); JUDGMENTS also keeps each judge's mark on each item (`judges`).
    """

    COUNTS = "counts"
    ITEMS = "items"
    JUDGMENTS = "judgments"


@dataclass(frozen=True)
class InputOptions:
    """Every option that decides how an input is read; one instance serves every reader.

    JSON fields (`*_field`) take dotted paths into nested records ("vars.gold"); table columns (`*_col`) name a
    column (None: guessed from common names). `judge_cols`: comma-separated names or globs of a wide table's
    judge columns.
    """

    source_format: str = "auto"
    judgments_field: str = "judgments"
    correct_field: str = "correct"
    judges_field: str = "judges"
    verdicts_field: str = "verdicts"
    label_field: str = "label"
    id_field: str = "id"
    text_field: str = "text"
    item_col: str | None = None
    judge_col: str | None = None
    correct_col: str | None = None
    verdict_col: str | None = None
    gold_col: str | None = None
    text_col: str | None = None
    dataset_col: str | None = None
    cluster_field: str | None = None
    judge_cols: str | None = None
    tolerance: float | None = None
    skip_invalid: bool = False
    duplicates: str = "error"
    labels: str | None = None  # a separate gold file joined by id (labels.py)

    def __post_init__(self) -> None:
        if self.source_format not in input_formats():  # the formats' registry, read now: a format added since is one
            raise ParameterError("source_format", f"must be one of {', '.join(input_formats())}; got {self.source_format!r}")
        if self.tolerance is not None and not 0 <= self.tolerance < math.inf:  # NaN would score every verdict wrong
            raise ParameterError("tolerance", f"must be a finite number >= 0; got {self.tolerance}")
        if self.duplicates not in DUPLICATES:
            raise ParameterError("duplicates", f"must be one of {', '.join(DUPLICATES)}; got {self.duplicates!r}")
        for f in fields(self):
            v = getattr(self, f.name)
            if (f.name.endswith(("_field", "_col", "_cols")) or f.name == "labels") and v is not None and not str(v).strip():
                raise ParameterError(f.name, "must not be empty")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
