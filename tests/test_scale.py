"""docs/SCALE.md's warehouse SQL, run as written on DuckDB, gives the histogram that `fit` reads from the long table."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest

from betaconform_cli.errors import InputError
from betaconform_cli.inputs import read_dataset

DOC = Path(__file__).resolve().parent.parent / "docs" / "SCALE.md"


def warehouse_sql() -> str:
    blocks = [b for b in re.findall(r"```sql\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S) if "judge_results" in b]
    counts = [b for b in blocks if "SUM(correct)" in b]
    assert len(counts) == 1, "docs/SCALE.md should hold exactly one counts SQL block"
    return counts[0]


def long_verdicts(n: int = 240, seed: int = 5) -> list[tuple[str, str, str | None, str | None]]:
    """A long table of verdicts (item_id, judge, verdict, gold): two thirds of the items labeled, some verdicts
    missing, judge names and classes that a naive pattern encoding would confuse (a colon, digits, non-ASCII, one
    class written as 1 and as 1.0)."""
    rng = np.random.default_rng(seed)
    judges = ["gpt:4o", "judge-10", "judge-1", "clé", "j"]
    classes = ["A", "B", "1"]
    rows: list[tuple[str, str, str | None, str | None]] = []
    for i in range(n):
        gold = str(rng.choice(classes)) if i % 3 else None
        hard = rng.random() < 0.3
        for j in judges:
            if rng.random() < 0.1:
                continue
            truth = gold if gold is not None else str(rng.choice(classes))
            v = truth if rng.random() < (0.55 if hard else 0.85) else str(rng.choice([c for c in classes if c != truth]))
            rows.append((f"item-{i}", j, None if rng.random() < 0.03 else ("1.0" if v == "1" and rng.random() < 0.5 else v), gold))
    return rows


def _table(rows: list[tuple[str, str, str | None, str | None]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE judge_results (item_id VARCHAR, judge VARCHAR, verdict VARCHAR, gold VARCHAR)")
    con.executemany("INSERT INTO judge_results VALUES (?, ?, ?, ?)", rows)
    return con


class TestVotePatternSQL:
    """sql/vote_patterns.sql: the doc shows that file's text (one source), DuckDB runs it as written, and `fit` reads
    its output as it reads the long table (tests/test_spark.py runs the same text on Spark)."""

    def test_the_doc_shows_the_file(self) -> None:
        from betaconform_cli.inputs.pattern_table import vote_patterns_sql

        body = DOC.read_text(encoding="utf-8")
        start, end = "<!-- vote-patterns-sql:start -->", "<!-- vote-patterns-sql:end -->"
        assert start in body and end in body
        shown = re.findall(r"```sql\n(.*?)```", body.split(start, 1)[1].split(end, 1)[0], flags=re.S)
        assert shown == [vote_patterns_sql()]

    def test_fit_reads_the_patterns_as_the_long_table(self, tmp_path: Path) -> None:
        from betaconform_cli.inputs.pattern_table import vote_patterns_sql

        rows = long_verdicts()
        long = tmp_path / "long.csv"
        long.write_text("item_id,judge,verdict,gold\n" + "".join(",".join(v or "" for v in r) + "\n" for r in rows), encoding="utf-8")
        patterns = tmp_path / "patterns.parquet"
        _table(rows).execute(f"COPY ({vote_patterns_sql()}) TO '{patterns}' (FORMAT parquet)")
        a, b = read_dataset(patterns), read_dataset(long)
        assert a.reading is not None and a.reading.source_format.startswith("patterns")
        np.testing.assert_array_equal(a.table.counts, b.table.counts)
        assert a.votes is not None and b.votes is not None and a.votes.judges == b.votes.judges
        assert a.votes.unlabeled_items == b.votes.unlabeled_items > 0

        def tally(v: Any) -> dict[tuple[Any, ...], int]:
            out: dict[tuple[Any, ...], int] = {}
            for p, g, n in zip(v.patterns.tolist(), v.gold.tolist(), v.counts.tolist()):
                key = (tuple(v.classes[c] if c >= 0 else None for c in p), v.classes[g] if g >= 0 else None)
                out[key] = out.get(key, 0) + n
            return out

        assert tally(a.votes) == tally(b.votes)

    def test_a_bad_pattern_names_its_row(self, tmp_path: Path) -> None:
        bad = tmp_path / "patterns.csv"
        bad.write_text("pattern,gold,items\n1:a1:A,A,3\n1:b9:B,,2\n", encoding="utf-8")
        with pytest.raises(InputError, match=r"row 2.*pattern|pattern.*row 2"):
            read_dataset(bad)


class TestWarehouseSQL:
    """The SQL text of the doc, not a copy of it."""

    def test_counts_from_the_sql_equal_the_reader(self, tmp_path: Path) -> None:
        rng = np.random.default_rng(7)
        long = tmp_path / "long.csv"
        lines = ["item_id,judge,correct"]
        for i in range(300):
            k = int(rng.integers(1, 9))
            p = rng.beta(2, 1)
            for j in range(k):
                v = "" if rng.random() < 0.05 else str(int(rng.random() < p))
                lines.append(f"it{i},judge{j},{v}")
        long.write_text("\n".join(lines) + "\n")
        con = duckdb.connect()
        con.execute(f"CREATE TABLE judge_results AS SELECT * FROM read_csv('{long}', types = {{'correct': 'INTEGER'}})")
        counts = tmp_path / "counts.csv"
        con.execute(f"COPY ({warehouse_sql().strip().rstrip(';')}) TO '{counts}' (HEADER)")
        from_sql = read_dataset(counts)
        direct = read_dataset(long)
        assert from_sql.reading is not None and from_sql.reading.source_format.startswith("counts")
        np.testing.assert_array_equal(from_sql.table.counts, direct.table.counts)
        assert direct.n_items <= 300 and direct.skipped == 300 - direct.n_items
