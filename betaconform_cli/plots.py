"""The paper's figures drawn from an evaluation of the user's data.

- Fig. 3: observed distribution of correct counts against the Binomial and the mixture fitted on r labeled
  items (mean pmf over the draws);
- Fig. 4: majority-vote error against ensemble size k: actual, and each estimator's mean over the draws with
  a +-1 sd band;
- Fig. 6 (adaptive mode): labeled items used against the stopping threshold, with Proposition 4.1's curve.

matplotlib is imported inside the functions (never on the `fit` path) and only through its object API with
the Agg canvas: no pyplot, no global backend switch, works headless.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .errors import P0, ParameterError, UsageError
from .estimators import REGISTRY
from .evaluate import Cell, Evaluation

FIGURE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
ACTUAL_COLOUR = "#000000"  # the estimators' colours, markers and dashes: estimators.REGISTRY


def _plain(name: str) -> str:
    """A dataset name drawn as written (escape.matplotlib)."""
    from .escape import matplotlib

    return matplotlib(name)


def figure_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FIGURE_FORMATS:
        raise ParameterError("plot", f"{P0}: cannot tell the figure format of {str(path)!r}; use a .png, .svg or .pdf name")
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:  # checked before the experiments run, not after them
        raise ParameterError("plot", f"{P0} draws with matplotlib, which this install lacks: install the [plot] extra "
                                     "(pip install '.[plot]' in the checkout; docs/INSTALL.md)")
    return FIGURE_FORMATS[suffix]


def _hist_panel(ax: Any, cell: Cell) -> None:
    """Fig. 3: observed share of items with S correct judges (at the largest K) vs Binomial vs mixture."""
    fig = cell.figure
    h = np.asarray(fig.histogram, dtype=float)
    s = np.arange(len(h))
    observed = h / h.sum() if h.sum() > 0 else h
    ax.bar(s, observed, color="#bbbbbb", edgecolor="#777777", label="observed (all items)")
    if len(fig.pmf_binomial) == len(h):
        ax.plot(s, fig.pmf_binomial, "o-", color=REGISTRY["binomial"].style.colour, ms=3, lw=1.2, label="Binomial")
        ax.plot(s, fig.pmf_mixture, "s-", color=REGISTRY["plugin"].style.colour, ms=3, lw=1.2, label="MAP mixture")
    ax.set_xlabel(f"correct judges S of K = {cell.judges}")
    ax.set_ylabel("share of items")
    ax.set_xticks(s)
    fitted = len(fig.pmf_binomial) == len(h)
    ax.set_title(f"{_plain(cell.dataset)}\n" + (f"distribution; fits on {cell.title}" if fitted else "distribution of all items"), fontsize=9)
    ax.legend(fontsize=7, frameon=False)


def curve(cell: Cell, method: str) -> tuple[np.ndarray, np.ndarray]:
    """One estimator's mean and sd over the draws per k, as the tables compute them: undefined (NaN, not drawn)
    at a k where any draw is undefined (empirical where a drawn item has fewer than k judges)."""
    e = cell.draws.estimates[:, cell.methods.index(method), :]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = e.mean(axis=0)
        sd = e.std(axis=0, ddof=1) if e.shape[0] > 1 else np.zeros(e.shape[1])
    return mean, np.where(np.isfinite(mean), sd, np.nan)


def _error_panel(ax: Any, cell: Cell) -> None:
    """Fig. 4: majority-vote error against k; estimator mean over draws with a +-1 sd band. Every series is
    visible: its own marker and dash, and a small sideways offset, so that equal curves do not hide each other;
    nothing is drawn at a k where the table says the value is undefined."""
    ks = np.array(cell.ks, dtype=float)
    actual = np.asarray(cell.actual, dtype=float)
    shown = [m for m, e in REGISTRY.items() if e.curve and m in cell.methods and np.isfinite(curve(cell, m)[0]).any()]
    spread = 0.3  # ks are whole numbers: offsets within +-0.15 never reach the next k
    for i, m in enumerate(shown):
        mean, sd = curve(cell, m)
        x = ks + (spread * (i / max(len(shown) - 1, 1) - 0.5) if len(shown) > 1 else 0.0)
        e = REGISTRY[m]
        label = "no transfer" if m == "default" and "transfer" in cell.methods else e.label
        ax.plot(x, 100 * mean, linestyle=e.style.dash, marker=e.style.marker, color=e.style.colour, ms=4, lw=1.3, label=label)
        ax.fill_between(x, 100 * (mean - sd), 100 * (mean + sd), color=e.style.colour, alpha=0.12, lw=0)
    ax.plot(ks, 100 * actual, "o-", color=ACTUAL_COLOUR, ms=3, lw=1.6, label="actual", zorder=5)
    ax.set_xlabel("ensemble size k (even k: ties count half; estimators offset sideways)")
    ax.set_ylabel("majority-vote error (%)")
    ax.set_xticks(ks)
    ax.set_ylim(bottom=0)
    ax.set_title(f"{_plain(cell.dataset)}\nerror vs k; {cell.runs} draws, {cell.title}, ±1 sd", fontsize=9)
    ax.legend(fontsize=7, frameon=False)


def _draw_size(cell: Cell) -> float:
    return float(cell.size) if cell.rule is None else float(np.mean(cell.rule.samples))


def _samples_panel(ax: Any, ev: Evaluation) -> None:
    """Fig. 6: labeled items used against the rule's threshold, per dataset (mean +- sd over runs), and
    Proposition 4.1's curve for the conformal rule."""
    info = ev.rule or {}
    values = [float(v) for v in info.get("values", [])]
    param = str(info.get("parameter", "threshold"))
    for name in ev.datasets:
        pts = []
        for key, v in zip(ev.keys, values):
            c = ev.cell(name, key)
            if c is not None and c.rule is not None:
                pts.append((v, float(np.mean(c.rule.samples)), float(np.std(c.rule.samples, ddof=1))))
        if pts:
            x, y, e = (np.array(t) for t in zip(*sorted(pts)))
            ax.errorbar(x, y, yerr=e, marker="o", ms=3, lw=1, capsize=2, label=_plain(name))
    if info.get("rule") == "conformal" and values:
        from .stopping import theoretical_samples

        tau = float(info.get("tau", 25.0))
        lo, hi = min(values), max(values)
        if hi - lo < 0.5 * hi:  # one xi (or a narrow range): show the curve around it, not a lone point
            lo, hi = 0.5 * lo, 1.5 * hi
        grid = np.linspace(lo, hi, 80)
        ax.plot(grid, [theoretical_samples(float(g), tau) for g in grid], "k--", lw=1.5, label=f"Proposition 4.1 (tau = {tau:g})")
        ax.set_xlim(lo, hi)
    elif len(set(values)) == 1 and values[0] > 0:  # one threshold: an axis around it, not a 0.003-wide one
        ax.set_xlim(0.5 * values[0], 1.5 * values[0])
    ax.set_ylim(bottom=0)
    ax.set_xlabel(param)
    ax.set_ylabel("labeled items used")
    ax.set_title(f"{info.get('rule', 'stopping')} rule: samples against {param} ({ev.settings.runs} runs, ±1 sd)", fontsize=9)
    ax.legend(fontsize=7, frameon=False, ncol=2)


