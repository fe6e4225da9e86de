"""Speed and scale benchmarks. Prints a Markdown report (paste into docs/BENCHMARKS.md).

    .venv/bin/python benchmarks/speed.py [--quick]

Measures, each as the median of a few repeats on this machine:
1. analyse() (fit with its intervals, default method) against the number of items, 10^3 .. 10^6
   (the fit runs on the histogram, so its cost should not grow with the items);
2. the paper's EM run per item (vectorised numpy, as a direct implementation would) against the same;
3. end-to-end `betaconform fit` of a 10^6-item JSONL file against a bare orjson parse of the same file;
4. start-up: `betaconform --help` and a fit of sample_data/qa_judges.jsonl;
5. a batch of 100 files of 100 items in one `betaconform fit DIR` call;
6. peak memory (max RSS) of the 10^6-item fit.

    .venv/bin/python benchmarks/speed.py --only-help [--against OTHER/.venv/bin/betaconform]
    .venv/bin/python benchmarks/speed.py --targets [--baseline CHECKOUT] [--update-doc docs/SPEED.md]

times only `betaconform --help` (10 runs; with --against, another checkout's, the two runs interleaved so that the
machine's load falls on both alike), to check that a change did not slow the start-up.

--targets measures issue 30's three targets side by side with their limits: `betaconform --help` <= 0.3 s, a
100-item `fit` <= 0.5 s, a 1,000,000-item JSON Lines `fit` <= 1.3x a bare orjson parse of the same file (each a
fresh process of this checkout, `python -m betaconform_cli`, start-up and exit included; wall time, median and
fastest of --repeats runs, and the child's CPU time, which a busy machine inflates less). --baseline CHECKOUT runs
another checkout's code (a `git worktree` of an older commit) interleaved with this one, run by run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.distributions import Mixture  # noqa: E402
from betaconform_cli.fit import analyse  # noqa: E402
from betaconform_cli.settings import FitSettings  # noqa: E402

BIN = Path(sys.executable).parent / "betaconform"
MIX = Mixture((0.3, 0.7), (1.0, 8.0), (6.0, 1.5))


def simulate(n: int, seed: int, judges: int = 11) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    comp = rng.choice(2, size=n, p=MIX.weights)
    p = rng.beta(np.array(MIX.alphas)[comp], np.array(MIX.betas)[comp])
    return np.full(n, judges), rng.binomial(judges, p)


def timed(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def per_item_paper_em(s: np.ndarray, big_k: np.ndarray, iters: int = 200) -> None:
    """The paper's EM on the item arrays (the way the paper states it), fixed iteration count."""
    from scipy.special import betaln

    p = np.clip(s / big_k, 1e-3, 1 - 1e-3)
    gamma = (p < 0.5).astype(float)
    for _ in range(iters):
        g = np.vstack((gamma, 1 - gamma))
        a = np.maximum((g * s).sum(1), 1e-3)
        b = np.maximum((g * (big_k - s)).sum(1), 1e-3)
        w = g[0].mean()
        lp = (a[:, None] - 1) * np.log(p) + (b[:, None] - 1) * np.log1p(-p) - betaln(a, b)[:, None]
        lp += np.log([w, 1 - w])[:, None]
        gamma = np.exp(lp[0] - np.logaddexp(lp[0], lp[1]))


