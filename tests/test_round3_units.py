"""Issue 25, items 7 and 8, unit by unit: the CSV writer's quoting, the JSON layout a file's name asks for, the job
summary's cap, the JSON depth rule, the fast path's depth guard, FIFOs at the one open, chart styles, warnings."""

from __future__ import annotations

import csv
import io
import json
import os
import threading
import time
import warnings
from pathlib import Path

import pytest

from betaconform_cli.formats import MAX_JSON_DEPTH, json_depth, load_json
from betaconform_cli.report.render import cap_markdown, json_for_file, to_csv, to_json, utf8_size


class TestCsvQuoting:
    """The one CSV writer: names with commas, quotes, newlines and formula starts come back as they were."""

    @pytest.fixture(autouse=True)
    def _tables(self) -> object:
        from betaconform_cli import formats

        tables = [formats.OutputTable("round3-members", ("dataset", "members", "estimate")),
                  formats.OutputTable("round3-name", ("name",))]
        for t in tables:
            formats.register_output_table(t)  # to_csv writes registered tables only
        yield
        for t in tables:
            formats.unregister_output_table(t.name)

    NAMES = ['a,b', 'c"d', "e'f", "line\nbreak", 'say "hi", then go', "x;y", "tab\there"]

    def test_members_round_trip(self) -> None:
        text = to_csv(("dataset", "members", "estimate"), [("d,1", list(self.NAMES), 0.5), ('q"2', self.NAMES[:2], 0.25)])
        rows = list(csv.reader(io.StringIO(text)))
        assert rows[0] == ["dataset", "members", "estimate"]
        assert json.loads(rows[1][1]) == self.NAMES and json.loads(rows[2][1]) == self.NAMES[:2]
        assert rows[1][0] == "d,1" and rows[2][0] == 'q"2' and float(rows[1][2]) == 0.5
        assert len(rows) == 3  # a newline inside a name never starts a row

    def test_a_formula_is_not_run(self) -> None:
        rows = list(csv.reader(io.StringIO(to_csv(("name",), [("=1+2",), ("-3",)]))))
        assert rows[1] == ["'=1+2"] and rows[2] == ["-3"]  # a number stays a number


class TestJsonForFile:
    """-o's layout, the one rule for every command: .json one JSON text (an array for several), .jsonl lines."""

    DOCS = [{"dataset": "a", "x": [1, 2]}, {"dataset": "b", "x": None}]

    @pytest.mark.parametrize("name", ["out.json", "OUT.JSON", "out.txt"])
    def test_several_make_an_array(self, name: str) -> None:
        assert json.loads(json_for_file(to_json(self.DOCS), name)) == self.DOCS

    @pytest.mark.parametrize("name", ["out.jsonl", "out.NDJSON"])
    @pytest.mark.parametrize("docs", [DOCS, DOCS[:1]])
    def test_lines(self, name: str, docs: list[dict[str, object]]) -> None:
        text = json_for_file(to_json(docs), name)
        assert text.endswith("\n") and [json.loads(x) for x in text.splitlines()] == docs

    def test_one_document_stays_an_object(self) -> None:
        text = to_json(self.DOCS[:1])
        assert json_for_file(text, "one.json") == text
        assert json_for_file(to_json(self.DOCS, lines=True), "runs.json").startswith("[")  # sample's runs too


class TestSummaryCap:
    def test_fits_whole(self) -> None:
        assert cap_markdown(["gates\n", "report\n"], 100, "cut") == "gates\nreport\n"

    def test_report_cut_at_a_line_end(self) -> None:
        head, body = "## gate failed: x\n\n", "".join(f"| row {i} | {'é' * 20} |\n" for i in range(200))
        out = cap_markdown([head, body], 2000, "the rest is left out")
        assert out.startswith(head) and utf8_size(out) <= 2000
        kept = out[len(head):].split("\n\n_the rest is left out_")[0]
        assert kept and body.startswith(kept + "\n") and out.endswith("_the rest is left out_\n")

    def test_gates_come_first(self) -> None:
        head = "".join(f"gate {i} failed\n" for i in range(50))
        out = cap_markdown([head, "report\n"], 200, "cut")
        assert out.startswith("gate 0 failed\n") and "report" not in out and utf8_size(out) <= 200

    def test_no_room(self) -> None:
        assert cap_markdown(["gates\n", "report\n"], 3, "a long note") == ""
        assert cap_markdown(["gates\n", "report\n"], -5, "a long note") == ""


