"""Charts (views.Chart) as inline SVG for the HTML report: no JavaScript, no fonts or files fetched.

Charts that tell the truth at a glance: every series gets its own colour, marker and dash and a small sideways
offset, so that one never hides under another; the value axis starts at 0 and ends just above the data (a lone
point is not blown up to fill a 0.3-point-wide axis); a value the tables call undefined (None) is not drawn, and
a line breaks there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..escape import html as _t
from .views import BEYOND, Chart, Series

W, H = 640, 340  # the drawing's size in px
LEFT, RIGHT, TOP, BOTTOM = 62, 16, 34, 62
COLOURS = ("#1f77b4", "#d62728", "#9467bd", "#2ca02c", "#ff7f0e", "#8c564b")
MARKERS = ("circle", "square", "diamond", "triangle", "circle", "square")
DASHES = ("", "6 3", "2 2", "8 3 2 3", "", "6 3")
FONT = 'font-family="sans-serif" font-size="11"'


_SHAPES = {"o": "circle", "s": "square", "^": "triangle", "v": "triangle", "D": "diamond"}
_DASHES = {"-": "", "--": "6 3", ":": "2 2", "-.": "8 3 2 3"}
KEYED = {"labels_only": ("#7f7f7f", "diamond", "4 2")}  # series that are no estimator but recur across charts


def style(key: str) -> tuple[str, str, str] | None:
    """(colour, marker, dash) of a series key: an estimator's own (estimators.REGISTRY: the paper figures'
    colours), or KEYED's; None for a key neither knows."""
    from ..estimators import REGISTRY

    if key in KEYED:
        return KEYED[key]
    e = REGISTRY.get(key)
    if e is None:
        return None
    dash = e.style.dash
    svg_dash = _DASHES.get(dash, "") if isinstance(dash, str) else " ".join(str(n) for n in dash[1])
    return e.style.colour, _SHAPES.get(e.style.marker, "circle"), svg_dash


def styles(series: Sequence[Series]) -> list[tuple[str, str, str]]:
    """Each series' (colour, marker, dash), the one rule of every chart: a series with a key is drawn by it, alike
    in every chart of the page (an estimator is the same colour in each dataset's chart, whichever others are
    there); one without takes the first palette colour not yet used in this chart."""
    keyed = [style(s.key) if s.key else None for s in series]
    taken = {k[0] for k in keyed if k is not None}
    free = iter([(c, m, d) for c, m, d in zip(COLOURS, MARKERS, DASHES) if c not in taken] + list(zip(COLOURS, MARKERS, DASHES)))
    return [k if k is not None else next(free) for k in keyed]


def nice_top(value: float) -> float:
    """The axis end: a round number a little above `value` (1, 2, 2.5 or 5 times a power of ten)."""
    if not value > 0 or not math.isfinite(value):
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * power >= value * 1.0000001:
            return float(step * power)
    return float(10 * power)  # pragma: no cover


def _ticks(top: float) -> list[float]:
    return [top * i / 5 for i in range(6)]


def _label(value: float, percent: bool, top: float) -> str:
    if percent:
        digits = 0 if top >= 0.05 else (1 if top >= 0.005 else 2)
        return f"{100 * value:.{digits}f}%"
    return f"{value:g}"


def _value(v: float, percent: bool) -> str:
    return f"{100 * v:.1f}%" if percent else f"{v:.1f}"


def _marker(shape: str, x: float, y: float, colour: str, tip: str = "", r: float = 3.5) -> str:
    """A marker shape; `tip` its tooltip (an SVG <title>, shown on hover without script)."""
    if shape == "square":
        tag, attrs = "rect", f'x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}"'
    elif shape == "diamond":
        r *= 1.3
        tag, attrs = "polygon", f'points="{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}"'
    elif shape == "triangle":
        r *= 1.25
        tag, attrs = "polygon", f'points="{x:.1f},{y - r:.1f} {x + r:.1f},{y + r * 0.8:.1f} {x - r:.1f},{y + r * 0.8:.1f}"'
    else:
        tag, attrs = "circle", f'cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}"'
    return f'<{tag} {attrs} fill="{colour}"><title>{_t(tip)}</title></{tag}>' if tip else f'<{tag} {attrs} fill="{colour}"/>'


def _row_label(label: str, x: float, y: float, width: float) -> str:
    """A row's label ending at x, cut with "…" to the `width` it has (about 6 px a character at 11 px), the
    whole label its tooltip: a long judge name never runs off the drawing's left edge."""
    room = max(4, int(width / 6.0))
    shown = label if len(label) <= room else label[: room - 1] + "…"
    tip = f"<title>{_t(label)}</title>" if shown != label else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="end">{_t(shown)}{tip}</text>'


