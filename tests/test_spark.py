"""The published vote-pattern aggregation (betaconform_cli/inputs/sql/vote_patterns.sql) run as written on Apache Spark
(pyspark in local mode, one session for the module) gives the rows DuckDB gives, and `fit` reads the same result from
Spark's output -- a folder of Parquet part files, as Spark writes it -- as from the long table itself.

Its own tier: `pytest -m spark` (the `[spark]` extra and Java 17+); `make test` runs it with the rest."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from betaconform_cli.inputs.pattern_table import vote_patterns_sql
from tests.conftest import invoke
from tests.test_scale import long_verdicts

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("spark_vote_patterns", ROOT / "scripts" / "spark_vote_patterns.py")
assert spec is not None and spec.loader is not None
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)
pyspark = pytest.importorskip("pyspark", reason="the [spark] extra (pyspark) is not installed")
pytestmark = [pytest.mark.spark, pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17+")]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """One local JVM for the module, tuned for a short run on tiny data (none of it changes what the SQL computes):
    one shuffle partition, no UI or console progress, and the JVM's quick compiler only (C1) with the serial garbage
    collector, which halves the JVM's CPU time here (about 20 s to 10 s for start-up, query and write; docs/TESTING.md)."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("betaconform-test")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_runs_the_published_sql_as_duckdb_does_and_fit_reads_its_output(spark: Any, tmp_path: Path, runner: Any) -> None:
    rows = long_verdicts()  # scripts/spark_vote_patterns.py's function, as spark-submit runs it (other column names)
    frame = spark.createDataFrame(rows, "id string, model string, answer string, label string")
    result = script.vote_patterns(spark, frame, "id", "model", "answer", "label")
    got_spark = sorted(((r["pattern"], r["gold"], int(r["items"])) for r in result.collect()), key=repr)

    con = duckdb.connect()
    con.execute("CREATE TABLE judge_results (item_id VARCHAR, judge VARCHAR, verdict VARCHAR, gold VARCHAR)")
    con.executemany("INSERT INTO judge_results VALUES (?, ?, ?, ?)", rows)
    got_duckdb = sorted(((p, g, int(n)) for p, g, n in con.execute(vote_patterns_sql()).fetchall()), key=repr)
    assert got_spark == got_duckdb
    assert sum(n for *_, n in got_spark) == len({r[0] for r in rows if r[2] is not None})

    out = tmp_path / "patterns"  # Spark's own output: part-*.parquet files and _SUCCESS in a folder
    result.write.mode("overwrite").parquet(str(out))
    long = tmp_path / "long.csv"
    long.write_text("item_id,judge,verdict,gold\n" + "".join(",".join(v or "" for v in r) + "\n" for r in rows), encoding="utf-8")
    from_spark, from_long = (json.loads(invoke(runner, "fit", str(p), "-f", "json").stdout) for p in (out, long))
    for doc in (from_spark, from_long):
        doc.pop("source"), doc.pop("dataset")
    assert from_spark == from_long
    assert from_long["unlabeled_items"] > 0 and from_long["items"] > 0
