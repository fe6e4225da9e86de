"""The one-pass read of a long table of verdicts (inputs/table_patterns.py: histogram, checks and vote patterns from
one GROUP BY) gives exactly what the two-pass read gives (table_sql.histograms, then table_sql.vote_patterns), which
is the reference here: same histogram, same Votes, same errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from betaconform_cli.errors import InputError
from betaconform_cli.inputs import InputOptions, Keep, read_inputs, table_patterns


def _two_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_patterns, "counts_and_patterns", lambda *a: None)


def _rows(seed: int, n: int = 150, datasets: bool = False) -> list[str]:
    """item, judge, verdict, gold (and dataset): classes written several ways (1, 1.0, ' 1 '), missing words (NA, empty),
    unlabeled items, items without any verdict, judges that skip items."""
    rng = np.random.default_rng(seed)
    head = "item_id,judge,verdict,gold" + (",dataset" if datasets else "")
    out = [head]
    forms = {"1": ["1", "1.0", " 1 "], "A": ["A", "A "], "B": ["B"]}
    for i in range(n):
        gold = str(rng.choice(["1", "A", "B"]))
        g = "" if i % 4 == 0 else ("NA" if i % 7 == 0 else rng.choice(forms[gold]))
        if i % 4 == 0 or i % 7 == 0:
            gold = str(rng.choice(["1", "A", "B"]))
        for j in range(5):
            if rng.random() < 0.15:
                continue
            v = gold if rng.random() < 0.7 else str(rng.choice(["1", "A", "B"]))
            text = "" if rng.random() < 0.05 or i % 50 == 3 else str(rng.choice(forms[v]))
            out.append(f"it{i},judge-{j},{text},{g}" + (f",d{i % 2}" if datasets else ""))
    return out


def _same(a: list, b: list) -> None:
    assert [d.name for d in a] == [d.name for d in b]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.table.counts, y.table.counts)
        assert (x.n_items, x.unlabeled_items, x.skipped) == (y.n_items, y.unlabeled_items, y.skipped)
        assert x.reading == y.reading
        assert (x.votes is None) == (y.votes is None)
        if x.votes is not None and y.votes is not None:
            assert (x.votes.judges, x.votes.classes) == (y.votes.judges, y.votes.classes)
            np.testing.assert_array_equal(x.votes.patterns, y.votes.patterns)
            np.testing.assert_array_equal(x.votes.gold, y.votes.gold)
            np.testing.assert_array_equal(x.votes.counts, y.votes.counts)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("datasets", [False, True])
def test_one_pass_equals_two_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, datasets: bool) -> None:
    path = tmp_path / "long.csv"
    path.write_text("\n".join(_rows(seed, datasets=datasets)) + "\n", encoding="utf-8")
    calls = []
    real = table_patterns.counts_and_patterns
    monkeypatch.setattr(table_patterns, "counts_and_patterns", lambda *a: calls.append(1) or real(*a))
    one = read_inputs([str(path)])
    assert calls and all(d.votes is not None for d in one)
    _two_pass(monkeypatch)
    _same(one, read_inputs([str(path)]))


@pytest.mark.parametrize("bad", ["repeat", "repeat without a verdict", "two golds", "partial gold", "empty judge"])
def test_the_same_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    rows = ["item_id,judge,verdict,gold", "a,j1,A,A", "a,j2,B,A", "b,j1,A,", "b,j2,A,", "c,j1,B,B", "c,j2,B,B"]
    rows += {"repeat": ["c,j1,A,B"], "repeat without a verdict": ["c,j1,,B"], "two golds": ["d,j1,A,A", "d,j2,A,B"], "partial gold": ["d,j1,A,A", "d,j2,A,"],
             "empty judge": ["d,,A,A"]}[bad]
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as one:
        read_inputs([str(path)])
    _two_pass(monkeypatch)
    with pytest.raises(InputError) as two:
        read_inputs([str(path)])
    assert str(one.value) == str(two.value)


def test_many_classes_take_the_second_pass(tmp_path: Path) -> None:
    """More verdict texts than a key codes: None, and the reader's two passes (same result as ever)."""
    rows = ["item_id,judge,verdict,gold"] + [f"i{i},j{j},v{(i * 7 + j) % 300},v{i % 300}" for i in range(300) for j in range(3)]
    path = tmp_path / "many.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    (ds,) = read_inputs([str(path)], InputOptions())
    assert ds.votes is not None and len(ds.votes.classes) == 300


@pytest.mark.parametrize("width, columns", [(3, 12), (1, 70)])
def test_unique_rows_is_numpys(width: int, columns: int) -> None:
    """Rows packed into one int64 each (or, where they do not fit, np.unique itself) give np.unique's rows, order and
    inverse."""
    table = np.random.default_rng(width).integers(-1, width, size=(400, columns))
    unique, inverse = table_patterns._unique_rows(table, width)
    want, want_inverse = np.unique(table.astype(np.int32), axis=0, return_inverse=True)
    np.testing.assert_array_equal(unique, want)
    np.testing.assert_array_equal(inverse, want_inverse.reshape(-1))
    assert unique.dtype == np.int32


