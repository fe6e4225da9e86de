"""Reports where users look: the GitHub job summary, JUnit XML, the HTML report, and the composite Action's script.

Every command appends its Markdown report to $GITHUB_STEP_SUMMARY (a failed gate first, with its reason); --junit
writes one test case per dataset and gate; -o report.html is one self-contained page. None of them changes the exit
code, and a file that cannot be written is one line on stderr.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

from tests.conftest import ROOT, SAMPLE, invoke
from tests.hostile.conftest import cli_env, one_error_line, run_cli

Q = SAMPLE / "qa_judges.jsonl"
MIXED = SAMPLE / "code_review.jsonl"  # 5 to 7 judges per item: empirical undefined at k > 5
PAIRS = SAMPLE / "pairwise_verdicts.jsonl"


def _json_docs(text: str) -> list[dict]:
    text = text.strip()
    return [json.loads(line) for line in text.splitlines()] if "\n{" in text else [json.loads(text)]


def _gate_docs(runner, *files: Path, max_error: str = "0.2") -> list[dict]:
    r = invoke(runner, "fit", *files, "--max-error", max_error, "--at-k", "5", "-f", "json", "--no-step-summary")
    return _json_docs(r.stdout)


class TestStepSummary:
    """$GITHUB_STEP_SUMMARY receives every command's Markdown report, appended; --no-step-summary turns it off."""

    def test_fit_appends_with_gate_failure_first(self, runner, tmp_path: Path, monkeypatch):
        summary = tmp_path / "summary.md"
        summary.write_text("# earlier step\n", encoding="utf-8")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        r = invoke(runner, "fit", Q, MIXED, "--max-error", "0.2", "--at-k", "5")
        docs = _gate_docs(runner, Q, MIXED)
        assert r.exit_code == (0 if all(d["gate"]["passed"] for d in docs) else 1) == 1
        text = summary.read_text(encoding="utf-8")
        assert text.startswith("# earlier step\n")  # appended, nothing lost
        body = text.split("## betaconform fit", 1)[1]
        failed = [d for d in docs if not d["gate"]["passed"]]
        first_table = body.index("|")
        for d in failed:
            at = body.index(f"gate failed:** {d['dataset']}")
            assert at < first_table  # at the top, before any table
            line = body[at:].splitlines()[0]
            assert f"{100 * d['gate']['value']:.2f}%" in line and "limit 20.00%" in line  # the reason
        for d in docs:
            assert f"## {d['dataset']}" in body

    def test_twice_is_two_reports(self, runner, tmp_path: Path, monkeypatch):
        summary = tmp_path / "summary.md"
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        assert invoke(runner, "fit", Q).exit_code == 0
        assert invoke(runner, "doctor", Q).exit_code == 0
        text = summary.read_text(encoding="utf-8")
        assert text.count("## betaconform fit") == 1 and text.count("## betaconform doctor") == 1

    @pytest.mark.parametrize("args", [
        ("judges", str(Q)),
        ("doctor", str(PAIRS)),
        ("sample", str(Q), "--replay", "--runs", "2"),
        ("sample", str(Q)),  # live: exit 1 (continue) or 0 (stop)
        ("evaluate", str(Q), "--r", "10", "--runs", "2", "--methods", "default,binomial"),
    ])
    def test_every_command(self, runner, tmp_path: Path, monkeypatch, args):
        summary = tmp_path / "summary.md"
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        r = invoke(runner, *args)
        monkeypatch.delenv("GITHUB_STEP_SUMMARY")
        plain = invoke(runner, *args)
        assert r.exit_code == plain.exit_code  # the summary never changes the exit code
        text = summary.read_text(encoding="utf-8")
        assert text.startswith(f"## betaconform {args[0]}\n") and len(text.splitlines()) > 2

    def test_report_of_saved_fit(self, runner, tmp_path: Path, monkeypatch):
        saved = tmp_path / "q.yaml"
        invoke(runner, "fit", Q, "--save", saved, "--no-step-summary")
        summary = tmp_path / "summary.md"
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        r = invoke(runner, "report", saved, "--max-error", "0.01", "--at-k", "3")
        assert r.exit_code == 1
        assert "gate failed:** qa_judges" in summary.read_text(encoding="utf-8").split("|")[0]

    def test_off(self, runner, tmp_path: Path, monkeypatch):
        summary = tmp_path / "summary.md"
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        assert invoke(runner, "fit", Q, "--no-step-summary").exit_code == 0
        assert not summary.exists()

    def test_unset_writes_nothing(self, runner, tmp_path: Path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        assert invoke(runner, "fit", Q).exit_code == 0
        assert list(tmp_path.iterdir()) == []

    @pytest.mark.hostile  # real CLI processes under the memory cap (run_cli), as tests/hostile/ runs them
    @pytest.mark.parametrize("gate", [(), ("--max-error", "0.01", "--at-k", "5")])
    @pytest.mark.parametrize("where", ["dir", "missing-dir", "readonly"])
    def test_unwritable_keeps_exit_code(self, tmp_path: Path, gate, where):
        """A real process: one warning line on stderr, no traceback, the verdict's exit code."""
        if where == "dir":
            target = tmp_path
        elif where == "missing-dir":
            target = tmp_path / "no" / "such" / "summary.md"
        else:
            if os.geteuid() == 0:
                pytest.skip("root writes read-only files")
            target = tmp_path / "ro.md"
            target.write_text("")
            target.chmod(0o444)
        r = run_cli("fit", Q, *gate, env=cli_env(GITHUB_STEP_SUMMARY=str(target)))
        assert r.returncode == (1 if gate else 0)
        err = r.stderr.decode()
        assert "Traceback" not in err
        warnings = [x for x in err.splitlines() if "job summary" in x]
        assert len(warnings) == 1 and warnings[0].startswith("warning: could not append to the job summary")

    @pytest.mark.hostile  # real CLI processes under the memory cap (run_cli), as tests/hostile/ runs them
    def test_fifo_without_a_reader(self, tmp_path: Path):
        """A FIFO nobody reads: a warning, not a hang."""
        fifo = tmp_path / "summary"
        os.mkfifo(fifo)
        r = run_cli("fit", Q, env=cli_env(GITHUB_STEP_SUMMARY=str(fifo)), timeout=30)
        assert r.returncode == 0 and r.stderr.decode().startswith("warning: could not append to the job summary")

    @pytest.mark.hostile  # real CLI processes under the memory cap (run_cli), as tests/hostile/ runs them
    def test_full_disk(self, tmp_path: Path):
        """/dev/full: the summary and the JUnit file fail to write (no space); the verdict's exit code stands."""
        if not Path("/dev/full").exists():
            pytest.skip("no /dev/full")
        r = run_cli("fit", Q, "--max-error", "0.01", "--at-k", "5", "--junit", "/dev/full",
                    env=cli_env(GITHUB_STEP_SUMMARY="/dev/full"))
        err = r.stderr.decode()
        assert r.returncode == 1 and "Traceback" not in err, err
        warnings = [x for x in err.splitlines() if x.startswith("warning:")]
        assert len(warnings) == 2
        assert warnings[0].startswith("warning: could not write the JUnit file /dev/full")
        assert warnings[1].startswith("warning: could not append to the job summary")

    @pytest.mark.hostile  # real CLI processes under the memory cap (run_cli), as tests/hostile/ runs them
    def test_summary_that_is_an_input_is_refused(self, tmp_path: Path):
        data = tmp_path / "labels.jsonl"
        data.write_bytes(Q.read_bytes())
        r = run_cli("fit", data, env=cli_env(GITHUB_STEP_SUMMARY=str(data)))
        assert r.returncode == 2 and "GITHUB_STEP_SUMMARY" in one_error_line(r)
        assert data.read_bytes() == Q.read_bytes()
        r = run_cli("fit", data, "--no-step-summary", env=cli_env(GITHUB_STEP_SUMMARY=str(data)))
        assert r.returncode == 0 and data.read_bytes() == Q.read_bytes()


def _junit(path: Path):
    from junitparser import Failure, JUnitXml

    xml = JUnitXml.fromfile(str(path))
    cases = [(suite, case) for suite in xml for case in suite]
    return xml, [(c.name, c.classname, [r for r in c.result if isinstance(r, Failure)]) for _, c in cases]


class TestJUnit:
    """One test case per dataset and gate, read back by a real JUnit reader (junitparser)."""

    def test_fit_gate(self, runner, tmp_path: Path):
        junit = tmp_path / "out" / "junit.xml"
        r = invoke(runner, "fit", Q, MIXED, "--max-error", "0.2", "--at-k", "5", "--junit", junit)
        docs = _gate_docs(runner, Q, MIXED)
        assert r.exit_code == (0 if all(d["gate"]["passed"] for d in docs) else 1)
        xml, cases = _junit(junit)
        assert len(cases) == len(docs) == 2
        for d, (name, classname, failures) in zip(docs, cases):
            assert name.startswith(f"{d['dataset']}: max-error 20% at k=5") and classname == "betaconform.fit"
            assert bool(failures) == (not d["gate"]["passed"])
            if failures:  # the failure message is the gate's reason, as stderr says it
                assert f"{100 * d['gate']['value']:.2f}%" in failures[0].message
                assert f"gate failed: {failures[0].message}" in r.stderr
        suite = next(iter(xml))
        assert suite.tests == 2 and suite.failures == sum(not d["gate"]["passed"] for d in docs)

    def test_no_gate_one_passing_case_per_dataset(self, runner, tmp_path: Path):
        junit = tmp_path / "j.xml"
        assert invoke(runner, "fit", Q, MIXED, PAIRS, "--junit", junit).exit_code == 0
        _, cases = _junit(junit)
        assert [c[0] for c in cases] == ["qa_judges", "code_review", "pairwise_verdicts"]
        assert not any(c[2] for c in cases)

    @pytest.mark.parametrize("args", [
        ("doctor", str(Q), str(PAIRS)),
        ("evaluate", str(Q), str(PAIRS), "--r", "10", "--runs", "2", "--methods", "default"),
        ("sample", str(Q), "--replay", "--runs", "2"),
    ])
    def test_commands_without_a_gate(self, runner, tmp_path: Path, args):
        junit = tmp_path / "j.xml"
        assert invoke(runner, *args, "--junit", junit).exit_code == 0
        _, cases = _junit(junit)
        expected = [Path(a).stem for a in args[1:] if a.endswith(".jsonl")]
        assert [c[0] for c in cases] == expected and all(c[1] == f"betaconform.{args[0]}" and not c[2] for c in cases)

    def test_judges_gate(self, runner, tmp_path: Path):
        junit = tmp_path / "j.xml"
        r = invoke(runner, "judges", Q, "--max-error", "0.001", "--junit", junit)
        assert r.exit_code == 1
        _, cases = _junit(junit)
        assert len(cases) == 1 and cases[0][0] == "qa_judges: max-error 0.1%" and cases[0][1] == "betaconform.judges"
        assert "no ensemble meets max error 0.1%" in cases[0][2][0].message
        junit2 = tmp_path / "j2.xml"
        assert invoke(runner, "judges", Q, "--max-error", "0.9", "--junit", junit2).exit_code == 0
        _, cases = _junit(junit2)
        assert len(cases) == 1 and not cases[0][2]

    def test_report_and_sample(self, runner, tmp_path: Path):
        saved = tmp_path / "q.yaml"
        invoke(runner, "fit", Q, "--save", saved)
        junit = tmp_path / "r.xml"
        assert invoke(runner, "report", saved, "--max-error", "0.9", "--at-k", "3", "--junit", junit).exit_code == 0
        _, cases = _junit(junit)
        assert [(c[0], bool(c[2])) for c in cases] == [("qa_judges: max-error 90% at k=3", False)]
        junit = tmp_path / "s.xml"
        r = invoke(runner, "sample", Q, "--junit", junit, "-f", "json")
        stopped = json.loads(r.stdout)["stopped"]
        _, cases = _junit(junit)
        assert len(cases) == 1 and bool(cases[0][2]) == (not stopped) and r.exit_code == (0 if stopped else 1)

    def test_hostile_names_stay_xml(self, runner, tmp_path: Path, write_jsonl):
        rows = [json.loads(x) for x in Q.read_text().splitlines()]
        data = write_jsonl('a<b>&"c"\x1b[31m.jsonl', rows)
        junit = tmp_path / "j.xml"
        assert invoke(runner, "fit", data, "--junit", junit).exit_code == 0
        _, cases = _junit(junit)
        assert cases[0][0] == 'a<b>&"c"\\x1b[31m'

    @pytest.mark.hostile  # real CLI processes under the memory cap (run_cli), as tests/hostile/ runs them
    @pytest.mark.parametrize("where", ["dir", "readonly-dir"])
    def test_unwritable_keeps_exit_code(self, tmp_path: Path, where):
        if where == "dir":
            target = tmp_path
        else:
            if os.geteuid() == 0:
                pytest.skip("root writes into read-only folders")
            d = tmp_path / "ro"
            d.mkdir()
            d.chmod(0o555)
            target = d / "j.xml"
        for gate, code in (((), 0), (("--max-error", "0.01", "--at-k", "5"), 1)):
            r = run_cli("fit", Q, *gate, "--junit", target)
            err = r.stderr.decode()
            assert r.returncode == code and "Traceback" not in err, err
            assert sum("JUnit" in x for x in err.splitlines()) == 1

    @pytest.mark.hostile  # real CLI processes under the memory cap (run_cli), as tests/hostile/ runs them
    def test_junit_may_not_be_an_input_or_the_output(self, tmp_path: Path):
        data = tmp_path / "labels.jsonl"
        data.write_bytes(Q.read_bytes())
        r = run_cli("fit", data, "--junit", data)
        assert r.returncode == 2 and "junit" in one_error_line(r) and data.read_bytes() == Q.read_bytes()
        r = run_cli("fit", data, "--junit", tmp_path / "x.json", "-o", tmp_path / "x.json")
        assert r.returncode == 2 and not (tmp_path / "x.json").exists()


class _Page(HTMLParser):
    """Collects tags, external references and inline SVG text."""

    VOID = {"meta", "br", "img", "link", "input", "hr", "rect", "circle", "line", "polygon", "polyline", "path"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.stack: list[str] = []
        self.refs: list[str] = []
        self.unbalanced = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [v for k, v in attrs if k in ("src", "href", "xlink:href") and v]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [v for k, v in attrs if k in ("src", "href", "xlink:href") and v]

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack.pop() != tag:
            self.unbalanced += 1


def _page(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    return p


def _svgs(text: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg.*?</svg>", text, re.S)]


def _tips(svg: ET.Element) -> list[str]:
    return [t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}title")]


class TestHtml:
    """-o report.html: one self-contained page with the tables and the charts, escaped, no script, no network."""

    def test_fit_page(self, runner, tmp_path: Path):
        page = tmp_path / "report.html"
        r = invoke(runner, "fit", Q, MIXED, "--max-error", "0.2", "--at-k", "5", "-o", page)
        docs = _gate_docs(runner, Q, MIXED)
        assert r.exit_code == 1  # the page does not change the verdict
        text = page.read_text(encoding="utf-8")
        p = _page(text)
        assert p.unbalanced == 0 and not p.stack
        assert "script" not in p.tags and p.refs == []
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)  # nothing fetched
        assert p.tags.count("table") == 2 * len(docs) + 2  # error + diagnostics per dataset, side by side, summary
        svgs = _svgs(text)
        assert len(svgs) == 2 * len(docs)  # error vs k and the histogram, per dataset
        assert 'class="gate-failed"' in text
        for d in docs:
            assert f"{d['dataset']}: majority-vote error against k" in text

    def test_error_chart_tells_the_truth(self, runner, tmp_path: Path):
        """Each series has one marker per defined value (none where the table shows —), its tooltip the JSON's
        number; the axis starts at 0 and ends above the largest value but below twice it."""
        page = tmp_path / "r.html"
        invoke(runner, "fit", MIXED, "-o", page)
        doc = _json_docs(invoke(runner, "fit", MIXED, "-f", "json").stdout)[0]
        svg = _svgs(page.read_text(encoding="utf-8"))[0]
        tips = _tips(svg)
        rows = doc["error_rates"]
        for series, key in (("estimate, 90% interval", "estimate"), ("binomial", "binomial"),
                            ("beta-binomial", "beta_binomial"), ("empirical", "empirical")):
            drawn = sorted(t for t in tips if t.startswith(series + " at "))
            expected = sorted(f"{series} at {r['k']}: {100 * r[key]:.1f}%" for r in rows if r[key] is not None)
            assert drawn == expected
        assert any(r["empirical"] is None for r in rows)  # the member that matters: undefined is not drawn
        ys = [float(t.text.rstrip("%")) for t in svg.iter("{http://www.w3.org/2000/svg}text") if re.fullmatch(r"\d+%", t.text or "")]
        top = max(100 * max(r["high"] for r in rows), 100 * max(r["binomial"] for r in rows))
        assert min(ys) == 0 and top <= max(ys) < 2 * top

    def test_histogram_chart(self, runner, tmp_path: Path):
        page = tmp_path / "r.html"
        invoke(runner, "fit", Q, "-o", page)
        doc = _json_docs(invoke(runner, "fit", Q, "-f", "json").stdout)[0]
        svg = _svgs(page.read_text(encoding="utf-8"))[1]
        obs = doc["histogram"]["11"]
        tips = [t for t in _tips(svg) if t.startswith("observed, ")]
        assert tips == [f"observed, {s}: {o:.1f}" for s, o in enumerate(obs)]

    def test_judges_heat_map(self, runner, tmp_path: Path):
        page = tmp_path / "j.html"
        assert invoke(runner, "judges", PAIRS, "-o", page).exit_code == 0
        doc = _json_docs(invoke(runner, "judges", PAIRS, "-f", "json").stdout)[0]
        text = page.read_text(encoding="utf-8")
        svg = next(s for s in _svgs(text) if (_tips(s) or [""])[0].startswith("shared mistakes"))  # kappa's chart first
        n = len(doc["judge_names"])
        cells = [e for e in svg.iter("{http://www.w3.org/2000/svg}rect")]
        assert len(cells) == n * n
        shown = sorted(t.text for t in svg.iter("{http://www.w3.org/2000/svg}text") if re.fullmatch(r"[+-]\d+", t.text or ""))
        expected = sorted(f"{100 * p['excess']:+.0f}" for p in doc["pairs"] if p["excess"] is not None for _ in (0, 1))
        assert shown == expected
        assert _page(text).tags.count("table") >= 4

    def test_heat_map_without_data(self):
        """A pair that never judged the same item gets no colour and '—', as in the table."""
        from betaconform_cli.report.svg import to_svg
        from betaconform_cli.report.views import Chart

        svg = to_svg(Chart("heatmap", "t", x=("1", "2", "3"), rows=("1 a", "2 b", "3 c"),
                           cells=((None, 0.05, None), (0.05, None, -0.02), (None, -0.02, None))))
        root = ET.fromstring(svg)
        texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
        assert texts.count("—") == 2 and texts.count("+5") == 2 and texts.count("-2") == 2 and texts.count("·") == 3

    def test_one_k_shows_its_interval(self, runner, tmp_path: Path):
        """--ks 5: one point per series, and the estimate's interval drawn as a bar from low to high."""
        page = tmp_path / "r.html"
        invoke(runner, "fit", Q, "--ks", "5", "-o", page)
        doc = _json_docs(invoke(runner, "fit", Q, "--ks", "5", "-f", "json").stdout)[0]
        svg = _svgs(page.read_text(encoding="utf-8"))[0]
        row = doc["error_rates"][0]
        ticks = {t.text: float(t.get("y")) for t in svg.iter("{http://www.w3.org/2000/svg}text") if re.fullmatch(r"\d+%", t.text or "")}
        (top_label, top_y), (zero_y) = max(ticks.items(), key=lambda kv: float(kv[0][:-1])), ticks["0%"]
        scale = (zero_y - top_y) / float(top_label[:-1])  # px per point (labels sit 4 px below their line)

        def y(v: float) -> float:
            return zero_y - 4 - scale * 100 * v

        bars = [e for e in svg.iter("{http://www.w3.org/2000/svg}line") if e.get("stroke-width") == "6"]
        assert len(bars) == 1
        ys = sorted(float(bars[0].get(a)) for a in ("y1", "y2"))
        assert ys == pytest.approx(sorted([y(row["low"]), y(row["high"])]), abs=0.2)

    def test_score_slot(self):
        """`score`'s judges-vs-corrected bar: a Chart(kind='hbars') block is drawn like any other chart."""
        from betaconform_cli.report.html import to_html
        from betaconform_cli.report.views import Chart, Series

        chart = Chart("hbars", "judges vs corrected", rows=("judges' score", "corrected score"),
                      series=(Series("score", (0.81, None), (0.7, None), (0.9, None)),), x_label="score")
        text = to_html([chart], "betaconform score")
        svg = _svgs(text)[0]
        assert [t for t in _tips(svg) if ":" in t] == ["judges' score: 81.0%"]
        assert "—" in [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]

    @pytest.mark.parametrize("name", ["<script>alert(1)</script>", "a&b\x1b]0;x\x07", "\u202egnp.exe"])
    def test_names_are_escaped(self, runner, tmp_path: Path, write_jsonl, name):
        rows = [json.loads(x) for x in Q.read_text().splitlines()]
        data = write_jsonl(name.replace("/", "_") + ".jsonl", rows)
        page = tmp_path / "p.html"
        assert invoke(runner, "fit", data, "-o", page).exit_code == 0
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and "\x1b" not in text and "\u202e" not in text
        for svg in _svgs(text):  # every chart is valid XML
            assert svg.tag.endswith("svg")

    def test_judge_names_are_escaped(self, runner, tmp_path: Path, write_jsonl):
        rows = [json.loads(x) for x in Q.read_text().splitlines()]
        names = ["<img src=x onerror=alert(1)>", "a&b", "\x1b[2J", *[f"j{i}" for i in range(8)]]
        data = write_jsonl("named.jsonl", [{"id": r["id"], "judgments": dict(zip(names, r["judgments"]))} for r in rows])
        page = tmp_path / "j.html"
        assert invoke(runner, "judges", data, "-o", page).exit_code == 0
        text = page.read_text(encoding="utf-8")
        p = _page(text)
        assert "img" not in p.tags and p.refs == [] and "\x1b" not in text
        heat = _svgs(text)[0]
        labels = [t.text for t in heat.iter("{http://www.w3.org/2000/svg}text")]
        number = sorted(names).index(names[0]) + 1  # judges are listed by name (the same data, the same answer)
        assert f"{number} <img src=x onerror=alert(1)>" in labels

    @pytest.mark.parametrize("args", [
        ("doctor", str(Q)),
        ("sample", str(Q), "--replay", "--runs", "2"),
        ("evaluate", str(Q), "--r", "10", "--runs", "2", "--methods", "default,empirical"),
        ("report", "SAVED"),
    ])
    def test_every_command(self, runner, tmp_path: Path, args):
        if "SAVED" in args:
            saved = tmp_path / "q.yaml"
            invoke(runner, "fit", Q, "--save", saved)
            args = ("report", str(saved))
        page = tmp_path / "p.htm"
        assert invoke(runner, *args, "-o", page).exit_code == 0
        p = _page(page.read_text(encoding="utf-8"))
        assert p.unbalanced == 0 and "table" in p.tags and "script" not in p.tags

    def test_committed_screenshot(self):
        """docs/report-sample.png (scripts/report-screenshot.sh): a small PNG that is not blank (no browser needed)."""
        from matplotlib.image import imread

        png = ROOT / "docs" / "report-sample.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 200_000
        img = imread(png)[..., :3]
        assert 0.02 < (img.min(axis=2) < 0.9).mean() < 0.9

    def test_format_html_to_stdout(self, runner):
        r = invoke(runner, "fit", Q, "--format", "html")
        assert r.stdout.startswith("<!DOCTYPE html>") and r.stdout.rstrip().endswith("</html>")


@pytest.mark.hostile  # runs scripts/github-action.sh, which runs the CLI: real processes, as tests/hostile/
class TestAction:
    """action.yml is a composite action whose shell step is scripts/github-action.sh; the script runs here."""

    def test_action_runs_the_script(self):
        action = yaml.safe_load((ROOT / "action.yml").read_text())
        assert action["runs"]["using"] == "composite"
        runs = [s for s in action["runs"]["steps"] if "run" in s]
        assert len(runs) == 1 and "scripts/github-action.sh" in runs[0]["run"] and runs[0]["shell"] == "bash"
        env = runs[0]["env"]
        for name in ("files", "command", "max-error", "at-k", "junit", "html", "args"):
            assert name in action["inputs"]
            assert any(f"inputs.{name}" in v for v in env.values())  # passed as environment, never pasted in the script
        assert not any("${{" in s.get("run", "") for s in action["runs"]["steps"])
        assert set(action["outputs"]) == {"exit-code", "junit", "html"}

    def _run(self, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
        full = cli_env(BC_INSTALL="none", BC_PYTHON=sys.executable, GITHUB_OUTPUT=str(tmp_path / "gh-output"),
                       GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), **env)
        return subprocess.run(["bash", str(ROOT / "scripts" / "github-action.sh")], capture_output=True, text=True,
                              env=full, cwd=tmp_path, timeout=120, check=False)

    def test_gate_failure(self, tmp_path: Path):
        r = self._run(tmp_path, BC_FILES=f"{Q}\n{MIXED}", BC_MAX_ERROR="0.01", BC_AT_K="3",
                      BC_JUNIT="junit.xml", BC_HTML="report.html", BC_ARGS="--ks 1-5")
        assert r.returncode == 1, r.stderr
        from tests.hostile.test_round3_door import TestAction as Round3  # GitHub's name<<DELIMITER blocks

        assert Round3.outputs(tmp_path / "gh-output") == {"exit-code": "1", "junit": "junit.xml", "html": "report.html"}
        _, cases = _junit(tmp_path / "junit.xml")
        assert [c[0] for c in cases] == ["qa_judges: max-error 1% at k=3", "code_review: max-error 1% at k=3"]
        assert all(c[2] for c in cases)
        assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
        assert "gate failed" in (tmp_path / "summary.md").read_text()

    def test_pass_and_bad_input(self, tmp_path: Path):
        assert self._run(tmp_path, BC_FILES=str(Q), BC_MAX_ERROR="0.9").returncode == 0
        r = self._run(tmp_path, BC_FILES=str(tmp_path / "missing.jsonl"))
        assert r.returncode == 2 and "error:" in r.stderr
        r = self._run(tmp_path, BC_FILES="")
        assert r.returncode == 2 and "files" in r.stderr
        r = self._run(tmp_path, BC_FILES=str(Q), BC_COMMAND="rm -rf /")
        assert r.returncode == 2 and "unknown command" in r.stderr

    def test_file_names_are_not_shell(self, tmp_path: Path):
        odd = tmp_path / "$(id>pwned);`id>pwned2`.jsonl"
        odd.write_bytes(Q.read_bytes())
        r = self._run(tmp_path, BC_FILES=str(odd), BC_JUNIT="j.xml", BC_ARGS="--seed $(id>pwned3)")
        assert r.returncode == 2 and "--seed" in r.stderr  # the option's value, read as given
        r = self._run(tmp_path, BC_FILES=str(odd), BC_JUNIT="j.xml")
        assert r.returncode == 0, r.stderr
        r = self._run(tmp_path, BC_FILES=str(tmp_path / "*.jsonl"), BC_JUNIT="j.xml")  # a glob: betaconform's to expand
        assert r.returncode == 0, r.stderr
        assert not [p for p in tmp_path.iterdir() if p.name.startswith("pwned")]
