"""How to read judgment files: the format, the field and column names, scoring options, what to keep."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any

from ..errors import ParameterError
from ..formats import DUPLICATES, input_formats
from ..parameters import check_optional


class Keep(str, Enum):
    """What a reader keeps besides the (judges, correct) histogram, which it always builds.

    COUNTS streams (memory flat in the number of items); ITEMS keeps each item's id, text and counts (`sample`,
    `transfer`); JUDGMENTS also keeps each judge's mark on each item (`judges`).
    """

    COUNTS = "counts"
    ITEMS = "items"
    JUDGMENTS = "judgments"


def _names_given(group: Any) -> None:
    """A field or column name, when given, is not empty (the parameter named as the library spells it)."""
    for f in fields(group):
        v = getattr(group, f.name)
        if v is not None and not str(v).strip():
            raise ParameterError(f.name, "must not be empty")


@dataclass(frozen=True)
class RecordFields:
    """JSON records' fields: dotted paths into nested records ("vars.gold")."""

    judgments_field: str = "judgments"
    correct_field: str = "correct"
    judges_field: str = "judges"
    verdicts_field: str = "verdicts"
    label_field: str = "label"
    id_field: str = "id"
    text_field: str = "text"
    cluster_field: str | None = None  # score's --cluster-field: items that share it are correlated
    by: str | None = None  # --by: a record's field or a table's column (or length:FIELD[:N]) to slice by (inputs/slices.py)

    def __post_init__(self) -> None:
        _names_given(self)


@dataclass(frozen=True)
class TableColumns:
    """Table columns (None: guessed from common names); `judge_cols`: comma-separated names or globs of a wide
    table's judge columns."""

    item_col: str | None = None
    judge_col: str | None = None
    correct_col: str | None = None
    verdict_col: str | None = None
    gold_col: str | None = None
    text_col: str | None = None
    dataset_col: str | None = None
    judge_cols: str | None = None

    def __post_init__(self) -> None:
        _names_given(self)


@dataclass(frozen=True)
class Handling:
    """How a verdict is scored (`tolerance`: correct when |verdict - gold| <= T; `threshold`: a continuous score of
    at least T is a pass, below it a fail, in formats that read scores: Ragas) and what a bad line or a repeated
    item does (`skip_invalid`: skipped and counted; `duplicates`: an error, or keep the first or the last)."""

    tolerance: float | None = None
    skip_invalid: bool = False
    duplicates: str = "error"
    threshold: float | None = None

    def __post_init__(self) -> None:
        check_optional("tolerance", self.tolerance)  # NaN would score every verdict wrong
        check_optional("threshold", self.threshold)
        if self.duplicates not in DUPLICATES:
            raise ParameterError("duplicates", f"must be one of {', '.join(DUPLICATES)}; got {self.duplicates!r}")


GROUPS: dict[str, type[Any]] = {"record": RecordFields, "table": TableColumns, "handling": Handling}
GROUP_OF: dict[str, str] = {f.name: group for group, cls in GROUPS.items() for f in fields(cls)}  # flat keyword -> group


@dataclass(frozen=True, init=False)
class InputOptions:
    """Every option that decides how an input is read; one instance serves every reader.

    The format, a separate gold file (`labels`, joined by id: labels.py) and three groups: the JSON fields
    (`record`), the table columns (`table`) and the scoring and bad-line rules (`handling`). Besides the groups the
    constructor takes each group field by its own name, as before the groups (`InputOptions(label_field="vars.gold",
    tolerance=0.5)`): scripts written for the flat options still run.
    """

    source_format: str = "auto"
    record: RecordFields = RecordFields()
    table: TableColumns = TableColumns()
    handling: Handling = Handling()
    labels: str | None = None

    def __init__(self, source_format: str = "auto", record: RecordFields | None = None, table: TableColumns | None = None,
                 handling: Handling | None = None, labels: str | None = None, **flat: Any) -> None:
        unknown = sorted(set(flat) - set(GROUP_OF))
        if unknown:
            raise TypeError(f"InputOptions() got an unexpected keyword argument {unknown[0]!r}")
        if source_format not in input_formats():  # the formats' registry, read now: a format added since is one
            raise ParameterError("source_format", f"must be one of {', '.join(input_formats())}; got {source_format!r}")
        given: dict[str, Any] = {"handling": handling or Handling(), "record": record or RecordFields(), "table": table or TableColumns()}
        for group, value in given.items():  # checked as before the groups: the tolerance and duplicates, then names
            mine = {k: v for k, v in flat.items() if GROUP_OF[k] == group}
            object.__setattr__(self, group, replace(value, **mine) if mine else value)
        if labels is not None and not str(labels).strip():
            raise ParameterError("labels", "must not be empty")
        object.__setattr__(self, "source_format", source_format)
        object.__setattr__(self, "labels", labels)

    def to_dict(self) -> dict[str, Any]:
        """Every option by its flat name (the format, each group's fields, the gold file)."""
        out: dict[str, Any] = {"source_format": self.source_format}
        for group in GROUPS:
            value = getattr(self, group)
            out.update({f.name: getattr(value, f.name) for f in fields(value)})
        return {**out, "labels": self.labels}
