"""Issue 16, classes 5 and 8 (and 6's repeated ids, 9's --skip-invalid): nothing is silently misread, and every
message says where and what. Each test runs the CLI as a real, memory-capped process on several members of a class:
other formats, other commands, other fields than the one the issue named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, Q, one_error_line, run_cli

FIXTURES = ROOT / "tests" / "fixtures"
PROMPTFOO = FIXTURES / "promptfoo" / "results.json"
DUCKDB_TEXTS = ("Binder Error", "Conversion Error", "Invalid Input Error", "Parser Error", "Catalog Error", "LINE 1:")


def _long_csv(n_items: int = 30, judges: str = "abc") -> str:
    rows = ["item_id,judge,correct"]
    for i in range(n_items):
        for k, j in enumerate(judges):
            rows.append(f"q{i},{j},{(i * 7 + k * 3) % 5 > 1:d}")
    return "\n".join(rows) + "\n"


def _fit_json(*args: Any) -> dict[str, Any]:
    p = run_cli("fit", *args, "-f", "json", "--no-chart")
    assert p.returncode in (0, 1), p.stderr.decode()[-2000:]
    doc = json.loads(p.stdout)
    for key in ("source", "dataset", "tool_version"):
        doc.pop(key, None)
    return doc


def _doctor(*args: Any) -> dict[str, Any]:
    """doctor's JSON document of a file holding one dataset."""
    p = run_cli("doctor", *args, "-f", "json")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def _no_duckdb_text(line: str) -> str:
    assert not any(t in line for t in DUCKDB_TEXTS), line
    return line


class TestDamagedGzip:
    """A gzipped input is verified whole (CRC and length) before its counts are used, in every format and through
    standard input: a flipped byte is never read as other data (the phantom judge "LLAMA")."""

    @staticmethod
    def _damaged(data: bytes) -> bytes:
        packed = bytearray(gzip.compress(data))
        packed[-6] ^= 0xFF  # the stored CRC
        return bytes(packed)

    @pytest.mark.parametrize("name,source", [("t.csv.gz", "csv"), ("t.jsonl.gz", "jsonl"), ("r.json.gz", "promptfoo"),
                                             ("r.csv", "csv-named-plain")])
    def test_bad_crc(self, tmp_path: Path, name: str, source: str) -> None:
        data = {"csv": _long_csv().encode(), "csv-named-plain": _long_csv().encode(), "jsonl": Q.read_bytes(),
                "promptfoo": PROMPTFOO.read_bytes()}[source]
        f = tmp_path / name
        f.write_bytes(self._damaged(data))
        extra = ["--label-field", "vars.gold"] if source == "promptfoo" else []
        line = one_error_line(run_cli("fit", f, *extra))
        assert f"{f}: damaged gzip file: CRC check failed" in line

    def test_truncated_table_and_stdin(self, tmp_path: Path) -> None:
        f = tmp_path / "t.csv.gz"
        f.write_bytes(gzip.compress(_long_csv(300).encode())[:-40])
        assert "damaged gzip file: truncated" in one_error_line(run_cli("doctor", f))
        line = one_error_line(run_cli("fit", "-", input=self._damaged(Q.read_bytes())))
        assert line.startswith("error: <stdin>: damaged gzip file")


class TestCsvStructure:
    """The CSV dialect is fixed: a ragged row, an unclosed quote or a stray quote is an error naming the row (the
    header is not counted), never a table of one column or an id that swallowed the rest of the file."""

    def test_ragged_row(self, tmp_path: Path) -> None:
        lines = _long_csv().splitlines()
        lines[7] += ",extra"
        f = tmp_path / "ragged.csv"
        f.write_text("\n".join(lines) + "\n")
        line = one_error_line(run_cli("fit", f))
        assert "row 7: expected 3 fields (as in the header), found 4" in line and "item_id,judge" not in line

    @pytest.mark.parametrize("bad,row,words", [('"q1,a,1', 5, "never closed"), ('q1,"a"x,1', 5, "malformed quoting")])
    def test_quotes(self, tmp_path: Path, bad: str, row: int, words: str) -> None:
        lines = _long_csv().splitlines()
        lines[row] = bad
        f = tmp_path / "quote.tsv.csv"
        f.write_text("\n".join(lines) + "\n")
        assert f"row {row}: " in (line := _no_duckdb_text(one_error_line(run_cli("doctor", f)))) and words in line

    def test_other_delimiters_still_read(self, tmp_path: Path) -> None:
        """The delimiter comes from the header (comma, semicolon, tab, pipe), and a quoted value may hold a newline."""
        base = _long_csv()
        want = _fit_json(_write(tmp_path / "a.csv", base))
        assert _fit_json(_write(tmp_path / "b.csv", base.replace(",", ";"))) == want
        assert _fit_json(_write(tmp_path / "c.tsv", base.replace(",", "\t"))) == want
        head, *rows = base.splitlines()
        text = head + ",text\n" + "".join(f'{r},"two\nlines"\n' for r in rows)
        assert _fit_json(_write(tmp_path / "d.csv", text)) == want


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


