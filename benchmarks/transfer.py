"""Benchmarks of prior transfer on ../shared/data: leave-one-out inside a collection, and out of the box.

- `loo` (leave-one-out inside each collection): for every dataset of a collection (the target), the other
  datasets of the same collection (same judges) are the sources, fitted on all their items with the default
  fit (as `fit --save --embed` would) and embedded with the real model.
- `ootb` (out of the box): the sources are a priors directory (default configs/priors/), as a new user with no
  sources of their own would run `transfer --sources configs/priors/`, with every prior of the held-out task
  removed: each collection of ../shared/data is held out in turn, and every prior whose provenance names that
  collection, or the benchmark (item set) that collection's priors name, is dropped (so the task is unseen).

From each target `--labels` items are drawn at random (`--draws` seeded draws, the same for every method); the
target's embedding is the mean over those items' texts. Margin: the mean over odd k <= min(11, K) of
|estimate - actual| in points, the actual being the full dataset's exact (hypergeometric) majority error;
"none" is the no-transfer estimate of the same labels (`fit`). Coverage: the share of (draw, odd k) whose 90%
interval holds the actual. The quality bars of issue 13 are checked at the end of each table.

    .venv/bin/python benchmarks/transfer.py                          # both benchmarks, seed 0
    .venv/bin/python benchmarks/transfer.py --seeds 0,1,2            # ... on three sets of draws
    .venv/bin/python benchmarks/transfer.py --benchmark ootb --priors DIR   # another priors directory
    .venv/bin/python benchmarks/transfer.py --tune --seeds 0,1,2     # max_move chosen leave-one-collection-out
    .venv/bin/python benchmarks/transfer.py --tune as_is_min_strength --seeds 0,1,2   # ... or another key of TUNE_GRIDS
    .venv/bin/python benchmarks/transfer.py --oracle                 # + an oracle that knows each target's shape
    .venv/bin/python benchmarks/transfer.py --ablate --no-paper      # + the default with each change undone

Methods: `default` (configs/transfer.yaml, or --config), `previous` (the default before issue 13: a fixed
no-transfer prior, as-is sources whatever their number of judges, points between two sources, the Beta-Binomial
no-transfer evidence, no limit on the move) and, in `loo`, `paper` (eq. 14-15). `--ablate` adds the default with
each of those changes undone alone (ABLATIONS). `--oracle` adds, in `ootb`, the target's own full-data fit as the only source, shifted copies only:
what knowing the target's exact shape (but not its location) is worth.

--tune [KEY]: every value of TUNE_GRIDS[KEY] (max_move by default) is scored on both benchmarks and every seed of --seeds; the rule, fixed
before looking at the results: among the values whose worst dataset stays within both bars (loo +1.5, ootb +0.5
points) on every seed, the lowest mean relative margin (if none does, the smallest excess over the bars).
Applied to all collections it gives the in-sample pick; applied to two collections and scored on the third,
three times, the held-out number.

Skips cleanly (exit 0) when ../shared/data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")  # BLAS threads fight over 2 cores and slow the fits ~30x
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from betaconform_cli import embeddings, savedfit, transfer  # noqa: E402
from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.fit import FitResult, analyse  # noqa: E402
from betaconform_cli.inputs import Keep, read_dataset  # noqa: E402
from betaconform_cli.mixtures import empirical_errors, fit_paper_em  # noqa: E402
from betaconform_cli.settings import FitSettings  # noqa: E402

KS = tuple(range(1, 12))
TUNE_GRIDS: dict[str, tuple[float | None, ...]] = {
    "max_move": (0.25, 0.5, 0.75, 1.0, None),
    "as_is_min_strength": (0.0, 20.0, 100.0),
}
BARS = {"loo": (20.0, 1.5), "ootb": (8.0, 0.5)}  # (at least this % lower, no dataset worse by more than this)
COVERAGE_BAR = 0.85
PREVIOUS = {"source_prior": "fixed", "match_judge_count": False, "max_move": None, "pair_prior": 0.3,
            "no_transfer_evidence": "beta-binomial", "as_is_min_strength": 0.0}
# --ablate: the default with one of issue 13's changes undone (or the noisy-or prior instead of the best match)
ABLATIONS = {
    "fixed prior": {"source_prior": "fixed"},
    "noisy-or prior": {"source_prior": "noisy-or"},
    "any judge count": {"match_judge_count": False},
    "no limit": {"max_move": None},
    "with pairs": {"pair_prior": 0.3},
    "BB evidence": {"no_transfer_evidence": "beta-binomial"},
    "as-is at any kappa": {"as_is_min_strength": 0.0},
}


@dataclass
class Target:
    """One dataset as a target: its truth at odd k, its draws (labels, mean embedding, no-transfer fit) and its
    full-data fit as a source."""

    collection: str
    name: str
    items: int
    odd: list[int]
    truth: np.ndarray
    draws: list[tuple[CountTable, np.ndarray, FitResult]] = field(repr=False)
    full: transfer.Source = field(repr=False)


def norm(x: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(x).lower())


def load_collections(data_dir: Path) -> dict[str, list[Path]]:
    manifest = yaml.safe_load((data_dir / "MANIFEST.yaml").read_text())
    out: dict[str, list[Path]] = {}
    for d in manifest["datasets"]:
        found = sorted(data_dir.rglob(d["file"]))
        if found:
            out.setdefault(d["collection"], []).append(found[0])
    return out


def load_priors(directory: Path) -> list[tuple[str, str, transfer.Source]]:
    """(collection, benchmark, source) of every saved fit in a priors directory."""
    out = []
    for f in sorted(directory.glob("*.y*ml")):
        doc = savedfit.load_fit(f)
        prov = doc.provenance or {}  # the typed saved fit: UNSET (falsy) or None where absent
        out.append((norm(prov.get("collection")), norm(prov.get("benchmark")), transfer.Source.from_saved(doc, str(f))))
    return out


def held_out(priors: list[tuple[str, str, transfer.Source]], collection: str) -> tuple[list[transfer.Source], list[str]]:
    """The priors left when a collection is held out: drop every prior of that collection and every prior built on
    a benchmark (item set) that the collection's priors name."""
    names = {norm(collection)} | {b for c, b, _ in priors if c == norm(collection) and b}
    kept = [s for c, b, s in priors if c not in names and b not in names]
    return kept, [s.name for c, b, s in priors if c in names or b in names]


