"""The HTML rendering of a result's blocks: one self-contained page (inline CSS and SVG; no script, no fonts,
images or styles fetched), readable in any browser and as plain HTML without JavaScript.

Tables are the same views as the terminal's and the Markdown's (views.TableView); charts (views.Chart) are drawn
by svg.py. `score` (judges vs corrected) adds its Chart(kind="hbars") block to its blocks and it is drawn here
with the others: nothing in this module is specific to a command.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..escape import html as _e
from ..version import __version__
from .svg import to_svg
from .views import Block, Chart, TableView

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 70em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
.wide { overflow-x: auto; max-width: 100%; } /* a table wider than the page scrolls in its box, never cut */
td.l { white-space: normal; overflow-wrap: break-word; } /* long text (an ensemble's members) wraps; numbers never */
caption { caption-side: top; text-align: left; font-weight: bold; padding-bottom: 0.3em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; white-space: nowrap; }
th { background: #f3f3f3; } td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
p.note { color: #555; font-size: 0.85em; margin-top: 0; white-space: pre-line; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 0.85em; }
svg { max-width: 100%; height: auto; }
.gate-failed { background: #fdecea; border-left: 4px solid #c62828; padding: 0.6em 1em; }
.gate-passed { background: #e8f5e9; border-left: 4px solid #2e7d32; padding: 0.6em 1em; }
"""


def table_html(view: TableView) -> str:
    """A table in a box that scrolls sideways when the table is wider than the page (many judges, long names)."""
    align = view.alignment()
    out = ['<div class="wide"><table>']
    if view.title:
        out.append(f"<caption>{_e(view.title)}</caption>")
    out.append("<thead><tr>" + "".join(f'<th class="{a}">{_e(c)}</th>' for c, a in zip(view.columns, align)) + "</tr></thead>")
    out.append("<tbody>")
    for row in view.rows:
        out.append("<tr>" + "".join(f'<td class="{a}">{_e(c)}</td>' for c, a in zip(row, align)) + "</tr>")
    out.append("</tbody></table></div>")
    if view.caption:
        out.append(f'<p class="note">{_e(view.caption, keep_newlines=True)}</p>')
    return "\n".join(out)


def chart_html(chart: Chart) -> str:
    caption = f"<figcaption>{_e(chart.caption)}</figcaption>" if chart.caption else ""
    return f"<figure>\n{to_svg(chart)}\n{caption}</figure>"


def to_html(blocks: Sequence[Block], title: str, verdicts: Sequence[tuple[bool, str]] = ()) -> str:
    """A whole page: the title, each gate's verdict at the top (failures first), the summary of several datasets
    (views.TableView.summary: last in a terminal, first here), then every other block in order."""
    body: list[str] = [f"<h1>{_e(title)}</h1>"]
    for passed, line in sorted(verdicts, key=lambda v: v[0]):
        body.append(f'<p class="{"gate-passed" if passed else "gate-failed"}"><strong>{"gate passed" if passed else "gate failed"}:</strong> {_e(line)}</p>')
    first = [b for b in blocks if isinstance(b, TableView) and b.summary]
    for b in first + [b for b in blocks if not (isinstance(b, TableView) and b.summary)]:
        if isinstance(b, TableView):
            body.append(table_html(b))
        elif isinstance(b, Chart):
            body.append(chart_html(b))
        elif b.heading:
            body.append(f"<h2>{_e(' '.join(b.lines))}</h2>")
        else:
            text = "\n".join(_e(x) for x in b.lines).strip("\n")
            if text:
                aligned = any("  " in x.strip() for x in b.lines)  # text laid out in columns keeps its spacing
                body.append(f"<pre>{text}</pre>" if aligned else f"<p>{text}</p>".replace("\n", "<br>\n"))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"betaconform {_e(__version__)}\">\n"
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + f"\n<footer><p class=\"note\">betaconform {_e(__version__)}</p></footer>\n</body>\n</html>\n"
    )
