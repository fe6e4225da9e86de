"""`judges` on every item read: the unlabeled items' verdicts in per-judge accuracy, shared mistakes and the
ensembles' errors (the model: judges/unlabeled.py; measurements: docs/JUDGES.md, "Unlabeled items" and "Issue 26:
LOCO").

When the dataset has unlabeled items and they are asked for, the target is the error on the items read (labeled
and unlabeled; a finite population): the labeled items' part is exact, the unlabeled items' the mean of two
estimates, the Dawid-Skene posterior expectation (unlabeled.py) and the vote split calibrated by the labels and
shrunk across the candidates of the size (splits.py). Each size's ensemble is chosen by the Dawid-Skene all-items
estimate where the labels say the judges behave like independent witnesses (the model's tau, the power on its
likelihood the labels support, is at least PICK_TEMPER: different models or people), and by the labels-only rule
otherwise (analysis.py: the labels' own error blended with the ranking model, told the set's size; one model under
several prompts, whose errors are nearly shared, gives tau ~ 0.2, and there the all-items estimate picked worse than
the labels). Either way the error and interval reported are the combined all-items ones, not the labels' own error
of the pick (which the pick makes optimistic). Where the labels do not vouch for the verdicts (the guard), the
per-judge figures and the pick stay the labels-only ones, and the ensembles' errors are still the all-items
estimates (issue 26: measured leave-one-collection-out, closer to the truth than the labels-only estimate in every
collection at coverage 0.93 or more; benchmarks/judges_loco.py). Measured: benchmarks/judges.py --unlabeled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from ..errors import P0, ParameterError
from .descriptive import pair_table
from .results import JudgesUnlabeled, PairRow
from .splits import combined_estimates, split_estimates
from .unlabeled import (
    ClassModel,
    Verdicts,
    fit_classes,
    from_votes,
    guard,
    judge_accuracy,
    pair_errors,
    subset_estimates,
)

if TYPE_CHECKING:
    from ..inputs.dataset import Votes
    from .request import JudgesRequest
    from .search import Search, _Target

METHOD_EVERY = "every_item"
METHOD_LABELS = "labels_only"
PICK_TEMPER = 0.5  # tau at or above which the all-items estimate chooses (benchmarks/judges.py --unlabeled)


@dataclass(frozen=True)
class Every:
    """The unlabeled items of a dataset and what `judges` does with them (used or not, and why)."""

    labeled_items: int
    unlabeled_items: int
    used: bool
    reason: str
    population: int | None  # the set whose error is the target (labeled + unlabeled), None: as requested
    verdicts: Verdicts | None = field(default=None, repr=False)
    model: ClassModel | None = field(default=None, repr=False)

    @property
    def reports(self) -> bool:
        """The ensembles' errors are estimated on every item read (the model was fitted: guard passed or not)."""
        return self.verdicts is not None and self.model is not None

    def _fitted(self) -> tuple[Verdicts, ClassModel]:
        assert self.verdicts is not None and self.model is not None, "the unlabeled items are not in use"
        return self.verdicts, self.model

    def accuracy(self) -> tuple[np.ndarray, np.ndarray]:
        """(accuracy, items) of each judge on every item it judged."""
        return judge_accuracy(*self._fitted())

    def pairs(self, names: Sequence[str], correct: np.ndarray) -> tuple[PairRow, ...]:
        """Both wrong and what independence predicts on every item both judged; the p-value stays the labels'
        Fisher test (expected counts on unlabeled items are not counts)."""
        both, a_wrong, items = pair_errors(*self._fitted())
        rows = []
        for p in pair_table(correct, names):
            a, b = names.index(p.a), names.index(p.b)
            n = float(items[a, b])
            if n == 0:
                rows.append(PairRow(p.a, p.b, 0, None, None, None))
                continue
            rows.append(PairRow(p.a, p.b, int(n), float(both[a, b] / n), float(a_wrong[a, b] * a_wrong[b, a] / (n * n)), p.p_value))
        return tuple(rows)

    def target(self, members: np.ndarray, confidence_level: float, score: np.ndarray) -> _Target:
        """The all-items estimate and interval of each subset members[n, k] (all the candidates of one size, or
        one named ensemble): the mean of the Dawid-Skene and the vote-split estimates (splits.py); `score` (the
        choice) kept."""
        return self._targets(members, confidence_level, score)[0]

    def _targets(self, members: np.ndarray, confidence_level: float, score: np.ndarray) -> tuple[_Target, np.ndarray]:
        """(the reported target, the Dawid-Skene estimate alone: what chooses where `picks_by_estimate`; choosing by
        the combined estimate instead was measured as an alternative, benchmarks/judges.py --unlabeled)."""
        from .search import _Target

        ds = subset_estimates(*self._fitted(), members, confidence_level)
        est = combined_estimates(ds, split_estimates(*self._fitted(), members, confidence_level))
        return _Target(est.estimate, est.low, est.high, score, est.floor, est.ceiling), ds.estimate

    @property
    def picks_by_estimate(self) -> bool:
        """Choose by the all-items estimate (the judges look like independent witnesses: the labels' tau is at
        least PICK_TEMPER), else by the labels-only rule."""
        return self.used and self.model is not None and self.model.temper >= PICK_TEMPER

    def search(self, search: Search, confidence_level: float) -> Search:
        """The same candidates, every target estimated on every item; the choice (`score`) the Dawid-Skene
        all-items estimate where `picks_by_estimate`, else the labels-only rule's."""
        from .search import Search

        targets = {}
        for k, t in search.tables.items():
            tg, ds = self._targets(t.members, confidence_level, search.targets[k].score)
            targets[k] = replace(tg, score=ds) if self.picks_by_estimate else tg
        return Search(search.tables, targets, search.exact)

    def choice(self) -> str:
        """Which rule picked each size's ensemble, and why (a line for the JSON and the table)."""
        if self.picks_by_estimate and self.model is not None:
            return (f"the all-items estimate (the judges look like independent witnesses: tau {self.model.temper:.2f} "
                    f">= {PICK_TEMPER:g})")
        if self.used and self.model is not None:
            return (f"the labels-only rule (the labels' own error blended with the ranking model; the judges err "
                    f"together: tau {self.model.temper:.2f} < {PICK_TEMPER:g})")
        return "the labels-only rule (the labels' own error blended with the ranking model)"

    def report(self) -> str:
        """How the ensembles' errors were estimated (a line for the JSON and the table)."""
        if self.reports:
            return ("the all-items estimate (labeled items exact; unlabeled ones: the mean of the Dawid-Skene posterior "
                    "and the vote splits calibrated on every candidate's labels), not the pick's own labeled error, "
                    "which the pick makes optimistic")
        return ("the latent-class posterior of the labels (not the score that picked, which the pick makes "
                "optimistic)")

    def record(self) -> JudgesUnlabeled:
        """The "unlabeled" record of the result and of its JSON document (results.JudgesUnlabeled)."""
        return JudgesUnlabeled(
            method=METHOD_EVERY if self.used else METHOD_LABELS,  # type: ignore[arg-type]
            used=self.used,
            reason=self.reason,
            labeled_items=self.labeled_items,
            unlabeled_items=self.unlabeled_items,
            model=None if self.model is None else self.model.to_dict(),
            choice=self.choice(),
            report_method=METHOD_EVERY if self.reports else METHOD_LABELS,  # type: ignore[arg-type]
            report=self.report(),
        )


