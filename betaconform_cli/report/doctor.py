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


def doctor_document(ds: Dataset) -> dict[str, Any]:
    reading = ds.reading.to_dict() if ds.reading is not None else {}
    return {"schema": SCHEMA, "command": "doctor", "tool_version": __version__, "dataset": ds.name, "source": ds.source,
            "items": ds.n_items, "most_judges": ds.table.max_judges, "histogram": ds.table.histogram_by_judges(), **reading}


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
            head = f"{d['dataset']} ({d['source']}): {d.get('format', '?')}, {d['items']} items, up to {d['most_judges']} judges"
            out += [Lines((head,), heading=markdown)]
            roles = d.get("roles") or {}
            if roles:
                out.append(TableView("roles", ("role", "column or field"), tuple((r, str(c)) for r, c in roles.items()), align="ll"))
            if d.get("judges"):
                out.append(TableView("judges", ("judge", "verdicts"), tuple((j["name"], str(j["verdicts"])) for j in d["judges"])))
            skipped = d.get("skipped") or []
            lines = [f"skipped {s['count']}: {s['reason']}" + (f" (first at {unit} {s['first']})" if s.get("first") else "")
                     for s in skipped] or ["nothing skipped"]
            out += [Lines(tuple(lines + [f"note: {n}" for n in d.get("notes") or []])), BLANK]
        return out

    def json(self) -> str:
        return to_json(self.documents)

    def csv(self) -> str:
        rows = ([d["dataset"], j["name"], j["verdicts"], d["items"], d.get("format")] for d in self.documents for j in d.get("judges") or [])
        return to_csv(("dataset", "judge", "verdicts", "items", "format"), rows)

