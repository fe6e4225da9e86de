"""The paper's figures drawn from an evaluation of the user's data.

- Fig. 3: observed distribution of correct counts against the Binomial and the mixture fitted on r labeled
  items (mean pmf over the draws);
- Fig. 4: majority-vote error against ensemble size k: actual, and each estimator's mean over the draws with
  a +-1 sd band.

matplotlib is imported inside the functions (never on the `fit` path) and only through its object API with
the Agg canvas: no pyplot, no global backend switch, works headless.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .errors import UsageError
from .evaluate import ESTIMATOR_LABELS, Cell, Evaluation

FIGURE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
CURVE_METHODS = ("default", "paper", "binomial", "empirical")
COLOURS = {
    "actual": "#000000",
    "default": "#1f77b4",
    "plugin": "#17becf",
    "paper": "#ff7f0e",
    "binomial": "#d62728",
    "beta_binomial": "#9467bd",
    "empirical": "#2ca02c",
}


def figure_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FIGURE_FORMATS:
        raise UsageError(f"--plot: cannot tell the figure format of {str(path)!r}; use a .png, .svg or .pdf name")
    return FIGURE_FORMATS[suffix]


def _hist_panel(ax: Any, cell: Cell) -> None:
    """Fig. 3: observed share of items with S correct judges (at the largest K) vs Binomial vs mixture."""
    h = np.asarray(cell.histogram, dtype=float)
    s = np.arange(len(h))
    observed = h / h.sum() if h.sum() > 0 else h
    ax.bar(s, observed, color="#bbbbbb", edgecolor="#777777", label="observed (all items)")
    if len(cell.pmf_binomial) == len(h):
        ax.plot(s, cell.pmf_binomial, "o-", color=COLOURS["binomial"], ms=3, lw=1.2, label="Binomial")
        ax.plot(s, cell.pmf_mixture, "s-", color=COLOURS["plugin"], ms=3, lw=1.2, label="BB mixture")
    ax.set_xlabel(f"correct judges S of K = {cell.judges}")
    ax.set_ylabel("share of items")
    ax.set_xticks(s)
    ax.set_title(f"{cell.dataset}: distribution (fits on r = {cell.size})", fontsize=9)
    ax.legend(fontsize=7, frameon=False)


def _error_panel(ax: Any, cell: Cell) -> None:
    """Fig. 4: majority-vote error against k; estimator mean over draws with a +-1 sd band."""
    ks = np.array(cell.ks)
    actual = np.asarray(cell.actual, dtype=float)
    for m in CURVE_METHODS:
        if m not in cell.methods:
            continue
        j = cell.methods.index(m)
        e = cell.estimates[:, j, :]
        mean = np.nanmean(e, axis=0) if np.isfinite(e).any() else np.full(len(ks), np.nan)
        sd = np.nanstd(e, axis=0, ddof=1) if e.shape[0] > 1 else np.zeros(len(ks))
        ax.plot(ks, 100 * mean, "-", color=COLOURS[m], lw=1.3, label=ESTIMATOR_LABELS[m])
        ax.fill_between(ks, 100 * (mean - sd), 100 * (mean + sd), color=COLOURS[m], alpha=0.15, lw=0)
    ax.plot(ks, 100 * actual, "o-", color=COLOURS["actual"], ms=3, lw=1.6, label="actual")
    ax.set_xlabel("ensemble size k (even k: ties count half)")
    ax.set_ylabel("majority-vote error (%)")
    ax.set_xticks(ks)
    ax.set_title(f"{cell.dataset}: error vs k ({cell.runs} draws of r = {cell.size}, ±1 sd)", fontsize=9)
    ax.legend(fontsize=7, frameon=False)


def evaluation_figure(ev: Evaluation, size: int | None = None, max_datasets: int = 20) -> Any:
    """One row per dataset: Fig. 3 (left) and Fig. 4 (right) at r = size (default: the largest r evaluated
    for that dataset)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    chosen: list[Cell] = []
    for name in ev.datasets:
        cells = [c for c in ev.cells if c.dataset == name and (size is None or c.size == size)]
        if cells:
            chosen.append(max(cells, key=lambda c: c.size))
    if not chosen:
        raise UsageError(
            "--plot: nothing to draw"
            + (f" at r = {size}" if size is not None else "")
            + " (every dataset was skipped: fewer than r + 1 items)"
        )
    chosen = chosen[:max_datasets]
    fig = Figure(figsize=(10, 3.1 * len(chosen)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(chosen), 2, squeeze=False)
    for row, cell in zip(axes, chosen):
        _hist_panel(row[0], cell)
        _error_panel(row[1], cell)
    return fig


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save atomically: a temporary file in the same directory, then os.replace."""
    path = Path(path)
    fmt = figure_format(path)
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp.{fmt}", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format=fmt, dpi=110)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def plot_evaluation(ev: Evaluation, path: str | Path, size: int | None = None) -> Path:
    """Draw figures 3 and 4 of the paper for every evaluated dataset into `path` (.png, .svg or .pdf)."""
    figure_format(path)  # fail before the work
    return save_figure(evaluation_figure(ev, size), path)
