"""Issue 26 item 2: `judges` with unlabeled items, leave-one-collection-out (LOCO).

The protocol of benchmarks/judges_unlabeled.py (benchmarks/unlabeled.py's draws: r labeled items, every other item
as binary verdicts without gold), at r = 30 (--rs), k = 3 and 5, on every dataset under ../shared/data. For each
pick rule and report rule: regret (the pick's error on all items minus the best k-subset's), |reported - true|
and the 90% interval's coverage of the pick's error on all items. Ratios are against the naive pick (lowest error
on the labels, ties averaged) reporting its own labeled error. Means over draws, then over the collection's
datasets; per collection and the WORST collection (not the mean).

Picks: naive (ties averaged: the baseline); naive with ties broken by the all-items estimate; what `judges` ships
(the Dawid-Skene all-items estimate where the labels' tau >= 0.5 and the guard passes, else the labels-only rule told
the set's size); the labels-only rule always; the Dawid-Skene estimate always.
Reports (at the shipped pick and at the naive pick with ties broken): what `judges` ships (the mean of the
Dawid-Skene and the vote-split all-items estimates, guard or not); issue 17's (the same, but the labels-only
latent-class estimate where the guard fell back); Dawid-Skene alone; the vote split alone; 0.25 / 0.75 mixes of the
two; the vote split's pseudo-items a = 80 and infinite (the pool alone) instead of 20; the prediction-powered
estimate rectified by the pick's own labels, pooled over the candidates, bootstrapped over the whole pick or
cross-fitted (benchmarks/judges_rectified.py); the labels alone corrected by the bootstrap of the pick; round 3
(benchmarks/judges_bayes.py): the empirical-Bayes rectifier, the Beta prior centred on the all-items estimate, the
vote split's pseudo-items by empirical Bayes (alone, with Dawid-Skene, and averaged with the rectifier), and the
shipped estimate with its interval at least the pooled rectifier's. Diagnostics: the empirical-Bayes weights and
the shipped report's miss split into the part every candidate shares and the pick's own.

--simulated N adds N datasets of each of two stated-model simulations (distinct judges: benchmarks/unlabeled.py's
`simulate`; near-copies: `simulate_copies`), reported apart ("unseen-like") and never in a LOCO fold.

LOCO: for each collection left out, the rule is chosen on the other two, the pick first (the lowest worst regret
ratio against naive there; naive itself if none is below 1), then the report at that pick (coverage >= 0.88 in
every cell there, then the lowest worst |error| ratio); its numbers on the one left out are printed, and the worst
over the left-out collections. Nothing is tuned on the collection left out.

    nice -n 10 .venv/bin/python benchmarks/judges_loco.py --draws 30 --procs 2 > /tmp/loco.log
    nice -n 10 .venv/bin/python benchmarks/judges_loco.py --draws 20 --procs 2 --only NONE --simulated 6

Exits 0 with a message when the data folder is absent.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from judges_bayes import eb_beta, eb_pseudo_items, eb_rectified  # noqa: E402
from judges_rectified import (  # noqa: E402
    LabeledErrors,
    cross_fit,
    labeled_errors,
    optimism,
    outside_split,
    pick_order,
    pooled,
    rectified,
)  # noqa: E402
from unlabeled import Data, draw, load, simulate  # noqa: E402

from betaconform_cli.judges import JudgesSettings, rescore, sample_posterior  # noqa: E402
from betaconform_cli.judges.analysis import pick_lowest  # noqa: E402
from betaconform_cli.judges.every import Every  # noqa: E402
from betaconform_cli.judges.maxent import fit_maxent  # noqa: E402
from betaconform_cli.judges.splits import combined_estimates, split_estimates  # noqa: E402
from betaconform_cli.judges.subsets import empirical_subset_errors, exact_tables  # noqa: E402
from betaconform_cli.judges.unlabeled import Verdicts, fit_classes, guard, subset_estimates  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
KS = (3, 5)
DEFAULT = JudgesSettings()
COVERAGE_BAR = 0.88
Record = tuple[float, float, float, float, float]  # regret, |reported - true|, reported - true, covered, width


def _rec(t_all: np.ndarray, i: int, est: float, lo: float, hi: float) -> Record:
    t = float(t_all[i])
    cover = np.nan if np.isnan(lo) else float(lo - 1e-12 <= t <= hi + 1e-12)
    return (t - float(np.nanmin(t_all)), abs(est - t), est - t, cover, hi - lo)


def _naive(emp: np.ndarray, truth: np.ndarray) -> Record:
    score = np.where(np.isnan(emp), np.inf, emp)
    tied = np.flatnonzero(score <= np.nanmin(score) + 1e-12)
    return (float(truth[tied].mean() - np.nanmin(truth)), float(np.abs(emp[tied] - truth[tied]).mean()),
            float((emp[tied] - truth[tied]).mean()), np.nan, np.nan)


def _no_model(le: LabeledErrors) -> LabeledErrors:
    """p = 0 everywhere: the rectified estimate becomes the labels' own error (corrected for the pick)."""
    zero = np.where(np.isnan(le.exact), np.nan, 0.0)
    return LabeledErrors(le.exact, zero, np.zeros_like(le.unlabeled_sum), le.unlabeled_items)