def _frame(chart: Chart, height: int = H) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {W} {height}" width="{W}" height="{height}" {FONT}>',
        f"<title>{_t(chart.title)}</title>",
        f'<text x="{W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">{_t(chart.title)}</text>',
    ]


def _axes(out: list[str], top: float, percent: bool, x_label: str, y_label: str, height: int = H) -> None:
    bottom = height - BOTTOM
    for v in _ticks(top):
        y = bottom - (bottom - TOP) * v / top
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(v, percent, top)}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}" stroke="#444"/>')
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{bottom}" y2="{bottom}" stroke="#444"/>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{bottom + 34}" text-anchor="middle">{_t(x_label)}</text>')
    out.append(f'<text transform="translate(14,{(TOP + bottom) / 2}) rotate(-90)" text-anchor="middle">{_t(y_label)}</text>')


def _legend(out: list[str], entries: Sequence[tuple[str, str, str, str]], height: int = H) -> None:
    """entries: (name, colour, marker, dash) in one row under the axis label."""
    x = float(LEFT)
    y = height - 12
    for name, colour, marker, dash in entries:
        out.append(f'<line x1="{x:.1f}" x2="{x + 22:.1f}" y1="{y - 4}" y2="{y - 4}" stroke="{colour}" stroke-width="2"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        out.append(_marker(marker, x + 11, y - 4, colour))
        out.append(f'<text x="{x + 27:.1f}" y="{y}">{_t(name)}</text>')
        x += 36 + 6.2 * len(name)


def _values(chart: Chart) -> list[float]:
    vals = [v for s in chart.series for seq in (s.y, s.low, s.high) for v in seq if v is not None and math.isfinite(v)]
    vals += [v for row in chart.cells for v in row if v is not None and math.isfinite(v)]
    return vals


def lines_svg(chart: Chart) -> str:
    """Series against x (categories evenly spaced), each offset sideways so that equal values stay visible; the
    first series' interval a band, the others' error bars."""
    n = max(len(chart.x), 1)
    top = nice_top(max(_values(chart), default=0.0))
    bottom = H - BOTTOM
    step = (W - LEFT - RIGHT) / n
    out = _frame(chart)
    past = next((i for i, label in enumerate(chart.x) if label.endswith(BEYOND)), None)
    if past is not None:  # k beyond the most judges any item has: extrapolated, shaded
        x0 = LEFT + step * past
        out.append(f'<rect class="extrapolated" x="{x0:.1f}" y="{TOP}" width="{W - RIGHT - x0:.1f}" height="{bottom - TOP}" '
                   'fill="#888888" fill-opacity="0.12"><title>extrapolated: k beyond the most judges any item has</title></rect>')
        out.append(f'<text x="{x0 + 4:.1f}" y="{TOP + 12}" font-size="11" fill="#555555">extrapolated</text>')
    _axes(out, top, chart.percent, chart.x_label, chart.y_label)
    for i, label in enumerate(chart.x):
        out.append(f'<text x="{LEFT + step * (i + 0.5):.1f}" y="{bottom + 15}" text-anchor="middle">{_t(label)}</text>')
    k = len(chart.series)
    width = min(step * 0.5, 6.0 * k)
    legend = []
    drawn = styles(chart.series)
    for j, s in enumerate(chart.series):
        colour, marker, dash = drawn[j]
        offset = (j - (k - 1) / 2) * (width / max(k - 1, 1)) if k > 1 else 0.0

        def px(i: int, off: float = offset) -> float:
            return LEFT + step * (i + 0.5) + off

        def py(v: float) -> float:
            return bottom - (bottom - TOP) * v / top

        if s.low and s.high and j == 0:
            runs = _defined_runs([None if lo is None or hi is None else 0.0 for lo, hi in zip(s.low, s.high)])
            for run in runs:
                if len(run) == 1:  # a lone k: its interval as a bar, not an invisible one-point band
                    i = run[0]
                    out.append(f'<line x1="{px(i):.1f}" x2="{px(i):.1f}" y1="{py(float(s.low[i])):.1f}" '  # type: ignore[arg-type]
                               f'y2="{py(float(s.high[i])):.1f}" stroke="{colour}" stroke-width="6" stroke-opacity="0.3"/>')  # type: ignore[arg-type]
                    continue
                upper = " ".join(f"{px(i):.1f},{py(float(s.high[i])):.1f}" for i in run)  # type: ignore[arg-type]
                lower = " ".join(f"{px(i):.1f},{py(float(s.low[i])):.1f}" for i in reversed(run))  # type: ignore[arg-type]
                out.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.15" stroke="{colour}" stroke-opacity="0.4"/>')
        elif s.low and s.high:
            for i, (lo, hi) in enumerate(zip(s.low, s.high)):
                if lo is not None and hi is not None:
                    out.append(f'<line x1="{px(i):.1f}" x2="{px(i):.1f}" y1="{py(lo):.1f}" y2="{py(hi):.1f}" stroke="{colour}"/>')
        for run in _defined_runs(list(s.y)):
            if len(run) > 1:
                pts = " ".join(f"{px(i):.1f},{py(float(s.y[i])):.1f}" for i in run)  # type: ignore[arg-type]
                out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.8"'
                           + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        for i, v in enumerate(s.y):
            if v is not None and math.isfinite(v):
                out.append(_marker(marker, px(i), py(v), colour, f"{s.name} at {chart.x[i].removesuffix(BEYOND)}: {_value(v, chart.percent)}"))
        legend.append((s.name, colour, marker, dash))
    _legend(out, legend)
    out.append("</svg>")
    return "\n".join(out)


def _defined_runs(values: Sequence[float | None]) -> list[list[int]]:
    """Indices of consecutive defined values: a line breaks where a value is undefined."""
    runs: list[list[int]] = [[]]
    for i, v in enumerate(values):
        if v is None or not math.isfinite(v):
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(i)
    return [r for r in runs if r]


def bars_svg(chart: Chart) -> str:
    """Bars of series[0] per category, the other series as markers joined by a line (observed vs fitted)."""
    n = max(len(chart.x), 1)
    top = nice_top(max(_values(chart), default=0.0))
    bottom = H - BOTTOM
    step = (W - LEFT - RIGHT) / n
    out = _frame(chart)
    _axes(out, top, chart.percent, chart.x_label, chart.y_label)

    def py(v: float) -> float:
        return bottom - (bottom - TOP) * v / top

    legend = []
    for i, label in enumerate(chart.x):
        out.append(f'<text x="{LEFT + step * (i + 0.5):.1f}" y="{bottom + 15}" text-anchor="middle">{_t(label)}</text>')
    if chart.series:
        bars = chart.series[0]
        for i, v in enumerate(bars.y):
            if v is not None:
                x = LEFT + step * (i + 0.15)
                out.append(f'<rect x="{x:.1f}" y="{py(v):.1f}" width="{step * 0.7:.1f}" height="{bottom - py(v):.1f}" '
                           f'fill="#bbbbbb" stroke="#777"><title>{_t(bars.name)}, {_t(chart.x[i])}: {_value(v, chart.percent)}</title></rect>')
        legend.append((bars.name, "#999999", "square", ""))
    drawn = styles(chart.series[1:])
    for j, s in enumerate(chart.series[1:]):
        colour, marker, _ = drawn[j]
        for run in _defined_runs(list(s.y)):
            pts = " ".join(f"{LEFT + step * (i + 0.5):.1f},{py(float(s.y[i])):.1f}" for i in run)  # type: ignore[arg-type]
            out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for i, v in enumerate(s.y):
            if v is not None:
                out.append(_marker(marker, LEFT + step * (i + 0.5), py(v), colour))
        legend.append((s.name, colour, marker, ""))
    _legend(out, legend)
    out.append("</svg>")
    return "\n".join(out)


def _diverging(v: float, scale: float) -> str:
    """White at 0, red for more shared mistakes than independence, blue for fewer."""
    t = max(-1.0, min(1.0, v / scale)) if scale > 0 else 0.0
    if t >= 0:
        r, g, b = 255, round(255 - 180 * t), round(255 - 190 * t)
    else:
        r, g, b = round(255 + 190 * t), round(255 + 130 * t), 255
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(chart: Chart) -> str:
    """Rows x columns of coloured cells with their value (points when `percent`); no colour where None."""
    n_rows, n_cols = len(chart.rows), len(chart.x)
    label_w = min(200, 12 + 6.5 * max((len(r) for r in chart.rows), default=1))
    cell = max(18.0, min(44.0, (W - label_w - RIGHT) / max(n_cols, 1)))
    height = int(TOP + 20 + cell * n_rows + 40)
    vals = [abs(v) for v in _values(chart)]
    scale = max(vals, default=0.0)
    out = _frame(chart, height)
    y0 = TOP + 20
    for c, label in enumerate(chart.x):
        out.append(f'<text x="{label_w + cell * (c + 0.5):.1f}" y="{y0 - 6}" text-anchor="middle">{_t(label)}</text>')
    for r, label in enumerate(chart.rows):
        y = y0 + cell * r
        out.append(_row_label(label, label_w - 6, y + cell / 2 + 4, label_w - 12))
        for c in range(n_cols):
            v = chart.cells[r][c] if r < len(chart.cells) and c < len(chart.cells[r]) else None
            x = label_w + cell * c
            if r == c:
                fill, text = "#f4f4f4", "·"
            elif v is None or not math.isfinite(v):
                fill, text = "#dddddd", "—"
            else:
                fill, text = _diverging(v, scale), f"{100 * v:+.0f}" if chart.percent else f"{v:.2g}"
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" height="{cell:.1f}" fill="{fill}" stroke="#ffffff"/>')
            if cell >= 22:
                out.append(f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" font-size="10">{text}</text>')
    top = y0 + cell * n_rows + 22
    out.append(f'<text x="{label_w}" y="{top:.1f}">colour: -{100 * scale:.0f} (blue) … 0 (white) … +{100 * scale:.0f} (red) points</text>')
    out.append("</svg>")
    return "\n".join(out)


def _hbar_value(v: float, percent: bool) -> str:
    return _value(v, percent) if percent else f"{v:.2f}"


def hbars_svg(chart: Chart) -> str:
    """One horizontal bar per row (series[0]) from 0, with its interval as a whisker: `score`'s judges-vs-corrected
    bar, `judges`' kappa per judge (a negative value's bar runs left of a zero line)."""
    s = chart.series[0] if chart.series else None
    label_w = min(220, 12 + 6.5 * max((len(r) for r in chart.rows), default=1))
    bar = 26
    height = int(TOP + 10 + bar * len(chart.rows) + 50)
    values = _values(chart)
    top = nice_top(max(values, default=0.0))
    bottom = -nice_top(-min(values)) if values and min(values) < 0 else 0.0
    out = _frame(chart, height)
    span = W - label_w - RIGHT - 52  # room for the value written past the longest whisker

    def px(v: float) -> float:
        return label_w + span * (v - bottom) / (top - bottom)

    zero = px(0.0)
    for i, label in enumerate(chart.rows):
        y = TOP + 10 + bar * i
        out.append(_row_label(label, label_w - 6, y + bar / 2 + 4, label_w - 12))
        v = s.y[i] if s is not None and i < len(s.y) else None
        if v is None:
            out.append(f'<text x="{zero + 4:.1f}" y="{y + bar / 2 + 4:.1f}">—</text>')
            continue
        colour = COLOURS[i % len(COLOURS)]
        out.append(f'<rect x="{min(zero, px(v)):.1f}" y="{y + 4:.1f}" width="{abs(px(v) - zero):.1f}" height="{bar - 8}" fill="{colour}" fill-opacity="0.8">'
                   f"<title>{_t(label)}: {_hbar_value(v, chart.percent)}</title></rect>")
        end = max(px(v), zero)
        if s is not None and s.low and s.high and s.low[i] is not None and s.high[i] is not None:
            lo, hi = px(float(s.low[i])), px(float(s.high[i]))  # type: ignore[arg-type]
            out.append(f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y + bar / 2:.1f}" y2="{y + bar / 2:.1f}" stroke="#000" stroke-width="1.5"/>')
            for cap in (lo, hi):  # the whisker's ends, so that its extent reads without the bar
                out.append(f'<line x1="{cap:.1f}" x2="{cap:.1f}" y1="{y + bar / 2 - 5:.1f}" y2="{y + bar / 2 + 5:.1f}" stroke="#000" stroke-width="1.5"/>')
            end = max(end, hi)
        # the value past the bar and the whisker, on a white halo: never struck through by a line
        out.append(f'<text x="{end + 5:.1f}" y="{y + bar / 2 + 4:.1f}" paint-order="stroke" stroke="#fff" stroke-width="3">'
                   f"{_hbar_value(v, chart.percent)}</text>")
    axis_y = TOP + 10 + bar * len(chart.rows)
    ticks = _ticks(top) + ([-t for t in _ticks(-bottom) if t > 0] if bottom < 0 else [])
    for v in ticks:
        out.append(f'<text x="{px(v):.1f}" y="{axis_y + 14:.1f}" text-anchor="middle">{_label(v, chart.percent, max(top, -bottom))}</text>')
    if bottom < 0:
        out.append(f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="{TOP + 10}" y2="{axis_y:.1f}" stroke="#444"/>')
    out.append(f'<text x="{label_w + span / 2:.1f}" y="{axis_y + 34:.1f}" text-anchor="middle">{_t(chart.x_label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


DRAW = {"lines": lines_svg, "bars": bars_svg, "heatmap": heatmap_svg, "hbars": hbars_svg}


def to_svg(chart: Chart) -> str:
    return DRAW[chart.kind](chart)
