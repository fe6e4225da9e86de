"""`judges` results: per judge, shared mistakes, the ensemble to run for each k, a named ensemble, the cheapest
ensemble under an error limit -- as tables (views reading the typed document's attributes, judges/document.py)
and CSV rows."""

from __future__ import annotations

from dataclasses import dataclass

from ..document_types import plain
from ..errors import quote_all
from ..formats import output_columns
from ..judges.document import JudgesDocument
from ..settings import TIE_RULE
from . import Gated, Verdict
from .judges_agreement import (
    AGREEMENT_CSV,
    agreement_rows,
    agreement_view,
    chance_view,
    confusion_view,
    kappa_chart,
    panel_view,
)
from .render import to_csv, to_json
from .views import BLANK, Block, Chart, Lines, TableView, pct


def _level(d: JudgesDocument) -> str:
    return f"{100 * float(d.interval.confidence_level):.4g}"  # 90, 97.5 (--by's Bonferroni level), never rounded to 98


def _points(x: float | None, digits: int = 0) -> str:
    return "—" if x is None else f"{100 * x:+.{digits}f}"


def _p(x: float | None) -> str:
    if x is None:
        return "—"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def judges_view(d: JudgesDocument) -> TableView:
    """One row per judge: accuracy [interval], items, distance from the judges' mean, mean excess shared mistakes."""
    rows = tuple(
        (
            str(i),
            j.name,
            f"{pct(j.accuracy)} [{pct(j.low)}, {pct(j.high)}]",
            str(j.items),
            _points(j.deviation, 1),
            _points(j.mean_excess, 1),
        )
        for i, j in enumerate(d.judges, 1)
    )
    ex = d.exchangeability
    test = (
        f"Cochran's Q = {ex.statistic:.2f}, df {ex.df}, p = {_p(ex.p_value)} on {ex.items} items judged by all: {ex.note}"
        if ex.statistic is not None
        else f"Cochran's Q: {ex.note}"
    )
    return TableView(
        title="per judge: accuracy on the items it judged",
        columns=("#", "judge", f"accuracy [{_level(d)}% interval]", "items", "vs mean (pts)", "shared (pts)"),
        rows=rows,
        caption=test + "\nshared: mean over its pairs of both-wrong minus what independence predicts (points); "
        "under exchangeable judges every judge shows about the same value",
        align="rlrrrr",
    )


def pairs_matrix_view(d: JudgesDocument) -> TableView:
    """Judge x judge matrix of shared mistakes beyond independence (points); — where a pair has no common item."""
    names = d.judge_names
    index = {n: i for i, n in enumerate(names)}
    cell = [["·" if a == b else "" for b in range(len(names))] for a in range(len(names))]
    for p in d.pairs:
        a, b = index[p.a], index[p.b]
        text = "—" if p.excess is None else f"{100 * p.excess:+.0f}"
        cell[a][b] = cell[b][a] = text
    rows = tuple((f"{a + 1} {names[a]}", *cell[a]) for a in range(len(names)))
    missing = d.pairs_without_data
    caption = "cell: % of items both judges got wrong minus the % independence predicts (points); judges numbered as rows"
    if missing:
        caption += "\nno item judged by both (no number): " + "; ".join(f"{a} & {b}" for a, b in missing)
    return TableView(
        title="shared mistakes: both wrong beyond independence",
        columns=("judge", *[str(i) for i in range(1, len(names) + 1)]),
        rows=rows,
        caption=caption,
    )


def shared_mistakes_chart(d: JudgesDocument) -> Chart:
    """The pairs matrix as a heat map (HTML): both-wrong beyond independence; no colour where a pair has no common
    item, nor on the diagonal."""
    names = d.judge_names
    index = {n: i for i, n in enumerate(names)}
    cells: list[list[float | None]] = [[None] * len(names) for _ in names]
    for p in d.pairs:
        a, b = index[p.a], index[p.b]
        cells[a][b] = cells[b][a] = None if p.excess is None else float(p.excess)
    return Chart(
        kind="heatmap",
        title="shared mistakes: both wrong beyond independence (points)",
        x=tuple(str(i) for i in range(1, len(names) + 1)),
        rows=tuple(f"{i} {n}" for i, n in enumerate(names, 1)),
        cells=tuple(tuple(r) for r in cells),
        caption="red: the pair errs together more than independence predicts; blue: less; grey —: no item judged by both",
    )