class TestOneValueRule:
    """Documented values are read the same in every format; a missing marker (empty, NA, NaN, null) is no verdict
    everywhere; anything else is an error naming file, row or line, and field."""

    @pytest.mark.parametrize("marker", ["", "NA", "NaN", "null", "N/A"])
    def test_missing_markers_in_tables(self, tmp_path: Path, marker: str) -> None:
        lines = _long_csv().splitlines()
        lines[4] = lines[4].rsplit(",", 1)[0] + ","
        want = _doctor(_write(tmp_path / "empty.csv", "\n".join(lines) + "\n"))
        lines[4] += marker
        got = _doctor(_write(tmp_path / "m.csv", "\n".join(lines) + "\n"))
        assert got["judges"] == want["judges"] and got["histogram"] == want["histogram"] and got["skipped"] == want["skipped"]

    def test_words_in_json_lines_as_in_tables(self, tmp_path: Path) -> None:
        rows = [json.loads(x) for x in Q.read_text().splitlines()][:40]
        words = {1: "yes", 0: "fail", None: "NA"}
        plain = _write(tmp_path / "plain.jsonl", "".join(json.dumps({"judgments": r["judgments"]}) + "\n" for r in rows))
        text = _write(tmp_path / "words.jsonl", "".join(json.dumps({"judgments": [words[v] for v in r["judgments"]]}) + "\n"
                                                         for r in rows))
        assert _fit_json(text) == _fit_json(plain)

    def test_promptfoo_pass_as_text(self, tmp_path: Path) -> None:
        doc = json.loads(PROMPTFOO.read_text())
        as_text = json.loads(PROMPTFOO.read_text())
        for r in as_text["results"]["results"]:
            for c in (r.get("gradingResult") or {}).get("componentResults") or []:
                if isinstance(c.get("pass"), bool):
                    c["pass"] = str(c["pass"]).lower()  # "false" is a fail, not a truthy string
        f = _write(tmp_path / "text.json", json.dumps(as_text))
        assert _fit_json(f, "--label-field", "vars.gold") == _fit_json(PROMPTFOO, "--label-field", "vars.gold")
        doc["results"]["results"][2]["gradingResult"]["componentResults"][1]["pass"] = "maybe"
        line = one_error_line(run_cli("fit", _write(tmp_path / "bad.json", json.dumps(doc)), "--label-field", "vars.gold"))
        assert "record 3: field 'gradingResult.componentResults[1].pass': must be 1/0" in line

    def test_inspect_list_target(self, tmp_path: Path) -> None:
        log = next((FIXTURES / "inspect" / "main_json").glob("*.json"))
        doc = json.loads(log.read_text())
        one = json.loads(log.read_text())
        one["samples"][0]["target"] = [one["samples"][0]["target"]]  # one label in a list: that label
        assert _fit_json(_write(tmp_path / "one.json", json.dumps(one))) == _fit_json(log)
        doc["samples"][1]["target"] = ["C", "I"]
        line = one_error_line(run_cli("doctor", _write(tmp_path / "two.json", json.dumps(doc))))
        assert "sample 2: field 'target': holds 2 labels" in line and "['C'" not in line

    def test_json_verdicts_and_gold_compare_as_values(self, tmp_path: Path) -> None:
        """verdicts 1 and "1.0" agree with label "1"; a list label is refused, naming the line and field."""
        same = [{"verdicts": {"a": 1, "b": "1.0", "c": " 2 "}, "label": "1"}, {"verdicts": {"a": "x", "b": "y", "c": "x"}, "label": "x "}]
        f = _write(tmp_path / "v.jsonl", "".join(json.dumps(r) + "\n" for r in same * 10))
        judges = {j["name"]: j["verdicts"] for j in _doctor(f)["judges"]}
        assert judges == {"a": 20, "b": 20, "c": 20}
        assert _fit_json(f)["histogram"] == {"3": [0, 0, 20, 0]}  # 2 of 3 right on each line: a, b on the first, a, c on the other
        bad = _write(tmp_path / "bad.jsonl", json.dumps(same[0]) + "\n" + json.dumps({"verdicts": ["A"], "label": ["A", "B"]}) + "\n")
        assert "bad.jsonl:2: field 'label': must be one gold label" in one_error_line(run_cli("fit", bad))


