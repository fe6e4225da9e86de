"""docs/SCALE.md, "One pass": a long Parquet table read by betaconform against DuckDB's bare GROUP BY of the same file.

    .venv/bin/python benchmarks/votes_scale.py [--rows 10000000] [--repeats 5] [--two-passes 1] [--update-doc docs/SCALE.md]

Three files of --rows rows, 10 judges per item, written by DuckDB into --dir (kept, reused): correctness (0/1, the
file benchmarks/scale.py uses) and verdicts beside gold (three classes drawn independently per verdict, 10% of the
items labeled: every item's verdicts become a vote pattern, 42k distinct ones at 10^7 rows -- a worst case), and
verdicts of a panel that mostly agrees (8k patterns).

Measured, interleaved run by run so that a busy machine's load falls on each alike (this project's machine is shared):
1. in one process, no start-up: DuckDB's bare two-level GROUP BY that makes the (judges, correct) histogram (the
   counts recipe), then the reader (`read_dataset`: histogram, checks and vote patterns), back to back, --repeats
   times; the ratio of each pair, its median and range; wall time and CPU time (user + system, DuckDB's threads
   included: resource.getrusage), which a busy machine inflates less;
2. the same read with the one pass switched off (the two passes it replaced), --two-passes runs (slow);
3. with --baseline, another checkout's read in the same in-process pairs (its ratio to the bare GROUP BY beside ours);
4. fresh processes: `betaconform fit FILE -f json` (start-up, scipy, fit and output included) against the bare
   GROUP BY in a fresh `python -c` (DuckDB's import included), and against the plainest GROUP BY of the items
   (`SELECT item_id, count(*) ... GROUP BY item_id`, counted in DuckDB).
The load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
GEN = {
    "correctness": ("SELECT i // 10 AS item_id, 'judge-' || (i % 10) AS judge, CAST(hash(i) % 1000 < CASE WHEN hash(i // 10) % 4 = 0 "
                    "THEN 300 ELSE 850 END AS INTEGER) AS correct FROM range({n}) t(i)"),
    "verdicts": ("SELECT 'q' || (i // 10) AS item_id, 'j' || (i % 10) AS judge, CASE WHEN hash(i) % 10 < 7 THEN 'A' "
                 "WHEN hash(i) % 10 < 9 THEN 'B' ELSE 'C' END AS verdict, CASE WHEN (i // 10) % 10 = 0 THEN 'A' ELSE NULL END "
                 "AS gold FROM range({n}) t(i)"),
    # a panel that mostly agrees: each item has a class, each judge gives it 85% of the time (8k patterns at 10^7 rows)
    "agreeing verdicts": ("SELECT 'q' || (i // 10) AS item_id, 'j' || (i % 10) AS judge, CASE WHEN hash(i) % 100 < 85 THEN "
                          "(CASE hash(i // 10) % 3 WHEN 0 THEN 'A' WHEN 1 THEN 'B' ELSE 'C' END) WHEN hash(i) % 2 = 0 THEN 'A' "
                          "ELSE 'B' END AS verdict, CASE WHEN (i // 10) % 10 = 0 THEN (CASE hash(i // 10) % 3 WHEN 0 THEN 'A' "
                          "WHEN 1 THEN 'B' ELSE 'C' END) ELSE NULL END AS gold FROM range({n}) t(i)"),
}
BARE = {
    "correctness": "SELECT judges, correct, count(*) FROM (SELECT item_id, count(correct) AS judges, sum(correct) AS correct FROM '{f}' GROUP BY item_id) GROUP BY ALL",
    "verdicts": ("SELECT judges, correct, count(*) FROM (SELECT item_id, count(verdict) AS judges, sum(CASE WHEN verdict = gold "
                 "THEN 1 ELSE 0 END) AS correct FROM '{f}' GROUP BY item_id) GROUP BY ALL"),
}
BARE["agreeing verdicts"] = BARE["verdicts"]
ITEMS = "SELECT count(*), sum(n) FROM (SELECT item_id, count(*) AS n FROM '{f}' GROUP BY item_id)"  # the groups, not 10^6 rows to Python
# in one process: the bare GROUP BY, then the read, each timed (wall, CPU of the whole process: DuckDB's threads too)
PAIR = ("import json, resource, sys, time\nimport duckdb\nfrom betaconform_cli.inputs import read_dataset, table_patterns\n"
        "def cpu():\n    r = resource.getrusage(resource.RUSAGE_SELF)\n    return r.ru_utime + r.ru_stime\n"
        "con = duckdb.connect(); con.execute('SET enable_progress_bar = false')\n"
        "if sys.argv[3] == 'two':\n    table_patterns.counts_and_patterns = lambda *a: None\n"
        "read_dataset(sys.argv[1])  # imports and the file's pages warm, as the bare query's first run finds them\n"
        "t, c = time.perf_counter(), cpu(); con.execute(sys.argv[2]).fetchall(); bare = (time.perf_counter() - t, cpu() - c)\n"
        "t, c = time.perf_counter(), cpu(); read_dataset(sys.argv[1]); ours = (time.perf_counter() - t, cpu() - c)\n"
        "print(json.dumps([bare, ours]))\n")


def child(cmd: list[str], root: Path = ROOT) -> tuple[float, float, str]:
    """(wall, CPU of the child: user + system, its threads included) and its stdout; `root`'s code on the path."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(root)},
                            cwd=tempfile.gettempdir())
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime, out


def spread(xs: list[float], unit: str = " s") -> str:
    """median [min-max] of a list."""
    return f"{statistics.median(xs):.2f}{unit} [{min(xs):.2f}-{max(xs):.2f}]"


