"""Issue 26 item 2, round 4: is a cross-fitted, power-tuned prediction-powered report (PPI++, benchmarks/judges_ppi.py)
of the picked ensemble's error closer than what `judges` ships, leave-one-collection-out; and how close could any
rectified report get (oracle predictions, the share of the error's variance the verdicts leave unexplained)?

The protocol, the draws, the pick and the LOCO rule are benchmarks/judges_loco.py's (r = 30, k = 3 and 5, 30 draws;
ratios against the naive pick reporting its own labeled error; the worst collection). Rows: the shipped pick with
the shipped report; the shipped pick reported by cross-fitted PPI++ and plain cross-fitted PPI (lambda = 1), with the
Dawid-Skene or the shipped model as the prediction, rectified by the pick's own residuals, by every candidate's
(pooled) or by the naive pick made on the other folds (fold pick); the naive pick (ties by the all-items estimate)
with its fold-pick PPI++; references: the same estimates at a k-subset drawn at random (no pick: mean over every
candidate), and the oracle predictions at the shipped pick and at a random subset.

    nice -n 10 .venv/bin/python benchmarks/judges_round4.py --draws 30 --procs 2 > /tmp/round4.log
    nice -n 10 .venv/bin/python benchmarks/judges_round4.py --draws 20 --procs 2 --only NONE --simulated 6

Exits 0 with a message when the data folder is absent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from judges_loco import (  # noqa: E402
    DEFAULT,
    KS,
    PICK,
    SHIPPED,
    SIMULATED,
    TIES,
    Record,
    _naive,
    _rec,
    cells,
    choose,
    run,
    summarise,
    table,
    worst,
)
from judges_loco import main as loco_main  # noqa: E402
from judges_ppi import (  # noqa: E402
    Estimates,
    cross_fit,
    fold_pick_residuals,
    item_errors,
    oracle,
    ppi,
    residuals_with,
    unexplained,
)
from judges_rectified import pick_order  # noqa: E402
from unlabeled import Data, draw  # noqa: E402

from betaconform_cli.judges import rescore, sample_posterior  # noqa: E402
from betaconform_cli.judges.every import Every  # noqa: E402
from betaconform_cli.judges.maxent import fit_maxent  # noqa: E402
from betaconform_cli.judges.subsets import exact_tables  # noqa: E402
from betaconform_cli.judges.unlabeled import Verdicts, fit_classes, guard  # noqa: E402

NO_PICK = "reference: no pick (a random candidate)"
TUNINGS = (("own", "cross-fitted PPI++"), ("common", "cross-fitted PPI++ (one lambda for every candidate)"),
           ("none", "cross-fitted PPI (lambda = 1)"))
DIAG = "diagnostic: unexplained share of Var(Y)"
LAMBDA = "diagnostic: PPI++ lambda at the pick"


def _random(est: Estimates, truth: np.ndarray) -> Record:
    """The estimate at every candidate with its own residuals (none is picked): means over the candidates."""
    recs = np.array([_rec(truth, s, *est.at(s, est.residuals[s])) for s in range(len(truth))])
    return tuple(float(x) for x in np.nanmean(recs, axis=0))  # type: ignore[return-value]


def _ppi_rows(out: dict[tuple[str, int], Record], k: int, y: np.ndarray, lab: np.ndarray, cfs: dict[str, Any],
              picks: tuple[int, int], tiebreak: np.ndarray) -> None:
    i, naive_i = picks
    truth = y.mean(axis=1)
    y_lab = y[:, lab]
    n_u = y.shape[1] - len(lab)
    for pred, cf in cfs.items():
        for tuned, tag in TUNINGS:
            est = ppi(y_lab, cf, n_u, tuned)
            name = f"{tag}, {pred} prediction"
            out[(f"{PICK} / {name}, own rectifier", k)] = _rec(truth, i, *est.at(i, est.residuals[i]))
            mine = residuals_with(est, i, y_lab, cf)
            out[(f"{PICK} / {name}, rectifier pooled over candidates", k)] = _rec(truth, i, *est.at(i, mine.mean(axis=0)))
            fold = fold_pick_residuals(mine, y_lab, cf.fold, tiebreak)
            out[(f"{PICK} / {name}, rectifier of the pick made on the other folds", k)] = _rec(truth, i, *est.at(i, fold))
            out[(f"{NO_PICK} / {name}", k)] = _random(est, truth)
            if tuned == "common" and pred == "shipped model":
                theirs = fold_pick_residuals(residuals_with(est, naive_i, y_lab, cf), y_lab, cf.fold, tiebreak)
                out[(f"{TIES} / {name}, rectifier of the pick made on the other folds", k)] = _rec(
                    truth, naive_i, *est.at(naive_i, theirs))
            if tuned == "own" and pred == "shipped model":
                out[(LAMBDA, k)] = (float(est.lam[i].mean()), float(est.lam.mean()), 0.0, np.nan, np.nan)


def _oracle_rows(out: dict[tuple[str, int], Record], k: int, y: np.ndarray, votes: np.ndarray, lab: np.ndarray,
                 i: int, cfs: dict[str, Any]) -> None:
    truth = y.mean(axis=1)
    unl = np.ones(y.shape[1], dtype=bool)
    unl[lab] = False
    diag = []
    for loo, tag in ((False, "in-sample"), (True, "leave-one-out")):
        f = oracle(y, votes, loo)
        est = Estimates(y[:, lab].sum(axis=1), f[:, unl].sum(axis=1), y[:, lab] - f[:, lab], np.ones((len(y), 1)),
                        int(unl.sum()))
        out[(f"reference: oracle prediction ({tag}), PPI at the shipped pick", k)] = _rec(truth, i, *est.at(i, est.residuals[i]))
        out[(f"{NO_PICK} / oracle prediction ({tag}), PPI", k)] = _random(est, truth)
        plain = Estimates(est.labeled_sum, est.predicted_sum, np.zeros_like(est.residuals), est.lam, est.n_unlabeled)
        out[(f"{NO_PICK} / oracle prediction ({tag}), no rectifier (the calibration known)", k)] = _random(plain, truth)
        diag.append(unexplained(y, f))
    diag += [unexplained(y[:, lab], cf.labeled) for cf in cfs.values()]
    out[(DIAG, k)] = tuple(diag) + (np.nan,)  # type: ignore[assignment]


def evaluate(d: Data, size: int, run: int, seed: int) -> dict[tuple[str, int], Record]:
    """Every row's record at each k for one draw (the same draw and pick as judges_loco.evaluate)."""
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
    product = Every(size, n_pop - size, use, reason, n_pop, v, model).search(search, 0.9)
    lab = np.flatnonzero(v.labeled)
    folds = np.random.default_rng([seed, size, run, 41])
    out: dict[tuple[str, int], Record] = {}
    for k in KS:
        t = tables[k]
        ye = item_errors(d.judgments, t.members)
        truth = ye.mean(axis=1)
        out[("naive / labels' own error", k)] = _naive(t.empirical, truth)
        out[("reference: no pick / labels' own error of a random subset", k)] = (
            float(np.nanmean(truth) - np.nanmin(truth)), float(np.nanmean(np.abs(t.empirical - truth))),
            float(np.nanmean(t.empirical - truth)), np.nan, np.nan)
        tg = product.targets[k]
        i, naive_i = product.pick(k), pick_order(t.empirical, tg.estimate)
        out[(f"{PICK} / {SHIPPED}", k)] = _rec(truth, i, tg.estimate[i], tg.low[i], tg.high[i])
        out[(f"{TIES} / {SHIPPED}", k)] = _rec(truth, naive_i, tg.estimate[naive_i], tg.low[naive_i], tg.high[naive_i])
        out[(f"{NO_PICK} / {SHIPPED}", k)] = tuple(float(x) for x in np.nanmean(  # type: ignore[assignment]
            [_rec(truth, s, tg.estimate[s], tg.low[s], tg.high[s]) for s in range(len(truth))], axis=0))
        cfs = cross_fit(v, t.members, folds)
        _ppi_rows(out, k, ye, lab, cfs, (i, naive_i), tg.estimate)
        _oracle_rows(out, k, ye, votes, lab, i, cfs)
    return out


