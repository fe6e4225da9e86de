"""`doctor`'s document (schema betaconform/1): how one input was read, as a typed structure that the core builds
and the report formats; its JSON schema is published in docs/schema/doctor.json (`make schema`).

A key that a document may lack (the reading of an input read without one; the vote splits and judges' agreement
of an input without verdicts) is UNSET, so that the JSON has exactly the keys, in the order, it always had."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType
from msgspec.structs import replace

from .document_types import Count, Fraction, Judges
from .inputs import Dataset
from .version import __version__


class JudgeVerdicts(Struct, kw_only=True, frozen=True):
    """A judge's verdicts on labeled items (`verdicts`) and, for inputs with unlabeled items, on those."""

    name: str
    verdicts: Count
    unlabeled: Count | UnsetType = UNSET


class Skipped(Struct, kw_only=True, frozen=True):
    """Lines or rows skipped for one reason: how many, and the first (None: not known)."""

    reason: str
    count: Count
    first: Count | None


class VoteSplit(Struct, kw_only=True, frozen=True):
    """Items on which `judges` judges gave a verdict split as `split` (judges per class, largest first: "6-1")."""

    judges: Count
    split: str
    items: Count


class Agreement(Struct, kw_only=True, frozen=True):
    """Two judges' share of the items both judged on which they gave the same class."""

    judges: Annotated[list[str], Meta(min_length=2, max_length=2)]
    agreement: Fraction
    items: Count


class DoctorDocument(Struct, kw_only=True, frozen=True):
    """One input as read: `items` the labeled count, `unlabeled_items` the items with verdicts and no gold,
    `clusters` the labeled items' clusters where they are not independent (an inspect-ai log's epochs)."""

    schema: Literal["betaconform/1"]
    command: Literal["doctor"]
    tool_version: str
    dataset: str
    source: str
    items: Count
    unlabeled_items: Count
    most_judges: Count
    histogram: dict[Judges, list[Count]]
    format: str | UnsetType = UNSET
    roles: dict[str, str] | UnsetType = UNSET
    judges: list[JudgeVerdicts] | UnsetType = UNSET
    skipped: list[Skipped] | UnsetType = UNSET
    notes: list[str] | UnsetType = UNSET
    classes: list[str] | UnsetType = UNSET
    vote_splits: list[VoteSplit] | UnsetType = UNSET
    agreement: list[Agreement] | UnsetType = UNSET
    clusters: Count | UnsetType = UNSET  # the labeled items' clusters, when they are not independent (epochs)
    vocabularies: Vocabularies | UnsetType = UNSET
    problems: list[str] | UnsetType = UNSET
    no_verdict_items: Count | UnsetType = UNSET  # items no judge gave a verdict on (Votes.no_verdict), when any
    no_verdict_labeled: Count | UnsetType = UNSET


class Vocabularies(Struct, kw_only=True, frozen=True):
    """The classes the gold uses against those the verdicts use (on labeled items, on unlabeled ones)."""

    gold: list[str]
    verdicts: list[str]
    unlabeled_verdicts: list[str]


def doctor_document(ds: Dataset) -> DoctorDocument:
    """How `ds` was read; inputs that carry verdicts (not only correctness) add the vote splits and the judges'
    pairwise agreement over all items, each judge's verdicts on unlabeled items, the gold's classes against the
    verdicts', and `problems`: what every other command refuses the input for (inputs/checks.py)."""
    from .inputs.checks import labels_problem, vocabulary_problem
    from .inputs.patterns import agreement, vocabularies, vote_splits

    doc = DoctorDocument(
        schema="betaconform/1", command="doctor", tool_version=__version__, dataset=ds.name, source=ds.source, items=ds.n_items,
        unlabeled_items=ds.unlabeled_items, most_judges=ds.table.max_judges, histogram=ds.table.histogram_by_judges(),
    )
    r, v = ds.reading, ds.votes
    if ds.clusters is not None:
        doc = replace(doc, clusters=ds.clusters.clusters)
    if r is not None:
        doc = replace(doc, format=r.source_format, roles=dict(r.roles),
                      judges=[JudgeVerdicts(name=n, verdicts=c) for n, c in r.judge_counts],
                      skipped=[Skipped(reason=s.reason, count=s.count, first=s.first or None) for s in r.skips],
                      notes=list(r.notes))
    if v is not None:
        gold, labeled, unlabeled = vocabularies(v)
        most = int((v.patterns >= 0).sum(axis=1).max(initial=0))  # unlabeled items' judges too (a pool)
        doc = replace(doc, most_judges=max(doc.most_judges, most), classes=list(v.classes),
                      vote_splits=[VoteSplit(judges=k, split=s, items=n) for k, s, n in vote_splits(v)],
                      agreement=[Agreement(judges=[a, b], agreement=round(x, 4), items=n) for a, b, x, n in agreement(v)],
                      judges=_judges(ds, doc), vocabularies=Vocabularies(gold=list(gold), verdicts=list(labeled),
                                                                         unlabeled_verdicts=list(unlabeled)))
    if v is not None and v.no_verdict_items:
        labeled_nv = sum(n for g, n in v.no_verdict if g >= 0)
        doc = replace(doc, no_verdict_items=v.no_verdict_items, no_verdict_labeled=labeled_nv,
                      notes=[*(doc.notes or []), f"{v.no_verdict_items} items had no verdict ({labeled_nv} of them labeled): "
                             "score counts them in the population whose pass rate it estimates (their own labels, else "
                             "predicted from the labels); fit, judges and sample cannot use an item without a verdict"])
    if labels_problem(ds) is not None:  # read here only because it has unlabeled items (checks.check_datasets)
        doc = replace(doc, notes=[*(doc.notes or []), f"no labeled items: {ds.unlabeled_items} unlabeled items, a pool "
                                  "(`sample --pool` reads it); fit, judges and score need gold labels"])
    problem = vocabulary_problem(ds)
    return doc if problem is None else replace(doc, problems=[problem])


def _judges(ds: Dataset, doc: DoctorDocument) -> list[JudgeVerdicts]:
    """Every judge of the votes (one seen only on unlabeled items too), with its verdicts on labeled items and on
    unlabeled ones; in the reading's order, then the others in the votes' order."""
    import numpy as np

    v = ds.votes
    assert v is not None
    given = v.patterns >= 0
    weight = v.counts.astype(np.int64)
    labeled = (weight * (v.gold >= 0)) @ given
    unlabeled = (weight * (v.gold < 0)) @ given
    at = {name: j for j, name in enumerate(v.judges)}
    read = {j.name: j.verdicts for j in doc.judges} if isinstance(doc.judges, list) else {}
    order = list(read) + [n for n in v.judges if n not in read]
    out = []
    for n in order:
        on_labeled = read[n] if n in read else int(labeled[at[n]]) if n in at else 0
        on_unlabeled = (int(unlabeled[at[n]]) if n in at else 0) if ds.unlabeled_items else UNSET
        out.append(JudgeVerdicts(name=n, verdicts=on_labeled, unlabeled=on_unlabeled))
    return out