class TestJsonDepth:
    @pytest.mark.parametrize("stdlib", [False, True])
    @pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1000, 5000, 100_000])
    def test_too_deep(self, depth: int, stdlib: bool) -> None:
        for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
            with pytest.raises(json.JSONDecodeError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
                load_json(text.encode(), stdlib=stdlib)

    def test_at_the_limit(self) -> None:
        text = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
        assert json_depth(load_json(text)) == MAX_JSON_DEPTH
        many = json.dumps({"judgments": [[1]] * 500, "text": "[[[[" * 100})  # many brackets, shallow
        assert load_json(many)["text"].startswith("[[[[")

    def test_depth_counts_containers(self) -> None:
        assert (json_depth(1), json_depth([]), json_depth({"a": [1, {"b": []}]})) == (0, 1, 4)

    def test_fast_path_guard(self) -> None:
        from betaconform_cli.inputs.jsonl import _shallow

        short = b'{"id": 1, "judgments": [1, 0]}\n' * 1000
        assert _shallow(short) and _shallow(b"")
        deep = b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)
        assert not _shallow(short + deep + b"\n" + short) and not _shallow(short + deep)
        assert _shallow(short + b"[" * MAX_JSON_DEPTH + b"\n")
        assert _shallow(b'{"t": "' + b"a" * 5000 + b'"}\n')  # long, but no brackets

    def test_very_deep_line_after_the_first(self, tmp_path: Path) -> None:
        # past msgspec's own recursion limit (~1000): the fast path must send the block the careful way before
        # decoding it, not raise RecursionError (a traceback from `fit`)
        from betaconform_cli.errors import InputError
        from betaconform_cli.inputs.jsonl import read_jsonl

        f = tmp_path / "deep.jsonl"
        f.write_bytes(b'{"id": "a", "judgments": [1, 1]}\n{"id": "b", "judgments": [1, 0], "x": '
                      + b"[" * 1100 + b"]" * 1100 + b"}\n")
        with pytest.raises(InputError, match=f"deep.jsonl:2: malformed JSON \\(nested deeper than {MAX_JSON_DEPTH}"):
            read_jsonl(f)


class TestOpenRaw:
    """The one open of a named input: a FIFO with no writer is refused, one with a writer read; `regular`
    refuses anything but a file before opening it."""

    def test_no_writer(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from betaconform_cli.inputs import paths

        monkeypatch.setattr(paths, "FIFO_WAIT_S", 0.2)
        fifo = tmp_path / "f"
        os.mkfifo(fifo)
        start = time.monotonic()
        with pytest.raises(OSError, match="nothing wrote to"):
            paths.open_raw(fifo)
        assert time.monotonic() - start < 5

    def test_writer(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from betaconform_cli.inputs import paths

        monkeypatch.setattr(paths, "FIFO_WAIT_S", 0.2)
        fifo = tmp_path / "f"
        os.mkfifo(fifo)

        def write() -> None:
            with open(fifo, "wb") as fh:  # connects at once, writes late: waited for like any pipe
                time.sleep(0.6)
                fh.write(b"x" * 100_000)

        t = threading.Thread(target=write, daemon=True)
        t.start()
        with paths.open_raw(fifo) as fh:
            assert fh.read() == b"x" * 100_000
        t.join(5)

    def test_regular_only(self, tmp_path: Path) -> None:
        from betaconform_cli.inputs.paths import open_raw

        fifo = tmp_path / "f"
        os.mkfifo(fifo)
        for path in (fifo, tmp_path, Path("/dev/zero")):
            with pytest.raises(OSError, match="not a regular file"):
                open_raw(path, regular=True)
        (tmp_path / "ok").write_bytes(b"ok")
        with open_raw(tmp_path / "ok", regular=True) as fh:
            assert fh.read() == b"ok"


class TestChartStyles:
    def test_an_estimator_looks_the_same_in_every_chart(self) -> None:
        from betaconform_cli.report.svg import styles
        from betaconform_cli.report.views import Series

        one = styles([Series("estimate", (0.1,), key="default"), Series("binomial", (0.1,), key="binomial")])
        two = styles([Series("estimate", (0.1,), key="default"), Series("labels only", (0.1,), key="labels_only"),
                      Series("binomial", (0.1,), key="binomial")])
        assert one[0] == two[0] and one[1] == two[2] and len({s[0] for s in two}) == 3
        loose = styles([Series("a", (0.1,)), Series("b", (0.1,), key="default")])
        assert loose[0][0] != loose[1][0]  # a series without a key never takes a keyed colour in its chart

    def test_score_labels_past_the_whisker(self) -> None:
        import re

        from betaconform_cli.report.svg import hbars_svg
        from betaconform_cli.report.views import Chart, Series

        chart = Chart("hbars", "pass rate", rows=("judges say", "corrected"),
                      series=(Series("pass rate", (0.65, 0.55), (None, 0.45), (None, 0.66)),))
        svg = hbars_svg(chart)
        whisker_end = max(float(x) for x in re.findall(r'<line x1="[\d.]+" x2="([\d.]+)"', svg))
        label_x = float(re.search(r'<text x="([\d.]+)"[^>]*>55\.0%', svg).group(1))  # type: ignore[union-attr]
        assert label_x > whisker_end


class TestWarningNote:
    def test_one_line_without_a_path(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        import numpy as np

        from betaconform_cli.cli import root
        from betaconform_cli.cli.root import _note_warning

        monkeypatch.setattr(root, "_WARNED", set())

        with warnings.catch_warnings():
            warnings.showwarning = _note_warning
            warnings.simplefilter("always")
            np.array([0.0]) / np.array([0.0])
            np.array([0.0]) / np.array([0.0])
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "invalid value encountered in divide" in err and ".py" not in err