def _diagnostics(s: Any, every: list[str], rs: tuple[int, ...]) -> list[str]:
    lines = []
    for c in every:
        for r in rs:
            for k in KS:
                if (DIAG, c, r, k) in s:
                    d, lam = s[(DIAG, c, r, k)], s[(LAMBDA, c, r, k)]
                    lines.append(
                        f"{c} (r = {r}, k = {k}): share of Var(Y) left unexplained, all items: oracle in-sample "
                        f"{d[0]:.2f}, leave-one-out {d[1]:.2f}; on the labeled items, cross-fitted Dawid-Skene {d[2]:.2f}, "
                        f"shipped model {d[3]:.2f}; PPI++ lambda at the pick {lam[0]:.2f} (mean over candidates {lam[1]:.2f})")
    return lines


def report(data: list[Data], rs: tuple[int, ...], draws: int, seed: int, procs: int) -> str:
    res = run(data, rs, draws, seed, procs, evaluate)
    s = summarise(res, data, rs)
    every = sorted({d.collection for d in data})
    colls = [c for c in every if c not in SIMULATED]
    sims = [c for c in every if c in SIMULATED]
    methods = sorted({m for (m, _, _, _) in s if not m.startswith("diagnostic")})
    rules = [m for m in methods if not m.startswith(("reference", NO_PICK)) and not m.endswith("labels' own error")]
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
    parts = [f"**LOCO ({draws} draws per dataset, r = {', '.join(map(str, rs))})**", "\n".join(loco)]
    if colls:
        parts += ["**Every row, worst real collection**", worst(s, methods, colls, rs)]
    if sims:
        parts += ["**Every row, worst of the stated-model simulations**", worst(s, methods, sims, rs)]
    parts += ["**Every row, per collection**", table(s, methods, [*every, *(["all"] if colls else [])], rs),
              "\n".join(_diagnostics(s, every, rs))]
    return "\n\n".join(parts)


def main() -> int:
    return loco_main(report, __doc__, "the round-4 protocol")


if __name__ == "__main__":
    raise SystemExit(main())
