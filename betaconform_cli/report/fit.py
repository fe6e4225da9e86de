"""Fit results (from `fit`, `report` and `transfer`): their JSON documents and their views.

A fit's document is built once, typed (fit_document.fit_document; `report`: fit_document.report_document), with its gate
check when there is one, and never changed afterwards; every view below reads its attributes, so that `report`
shows a saved fit exactly as `fit` showed it, and the JSON is the document encoded.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from ..document_types import plain
from ..estimators import Estimator, csv_columns, row_columns
from ..gate import GateCheck
from ..parameters import CONFIDENCE_LEVEL
from ..settings import TIE_RULE
from . import Gated, Verdict, gate_verdicts
from .render import to_csv, to_json
from .views import BLANK, Block, Chart, Lines, Series, TableView, beyond_note, caption_of, k_label, pct, tie_note

if TYPE_CHECKING:
    from ..mixtures import FittedCounts

SIDE_BY_SIDE_MAX = 3  # four columns of "26.8% [22.4%, 31.5%]" no longer fit 80 columns
Doc = Any  # a fit document (fit_document.fit_document_type() or report_document_type(): built from the registry's columns)


def saved_document(doc: Doc, embedding: dict[str, Any] | None = None) -> dict[str, Any]:
    """The YAML body of a saved fit, as plain values (savedfit.SCHEMA is added by savedfit.dump_fit)."""
    keep = {k: v for k, v in plain(doc).items() if k not in ("schema", "gate")}
    keep["embedding"] = embedding
    return keep


# --- views ----------------------------------------------------------------------------------------------


def _value(obj: Any, name: str) -> Any:
    """A document's field, None where the document lacks it (UNSET)."""
    v = getattr(obj, name, None)
    return None if v is UNSET else v


def describe(d: Doc) -> str:
    comps = ", ".join(f"{100 * c.weight:.0f}% of items at mean accuracy {c.mean:.2f}" for c in d.model.components)
    n = len(d.model.components)
    kind = "single Beta-Binomial" if n == 1 else f"{n}-component Beta-Binomial mixture"
    unl = f" (and {d.unlabeled_items} unlabeled)" if d.unlabeled_items else ""
    return f"{d.items} labeled items{unl}, up to {d.judges} judges; {kind}: {comps}"


def unlabeled_note(d: Doc) -> str:
    """Both item counts and how the estimate used the unlabeled items ('' for data without any)."""
    u = d.unlabeled
    if not d.unlabeled_items or not u:
        return ""
    n_lab, n_unl = d.items, d.unlabeled_items
    if u.method == "vote_split":
        return (f"{n_lab} labeled + {n_unl} unlabeled items; the estimate covers all {n_lab + n_unl}: {u.reason}; "
                f"labels only: the estimate from the {n_lab} labeled items alone")
    return f"{n_lab} labeled + {n_unl} unlabeled items; the estimate covers the {n_lab} labeled items: {u.reason}"


def confidence(d: Doc) -> float:
    level = _value(d.interval, "confidence_level") if d.interval else None
    return float(level if level is not None else (_value(d.settings, "confidence_level") if d.settings else None) or CONFIDENCE_LEVEL)


def _num(x: Any, spec: str) -> str:
    return format(x, spec) if _is_number(x) else "—"


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def interval_note(d: Doc) -> str:
    return f"{round(100 * confidence(d))}% interval; empirical is — where an item has fewer than k judges"


def _extrapolated(r: Any) -> bool:
    """Some item has fewer than k judges (with unlabeled items: any item, labeled or not)."""
    return bool(r.empirical is None if r.extrapolated is UNSET else r.extrapolated)


def beyond(r: Any, d: Doc) -> bool:
    """k is beyond the most judges any item has: the row's flag (a saved fit from before it: k > the document's
    most judges)."""
    flag = _value(r, "beyond_data")
    return bool(flag) if isinstance(flag, bool) else bool(d.judges) and r.k > d.judges


def _most_observed(d: Doc) -> int:
    """The largest k within the data (the most judges on an item, labeled or not)."""
    inside = [r.k for r in d.error_rates if not beyond(r, d)]
    return int(max([d.judges or 0, *inside]))