def prepare(data_dir: Path, seed: int, draws: int, labels: int, embedder: Any, cache: dict[str, Any]) -> list[Target]:
    """The targets and their draws for one seed (texts embedded once, across seeds)."""
    fs = FitSettings(ks=KS)
    out = []
    for ci, (collection, files) in enumerate(load_collections(data_dir).items()):
        for ti, f in enumerate(files):
            if f not in cache:
                ds = read_dataset(f, keep=Keep.ITEMS)
                cache[f] = (ds, np.asarray(embedder.embed(embeddings.item_texts(ds)), dtype=float))
            ds, vecs = cache[f]
            items = ds.items or ()
            full = analyse(ds.table, fs, np.random.default_rng(seed))
            src = transfer.Source(ds.name, ds.table, full.fit.mixture, vecs.mean(axis=0), embedder.name)
            truth_d = empirical_errors(ds.table, KS)
            odd = [i for i, k in enumerate(KS) if k % 2 == 1 and k <= ds.table.min_judges]
            dr = []
            for d in range(draws):
                rng = np.random.default_rng([seed, ci, ti, d])
                pick = rng.choice(len(items), size=labels, replace=False)
                table = CountTable.from_pairs([items[i].judges for i in pick], [items[i].correct for i in pick])
                dr.append((table, vecs[pick].mean(axis=0), analyse(table, fs, np.random.default_rng([seed, d]))))
            out.append(Target(collection, ds.name, ds.n_items, odd, np.array([truth_d[KS[i]] for i in odd]), dr, src))
    return out


def score(rows: Any, t: Target) -> tuple[float, float]:
    est = np.array([rows[i].estimate for i in t.odd])
    lo = np.array([rows[i].low for i in t.odd])
    hi = np.array([rows[i].high for i in t.odd])
    return 100 * float(np.mean(np.abs(est - t.truth))), float(np.mean((lo <= t.truth + 1e-12) & (t.truth <= hi + 1e-12)))


