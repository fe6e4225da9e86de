"""`judges` with unlabeled items (issue 17): the protocol behind `benchmarks/judges.py --unlabeled`.

Every dataset under ../shared/data (benchmarks/unlabeled.py's loader and draws, imported): r = 10, 30, 56
labeled items drawn as benchmarks/accuracy.py draws them; every other item given as binary verdicts without gold
(verdict = the gold side if the judge was correct, the other side if not, the gold side drawn at random per item).
At k = 3 and 5, for each rule's chosen ensemble: regret (its error on all the dataset's items minus the best
k-subset's), |reported error - its error on all items|, and whether the 90% interval covers it.

- naive: the subset with the lowest error on the labels, reporting that error (ties: the mean over tied subsets);
- labels only: `judges` without the unlabeled items (the latent-class / max-ent default, told the set's size);
- every item: `judges` with them (judges/every.py; the pick by the Dawid-Skene all-items estimate of
  judges/unlabeled.py where tau >= PICK_TEMPER, else the labels-only rule; the reported error the mean of that
  estimate and the vote-split estimate of judges/splits.py; the guard: the labels-only pick where it falls back, the
  all-items estimate reported either way since issue 26, benchmarks/judges_loco.py);
- with --alternatives, at the same pick: the Dawid-Skene estimate alone (the product before judges/splits.py), the
  vote split alone, their precision-weighted mean (weights 1 / the squared half-widths), fit's vote-split estimator
  (votes.estimate_errors) on the pick's verdicts; and other picks with the product's estimate: the labels-only
  rule's always, the combined estimate's where tau >= PICK_TEMPER, the Dawid-Skene estimate's always without the
  guard.

A dataset with fewer than r + 1 items is skipped at that r. Means over draws, then over datasets.
"""

from __future__ import annotations

import multiprocessing as mp
import warnings
from typing import Any

import numpy as np
from unlabeled import Data, draw  # benchmarks/unlabeled.py: the loader and the protocol's draws

from betaconform_cli.judges import JudgesSettings, rescore, sample_posterior
from betaconform_cli.judges.analysis import pick_lowest
from betaconform_cli.judges.every import PICK_TEMPER, Every
from betaconform_cli.judges.maxent import fit_maxent
from betaconform_cli.judges.splits import combined_estimates, split_estimates
from betaconform_cli.judges.subsets import empirical_subset_errors, exact_tables
from betaconform_cli.judges.unlabeled import Verdicts, fit_classes, guard, subset_estimates
from betaconform_cli.votes import estimate_errors

KS = (3, 5)
RS = (10, 30, 56)
DEFAULT = JudgesSettings()
METHODS = ("naive", "labels only", "every item")  # the rules; --alternatives adds two variants of the last
Record = tuple[float, float, float, float, float]  # regret, |reported - true|, reported - true, covered, width


def _record(i: int, est: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, truth: np.ndarray) -> Record:
    t = float(truth[i])
    cover = np.nan if lo is None or hi is None else float(lo[i] - 1e-12 <= t <= hi[i] + 1e-12)
    width = np.nan if lo is None or hi is None else float(hi[i] - lo[i])
    return (t - float(np.nanmin(truth)), abs(float(est[i]) - t), float(est[i]) - t, cover, width)


def _naive(emp: np.ndarray, truth: np.ndarray) -> Record:
    score = np.where(np.isnan(emp), np.inf, emp)
    tied = np.flatnonzero(score <= np.nanmin(score) + 1e-12)
    return (float(truth[tied].mean() - np.nanmin(truth)), float(np.abs(emp[tied] - truth[tied]).mean()),
            float((emp[tied] - truth[tied]).mean()), np.nan, np.nan)


def evaluate(d: Data, size: int, run: int, seed: int, alternatives: bool = False) -> dict[tuple[str, int], Record]:
    """Every rule's record at each k for one draw."""
    _, idx, votes, gold = draw(d, size, run, seed)
    y = d.judgments.astype(float)
    labeled = y[idx]
    n_pop = len(y)
    gen = np.random.default_rng([seed, size, run, 7])
    posterior = sample_posterior(labeled, gen, DEFAULT.model)
    tables = exact_tables(labeled, posterior, max(KS), fit_maxent(labeled, *DEFAULT.maxent_penalty))
    search = rescore(tables, size, n_pop, DEFAULT.pseudo_items, 0.9, gen)
    v = Verdicts(votes.astype(np.int64), gold.astype(np.int64), np.ones(n_pop, dtype=np.int64), 2)
    model = fit_classes(v)
    use, reason = guard(model, v)
    product = Every(size, n_pop - size, use, reason, n_pop, v, model).search(search, 0.9)  # what `judges` reports
    out: dict[tuple[str, int], Record] = {}
    for k in KS:
        t = tables[k]
        truth = empirical_subset_errors(y, t.members)[0]
        out[("naive", k)] = _naive(t.empirical, truth)
        tg, i = search.targets[k], search.pick(k)
        labels = _record(i, tg.estimate, tg.low, tg.high, truth)
        out[("labels only", k)] = labels
        ours = product.targets[k]
        # what `judges` reports: since issue 26 the all-items estimate at the labels-only pick where the guard falls back
        out[("every item", k)] = _record(product.pick(k), ours.estimate, ours.low, ours.high, truth)
        if alternatives:
            out.update(_alternatives(k, t.members, votes, gold, v, model, search, product, truth, use,
                                     np.random.default_rng([seed, size, run, k, 11])))
        out[("guard falls back", k)] = (0.0, 0.0, 0.0, float(not use), model.temper)
    return out


