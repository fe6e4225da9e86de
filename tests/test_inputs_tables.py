"""Tables (long, wide, counts; CSV, TSV, gzip, Parquet, JSON Lines, hive folders, stdin) read through DuckDB:
the same items in every format give the same fit, and every bad table is one line naming the row and column."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from betaconform_cli.errors import InputError
from betaconform_cli.inputs import InputOptions, Keep, read_dataset, read_inputs

from .conftest import invoke

JUDGES = ("gpt-4o", "claude", "llama", "mistral")


def write_all(root: Path, items: list[tuple[str, list[int | None]]]) -> dict[str, Path]:
    """The same items as canonical JSONL, long CSV, long Parquet, long JSONL, wide CSV, verdict CSV and counts CSV."""
    root.mkdir(parents=True, exist_ok=True)
    out = {name: root / name for name in ("canon.jsonl", "long.csv", "long.parquet", "long_rows.jsonl", "wide.csv",
                                           "verdicts.tsv", "counts.csv")}
    out["canon.jsonl"].write_text("".join(json.dumps({"id": i, "judgments": dict(zip(JUDGES, m))}) + "\n" for i, m in items))
    rows = [(i, j, v) for i, m in items for j, v in zip(JUDGES, m) if v is not None]
    out["long.csv"].write_text("item_id,judge,correct\n" + "".join(f"{i},{j},{'yes' if v else 'no'}\n" for i, j, v in rows))
    out["long_rows.jsonl"].write_text("".join(json.dumps({"sample_id": i, "grader": j, "is_correct": bool(v)}) + "\n" for i, j, v in rows))
    out["wide.csv"].write_text("id," + ",".join(JUDGES) + "\n" + "".join(
        i + "," + ",".join("" if v is None else str(v) for v in m) + "\n" for i, m in items))
    out["verdicts.tsv"].write_text("question_id\tmodel\tverdict\tgold\n" + "".join(
        f"{i}\t{j}\t{'A' if v else 'B'}\tA\n" for i, j, v in rows))
    cells = Counter((sum(v is not None for v in m), sum(v == 1 for v in m)) for _, m in items)
    out["counts.csv"].write_text("judges,correct,count\n" + "".join(f"{k},{s},{n}\n" for (k, s), n in cells.items()))
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_csv('{out['long.csv']}')) TO '{out['long.parquet']}'")
    return out


def items_strategy() -> st.SearchStrategy[list[tuple[str, list[int | None]]]]:
    mark = st.sampled_from([0, 1, None])
    row = st.lists(mark, min_size=len(JUDGES), max_size=len(JUDGES)).filter(lambda m: any(v is not None for v in m))
    # every judge gives some verdict: a wide table's column with none is refused (a misnamed column), JSON Lines not
    every = st.lists(row, min_size=3, max_size=25).filter(lambda rows: all(any(r[j] is not None for r in rows) for j in range(len(JUDGES))))
    return every.map(lambda rows: [(f"q{i}", r) for i, r in enumerate(rows)])


def fit_json(runner, path: Path) -> dict:
    res = invoke(runner, "fit", path, "-f", "json", "--ks", "1-3")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    return {k: v for k, v in doc.items() if k not in ("dataset", "source")}


class TestSameFitInEveryFormat:
    """The property of issue 11: one set of items, every format, identical fit JSON."""

    @pytest.mark.slow  # 8 examples x 7 formats, a fit each: ~6 s of CPU (the fast tier keeps the reading check below)
    @settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(items=items_strategy())
    def test_formats_agree(self, runner, tmp_path_factory, items) -> None:
        """runner and tmp_path_factory hold no state between examples (each example writes a fresh folder)."""
        files = write_all(tmp_path_factory.mktemp("fmt"), items)
        want = fit_json(runner, files["canon.jsonl"])
        if not any(v == 1 for _, m in items for v in m):  # every verdict "B" against gold "A": refused (issue 25)
            res = invoke(runner, "fit", files.pop("verdicts.tsv"), "-f", "json")
            assert res.exit_code == 2 and "share no class" in res.output, res.output
        for name, path in files.items():
            assert fit_json(runner, path) == want, name

    def test_judgments_match_the_canonical_file(self, tmp_path: Path) -> None:
        items = [("a", [1, 0, None, 1]), ("b", [0, 0, 1, None]), ("c", [1, 1, 1, 1])]
        files = write_all(tmp_path, items)
        want = read_dataset(files["canon.jsonl"], keep=Keep.JUDGMENTS)
        assert want.judge_names == JUDGES
        for name in ("long.csv", "long.parquet", "wide.csv", "verdicts.tsv", "long_rows.jsonl"):
            got = read_dataset(files[name], keep=Keep.JUDGMENTS)
            assert sorted(got.judge_names) == sorted(JUDGES), name  # a long table names judges in order of appearance
            assert [it.id for it in got.items] == ["a", "b", "c"], name
            order = [got.judge_names.index(j) for j in JUDGES]
            np.testing.assert_array_equal(got.judgment_matrix()[:, order], want.judgment_matrix())


def table(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


class TestShapesAndSources:
    """Dataset columns, gzip, hive folders, standard input, forced formats."""

    def test_dataset_column_splits(self, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "dataset,item_id,judge,correct\nx,1,a,1\nx,1,b,0\ny,1,a,0\ny,2,a,1\n")
        got = read_inputs([str(p)])
        assert [(d.name, d.n_items) for d in got] == [("x", 1), ("y", 2)]

    def test_gzip_and_hive(self, tmp_path: Path) -> None:
        gz = tmp_path / "t.csv.gz"
        gz.write_bytes(gzip.compress(b"item_id,judge,correct\n1,a,1\n1,b,0\n2,a,1\n"))
        assert read_dataset(gz).n_items == 2
        hive = tmp_path / "hive"
        con = duckdb.connect()
        con.execute(f"COPY (SELECT i % 7 AS item_id, 'j' || (i % 3) AS judge, (i % 2)::INT AS correct, i % 2 AS part "
                    f"FROM range(21) t(i)) TO '{hive}' (FORMAT parquet, PARTITION_BY (part))")
        ds = read_dataset(hive)
        assert ds.n_items == 7 and ds.table.max_judges == 3

    def test_stdin(self, runner, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "item_id,judge,correct\n1,a,1\n1,b,0\n2,a,1\n2,b,1\n")
        res = invoke_stdin(runner, p.read_text(), "fit", "-", "-f", "json")
        assert res.exit_code == 0 and json.loads(res.stdout)["items"] == 2

    def test_forced_wide(self, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "id,judge,other\n1,1,0\n2,0,0\n")  # 'judge' would read as long
        assert read_dataset(p, InputOptions(source_format="wide")).table.max_judges == 2

    def test_judge_column_globs(self, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "id,gpt4,gpt5,claude,notes\n1,1,0,1,x\n2,0,0,1,y\n")
        ds = read_dataset(p, InputOptions(judge_cols="gpt*,claude"), Keep.JUDGMENTS)
        assert ds.judge_names == ("gpt4", "gpt5", "claude")

    def test_duplicates_first_and_last(self, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "item_id,judge,correct\n1,a,1\n1,a,0\n1,b,1\n")
        first = read_dataset(p, InputOptions(duplicates="first"), Keep.JUDGMENTS).judgment_matrix()
        last = read_dataset(p, InputOptions(duplicates="last"), Keep.JUDGMENTS).judgment_matrix()
        assert first.tolist() == [[1, 1]] and last.tolist() == [[0, 1]]

    def test_items_without_gold_are_unlabeled_items(self, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "item_id,judge,verdict,gold\n1,a,A,A\n1,b,B,A\n2,a,A,\n2,b,A,\n3,a,,\n3,b,NA,\n")
        ds = read_dataset(p)  # item 2: unlabeled (verdicts, no gold); item 3: no verdict and no gold, skipped
        assert ds.n_items == 1 and ds.unlabeled_items == 1 and ds.skipped == 1
        assert ds.reading is not None and [s.reason for s in ds.reading.skips] == ["no judge gave a verdict"]

    def test_tolerance(self, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "item_id,judge,score,reference\n1,a,0.5,0.6\n1,b,0.9,0.6\n")
        ds = read_dataset(p, InputOptions(tolerance=0.15), Keep.JUDGMENTS)
        assert ds.judgment_matrix().tolist() == [[1, 0]]


def invoke_stdin(runner, text: str, *args: str):  # type: ignore[no-untyped-def]
    from betaconform_cli.cli import app

    return runner.invoke(app, list(args), input=text, catch_exceptions=False)


class TestBadTables:
    """One line, naming the file, the row and the column; exit 2."""

    @pytest.mark.parametrize(
        ("text", "needle"),
        [
            ("item_id,judge,correct\n1,a,1\n1,b,maybe\n", "row 2: column 'correct': must be 1/0"),
            ("item_id,judge,correct\n1,a,1\n2,a,0\n1,a,1\n", "row 3: column 'judge': item '1' and judge 'a' appear again (first at row 1)"),
            ("id,item_id,judge,correct\n1,1,a,1\n", "'item_id', 'id' could each be the item column; name one with --item-col"),
            ("item_id,gold\n1,1\n", "no judge columns"),
            ("item_id,judge,verdict,gold\n1,a,A,A\n1,b,B,B\n1,c,A,C\n", "two different gold labels"),
            ("item_id,judge,correct\n1,a,\n2,a,\n", "no usable items"),
            ("id,a,b\n1,1,\n2,0,\n", "judge 'b' gave no verdict on any item"),
            ("judges,correct,count\n5,6,1\n", "row 1"),
            ("item_id,judge,score,gold\n1,a,x,1\n", "a tolerance compares numbers"),
        ],
    )
    def test_one_line(self, runner, tmp_path: Path, text: str, needle: str) -> None:
        p = table(tmp_path, "t.csv", text)
        extra = ["--tolerance", "0.1"] if "score" in text else []
        res = invoke(runner, "fit", p, *extra)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and needle in res.stderr, res.stderr

    def test_truncated_parquet(self, runner, tmp_path: Path) -> None:
        p = tmp_path / "t.parquet"
        con = duckdb.connect()
        con.execute(f"COPY (SELECT i AS item_id, 'a' AS judge, 1 AS correct FROM range(1000) t(i)) TO '{p}'")
        p.write_bytes(p.read_bytes()[:-200])
        res = invoke(runner, "fit", p)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "t.parquet" in res.stderr

    def test_counts_table_with_bad_cell(self, tmp_path: Path) -> None:
        p = table(tmp_path, "t.csv", "judges,correct,count\n5,3,2\n0,0,1\n")
        with pytest.raises(InputError, match="row 2"):
            read_dataset(p)


def test_connections_share_the_database_not_what_a_read_leaves() -> None:
    """table_sql.connect: one in-memory DuckDB database per process, a new connection per read; a temporary table of
    one connection (a CSV's rows, a frame's copy: `src`) is not seen by the next (two reads of two files never meet),
    and a connection closed by its read leaves the next one working."""
    from betaconform_cli.inputs.table_sql import connect

    one, two = connect(), connect()
    one.execute("CREATE TEMP TABLE src AS SELECT 1 AS x")
    two.execute("CREATE TEMP TABLE src AS SELECT 2 AS x")
    assert one.execute("SELECT x FROM src").fetchall() == [(1,)] and two.execute("SELECT x FROM src").fetchall() == [(2,)]
    one.close()
    assert two.execute("SELECT 41 + 1").fetchone() == (42,)
    two.close()
    assert connect().execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("header", ["Judges,Correct,Count", "judges,correct,Count", "judges,correct,count"])
def test_a_counts_tables_columns_in_any_case(tmp_path: Path, header: str) -> None:
    """A counts table's columns in any case, as every role's: "Count" was left unread (each row one item, silently:
    3 items here, not 17) and "Judges" refused as missing."""
    path = tmp_path / "counts.csv"
    path.write_text(f"{header}\n3,2,5\n3,3,10\n3,1,2\n", encoding="utf-8")
    (ds,) = read_inputs([str(path)])
    np.testing.assert_array_equal(ds.table.counts[3], [0, 2, 5, 10])
