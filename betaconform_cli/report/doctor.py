"""`doctor` results: how each input was read -- its format, the role each column or field played, its items,
its judges and how many verdicts each gave, what was skipped and why -- before anything is fitted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..inputs import Dataset
from . import Verdictless
from .fit import SCHEMA
from .render import to_csv, to_json
from .views import BLANK, Block, Lines, TableView

CSV_COLUMNS = ("dataset", "items", "unlabeled_items", "format", "kind", "judge", "other", "agreement", "count")  # inputs/paths.py knows it
TOP_PAIRS = 5  # judge pairs shown in the table (JSON and CSV hold every pair)


def doctor_document(ds: Dataset) -> dict[str, Any]:
    """`items` is the labeled count (as in fit); `unlabeled_items` the items with verdicts and no gold; inputs that
    carry verdicts (not only correctness) add the vote splits and the judges' pairwise agreement over all items."""
    from ..inputs.patterns import agreement, vote_splits

    reading = ds.reading.to_dict() if ds.reading is not None else {}
    doc = {"schema": SCHEMA, "command": "doctor", "tool_version": __version__, "dataset": ds.name, "source": ds.source,
           "items": ds.n_items, "unlabeled_items": ds.unlabeled_items, "most_judges": ds.table.max_judges,
           "histogram": ds.table.histogram_by_judges(), **reading}
    if ds.votes is not None:
        doc["classes"] = list(ds.votes.classes)
        doc["vote_splits"] = [{"judges": k, "split": s, "items": n} for k, s, n in vote_splits(ds.votes)]
        doc["agreement"] = [{"judges": [a, b], "agreement": round(x, 4), "items": n} for a, b, x, n in agreement(ds.votes)]
    return doc


@dataclass(frozen=True)
class DoctorReport(Verdictless):
    """One document per dataset read."""

    documents: tuple[dict[str, Any], ...]
    left_out: tuple[str, ...] = ()  # files of the arguments not read (this tool's own outputs)

    @property
    def notes(self) -> tuple[str, ...]:
        return self.left_out

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = []
        for d in self.documents:
            unit = "row" if "table" in str(d.get("format")) else "line"
            items = f"{d['items']} items" if not d.get("unlabeled_items") else \
                f"{d['items']} labeled + {d['unlabeled_items']} unlabeled items"
            head = f"{d['dataset']} ({d['source']}): {d.get('format', '?')}, {items}, up to {d['most_judges']} judges"
            out += [Lines((head,), heading=markdown)]
            roles = d.get("roles") or {}
            if roles:
                out.append(TableView("roles", ("role", "column or field"), tuple((r, str(c)) for r, c in roles.items()), align="ll"))
            if d.get("judges"):
                out.append(TableView("judges", ("judge", "verdicts"), tuple((j["name"], str(j["verdicts"])) for j in d["judges"])))
            if d.get("vote_splits"):
                out.append(TableView("vote splits", ("judges", "split", "items"),
                                     tuple((str(v["judges"]), v["split"], str(v["items"])) for v in d["vote_splits"]),
                                     caption="every item, labeled or not: judges per class, largest first", align="lrr"))
            if d.get("agreement"):
                top = d["agreement"][:TOP_PAIRS]
                out.append(TableView("judges who agree most", ("judges", "agreement", "items"),
                                     tuple((" & ".join(a["judges"]), f"{100 * a['agreement']:.1f}%", str(a["items"])) for a in top),
                                     caption=f"top {len(top)} of {len(d['agreement'])} pairs: same class on the items both judged",
                                     align="lrr"))
            skipped = d.get("skipped") or []
            lines = [f"skipped {s['count']}: {s['reason']}" + (f" (first at {unit} {s['first']})" if s.get("first") else "")
                     for s in skipped] or ["nothing skipped"]
            out += [Lines(tuple(lines + [f"note: {n}" for n in d.get("notes") or []])), BLANK]
        return out

    def json(self) -> str:
        return to_json(self.documents)

    def csv(self) -> str:
        """One row per judge (kind "judge"), per vote split ("split": judges, split) and per judge pair ("agreement":
        judge and other judge, the share agreeing); `count` is the judge's verdicts, the split's items or the items
        both judged. `items` is the labeled count, `unlabeled_items` the unlabeled."""
        rows: list[list[Any]] = []
        for d in self.documents:
            base = [d["dataset"], d["items"], d.get("unlabeled_items", 0), d.get("format")]
            rows += [[*base, "judge", j["name"], "", "", j["verdicts"]] for j in d.get("judges") or []]
            rows += [[*base, "split", v["judges"], v["split"], "", v["items"]] for v in d.get("vote_splits") or []]
            rows += [[*base, "agreement", a["judges"][0], a["judges"][1], a["agreement"], a["items"]] for a in d.get("agreement") or []]
        return to_csv(CSV_COLUMNS, rows)

