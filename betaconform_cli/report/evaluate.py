"""Evaluation results (`evaluate`): margin tables per r or stopping setting, the JSON document and CSV rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..estimators import REGISTRY
from ..evaluate import MARGIN_DEFINITION, Cell, Evaluation
from ..formats import output_columns
from ..version import __version__
from . import Verdictless
from .render import to_csv, to_json
from .views import BLANK, Block, Lines, TableView


def _pts(x: float | None, digits: int = 2) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}"


def _known(x: float | None) -> float:
    """x where it cannot be None: the default method's summary always has coverage and width."""
    if x is None:
        raise AssertionError("internal error: the default method's summary lacks coverage or width")
    return x


def _pm(mean: float | None, se: float | None, compact: bool = False) -> str:
    return f"{_pts(mean)} ±{_pts(se)}" if compact else f"{_pts(mean)} ± {_pts(se)}"  # a narrow table wraps at the space


def _label(ev: Evaluation, method: str) -> str:
    return "no transfer" if ev.mode == "transfer" and method == "default" else REGISTRY[method].label


def margin_views(ev: Evaluation, compact: bool = False) -> list[TableView]:
    """Per r: rows datasets (plus their average), columns estimators; cells 'mean ± SE' of the margin.

    compact (terminal): no items column, no spaces around ±, no win counts.
    """
    views = []
    for key in ev.keys:
        cells = [c for c in ev.cells if c.key == key]
        if cells:
            views.append(_margin_view(ev, key, cells, compact))
    return views


def _margin_view(ev: Evaluation, key: str, cells: list[Cell], compact: bool) -> TableView:
    """One r (or stopping setting): a row per dataset, then their mean and the paired difference to default."""
    methods = ev.settings.methods
    show_cov = "default" in methods
    adaptive = cells[0].rule is not None
    cols: tuple[str, ...] = ("dataset",) if compact else ("dataset", "items")
    cols += tuple(_label(ev, m) for m in methods)
    if show_cov:
        cols += ("cov.", "width") if compact else ("coverage", "width")
    if adaptive:
        cols += ("samples", "stopped")
    rows = [_dataset_row(c, methods, show_cov, compact) for c in cells]
    if len(cells) > 1:
        rows.append(_mean_row(ev, key, cells, show_cov, compact))
    if "default" in methods and len(methods) > 1:
        rows.append(_minus_row(ev, key, show_cov, adaptive, compact))
    title, caption = _margin_titles(ev, key, cells[0].runs, adaptive, show_cov, compact)
    return TableView(title=title, columns=cols, rows=tuple(rows), caption=caption)


def _pm_for(compact: bool) -> Callable[[float | None, float | None], str]:
    return (lambda m, s: _pm(m, s, True)) if compact else _pm


def _dataset_row(c: Cell, methods: tuple[str, ...], show_cov: bool, compact: bool) -> tuple[str, ...]:
    pm = _pm_for(compact)
    sm = {s.method: s for s in c.summaries()}
    first = (c.dataset,) if compact else (c.dataset, str(c.items))
    row = first + tuple(pm(sm[m].margin_mean, sm[m].margin_se) for m in methods)
    if show_cov:
        d = sm["default"]
        row += (_pts(d.coverage, 0) + "%", _pts(d.width_mean, 1))
    if c.rule is not None:
        row += (f"{np.mean(c.rule.samples):.1f} ± {np.std(c.rule.samples, ddof=1):.1f}", f"{c.rule.stopped}/{c.runs}")
    return row


def _mean_row(ev: Evaluation, key: str, cells: list[Cell], show_cov: bool, compact: bool) -> tuple[str, ...]:
    pm = _pm_for(compact)
    blank = () if compact else ("",)
    row = ("mean" if compact else "mean over datasets",) + blank + tuple(pm(a.margin_mean, a.margin_se) for a in ev.averages(key))
    if show_cov:
        covs = [_known(c.summary("default").coverage) for c in cells]
        widths = [_known(c.summary("default").width_mean) for c in cells]
        row += (_pts(float(np.mean(covs)), 0) + "%", _pts(float(np.mean(widths)), 1))
    if cells[0].rule is not None:
        row += (f"{np.mean([np.mean(c.rule.samples) for c in cells if c.rule is not None]):.1f}", "")
    return row


def _minus_row(ev: Evaluation, key: str, show_cov: bool, adaptive: bool, compact: bool) -> tuple[str, ...]:
    pm = _pm_for(compact)
    blank = () if compact else ("",)
    row = (f"minus {_label(ev, 'default')}" + ("" if compact else " (paired)"),) + blank + tuple(
        ""
        if a.method == "default"
        else pm(a.diff_vs_default, a.diff_se) + ("" if compact else f" ({a.default_wins}/{a.datasets})")
        for a in ev.averages(key)
    )
    if show_cov:
        row += ("", "")
    if adaptive:
        row += ("", "")
    return row


