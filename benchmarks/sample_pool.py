"""Live sampling benchmark (issue 17, item 5): `sample --pool` with the pool's verdicts against ids only.

For every dataset under ../shared/data (recursively, *.jsonl and *.jsonl.gz), seeded runs of the live loop: the
pool is the whole dataset in a random labeling order; items are labeled in batches of 10 and after each batch the
calibrated precision rule (target 0.05 half-width, 90% level, checked at the rule's monitoring level 0.95, ks
1..min(11, K), finite-pool correction) decides whether to stop:

- ids only: the rule on the labels (`stopping.live.decide`, what `sample --pool` did before issue 17); the estimate
  at the stop is `fit`'s on the labeled items.
- pool's verdicts: the rule on the vote-split estimate over the whole pool (`stopping.live.decide_with_votes`);
  every pool item shows its verdicts, binary verdicts made from correctness as benchmarks/unlabeled.py makes them
  (the gold side if the judge is correct, the other if not, the gold side drawn at random per item). The next
  items come in the same random order as with ids only.
- pool's verdicts, next by split: the same rule, the next 10 items chosen by vote split (`stopping.select.
  next_by_split`: Neyman allocation over the splits at the checked k where the interval is widest, random within
  a split), the post-stratified check (`select.stratified_check`) deciding where the vote-split guard falls back;
  the estimate at the stop is the vote-split one (or the post-stratified one). The first batch is chosen by split
  too (on the prior's curve).
- the check (`stopping.live.vote_check`) counts the unlabeled items' own outcomes exactly (binomial draws per
  split, the product since this benchmark measured it); "before: ..., outcomes by a normal approximation" is the
  check as it was (fit's normal approximation of their sum).
- ids only, 0.9 level / pool's verdicts, next by split, 0.9 level: the interval checked at the promised level 0.9
  instead of the rule's monitoring level (0.95), for both, so that their comparison stays fair.
- with --only or --all (measured to choose, not in the documented run): uncertainty sampling (each label to the
  split whose single item is most uncertain) and the simultaneous band (`live.simultaneous_half_width`: the level
  quantile of the largest deviation over the checked ks, the promise's own posterior probability) at 0.95 / 0.9.

Simulated pools (collection "simulated", left out of "all"; --no-simulate drops them): three pools drawn with fixed
seeds from benchmarks/simulated.py's two-group model (not the vote-split model), where the promise is checked too.

Reported: labels at the stop (mean over runs, each dataset weighs the same), the change, and at the stop the error
margin (mean over odd k <= K of |estimate - the pool's exact error|, points) and "within": the share of runs whose
estimate was within the target of the pool's error at every checked k (the rule's promise, >= 0.9).

    nice -n 5 .venv/bin/python benchmarks/sample_pool.py --data ../shared/data --runs 6 --seed 0 --update-doc docs/STOPPING.md

Exits 0 with a message when the data folder is absent (the data is not part of the repository).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from unlabeled import DEFAULT_DATA, DISTINCT, Data, load, truth, write_block  # noqa: E402

from betaconform_cli.blas import one_thread  # noqa: E402
from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.evaluate.settings import run_rng  # noqa: E402
from betaconform_cli.fit import analyse  # noqa: E402
from betaconform_cli.inputs import Item  # noqa: E402
from betaconform_cli.settings import FitSettings  # noqa: E402
from betaconform_cli.stopping.live import decide, decide_with_votes  # noqa: E402
from betaconform_cli.stopping.rules import PrecisionRule  # noqa: E402
from betaconform_cli.stopping.select import next_by_split, stratified_check  # noqa: E402

KS = tuple(range(1, 12))
TARGET = 0.05
BATCH = 10
LEVEL = 0.9
POOL = "pool's verdicts"
# the vote-split interval's level for the check: None = the rule's monitoring level (0.95, as the labels-only check)
VARIANTS: dict[str, float | None] = {POOL: None}
# the pool's verdicts with the next items chosen by vote split (stopping.select.next_by_split), at these levels
SPLIT = "pool's verdicts, next by split"
# name -> (allocation, level of the check (None: the rule's monitoring level), band, outcomes): stopping.live.vote_check
PRODUCT = ("neyman", None, "widest", "binomial")
SPLIT_VARIANTS: dict[str, tuple[str, float | None, str, str]] = {
    SPLIT: PRODUCT,
    "before: next by split, outcomes by a normal approximation": ("neyman", None, "widest", "normal"),
    "pool's verdicts, uncertainty sampling": ("uncertainty", None, "widest", "binomial"),
    "pool's verdicts, next by split, 0.9 level": ("neyman", 0.9, "widest", "binomial"),
    "next by split, simultaneous band 0.95": ("neyman", None, "simultaneous", "binomial"),
    "next by split, simultaneous band 0.9": ("neyman", 0.9, "simultaneous", "binomial"),
    "next by split, simultaneous band 0.95, normal outcomes": ("neyman", None, "simultaneous", "normal"),
    "next by split, simultaneous band 0.9, normal outcomes": ("neyman", 0.9, "simultaneous", "normal"),
    "next by split, 0.9 level, normal outcomes": ("neyman", 0.9, "widest", "normal"),
}
# the labels-only rule checked at the promised level (0.9) instead of its monitoring level (0.95): the same change
# as the 0.9 rows above, made to ids only, so that their comparison stays fair
IDS_09 = "ids only, 0.9 level"
# the variants of the documented run (ids only always runs); --only names others, --all runs every one
DOCUMENTED = (IDS_09, POOL, SPLIT, "before: next by split, outcomes by a normal approximation",
              "pool's verdicts, next by split, 0.9 level")
ONLY: tuple[str, ...] = DOCUMENTED  # empty: all
# --simulate: pools drawn from benchmarks/simulated.py's two-group model (not the vote-split model): (items, judges)
SIMULATED = ((120, 9), (150, 11), (100, 7))


@dataclass
class Cell:
    name: str
    collection: str
    size: int
    labels: dict[str, np.ndarray]
    margin: dict[str, np.ndarray]
    within: dict[str, np.ndarray]
    fallback: np.ndarray  # the vote-split guard fell back to the labels at the stop
    fallback_split: np.ndarray  # ... with the next items by split (Neyman): the post-stratified check decided


def run_cell(d: Data, runs: int, seed: int) -> Cell:
    j = d.judgments
    n, big_k = j.shape
    ks = tuple(k for k in KS if k <= big_k)
    rule = PrecisionRule(target=TARGET, ks=ks, confidence_level=LEVEL)
    actual = truth(j)[: len(ks)]
    odd = np.array([k % 2 == 1 for k in ks])
    rule09 = PrecisionRule(target=TARGET, ks=ks, confidence_level=2 * 0.9 - 1)  # monitoring level 0.9
    names = tuple(m for m in ("ids only", IDS_09, *VARIANTS, *SPLIT_VARIANTS) if m == "ids only" or not ONLY or m in ONLY)
    labels = {m: np.zeros(runs) for m in names}
    margin = {m: np.zeros(runs) for m in names}
    within = {m: np.zeros(runs, dtype=bool) for m in names}
    fallback = np.zeros(runs, dtype=bool)
    fallback_split = np.zeros(runs, dtype=bool)
    settings = FitSettings(ks=ks, confidence_level=LEVEL)
    for run in range(runs):
        rng = run_rng(seed, d.name, 0, run)
        order = rng.permutation(n)
        side = np.random.default_rng([seed, zlib.crc32(d.name.encode("utf-8")), run, 23]).integers(0, 2, size=n)
        votes = np.where(j == 1, side[:, None], 1 - side[:, None])
        items = [Item(big_k, int(j[i].sum())) for i in order]
        done = {m: m not in names for m in ("ids only", IDS_09, *VARIANTS)}
        for r in range(BATCH, n + BATCH, BATCH):
            r = min(r, n)
            for m, rr in (("ids only", rule), (IDS_09, rule09)):
                if done[m]:
                    continue
                dec = decide(rr, items[:r], np.random.default_rng([seed, run, r]), n)
                if dec.stopped:
                    table = CountTable.from_pairs(np.full(r, big_k), j[order[:r]].sum(axis=1))
                    est = np.array([row.estimate for row in analyse(table, settings, np.random.default_rng([seed, run, r])).rows])
                    labels[m][run], done[m] = r, True
                    margin[m][run] = 100 * np.abs(est - actual)[odd].mean()
                    within[m][run] = bool(np.all(np.abs(est - actual) <= TARGET + 1e-12))
            for m, level in VARIANTS.items():
                if done[m]:
                    continue
                gold = np.full(n, -1)
                gold[order[:r]] = side[order[:r]]
                dec, check = decide_with_votes(rule, items[:r], votes, gold, np.random.default_rng([seed, run, r, 1]), level=level)
                if dec.stopped:
                    if check.estimate.used_unlabeled:
                        est = np.array([row.estimate for row in check.estimate.rows])
                    else:  # the labels-only decision: its estimate is fit's, as with ids only
                        table = CountTable.from_pairs(np.full(r, big_k), j[order[:r]].sum(axis=1))
                        est = np.array([row.estimate for row in analyse(table, settings, np.random.default_rng([seed, run, r])).rows])
                    labels[m][run], done[m] = r, True
                    margin[m][run] = 100 * np.abs(est - actual)[odd].mean()
                    within[m][run] = bool(np.all(np.abs(est - actual) <= TARGET + 1e-12))
                    if m == POOL:
                        fallback[run] = not check.estimate.used_unlabeled
            if all(done.values()):
                break
        for m, (allocation, level, band, outcomes) in SPLIT_VARIANTS.items():
            if m not in names:
                continue
            r, est, fell = by_split(d, votes, side, rule, (allocation, level, band, outcomes), [seed, run])
            if m == SPLIT:
                fallback_split[run] = fell
            labels[m][run], margin[m][run] = r, 100 * np.abs(est - actual)[odd].mean()
            within[m][run] = bool(np.all(np.abs(est - actual) <= TARGET + 1e-12))
    return Cell(d.name, d.collection, n, labels, margin, within, fallback, fallback_split)


def by_split(d: Data, votes: np.ndarray, side: np.ndarray, rule: PrecisionRule,
             variant: tuple[str, float | None, str, str], seed: list[int]) -> tuple[int, np.ndarray, bool]:
    """One live loop whose next items are chosen by vote split: (labels at the stop, the estimate at the stop at
    the rule's ks, whether the vote-split guard had fallen back to the post-stratified check)."""
    allocation, level, band, outcomes = variant
    j = d.judgments
    n, big_k = j.shape
    ids = [f"{i:06d}" for i in range(n)]
    gold = np.full(n, -1)
    labeled: list[int] = []
    model, at_k = None, rule.ks[-1]
    while True:
        picks = next_by_split(ids, votes, gold, 2, BATCH, at_k, np.random.default_rng([*seed, 31]), model, allocation)
        labeled += picks
        gold[picks] = side[picks]
        r = len(labeled)
        items = [Item(big_k, int(j[i].sum())) for i in labeled]
        dec, check = decide_with_votes(rule, items, votes, gold, np.random.default_rng([*seed, r, 1]), level=level,
                                       by_split=True, band=band, outcomes=outcomes)
        if os.environ.get("SAMPLE_POOL_TRACE"):
            print(f"    {d.name} r={r} half={dec.statistic:.4f} k={check.at_k} used={check.estimate.used_unlabeled}", file=sys.stderr)
        if dec.stopped:
            if check.estimate.used_unlabeled:
                return r, np.array([row.estimate for row in check.estimate.rows]), False
            strat = stratified_check(votes, gold, 2, check.estimate.ks, 0.9)
            return r, strat.estimate, True
        model, at_k = check.estimate.model, check.at_k


def terms(d: Data, seed: int = 0, run: int = 0) -> str:
    """Where the labels go (--terms): one live loop by split with the check before exact outcomes, and at each
    check the half-width at the binding k beside 1.96 times the standard deviation of its two terms (the posterior
    of P(plurality wrong | split) across draws; the unlabeled items' own Bernoulli outcomes, their mean variance),
    the posterior term again without the random effect and with the flat model alone, and the exact-outcome
    half-width."""
    from betaconform_cli.votes import SplitPrior, estimate_errors
    from betaconform_cli.votes import estimate as ve

    def parts(votes: np.ndarray, gold: np.ndarray, ks: tuple[int, ...], r: int, prior: SplitPrior) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng([seed, run, r, 1])
        items = ve._items(votes, gold, ks, 0.95, 2, None)
        mixture = ve._labels_only_fit(items, ks, 0.95, None, None, rng).fit.mixture
        table = ve._split_table(items, prior.weighted)
        bb = ve._fit_folded(items.k_lab, items.s_lab, table.unl_rows, table.unl_count, items.classes, None,
                            items.weight[items.labeled].astype(float)) if "folded" in prior.models else None
        flat = ve._splits(table.rows, items.classes, None)
        sb = ve._splits(table.rows, items.classes, bb) if bb is not None else flat
        _, d_rows = ve._unlabeled_terms(table, sb, lambda n: ve.cell_errors(n, mixture, ks), len(ks))
        post = ve._SplitPosterior(flat.x, ve._offsets(items, table, sb, prior), table.wrongs, table.trials,
                                  ~flat.always_right, prior)
        _, draw_sum, var_sum = ve._expected(post, table, d_rows, ~flat.always_right, 4000, rng)
        total = items.n_labeled + items.n_unlabeled
        return 1.96 * draw_sum.std(axis=0) / total, 1.96 * np.sqrt(var_sum.mean(axis=0)) / total

    j = d.judgments
    n, big_k = j.shape
    ks = tuple(k for k in KS if k <= big_k)
    side = np.random.default_rng([seed, zlib.crc32(d.name.encode("utf-8")), run, 23]).integers(0, 2, size=n)
    votes = np.where(j == 1, side[:, None], 1 - side[:, None])
    ids = [f"{i:06d}" for i in range(n)]
    gold = np.full(n, -1)
    model, at_k = None, ks[-1]
    out = [f"{d.name} (run {run}): labels | half-width | posterior | outcomes | posterior, tau 0 | posterior, flat, tau 0 | half-width, exact outcomes"]
    while (gold >= 0).sum() < n:
        picks = next_by_split(ids, votes, gold, 2, BATCH, at_k, np.random.default_rng([seed, run, 31]), model)
        gold[picks] = side[picks]
        r = int((gold >= 0).sum())
        est = estimate_errors(votes, gold, ks, 0.95, np.random.default_rng([seed, run, r, 1]), n_classes=2)
        half = np.array([(x.high - x.low) / 2 for x in est.rows])
        i = int(np.argmax(half))
        par, bern = parts(votes, gold, ks, r, SplitPrior())
        par0, _ = parts(votes, gold, ks, r, SplitPrior(tau=0.0))
        par1, _ = parts(votes, gold, ks, r, SplitPrior(tau=0.0, models=("flat",)))
        exact = estimate_errors(votes, gold, ks, 0.95, np.random.default_rng([seed, run, r, 1]), n_classes=2, outcomes="binomial")
        hx = max((x.high - x.low) / 2 for x in exact.rows)
        out.append(f"| {r} | {half[i]:.4f} | {par[i]:.4f} | {bern[i]:.4f} | {par0[i]:.4f} | {par1[i]:.4f} | {hx:.4f} |")
        if half[i] <= TARGET and est.used_unlabeled:
            break
        model, at_k = est.model, ks[i]
    return "\n".join(out) + "\n"


def simulated_pools() -> list[Data]:
    """Pools from benchmarks/simulated.py's two-group model with fixed seeds (collection "simulated"): the rule's
    promise checked where the truth is not the vote-split model."""
    from simulated import two_group_correctness

    return [Data(f"simulated_{n}x{k}", "simulated", two_group_correctness(n, k, seed=i + 1))
            for i, (n, k) in enumerate(SIMULATED)]


def summary(cells: list[Cell], runs: int) -> str:
    collections = sorted({c.collection for c in cells})
    real = tuple(c for c in collections if c != "simulated")
    groups = [("all", real)] + [(c, (c,)) for c in collections] + [("distinct judges (" + " + ".join(DISTINCT) + ")", DISTINCT)]
    names = list(cells[0].labels)
    out = [
        f"({len(cells)} datasets, {runs} runs each; labels at the stop and margin: mean ± standard error over runs of "
        "the per-dataset mean, each dataset weighs the same; within: share of runs whose estimate at the stop was "
        "within the target of the pool's error at every checked k)",
        "",
        "| group | datasets | mean pool size | method | labels at stop | vs ids only | margin | within |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for gname, members in groups:
        sel = [c for c in cells if c.collection in members]
        if not sel:
            continue
        size = float(np.mean([c.size for c in sel]))
        base = float(np.mean([c.labels["ids only"] for c in sel]))
        for m in names:
            lab = np.mean([c.labels[m] for c in sel], axis=0)
            mar = np.mean([c.margin[m] for c in sel], axis=0)
            wit = float(np.mean([c.within[m].mean() for c in sel]))
            rel = "—" if m == "ids only" else f"{100 * (lab.mean() / base - 1):+.0f}%"
            out.append(f"| {gname} | {len(sel)} | {size:.0f} | {m} | {lab.mean():.1f} ± {lab.std(ddof=1) / np.sqrt(len(lab)):.1f} | "
                       f"{rel} | {mar.mean():.2f} ± {mar.std(ddof=1) / np.sqrt(len(mar)):.2f} | {100 * wit:.0f}% |")
    out += ["", "Per dataset (labels at the stop; margin; within; runs where the vote-split guard had fallen back at the stop: random order → next by split):", "",
            "| dataset | pool size | labels: " + " → ".join(names) + " | margin | within | fell back |",
            "|---|---:|---:|---:|---:|---:|"]
    for c in sorted(cells, key=lambda c: (c.collection, c.name)):
        out.append(f"| {c.name} | {c.size} | " + " → ".join(f"{c.labels[m].mean():.1f}" for m in names) + " | "
                   + " → ".join(f"{c.margin[m].mean():.2f}" for m in names) + " | "
                   + " → ".join(f"{100 * c.within[m].mean():.0f}%" for m in names) + f" | {int(c.fallback.sum())}/{len(c.fallback)} → {int(c.fallback_split.sum())}/{len(c.fallback)} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of judgment files (searched recursively)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--match", default="", help="only the datasets whose name contains this (quick checks)")
    ap.add_argument("--update-doc", type=Path, help="write the results section into this Markdown file")
    ap.add_argument("--only", action="append", default=[], help="run only this variant (repeatable; ids only always runs)")
    ap.add_argument("--all", action="store_true", help="run every variant (default: the documented ones)")
    ap.add_argument("--terms", action="store_true", help="where the labels go: the check's terms per batch, run 0 of each dataset")
    ap.add_argument("--no-simulate", dest="simulate", action="store_false",
                    help="leave out the pools simulated from the two-group model (fixed seeds; run by default)")
    args = ap.parse_args(argv)
    global ONLY
    ONLY = () if args.all else tuple(args.only) or DOCUMENTED
    if not args.data.is_dir():
        print(f"sample pool benchmark skipped: no data folder at {args.data}", file=sys.stderr)
        return 0
    files = sorted(p for p in args.data.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
    if not files:
        print(f"sample pool benchmark skipped: no *.jsonl files under {args.data}", file=sys.stderr)
        return 0
    if args.runs < 2:
        raise SystemExit("--runs must be at least 2")
    data = [d for d in (load(p, args.data) for p in files) if args.match in d.name]
    if args.terms:
        for d in data:
            sys.stdout.write(terms(d, args.seed))
        return 0
    if args.simulate:
        data += [d for d in simulated_pools() if args.match in d.name]
    t0 = time.monotonic()
    cells = []
    with one_thread():
        for d in data:
            cells.append(run_cell(d, args.runs, args.seed))
            print(f"  {d.name}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    rel = os.path.relpath(args.data, ROOT)
    text = "\n".join([
        "## The live loop with the pool's verdicts (issue 17)",
        "",
        f"Command: `.venv/bin/python benchmarks/sample_pool.py --data {rel} --runs {args.runs} --seed {args.seed}`  ",
        f"Run time: {time.monotonic() - t0:.0f} s for {len(data)} datasets. Precision rule, target {TARGET}, batches of "
        f"{BATCH}, {LEVEL:g} level.",
        "",
        summary(cells, args.runs),
    ])
    if args.update_doc is not None:
        write_block(args.update_doc, "sample-pool", text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
