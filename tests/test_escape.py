"""The escaping module (betaconform_cli/escape.py) on hostile names, checked by the readers of each target: the
stdlib HTML and XML parsers find no element, attribute or comment a name brought in; Markdown has no raw `<`,
no unescaped pipe, backtick or bracket; rich renders a name as its text; a terminal line holds no invisible
character; JSON reads back the same value. Each target gets several members of the class (markup, comments,
bidirectional overrides, C0/C1 controls, zero-width and tag characters, formulas, workflow commands)."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from html.parser import HTMLParser
from xml.etree import ElementTree as ET

import pytest

from betaconform_cli import escape
from betaconform_cli.errors import P0, P1, ParameterError
from betaconform_cli.file_names import file_stem, file_stems
from betaconform_cli.report import Verdict
from betaconform_cli.report.html import to_html
from betaconform_cli.report.junit import to_junit
from betaconform_cli.report.render import markdown_table, to_csv, to_json, to_markdown
from betaconform_cli.report.svg import to_svg
from betaconform_cli.report.views import Chart, Lines, Series, TableView

HOSTILE = [
    "<img src=https://evil.example/x.png>",
    "run <!-- ",
    "--> <script>alert(1)</script>",
    '" onmouseover="alert(1)',
    "' autofocus onfocus='x",
    "]]><x/>",
    "[bold red]boom[/]",
    "a|b `c` *d* _e_ ~f~ $g$",
    "[click](https://evil.example) ![i](https://evil.example/i.png)",
    "&lt;b&gt; &#60;",
    "x\u202ey\u2066z\u2069",  # bidi override and isolates
    "c1\x85\x9b31mnel",  # NEL and CSI (C1)
    "esc\x1b[2J\x07\x00nul",  # C0: a clear-screen escape, BEL, NUL
    "zw\u200bj\u200d\ufeff\u2060",  # zero-width space, joiner, BOM, word joiner
    "tag\U000e0041\U000e0042",  # invisible tag characters
    "line\nbreak\r\n::error::x",
    "::warning::y",
    "=cmd|'/C calc'!A0",
    "\\[bold]escaped?\\",
    "sur\udce9rogate",
]
INVISIBLE = re.compile(f"[{escape.INVISIBLE}]")


def _invisible(text: str) -> list[str]:
    return [c for c in text if INVISIBLE.match(c) or unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")
            and c not in "\n\t"]


class _Elements(HTMLParser):
    """Every start tag, attribute and comment the parser finds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.comments: list[str] = []
        self.data: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        self.data.append(data)


def _parse(html: str) -> _Elements:
    p = _Elements()
    p.feed(html)
    p.close()
    return p


