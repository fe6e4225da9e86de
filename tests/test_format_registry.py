"""The input formats' registry (formats.py): adding a format is one entry plus its reader. The toy `.judgelog`
format defined here is registered by a fixture only, touching no other module, and is read by the api's `fit` and
`doctor` alone, in a folder, by a glob, gzipped, from standard input by its first line, and with
source_format="judgelog"; once the fixture ends it is gone again. (The CLI's `--from` choices are fixed when the CLI
is imported, so a format registered later is read by the CLI through its name and content, not named by `--from`.)"""

from __future__ import annotations

import gzip
import io
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import betaconform_cli.cli  # noqa: F401 - imported before the toy is registered, as in a real run: its --from choices stay the built-in ones
from betaconform_cli import api, formats
from betaconform_cli.document_types import plain
from betaconform_cli.errors import InputError, ParameterError
from betaconform_cli.formats import InputFormat
from betaconform_cli.inputs import InputOptions, Keep, read_inputs
from betaconform_cli.inputs.build import Mark, from_marks
from betaconform_cli.inputs.dataset import Dataset, Reading
from betaconform_cli.inputs.detect import Source
from betaconform_cli.inputs.paths import iter_lines

from .conftest import invoke

# The toy format: a first line "#judgelog", then one line per (item, judge): `ITEM JUDGE MARK`, MARK + (the judge
# agreed with gold), - (it did not) or ? (no verdict). Lines starting with # are comments.
HEADER = "#judgelog"
MARKS = {"q1": "++-", "q2": "+++", "q3": "---", "q4": "+-+", "q5": "++?", "q6": "-+-", "q7": "+++", "q8": "++-"}
# the (judges, correct) cells counted by hand from MARKS
EXPECTED = {(3, 2): 3, (3, 3): 2, (3, 0): 1, (2, 2): 1, (3, 1): 1}


