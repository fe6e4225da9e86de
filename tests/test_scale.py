"""docs/SCALE.md's warehouse SQL, run as written on DuckDB, gives the histogram that `fit` reads from the long table."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np

from betaconform_cli.inputs import read_dataset

DOC = Path(__file__).resolve().parent.parent / "docs" / "SCALE.md"


def warehouse_sql() -> str:
    blocks = re.findall(r"```sql\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1, "docs/SCALE.md should hold exactly one SQL block"
    return blocks[0]


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