def run(kind: str, targets: list[Target], methods: dict[str, transfer.TransferSettings], seed: int,
        priors: list[tuple[str, str, transfer.Source]], em: dict[str, Any], oracle: bool = False) -> list[dict[str, Any]]:
    """Every method on every target and draw of one benchmark: per dataset, mean margin, coverage, the mean
    posterior probability of no transfer and the share of draws where no source applies (default method)."""
    fs = FitSettings(ks=KS)
    rows = []
    oracle_st = transfer.TransferSettings.of(**PREVIOUS).replaced(no_transfer_prior=0.01, shift_prior=0.99)
    for t in targets:
        if kind == "loo":
            sources = [s.full for s in targets if s.collection == t.collection and s.name != t.name]
        else:
            sources = held_out(priors, t.collection)[0]
        if not sources:
            continue
        runs = dict(methods)
        if oracle and kind == "ootb":
            runs["oracle shape"] = oracle_st
        margin: dict[str, list[float]] = {n: [] for n in ["none", *runs]}
        cover: dict[str, list[float]] = {n: [] for n in ["none", *runs]}
        w0, none_applies = [], []
        for d, (table, e0, without) in enumerate(t.draws):
            m, c = score(without.rows, t)
            margin["none"].append(m)
            cover["none"].append(c)
            for name, st in runs.items():
                srcs = [t.full] if name == "oracle shape" else sources
                res = transfer.transfer(table, e0, srcs, st, fs, np.random.default_rng([seed, d, 1]), without, em)
                m, c = score(res.result.rows, t)
                margin[name].append(m)
                cover[name].append(c)
                if name == "default":
                    w0.append(res.target_weight)
                    none_applies.append(res.no_source_applies)
        rows.append({
            "benchmark": kind, "collection": t.collection, "dataset": t.name, "items": t.items, "sources": len(sources),
            "margin": {k: float(np.mean(v)) for k, v in margin.items()},
            "se": {k: float(np.std(v, ddof=1) / np.sqrt(len(v))) for k, v in margin.items()},
            "coverage": {k: float(np.mean(v)) for k, v in cover.items()},
            "no_transfer_weight": float(np.mean(w0)) if w0 else None,
            "no_source_share": float(np.mean(none_applies)) if none_applies else None,
        })
        print(f"{kind} {t.name:34s} " + " ".join(f"{k}={v:6.2f}" for k, v in rows[-1]["margin"].items()),
              file=sys.stderr, flush=True)
    return rows


def summary(rows: list[dict[str, Any]], name: str = "default") -> dict[str, Any]:
    none = float(np.mean([r["margin"]["none"] for r in rows]))
    mean = float(np.mean([r["margin"][name] for r in rows]))
    worst = max(rows, key=lambda r: r["margin"][name] - r["margin"]["none"])
    return {"none": none, "mean": mean, "lower": 100 * (1 - mean / none), "worst": worst["margin"][name] - worst["margin"]["none"],
            "worst_dataset": worst["dataset"], "coverage": float(np.mean([r["coverage"][name] for r in rows]))}