def _votes_used(d: Doc) -> bool:
    return bool(d.unlabeled_items) and bool(d.unlabeled) and d.unlabeled.method == "vote_split"


def _headed() -> tuple[Estimator, ...]:
    """The estimators whose columns fit's table and error chart show (estimators.REGISTRY's headings)."""
    return tuple(e for e in row_columns() if e.heading)


def error_view(d: Doc, title: bool = True) -> TableView:
    used = _votes_used(d)  # the labels-only estimate it replaced, beside it
    rows = tuple(
        (k_label(r.k, _extrapolated(r), beyond(r, d)), f"{pct(r.estimate)} [{pct(r.low)}, {pct(r.high)}]",
         *((pct(_value(r, "labels_only")),) if used else ()),
         *(pct(_value(r, str(e.column))) for e in _headed()))
        for r in d.error_rates
    )
    note = unlabeled_note(d) or (
        f"{d.items} labeled items, {d.unlabeled_items} unlabeled items (verdicts without gold)" if d.unlabeled_items else "")
    extrapolated = any(_extrapolated(r) and not beyond(r, d) for r in d.error_rates)
    caption = caption_of(note, tie_note(r.k for r in d.error_rates), "† more judges than some items have: the mixture "
                         "extrapolates; the interval omits the mixture's own uncertainty" if extrapolated else "",
                         beyond_note(_most_observed(d)) if any(beyond(r, d) for r in d.error_rates) else "")
    return TableView(
        title=f"{d.dataset}: majority-vote error by number of judges k" if title else "",
        columns=("k", f"estimate [{100 * confidence(d):.4g}% interval]", *(("labels only",) if used else ()),
                 *(str(e.heading) for e in _headed())),
        rows=rows,
        caption=caption,
    )


def diagnostics_view(d: Doc) -> TableView:
    m = d.model
    rows = [
        ("method", d.method),
        ("estimate", str(_value(d, "method_description") or "")),
        ("items / most judges", f"{d.items} / {d.judges}"),
        ("log-likelihood", _num(_value(m, "log_likelihood"), ".3f")),
        ("converged", str(_value(m, "converged"))),
        ("BIC", _num(_value(m, "bic"), ".2f")),
    ]
    for i, c in enumerate(m.components, 1):
        rows.append((f"component {i}", f"w={c.weight:.3f}  alpha={c.alpha:.3g}  beta={c.beta:.3g}  mean={c.mean:.3f}"))
    u = d.unlabeled
    if d.unlabeled_items and u:
        rows.append(("unlabeled items", f"{d.unlabeled_items}: {u.method} ({u.reason})"))
        model = _value(u, "model")
        if isinstance(model, Mapping) and isinstance(model.get("model_probabilities"), Mapping):
            probs = ", ".join(f"{k} {float(v):.2f}" for k, v in model["model_probabilities"].items() if _is_number(v))
            rows.append(("vote split", f"b0={_num(model.get('b0'), '.3g')}  b1={_num(model.get('b1'), '.3g')}  "
                                       f"models: {probs}; labeled splits {_num(model.get('labeled_splits'), 'g')}, wrong {_num(model.get('labeled_wrong'), 'g')}"))
    if d.skipped_lines:
        rows.append(("skipped lines", str(d.skipped_lines)))
    return TableView(title="fit diagnostics", columns=("diagnostic", "value"), rows=tuple(rows), align="ll", terminal_only=True)


def summary_view(docs: Sequence[Doc], ks: tuple[int, ...] = (1, 3, 5, 11)) -> TableView:
    shown = [k for k in ks if any(r.k == k for r in docs[0].error_rates)]
    rows = []
    for d in docs:
        by_k = {r.k: r for r in d.error_rates}
        cells = [pct(by_k[k].estimate) + ("‡" if beyond(by_k[k], d) else "") if k in by_k else "—" for k in shown]
        rows.append((d.dataset, str(d.items), str(d.judges), *cells))
    return TableView(
        title="summary: estimated majority-vote error",
        caption="intervals: in each dataset's table" + ("; ‡ extrapolated: k beyond the most judges any item has"
                                                         if any(beyond(r, d) for d in docs for r in d.error_rates) else ""),
        columns=("dataset", "items", "judges", *[f"k={k}" for k in shown]),
        rows=tuple(rows),
        summary=True,
    )