SHIPPED = "all-items estimate (shipped)"
PICK = "judges (shipped pick)"
TIES = "naive, ties by the all-items estimate"


def evaluate(d: Data, size: int, run: int, seed: int) -> dict[tuple[str, int], Record]:
    """Every (pick, report) rule's record at each k for one draw."""
    _, idx, votes, gold = draw(d, size, run, seed)
    y = d.judgments.astype(float)
    n_pop = len(y)
    gen = np.random.default_rng([seed, size, run, 7])
    labeled = y[idx]
    tables = exact_tables(labeled, sample_posterior(labeled, gen, DEFAULT.model), max(KS),
                          fit_maxent(labeled, *DEFAULT.maxent_penalty))
    search = rescore(tables, size, n_pop, DEFAULT.pseudo_items, 0.9, gen)
    v = Verdicts(votes.astype(np.int64), gold.astype(np.int64), np.ones(n_pop, dtype=np.int64), 2)
    model = fit_classes(v)
    use, reason = guard(model, v)
    product = Every(size, n_pop - size, use, reason, n_pop, v, model).search(search, 0.9)  # what `judges` does
    before = product if use else search  # issue 17: the labels-only estimate where the guard fell back
    out: dict[tuple[str, int], Record] = {}
    boot = np.random.default_rng([seed, size, run, 29])
    for k in KS:
        t = tables[k]
        truth = empirical_subset_errors(y, t.members)[0]
        out[("naive / labels' own error", k)] = _naive(t.empirical, truth)
        # reference, not a method: a k-subset drawn at random (no selection) reporting its own labeled error
        out[("reference: no pick / labels' own error of a random subset", k)] = (
            float(np.nanmean(truth) - np.nanmin(truth)), float(np.nanmean(np.abs(t.empirical - truth))),
            float(np.nanmean(t.empirical - truth)), np.nan, np.nan)
        tg = product.targets[k]
        ds = subset_estimates(v, model, t.members, 0.9)
        picks = {TIES: pick_order(t.empirical, tg.estimate), PICK: product.pick(k),
                 "labels-only rule (told the set's size)": search.pick(k), "Dawid-Skene estimate, always": pick_lowest(ds.estimate)}
        for pname, i in picks.items():
            out[(f"{pname} / {SHIPPED}", k)] = _rec(truth, i, tg.estimate[i], tg.low[i], tg.high[i])
        est = _estimates(v, model, t.members, ds, before.targets[k], use, search.targets[k])
        le = labeled_errors(v, model, t.members)
        for pname in (TIES, PICK):
            i = picks[pname]
            for name, (e, lo, hi) in est.items():
                out[(f"{pname} / {name}", k)] = _rec(truth, i, e[i], lo[i], hi[i])
            a = rectified(le, i, 0.9)
            out[(f"{pname} / rectified by the pick's own labels", k)] = _rec(truth, i, a.estimate, a.low, a.high)
            p = rectified(le, i, 0.9, pooled(le, i))
            out[(f"{pname} / rectified, pooled over the candidates", k)] = _rec(truth, i, p.estimate, p.low, p.high)
            half = max(p.high - p.estimate, p.estimate - p.low)  # what the labels can check of the model's level
            lo = max(min(tg.low[i], tg.estimate[i] - half), tg.floor[i])
            hi = min(max(tg.high[i], tg.estimate[i] + half), tg.ceiling[i])
            out[(f"{pname} / {SHIPPED[:-10]}, its interval at least the pooled rectifier's half-width", k)] = _rec(
                truth, i, tg.estimate[i], lo, hi)
            out[(f"{pname} / labels' own error", k)] = _rec(truth, i, float(t.empirical[i]), np.nan, np.nan)
        _naive_corrections(out, k, le, picks[TIES], tg.estimate, truth, boot)
        _bayes(out, k, (v, model, t.members, ds, le), {p: picks[p] for p in (TIES, PICK)}, tg.estimate, truth, gen)
        out[("guard falls back", k)] = (0.0, 0.0, 0.0, float(not use), model.temper)
        # where the shipped report's miss lies: shared by every candidate (the model's level on this draw) or the pick's
        i = product.pick(k)
        common = float(np.nanmean(tg.estimate - truth))
        out[("miss decomposed", k)] = (abs(tg.estimate[i] - truth[i]), abs(common), abs(tg.estimate[i] - truth[i] - common),
                                       float(np.nanmean(np.abs(tg.estimate - truth))), 0.0)
    return out