def every_item(names: Sequence[str], votes: Votes | None, n_labeled: int, req: JudgesRequest) -> Every | None:
    """None without unlabeled items; else whether and how they are used (`req.use_unlabeled`, the guard)."""
    if votes is None or votes.unlabeled_items == 0:
        return None
    n_unl = votes.unlabeled_items
    if not req.use_unlabeled:
        return Every(n_labeled, n_unl, False, "labels only: the unlabeled items were not asked for (--no-unlabeled)", None)
    missing = [n for n in names if n not in votes.judges]
    if missing:
        return Every(n_labeled, n_unl, False, f"labels only: judge {missing[0]!r} has no verdicts among the items read", None)
    whole = n_labeled + n_unl
    if req.population is not None and req.population != whole:
        raise ParameterError("population", f"{P0} is {req.population}, but the items read are the whole set with "
                                           f"unlabeled items: {n_labeled} labeled + {n_unl} unlabeled = {whole} "
                                           "(leave it out, or pass --no-unlabeled)")
    v = from_votes(votes, names)
    if v.labeled_items != n_labeled:  # a reader's labeled items and its verdict patterns must agree
        return Every(n_labeled, n_unl, False, f"labels only: {v.labeled_items} labeled items among the verdicts, "
                                              f"{n_labeled} in the labels", whole)
    model = fit_classes(v)
    used, reason = guard(model, v)
    if not used and (v.labeled_items == 0 or v.unlabeled_items == 0):  # nothing to estimate or to calibrate on
        return Every(n_labeled, n_unl, False, reason, whole)
    if not used:  # the per-judge figures and the pick from the labels; the ensembles' errors still on every item
        reason += "; the ensembles' errors still estimated on every item read (the vote splits calibrated by the labels)"
    return Every(n_labeled, n_unl, used, reason, whole, v, model)