def side_by_side_view(docs: Sequence[Doc]) -> TableView:
    """Rows k, one column per dataset (estimate [interval]): for comparing a few fits directly."""
    ks = sorted({r.k for d in docs for r in d.error_rates})
    by = [{r.k: r for r in d.error_rates} for d in docs]
    rows = []
    for k in ks:
        cells = [f"{pct(b[k].estimate)} [{pct(b[k].low)}, {pct(b[k].high)}]" + ("‡" if beyond(b[k], d) else "") if k in b else "—"
                 for b, d in zip(by, docs)]
        rows.append((k_label(k), *cells))
    past = any(beyond(r, d) for d in docs for r in d.error_rates)
    return TableView(
        title="side by side: estimated majority-vote error [interval] by k",
        columns=("k", *[d.dataset for d in docs]),
        rows=tuple(rows),
        caption=caption_of(tie_note(ks), "‡ extrapolated: k beyond the most judges any item has" if past else ""),
    )


def histogram_bars(counts: FittedCounts) -> tuple[str, list[tuple[int, int, float]]]:
    """Observed vs fitted counts of S at the most common number of judges: (title, [(s, observed, fitted)])."""
    shown = sum(counts.observed)
    items = f"{shown} items" if shown == counts.items else f"{shown} of {counts.items} items: those with {counts.judges} judges"
    title = f"correct judges out of {counts.judges}: observed (█) vs fitted mixture (┃), {items}"
    return title, list(zip(range(counts.judges + 1), counts.observed, counts.fitted))


def bar_chart_lines(counts: FittedCounts, width: int = 40) -> list[str]:
    title, bars = histogram_bars(counts)
    top = max(max(o, f) for _, o, f in bars) or 1
    lines = [title]
    for s, o, f in bars:
        n_obs = round(width * o / top)
        n_fit = round(width * f / top)
        bar = "".join("█" if i < n_obs else " " for i in range(max(n_obs, n_fit) + 1))
        bar = bar[:n_fit] + "┃" + bar[n_fit + 1 :]
        lines.append(f"{s:>3} {bar.rstrip():<{width + 1}} {o:>5} obs {f:>7.1f} fit")
    return lines


def error_chart(d: Doc) -> Chart:
    """Error against k: the estimate with its interval (a band), and the baselines; empirical only where it is
    defined (the table's —)."""
    rows = d.error_rates

    def col(name: str) -> tuple[float | None, ...]:
        return tuple(None if _value(r, name) is None else float(_value(r, name)) for r in rows)

    return Chart(
        kind="lines",
        title=f"{d.dataset}: majority-vote error against k",
        x=tuple(f"{r.k}‡" if beyond(r, d) else str(r.k) for r in rows),  # shaded from the first ‡ (svg.lines_svg)
        series=(
            Series(f"estimate, {round(100 * confidence(d))}% interval", col("estimate"), col("low"), col("high"), key="default"),
            *((Series("labels only", col("labels_only"), key="labels_only"),) if _votes_used(d) else ()),
            *(Series(str(e.heading), col(str(e.column)), key=e.name) for e in _headed()),
        ),
        x_label="number of judges k (even k: ties count half)",
        y_label="majority-vote error",
        caption=caption_of("empirical is not drawn where an item has fewer than k judges" if any(_extrapolated(r) for r in rows) else "",
                           "shaded: k beyond the most judges any item has (extrapolated)" if any(beyond(r, d) for r in rows) else "",
                           sep="; "),
    )


def histogram_chart(counts: FittedCounts) -> Chart:
    """Observed vs fitted counts of correct judges; its text is the terminal's bar chart."""
    title, bars = histogram_bars(counts)
    return Chart(
        kind="bars",
        title=title.replace(" (█)", "").replace(" (┃)", ""),
        x=tuple(str(s) for s, _, _ in bars),
        series=(Series("observed", tuple(float(o) for _, o, _ in bars)),
                Series("fitted mixture", tuple(f for _, _, f in bars), key="plugin")),  # the MAP mixture's style
        x_label="correct judges",
        y_label="items",
        percent=False,
        text=tuple(bar_chart_lines(counts)),
    )