def print_table(kind: str, seed: int, rows: list[dict[str, Any]], draws: int, labels: int, elapsed: float) -> None:
    names = [n for n in rows[0]["margin"]]
    title = "leave-one-out inside each collection" if kind == "loo" else "out of the box (priors of the held-out task removed)"
    print(f"\n### {title}: r = {labels} labels, {draws} draws, seed {seed} ({elapsed:.0f} s)\n")
    print("| collection | dataset | items | sources | " + " | ".join(names)
          + " | delta | cover none / default | P(no transfer) | no source applies |")
    print("|---|---|---|---|" + "---|" * (len(names) + 4))
    for r in rows:
        m = r["margin"]
        print(f"| {r['collection']} | {r['dataset']} | {r['items']} | {r['sources']} | " + " | ".join(f"{m[n]:.2f}" for n in names)
              + f" | {m['default'] - m['none']:+.2f} | {r['coverage']['none']:.2f} / {r['coverage']['default']:.2f} | "
              f"{r['no_transfer_weight']:.2f} | {r['no_source_share']:.2f} |")
    means = {n: float(np.mean([r["margin"][n] for r in rows])) for n in names}
    cov = {n: float(np.mean([r["coverage"][n] for r in rows])) for n in names}
    print("| **mean** | | | | " + " | ".join(f"**{means[n]:.2f}**" for n in names)
          + f" | {means['default'] - means['none']:+.2f} | {cov['none']:.2f} / {cov['default']:.2f} | | |")
    print()
    for n in names[1:]:
        s = summary(rows, n)
        print(f"- {n}: {s['lower']:.1f}% lower than no transfer ({s['mean']:.2f} vs {s['none']:.2f}); worst dataset "
              f"{s['worst']:+.2f} ({s['worst_dataset']}); coverage {s['coverage']:.2f}")
    s = summary(rows)
    lower, worst = BARS[kind]
    verdict = [f"at least {lower:.0f}% lower: {'met' if s['lower'] >= lower else 'NOT met'} ({s['lower']:.1f}%)",
               f"no dataset worse by more than {worst}: {'met' if s['worst'] <= worst else 'NOT met'} ({s['worst']:+.2f})",
               f"coverage at least {COVERAGE_BAR}: {'met' if s['coverage'] >= COVERAGE_BAR else 'NOT met'} ({s['coverage']:.2f})"]
    print("- bars (default): " + "; ".join(verdict))


def pick(scores: dict[str, dict[str, list[list[dict[str, Any]]]]], collections: set[str]) -> str:
    """The --tune rule on the datasets of `collections`, over every set of draws (module docstring)."""
    def key(name: str) -> tuple[float, float]:
        excess, rel = 0.0, []
        for kind, (_, bar) in BARS.items():
            for rows in scores[name][kind]:
                s = summary([r for r in rows if r["collection"] in collections])
                excess = max(excess, s["worst"] - bar)
                rel.append(s["mean"] / s["none"])
        return max(excess, 0.0), float(np.mean(rel))

    return min(scores, key=key)


def tune(per_seed: list[tuple[int, list[Target], dict[str, Any]]], base: transfer.TransferSettings, priors: list[Any],
         key: str = "max_move") -> None:
    """Score TUNE_GRIDS[key] on both benchmarks and every seed; report the in-sample and held-out picks."""
    scores: dict[str, dict[str, list[list[dict[str, Any]]]]] = {}
    for value in TUNE_GRIDS[key]:
        st = {"default": base.replaced(**{key: value})}
        scores[f"{key}={value}"] = {kind: [run(kind, targets, st, seed, priors, em) for seed, targets, em in per_seed]
                                    for kind in BARS}
    cols = sorted({t.collection for t in per_seed[0][1]})
    seeds = ", ".join(str(s) for s, _, _ in per_seed)
    print(f"\n### --tune: {key}, scored on both benchmarks, seeds {seeds} (lower / worst dataset per seed)\n")
    print(f"| {key} | loo | ootb | coverage loo / ootb |")
    print("|---|---|---|---|")
    for name, sc in scores.items():
        cells = []
        for kind in BARS:
            cells.append(", ".join(f"{s['lower']:.1f}% / {s['worst']:+.2f}" for s in map(summary, sc[kind])))
        cov = [float(np.mean([summary(rows)["coverage"] for rows in sc[kind]])) for kind in BARS]
        print(f"| {name.split('=')[1]} | {cells[0]} | {cells[1]} | {cov[0]:.2f} / {cov[1]:.2f} |")
    print(f"\nin-sample pick (all collections): {pick(scores, set(cols))}\n")
    print("| held-out collection | picked on the other two | loo: none / transfer (worst), per seed | ootb: none / transfer (worst), per seed |")
    print("|---|---|---|---|")
    held: dict[str, list[list[dict[str, Any]]]] = {kind: [[] for _ in per_seed] for kind in BARS}
    for c in cols:
        name = pick(scores, set(cols) - {c})
        parts = []
        for kind in BARS:
            cell = []
            for i, rows in enumerate(scores[name][kind]):
                mine = [r for r in rows if r["collection"] == c]
                held[kind][i] += mine
                s = summary(mine)
                cell.append(f"{s['none']:.2f} / {s['mean']:.2f} ({s['worst']:+.2f})")
            parts.append("; ".join(cell))
        print(f"| {c} | {name} | " + " | ".join(parts) + " |")
    print()
    for kind in BARS:
        for (seed, _, _), rows in zip(per_seed, held[kind]):
            s = summary(rows)
            print(f"- held out, {kind}, seed {seed}: {s['lower']:.1f}% lower ({s['mean']:.2f} vs {s['none']:.2f}), worst "
                  f"dataset {s['worst']:+.2f} ({s['worst_dataset']}), coverage {s['coverage']:.2f}")


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--priors", default=str(ROOT / "configs" / "priors"), help="priors directory for the ootb benchmark")
    ap.add_argument("--benchmark", choices=("both", "loo", "ootb"), default="both")
    ap.add_argument("--labels", type=int, default=10)
    ap.add_argument("--draws", type=int, default=30)
    ap.add_argument("--seeds", default="0", help="comma-separated seeds, one set of draws each")
    ap.add_argument("--config", default=str(ROOT / "configs" / "transfer.yaml"))
    ap.add_argument("--max-move", type=float, default=None, help="override max_move (negative: no limit)")
    ap.add_argument("--no-paper", action="store_true", help="leave out the paper's method (its EM is the slow part)")
    ap.add_argument("--no-previous", action="store_true", help="leave out the previous default")
    ap.add_argument("--oracle", action="store_true", help="ootb: add the oracle that knows each target's shape")
    ap.add_argument("--ablate", action="store_true", help="add the default with each of issue 13's changes undone")
    ap.add_argument("--tune", nargs="?", const="max_move", choices=sorted(TUNE_GRIDS), default=None,
                    help="choose a setting (max_move unless named) leave-one-collection-out")
    ap.add_argument("--embedding-model", default=None)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--json", default=None, help="write per-dataset results here")
    return ap.parse_args()


