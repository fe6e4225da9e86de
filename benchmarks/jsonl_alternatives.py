"""docs/SPEED.md, "The 1M-item JSON Lines fit: what each way of reading gave": ways to read a 1,000,000-item JSON Lines
file of judgments, each in a fresh process, interleaved run by run (median [min-max] of wall and CPU time over
--repeats runs, the child's CPU via os.wait4: threads and forked workers included), beside the bare orjson parse that
issue 30's target is set against (`betaconform fit` <= 1.3x of it), and which malformed lines each way lets through
(those the readers' one JSON rule, orjson's, refuses: a reader that accepts one cannot be this tool's fast path
without a second, strict parse).

    .venv/bin/python benchmarks/jsonl_alternatives.py [--items 1000000] [--repeats 5] [--realtime] [--update-doc docs/SPEED.md]

--realtime: each run at real-time priority (speed.py's): a shared machine's other jobs wait meanwhile.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

WAYS = {
    "bare parse: `orjson.loads` on each line (the target's reference)":
        "import orjson, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        orjson.loads(line)\n",
    "msgspec `decode_lines` into an empty struct, 4 MiB blocks (JSON checked, nothing kept: the floor of a strict parse)":
        "import msgspec, sys\nd = msgspec.json.Decoder(msgspec.defstruct('E', [], gc=False))\nwith open(sys.argv[1], 'rb') as f:\n"
        "    while b := f.read(4 << 20):\n        d.decode_lines(b + f.readline())\n",
    "betaconform's reader in one process (`read_jsonl(workers=1)`: histogram, id check)":
        "import sys\nfrom betaconform_cli.inputs.jsonl import read_jsonl\nread_jsonl(sys.argv[1], workers=1)\n",
    "betaconform's reader, forked workers as `fit` runs it (2 on this machine)":
        "import sys\nfrom betaconform_cli.inputs.jsonl import read_jsonl\nread_jsonl(sys.argv[1])\n",
    "DuckDB `read_json`: GROUP BY the judgments' text, repeated ids by GROUPING SETS (lenient: see below)":
        "import duckdb, sys\nc = duckdb.connect(); c.execute('SET enable_progress_bar=false')\n"
        "src = f\"read_json('{sys.argv[1]}', columns={{id: 'VARCHAR', judgments: 'VARCHAR'}}, format='newline_delimited')\"\n"
        "c.execute(f'SELECT judgments, sum(c), max(c) FROM (SELECT judgments, id, count(*) c FROM {src} "
        "GROUP BY GROUPING SETS ((judgments), (id))) GROUP BY judgments').fetchall()\n",
    "pyarrow `json.read_json` (the whole file as columns)":
        "import sys\nimport pyarrow.json as pj\npj.read_json(sys.argv[1])\n",
    "`betaconform fit` of 100 items (`-f json`): start-up, scipy, fit and output, no read to speak of":
        "import runpy, sys\nsys.argv = ['betaconform', 'fit', sys.argv[2], '-f', 'json']\nrunpy.run_module('betaconform_cli', run_name='__main__')\n",
    "`betaconform fit` of the file (`-f json`)":
        "import runpy, sys\nsys.argv = ['betaconform', 'fit', sys.argv[1], '-f', 'json']\nrunpy.run_module('betaconform_cli', run_name='__main__')\n",
}
BAD_LINES = {  # lines orjson refuses (the first three: not JSON at all; the last: deeper than MAX_JSON_DEPTH)
    "NaN": b'{"id":"a","judgments":[1,0],"text":NaN}\n',
    "Infinity": b'{"id":"a","judgments":[1,0],"text":Infinity}\n',
    "trailing comma": b'{"id":"a","judgments":[1,0],}\n',
    "200 levels deep": b'{"id":"a","text":' + b"[" * 200 + b"]" * 200 + b',"judgments":[1,0]}\n',
}


def child(code: str, *args: str) -> tuple[float, float]:
    """(wall, CPU: user + system of the child and its threads and workers) of `python -c code args`."""
    from speed import realtime

    with realtime():
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"failed: {code}\n{proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def lets_through(tmp: Path) -> dict[str, str]:
    """For DuckDB and pyarrow: which of BAD_LINES each reads without an error."""
    import duckdb
    import pyarrow.json as pj

    con = duckdb.connect()
    got = {"duck": [], "arrow": []}
    for name, line in BAD_LINES.items():
        f = tmp / "bad.jsonl"
        f.write_bytes(line)
        duck = f"SELECT * FROM read_json('{f}', columns={{id: 'VARCHAR', judgments: 'VARCHAR'}}, format='newline_delimited')"
        for who, read in (("duck", lambda sql=duck: con.execute(sql).fetchall()), ("arrow", lambda path=f: pj.read_json(path))):
            try:
                read()
                got[who].append(name)
            except Exception:  # noqa: BLE001 - refused, as it should be
                pass
    return {who: ", ".join(names) or "none" for who, names in got.items()}


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s [{min(xs):.2f}-{max(xs):.2f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--update-doc", type=Path)
    ap.add_argument("--realtime", action="store_true", help="each run at real-time priority (Linux, CAP_SYS_NICE)")
    args = ap.parse_args()
    import speed
    from speed import write_big_jsonl

    speed.REALTIME = args.realtime
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "betaconform_cli")], check=True,
                   stdout=subprocess.DEVNULL)  # as installed (PYTHONDONTWRITEBYTECODE=1 would compile per run)

    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "items.jsonl", Path(tmp) / "items100.jsonl"
        write_big_jsonl(big, args.items)
        small.write_bytes(b"".join((ROOT / "sample_data" / "qa_judges.jsonl").read_bytes().splitlines(keepends=True)[:100]))
        runs: dict[str, list[tuple[float, float]]] = {w: [] for w in WAYS}
        for _ in range(args.repeats):
            for way, code in WAYS.items():
                runs[way].append(child(code, str(big), str(small)))
        through = lets_through(Path(tmp))
    parse = [w for w, _ in runs[next(iter(WAYS))]]
    flag = " --realtime" if args.realtime else ""
    lines = [f"`python benchmarks/jsonl_alternatives.py --items {args.items} --repeats {args.repeats}{flag}` on {os.cpu_count()} cores, "
             f"Python {platform.python_version()}; load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. "
             "Each a fresh process; median [min-max] of the runs; the ratio is each run's wall time over the bare parse's "
             "in the same round.", "",
             "| way to read the file | wall | CPU | wall / bare parse |", "|---|---:|---:|---:|"]
    for way, got in runs.items():
        ratio = [w / p for (w, _), p in zip(got, parse)]
        lines.append(f"| {way} | {spread([w for w, _ in got])} | {spread([c for _, c in got])} | "
                     f"{statistics.median(ratio):.2f}x [{min(ratio):.2f}-{max(ratio):.2f}] |")
    lines += ["", f"Malformed lines read without an error (orjson refuses all four: {', '.join(BAD_LINES)}): DuckDB "
              f"`read_json`: {through['duck']}; pyarrow: {through['arrow']}."]
    text = "\n".join(lines)
    print(text)
    if args.update_doc:
        from unlabeled import write_block  # benchmarks/: the one way a benchmark rewrites its block of a doc

        write_block(args.update_doc, "jsonl-alternatives", text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