@pytest.mark.parametrize("name", HOSTILE)
class TestTargets:
    def test_html_text_and_attribute(self, name: str) -> None:
        page = f'<p title="{escape.html(name)}" class=\'{escape.html(name)}\'>{escape.html(name)}</p>'
        p = _parse(page)
        assert p.tags == ["p"] and [a for a, _ in p.attrs] == ["title", "class"] and not p.comments
        shown = escape.clean(name, keep_newlines=False)
        assert p.attrs[0][1] == shown and "".join(p.data) == shown  # the name as written, its controls as escapes
        assert not _invisible(page.replace("\n", ""))

    def test_html_page(self, name: str) -> None:
        table = TableView(title=name, columns=("judge", name), rows=((name, "1"),), caption=name)
        page = to_html([Lines((name,), heading=True), Lines((name, f"  {name}")), table], title=name,
                       verdicts=[(False, name), (True, name)])
        p = _parse(page)
        assert set(p.tags) <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "pre", "strong", "table",
                               "caption", "thead", "tbody", "tr", "th", "td", "br", "footer", "div"}, p.tags
        assert {a for a, _ in p.attrs} <= {"lang", "charset", "name", "content", "class"}
        assert not p.comments
        assert not _invisible(page.replace("\n", ""))

    def test_svg(self, name: str) -> None:
        charts = [
            Chart(kind="lines", title=name, x=("1", "3"), series=(Series(name, (0.1, 0.2), (0.05, 0.1), (0.2, 0.3)),),
                  x_label=name, y_label=name),
            Chart(kind="bars", title=name, x=(name, "b"), series=(Series(name, (0.5, 0.5)), Series(name, (0.4, 0.6)))),
            Chart(kind="heatmap", title=name, x=(name,), rows=(name,), cells=((0.5,),)),
            Chart(kind="hbars", title=name, rows=(name, "b"), series=(Series(name, (0.5, 0.6), (0.4, 0.5), (0.6, 0.7)),)),
        ]
        for chart in charts:
            svg = to_svg(chart)
            root = ET.fromstring(svg)  # well-formed XML: no attribute or element broken out of
            tags = {el.tag.split("}")[-1] for el in root.iter()}
            assert tags <= {"svg", "rect", "line", "polyline", "path", "text", "title", "circle", "polygon", "g", "tspan"}, tags
            for el in root.iter():
                assert not {k for k in el.attrib if k.lower().startswith("on") or k.endswith("href")}
            assert not _invisible(svg.replace("\n", ""))

    def test_junit(self, name: str) -> None:
        xml = to_junit(name, [Verdict(name, name, False, name), Verdict(name, "", True, name)])
        root = ET.fromstring(xml.split("\n", 1)[1])
        assert {el.tag for el in root.iter()} <= {"testsuites", "testsuite", "testcase", "failure", "system-out"}
        for el in root.iter():
            for value in [*el.attrib.values(), el.text or ""]:
                assert not _invisible(value.replace("\n", "")), value

    def test_markdown(self, name: str) -> None:
        cell = escape.markdown(name)
        assert "<" not in cell and ">" not in cell and "\n" not in cell
        unescaped = re.sub(r"\\.", "", cell)  # what is left once every backslash escape is taken out
        assert not set("|`*[~$") & set(unescaped), cell
        assert "&" not in re.sub(r"&(amp|lt|gt);", "", unescaped) or not re.search(r"&#?\w+;", re.sub(r"&(amp|lt|gt);", "", unescaped))
        assert not re.match(r"\s*::", cell) and not _invisible(cell)

    def test_markdown_table_keeps_its_cells(self, name: str) -> None:
        table = markdown_table(TableView(title=name, columns=("a", "b", "c"), rows=((name, name, "1"),), caption=name))
        rows = [line for line in table.splitlines() if line.startswith("|")]
        for line in rows:  # an escaped pipe is not a cell border: every row has 3 cells
            assert len(re.split(r"(?<!\\)\|", line)) == 5, line
        doc = to_markdown([Lines((name,), heading=True), Lines((name,))])
        assert "<" not in table + doc and "<!--" not in table + doc and not _invisible(doc.replace("\n", ""))

    def test_terminal_and_rich(self, name: str) -> None:
        from rich.console import Console
        from rich.text import Text

        line = escape.terminal(name)
        assert "\n" not in line and not _invisible(line) and not re.match(r"\s*::", line)
        markup = escape.rich_markup(line)
        rendered = Text.from_markup(markup)
        assert rendered.plain == line and not rendered.spans  # the text as written, no style
        buf = io.StringIO()
        Console(file=buf, width=400, color_system=None).print(markup)
        assert buf.getvalue().rstrip() == line.rstrip()

    def test_csv(self, name: str) -> None:
        from betaconform_cli import formats

        formats.register_output_table(formats.OutputTable("hostile-header", (name, "n")))  # to_csv writes registered tables only
        try:
            text = to_csv([name, "n"], [[name, 1], [[name, "b"], 2]])
        finally:
            formats.unregister_output_table("hostile-header")
        rows = list(csv.reader(io.StringIO(text)))
        assert len(rows) == 3 and all(len(r) == 2 for r in rows)
        assert not _invisible(text.replace("\n", ""))
        for cell in (rows[0][0], rows[1][0]):
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r", "::"))
        if not escape.has_surrogate(name):  # a list cell is JSON that reads back as the names were
            assert json.loads(rows[2][0]) == [name, "b"]

    def test_json_reads_back(self, name: str) -> None:
        text = to_json([{"dataset": name}])
        assert not _invisible(text.replace("\n", ""))
        if not escape.has_surrogate(name):
            assert json.loads(text) == {"dataset": name}

    def test_file_stem(self, name: str) -> None:
        stem = file_stem(name)
        assert "/" not in stem and "\\" not in stem and not _invisible(stem) and not stem.startswith(".")


def test_file_stems_of_names_that_differ_only_in_invisible_characters() -> None:
    stems = file_stems(["a\u202eb", "a\u200bb", "a_b"])
    assert len({s.casefold() for s in stems}) == 3 and stems[2] == "a_b"


@pytest.mark.parametrize("value", ["{0}", "{0.__class__}", "{1}", "{}", "{0!r:>{1}}", "%s", "%(x)s", "{{0}}", "\x00"])
def test_parameter_error_is_not_a_template(value: str) -> None:
    """User text inside a ParameterError is shown as given, never formatted (an attribute, a missing index)."""
    exc = ParameterError(("ks", "at_k"), f"{P0}: cannot read {value!r}; see {P1}")
    assert exc.render(lambda p: "--" + p) == f"--ks: cannot read {value!r}; see --at_k"
    plain = ParameterError("ks", f"cannot read {value!r}")
    assert str(plain) == f"ks cannot read {value!r}"


def _package_sources() -> list[tuple[str, str]]:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "betaconform_cli"
    return [(str(p.relative_to(root)), p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.py"))]


def test_one_escaping_module() -> None:
    """Every renderer escapes through escape.py: no second HTML or rich-markup escaper, no ad-hoc control regex."""
    for name, text in _package_sources():
        if name == "escape.py":
            continue
        assert "from html import escape" not in text and "html.escape(" not in text, name
        assert "rich.markup" not in text, name
        assert "\\u202e" not in text.lower() or name == "escape.py", name


def test_no_message_is_a_format_template() -> None:
    """Nothing calls str.format / format_map or applies % to a string: a message holding user text (an option's
    value, a file or judge name) is never read as a template (ParameterError substitutes errors.P0.. marks)."""
    import ast

    for name, text in _package_sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr not in ("format", "format_map"), f"{name}:{node.lineno}"
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                assert not (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)), f"{name}:{node.lineno}"
                assert not isinstance(node.left, ast.JoinedStr), f"{name}:{node.lineno}"
