"""docs/SCALE.md: a 10^6-row long table, 90% of items unlabeled: read time with Votes (one DuckDB aggregation) vs a bare GROUP BY.

    .venv/bin/python benchmarks/votes_scale.py [FILE.parquet]    # writes the file (DuckDB), then reads it
"""

from __future__ import annotations

import sys
import time

import duckdb

from betaconform_cli.inputs import read_dataset

path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/long1m.parquet"
con = duckdb.connect()
con.execute(f"""COPY (SELECT 'q' || (i // 10) AS item_id, 'j' || (i % 10) AS judge,
  CASE WHEN hash(i) % 10 < 7 THEN 'A' WHEN hash(i) % 10 < 9 THEN 'B' ELSE 'C' END AS verdict,
  CASE WHEN (i // 10) % 10 = 0 THEN 'A' ELSE NULL END AS gold FROM range(1000000) t(i)) TO '{path}' (FORMAT parquet)""")
t = time.perf_counter()
con.execute(f"SELECT count(*) FROM (SELECT item_id, count(*) FROM '{path}' GROUP BY item_id)").fetchall()
bare = time.perf_counter() - t
t = time.perf_counter()
ds = read_dataset(path)
took = time.perf_counter() - t
assert ds.votes is not None
print(f"rows 1000000 items {ds.n_items + ds.unlabeled_items} labeled {ds.n_items} unlabeled {ds.unlabeled_items} "
      f"patterns {len(ds.votes.counts)}: read with votes {took:.2f} s, bare GROUP BY {bare:.2f} s")