class TestGoldPerItem:
    """A blank gold on one row of an item whose other rows have gold is an error naming the row; an item without
    gold on any row is skipped and counted (doctor says so), never dropped silently."""

    @staticmethod
    def _table(blank: set[tuple[int, str]]) -> str:
        rows = ["item_id,judge,verdict,gold"]
        for i in range(20):
            for j in "abc":
                gold = "" if (i, j) in blank else "AB"[i % 2]
                rows.append(f"q{i},{j},{'AB'[(i + len(j) * ord(j)) % 2]},{gold}")
        return "\n".join(rows) + "\n"

    @pytest.mark.parametrize("command", ["fit", "doctor", "judges"])
    def test_blank_gold_on_one_row(self, tmp_path: Path, command: str) -> None:
        f = _write(tmp_path / "g.csv", self._table({(3, "b")}))
        line = one_error_line(run_cli(command, f))
        assert "row 11: column 'gold': no gold label for item 'q3', which has one at row 10" in line

    def test_item_without_gold_is_an_unlabeled_item(self, tmp_path: Path) -> None:
        f = _write(tmp_path / "g.csv", self._table({(3, "a"), (3, "b"), (3, "c"), (5, "a"), (5, "b"), (5, "c")}))
        doc = _doctor(f)
        assert doc["items"] == 18 and doc["unlabeled_items"] == 2 and doc["skipped"] == []
        assert sum(v["items"] for v in doc["vote_splits"]) == 20  # every item's verdicts, labeled or not
        fit = _fit_json(f)
        assert fit["items"] == 18 and fit["unlabeled_items"] == 2


class TestRepeatedIds:
    """One rule for a repeated item id in JSON Lines, in every command: an error naming both lines, or the first or
    last line kept with --duplicates, exactly as if the other line were not there."""

    @pytest.fixture()
    def files(self, tmp_path: Path) -> dict[str, Path]:
        lines = Q.read_text().splitlines()[:60]
        again = json.loads(lines[40])
        again["id"] = json.loads(lines[5])["id"]
        twice = lines[:40] + [json.dumps(again)] + lines[41:]
        return {"twice": _write(tmp_path / "twice.jsonl", "\n".join(twice) + "\n"),
                "first": _write(tmp_path / "first.jsonl", "\n".join(lines[:40] + lines[41:]) + "\n"),
                "last": _write(tmp_path / "last.jsonl", "\n".join(lines[:5] + lines[6:40] + [json.dumps(again)] + lines[41:]) + "\n")}

    @pytest.mark.parametrize("command", ["fit", "judges", "doctor", "sample", "evaluate"])
    def test_refused_naming_both_lines(self, files: dict[str, Path], command: str) -> None:
        ident = json.loads(files["twice"].read_text().splitlines()[5])["id"]
        line = one_error_line(run_cli(command, files["twice"]))
        assert f"twice.jsonl:41: field 'id': id {ident!r} appears again (first on line 6)" in line and "--duplicates" in line

    def test_stdin(self, files: dict[str, Path]) -> None:
        line = one_error_line(run_cli("fit", "-", input=files["twice"].read_bytes()))
        assert "<stdin>:41: field 'id': the id of line 6 appears again" in line

    @pytest.mark.parametrize("keep", ["first", "last"])
    def test_keep_first_or_last(self, files: dict[str, Path], keep: str) -> None:
        assert _fit_json(files["twice"], "--duplicates", keep) | {"skipped_lines": 0} == _fit_json(files[keep]) | {"skipped_lines": 0}

    def test_pool_takes_the_same_option(self, tmp_path: Path, files: dict[str, Path]) -> None:
        pool = files["twice"]
        line = one_error_line(run_cli("sample", files["first"], "--pool", pool))
        assert "twice.jsonl:41: field 'id'" in line and "appears again (first on line 6)" in line


class TestSkipInvalidTables:
    """--skip-invalid skips bad table rows (a bad value, a malformed row) and says how many, as for JSON lines."""

    def test_bad_rows_skipped(self, tmp_path: Path) -> None:
        lines = _long_csv().splitlines()
        clean = _write(tmp_path / "clean.csv", "\n".join(lines[:5] + lines[6:8] + lines[9:]) + "\n")
        lines[5] = lines[5].rsplit(",", 1)[0] + ",maybe"
        lines[8] += ",extra"
        bad = _write(tmp_path / "bad.csv", "\n".join(lines) + "\n")
        assert "row 8: expected 3 fields" in one_error_line(run_cli("fit", bad))  # the file's structure is checked first
        assert "row 5: column 'correct'" in one_error_line(run_cli("fit", _write(tmp_path / "value.csv", "\n".join(lines[:8] + lines[9:]) + "\n")))
        p = run_cli("fit", bad, "--skip-invalid", "--no-chart")
        assert p.returncode in (0, 1) and b"skipped 2" in p.stderr, p.stderr
        assert _fit_json(bad, "--skip-invalid") | {"skipped_lines": 0} == _fit_json(clean) | {"skipped_lines": 0}
        reasons = {s["reason"] for s in _doctor(bad, "--skip-invalid")["skipped"]}
        assert reasons == {"malformed row", "bad value in column 'correct'"}

    def test_counts_table(self, tmp_path: Path) -> None:
        f = _write(tmp_path / "c.csv", "judges,correct,count\n3,1,5\n3,abc,2\n3,2,4\n")
        assert "row 2" in _no_duckdb_text(one_error_line(run_cli("fit", f)))
        assert _fit_json(f, "--skip-invalid")["items"] == 9