def top_pairs_view(d: JudgesDocument) -> TableView:
    """The pairs that err together most beyond independence."""
    by = {(p.a, p.b): p for p in d.pairs}
    rows = []
    for a, b in d.top_pairs:
        p = by[(a, b)]
        rows.append((f"{a} & {b}", pct(p.both_wrong), pct(p.expected_if_independent), _points(p.excess, 1), str(p.items), _p(p.p_value)))
    return TableView(
        title="top shared mistakes",
        columns=("pair", "both wrong", "if independent", "excess (pts)", "items", "p"),
        rows=tuple(rows),
        caption="p: one-sided Fisher exact test of more shared mistakes than independence (not adjusted for the number of pairs)",
    )


def ensembles_view(d: JudgesDocument) -> TableView:
    """The ensemble to run for each size k: members, estimated error [interval], labels' own, fit's baselines."""
    rows = []
    beam = False
    for e in d.ensembles:
        beam = beam or e.search == "beam"
        rows.append(
            (
                f"{e.k}{'*' if e.k % 2 == 0 else ''}{'‡' if e.search == 'beam' else ''}",
                ", ".join(e.members),
                f"{pct(e.estimate)} [{pct(e.low)}, {pct(e.high)}]",
                pct(e.empirical),
                pct(e.random_k),
                pct(e.all_judges),
            )
        )
    caption = f"target: {d.target}; estimate and interval account for choosing on these labels (docs/JUDGES.md)"
    if d.unlabeled_items:
        caption = f"{unlabeled_counts(d)}\n{caption}"
    if any(e.k % 2 == 0 for e in d.ensembles):
        caption += "\n* even k: " + TIE_RULE.replace("for even k ", "")
    if beam:
        caption += "\n‡ beam search (too many judges to try every subset): best found, not guaranteed best"
    return TableView(
        title="the ensemble to run for each size k",
        columns=("k", "members", f"estimate [{_level(d)}% interval]", "labels' own", "random k (fit)", "all judges (fit)"),
        rows=tuple(rows),
        caption=caption,
        align="llrrrr",
    )


def unlabeled_counts(d: JudgesDocument) -> str:
    """Both item counts and how the unlabeled items were used."""
    if not d.unlabeled:
        return f"{d.items} labeled + {d.unlabeled_items} unlabeled items"
    u = d.unlabeled
    return (f"{d.items} labeled + {d.unlabeled_items} unlabeled items ({u.reason})\n"
            f"picked by {u.choice}; error reported by {u.report}")


def named_ensemble_view(d: JudgesDocument) -> TableView | None:
    """The named ensemble: our estimate, and fit's estimators for its members treated as exchangeable."""
    e = d.ensemble
    if e is None:
        return None
    f = e.fit  # fit's error row as the judges document carries it: a JSON object (docs/schema/judges.json)
    rows = (
        ("latent-class model (this command)", f"{pct(e.estimate)} [{pct(e.low)}, {pct(e.high)}]"),
        ("fit: default (members exchangeable)", f"{pct(f['estimate'])} [{pct(f['low'])}, {pct(f['high'])}]"),
        ("fit: binomial", pct(f.get("binomial"))),
        ("fit: beta-binomial", pct(f.get("beta_binomial"))),
        ("labels' own (empirical)", pct(e.empirical)),
    )
    return TableView(
        title=f"ensemble {', '.join(e.members)}: majority-vote error",
        columns=("estimator", f"error [{_level(d)}% interval]"),
        rows=rows,
        caption=f"{e.items} labeled items judged by all members; target: {d.target}"
        + ("\n" + TIE_RULE if e.k % 2 == 0 else ""),
        align="lr",
    )