def measure(f: Path, kind: str, repeats: int, two_passes: int, baseline: Path | None) -> dict[str, list[float]]:
    """Every measurement of one file, interleaved run by run; {name: values}."""
    py = sys.executable
    bare_sql, items_sql = BARE[kind].format(f=f), ITEMS.format(f=f)
    duck = "import duckdb, sys; c = duckdb.connect(); c.execute('SET enable_progress_bar=false'); c.execute(sys.argv[1]).fetchall()"
    got: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        got.setdefault(name, []).append(value)

    for rep in range(repeats):
        hows = ["one"] + (["two"] if kind == "verdicts" and rep < two_passes else []) + (["base"] if baseline else [])
        for how in hows:
            root = baseline if how == "base" and baseline is not None else ROOT
            (bw, bc), (ow, oc) = json.loads(child([py, "-c", PAIR, str(f), bare_sql, "one" if how == "base" else how], root)[2])
            for name, value in (("bare wall", bw), ("bare cpu", bc), ("read wall", ow), ("read cpu", oc)):
                add(f"{how} {name}", value)
            add(f"{how} ratio wall", ow / bw)
            add(f"{how} ratio cpu", oc / bc)
        for name, cmd in (("fresh bare", [py, "-c", duck, bare_sql]), ("fresh items", [py, "-c", duck, items_sql]),
                          ("fresh fit", [py, "-m", "betaconform_cli", "fit", str(f), "-f", "json"])):
            wall, cpu, _ = child(cmd)
            add(f"{name} wall", wall)
            add(f"{name} cpu", cpu)
        add("fresh ratio wall", got["fresh fit wall"][-1] / got["fresh bare wall"][-1])
        add("fresh ratio items", got["fresh fit wall"][-1] / got["fresh items wall"][-1])
    print(f"{kind}: {json.dumps({k: [round(x, 3) for x in v] for k, v in got.items()})}", file=sys.stderr)
    return got


def tables(rows: list[tuple[str, dict[str, list[float]]]]) -> list[str]:
    """The in-process table and the fresh-process table."""
    out = ["In one process (no start-up), each pair back to back: DuckDB's bare histogram GROUP BY, then the reader "
           "(median [min-max] of the runs; the ratio is each pair's):", "",
           "| file | bare GROUP BY, wall | one pass, wall | ratio, wall | bare, CPU | one pass, CPU | ratio, CPU | two passes, wall (ratio) "
           "| baseline's read: ratio, wall | ratio, CPU |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, g in rows:
        two = f"{spread(g['two read wall'])} ({spread(g['two ratio wall'], 'x')})" if "two read wall" in g else "-"
        base = f"{spread(g['base ratio wall'], 'x')} | {spread(g['base ratio cpu'], 'x')}" if "base ratio wall" in g else "- | -"
        out.append(f"| {label} | {spread(g['one bare wall'])} | {spread(g['one read wall'])} | {spread(g['one ratio wall'], 'x')} | "
                   f"{spread(g['one bare cpu'])} | {spread(g['one read cpu'])} | {spread(g['one ratio cpu'], 'x')} | {two} | {base} |")
    out += ["", "Fresh processes (start-up included: `betaconform fit FILE -f json` imports the CLI and scipy, fits and "
            "writes its JSON; the bare queries import DuckDB):", "",
            "| file | bare histogram GROUP BY | bare GROUP BY of the items | `betaconform fit` | "
            "ratio to the histogram GROUP BY | ratio to the items' GROUP BY | `fit`, CPU |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, g in rows:
        out.append(f"| {label} | {spread(g['fresh bare wall'])} | {spread(g['fresh items wall'])} | {spread(g['fresh fit wall'])} | "
                   f"{spread(g['fresh ratio wall'], 'x')} | {spread(g['fresh ratio items'], 'x')} | {spread(g['fresh fit cpu'])} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--two-passes", type=int, default=1, help="runs of the two-pass read (slow), at most --repeats")
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "betaconform-votes-scale")
    ap.add_argument("--baseline", type=Path, help="another checkout (e.g. `git archive COMMIT betaconform_cli | tar -x -C DIR`): "
                    "its read, in process, interleaved with this one's")
    ap.add_argument("--kinds", default=",".join(k.split()[0] for k in GEN), help="which files, by first word (default: all)")
    ap.add_argument("--update-doc", type=Path)
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    load0 = os.getloadavg()[0]
    rows = []
    for kind, gen in GEN.items():
        if kind.split()[0] not in args.kinds.split(","):
            continue
        f = args.dir / f"long_{kind.split()[0]}_{args.rows}.parquet"
        if not f.exists():
            con.execute(f"COPY ({gen.format(n=args.rows)}) TO '{f}' (FORMAT parquet)")
        rows.append((f"{kind}, {args.rows:,} rows ({f.stat().st_size / 2**20:.0f} MiB)", measure(f, kind, args.repeats, args.two_passes, args.baseline)))
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?") if Path("/proc/cpuinfo").exists() else "?"
    base = (f" --baseline {args.baseline}" if args.baseline else "") + (f" --kinds {args.kinds}" if args.kinds != ap.get_default("kinds") else "")
    text = "\n".join([f"`python benchmarks/votes_scale.py --rows {args.rows} --repeats {args.repeats} --two-passes {args.two_passes}{base}` "
                      f"on {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, DuckDB {duckdb.__version__}; load "
                      f"average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.", "", *tables(rows)])
    print(text)
    if args.update_doc:
        from unlabeled import write_block  # benchmarks/: the one way a benchmark rewrites its block of a doc

        write_block(args.update_doc, "votes-scale", text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
