"""docs/SCALE.md, "One pass": a long Parquet table read by `betaconform fit` against DuckDB's bare GROUP BY of the same
file (the counts recipe's two levels: items, then cells), each in a fresh process; and the read alone in process,
one pass (histogram, checks and vote patterns from one GROUP BY: inputs/table_patterns.py) against the two passes it
replaced (the histogram, then table_sql.vote_patterns).

    .venv/bin/python benchmarks/votes_scale.py [--rows 10000000] [--repeats 3] [--update-doc docs/SCALE.md]

Two files of --rows rows, 10 judges per item, written by DuckDB into --dir (kept, reused): correctness (0/1, the
file benchmarks/scale.py uses) and verdicts beside gold (three classes, 10% of the items labeled: every item's
verdicts become a vote pattern).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- votes-scale:start -->", "<!-- votes-scale:end -->"
GEN = {
    "correctness": ("SELECT i // 10 AS item_id, 'judge-' || (i % 10) AS judge, CAST(hash(i) % 1000 < CASE WHEN hash(i // 10) % 4 = 0 "
                    "THEN 300 ELSE 850 END AS INTEGER) AS correct FROM range({n}) t(i)"),
    "verdicts": ("SELECT 'q' || (i // 10) AS item_id, 'j' || (i % 10) AS judge, CASE WHEN hash(i) % 10 < 7 THEN 'A' "
                 "WHEN hash(i) % 10 < 9 THEN 'B' ELSE 'C' END AS verdict, CASE WHEN (i // 10) % 10 = 0 THEN 'A' ELSE NULL END "
                 "AS gold FROM range({n}) t(i)"),
}
BARE = {
    "correctness": "SELECT judges, correct, count(*) FROM (SELECT item_id, count(correct) AS judges, sum(correct) AS correct FROM '{f}' GROUP BY item_id) GROUP BY ALL",
    "verdicts": ("SELECT judges, correct, count(*) FROM (SELECT item_id, count(verdict) AS judges, sum(CASE WHEN verdict = gold "
                 "THEN 1 ELSE 0 END) AS correct FROM '{f}' GROUP BY item_id) GROUP BY ALL"),
}
READ = ("import sys, time\nfrom betaconform_cli.inputs import read_dataset, table_patterns\nimport duckdb\n"
        "if sys.argv[2] == 'two':\n    table_patterns.counts_and_patterns = lambda *a: None\n"
        "t = time.perf_counter(); read_dataset(sys.argv[1]); print(time.perf_counter() - t)\n")


def child(cmd: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         cwd=tempfile.gettempdir())
    return time.perf_counter() - t, out.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "betaconform-votes-scale")
    ap.add_argument("--update-doc", type=Path)
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    lines = ["| file | DuckDB bare GROUP BY | `betaconform fit -f json` | ratio | read in process: one pass | ratio | two passes |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, gen in GEN.items():
        f = args.dir / f"long_{kind}_{args.rows}.parquet"
        if not f.exists():
            con.execute(f"COPY ({gen.format(n=args.rows)}) TO '{f}' (FORMAT parquet)")
        bare_cmd = [sys.executable, "-c", f"import duckdb; c = duckdb.connect(); c.execute('SET enable_progress_bar=false'); "
                                          f"print(c.execute({BARE[kind].format(f=f)!r}).fetchall())"]
        fit_cmd = [sys.executable, "-m", "betaconform_cli", "fit", str(f), "-f", "json"]
        bare, fit, one, two = [], [], [], []
        for _ in range(args.repeats):  # interleaved: the machine's load falls on each alike
            bare.append(child(bare_cmd)[0])
            fit.append(child(fit_cmd)[0])
            one.append(float(child([sys.executable, "-c", READ, str(f), "one"])[1]))
            two.append(float(child([sys.executable, "-c", READ, str(f), "two"])[1]) if kind == "verdicts" else float("nan"))
        b, t, o = min(bare), min(fit), min(one)  # the fastest of the runs: the least disturbed by a busy machine
        print(f"{kind}: bare {bare} fit {fit} one {one} two {two}", file=sys.stderr)
        lines.append(f"| {kind}, {args.rows:,} rows ({f.stat().st_size / 2**20:.0f} MiB) | {b:.2f} s | {t:.2f} s | {t / b:.2f}x | "
                     f"{o:.2f} s | {o / b:.2f}x | {'-' if kind != 'verdicts' else f'{min(two):.2f} s'} |")
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?") if Path("/proc/cpuinfo").exists() else "?"
    text = "\n".join([f"`python benchmarks/votes_scale.py --rows {args.rows} --repeats {args.repeats}` on {os.cpu_count()} cores ({cpu}), "
                      f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the end; the fastest of "
                      f"{args.repeats} interleaved runs, each a fresh process (start-up included for `fit`).", "", *lines])
    print(text)
    if args.update_doc:
        body = args.update_doc.read_text(encoding="utf-8")
        block = f"{START}\n{text}\n{END}"
        body = (body.split(START)[0] + block + body.split(END, 1)[1]) if START in body else body.rstrip("\n") + "\n\n" + block + "\n"
        args.update_doc.write_text(body, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