def main() -> int:
    args = parse_args()
    data_dir = Path(args.data)
    if not (data_dir / "MANIFEST.yaml").exists():
        print(f"skipped: no benchmark data at {data_dir}", file=sys.stderr)
        return 0
    cfg = yaml.safe_load(Path(args.config).read_text()) or {}
    base = transfer.settings_from_config(cfg, str(args.config))
    if args.max_move is not None:
        base = base.replaced(max_move=None if args.max_move < 0 else args.max_move)
    methods = {"default": base}
    if not args.no_previous:
        methods["previous"] = base.replaced(**PREVIOUS)
    if args.ablate:
        methods.update({name: base.replaced(**change) for name, change in ABLATIONS.items()})
    priors = load_priors(Path(args.priors)) if args.benchmark != "loo" or args.tune else []
    embedder = embeddings.load_embedder(args.embedding_model, cache_dir=embeddings.cache_path(args.cache_dir))
    kinds = ["loo", "ootb"] if args.benchmark == "both" else [args.benchmark]
    if "ootb" in kinds:
        print("\nout of the box: priors removed with each held-out collection", file=sys.stderr)
        for c in load_collections(data_dir):
            kept, dropped = held_out(priors, c)
            print(f"  {c}: {len(kept)} sources; removed {', '.join(dropped) or 'none'}", file=sys.stderr)
    cache: dict[str, Any] = {}
    out: dict[str, Any] = {"args": vars(args), "results": []}
    per_seed = []
    for seed in (int(s) for s in args.seeds.split(",")):
        t0 = time.time()
        targets = prepare(data_dir, seed, args.draws, args.labels, embedder, cache)
        em = {t.name: fit_paper_em(t.full.table).mixture for t in targets}
        if args.tune:
            per_seed.append((seed, targets, em))
            continue
        for kind in kinds:
            t1 = time.time()
            ms = dict(methods)
            if kind == "loo" and not args.no_paper:
                ms["paper"] = replace(base, method="paper")
            rows = run(kind, targets, ms, seed, priors, em, args.oracle)
            print_table(kind, seed, rows, args.draws, args.labels, time.time() - t1)
            out["results"].append({"benchmark": kind, "seed": seed, "rows": rows, "summary": summary(rows)})
        print(f"\n(seed {seed}: {time.time() - t0:.0f} s)", file=sys.stderr)
    if args.tune:
        tune(per_seed, base, priors, args.tune)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