Triple = tuple[np.ndarray, np.ndarray, np.ndarray]


def _estimates(v: Verdicts, model: Any, members: np.ndarray, ds: Any, before: Any, use: bool,
               search: Any) -> dict[str, Triple]:
    """The model-based alternatives for every candidate: (estimate, low, high)."""
    def tri(x: Any) -> Triple:
        return (x.estimate, x.low, x.high)

    sp = split_estimates(v, model, members, 0.9)
    out = {"issue 17: labels only where the guard falls back": tri(before),
           "Dawid-Skene alone (labels only where the guard falls back)": tri(ds) if use else tri(before),
           "vote split alone": tri(sp)}
    for wt in (0.25, 0.75):
        out[f"{wt:g} Dawid-Skene + {1 - wt:g} vote split"] = tuple(  # type: ignore[assignment]
            wt * a + (1 - wt) * b for a, b in zip(tri(ds), tri(sp), strict=True))
    latent = tri(search)
    out["mean of the all-items and the labels-only latent-class estimates"] = tuple(  # type: ignore[assignment]
        0.5 * (a + b) for a, b in zip(tri(combined_estimates(ds, sp)), latent, strict=True))
    osp = outside_split(v, model, members, 0.9)
    out["vote split by the outside judges too, alone"] = osp
    ds_t = tri(ds)
    out["Dawid-Skene + vote split by the outside judges too"] = tuple(  # type: ignore[assignment]
        np.clip(0.5 * (x + y), ds.floor, ds.ceiling) for x, y in zip(ds_t, osp, strict=True))
    for a_name, a in (("80", 80.0), ("infinite (the pool alone)", 1e12)):
        out[f"Dawid-Skene + vote split with a = {a_name}"] = tri(combined_estimates(ds, split_estimates(v, model, members, 0.9, a)))
    return out


def _naive_corrections(out: dict[tuple[str, int], Record], k: int, le: LabeledErrors, i: int, tiebreak: np.ndarray,
                       truth: np.ndarray, boot: np.random.Generator) -> None:
    """The naive pick's rectified estimate corrected for the pick: bootstrap of the pick, cross-fitting; and the
    labels alone (no model) corrected by the bootstrap."""
    pname = TIES
    b = rectified(le, i, 0.9, optimism(le, tiebreak, boot))
    out[(f"{pname} / rectified, pick bootstrapped", k)] = _rec(truth, i, b.estimate, b.low, b.high)
    x = rectified(le, i, 0.9, cross_fit(le, i, tiebreak, boot))
    out[(f"{pname} / rectified, cross-fitted", k)] = _rec(truth, i, x.estimate, x.low, x.high)
    free = _no_model(le)
    c = rectified(free, i, 0.9, optimism(free, tiebreak, boot))
    out[(f"{pname} / labels only, pick bootstrapped", k)] = _rec(truth, i, c.estimate, c.low, c.high)


EB = "empirical Bayes: "


