"""`plan` benchmark: the forecast of the labels a target needs, against the labels the loop actually needed.

For each dataset (the shared data, or --simulate) and r0 labels already made (0, 10, 30): the gold of all but r0
random items is hidden, and `plan`'s forecast (stopping/forecast.py: the judges' model, --draws draws) is made for
sample's precision rule over every k (what `sample --rule precision --target T` checks by default) and, with
--score, for the score's interval. Then the truth: the same rule replayed on the TRUE gold, the r0 items first and
the others in --orders random orders, stops at some r (the labels the live loop would have needed); for the score,
betaconform_cli.score.score on the first n labels of each order, every 5 labels, until its half-width is at most
the target. Per dataset: ratio = forecast / mean actual; covered = the share of actual stops inside the forecast's
interval. Means per collection (the file's folder: llmbar, snow_rte, judgebench) and the worst collection.

The shared data hold only whether each judge agreed with the gold, so each dataset becomes a binary system as in
benchmarks/score.py (gold passes with probability p ~ U(0.5, 0.9), a judge's verdict is the gold when it was right).
Nothing in `plan` was tuned on these numbers (it has no constant to tune: the rule is sample's, the model
judges.unlabeled.fit_classes).

    .venv/bin/python benchmarks/plan.py                       # ../shared/data, target 0.05
    .venv/bin/python benchmarks/plan.py --simulate --score    # 6 simulated pools of 400 items, the score too
    .venv/bin/python benchmarks/plan.py --rounds              # sample's running "label about N more", round by round

--rounds --score: besides, plan's score forecast at every round of the same loop (its median and its interval's
upper end, 50 draws from a generator of its own, so the error rows are --rounds' own; no label less than the
round's), with the same jumps; "total / stop" is against the ERROR loop's stop (the score has no loop of its own
in sample), so only its jumps are read.

--score (and --rounds --score): besides plan's own score forecast, every rule of benchmarks/plan_score_variants.py
for the residual variance it rests on, from the same drawn pools (issue 26 item 4, round 5; docs/PLAN.md).

--rounds: the live loop with the pool's verdicts (sample --pool, random next items in batches of 10, the vote-split
check) on each dataset, one random order; at each round "label about N more" as sample now says it (plan's forecast,
stopping/live._forecast_more) and as it said it before (r (half-width / target)^2 x 1.1 from the vote-split check's
half-width); the jump of a round is |total_next / total - 1|, total = r + N. Per collection: the median and the
largest jump of each, over the rounds until the check stops.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import plan_score_variants as sv  # noqa: E402  (the score forecast's rules, issue 26 item 4)

from betaconform_cli.inputs.dataset import Votes  # noqa: E402
from betaconform_cli.score import score  # noqa: E402
from betaconform_cli.stopping.forecast import forecast  # noqa: E402
from betaconform_cli.stopping.rules import PrecisionRule, _first_run  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
R0 = (0, 10, 30)
DRAWS: dict[tuple[str, int | None], np.ndarray] = {}  # the last forecast's labels per draw, per (what, k)


def _capture() -> None:
    """Keep each forecast's draws (stopping.forecast._summary sees them) so that every statistic of them can be
    measured from the same draws."""
    import betaconform_cli.stopping.forecast as fc

    summary = fc._summary
    _SUMMARY.append(summary)

    def keep(what: str, k: int | None, needed: np.ndarray, level: float):  # type: ignore[no-untyped-def]
        DRAWS[(what, k)] = np.asarray(needed, dtype=float)
        return summary(what, k, needed, level)

    fc._summary = keep
    sv.install()


def _variant_summary(needed: np.ndarray, level: float):  # type: ignore[no-untyped-def]
    """plan's summary (median, equal-tailed interval, None where most draws never reach) of a variant's draws."""
    return _SUMMARY[0]("score", None, needed, level)


_SUMMARY: list = []  # plan's own _summary, before _capture wraps it


def statistics(needed: np.ndarray, level: float) -> dict[str, float]:
    """The statistics of the draws' labels a forecast could report: the median (plan's forecast), the mean, the
    one-sided upper quantile at the level, and the equal-tailed interval's upper end (plan's `high`)."""
    def q(p: float) -> float:
        return float(np.quantile(needed, p, method="inverted_cdf"))
    return {"median": q(0.5), "mean": float(needed.mean()), "upper (one-sided)": q(level),
            "upper (interval's high)": q((1 + level) / 2)}


def _gold_draws_tau(v, rows, gold, draws, rng):  # type: ignore[no-untyped-def]
    """The alternative 'tau per draw': each draw refits the model on a Bayesian bootstrap (as plan does), then draws
    ONE power tau on the likelihood from its posterior given the labels (judges.unlabeled._tempered's weights) and
    every unlabeled gold from that tau's prediction, where plan draws each gold from the tau-averaged prediction."""
    from betaconform_cli.dawid_skene import log_likelihood, normalise
    from betaconform_cli.judges import unlabeled as u

    unl = np.flatnonzero(gold < 0)
    for _ in range(draws):
        g = gold.copy()
        boot = type(v)(v.patterns, v.gold, rng.gamma(v.counts.astype(float)), v.classes)
        model = u.fit_classes(boot)
        loglik = log_likelihood(u._coded(boot), model.accuracy)
        preds = np.stack([normalise(t * loglik + np.log(model.prior)[None, :]) for t in u.TEMPERS])
        lab = boot.labeled
        w = (u.TEMPERS == 1.0).astype(float)
        if lab.any():
            i, y, n = np.flatnonzero(lab), boot.gold[lab], boot.counts[lab]
            ll = (n[None, :] * np.log(np.maximum(preds[:, i, y], 1e-300))).sum(axis=1)
            w = np.exp(ll - ll.max())
        cum = np.cumsum(preds[rng.choice(len(w), p=w / w.sum())][rows[unl]], axis=1)
        g[unl] = np.minimum((cum < rng.random(len(unl))[:, None]).sum(axis=1), v.classes - 1)
        yield g


def load_correct(path: Path) -> np.ndarray:
    import json

    rows = [json.loads(line)["judgments"] for line in path.read_text().splitlines() if line.strip()]
    width = max(len(r) for r in rows)
    return np.array([[float(x) for x in r] + [np.nan] * (width - len(r)) for r in rows])


def system(correct: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    gold = (rng.random(correct.shape[0]) < rng.uniform(0.5, 0.9)).astype(int)
    verdicts = np.where(correct == 1, gold[:, None], 1 - gold[:, None])
    return gold, np.where(np.isnan(correct), -1, verdicts).astype(int)


def simulated(seed: int) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """6 pools of 400 items x 9 distinct judges (accuracy ~ U(0.6, 0.95)), 15% hard items on which every judge is
    right with probability 0.4; stated before any run, not fitted to anything."""
    rng = np.random.default_rng([seed, 7])
    out = []
    for k in range(6):
        gold = (rng.random(400) < rng.uniform(0.5, 0.9)).astype(int)
        hard = rng.random(400) < 0.15
        right = rng.random((400, 9)) < np.where(hard[:, None], 0.4, rng.uniform(0.6, 0.95, 9)[None, :])
        out.append(("simulated", f"simulated_{k}", gold, np.where(right, gold[:, None], 1 - gold[:, None])))
    return out


def actual_error_stops(gold: np.ndarray, verdicts: np.ndarray, first: np.ndarray, target: float, level: float,
                       orders: int, rng: np.random.Generator) -> np.ndarray:
    """The precision rule (every k the items reach) on the true gold: the r0 items first, the rest at random."""
    said = verdicts >= 0
    judges = said.sum(axis=1)
    correct = ((verdicts == gold[:, None]) & said).sum(axis=1)
    ks = tuple(range(1, min(11, int(judges.min())) + 1))
    rest = np.setdiff1d(np.arange(len(gold)), first)
    out = []
    for _ in range(orders):
        order = np.concatenate([first, rng.permutation(rest)])
        rule = PrecisionRule(target=target, ks=ks, confidence_level=level)
        passed = rule.path(judges[order], correct[order], pool_size=len(gold)).passed.copy()
        passed[: max(len(first) - 1, 0)] = False
        stop = _first_run(passed, rule.patience)
        out.append(np.inf if stop is None else float(stop))
    return np.array(out)


def actual_score_stops(gold: np.ndarray, verdicts: np.ndarray, first: np.ndarray, target: float, level: float,
                       orders: int, rng: np.random.Generator) -> np.ndarray:
    rest = np.setdiff1d(np.arange(len(gold)), first)
    out = []
    for _ in range(orders):
        order = np.concatenate([first, rng.permutation(rest)])
        stop = np.inf
        for n in range(max(5, len(first)), len(gold) + 1, 5):
            observed = np.full(len(gold), -1)
            observed[order[:n]] = gold[order[:n]]
            s = score(verdicts, observed, 1, confidence_level=level).score
            if (s.high - s.low) / 2 <= target:
                stop = float(n)
                break
        out.append(stop)
    return np.array(out)


def one(collection: str, name: str, gold: np.ndarray, verdicts: np.ndarray, r0: int, args: argparse.Namespace,
        rng: np.random.Generator) -> list[tuple[str, str, str, float, float, float]]:
    first = rng.choice(len(gold), r0, replace=False) if r0 else np.zeros(0, dtype=int)
    observed = np.full(len(gold), -1)
    observed[first] = gold[first]
    judges = tuple(f"j{j}" for j in range(verdicts.shape[1]))
    votes = Votes(judges, ("fail", "pass"), verdicts, observed, np.ones(len(gold), dtype=np.int64))
    plan = forecast(votes, args.target, tuple(range(1, 12)), args.level, args.draws, 1 if args.score else None,
                    np.random.default_rng(args.seed))
    rows = []
    for f in plan.forecasts:
        if f.what == "error" and f.k is not None:
            continue
        stops = (actual_error_stops if f.what == "error" else actual_score_stops)(
            gold, verdicts, first, args.target, args.level, args.orders, rng)
        reached = np.isfinite(stops)
        if f.labels is None or not reached.any():
            rows.append((collection, name, f.what, np.nan, np.nan, float(reached.mean())))
            continue
        high = np.inf if f.high is None else f.high
        covered = float(((stops >= f.low) & (stops <= high)).mean())
        rows.append((collection, name, f.what, f.labels / float(stops[reached].mean()), covered, float(reached.mean())))
        if f.what == "score":  # every variant of the score's residual variance, from the same draws
            for variant, needed in sv.score_variants(votes, 1, args.level, args.target,
                                                         DRAWS[("score", None)], args.seed).items():
                v = _variant_summary(needed, args.level)
                if v.labels is None:
                    rows.append((collection, name, f"score: {variant}", np.nan, np.nan, float(reached.mean())))
                    continue
                inside = float(((stops >= v.low) & (stops <= (np.inf if v.high is None else v.high))).mean())
                rows.append((collection, name, f"score: {variant}", v.labels / float(stops[reached].mean()), inside,
                             float(reached.mean())))
        if f.what == "error" and args.statistics:  # each statistic of the same draws; covered: actual <= it
            for stat, value in statistics(DRAWS[("error", None)], args.level).items():
                ratio = value / float(stops[reached].mean()) if np.isfinite(value) else np.nan
                rows.append((collection, name, f"error, {stat}", ratio, float((stops <= value).mean()),
                             float(reached.mean())))
    return rows


def rounds(sets: list[tuple[str, str, np.ndarray, np.ndarray]], args: argparse.Namespace) -> None:
    from betaconform_cli.stopping.live import _forecast_more, vote_check
    from betaconform_cli.stopping.rules import _needed

    rule = PrecisionRule(target=args.target, confidence_level=args.level)
    jumps: dict[str, dict[str, list[float]]] = {}
    ratios: dict[str, dict[str, list[float]]] = {}  # each round's total against the loop's own stop
    for collection, name, gold, verdicts in sets:
        rng = np.random.default_rng([args.seed, zlib.crc32(name.encode())])
        order = rng.permutation(len(gold))
        totals: dict[str, list[float]] = {"forecast (now)": [], "half-width scaling (before)": []}
        stop = len(gold)
        for r in range(10, len(gold), 10):
            observed = np.full(len(gold), -1)
            observed[order[:r]] = gold[order[:r]]
            half = vote_check(rule, verdicts, observed, rng, 2).half_width
            if half <= rule.target:
                stop = r
                break
            totals["forecast (now)"].append(r + _forecast_more(rule, verdicts, observed, 2, rng))
            if args.score:  # plan's score forecast at this round: its median and its interval's upper end
                score_votes = Votes(tuple(f"j{j}" for j in range(verdicts.shape[1])), ("fail", "pass"), verdicts,
                                    observed, np.ones(len(gold), dtype=np.int64))
                score_plan = forecast(score_votes, args.target, (1,), args.level, 50, 1,
                                      np.random.default_rng([args.seed, r]))  # its own: the error rows stay
                (sf,) = [f for f in score_plan.forecasts if f.what == "score"]
                for how, value in (("score: median", sf.labels), ("score: interval's high", sf.high)):
                    totals.setdefault(how, []).append(float(len(gold)) if value is None else max(float(r), value))
                for variant, needed in sv.score_variants(score_votes, 1, args.level, args.target,
                                                         DRAWS[("score", None)], args.seed).items():
                    v = _variant_summary(needed, args.level)
                    for how, value in ((f"score {variant}: median", v.labels), (f"score {variant}: high", v.high)):
                        totals.setdefault(how, []).append(float(len(gold)) if value is None else max(float(r), value))
            totals["half-width scaling (before)"].append(max(r + 1, _needed(r, half / rule.target, 1.1)))
            if args.statistics:  # the same draws _forecast_more just made, each statistic as sample would say it
                for stat, value in statistics(DRAWS[("error", None)], args.level).items():
                    more = len(gold) - r if not np.isfinite(value) else max(1, round(value) - r, rule.min_samples - r)
                    totals.setdefault(f"forecast: {stat}", []).append(r + min(more, len(gold) - r))
        for how, t in totals.items():
            a = np.array(t, dtype=float)
            jumps.setdefault(collection, {}).setdefault(how, []).extend(np.abs(a[1:] / a[:-1] - 1).tolist())
            ratios.setdefault(collection, {}).setdefault(how, []).extend((a / stop).tolist())
        print(f"  {name}: {len(totals['forecast (now)'])} rounds", file=sys.stderr, flush=True)
    print(f"\nrounds of 10 labels, target {args.target}: the jump of 'label about N more' between rounds")
    print("| collection | how | rounds | median jump | largest jump | rounds over 30% | total / the loop's stop: "
          "median (10%-90% of rounds) |\n|---|---|---:|---:|---:|---:|---|")
    for col, by in sorted(jumps.items()):
        for how, j in by.items():
            a, q = np.array(j), np.quantile(ratios[col][how], [0.1, 0.5, 0.9])
            if a.size:
                print(f"| {col} | {how} | {a.size} | {100 * np.median(a):.0f}% | {100 * a.max():.0f}% | "
                      f"{100 * (a > 0.3).mean():.0f}% | {q[1]:.2f} ({q[0]:.2f}-{q[2]:.2f}) |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--simulate", action="store_true")
    parser.add_argument("--score", action="store_true", help="forecast the score's labels too (slower)")
    parser.add_argument("--target", type=float, default=0.05)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--orders", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rounds", action="store_true", help="the running forecast's jumps between rounds")
    parser.add_argument("--statistics", action="store_true",
                        help="measure every statistic of the draws (median, mean, upper quantiles), error only")
    parser.add_argument("--variant", choices=("plan", "tau-per-draw"), default="plan",
                        help="how the draws' golds are made: plan's (the tau-averaged prediction) or one tau per draw")
    args = parser.parse_args()
    if args.variant == "tau-per-draw":  # before _capture, which records whatever draws the forecast makes
        import betaconform_cli.stopping.forecast as fc

        fc._gold_draws = _gold_draws_tau
    _capture()
    if args.simulate:
        sets = simulated(args.seed)
    elif not args.data.is_dir():
        print(f"no data folder at {args.data}: nothing to benchmark (pass --data DIR, or --simulate)")
        return 0
    else:
        sets = []
        for p in sorted(args.data.rglob("*.jsonl")):
            rng = np.random.default_rng([args.seed, zlib.crc32(p.stem.encode())])
            gold, verdicts = system(load_correct(p), rng)
            sets.append((p.parent.name, p.stem, gold, verdicts))
    start = time.perf_counter()
    if args.rounds:
        rounds(sets, args)
        print(f"\n({time.perf_counter() - start:.0f} s)")
        return 0
    for r0 in R0:
        rows = []
        for collection, name, gold, verdicts in sets:
            if len(gold) < 2 * max(r0, 10):
                continue
            rng = np.random.default_rng([args.seed, r0, zlib.crc32(name.encode())])
            rows += one(collection, name, gold, verdicts, r0, args, rng)
            print(f"  r0={r0} {name} done ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
        print(f"\nr0 = {r0} labels already made, target {args.target}, level {args.level}, {args.draws} draws, "
              f"{args.orders} orders")
        print("| collection | forecast of | datasets | ratio forecast / actual (mean; range) | actual inside the interval "
              "(statistic rows: at most it) | pool enough (actual) |\n|---|---|---:|---|---:|---:|")
        worst: dict[str, tuple[float, str]] = {}
        for what in dict.fromkeys(r[2] for r in rows):
            for col in sorted({r[0] for r in rows}):
                sel = [r for r in rows if r[0] == col and r[2] == what]
                ratios = np.array([r[3] for r in sel if np.isfinite(r[3])])
                if not sel:
                    continue
                cover = np.nanmean([r[4] for r in sel]) if ratios.size else np.nan
                span = f"{ratios.min():.2f}-{ratios.max():.2f}" if ratios.size else "n/a"
                mean = f"{ratios.mean():.2f}" if ratios.size else "n/a"
                print(f"| {col} | {what} | {len(sel)} | {mean} ({span}) | {100 * cover:.0f}% | "
                      f"{100 * np.mean([r[5] for r in sel]):.0f}% |")
                if ratios.size and (what not in worst or abs(np.log(ratios.mean())) > abs(np.log(worst[what][0]))):
                    worst[what] = (float(ratios.mean()), col)
        for what, (ratio, col) in worst.items():
            print(f"worst collection ({what}): {col}, ratio {ratio:.2f}")
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