def run(cmd: list[str], repeats: int) -> tuple[float, int]:
    """Median wall time and the largest max-RSS (KiB) of the child over repeats."""
    ts, rss = [], 0
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
        rss = max(rss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return statistics.median(ts), rss


def peak_rss(cmd: list[str]) -> int:
    """Max RSS (KiB) of one run of cmd, measured in a fresh wrapper process so earlier children don't count."""
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    return int(subprocess.run([sys.executable, "-c", code, *cmd], check=True, capture_output=True, text=True).stdout)


def fit_section(reps: int) -> list[str]:
    """analyse() and the paper's per-item EM against the number of items (one BLAS thread)."""
    out: list[str] = []
    with threadpool_limits(limits=1, user_api="blas"):
        out += ["### Fit with intervals against items", "", "| items | analyse(), default method | paper EM per item (200 iterations) |", "|---|---|---|"]
        for n in (1_000, 10_000, 100_000, 1_000_000):
            big_k, s = simulate(n, 1)
            table = CountTable.from_pairs(big_k, s)
            t_fit = timed(lambda table=table: analyse(table, FitSettings(), np.random.default_rng(0)), reps)
            t_em = timed(lambda s=s, big_k=big_k: per_item_paper_em(s.astype(float), big_k.astype(float)), 1 if n >= 100_000 else reps)
            out.append(f"| {n:,} | {t_fit * 1000:.0f} ms | {t_em * 1000:.0f} ms |")
        out.append("")
    return out


def end_to_end_section(tmp_path: Path, big_n: int, reps: int) -> list[str]:
    """`betaconform fit` of a big JSONL file against a bare parse of its lines, and its peak memory."""
    out: list[str] = []
    big = tmp_path / "big.jsonl"
    big_k, s = simulate(big_n, 2)
    rng = np.random.default_rng(3)
    with open(big, "wb") as fh:
        for i in range(big_n):
            judgments = [1] * int(s[i]) + [0] * int(11 - s[i])
            rng.shuffle(judgments)
            fh.write(orjson.dumps({"id": f"item-{i}", "text": "Which response follows the instruction better?", "judgments": judgments}) + b"\n")
    parse_orjson = (
        "import orjson\n"
        f"with open({str(big)!r}, 'rb') as f:\n"
        "    for line in f:\n"
        "        orjson.loads(line)\n"
    )
    parse_msgspec = (
        "import msgspec\n"
        "decode = msgspec.json.Decoder().decode\n"
        f"with open({str(big)!r}, 'rb') as f:\n"
        "    for line in f:\n"
        "        decode(line)\n"
    )
    t_orjson, _ = run([sys.executable, "-c", parse_orjson], reps)
    t_msgspec, _ = run([sys.executable, "-c", parse_msgspec], reps)
    t_parse = min(t_orjson, t_msgspec)
    t_fit, _ = run([str(BIN), "fit", str(big), "--format", "json"], reps)
    rss = peak_rss([str(BIN), "fit", str(big), "--format", "json"])
    size_mb = big.stat().st_size / 1e6
    out += [
        f"### End to end: {big_n:,} items ({size_mb:.0f} MB JSONL)",
        "",
        "| what | time |",
        "|---|---|",
        f"| bare parse: `python -c` looping `orjson.loads` over the lines | {t_orjson:.2f} s |",
        f"| bare parse: `python -c` looping msgspec's `Decoder().decode` over the lines | {t_msgspec:.2f} s |",
        f"| `betaconform fit FILE --format json` (start-up, read, fit, intervals, output) | {t_fit:.2f} s ({t_fit / t_parse:.2f}x the faster bare parse) |",
        f"| peak memory of that fit (max RSS) | {rss / 1024:.0f} MiB |",
        "",
    ]
    return out


def startup_section(tmp_path: Path, reps: int) -> list[str]:
    """Start-up (--help, a small file) and a folder of 100 small files."""
    out: list[str] = []
    small = ROOT / "sample_data" / "qa_judges.jsonl"
    t_help, _ = run([str(BIN), "--help"], reps)
    t_small, _ = run([str(BIN), "fit", str(small), "--format", "json"], reps)
    batch = tmp_path / "batch"
    batch.mkdir()
    for i in range(100):
        bk, bs = simulate(100, 100 + i)
        (batch / f"bench_{i:03d}.jsonl").write_text("".join(f'{{"correct": {int(c)}, "judges": {int(k)}}}\n' for k, c in zip(bk, bs)))
    t_batch, _ = run([str(BIN), "fit", str(batch), "--format", "json"], max(1, reps // 2))
    out += [
        "### Start-up and batches",
        "",
        "| what | time |",
        "|---|---|",
        f"| `betaconform --help` | {t_help:.2f} s |",
        f"| `betaconform fit sample_data/qa_judges.jsonl --format json` (120 items) | {t_small:.2f} s |",
        f"| `betaconform fit DIR --format json`, 100 files of 100 items | {t_batch:.2f} s |",
        "",
    ]
    return out


def help_section(against: Path | None, reps: int = 10) -> list[str]:
    """`betaconform --help`'s wall time, this checkout's (and another's, interleaved run by run)."""
    bins = [BIN] + ([against] if against is not None else [])
    times: dict[Path, list[float]] = {b: [] for b in bins}
    for _ in range(reps):
        for b in bins:
            times[b].append(run([str(b), "--help"], 1)[0])
    code = "import sys, betaconform_cli.cli; print(len(sys.modules))"  # what the CLI loads before it parses
    loaded = {b: subprocess.run([str(b.parent / "python"), "-c", code], check=True, capture_output=True, text=True).stdout.strip()
              for b in bins}
    # the formats module's own work (the input formats' registry is built when it is imported), after the package
    # and the standard modules it uses (the CLI loads those anyway)
    code = ("import time, collections.abc, dataclasses, pathlib, typing, betaconform_cli; t = time.perf_counter(); "
            "import betaconform_cli.formats; print(time.perf_counter() - t)")
    own = {b: min(float(subprocess.run([str(b.parent / "python"), "-c", code], check=True, capture_output=True,
                                       text=True).stdout) for _ in range(reps)) for b in bins}
    out = [f"| `betaconform --help`, {reps} runs{', interleaved' if against else ''} | median | fastest | modules loaded by "
           "`import betaconform_cli.cli` | `import betaconform_cli.formats`, fastest |", "|---|---|---|---|---|"]
    return out + [f"| {b} | {statistics.median(t) * 1000:.0f} ms | {min(t) * 1000:.0f} ms | {loaded[b]} | {own[b] * 1000:.2f} ms |"
                  for b, t in times.items()]


TARGETS_START, TARGETS_END = "<!-- speed-targets:start -->", "<!-- speed-targets:end -->"


REALTIME = False  # --realtime: each timed child (and this process while it waits) at real-time priority


@contextlib.contextmanager
def realtime() -> Iterator[None]:
    """With REALTIME: SCHED_FIFO for the duration (children inherit it), so that other jobs on a shared machine wait
    while a command is timed and its wall time approximates a quiet machine's; then back to the normal policy and a
    pause that lets the others run (needs CAP_SYS_NICE; Linux)."""
    if not REALTIME:
        yield
        return
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    try:
        yield
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        time.sleep(0.5)


def timed_child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one child process, which must succeed."""
    with realtime():
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def checkout_cli(root: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run `root`'s betaconform (not the installed one): `python -m` from a
    neutral folder with `root` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return [sys.executable, "-m", "betaconform_cli"], env


def write_big_jsonl(path: Path, n: int) -> None:
    """n items of 11 judges, the same lines as end_to_end_section's file."""
    big_k, s = simulate(n, 2)
    rng = np.random.default_rng(3)
    with open(path, "wb") as fh:
        for i in range(n):
            judgments = [1] * int(s[i]) + [0] * int(11 - s[i])
            rng.shuffle(judgments)
            fh.write(orjson.dumps({"id": f"item-{i}", "text": "Which response follows the instruction better?", "judgments": judgments}) + b"\n")


def targets_section(reps: int, baseline: Path | None, big_n: int = 1_000_000) -> list[str]:
    """Issue 30's three targets: each measured (median and fastest wall time of `reps` runs, median CPU time) beside
    its limit; with `baseline`, that checkout's figures too, its runs interleaved with this one's."""
    roots = [("this checkout", ROOT)] + ([("baseline " + str(baseline), baseline)] if baseline is not None else [])
    for _, root in roots:  # as installed: byte-compiled (PYTHONDONTWRITEBYTECODE=1 would compile ~40 modules per run)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "betaconform_cli")], check=True,
                       stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "items100.jsonl"
        small.write_bytes(b"".join((ROOT / "sample_data" / "qa_judges.jsonl").read_bytes().splitlines(keepends=True)[:100]))
        big = Path(tmp) / "items1m.jsonl"
        write_big_jsonl(big, big_n)
        parse = [sys.executable, "-c", f"import orjson\nwith open({str(big)!r}, 'rb') as f:\n    for line in f:\n        orjson.loads(line)\n"]
        cases = [("`betaconform --help`", ["--help"]), ("`betaconform fit` of 100 items (`-f json`)", ["fit", str(small), "-f", "json"]),
                 (f"`betaconform fit` of {big_n:,} JSON Lines items (`-f json`)", ["fit", str(big), "-f", "json"])]
        got: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(reps):  # interleaved: the machine's load falls on every command alike
            got.setdefault(("parse", ""), []).append(timed_child(parse))
            for label, root in roots:
                cmd, env = checkout_cli(root)
                for what, args in cases:
                    got.setdefault((label, what), []).append(timed_child(cmd + args, env))
    t_parse = statistics.median(w for w, _ in got[("parse", "")])
    limits = [0.3, 0.5, 1.3 * t_parse]
    out = [f"Bare parse of the {big_n:,}-item file (`orjson.loads` over its lines in a fresh `python -c`): "
           f"{t_parse:.2f} s median, CPU {statistics.median(c for _, c in got[('parse', '')]):.2f} s.", "",
           "| target | limit | checkout | wall, median | wall, fastest | CPU, median | median / limit | met |",
           "|---|---:|---|---:|---:|---:|---:|---|"]
    for (what, _), limit in zip(cases, limits):
        for label, _root in roots:
            runs = got[(label, what)]
            wall = statistics.median(w for w, _ in runs)
            shown = f"1.3 x parse = {limit:.2f} s" if limit not in (0.3, 0.5) else f"{limit:.1f} s"
            ratio = f"{wall / limit:.2f} ({wall / t_parse:.2f}x parse)" if limit not in (0.3, 0.5) else f"{wall / limit:.2f}"
            out.append(f"| {what} | {shown} | {label} | {wall:.2f} s | {min(w for w, _ in runs):.2f} s | "
                       f"{statistics.median(c for _, c in runs):.2f} s | {ratio} | {'yes' if wall <= limit else 'no'} |")
    return out


def update_doc(doc: Path, text: str) -> None:
    """Replace the text between the speed-targets markers of `doc` (appended with the markers when absent)."""
    body = doc.read_text(encoding="utf-8") if doc.exists() else ""
    block = f"{TARGETS_START}\n{text}\n{TARGETS_END}"
    if TARGETS_START in body and TARGETS_END in body:
        head, rest = body.split(TARGETS_START, 1)
        body = head + block + rest.split(TARGETS_END, 1)[1]
    else:
        body = body.rstrip("\n") + ("\n\n" if body else "") + block + "\n"
    doc.write_text(body, encoding="utf-8")


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?") if Path("/proc/cpuinfo").exists() else "?"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()}, load average {load:.1f} at the start"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats, 10^5 instead of 10^6 items end to end")
    ap.add_argument("--only-transfer", action="store_true", help="only the transfer timing (100 ten-item targets)")
    ap.add_argument("--only-help", action="store_true", help="only `betaconform --help`, 10 runs")
    ap.add_argument("--against", type=Path, help="with --only-help: another checkout's betaconform, run interleaved")
    ap.add_argument("--targets", action="store_true", help="only issue 30's three targets, beside their limits")
    ap.add_argument("--baseline", type=Path, help="with --targets: another checkout's code, run interleaved")
    ap.add_argument("--repeats", type=int, help="runs of each command (default 5, 2 with --quick)")
    ap.add_argument("--update-doc", type=Path, help="with --targets: write the table into this Markdown file")
    ap.add_argument("--realtime", action="store_true", help="with --targets: time each command at real-time priority "
                    "(SCHED_FIFO) so that a shared machine's other jobs wait meanwhile (Linux, CAP_SYS_NICE)")
    args = ap.parse_args()
    global REALTIME
    REALTIME = args.realtime
    reps = args.repeats or (2 if args.quick else 5)
    if args.targets:
        command = "python benchmarks/speed.py --targets" + (" --realtime" if args.realtime else "") + (
            f" --baseline {args.baseline}" if args.baseline else "") + (
            f" --repeats {args.repeats}" if args.repeats else "") + (" --quick" if args.quick else "")
        text = "\n".join([f"`{command}` on {machine()}.", "",
                          *targets_section(reps, args.baseline, 100_000 if args.quick else 1_000_000)])
        print(text)
        if args.update_doc:
            update_doc(args.update_doc, text)
        return
    if args.only_help:
        print("\n".join(help_section(args.against)))
        return
    if args.only_transfer:
        print("\n".join(transfer_section(reps)))
        return
    big_n = 100_000 if args.quick else 1_000_000
    out = ["## Speed and scale", ""]
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?") if Path("/proc/cpuinfo").exists() else "?"
    out += [f"Machine: {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()}.", ""]
    out += [f"Command: `.venv/bin/python benchmarks/speed.py{' --quick' if args.quick else ''}` (medians of {reps} runs).", ""]
    out += fit_section(reps)
    with tempfile.TemporaryDirectory() as tmp:
        out += end_to_end_section(Path(tmp), big_n, reps)
        out += startup_section(Path(tmp), reps)
    out += embedding_section(reps)
    out += transfer_section(reps)
    print("\n".join(out))


def embedding_section(reps: int) -> list[str]:
    """`fit --save --embed` of the 460 sample_data texts: cold (model load + embedding) against cached."""
    rows = ["### Embeddings: cold against cached", ""]
    try:
        from betaconform_cli.embeddings import default_model_path  # noqa: F401
    except ImportError:
        return rows + ["(embedding backend unavailable)", ""]
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        cmd = [str(BIN), "fit", str(ROOT / "sample_data"), "--save-dir", str(Path(tmp) / "fits"), "--embed", "--cache-dir", str(cache), "--no-chart", "-f", "json"]
        t_cold, _ = run(cmd, 1)
        t_warm, _ = run(cmd, reps)
        t_plain, _ = run([str(BIN), "fit", str(ROOT / "sample_data"), "--save-dir", str(Path(tmp) / "plain"), "--no-chart", "-f", "json"], reps)
    return rows + [
        "| `betaconform fit sample_data/ --save-dir D --embed` (460 texts) | time |",
        "|---|---|",
        f"| cold: empty cache (loads torch and the model, embeds every text) | {t_cold:.2f} s |",
        f"| cached: same texts again (never loads the model) | {t_warm:.2f} s |",
        f"| the same fit without --embed | {t_plain:.2f} s |",
        "",
    ]



def transfer_section(reps: int) -> list[str]:
    """100 ten-item targets (drawn from sample_data/qa_judges.jsonl) against the 7 shipped snow-rte priors in one call."""
    rows = ["### Transfer: 100 ten-item targets in one call", ""]
    priors = sorted((ROOT / "configs" / "priors").glob("snow_rte_*.yaml"))
    if not priors:
        return rows + ["(no shipped priors)", ""]
    items = (ROOT / "sample_data" / "qa_judges.jsonl").read_text().splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        targets = Path(tmp) / "targets"
        targets.mkdir()
        rng = np.random.default_rng(7)
        for i in range(100):
            pick = rng.choice(len(items), 10, replace=False)
            (targets / f"target_{i:03d}.jsonl").write_text("".join(items[j] + "\n" for j in pick))
        cache = Path(tmp) / "cache"
        sources = str(ROOT / "configs" / "priors" / "snow_rte_*.yaml")  # one glob: --sources takes one value per flag
        cmd = [str(BIN), "transfer", str(targets), "--sources", sources, "--cache-dir", str(cache), "-f", "json"]
        run(cmd, 1)  # fills the embedding cache
        t_default, _ = run(cmd, max(1, reps // 2))
        t_paper, _ = run([*cmd, "--method", "paper"], max(1, reps // 2))
    return rows + [
        "| `betaconform transfer DIR --sources configs/priors/snow_rte_*.yaml -f json`, texts cached | time |",
        "|---|---|",
        f"| `--method default` | {t_default:.2f} s |",
        f"| `--method paper` | {t_paper:.2f} s |",
        "",
    ]


if __name__ == "__main__":
    main()