def _bayes(out: dict[tuple[str, int], Record], k: int, fitted: tuple[Any, ...], picks: dict[str, int],
           estimate: np.ndarray, truth: np.ndarray, gen: np.random.Generator) -> None:
    """The third round's empirical-Bayes reports (benchmarks/judges_bayes.py) at each pick."""
    v, model, members, ds, le = fitted
    a = eb_pseudo_items(v, model, members, gen)
    sp = split_estimates(v, model, members, 0.9, a)
    both = combined_estimates(ds, sp)
    shrink = []
    for pname, i in picks.items():
        rect = eb_rectified(le, i, 0.9)
        beta = eb_beta(le, i, estimate, 0.9, gen)
        out[(f"{pname} / {EB}rectifier shrunk toward every candidate's", k)] = _rec(truth, i, rect.estimate, rect.low, rect.high)
        out[(f"{pname} / {EB}Beta prior centred on the all-items estimate", k)] = _rec(truth, i, beta.estimate, beta.low, beta.high)
        out[(f"{pname} / {EB}vote split's pseudo-items, alone", k)] = _rec(truth, i, sp.estimate[i], sp.low[i], sp.high[i])
        out[(f"{pname} / {EB}Dawid-Skene + vote split, its pseudo-items", k)] = _rec(
            truth, i, both.estimate[i], both.low[i], both.high[i])
        mix = (0.5 * (both.estimate[i] + rect.estimate), 0.5 * (both.low[i] + rect.low), 0.5 * (both.high[i] + rect.high))
        out[(f"{pname} / {EB}mean of the rectifier and that", k)] = _rec(truth, i, *mix)
        shrink.append((rect.shrink, beta.shrink))
    fin = a[a < 1e11]
    out[("eb weights", k)] = (shrink[-1][0], shrink[-1][1], float(np.median(fin)) if len(fin) else np.nan,
                             float(len(fin) / len(a)), 0.0)


Evaluate = Callable[[Data, int, int, int], dict[tuple[str, int], Record]]  # (data, r, draw, seed) -> rows