@pytest.mark.parametrize("bad", [None, "0,j0,B,A\n0,j0,,A"])
def test_more_judges_than_codes_leave_room_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str | None) -> None:
    """16 judges and three classes: 3 bits each (a code for a missing verdict) give no slots of their own to these
    names, 2 bits do, so a mask of the judges present counts the rows; still one pass, with the two passes' result and
    error."""
    rng = np.random.default_rng(5)
    rows = ["item_id,judge,verdict,gold"] + [f"{i},j{j},{rng.choice(['A', 'B', 'C', ''])},{'' if i % 3 else 'A'}"
                                             for i in range(40) for j in range(16) if rng.random() < 0.9]
    path = tmp_path / "wide_panel.csv"
    path.write_text("\n".join(rows + ([bad] if bad else [])) + "\n", encoding="utf-8")
    got = []
    real = table_patterns.counts_and_patterns
    monkeypatch.setattr(table_patterns, "counts_and_patterns", lambda *a: got.append(real(*a)) or got[-1])
    if bad:
        with pytest.raises(InputError) as one:
            read_inputs([str(path)])
        _two_pass(monkeypatch)
        with pytest.raises(InputError) as two:
            read_inputs([str(path)])
        assert str(one.value) == str(two.value)
        return
    one = read_inputs([str(path)])
    assert got and got[0] is not None
    _two_pass(monkeypatch)
    _same(one, read_inputs([str(path)]))


def test_gold_aggregated_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the gold's one-hot code has no room on top of the key, its codes are aggregated apart: the same result,
    and the same errors for two gold labels and gold on some rows only."""
    monkeypatch.setattr(table_patterns, "ONE_HOT_GOLDS", -1)
    path = tmp_path / "long.csv"
    path.write_text("\n".join(_rows(3)) + "\n", encoding="utf-8")
    one = read_inputs([str(path)])
    errors = []
    for bad in (["d,j1,A,A", "d,j2,A,B"], ["d,j1,A,A", "d,j2,A,"]):
        path.write_text("\n".join(["item_id,judge,verdict,gold", "a,j1,A,A", "a,j2,B,A", *bad]) + "\n", encoding="utf-8")
        with pytest.raises(InputError) as err:
            read_inputs([str(path)])
        errors.append(str(err.value))
    _two_pass(monkeypatch)
    path.write_text("\n".join(_rows(3)) + "\n", encoding="utf-8")
    _same(one, read_inputs([str(path)]))
    for bad, message in zip((["d,j1,A,A", "d,j2,A,B"], ["d,j1,A,A", "d,j2,A,"]), errors):
        path.write_text("\n".join(["item_id,judge,verdict,gold", "a,j1,A,A", "a,j2,B,A", *bad]) + "\n", encoding="utf-8")
        with pytest.raises(InputError) as err:
            read_inputs([str(path)])
        assert str(err.value) == message


def test_no_gold_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool with no gold on any row (no gold text to code): one pass, the two passes' Votes."""
    path = tmp_path / "pool.csv"
    path.write_text("item_id,judge,verdict,gold\na,j1,A,\na,j2,B,\nb,j1,A,\nb,j2,A,\nc,j2,,NA\n", encoding="utf-8")
    got = []
    real = table_patterns.counts_and_patterns
    monkeypatch.setattr(table_patterns, "counts_and_patterns", lambda *a: got.append(real(*a)) or got[-1])
    one = read_inputs([str(path)], need_labels=False)
    assert got and got[0] is not None and one[0].unlabeled_items == 2
    _two_pass(monkeypatch)
    _same(one, read_inputs([str(path)], need_labels=False))


@pytest.mark.parametrize("late", ["verdict", "gold", "two golds", "judge", "sorted by judge"])
def test_texts_the_first_rows_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: str) -> None:
    """Judges, verdict and gold texts are read from the first rows only (SAMPLE_ROWS, 2 here): a judge, a verdict or
    a gold label that first shows after them has no code, the key says so, and the pass runs again with every text: the
    two passes' result, or their error (gold 'Z' beside 'A' on one item, 'Z' never seen in the first rows). Where
    the first rows name one judge (a file sorted by judge), the judges are read from their whole column at once."""
    monkeypatch.setattr(table_patterns, "SAMPLE_ROWS", 2)
    rows = ["item_id,judge,verdict,gold", "a,j1,A,A", "a,j2,B,A", "b,j1,A,", "b,j2,A,"]
    rows += {"verdict": ["c,j1,C,B", "c,j2,B,B"], "gold": ["c,j1,B,B", "c,j2,A,B"], "two golds": ["c,j1,B,A", "c,j2,A,Z"],
             "judge": ["c,j3,B,A", "c,j1,A,A"], "sorted by judge": []}[late]
    if late == "sorted by judge":  # the first rows name one judge (and every other text): judges read whole at once
        rows = ["item_id,judge,verdict,gold", "a,j1,A,A", "b,j1,B,", "a,j2,B,A", "b,j2,A,"]
    path = tmp_path / "late.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    passes = []
    real = table_patterns._one_pass
    monkeypatch.setattr(table_patterns, "_one_pass", lambda *a: passes.append(a[-1]) or real(*a))
    if late == "two golds":
        with pytest.raises(InputError) as one:
            read_inputs([str(path)])
        _two_pass(monkeypatch)
        with pytest.raises(InputError) as two:
            read_inputs([str(path)])
        assert str(one.value) == str(two.value) and "two different gold labels" in str(one.value)
        return
    one = read_inputs([str(path)])
    assert passes == ([2] if late == "sorted by judge" else [2, None])  # a text the first rows missed: again
    _two_pass(monkeypatch)
    _same(one, read_inputs([str(path)]))