def one_document(documents: Sequence[Doc], dataset: str | None) -> Doc:
    """The document of `dataset`, or the only one (a ParameterError names the datasets otherwise)."""
    from ..errors import P0, ParameterError, quote_all

    names = [str(d.dataset) for d in documents]
    if dataset is None and len(documents) == 1:
        return documents[0]
    if dataset is None:
        raise ParameterError("dataset", f"this result holds {len(names)} datasets ({quote_all(names)}): name one with {P0}=")
    if dataset not in names:
        raise ParameterError("dataset", f"{dataset!r} is not one of this result's datasets ({quote_all(names)})")
    return documents[names.index(dataset)]


def fit_blocks(d: Doc, counts: FittedCounts | None = None) -> list[Block]:
    """One dataset in a terminal: its error table, a description, and (given its fitted `counts`) the charts and
    diagnostics. The error chart has no terminal text (the table is it); HTML draws it."""
    blocks: list[Block] = [error_view(d), Lines((describe(d),))]
    if counts is not None:
        blocks += [error_chart(d), BLANK, histogram_chart(counts), BLANK, diagnostics_view(d)]
    return [*blocks, BLANK]


def fit_markdown_blocks(d: Doc) -> list[Block]:
    """One dataset in a job summary: a heading, the description, the table and its notes."""
    table = error_view(d, title=False)
    tie = (_value(d, "tie_rule") or TIE_RULE) if tie_note(r.k for r in d.error_rates) else ""
    past = beyond_note(_most_observed(d)) if any(beyond(r, d) for r in d.error_rates) else ""
    note = caption_of(unlabeled_note(d), tie, interval_note(d), past, sep="; ")
    return [Lines((str(d.dataset),), heading=True), Lines((describe(d),)), TableView("", table.columns, table.rows, note)]