def evaluation_figure(ev: Evaluation, size: int | str | None = None, max_datasets: int = 20) -> Any:
    """One row per dataset: Fig. 3 (left) and Fig. 4 (right) at r = size (default: the largest r evaluated
    for that dataset; adaptive mode: the setting that used the most labels), under a full-width Fig. 6 panel
    in adaptive mode."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    key = f"r={size}" if isinstance(size, int) else size
    chosen: list[Cell] = []
    for name in ev.datasets:
        cells = [c for c in ev.cells if c.dataset == name and (key is None or c.key == key)]
        if cells:
            chosen.append(max(cells, key=_draw_size))
    if not chosen:
        raise UsageError(
            "--plot: nothing to draw"
            + (f" at {key}" if key is not None else "")
            + " (every dataset was skipped: fewer than r + 1 items)"
        )
    chosen = chosen[:max_datasets]
    top = 1 if ev.mode == "adaptive" else 0
    fig = Figure(figsize=(10, 3.3 * (len(chosen) + top)), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(len(chosen) + top, 2)
    if top:
        _samples_panel(fig.add_subplot(grid[0, :]), ev)
    for i, cell in enumerate(chosen):
        _hist_panel(fig.add_subplot(grid[i + top, 0]), cell)
        _error_panel(fig.add_subplot(grid[i + top, 1]), cell)
    return fig


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save through the one atomic writer (atomic.py)."""
    from .atomic import atomic_write

    path = Path(path)
    fmt = figure_format(path)
    atomic_write(path, lambda fh: fig.savefig(fh, format=fmt, dpi=110))
    return path


def plot_evaluation(ev: Evaluation, path: str | Path, size: int | str | None = None) -> Path:
    """Draw figures 3 and 4 of the paper for every evaluated dataset (and Fig. 6 in adaptive mode) into
    `path` (.png, .svg or .pdf)."""
    figure_format(path)  # fail before the work
    return save_figure(evaluation_figure(ev, size), path)