def _margin_titles(
    ev: Evaluation, key: str, runs: int, adaptive: bool, show_cov: bool, compact: bool
) -> tuple[str, str]:
    """(title, caption) of one margin table."""
    if adaptive:
        what = f"{runs} random orders, each labeled until the {ev.settings_label()} rule stops ({key})"
    else:
        what = f"{runs} paired draws of {key.replace('=', ' = ')} items"
    caption = (
        f"Error margin in points, mean ± SE over {what}, odd k. "
        f"'minus {_label(ev, 'default')}': paired difference, positive = {_label(ev, 'default')} better"
        + ("" if compact else f" (datasets where {_label(ev, 'default')} is better)")
    )
    if show_cov:
        caption += f". Coverage and mean width (points) of the {_label(ev, 'default')} estimate's {ev.settings.confidence_level:.0%} interval"
    if adaptive:
        caption += "; samples: labeled items used (mean ± sd); stopped: runs where the rule fired before the pool ran out"
    title = f"{ev.settings_label()} rule, {key.replace('=', ' = ')}" if adaptive else f"{key.replace('=', ' = ')} labeled items"
    if ev.mode == "transfer":
        title += " of the target; the other datasets of its group are the sources (leave-one-out)"
    return title, caption


def skipped_note(ev: Evaluation) -> str:
    if not ev.skipped:
        return ""
    groups: dict[str, list[str]] = {}
    for s in ev.skipped:
        at = "" if ev.mode == "adaptive" else f" at r = {s.size}"  # adaptive: the reason names the rule setting
        groups.setdefault(s.why, []).append(f"{s.dataset} ({s.items} items){at}")
    return ". ".join(f"skipped, {why}: " + "; ".join(parts) for why, parts in groups.items())


CSV_COLUMNS = output_columns("evaluate")  # registered in formats.py (then margin_k<k>, ...), so that a folder skips it


def csv_rows(ev: Evaluation) -> tuple[tuple[str, ...], list[list[object]]]:
    """One row per (dataset, r, estimator); margins in points; per-k margins as margin_k<k> columns."""
    columns = CSV_COLUMNS + tuple(f"margin_k{k}" for k in ev.settings.ks) + ("condition", "samples_mean", "samples_sd")
    rows: list[list[object]] = []
    for c in ev.cells:
        for s in c.summaries():
            rows.append(
                [c.dataset, c.items, c.size if c.rule is None else "", c.runs, s.method]
                + [f"{100 * x:.4f}" for x in (s.margin_mean, s.margin_sd, s.margin_se)]
                + ["" if s.coverage is None else f"{s.coverage:.4f}", "" if s.width_mean is None else f"{100 * s.width_mean:.4f}"]
                + ["" if x is None else f"{100 * x:.4f}" for x in s.margin_by_k]
                + [c.key]
                + (["", ""] if c.rule is None else [f"{np.mean(c.rule.samples):.2f}", f"{np.std(c.rule.samples, ddof=1):.2f}"])
            )
    return columns, rows


@dataclass(frozen=True)
class EvaluationReport(Verdictless):
    """The result of `evaluate`."""

    evaluation: Evaluation
    per_run: bool = False
    input_notes: tuple[str, ...] = ()

    def blocks(self, markdown: bool = False) -> list[Block]:
        ev = self.evaluation
        if markdown:
            what = "random orders per dataset and stopping setting" if ev.mode == "adaptive" else "draws per dataset and r"
            intro = f"Evaluation (seed {ev.seed}, {ev.settings.runs} {what}, betaconform {__version__}). {MARGIN_DEFINITION}."
            out: list[Block] = [Lines((intro,)), *margin_views(ev)]
            note = skipped_note(ev)
            return out + ([Lines((note,))] if note else [])
        out = [b for view in margin_views(ev, compact=True) for b in (view, BLANK)]
        return out + [Lines((f"seed {ev.seed}; " + MARGIN_DEFINITION,))]

    @property
    def notes(self) -> tuple[str, ...]:
        ev = self.evaluation
        warn = tuple(f"warning: {c.dataset} r={c.size}: {c.draws.not_converged} fit(s) did not converge" for c in ev.cells
                     if c.draws.not_converged)
        note = skipped_note(ev)
        return self.input_notes + warn + ((note,) if note else ())

    def json(self) -> str:
        return to_json([self.evaluation.to_dict(self.per_run)])

    def csv(self) -> str:
        return to_csv(*csv_rows(self.evaluation))