@dataclass(frozen=True)
class FitReport(Gated):
    """The result of `fit` or `report`: one document per dataset, and the gate's checks. With `chart`, `counts`
    holds each document's observed and fitted counts (mixtures.fitted_counts, in the same order), which the chart draws."""

    documents: tuple[Doc, ...]  # fit_document.fit_document_type() or report_document_type()
    checks: tuple[GateCheck, ...] = ()
    chart: bool = True
    notes: tuple[str, ...] = ()
    saves: tuple[tuple[Path, dict[str, Any]], ...] = ()  # saved fits to write: (file, YAML body)
    counts: tuple[FittedCounts, ...] = ()
    # the same fit at another confidence level (the library's fit() sets it: error(k, confidence_level=...))
    refit: Callable[[float], FitReport] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.chart and len(self.counts) != len(self.documents):
            raise ValueError(f"a chart needs each document's fitted counts: {len(self.documents)} documents, {len(self.counts)} counts")

    def blocks(self, markdown: bool = False) -> list[Block]:
        docs = self.documents
        if markdown:
            out: list[Block] = []
            if len(docs) > 1:
                out += [Lines(("BetaConform summary",), heading=True), summary_view(docs)]
            for d in docs:
                out += fit_markdown_blocks(d)
            if self.checks:
                out += [Lines(("Gate",), heading=True), Lines(tuple(f"- {c.line()}" for c in self.checks))]
            return out
        counts = self.counts if self.chart else (None,) * len(docs)
        out = [b for d, c in zip(docs, counts) for b in fit_blocks(d, c)]
        if len(docs) > 1:
            if len(docs) <= SIDE_BY_SIDE_MAX:
                out.append(side_by_side_view(docs))
            out.append(summary_view(docs))
        return out

    def json(self) -> str:
        return to_json([plain(d) for d in self.documents])

    def csv(self) -> str:
        numbers = csv_columns()  # the estimate, its interval and every estimator's column (estimators.REGISTRY)
        rows = (
            [d.dataset, r.k]
            + [None if _value(r, c) is None else repr(round(float(_value(r, c)), 6)) for c in numbers]
            + [d.items, d.judges, d.method, str(beyond(r, d)).lower()]
            for d in self.documents
            for r in d.error_rates
        )
        return to_csv(("dataset", "k", *numbers, "items", "judges", "method", "beyond_data"), rows)

    def document(self, dataset: str | None = None) -> Doc:
        """The one dataset's document, or the one named `dataset`."""
        return one_document(self.documents, dataset)

    def error(self, k: int, confidence_level: float | None = None, dataset: str | None = None,
              alpha: float | None = None) -> tuple[float, float, float]:
        """(estimate, low, high) of the majority-vote error of k judges, at the fit's confidence level or at
        `confidence_level` (or 1 - `alpha`, as statsmodels' conf_int(alpha)); another level fits again with the
        same data, options and seed (`refit`), which the library's fit() keeps; a saved fit has its level only."""
        from ..errors import P0, ParameterError

        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise ParameterError("k", f"is a number of judges (an integer); got {k!r}")
        d = self.at_level(confidence_level, alpha, dataset).document(dataset)
        row = next((r for r in d.error_rates if r.k == k), None)
        if row is None:
            raise ParameterError("ks", f"{k} is not among this fit's ensemble sizes ({', '.join(str(r.k) for r in d.error_rates)}); "
                                       f"fit with {P0} including it")
        if beyond(row, d):  # as the table's mark and the gate's note say it: never a bare number
            import warnings

            warnings.warn(f"{d.dataset}: k={k} is beyond the {d.judges} judges any item has: extrapolated by the model "
                          "(docs/EXTRAPOLATION.md)", UserWarning, stacklevel=2)
        return float(row.estimate), float(row.low), float(row.high)

    def conf_int(self, alpha: float | None = None, dataset: str | None = None) -> dict[int, tuple[float, float]]:
        """{k: (low, high)} for every ensemble size of the fit, at its level or at 1 - `alpha` (statsmodels'
        conf_int(alpha); another level fits again, once, as error(k, alpha=...) does)."""
        d = self.at_level(None, alpha, dataset).document(dataset)
        return {int(r.k): (float(r.low), float(r.high)) for r in d.error_rates}

    def at_level(self, confidence_level: float | None, alpha: float | None, dataset: str | None = None) -> FitReport:
        """This result, or the same fit at `confidence_level` (or 1 - `alpha`; both given, they must agree)."""
        from ..errors import P0, ParameterError
        from ..parameters import check

        if alpha is not None:
            if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
                raise ParameterError("alpha", f"must be strictly between 0 and 1 (0.05: a 95% interval); got {alpha!r}")
            if confidence_level is not None and abs(confidence_level - (1.0 - alpha)) > 1e-12:
                raise ParameterError("alpha", f"{alpha!r} and confidence_level {confidence_level!r} ask for two levels: give one")
        level = confidence_level if alpha is None else 1.0 - alpha
        if level is not None:
            check("confidence_level", level)
        d = self.document(dataset)
        if level is None or abs(level - confidence(d)) <= 1e-12:
            return self
        if self.refit is None:
            raise ParameterError("confidence_level", f"this result holds its {confidence(d):g} interval only (a saved "
                                                     f"fit, or a result not made by fit()): fit again with {P0}")
        return self.refit(level)

    def rows(self) -> list[dict[str, Any]]:
        """The CSV table (`--format csv`) at full precision: one row per dataset and k."""
        numbers = csv_columns()
        return [{"dataset": d.dataset, "k": r.k, **{c: None if _value(r, c) is None else float(_value(r, c)) for c in numbers},
                 "items": d.items, "judges": d.judges, "method": d.method} for d in self.documents for r in d.error_rates]

    def save(self, path: str | Path, dataset: str | None = None) -> Path:
        """Write the dataset's fit as the YAML that `fit --save` writes (for `report`, `transfer`, load_fit)."""
        from ..atomic import check_target
        from ..savedfit import check_fit_name, dump_fit

        d = self.document(dataset)
        target = Path(path)
        check_target(target, "saved fit")
        check_fit_name(target)
        body = next((b for _, b in self.saves if b.get("dataset") == d.dataset), None) or saved_document(d)
        dump_fit(target, body)
        return target

    def verdicts(self) -> tuple[Verdict, ...]:
        """One per dataset: its gate check (--max-error), or a passing case when there is no gate."""
        return gate_verdicts([d.dataset for d in self.documents], self.checks,
                             lambda c: f"max-error {100 * c.max_error:g}% at k={c.k}" + (" on the estimate" if c.on == "estimate" else "")
                             + (" (extrapolated)" if c.beyond else ""))