class TestMessagesSayWhereAndWhat:
    """One line naming the file, the line or row, and the field or option; no DuckDB text, no internal names."""

    def test_long_json_lines_name_lines(self, tmp_path: Path) -> None:
        rows = [json.dumps({"item_id": f"q{i // 3}", "judge": "abc"[i % 3], "correct": 1}) for i in range(12)]
        blank = rows[:2] + [""] + rows[2:]
        blank[7] = json.dumps({"item_id": "q9", "judge": "z", "correct": "maybe"})
        assert "long.jsonl:8: field 'correct': must be 1/0" in one_error_line(run_cli("fit", _write(tmp_path / "long.jsonl", "\n".join(blank) + "\n")))
        cut = list(rows)
        cut[4] = '{"item_id": "q1", "judge": "b", "correct":'
        assert "cut.jsonl:5: malformed JSON" in one_error_line(run_cli("doctor", _write(tmp_path / "cut.jsonl", "\n".join(cut) + "\n")))

    def test_nul_bytes_are_not_utf16(self, tmp_path: Path) -> None:
        lines = Q.read_bytes().splitlines(keepends=True)
        nul = tmp_path / "nul.jsonl"
        nul.write_bytes(b"".join(lines[:3]) + lines[3][:10] + b"\x00" + lines[3][10:])
        line = one_error_line(run_cli("fit", nul))
        assert "nul.jsonl:4: a NUL byte at byte 11" in line and "UTF-16" not in line
        u16 = tmp_path / "u16.jsonl"
        u16.write_bytes(Q.read_text().encode("utf-16-le"))
        assert "UTF-16" in one_error_line(run_cli("fit", u16))
        csv = tmp_path / "nul.csv"
        csv.write_bytes(b"item_id,\x00judge,correct\nq1,a,1\n")
        assert "NUL byte" in one_error_line(run_cli("fit", csv))

    @pytest.mark.parametrize("args,words", [
        (["--population", "5"], "--population must be an integer from the"),
        (["--population", "99999999999999999999"], "--population must be an integer from the"),
        (["--ensemble", "1,nope"], "--ensemble: unknown judge 'nope'"),
        (["--cost", "1=2,zz=1", "--max-error", "0.3"], "--cost: unknown judge 'zz'"),
        (["--cost", "1=2"], "--cost needs --max-error"),
    ])
    def test_judges_options(self, args: list[str], words: str) -> None:
        line = one_error_line(run_cli("judges", Q, *args))
        assert f"{Q}: {words}" in line and "population must" not in line.replace("--population", "")

    def test_label_field_that_no_record_has(self, tmp_path: Path) -> None:
        line = one_error_line(run_cli("fit", PROMPTFOO, "--label-field", "vars.nope"))
        assert "field 'vars.nope': no result has this field" in line and "vars.gold" in line and "--label-field" not in line
        log = next((FIXTURES / "inspect" / "main_json").glob("*.json"))
        line = one_error_line(run_cli("fit", log, "--label-field", "metadata.nope"))
        assert "field 'metadata.nope': no sample has this field" in line and "metadata.human" in line

    @pytest.mark.parametrize("text,words", [
        ("item_id,judge,score,gold\nq1,a,1.5,2\nq1,b,x,2\n", "row 2: column 'score': a tolerance compares numbers, got 'x'"),
        ("judges,correct,count\n3,1,5\n3,x,2\n", "row 2: judges 3, correct x, count 2"),
        ("id,a,a\n1,1,0\n", ":1: the header names column 'a' twice"),
        ("item_id,judge,correct\nq1,a,1\nq\xff,b,0\n", "not UTF-8"),
    ])
    def test_no_duckdb_text(self, tmp_path: Path, text: str, words: str) -> None:
        f = tmp_path / "t.csv"
        f.write_bytes(text.encode("utf-8", "surrogateescape") if "\xff" not in text else text.encode("latin-1"))
        assert words in _no_duckdb_text(one_error_line(run_cli("fit", f, "--tolerance", "0.5")))
