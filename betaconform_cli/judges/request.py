"""What `judges` is asked, the data aside (analysis.analyse_judges' options; every.py reads them too)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..parameters import CONFIDENCE_LEVEL
from .results import JudgesSettings


@dataclass(frozen=True)
class JudgesRequest:
    """What `analyse_judges` is asked (the data aside): sizes, level, a named ensemble, costs, the whole set's size,
    whether to use the unlabeled items' verdicts, and the method's settings.

    population: the number of items of the whole set the labeled items come from (labeled included); when given,
    estimates are for that set's error (its labeled part is known exactly), otherwise for new items. With unlabeled
    items in use, the whole set is the items read. costs with max_error: the cheapest ensemble (any size) whose
    interval's upper end is at most max_error; max_error alone: every judge costs 1 (the smallest such ensemble).
    """

    ks: Sequence[int] | None = None
    confidence_level: float = CONFIDENCE_LEVEL
    ensemble: Sequence[str] | None = None
    costs: Mapping[str, float] | None = None
    max_error: float | None = None
    population: int | None = None
    use_unlabeled: bool = True
    settings: JudgesSettings = JudgesSettings()