def _job(args: tuple[Evaluate, Data, int, int, int]) -> tuple[tuple[str, int], list[dict[tuple[str, int], Record]]]:
    evaluate_draw, d, size, draws, seed = args
    t0 = time.time()
    out = [evaluate_draw(d, size, run, seed) for run in range(draws)]
    print(f"# {d.name} r={size}: {draws} draws in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return (d.name, size), out


def run(data: list[Data], rs: tuple[int, ...], draws: int, seed: int, procs: int,
        evaluate_draw: Evaluate = evaluate) -> dict[tuple[str, int], list[Any]]:
    """Every (dataset, r) job's draws, by `evaluate_draw` (this protocol's, or another round's on the same draws)."""
    jobs = [(evaluate_draw, d, r, draws, seed) for d in data for r in rs if len(d.judgments) >= r + 1]
    if procs <= 1:
        return dict(_job(j) for j in jobs)
    with mp.get_context("fork").Pool(procs) as pool:
        return dict(pool.imap_unordered(_job, jobs))


Summary = dict[tuple[str, str, int, int], np.ndarray]  # (method, collection, r, k) -> mean record


def summarise(res: dict[tuple[str, int], list[Any]], data: list[Data], rs: tuple[int, ...]) -> Summary:
    """Means over draws, then over each collection's datasets (and over all datasets: collection "all")."""
    methods = sorted({m for recs in res.values() for rec in recs for (m, _) in rec})
    groups = {c: [d.name for d in data if d.collection == c] for c in sorted({d.collection for d in data})}
    groups["all"] = [d.name for d in data if d.collection not in SIMULATED]
    out: Summary = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for m in methods:
            for c, names in groups.items():
                for r in rs:
                    for k in KS:
                        per = [np.nanmean([rec[(m, k)] for rec in res[(n, r)]], axis=0) for n in names if (n, r) in res]
                        if per:
                            out[(m, c, r, k)] = np.nanmean(per, axis=0)
    return out


def cells(s: Summary, m: str, colls: list[str], rs: tuple[int, ...]) -> list[tuple[float, float, float]]:
    """(regret ratio, |error| ratio, coverage) of method m against naive in every (collection, r, k) cell."""
    base = "naive / labels' own error"
    out = []
    for c in colls:
        for r in rs:
            for k in KS:
                if (m, c, r, k) in s:
                    v, b = s[(m, c, r, k)], s[(base, c, r, k)]
                    out.append((v[0] / b[0] if b[0] > 0 else 1.0, v[1] / b[1], 1.0 if np.isnan(v[3]) else v[3]))
    return out


def choose(s: Summary, methods: list[str], train: list[str], rs: tuple[int, ...]) -> str:
    """The rule chosen on the training collections, the pick first and then the report: the pick rule with the lowest
    worst regret ratio against naive (naive itself when none is below 1); at that pick, the report with coverage
    >= the bar in every cell, then the lowest worst |error| ratio."""
    picks = sorted({m.split(" / ")[0] for m in methods})
    regret = []
    for p in picks:
        cs = cells(s, f"{p} / {SHIPPED}", train, rs)
        if cs:
            regret.append((max(c[0] for c in cs), p))
    best, pick = min(regret) if regret else (2.0, "naive")
    if best > 1.0:
        return "naive / labels' own error"
    scored = []
    for m in (m for m in methods if m.split(" / ")[0] == pick):
        cs = cells(s, m, train, rs)
        if cs and not m.endswith("labels' own error"):
            scored.append((not all(c[2] >= COVERAGE_BAR for c in cs), max(c[1] for c in cs), m))
    return min(scored)[2]


def table(s: Summary, methods: list[str], colls: list[str], rs: tuple[int, ...]) -> str:
    lines = ["| rule (pick / report) | collection | r | k | regret | vs naive | abs(reported - true) | vs naive | bias | "
             "coverage (90%) | width |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    base = "naive / labels' own error"
    for m in methods:
        for c in colls:
            for r in rs:
                for k in KS:
                    if (m, c, r, k) not in s:
                        continue
                    v, b = s[(m, c, r, k)], s[(base, c, r, k)]
                    cov = "—" if np.isnan(v[3]) else f"{v[3]:.2f}"
                    wid = "—" if np.isnan(v[4]) else f"{100 * v[4]:.1f}"
                    lines.append(f"| {m} | {c} | {r} | {k} | {100 * v[0]:.2f} | {v[0] / b[0]:.2f}x | {100 * v[1]:.2f} | "
                                 f"{v[1] / b[1]:.2f}x | {100 * v[2]:+.2f} | {cov} | {wid} |")
    return "\n".join(lines)


def worst(s: Summary, methods: list[str], colls: list[str], rs: tuple[int, ...]) -> str:
    lines = ["| rule (pick / report) | worst regret vs naive | worst abs vs naive | lowest coverage | meets the bar |",
             "|---|---:|---:|---:|---|"]
    for m in methods:
        cs = cells(s, m, colls, rs)
        if not cs:
            continue
        reg, ab, cov = max(c[0] for c in cs), max(c[1] for c in cs), min(c[2] for c in cs)
        ok = reg <= 1.0 + 1e-9 and ab < 0.6 and cov >= COVERAGE_BAR
        lines.append(f"| {m} | {reg:.2f}x | {ab:.2f}x | {cov:.2f} | {'yes' if ok else 'no'} |")
    return "\n".join(lines)


def report(data: list[Data], rs: tuple[int, ...], draws: int, seed: int, procs: int) -> str:
    res = run(data, rs, draws, seed, procs)
    s = summarise(res, data, rs)
    every = sorted({d.collection for d in data})
    colls = [c for c in every if c not in SIMULATED]
    sims = [c for c in every if c in SIMULATED]
    methods = sorted({m for (m, _, _, _) in s if m not in ("guard falls back", "eb weights", "miss decomposed")})
    rules = [m for m in methods if not m.endswith(("labels' own error", "of a random subset"))]
    loco = ["| left out | chosen on the other collections | regret vs naive (k = 3 / 5) | abs vs naive | coverage |",
            "|---|---|---|---|---|"]
    held = []
    for c in colls:
        m = choose(s, rules, [x for x in colls if x != c], rs)
        cs = cells(s, m, [c], rs)
        held.extend(cs)
        loco.append(f"| {c} | {m} | {' / '.join(f'{x[0]:.2f}x' for x in cs)} | {' / '.join(f'{x[1]:.2f}x' for x in cs)} | "
                    f"{' / '.join(f'{x[2]:.2f}' for x in cs)} |")
    if held:
        loco.append(f"| **worst held out** | | {max(x[0] for x in held):.2f}x | {max(x[1] for x in held):.2f}x | "
                    f"{min(x[2] for x in held):.2f} |")
    fb = [f"{c}: guard fell back in {100 * s[('guard falls back', c, r, 3)][3]:.0f}% of draws at r = {r} "
          f"(tau {s[('guard falls back', c, r, 3)][4]:.2f})" for c in every for r in rs]
    fb += [f"{c}: at the shipped pick, rectifier's own weight B {s[('eb weights', c, r, k)][0]:.2f}, Beta prior's own "
           f"weight n / (n + c) {s[('eb weights', c, r, k)][1]:.2f}, vote split's pseudo-items (median finite) "
           f"{s[('eb weights', c, r, k)][2]:.0f}, finite in {100 * s[('eb weights', c, r, k)][3]:.0f}% of strata (r = {r}, k = {k})"
           for c in every for r in rs for k in KS]
    fb += [f"{c}: the shipped report's |miss| at the pick {100 * s[('miss decomposed', c, r, k)][0]:.2f} points; the part "
           f"every candidate shares (mean over candidates of estimate - truth) {100 * s[('miss decomposed', c, r, k)][1]:.2f}, "
           f"the pick's own {100 * s[('miss decomposed', c, r, k)][2]:.2f}; a candidate's on average "
           f"{100 * s[('miss decomposed', c, r, k)][3]:.2f} (r = {r}, k = {k})" for c in every for r in rs for k in KS]
    sim = []
    if sims:
        m = choose(s, rules, colls, rs) if colls else f"{PICK} / {SHIPPED}"
        sim = [f"**Unseen-like: the stated-model simulations** (not in any fold; the rule chosen on every real "
               f"collection: {m})", worst(s, [m], sims, rs), "**Every rule on the simulations, worst of the two**",
               worst(s, rules, sims, rs)]
    return "\n\n".join([f"**LOCO ({draws} draws per dataset, r = {', '.join(map(str, rs))})**", "\n".join(loco),
                        "**Every rule, worst collection**", worst(s, rules, colls, rs),
                        *sim, "**Every rule, per collection**", table(s, methods, [*every, "all"], rs), "\n".join(fb)])


SIMULATED = ("sim-distinct", "sim-copies")  # the stated-model collections: reported apart, never in a LOCO fold


def simulate_copies(index: int, seed: int) -> Data:
    """One simulated dataset of near-copies (one model under several prompts), from a stated generative model whose
    parameters are drawn from stated priors, none read off a target's numbers: a share h ~ U(0.05, 0.4) of hard
    items; a base verdict per item, correct with probability p_easy ~ U(0.8, 0.97) or p_hard ~ U(0.1, 0.5); each
    judge copies the base verdict with probability c_j ~ U(0.4, 0.95), else is correct on its own with
    probability its accuracy on the item's class (p + N(0, 0.1), clipped to [0.02, 0.98]). K ~ {5, 7, 9, 11}
    judges, N ~ {100, 200, 400} items."""
    rng = np.random.default_rng([seed, 2627, index])
    k, n = int(rng.choice([5, 7, 9, 11])), int(rng.choice([100, 200, 400]))
    hard = rng.random(n) < rng.uniform(0.05, 0.4)
    p = np.where(hard, rng.uniform(0.1, 0.5), rng.uniform(0.8, 0.97))
    base = rng.random(n) < p
    copy = rng.random((n, k)) < rng.uniform(0.4, 0.95, size=k)[None, :]
    own_p = np.clip(p[:, None] + rng.normal(0.0, 0.1, size=k)[None, :], 0.02, 0.98)
    own = rng.random((n, k)) < own_p
    j = np.where(copy, base[:, None], own).astype(np.int64)
    j = j[np.argsort(j.sum(axis=1), kind="stable")]
    return Data(f"copies{index:02d}_k{k}_n{n}", "sim-copies", j)


def simulated(count: int, seed: int) -> list[Data]:
    """`count` datasets of each stated model: distinct judges (benchmarks/unlabeled.py's Rasch-type `simulate`)
    and near-copies (`simulate_copies`)."""
    out = []
    for i in range(count):
        d = simulate(i, seed)
        out += [Data(d.name, "sim-distinct", d.judgments), simulate_copies(i, seed)]
    return out


Report = Callable[[list[Data], tuple[int, ...], int, int, int], str]  # (data, rs, draws, seed, procs) -> text


def main(report_fn: Report = report, doc: str | None = __doc__, protocol: str = "the LOCO protocol") -> int:
    """The command line of this protocol, and of another round's on the same data and draws (its report, docstring
    and name)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--draws", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--rs", default="30", help="labeled items per draw, comma-separated")
    ap.add_argument("--only", default="", help="dataset names containing this (a quick look)")
    ap.add_argument("--simulated", type=int, default=0,
                    help="also this many datasets of each stated-model simulation, reported apart (unseen-like)")
    a = ap.parse_args()
    if not a.data.is_dir() and not a.simulated:
        print(f"no data folder at {a.data}: skipping {protocol}")
        return 0
    files = sorted(p for p in a.data.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz"))) \
        if a.data.is_dir() else []
    data = [d for d in (load(p, a.data) for p in files) if a.only in d.name] + simulated(a.simulated, a.seed)
    t0 = time.time()
    print(report_fn(data, tuple(int(x) for x in a.rs.split(",")), a.draws, a.seed, a.procs))
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
