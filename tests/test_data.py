"""Reading judgment files: the four shapes, paths, and one-line errors naming file, line and field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from betaconform_cli.counts import CountTable
from betaconform_cli.errors import InputError
from betaconform_cli.inputs import InputOptions as InputSpec
from betaconform_cli.inputs import Keep, expand_paths, read_dataset
from betaconform_cli.inputs.jsonl import read_jsonl


class TestShapes:
    """Each accepted shape gives the right (judges, correct) counts."""

    def test_list_with_nulls_and_booleans(self, write_jsonl) -> None:
        p = write_jsonl("a.jsonl", [{"judgments": [1, 0, True, False, None]}, {"judgments": [1, 1, 1]}])
        ds = read_dataset(p)
        assert ds.table.counts[4, 2] == 1 and ds.table.counts[3, 3] == 1 and ds.n_items == 2

    def test_object_keyed_by_judge(self, write_jsonl) -> None:
        p = write_jsonl("a.jsonl", [{"judgments": {"a": 1, "b": 0, "c": None}}])
        assert read_dataset(p).table.counts[2, 1] == 1

    def test_counts(self, write_jsonl) -> None:
        p = write_jsonl("a.jsonl", [{"correct": 7, "judges": 11}, {"correct": 0, "judges": 3}])
        t = read_dataset(p).table
        assert t.counts[11, 7] == 1 and t.counts[3, 0] == 1 and t.max_judges == 11 and t.min_judges == 3

    def test_verdicts_equality_and_tolerance(self, write_jsonl) -> None:
        p = write_jsonl("a.jsonl", [{"verdicts": ["A", "B", "A", None], "label": "A"}])
        assert read_dataset(p).table.counts[3, 2] == 1
        q = write_jsonl("b.jsonl", [{"verdicts": [3, 4.5, 7, 5], "label": 4}])
        assert read_dataset(q, InputSpec(tolerance=1.0)).table.counts[4, 3] == 1
        with pytest.raises(InputError, match=r'share no class \(gold: "4"; verdicts: "3", "4.5", "5", "7"\).*--tolerance'):
            read_dataset(q)  # scores compared as classes without a tolerance: never equal to the gold (issue 25)

    def test_renamed_fields(self, write_jsonl) -> None:
        p = write_jsonl("a.jsonl", [{"votes": [1, 0, 1], "uid": "x", "prompt": "hello"}])
        ds = read_dataset(p, InputSpec(judgments_field="votes", id_field="uid", text_field="prompt"), keep=Keep.ITEMS)
        assert ds.items is not None and ds.items[0].id == "x" and ds.items[0].text == "hello" and ds.items[0].correct == 2

    def test_byte_order_mark_and_crlf(self, tmp_path: Path) -> None:
        p = tmp_path / "bom.jsonl"
        p.write_bytes(b'\xef\xbb\xbf{"judgments": [1, 0, 1]}\r\n{"judgments": [1, 1, 1]}\r\n')
        t = read_dataset(p).table
        assert t.counts[3, 2] == 1 and t.counts[3, 3] == 1

    def test_gzip_and_blank_lines(self, tmp_path: Path) -> None:
        p = tmp_path / "z.jsonl.gz"
        with gzip.open(p, "wt") as fh:
            fh.write('{"judgments": [1, 1]}\n\n{"judgments": [0, 1]}\n')
        ds = read_dataset(p)
        assert ds.n_items == 2 and ds.name == "z"


class TestErrors:
    """Bad input: an InputError whose one-line message names file, line and field."""

    @pytest.mark.parametrize(
        "lines,line,field,words",
        [
            (['{"judgments": [1, 0]}', "{not json"], 2, None, "malformed JSON"),
            (['{"judgments": [1, 0]}', '{"judgments": [1, 2]}'], 2, "judgments[1]", "must be 1/0"),
            (['{"judgments": [1, 0]}', '{"judgments": "yes"}'], 2, "judgments", "must be a list"),
            (['{"judgments": [null, null]}'], 1, None, "no valid items (1 line: no judge gave a verdict)"),
            (['{"judgments": []}'], 1, None, "no valid items (1 line: no judge gave a verdict)"),
            (['{"correct": 12, "judges": 11}'], 1, "correct", "exceeds judges"),
            (['{"correct": -1, "judges": 11}'], 1, "correct", "negative"),
            (['{"correct": 1.5, "judges": 11}'], 1, "correct", "integer"),
            (['{"correct": 1}'], 1, "judges", "missing"),
            (['{"correct": 0, "judges": 1000000000}'], 1, "judges", "at most 1000"),
            (['{"judgments": [1]}', '{"judgments": [' + ", ".join(["1"] * 1001) + ']}'], 2, "judgments", "at most 1000"),
            (['{"judgments": [1, 0]}', '{"correct": 1, "judges": 2}'], 2, None, "mixed shapes"),
            (['{"correct": 1, "judges": 2}', '{"judgments": [1]}'], 2, "correct", "missing"),
            (['{"verdicts": ["A"], "label": "A"}', '{"verdicts": ["B", ["A"]]}'], 2, "verdicts[1]", "one value"),
            (['{"foo": 1}'], 1, None, "no judgments"),
            (["[1, 0, 1]"], 1, None, "JSON object"),
        ],
    )
    def test_bad_lines(self, write_jsonl, lines: list[str], line: int, field: str | None, words: str) -> None:
        p = write_jsonl("bad.jsonl", lines, raw=True)
        with pytest.raises(InputError) as info:
            read_dataset(p)
        e = info.value
        assert e.line == line and e.field == field and words in str(e)
        assert str(e).startswith(f"{p}:{line}") and "\n" not in str(e)

    def test_tolerance_needs_numbers(self, write_jsonl) -> None:
        p = write_jsonl("a.jsonl", [{"verdicts": ["x", 2], "label": 2}])
        with pytest.raises(InputError, match=r"verdicts\[0\].*number"):
            read_dataset(p, InputSpec(tolerance=0.5))

    def test_empty_file(self, write_jsonl) -> None:
        with pytest.raises(InputError, match="empty file"):
            read_dataset(write_jsonl("e.jsonl", ["", "  "], raw=True))

    def test_skip_invalid_counts_lines(self, write_jsonl) -> None:
        p = write_jsonl("s.jsonl", ['{"judgments": [1, 0]}', "oops", '{"judgments": [1, 7]}', '{"judgments": [1]}'], raw=True)
        ds = read_dataset(p, InputSpec(skip_invalid=True))
        assert ds.skipped == 2 and ds.n_items == 2

    def test_skip_invalid_with_nothing_valid(self, write_jsonl) -> None:
        with pytest.raises(InputError, match="no valid items"):
            read_dataset(write_jsonl("s.jsonl", ["oops"], raw=True), InputSpec(skip_invalid=True))

    def test_unreadable_path(self, tmp_path: Path) -> None:
        with pytest.raises(InputError, match="no such file"):
            expand_paths([str(tmp_path / "missing.jsonl")])

    def test_corrupt_gzip_is_a_read_error_not_a_zlib_traceback(self, tmp_path: Path) -> None:
        from betaconform_cli.inputs import read_pool

        data = gzip.compress("".join(json.dumps({"id": f"i{i}", "judgments": [i % 2, 1, 0]}) + "\n" for i in range(500)).encode())
        p = tmp_path / "c.jsonl.gz"
        p.write_bytes(data[:20] + b"\0" * 50 + data[70:])  # a damaged deflate stream raises zlib.error, not OSError
        for read in (lambda: read_dataset(p), lambda: read_dataset(p, keep=Keep.ITEMS), lambda: read_pool(str(p))):
            with pytest.raises(InputError, match="damaged gzip file"):
                read()

    def test_invalid_utf8_is_a_line_error(self, tmp_path: Path) -> None:
        p = tmp_path / "u.jsonl"
        p.write_bytes(b'{"judgments": [1]}\n{"judgments": [1], "text": "\xff"}\n')
        with pytest.raises(InputError) as info:
            read_dataset(p)
        assert info.value.line == 2


class TestPaths:
    """Files, directories and globs; each file is one dataset."""

    def test_directory_and_glob(self, tmp_path: Path) -> None:
        for name in ("b.jsonl", "a.jsonl", "c.txt"):
            (tmp_path / name).write_text('{"judgments": [1]}\n')
        assert [p.name for p in expand_paths([str(tmp_path)])] == ["a.jsonl", "b.jsonl"]
        assert [p.name for p in expand_paths([str(tmp_path / "*.jsonl")])] == ["a.jsonl", "b.jsonl"]
        with pytest.raises(InputError, match="matches no file"):
            expand_paths([str(tmp_path / "*.nothing")])

    def test_file_name_with_glob_characters(self, tmp_path: Path) -> None:
        literal = tmp_path / "run[1].jsonl"
        literal.write_text('{"judgments": [1]}\n')
        assert expand_paths([str(literal)]) == [literal]


class TestNeverCrashes:
    """Property: arbitrary JSON values on a line give counts or an InputError, never another exception."""

    @given(st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=3),
                        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(["judgments", "correct", "judges", "verdicts", "label", "x"]), c, max_size=4),
                        max_leaves=8))
    @settings(max_examples=150, deadline=None)
    def test_any_json_line(self, tmp_path_factory, value) -> None:
        p = tmp_path_factory.mktemp("h") / "h.jsonl"
        p.write_text(json.dumps(value) + "\n")
        try:
            ds = read_dataset(p)
        except InputError:
            return
        assert ds.n_items == 1 and (np.asarray(ds.table.counts) >= 0).all()


def test_count_table_from_pairs_validates() -> None:
    with pytest.raises(ValueError):
        CountTable(np.array([[0, 1], [0, 0]]))


class TestParallelRead:
    """Reading a file in several byte ranges gives the same counts and the same error lines as one pass."""

    def test_same_counts(self, write_jsonl) -> None:
        rng = np.random.default_rng(0)
        rows = [{"judgments": [int(v) for v in rng.random(int(rng.integers(1, 9))) < 0.6]} for _ in range(3000)]
        p = write_jsonl("big.jsonl", rows)
        one = read_jsonl(p, workers=1).table.counts
        for workers in (2, 3, 7):
            np.testing.assert_array_equal(read_jsonl(p, workers=workers).table.counts, one)

    @pytest.mark.parametrize("bad_line", [1, 1500, 2999, 3000])
    def test_same_error_line(self, write_jsonl, bad_line: int) -> None:
        lines = ['{"judgments": [1, 0, 1]}'] * 3000
        lines[bad_line - 1] = '{"judgments": [1, 5]}'
        p = write_jsonl("bad.jsonl", lines, raw=True)
        for workers in (1, 2, 3):
            with pytest.raises(InputError) as info:
                read_jsonl(p, workers=workers)
            assert info.value.line == bad_line and info.value.field == "judgments[1]"

    def test_mixed_shapes_across_ranges(self, write_jsonl) -> None:
        lines = ['{"judgments": [1, 0, 1]}'] * 1000 + ['{"correct": 1, "judges": 3}'] * 1000
        p = write_jsonl("mixed.jsonl", lines, raw=True)
        for workers in (1, 2):
            with pytest.raises(InputError, match="mixed shapes") as info:
                read_jsonl(p, workers=workers)
            assert info.value.line == 1001

    def test_skipped_lines_add_up(self, write_jsonl) -> None:
        lines = ['{"judgments": [1, 0, 1]}', "junk"] * 1000
        p = write_jsonl("skip.jsonl", lines, raw=True)
        assert read_jsonl(p, InputSpec(skip_invalid=True), workers=3).skipped == 1000


class TestFastPath:
    """The block fast path (msgspec + cached arrays) gives exactly what the careful line-by-line path gives."""

    @pytest.fixture(params=[64, 1000, 1 << 22])
    def block(self, request, monkeypatch: pytest.MonkeyPatch) -> int:
        import betaconform_cli.inputs.jsonl as data_module

        monkeypatch.setattr(data_module, "BLOCK_BYTES", request.param)
        return request.param

    def test_counts_match_a_direct_count(self, write_jsonl, block: int) -> None:
        rng = np.random.default_rng(1)
        rows, direct = [], {}
        for i in range(800):
            j = [None if rng.random() < 0.1 else int(v) for v in rng.random(int(rng.integers(1, 12))) < 0.7]
            j = j if any(v is not None for v in j) else [1]
            if i % 7 == 0:
                j = [bool(v) if v is not None else None for v in j]
            rows.append({"id": i, "text": "é" * (i % 3), "judgments": j})
            key = (sum(v is not None for v in j), sum(1 for v in j if v))
            direct[key] = direct.get(key, 0) + 1
        p = write_jsonl("fast.jsonl", rows)
        t = read_dataset(p).table
        assert {(int(k), int(s)): int(t.counts[k, s]) for k, s in zip(*np.nonzero(t.counts))} == direct

    @pytest.mark.parametrize(
        "bad,field,words",
        [
            ('{"judgments": [1, 2]}', "judgments[1]", "must be 1/0"),
            ('{"judgments": 1}', "judgments", "must be a list"),
            ('{"judgments": [1, 0], "text": "\\u00e9", oops}', None, "malformed JSON"),
            ('{"correct": 1, "judges": 2}', None, "mixed shapes"),
        ],
    )
    def test_errors_name_the_same_line(self, write_jsonl, block: int, bad: str, field, words: str) -> None:
        lines = ['{"id": 1, "text": "a longer text to fill blocks", "judgments": [1, 0, 1, 1]}'] * 300
        lines[211] = bad
        p = write_jsonl("bad.jsonl", lines, raw=True)
        with pytest.raises(InputError, match=words) as info:
            read_dataset(p)
        assert info.value.line == 212 and info.value.field == field

    def test_an_item_nobody_judged_is_skipped_and_counted(self, write_jsonl, block: int) -> None:
        """Issue 25: a line with no verdict is skipped and counted (as a table skips such an item), at any block size."""
        lines = ['{"text": "a longer text to fill blocks", "judgments": [1, 0, 1, 1]}'] * 300
        lines[211] = '{"judgments": [null]}'
        ds = read_dataset(write_jsonl("skip.jsonl", lines, raw=True))
        assert ds.n_items == 299 and ds.skipped == 1
        assert ds.reading is not None and [(s.reason, s.count, s.first) for s in ds.reading.skips] == [
            ("no judge gave a verdict", 1, 212)]

    def test_invalid_utf8_in_an_unused_field_is_caught(self, tmp_path: Path, block: int) -> None:
        p = tmp_path / "u.jsonl"
        p.write_bytes(b'{"judgments": [1, 0], "text": "ok"}\n' * 100 + b'{"judgments": [1], "text": "\xff"}\n')
        with pytest.raises(InputError) as info:
            read_dataset(p)
        assert info.value.line == 101

    def test_skip_invalid_and_blank_lines(self, write_jsonl, block: int) -> None:
        lines = ['{"judgments": [1, 0]}', "", '{"judgments": [1, "x"]}', "   ", '{"judgments": [0]}'] * 50
        p = write_jsonl("s.jsonl", lines, raw=True)
        ds = read_dataset(p, InputSpec(skip_invalid=True))
        assert ds.skipped == 50 and ds.n_items == 100

    def test_renamed_field(self, write_jsonl, block: int) -> None:
        p = write_jsonl("r.jsonl", [{"votes": [1, 0, 1]}] * 200)
        assert read_dataset(p, InputSpec(judgments_field="votes")).table.counts[3, 2] == 200

    def test_ids_of_every_kind_are_one_id_by_their_text(self, write_jsonl, block: int) -> None:
        """The fast path reads string ids first and numbers or null from the first block that has one: 7 and "7"
        are still one id (a repeat, named at its line), null ids and missing ids repeat freely, the id "None" does not."""
        lines = [f'{{"id": "s{i}", "judgments": [1, 0, 1]}}' for i in range(300)]
        lines[3] = '{"id": "7", "judgments": [1, 1]}'
        lines[150] = '{"id": null, "judgments": [1]}'
        lines[160] = '{"id": null, "judgments": [0]}'
        lines[170] = '{"judgments": [0]}'
        lines[171] = '{"judgments": [1]}'
        p = write_jsonl("ids.jsonl", lines, raw=True)
        assert read_dataset(p).n_items == 300
        lines[250] = '{"id": 7, "judgments": [0, 0]}'
        with pytest.raises(InputError, match="appears again") as info:
            read_dataset(write_jsonl("ids2.jsonl", lines, raw=True))
        assert info.value.line == 251
        lines[250] = '{"id": "s250", "judgments": [0, 0]}'
        lines[200] = lines[210] = '{"id": "None", "judgments": [1]}'  # the text None is an id (a null one is none)
        with pytest.raises(InputError, match="id 'None' appears again") as info:
            read_dataset(write_jsonl("ids3.jsonl", lines, raw=True))
        assert info.value.line == 211

    def test_id_field_that_is_the_judgments_field(self, write_jsonl, block: int) -> None:
        """--id-field judgments: read as the careful path reads it (each list its id), not a ValueError from the
        fast path's struct (two fields renamed to one name)."""
        lines = [f'{{"judgments": [{i % 2}, {i // 2 % 2}, {i // 4 % 2}]}}' for i in range(8)] * 2
        p = write_jsonl("same.jsonl", lines[:8], raw=True)
        assert read_dataset(p, InputSpec(id_field="judgments")).n_items == 8
        with pytest.raises(InputError, match="appears again") as info:
            read_dataset(write_jsonl("same2.jsonl", lines, raw=True), InputSpec(id_field="judgments"))
        assert info.value.line == 9


