"""Run the published vote-pattern aggregation (betaconform_cli/inputs/sql/vote_patterns.sql) on Spark: a long table of
verdicts in, a folder of Parquet files out that `betaconform fit` reads (docs/SCALE.md, "Vote patterns on Spark").

    spark-submit scripts/spark_vote_patterns.py --input s3://bucket/judgments/ --output s3://bucket/patterns/
    python scripts/spark_vote_patterns.py --remote sc://spark-connect-host:15002 --input ... --output ...
    python scripts/spark_vote_patterns.py --input judgments.parquet --output patterns/        # local[*]

The input is any table Spark reads (--format parquet, csv with a header, json, or a catalog table with --table) with
the columns item_id, judge, verdict and gold, or others named by --item-col, --judge-col, --verdict-col, --gold-col.
Only the driver needs betaconform installed (for the SQL text); the executors run plain Spark SQL.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from betaconform_cli.inputs.pattern_table import SOURCE, vote_patterns_sql  # noqa: E402


def vote_patterns(spark: Any, frame: Any, item: str = "item_id", judge: str = "judge", verdict: str = "verdict",
                  gold: str = "gold") -> Any:
    """The published SQL over `frame` (a Spark DataFrame): its columns renamed to the SQL's, verdict and gold as text."""
    from pyspark.sql import functions as F

    long = frame.select(F.col(item).cast("string").alias("item_id"), F.col(judge).cast("string").alias("judge"),
                        F.col(verdict).cast("string").alias("verdict"), F.col(gold).cast("string").alias("gold"))
    long.createOrReplaceTempView(SOURCE)
    return spark.sql(vote_patterns_sql())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", help="a path Spark reads (file, folder, glob, s3://, hdfs://)")
    src.add_argument("--table", help="a table in Spark's catalog")
    ap.add_argument("--format", default="parquet", help="the input's format (parquet, csv, json, orc, ...)")
    ap.add_argument("--output", required=True, help="where the patterns go (a folder of Parquet files)")
    ap.add_argument("--remote", help="a Spark Connect URL (sc://host:15002) instead of spark-submit's session")
    for role, default in (("item", "item_id"), ("judge", "judge"), ("verdict", "verdict"), ("gold", "gold")):
        ap.add_argument(f"--{role}-col", default=default)
    args = ap.parse_args(argv)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("betaconform vote patterns")
    spark = (builder.remote(args.remote) if args.remote else builder).getOrCreate()
    reader = spark.read.format(args.format)
    if args.format == "csv":
        reader = reader.option("header", "true")
    frame = spark.table(args.table) if args.table else reader.load(args.input)
    out = vote_patterns(spark, frame, args.item_col, args.judge_col, args.verdict_col, args.gold_col)
    out.write.mode("overwrite").parquet(args.output)
    print(f"wrote {args.output}: betaconform fit {args.output}", file=sys.stderr)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
