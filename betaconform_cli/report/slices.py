"""Views of `fit`, `judges` and `score` with --by (api/_slices.py; docs/SLICES.md): the slices' table and chart,
then the command's own views of each slice; its JSON document (slicing.SlicesDocument) holds both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..formats import output_columns
from ..slicing import MIN_LABELED, SliceEntry, SliceFamily, SliceGate, SlicesDocument
from ..version import __version__
from . import Gated, Verdict
from .render import to_csv, to_json
from .views import BLANK, Block, Chart, Lines, Series, TableView, pct

CSV_COLUMNS = output_columns("slices")


def _figure(e: SliceEntry, level: float) -> str:
    if e.figure is None:
        return e.note.split(";")[0] if e.note else "—"
    return f"{pct(e.figure.estimate)} [{pct(e.figure.low)}, {pct(e.figure.high)}] at {pct(level, 2)}"


def _gate(e: SliceEntry) -> str:
    if e.figure is None:
        return "not gated"
    g = e.gate
    return f"{'ok' if g.passed else 'FAIL'} at {pct(1 - g.alpha, 2)}" if isinstance(g, SliceGate) else ""


def family_view(f: SliceFamily) -> TableView:
    what = next((e.figure.what for e in f.slices if e.figure is not None), "")
    rows = tuple((e.key, str(e.labeled_items), str(e.unlabeled_items), _figure(e, f.interval_level), _gate(e)) for e in f.slices)
    return TableView(f"{f.parent}: {len(f.slices)} slices, {f.m} with enough labels", ("slice", "labeled", "unlabeled",
                     what or "estimate [interval]", "gate"), rows, caption=f"gate: {f.gate_rule}", align="lrrrl")


def family_chart(f: SliceFamily) -> Chart:
    """Each slice's estimate with its adjusted interval (a slice with too few labels: no bar)."""
    rows = tuple(e.key for e in f.slices)
    y = tuple(e.figure.estimate if e.figure else None for e in f.slices)
    low = tuple(e.figure.low if e.figure else None for e in f.slices)
    high = tuple(e.figure.high if e.figure else None for e in f.slices)
    what = next((e.figure.what for e in f.slices if e.figure is not None), "estimate")
    return Chart("hbars", f"{f.parent}: {what} per slice, intervals at {pct(f.interval_level, 2)}", rows=rows,
                 series=(Series(what, y, low, high),), x_label=what)


@dataclass(frozen=True)
class SlicesReport(Gated):
    """A command's result per slice: the families (one per input) and the command's own report over the slices
    with enough labels (`inner`: a FitReport, JudgesReport or ScoreReport); exit 1 when a slice fails its gate."""

    command: str
    by: str
    adjust: str
    confidence_level: float
    statement: str
    families: tuple[SliceFamily, ...]
    inner: Any
    own_notes: tuple[str, ...] = ()

    def document(self) -> SlicesDocument:
        results = self.inner.to_dict() if any(f.m for f in self.families) else []
        return SlicesDocument(schema="betaconform/1", command=self.command, kind="slices", tool_version=__version__,  # type: ignore[arg-type]
                              by=self.by, adjust=self.adjust, confidence_level=self.confidence_level,  # type: ignore[arg-type]
                              min_labeled=MIN_LABELED, order="by key: numbers by value, then text, (missing) last",
                              statement=self.statement, families=list(self.families),
                              results=results if isinstance(results, list) else [results])

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = [Lines((self.statement,))]
        for f in self.families:
            out += [family_view(f), family_chart(f), BLANK]
        inner = self.inner.blocks(markdown) if any(f.m for f in self.families) else []
        return out + inner

    def json(self) -> str:
        import msgspec

        return to_json([msgspec.to_builtins(self.document())])

    def csv(self) -> str:
        rows = []
        for f in self.families:
            for e in f.slices:
                fig, g = e.figure, e.gate if isinstance(e.gate, SliceGate) else None
                rows.append([e.dataset, e.key, self.by, e.labeled_items, e.unlabeled_items, fig.what if fig else "",
                             fig.estimate if fig else None, fig.low if fig else None, fig.high if fig else None,
                             f.interval_level if fig else None, self.adjust, getattr(g, "passed", None),
                             getattr(g, "alpha", None), e.note])
        return to_csv(CSV_COLUMNS, rows)

    def _gated(self) -> list[tuple[SliceFamily, SliceEntry, SliceGate]]:
        return [(f, e, e.gate) for f in self.families for e in f.slices if isinstance(e.gate, SliceGate)]

    def verdicts(self) -> tuple[Verdict, ...]:
        """One per slice: its gate (the line names the slice and the level it was decided at), a slice with too few
        labels as a passing case that says it was not gated, and a case without a gate for every other slice."""
        out = []
        for f in self.families:
            for e in f.slices:
                g = e.gate
                if isinstance(g, SliceGate):
                    out.append(Verdict(e.dataset, f"slice gate ({self.adjust})", g.passed, _decided(f, g)))
                else:
                    out.append(Verdict(e.dataset, "", True, e.note))
        return tuple(out)

    @property
    def notes(self) -> tuple[str, ...]:
        too_few = tuple(f"{e.dataset}: {e.note}" for f in self.families for e in f.slices if e.figure is None)
        return (*self.own_notes, *getattr(self.inner, "notes", ()), *too_few)

    @property
    def failures(self) -> tuple[str, ...]:
        """Each slice that failed its gate: which slice, the gate's line and the level it was decided at."""
        return tuple(f"gate failed: slice {e.key!r} of {f.parent}: {_decided(f, g)}" for f, e, g in self._gated() if not g.passed)


def _decided(f: SliceFamily, g: SliceGate) -> str:
    return f"{g.line} (decided at the {pct(1 - g.alpha, 2)} level: {f.gate_rule})"