def _alternatives(k: int, members: np.ndarray, votes: np.ndarray, gold: np.ndarray, v: Verdicts, model: Any,
                  search: Any, product: Any, truth: np.ndarray, use: bool,
                  rng: np.random.Generator) -> dict[tuple[str, int], Record]:
    """Other estimates at the product's pick (the labels-only answer where the guard falls back), and other picks."""
    i = search.pick(k)
    labels = _record(i, search.targets[k].estimate, search.targets[k].low, search.targets[k].high, truth)
    ds = subset_estimates(v, model, members, 0.9)
    sp = split_estimates(v, model, members, 0.9)
    both = combined_estimates(ds, sp)
    j = product.pick(k)
    vs = estimate_errors(votes[:, members[j]], gold, (k,), 0.9, rng)  # fit's estimator on the pick's verdicts
    row = vs.row(k)
    var_ds, var_sp = ((ds.high - ds.low) / 2) ** 2 + 1e-12, ((sp.high - sp.low) / 2) ** 2 + 1e-12
    wt = var_sp / (var_ds + var_sp)
    prec = [wt * a + (1 - wt) * b for a, b in ((ds.estimate, sp.estimate), (ds.low, sp.low), (ds.high, sp.high))]
    both_pick = pick_lowest(both.estimate) if model.temper >= PICK_TEMPER else i
    rows = {
        "Dawid-Skene estimate alone (the product before)": _record(j, ds.estimate, ds.low, ds.high, truth),
        "vote split shrunk across candidates alone": _record(j, sp.estimate, sp.low, sp.high, truth),
        "precision-weighted Dawid-Skene + vote split": _record(j, *prec, truth),
        "fit's vote-split estimator (votes/) at the pick": _record(0, np.array([row.estimate]), np.array([row.low]),
                                                                   np.array([row.high]), truth[j : j + 1]),
        "every item: the labels' pick always": _record(i, both.estimate, both.low, both.high, truth),
        "every item: the combined estimate also chooses": _record(both_pick, both.estimate, both.low, both.high, truth),
    }
    out = {(name, k): rec if use else labels for name, rec in rows.items()}
    out[("fit's vote-split estimator (votes/) at the pick", k)] = (
        float(truth[j] - np.nanmin(truth)), *out[("fit's vote-split estimator (votes/) at the pick", k)][1:])
    out[("every item: the DS estimate's pick always, no guard", k)] = _record(pick_lowest(ds.estimate), both.estimate,
                                                                             both.low, both.high, truth)
    return out


def _job(args: tuple[Data, int, int, int, bool]) -> tuple[tuple[str, int], list[dict[tuple[str, int], Record]]]:
    d, size, draws, seed, alternatives = args
    return (d.name, size), [evaluate(d, size, run, seed, alternatives) for run in range(draws)]


def run(data: list[Data], draws: int, seed: int, procs: int, alternatives: bool = False) -> dict[tuple[str, int], list[Any]]:
    jobs = [(d, r, draws, seed, alternatives) for d in data for r in RS if len(d.judgments) >= r + 1]
    if procs <= 1:
        return dict(_job(j) for j in jobs)
    with mp.get_context("fork").Pool(procs) as pool:
        return dict(pool.imap_unordered(_job, jobs))


def _mean(res: dict[tuple[str, int], list[Any]], names: list[str], method: str, r: int, k: int) -> np.ndarray | None:
    with warnings.catch_warnings():  # naive's coverage and width are NaN by design (no interval)
        warnings.simplefilter("ignore", RuntimeWarning)
        per = [np.nanmean([rec[(method, k)] for rec in res[(n, r)]], axis=0) for n in names if (n, r) in res]
        return np.nanmean(per, axis=0) if per else None


def table(res: dict[tuple[str, int], list[Any]], data: list[Data], title: str) -> str:
    names = [d.name for d in data]
    methods = sorted({m for recs in res.values() for rec in recs for (m, _) in rec}, key=lambda m: (m not in METHODS, METHODS.index(m) if m in METHODS else 0, m))
    lines = [f"**{title}**", "", "| rule | r | k | datasets | regret | vs naive | abs(reported - true) | vs naive | bias | coverage (90%) | width |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in methods:
        for r in RS:
            for k in KS:
                v, b = _mean(res, names, m, r, k), _mean(res, names, "naive", r, k)
                if v is None or b is None:
                    continue
                n = sum((x, r) in res for x in names)
                if m == "guard falls back":
                    lines.append(f"| {m} | {r} | {k} | {n} | | | | | | {v[3]:.2f} (share of draws) | tau {v[4]:.2f} |")
                    continue
                cov = "—" if np.isnan(v[3]) else f"{v[3]:.2f}"
                wid = "—" if np.isnan(v[4]) else f"{100 * v[4]:.2f}"
                lines.append(f"| {m} | {r} | {k} | {n} | {100 * v[0]:.2f} | {_ratio(v[0], b[0])} | {100 * v[1]:.2f} | "
                             f"{v[1] / b[1]:.2f}x | {100 * v[2]:+.2f} | {cov} | {wid} |")
    return "\n".join(lines)


def _ratio(a: float, b: float) -> str:
    return "—" if b == 0 else f"{100 * (a / b - 1):+.0f}%"


def report(data: list[Data], draws: int, seed: int, procs: int, alternatives: bool = False) -> str:
    """The tables for docs/JUDGES.md: named judges (judgebench, llmbar), snow_rte apart, and every dataset."""
    res = run(data, draws, seed, procs, alternatives)
    named = [d for d in data if d.collection != "snow_rte"]
    slots = [d for d in data if d.collection == "snow_rte"]
    parts = [table(res, named, f"named judges (judgebench, llmbar: {len(named)} datasets), {draws} draws"),
             table(res, slots, f"snow_rte (a different worker per slot: {len(slots)} datasets), {draws} draws"),
             table(res, data, f"all {len(data)} datasets, {draws} draws")]
    return "\n\n".join(parts)