def test_a_gold_class_of_one_dataset_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset column whose datasets' gold use different classes (C in d0 only): each dataset's Votes are laid out
    over its own classes, as the two passes lay them out (the one pass raised ValueError: 'C' is not in list)."""
    path = tmp_path / "long.csv"
    rows = ["item_id,judge,verdict,gold,dataset", "a,j0,C,C,d0", "a,j1,A,C,d0", "b,j0,A,A,d0", "b,j1,A,A,d0",
            "c,j0,B,B,d1", "c,j1,A,B,d1", "d,j0,A,A,d1", "d,j1,A,A,d1"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    one = read_inputs([str(path)])
    assert [d.votes.classes for d in one if d.votes is not None] == [("A", "C"), ("A", "B")]
    _two_pass(monkeypatch)
    _same(one, read_inputs([str(path)]))


def test_a_judge_without_any_verdict_reads_alike_for_every_command(tmp_path: Path) -> None:
    """A long table's judge whose only verdicts are missing (NA) judged no item: the row-by-row read that judges,
    sample and score --compare use (Keep.ITEMS) gives fit's histogram and Votes, where it refused the table ("column
    'c': judge 'c' gave no verdict on any item") that fit read."""
    path = tmp_path / "long.csv"
    rows = ["item_id,judge,verdict,gold", "a,j0,A,A", "a,j1,B,A", "a,c,NA,A", "b,j0,B,B", "b,j1,B,B", "b,c,,B"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    (counts,), (items,) = read_inputs([str(path)]), read_inputs([str(path)], keep=Keep.ITEMS)
    np.testing.assert_array_equal(counts.table.counts, items.table.counts)
    assert counts.votes is not None and items.votes is not None
    assert counts.votes.judges == items.votes.judges == ("j0", "j1")
    np.testing.assert_array_equal(counts.votes.patterns, items.votes.patterns)


def test_parquet_dictionary_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The codes come from constant lists indexed by list_position (table_sql.lookup), which DuckDB evaluates on a
    Parquet column's dictionary: a Parquet file of the same rows (missing verdicts as NULL and as words, several
    spellings of a class) gives the two passes' result in one pass."""
    import duckdb

    csv, parquet = tmp_path / "long.csv", tmp_path / "long.parquet"
    csv.write_text("\n".join(_rows(4)) + "\n", encoding="utf-8")
    duckdb.connect().execute(f"COPY (SELECT * FROM read_csv('{csv}', all_varchar = true)) TO '{parquet}' (FORMAT parquet)")
    got = []
    real = table_patterns.counts_and_patterns
    monkeypatch.setattr(table_patterns, "counts_and_patterns", lambda *a: got.append(real(*a)) or got[-1])
    one = read_inputs([str(parquet)])
    assert got and got[0] is not None
    _two_pass(monkeypatch)
    _same(one, read_inputs([str(parquet)]))


def test_a_lookup_that_misses_null_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Missing verdicts and gold are coded by a NULL entry of the lookup's list (list_position matches NULL to NULL
    in DuckDB 2.0). Where a DuckDB would not match it, the rows without a verdict fill no slot: the row-count check
    fails, and the reader still gives the two passes' result (by the two passes), never a wrong one."""
    path = tmp_path / "long.csv"
    path.write_text("\n".join(_rows(0)) + "\n", encoding="utf-8")
    real_lookup = table_patterns.lookup
    monkeypatch.setattr(table_patterns, "lookup", lambda col, texts, codes: real_lookup(
        col, [t for t in texts if t is not None], [c for t, c in zip(texts, codes) if t is not None]))
    got = []
    real = table_patterns.counts_and_patterns
    monkeypatch.setattr(table_patterns, "counts_and_patterns", lambda *a: got.append(real(*a)) or got[-1])
    one = read_inputs([str(path)])
    assert got == [None]
    _two_pass(monkeypatch)
    _same(one, read_inputs([str(path)]))