def read_judgelog(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The toy format's reader: marks from its lines, Datasets by build.from_marks like every built-in reader."""
    marks = []
    for n, raw in iter_lines(src.path):
        line = raw.decode("utf-8").strip()
        if line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or parts[2] not in ("+", "-", "?"):
            raise InputError(src.where, "expected `ITEM JUDGE +|-|?`", line=n)
        mark = None if parts[2] == "?" else int(parts[2] == "+")
        marks.append(Mark(parts[0], parts[1], mark, n))
    reading = Reading("judgelog", (("item", "word 1"), ("judge", "word 2"), ("mark", "word 3")), unit="line")
    return from_marks(marks, src.name, src.where, reading, keep, "line")


def sniff_judgelog(head: bytes) -> str | None:
    return "judgelog" if head.startswith(HEADER.encode()) else None


# one entry: its reader named "module:function" (imported when a file is read), like the built-in formats
JUDGELOG = InputFormat("judgelog", f"{__name__}:read_judgelog", {"judgelog": (".judgelog", ".judgelog.gz")},
                       sniff=sniff_judgelog)


@contextmanager
def judgelog_registered() -> Iterator[InputFormat]:
    formats.register_input_format(JUDGELOG)
    try:
        yield JUDGELOG
    finally:
        formats.unregister_input_format(JUDGELOG.name)


@pytest.fixture
def judgelog() -> Iterator[InputFormat]:
    """The toy format, registered for this test only."""
    with judgelog_registered() as fmt:
        yield fmt


def _text(header: bool = True) -> str:
    body = "".join(f"{item} judge-{j} {m}\n" for item, ms in MARKS.items() for j, m in enumerate(ms))
    return (HEADER + "\n# item judge mark\n" if header else "") + body


def _write(path: Path, header: bool = True) -> Path:
    data = _text(header).encode()
    path.write_bytes(gzip.compress(data) if path.name.lower().endswith(".gz") else data)
    return path


def _jsonl(path: Path) -> Path:
    """The same items as judgment JSON Lines (the built-in reader: an independent reading of the same marks)."""
    rows = ({"id": i, "judgments": [None if m == "?" else int(m == "+") for m in ms]} for i, ms in MARKS.items())
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _cells(histogram: object) -> dict[tuple[int, int], int]:
    """The doctor document's histogram ({judges: [items with 0, 1, ... correct]}) as (judges, correct) cells."""
    assert isinstance(histogram, dict)
    return {(int(k), s): n for k, row in histogram.items() for s, n in enumerate(row) if n}


def _fit_numbers(doc: Any) -> dict[str, object]:
    """A fit document (fit_document.fit_document) as plain values, without where it came from."""
    return {k: v for k, v in plain(doc).items() if k not in ("dataset", "source")}


class TestAToyFormat:
    """One registered entry, and every way in reads it."""

    @pytest.mark.parametrize(("name", "dataset"), [("a.judgelog", "a"), ("a.judgelog.gz", "a"), ("B.JUDGELOG.GZ", "B"),
                                                   ("run.log", "run.log")])
    def test_fit_and_doctor_read_one_file(self, judgelog: InputFormat, tmp_path: Path, name: str, dataset: str) -> None:
        """By its ending in any case, gzipped, or by its first line (run.log): the counts made by hand, and the fit
        of the same items read as JSON Lines."""
        path = _write(tmp_path / name)
        (doc,) = api.doctor([str(path)]).documents
        assert (doc.dataset, doc.format, doc.items) == (dataset, "judgelog", len(MARKS))
        assert _cells(doc.histogram) == EXPECTED
        assert dict(doc.roles) == {"item": "word 1", "judge": "word 2", "mark": "word 3"}
        (fitted,) = api.fit([str(path)], chart=False).documents
        (same,) = api.fit([str(_jsonl(tmp_path / "same.jsonl"))], chart=False).documents
        assert fitted.dataset == dataset and _fit_numbers(fitted) == _fit_numbers(same)

    def test_a_folder_and_a_glob(self, judgelog: InputFormat, tmp_path: Path) -> None:
        """A folder's .judgelog files are data files beside the built-in kinds; notes are not."""
        _write(tmp_path / "a.judgelog")
        _write(tmp_path / "c.JUDGELOG.gz")
        _jsonl(tmp_path / "b.jsonl")
        (tmp_path / "notes.txt").write_text("not data")
        docs = api.doctor([str(tmp_path)]).documents
        assert [(d.dataset, d.format) for d in docs] == [("a", "judgelog"), ("b", "jsonl (list)"), ("c", "judgelog")]
        assert all(_cells(d.histogram) == EXPECTED for d in docs)
        assert [d.dataset for d in api.doctor([str(tmp_path / "[ac]*")]).documents] == ["a", "c"]

    def test_source_format_names_it(self, judgelog: InputFormat, tmp_path: Path) -> None:
        """A file whose name and first line say nothing (no header) is read as the toy when asked for."""
        path = _write(tmp_path / "plain.txt", header=False)
        opts = InputOptions(source_format="judgelog")
        (doc,) = api.doctor([str(path)], opts).documents
        assert doc.format == "judgelog" and _cells(doc.histogram) == EXPECTED
        assert _cells(api.fit([str(path)], opts, chart=False).documents[0].histogram) == EXPECTED

    def test_standard_input_by_its_first_line(self, judgelog: InputFormat, monkeypatch: pytest.MonkeyPatch) -> None:
        """A stream is copied to a temporary file of the toy's kind and read by its reader, as dataset 'stdin'."""
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_text().encode())))
        (ds,) = read_inputs(["-"])
        assert ds.name == "stdin" and ds.source == "<stdin>" and ds.reading is not None
        assert ds.reading.source_format == "judgelog"
        assert {(int(k), int(s)): int(n) for k, s, n in zip(*ds.table.cells())} == EXPECTED

    def test_a_folder_is_read_only_by_a_format_that_reads_folders(self, judgelog: InputFormat, tmp_path: Path) -> None:
        """A hive-partitioned folder is one table; asking for the toy (which reads no folder) is an error."""
        part = tmp_path / "hive" / "part=1"
        part.mkdir(parents=True)
        (part / "x.csv").write_text("item_id,judge,correct\nq1,a,1\nq1,b,0\n")
        assert api.doctor([str(tmp_path / "hive")]).documents[0].format == "long table (csv)"
        with pytest.raises(InputError, match="a folder cannot be read as judgelog"):
            api.doctor([str(tmp_path / "hive")], InputOptions(source_format="judgelog"))

    def test_its_errors_name_the_file_and_line(self, judgelog: InputFormat, tmp_path: Path) -> None:
        """The reader's InputError reaches the caller as it raised it."""
        path = tmp_path / "bad.judgelog"
        path.write_text(HEADER + "\nq1 a +\nq1 b maybe\n")
        with pytest.raises(InputError, match=r"bad\.judgelog:3: expected"):
            api.doctor([str(path)])

    def test_the_cli_reads_it_by_name(self, judgelog: InputFormat, runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        """Every command gains it: `doctor FILE -f json` through the CLI (its `--from` choices were fixed at import)."""
        path = _write(tmp_path / "a.judgelog")
        res = invoke(runner, "doctor", str(path), "-f", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["format"] == "judgelog" and _cells(doc["histogram"]) == EXPECTED


class TestRegistration:
    """The registry is the one list: after the fixture nothing knows the toy; clashes are refused."""

    def test_gone_after_the_fixture(self, tmp_path: Path) -> None:
        """Registered: a folder's .judgelog is read; unregistered: no choice, no kind, no ending, no data file."""
        _write(tmp_path / "a.judgelog")
        before = formats.input_formats()
        assert "judgelog" not in before
        with judgelog_registered():
            assert formats.input_formats()[-1] == "judgelog" and formats.kind_by_name("x.judgelog.gz") == "judgelog"
            assert [ds.name for ds in read_inputs([str(tmp_path)])] == ["a"]
        assert formats.input_formats() == before
        assert formats.kind_by_name("a.judgelog") is None and formats.stem("a.judgelog") == "a.judgelog"
        with pytest.raises(ParameterError, match="source_format"):
            InputOptions(source_format="judgelog")
        with pytest.raises(InputError, match="holds no data file"):
            read_inputs([str(tmp_path)])

    @pytest.mark.parametrize("entry", [
        InputFormat("judgelog", "m:f", {"judgelog": (".csv",)}),  # an ending of the table's
        InputFormat("table", "m:f"),  # a name taken
        InputFormat("judgelog", "m:f", choices=("long",)),  # a choice taken
        InputFormat("judgelog", "m:f", {"json": (".judgelog",)}),  # a kind taken
        InputFormat("judgelog", "m:f", {"judgelog": (".JudgeLog",)}),  # endings are compared in lower case
        InputFormat("judgelog", "m:f", {"judgelog": ("judgelog",)}),  # not an ending
    ])
    def test_clashes_are_refused(self, entry: InputFormat) -> None:
        """An entry that would take a name, choice, kind or ending already taken (the first would win) is refused."""
        before = formats.registered()
        with pytest.raises(ValueError, match="input format"):
            formats.register_input_format(entry)
        assert formats.registered() == before