def cost_view(d: JudgesDocument) -> TableView | None:
    """The cheapest ensemble whose upper bound meets max_error, or the best there is when none does."""
    c = d.cost
    if c is None:
        return None
    status = "met" if c.met else "NOT met by any ensemble with these labels"
    rows: tuple[tuple[str, str], ...] = (
        ("max error", f"{pct(c.max_error)}: {status}"),
        ("ensemble" if c.met else "lowest upper bound", ", ".join(c.members)),
        ("cost", f"{c.cost:g}"),
        (f"estimate [{_level(d)}% interval]", f"{pct(c.estimate)} [{pct(c.low)}, {pct(c.high)}]"),
        ("candidates", f"{c.candidates} ({c.search} search)"),
    )
    unpriced = [j for j in d.judge_names if j not in c.prices]
    if unpriced:  # prices for some judges only: the others are not candidates, and the table says so
        rows += (("left out (no price)", ", ".join(unpriced)),)
    return TableView(title="cheapest ensemble meeting the error limit", columns=("", ""), rows=rows, align="ll")


def views(d: JudgesDocument) -> list[TableView]:
    """Every table of a judges document, in reading order."""
    out = [judges_view(d), pairs_matrix_view(d), top_pairs_view(d), ensembles_view(d)]
    out += [v for v in (named_ensemble_view(d), cost_view(d)) if v is not None]
    return out


ENSEMBLE_CSV = output_columns("judges")  # registered in formats.py, so that a folder skips the report


@dataclass(frozen=True)
class JudgesReport(Gated):
    """One document per dataset; exit 1 when an error limit was asked for and no ensemble meets it."""

    documents: tuple[JudgesDocument, ...]
    notes: tuple[str, ...] = ()
    csv_table: str = "ensembles"  # -f csv: "ensembles" (each size's ensemble) or "agreement" (each judge vs the gold)

    def blocks(self, markdown: bool = False) -> list[Block]:
        out: list[Block] = []
        for d in self.documents:
            count = f"{d.items} labeled" + (f" + {d.unlabeled_items} unlabeled" if d.unlabeled_items else "") + " items"
            head = f"{d.dataset}: {count}, {len(d.judge_names)} judges; {d.target}"
            tables = views(d)
            out += [Lines((head,), heading=markdown), *tables[:1]]
            out += [b for b in (agreement_view(d), chance_view(d), kappa_chart(d), confusion_view(d), panel_view(d)) if b is not None]
            out += [*tables[1:2], shared_mistakes_chart(d), *tables[2:]]
            if d.exchangeability.note:
                out.append(Lines((f"exchangeable? {d.exchangeability.note}",)))
            out.append(BLANK)
        return out

    def json(self) -> str:
        return to_json([plain(d) for d in self.documents])

    def csv(self) -> str:
        if self.csv_table == "agreement":
            return to_csv(AGREEMENT_CSV, (row for d in self.documents for row in agreement_rows(d)))
        rows = ([d.dataset, e.k, list(e.members), e.estimate, e.low, e.high, e.random_k,
                 e.all_judges, e.empirical, e.search] for d in self.documents for e in d.ensembles)
        return to_csv(ENSEMBLE_CSV, rows)

    def verdicts(self) -> tuple[Verdict, ...]:
        """One per dataset: its --max-error gate (an ensemble meets it, or none does), or a passing case."""
        out = []
        documents = self.documents
        fails = dict(zip((d.dataset for d in documents if d.cost and not d.cost.met), self.failures))
        for d in documents:
            c = d.cost
            if c is None:
                out.append(Verdict(str(d.dataset), "", True))
            elif c.met:
                out.append(Verdict(str(d.dataset), f"max-error {100 * c.max_error:g}%", True,
                                   f"{', '.join(c.members)} (cost {c.cost:g}) has upper bound {pct(c.high)}"))
            else:
                out.append(Verdict(str(d.dataset), f"max-error {100 * c.max_error:g}%", False, fails[d.dataset]))
        return tuple(out)

    @property
    def failures(self) -> tuple[str, ...]:
        out = []
        for d in self.documents:
            c = d.cost
            if c is not None and not c.met:
                out.append(f"no ensemble meets max error {pct(c.max_error)} with these labels: {d.dataset}'s lowest "
                           f"upper bound is {pct(c.high)} ({quote_all(c.members)}); label more items")
        return tuple(out)