class TestVotes:
    """The unlabeled-items data model: patterns with counts, expanded per item on demand."""

    def test_counts_and_expansion(self) -> None:
        import numpy as np

        from betaconform_cli.inputs.dataset import Votes

        v = Votes(("a", "b"), ("no", "yes"), np.array([[1, 1], [0, -1], [1, 0]]), np.array([1, -1, -1]),
                  np.array([2, 3, 1]))
        assert (v.labeled_items, v.unlabeled_items) == (2, 4)
        verdicts, gold = v.per_item()
        assert verdicts.shape == (6, 2) and list(gold) == [1, 1, -1, -1, -1, -1]
        kept = Votes(v.judges, v.classes, v.patterns, v.gold, v.counts, item_pattern=np.array([2, 0, 1, 1, 0, 1]))
        assert [list(r) for r in kept.per_item()[0][:2]] == [[1, 0], [1, 1]]

    def test_refuses_inconsistent_arrays(self) -> None:
        import numpy as np
        import pytest

        from betaconform_cli.inputs.dataset import Votes

        with pytest.raises(ValueError):
            Votes(("a",), ("x",), np.array([[1]]), np.array([0]), np.array([1]))  # code 1 of one class
        with pytest.raises(ValueError):
            Votes(("a",), ("x", "y"), np.array([[1]]), np.array([0]), np.array([2]), item_pattern=np.array([0]))
