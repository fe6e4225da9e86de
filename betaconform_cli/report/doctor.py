"""`doctor` results: how each input was read -- its format, the role each column or field played, its items,
its judges and how many verdicts each gave, what was skipped and why -- before anything is fitted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from ..doctor import DoctorDocument
from ..formats import output_columns
from . import Verdictless
from .render import to_csv, to_json
from .views import BLANK, Block, Lines, TableView

CSV_COLUMNS = output_columns("doctor")  # registered in formats.py, so that a folder skips the report
TOP_PAIRS = 5  # judge pairs shown in the table (JSON and CSV hold every pair)
T = TypeVar("T")


@dataclass(frozen=True)
class DoctorReport(Verdictless):
    """One document per dataset read (doctor.doctor_document). An input that every other command refuses (its
    `problems`: gold and verdicts that share no class, no labeled item where labels are needed) is shown, and then
    said as an error with exit code 2, as the other commands say it."""

    documents: tuple[DoctorDocument, ...]
    left_out: tuple[str, ...] = ()  # files of the arguments not read (this tool's own outputs)

    @property
    def notes(self) -> tuple[str, ...]:
        return self.left_out

    @property
    def failures(self) -> tuple[str, ...]:
        return tuple(f"error: {d.source}: {p}" for d in self.documents for p in _refusals(d))

    @property
    def exit_code(self) -> int:
        return 2 if self.failures else 0

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = []
        for d in self.documents:
            out += _blocks(d, markdown)
        return out

    def json(self) -> str:
        return to_json([msgspec.to_builtins(d) for d in self.documents])

    def csv(self) -> str:
        """One row per judge (kind "judge"; "judge_unlabeled": its verdicts on unlabeled items), per vote split
        ("split": judges, split) and per judge pair ("agreement": judge and other judge, the share agreeing); `count`
        is the judge's verdicts, the split's items or the items both judged. `items` is the labeled count, `unlabeled_items` the unlabeled."""
        rows: list[list[Any]] = []
        for d in self.documents:
            base = [d.dataset, d.items, d.unlabeled_items, _given(d.format)]
            rows += [[*base, "judge", j.name, "", "", j.verdicts] for j in _given(d.judges) or []]
            rows += [[*base, "judge_unlabeled", j.name, "", "", j.unlabeled] for j in _given(d.judges) or []
                     if _given(j.unlabeled) is not None]
            rows += [[*base, "split", v.judges, v.split, "", v.items] for v in _given(d.vote_splits) or []]
            rows += [[*base, "agreement", a.judges[0], a.judges[1], a.agreement, a.items] for a in _given(d.agreement) or []]
        return to_csv(CSV_COLUMNS, rows)


def _refusals(d: DoctorDocument) -> list[str]:
    """The problems other commands refuse the input for (a file of unlabeled items only is a note: a pool)."""
    return list(_given(d.problems) or [])


def _given(value: T | msgspec.UnsetType) -> T | None:
    """A document's key, or None where the document lacks it."""
    return None if value is msgspec.UNSET else value


def _blocks(d: DoctorDocument, markdown: bool) -> list[Block]:
    unit = "row" if "table" in str(_given(d.format)) else "line"
    items = f"{d.items} items" if not d.unlabeled_items else f"{d.items} labeled + {d.unlabeled_items} unlabeled items"
    fmt = _given(d.format)
    clusters = _given(d.clusters)
    items += "" if clusters is None else f" in {clusters} clusters"
    head = f"{d.dataset} ({d.source}): {'?' if fmt is None else fmt}, {items}, up to {d.most_judges} judges"
    out: list[Block] = [Lines((head,), heading=markdown)]
    roles = _given(d.roles) or {}
    if roles:
        out.append(TableView("roles", ("role", "column or field"), tuple((r, str(c)) for r, c in roles.items()), align="ll"))
    judges = _given(d.judges)
    if judges and d.unlabeled_items:
        out.append(TableView("judges", ("judge", "verdicts (labeled)", "verdicts (unlabeled)"),
                             tuple((j.name, str(j.verdicts), str(_given(j.unlabeled) or 0)) for j in judges)))
    elif judges:
        out.append(TableView("judges", ("judge", "verdicts"), tuple((j.name, str(j.verdicts)) for j in judges)))
    vocab = _given(d.vocabularies)
    if vocab is not None:
        out.append(_vocabulary_view(vocab, bool(_refusals(d))))
    splits = _given(d.vote_splits)
    if splits:
        out.append(TableView("vote splits", ("judges", "split", "items"), tuple((str(v.judges), v.split, str(v.items)) for v in splits),
                             caption="every item, labeled or not: judges per class, largest first", align="lrr"))
    pairs = _given(d.agreement)
    if pairs:
        top = pairs[:TOP_PAIRS]
        out.append(TableView("judges who agree most", ("judges", "agreement", "items"),
                             tuple((" & ".join(a.judges), f"{100 * a.agreement:.1f}%", str(a.items)) for a in top),
                             caption=f"top {len(top)} of {len(pairs)} pairs: same class on the items both judged", align="lrr"))
    problems = [f"problem: {p}" for p in _given(d.problems) or []]
    lines = problems + [f"skipped {s.count}: {s.reason}" + (f" (first at {unit} {s.first})" if s.first else "")
             for s in _given(d.skipped) or []] or ["nothing skipped"]
    return [*out, Lines(tuple(lines + [f"note: {n}" for n in _given(d.notes) or []])), BLANK]



def _vocabulary_view(v: Any, refused: bool) -> TableView:
    """The gold's classes against the verdicts' (on labeled items; on unlabeled items when there are any)."""
    def listing(classes: list[str]) -> str:
        return ", ".join(classes[:12]) + (f", ... ({len(classes)})" if len(classes) > 12 else "") if classes else "—"

    rows = [("gold", listing(v.gold)), ("verdicts on labeled items", listing(v.verdicts))]
    if v.unlabeled_verdicts:
        rows.append(("verdicts on unlabeled items", listing(v.unlabeled_verdicts)))
    caption = ("PROBLEM: no verdict class is a gold class; every verdict would count as wrong" if refused else
               "a verdict agrees with the gold when it is of the gold's class" if v.gold else
               "no gold label: nothing to score the verdicts against")
    return TableView("classes: gold against verdicts", ("of", "classes"), tuple(rows), caption=caption, align="ll")
