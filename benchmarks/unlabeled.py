"""Unlabeled benchmark (issue 17): what the judges' verdicts on unlabeled items add to the error estimate.

For every dataset under ../shared/data (recursively, *.jsonl and *.jsonl.gz) and r = 10, 30, 56: at least 30
seeded paired draws. Each draw takes r labeled items exactly as benchmarks/accuracy.py draws them (the same
generator, the same items, the same labels-only fit), and gives every other item of the dataset as verdicts
without gold: binary verdicts made from correctness, verdict = the gold side if the judge is correct and the other
side if not, the gold side drawn at random per item (its own generator), so an unlabeled item shows who agrees,
never who is right. Truth = the whole dataset's exact majority error. Error margin = mean over odd k <= K of
|estimate - truth| in points; coverage and width of the 90% interval over the same k.

Estimators: labels only = the current default `fit` estimate (fit.analyse) of the r labeled items; vote split =
betaconform_cli.votes.estimate_errors (with its fallback guard, the product); the other rows are alternatives
measured to choose it (docs/UNLABELED.md).

    .venv/bin/python benchmarks/unlabeled.py --update-doc docs/UNLABELED.md

Exits 0 with a message when the data folder is absent (the data is not part of the repository).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from betaconform_cli.atomic import write_text as atomic_write_text  # noqa: E402
from betaconform_cli.blas import one_thread  # noqa: E402
from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.distributions import item_error_table  # noqa: E402
from betaconform_cli.evaluate.settings import EvaluateSettings, item_arrays, run_rng  # noqa: E402
from betaconform_cli.fit import analyse  # noqa: E402
from betaconform_cli.inputs import read_dataset  # noqa: E402
from betaconform_cli.inputs.dataset import dataset_name  # noqa: E402
from betaconform_cli.votes import SplitModel, SplitPrior, estimate_errors  # noqa: E402
from betaconform_cli.votes.agreement import CHANCE_Z, EXCHANGEABLE_P, _log_posterior, fit_one_coin  # noqa: E402
from betaconform_cli.votes.model import WIDTH_SCALES, Hyperprior  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
KS = tuple(range(1, 12))
# the judges of these collections are different models or different people; llmbar's are one model under prompts
DISTINCT = ("judgebench", "snow_rte")

# alternatives measured beside the product (name -> (prior, guard on?)); the product is "vote split"
# issue 17's priors (its product averaged flat, folded, agreement and constant with these)
I17 = {"mean1": -1.0, "sd1": 2.0, "tau": 1.0}
VARIANTS: dict[str, tuple[SplitPrior, bool | str] | tuple[SplitPrior, bool | str, str | SplitPrior]] = {
    "vote split": (SplitPrior(), True),
    "issue 17's vote split (flat + folded + agreement + constant)": (SplitPrior(models=("flat", "folded", "agreement", "constant"), **I17), True),
    "before the agreement model (flat + folded + constant)": (SplitPrior(models=("flat", "folded", "constant"), **I17), True),
    "prototype (flat logistic, no guard)": (SplitPrior(mean1=-2.0, sd1=3.0, models=("flat",), tau=0.0), False),
}


# the alternatives measured for the distinct-judges target (docs/UNLABELED.md), with --variants explore
ALL4 = ("flat", "folded", "agreement", "constant")
EXPLORE: dict[str, tuple[SplitPrior, bool | str]] = {  # issue 17's exploration, with its priors
    "vote split": (SplitPrior(models=ALL4, **I17), True),
    "before the agreement model (flat + folded + constant)": (SplitPrior(models=("flat", "folded", "constant"), **I17), True),
    "agreement instead of folded (flat + agreement + constant)": (SplitPrior(models=("flat", "agreement", "constant"), **I17), True),
    "no flat (folded + agreement + constant)": (SplitPrior(models=("folded", "agreement", "constant"), **I17), True),
    "vote split, random effect tau = 0.5": (SplitPrior(models=ALL4, mean1=-1.0, sd1=2.0, tau=0.5), True),
    "agreement only, no guard": (SplitPrior(models=("agreement",), **I17), False),
}
# issue 26 item 3: alternatives measured for distinct judges (--variants issue26); a str guard is a rule of GUARDS
# applied to the model after an unguarded fit (the product's own guard is True)
def _half(m: SplitModel) -> bool:
    """Fall back only when the "constant" model holds at least half the posterior mass (or too few labeled splits)."""
    z_ok = m.agreement_z is None or m.agreement_z >= CHANCE_Z
    return m.labeled_splits >= 5 and z_ok and m.model_probabilities.get("constant", 0.0) < 0.5


def _no_constant_rule(m: SplitModel) -> bool:
    """The product's guard without its "constant" rule: enough labeled splits, and judges that agree beyond chance
    (the constant model then only enters the average)."""
    return m.labeled_splits >= 5 and (m.agreement_z is None or m.agreement_z >= CHANCE_Z)


GUARDS: dict[str, Callable[[SplitModel], bool]] = {
    "half": _half,
    "splits": lambda m: m.labeled_splits >= 5,
    "averaged": _no_constant_rule,
}
PROTO = SplitPrior(mean1=-2.0, sd1=3.0, models=("flat",), tau=0.0)
ISSUE26: dict[str, tuple[SplitPrior, bool | str]] = {
    "vote split": (SplitPrior(), True),
    "issue 17's vote split (flat + folded + agreement + constant)": (SplitPrior(models=ALL4, **I17), True),
    "prototype (flat logistic, no guard)": (PROTO, False),
    "vote split + constant for the guard (>= 1/2)": (SplitPrior(models=("flat", "tempered", "constant"), guard_models=("constant",)), "half"),
    "vote split without the random effect (tau = 0)": (SplitPrior(tau=0.0), True),
}
# issue 26 item 3, round 2 (--variants round2): the models weighed by stacking their leave-one-label-out predictive
# densities instead of their marginal likelihood, and a step at unanimity
FT, FTU = ("flat", "tempered"), ("flat", "tempered", "unanimous")
ROUND2: dict[str, tuple[SplitPrior, bool | str]] = {
    "vote split": (SplitPrior(), True),
    "stacking: flat + tempered": (SplitPrior(weighting="stacking"), True),
    "flat + tempered + unanimous": (SplitPrior(models=FTU), True),
    "stacking: flat + tempered + unanimous": (SplitPrior(models=FTU, weighting="stacking"), True),
    "stacking: flat + tempered + constant": (SplitPrior(models=(*FT, "constant"), weighting="stacking"), "averaged"),
    "stacking: flat + folded + tempered + unanimous + constant": (
        SplitPrior(models=("flat", "folded", "tempered", "unanimous", "constant"), weighting="stacking"), "averaged"),
    "prototype (flat logistic, no guard)": (PROTO, False),
    "flat + folded + tempered": (SplitPrior(models=("flat", "folded", "tempered")), True),
    "folded + tempered": (SplitPrior(models=("folded", "tempered")), True),
    "vote split with random effect tau = 2": (SplitPrior(tau=2.0), True),
    "flat + folded + tempered with tau = 2": (SplitPrior(models=("flat", "folded", "tempered"), tau=2.0), True),
    "flat + tempered + saturated": (SplitPrior(models=("flat", "tempered", "saturated")), True),
    "flat + folded + tempered + saturated": (SplitPrior(models=("flat", "folded", "tempered", "saturated")), True),
    "stacking: flat + tempered + saturated": (SplitPrior(models=("flat", "tempered", "saturated"), weighting="stacking"), True),
}
# issue 26 item 3, round 4 (--variants round4): the rectified (prediction-powered) estimate, everywhere or where the
# label-free diagnostic says the judges are distinct (docs/UNLABELED.md, "round 4")
# the one-coin Dawid-Skene log odds as the offset, calibrated by a level b0 and a weak tilt in the margin
CAL_DS = SplitPrior(models=("agreement",), mean1=0.0, sd1=1.0, tau=0.0)
ROUND4: dict[str, tuple[SplitPrior, bool | str] | tuple[SplitPrior, bool | str, str | SplitPrior]] = {
    "vote split": (SplitPrior(), True),
    "prototype (flat logistic, no guard)": (PROTO, False),
    "rectified (PPI)": (SplitPrior(), True, "rectified"),
    "vote split if judges overlap, PPI if distinct": (SplitPrior(), True, "rectified_if_distinct"),
    "vote split if judges overlap, prototype if distinct": (SplitPrior(), True, PROTO),
    "vote split if judges overlap, calibrated DS if distinct": (SplitPrior(), True, CAL_DS),
    "vote split if judges overlap, tempered (tau = 0) if distinct": (SplitPrior(), True, SplitPrior(models=("tempered",), tau=0.0)),
    "flat + difficulty": (SplitPrior(models=("flat", "difficulty")), True),
    "flat + tempered + difficulty": (SplitPrior(models=("flat", "tempered", "difficulty")), True),
    "difficulty alone": (SplitPrior(models=("difficulty",)), True),
    "flat (tau = 1), guarded": (SplitPrior(models=("flat",)), True),
    "issue 17's vote split (flat + folded + agreement + constant)": (SplitPrior(models=ALL4, **I17), True),
}
# issue 26 item 3, round 5 (--variants round5): the ablation, one piece at a time, from the default (flat + tempered,
# evidence, tau = 1, guard, b0 ~ N(0, 1.5^2), b1 ~ N(-2, 3^2)) and from the prototype (flat, tau = 0, no guard, the
# same priors); "wide" priors double both widths, "narrow" ones halve them (docs/UNLABELED.md, "round 5")
WIDE, NARROW = {"sd0": 3.0, "sd1": 6.0}, {"sd0": 0.75, "sd1": 1.5}
ROUND5: dict[str, tuple[SplitPrior, bool | str] | tuple[SplitPrior, bool | str, str | SplitPrior]] = {
    "vote split": (SplitPrior(), True),
    "default - guard": (SplitPrior(), False),
    "default - random effect (tau = 0)": (SplitPrior(tau=0.0), True),
    "default - tempered (flat, tau = 1, guarded)": (SplitPrior(models=("flat",)), True),
    "default, priors wide": (SplitPrior(**WIDE), True),
    "default, priors narrow": (SplitPrior(**NARROW), True),
    "prototype (flat logistic, no guard)": (PROTO, False),
    "prototype + guard": (PROTO, True),
    "prototype + random effect (tau = 1)": (SplitPrior(models=("flat",)), False),
    "prototype + tempered (flat + tempered, tau = 0)": (SplitPrior(tau=0.0), False),
    "prototype, priors wide": (SplitPrior(models=("flat",), tau=0.0, **WIDE), False),
    "prototype, priors narrow": (SplitPrior(models=("flat",), tau=0.0, **NARROW), False),
    # the variants stated before they were measured (docs/UNLABELED.md, "round 5")
    "hierarchical tau": (SplitPrior(tau=Hyperprior.half_normal()), True),
    "hierarchical widths": (SplitPrior(tau=Hyperprior(scales=WIDTH_SCALES)), True),
    "pseudo-BMA": (SplitPrior(weighting="pseudo_bma"), True),
    "hierarchical tau and widths": (SplitPrior(tau=Hyperprior.half_normal(scales=WIDTH_SCALES)), True),
    "switch: tempered only if judges are interchangeable (Cochran's Q)": (SplitPrior(), True, "tempered_if_interchangeable"),
}
DIAGNOSTICS = ("oracle: true P(wrong given split)", "oracle shape, level from the labels", "DS plug-in (no labels)")


@dataclass
class Data:
    name: str
    collection: str
    judgments: np.ndarray  # items x judges, 1 = correct, in the accuracy benchmark's item order


def load(path: Path, folder: Path) -> Data:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        rows = [json.loads(line)["judgments"] for line in fh if line.strip()]
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise SystemExit(f"{path}: items have different numbers of judges; this benchmark needs one")
    j = np.array(rows, dtype=np.int64)
    s = j.sum(axis=1)
    order = np.argsort(s, kind="stable")  # item_arrays' order: items sorted by (K, S)
    j = j[order]
    table = read_dataset(path).table
    big_k, correct = item_arrays(table)
    if not (np.array_equal(correct, j.sum(axis=1)) and np.all(big_k == j.shape[1])):
        raise SystemExit(f"{path}: the items do not match the reader's table")
    rel = path.relative_to(folder).parts
    return Data(dataset_name(path), rel[0] if len(rel) > 1 else "", j)


def simulate_beta83(index: int, seed: int) -> Data:
    """Round 4's simulated dataset of distinct judges, from priors stated before any result (docs/UNLABELED.md,
    "round 4"): K ~ {7, 9, 11} judges, N ~ {100, 200, 400} items, accuracies p_j ~ Beta(8, 3), a latent difficulty
    d_i ~ N(0, sigma^2) with sigma ~ U(0.25, 1.0), P(right) = sigmoid(logit(p_j) - d_i), and a share h ~ U(0, 0.10) of
    trap items whose difficulty is raised by 3."""
    rng = np.random.default_rng([seed, 2604, index])
    k = int(rng.choice([7, 9, 11]))
    n = int(rng.choice([100, 200, 400]))
    sigma, h = rng.uniform(0.25, 1.0), rng.uniform(0.0, 0.10)
    p = rng.beta(8.0, 3.0, size=k)
    d = rng.normal(0.0, sigma, size=n) + 3.0 * (rng.random(n) < h)
    logit = np.log(p / (1 - p))
    j = (rng.random((n, k)) < 1.0 / (1.0 + np.exp(-(logit[None, :] - d[:, None])))).astype(np.int64)
    j = j[np.argsort(j.sum(axis=1), kind="stable")]
    return Data(f"b83sim{index:02d}_k{k}_n{n}", "simulated", j)


def simulate(index: int, seed: int) -> Data:
    """One simulated dataset of distinct judges from a stated generative model (docs/UNLABELED.md, "Issue 26"): a
    Rasch-type model, P(judge j correct on item i) = sigmoid(a_j - d_i), judge skills a_j ~ N(mu, 0.8^2) with
    mu ~ U(0.5, 2.5) per dataset, item difficulty d_i ~ N(0, sigma^2) with sigma ~ U(0.3, 2.0) (the shared
    difficulty makes judges err together), and a share h ~ U(0, 0.15) of trap items whose difficulty is raised by
    3 (most judges fooled). K ~ {5, 7, 9, 11} judges, N ~ {100, 200, 400} items. None of these is read off a
    target's published numbers."""
    rng = np.random.default_rng([seed, 2026, index])
    k = int(rng.choice([5, 7, 9, 11]))
    n = int(rng.choice([100, 200, 400]))
    mu, sigma, h = rng.uniform(0.5, 2.5), rng.uniform(0.3, 2.0), rng.uniform(0.0, 0.15)
    a = rng.normal(mu, 0.8, size=k)
    d = rng.normal(0.0, sigma, size=n) + 3.0 * (rng.random(n) < h)
    j = (rng.random((n, k)) < 1.0 / (1.0 + np.exp(-(a[None, :] - d[:, None])))).astype(np.int64)
    j = j[np.argsort(j.sum(axis=1), kind="stable")]
    return Data(f"sim{index:02d}_k{k}_n{n}", "simulated", j)


def truth(j: np.ndarray) -> np.ndarray:
    big_k = j.shape[1]
    s = j.sum(axis=1)
    return np.array([item_error_table(big_k, k)[s].mean() if k <= big_k else np.nan for k in KS])


def draw(d: Data, size: int, run: int, seed: int) -> tuple[np.random.Generator, np.ndarray, np.ndarray, np.ndarray]:
    """One draw of the protocol: (the accuracy benchmark's generator after its draw, the r labeled items' indices,
    binary verdicts of every item (items x judges), gold: the gold side on the labeled items, -1 elsewhere)."""
    n = len(d.judgments)
    rng = run_rng(seed, d.name, size, run)
    idx = rng.choice(n, size=size, replace=False)  # evaluate.settings.draw_table
    side_rng = np.random.default_rng([seed, zlib.crc32(d.name.encode("utf-8")), size, run, 17])
    side = side_rng.integers(0, 2, size=n)  # the gold side, at random per item
    votes = np.where(d.judgments == 1, side[:, None], 1 - side[:, None])
    gold = np.full(n, -1)
    gold[idx] = side[idx]
    return rng, idx, votes, gold


@dataclass
class Cell:
    name: str
    collection: str
    size: int
    margins: dict[str, np.ndarray]
    cover: dict[str, np.ndarray]
    width: dict[str, np.ndarray]
    fallback: np.ndarray
    dependence: np.ndarray | None = None
    interchangeable: np.ndarray | None = None  # per draw, round 5's switch: 1 = judges interchangeable (Cochran's Q)


def diagnostics(j: np.ndarray, votes: np.ndarray, gold: np.ndarray) -> dict[str, np.ndarray]:
    """Two reference points, not estimators: "oracle" = labeled items exact, unlabeled ones under the TRUE
    P(plurality wrong | split) of the whole dataset (what a perfect model of the split would give); "DS plug-in" =
    labeled items exact, unlabeled ones under the one-coin Dawid-Skene posterior (judges err independently), with
    no calibration by the labels. Binary data with one number of judges (this benchmark's)."""
    n, big_k = j.shape
    s = j.sum(axis=1)
    m = np.maximum(s, big_k - s)
    table = np.array([item_error_table(big_k, k) if k <= big_k else np.full(big_k + 1, np.nan) for k in KS])
    wrong = np.where(2 * s == big_k, 0.5, (2 * s < big_k).astype(float))
    p_split = np.bincount(m, weights=wrong, minlength=big_k + 1) / np.maximum(np.bincount(m, minlength=big_k + 1), 1)
    lab = gold >= 0
    acc, pi = fit_one_coin(votes, np.full(n, -1), np.ones(n), 2)
    post = np.exp(_log_posterior(votes, acc, pi, 2))
    top = (2 * votes.sum(axis=1) > big_k).astype(np.int64)
    p_ds = np.where(2 * votes.sum(axis=1) == big_k, 0.5, 1.0 - post[np.arange(n), top])

    def plug(p_wrong: np.ndarray) -> np.ndarray:
        per = (1 - p_wrong)[:, None] * table[:, m].T + p_wrong[:, None] * table[:, big_k - m].T
        per[lab] = table[:, s[lab]].T
        out: np.ndarray = per.mean(axis=0)
        return out

    # the true curve's SHAPE with its level b fitted to the r labels (posterior mean over b ~ N(0, 1.5^2) on a grid):
    # what a perfect model of how P(wrong) varies across splits would give when the labels must still set its level
    clipped = np.clip(p_split, 1e-3, 1 - 1e-3)
    shape = np.log(clipped / (1 - clipped))
    b = np.linspace(-6.0, 6.0, 241)
    can = lab & (2 * s != big_k)
    z = shape[m[can]][None, :] + b[:, None]
    wrong_lab = (s[can] < m[can]).astype(float)
    logpost = -0.5 * (b / 1.5) ** 2 + (wrong_lab * -np.logaddexp(0, -z) + (1 - wrong_lab) * -np.logaddexp(0, z)).sum(axis=1)
    wb = np.exp(logpost - logpost.max())
    wb /= wb.sum()
    level = sum(wi * plug(np.where(2 * m == big_k, p_split[m], 1 / (1 + np.exp(-(shape[m] + bi))))) for wi, bi in zip(wb, b) if wi > 1e-9)
    return {"oracle: true P(wrong given split)": plug(p_split[m]), "oracle shape, level from the labels": np.asarray(level),
            "DS plug-in (no labels)": plug(p_ds)}


def run_cell(d: Data, size: int, runs: int, seed: int, with_diagnostics: bool = False) -> Cell:
    settings = EvaluateSettings().fit_settings()
    j = d.judgments
    n, big_k = j.shape
    actual = truth(j)
    odd = np.array([k % 2 == 1 and k <= big_k for k in KS])
    names = ["labels only", *VARIANTS] + (list(DIAGNOSTICS) if with_diagnostics else [])
    est = {m: np.zeros((runs, len(KS))) for m in names}
    lo = {m: np.zeros((runs, len(KS))) for m in names}
    hi = {m: np.zeros((runs, len(KS))) for m in names}
    fallback = np.zeros(runs, dtype=bool)
    dependence = np.full(runs, np.nan)
    same = np.full(runs, np.nan)
    for run in range(runs):
        rng, idx, votes, gold = draw(d, size, run, seed)
        table = CountTable.from_pairs(np.full(size, big_k), j[idx].sum(axis=1))
        labels = analyse(table, settings, rng)  # the accuracy benchmark's default estimate, same generator
        est["labels only"][run] = [r.estimate for r in labels.rows]
        lo["labels only"][run] = [r.low for r in labels.rows]
        hi["labels only"][run] = [r.high for r in labels.rows]
        for m, (prior, guard, *how) in VARIANTS.items():
            how_s = how[0] if how and isinstance(how[0], str) else "vote_split"
            how_p = how[0] if how and isinstance(how[0], SplitPrior) else None
            r = estimate_errors(votes, gold, KS, 0.9, np.random.default_rng([seed, size, run, 3]), labels_only=labels,
                                prior=prior, guard=guard is True, estimator=how_s, distinct_prior=how_p)
            if r.model is not None and r.model.dependence is not None:
                dependence[run] = r.model.dependence
            if r.model is not None and r.model.interchangeable_p is not None:
                same[run] = float(r.model.interchangeable_p >= EXCHANGEABLE_P)
            rows = r.rows
            if isinstance(guard, str) and r.model is not None and r.used_unlabeled and not GUARDS[guard](r.model):
                rows = tuple(type(x)(x.k, x.labels_only, x.labels_only_low, x.labels_only_high, x.labels_only,
                                     x.labels_only_low, x.labels_only_high, x.extrapolated) for x in rows)
            est[m][run] = [x.estimate for x in rows]
            lo[m][run] = [x.low for x in rows]
            hi[m][run] = [x.high for x in rows]
            if m == "vote split":
                fallback[run] = not r.used_unlabeled
        if with_diagnostics:  # point estimates only: their interval is the estimate itself
            for m, e in diagnostics(j, votes, gold).items():
                est[m][run] = lo[m][run] = hi[m][run] = e
    margins = {m: 100 * np.abs(est[m][:, odd] - actual[odd]).mean(axis=1) for m in names}
    cover = {m: ((lo[m][:, odd] <= actual[odd] + 1e-12) & (actual[odd] <= hi[m][:, odd] + 1e-12)).mean(axis=1) for m in names}
    width = {m: 100 * (hi[m][:, odd] - lo[m][:, odd]).mean(axis=1) for m in names}
    return Cell(d.name, d.collection, size, margins, cover, width, fallback, dependence, same)


def _run_task(task: tuple[Data, int, int, int, bool]) -> Cell:
    return run_cell(*task)


def f2(x: float) -> str:
    return f"{x:.2f}"


def summary(cells: list[Cell], sizes: list[int], runs: int) -> tuple[str, dict[str, dict[int, dict[str, float]]]]:
    names = list(cells[0].margins)
    collections = sorted({c.collection for c in cells})
    groups = [("all", None)] + [(c, (c,)) for c in collections] + [("distinct judges (" + " + ".join(DISTINCT) + ")", DISTINCT)]
    out: list[str] = []
    stats: dict[str, dict[int, dict[str, float]]] = {}
    for size in sizes:
        at = [c for c in cells if c.size == size]
        out += [
            f"**r = {size}** ({len(at)} datasets, {runs} paired draws each; margin in points, mean ± standard error over "
            "draws of the per-dataset mean; each dataset weighs the same; coverage and width of the 90% interval)",
            "",
            "| group | datasets | estimator | margin | vs labels only | coverage | width | width ratio |",
            "|---|---:|---|---:|---:|---:|---:|---:|",
        ]
        for gname, members in groups:
            sel = [c for c in at if members is None or c.collection in members]
            if not sel:
                continue
            base_m = np.mean([c.margins["labels only"] for c in sel], axis=0)  # per run, mean over datasets
            base_w = float(np.mean([c.width["labels only"].mean() for c in sel]))
            for m in names:
                per_run = np.mean([c.margins[m] for c in sel], axis=0)
                mean = float(per_run.mean())
                se = float(per_run.std(ddof=1) / np.sqrt(len(per_run)))
                diff = per_run - base_m
                cov = float(np.mean([c.cover[m].mean() for c in sel]))
                wid = float(np.mean([c.width[m].mean() for c in sel]))
                rel = "—" if m == "labels only" else f"{100 * (mean / float(base_m.mean()) - 1):+.0f}% ({f2(float(diff.mean()))} ± {f2(float(diff.std(ddof=1) / np.sqrt(len(diff))))})"
                band = "— | — | —" if m in DIAGNOSTICS else f"{100 * cov:.0f}% | {f2(wid)} | {wid / base_w:.2f}"
                out.append(f"| {gname} | {len(sel)} | {m} | {f2(mean)} ± {f2(se)} | {rel} | {band} |")
                stats.setdefault(f"{gname}|{m}", {})[size] = {"margin": mean, "base": float(base_m.mean()), "coverage": cov, "ratio": wid / base_w}
        out.append("")
    return "\n".join(out), stats


def _group_stats(cells: list[Cell], size: int, members: tuple[str, ...], m: str) -> tuple[float, float, float, float]:
    """(margin, labels-only margin, coverage, width ratio) of estimator m over these collections' datasets at r."""
    sel = [c for c in cells if c.size == size and c.collection in members]
    margin = float(np.mean([c.margins[m].mean() for c in sel]))
    base = float(np.mean([c.margins["labels only"].mean() for c in sel]))
    cov = float(np.mean([c.cover[m].mean() for c in sel]))
    ratio = float(np.mean([c.width[m].mean() for c in sel])) / float(np.mean([c.width["labels only"].mean() for c in sel]))
    return margin, base, cov, ratio


LOCO_COVERAGE = 0.88


def loco_choice(cells: list[Cell], sizes: list[int], held_out: str) -> str:
    """The estimator chosen without the held-out collection: among those whose 90% interval covers at least 88% in
    every other collection at every r (all of them if none does), the one whose WORST other collection (over r) is
    least worse than labels only, relative; ties by the mean. Nothing about the held-out collection is used."""
    names = [m for m in cells[0].margins if m != "labels only" and m not in DIAGNOSTICS]
    others = sorted({c.collection for c in cells} - {held_out})

    def stats(m: str) -> tuple[float, float, float]:
        rel, cov = [], []
        for coll in others:
            for size in sizes:
                if any(c.size == size and c.collection == coll for c in cells):
                    margin, base, cv, _ = _group_stats(cells, size, (coll,), m)
                    rel.append(margin / base - 1)
                    cov.append(cv)
        return max(rel), float(np.mean(rel)), min(cov)

    table = {m: stats(m) for m in names}
    ok = [m for m in names if table[m][2] >= LOCO_COVERAGE] or names
    return min(ok, key=lambda m: (table[m][0], table[m][1]))


def loco(cells: list[Cell], sizes: list[int]) -> str:
    """Leave-one-collection-out: each collection's result under the estimator chosen on the others (loco_choice),
    the worst collection, and the distinct-judges group with each of its collections under its own choice."""
    collections = sorted({c.collection for c in cells})
    chosen = {coll: loco_choice(cells, sizes, coll) for coll in collections}
    out = ["| collection | chosen on the others | " + " | ".join(f"r = {s}: labels only → chosen (change), coverage, width ratio" for s in sizes) + " |",
           "|---|---|" + "---|" * len(sizes)]
    worst = {s: (-np.inf, "") for s in sizes}
    for coll in collections:
        parts = []
        for s in sizes:
            if not any(c.size == s and c.collection == coll for c in cells):
                parts.append("—")
                continue
            margin, base, cov, ratio = _group_stats(cells, s, (coll,), chosen[coll])
            parts.append(f"{f2(base)} → {f2(margin)} ({100 * (margin / base - 1):+.0f}%), {100 * cov:.0f}%, {ratio:.2f}")
            if margin - base > worst[s][0]:
                worst[s] = (margin - base, coll)
        out.append(f"| {coll} | {chosen[coll]} | " + " | ".join(parts) + " |")
    out.append("| worst collection (points vs labels only) | | " + " | ".join(f"{w[1]}: {w[0]:+.2f}" for w in worst.values()) + " |")
    parts = []
    for s in sizes:
        sel = [c for c in cells if c.size == s and c.collection in DISTINCT]
        if not sel:
            parts.append("—")
            continue
        margin = float(np.mean([c.margins[chosen[c.collection]].mean() for c in sel]))
        base = float(np.mean([c.margins["labels only"].mean() for c in sel]))
        cov = float(np.mean([c.cover[chosen[c.collection]].mean() for c in sel]))
        ratio = float(np.mean([c.width[chosen[c.collection]].mean() for c in sel])) / float(np.mean([c.width["labels only"].mean() for c in sel]))
        parts.append(f"{f2(base)} → {f2(margin)} ({100 * (margin / base - 1):+.0f}%), {100 * cov:.0f}%, {ratio:.2f}")
    out.append("| distinct judges (" + " + ".join(DISTINCT) + ") | each collection's choice | " + " | ".join(parts) + " |")
    return "\n".join(out)


def per_dataset(cells: list[Cell], sizes: list[int]) -> str:
    lines = [
        "| dataset | collection | " + " | ".join(f"r = {s}: labels only → vote split (fallbacks)" for s in sizes) + " |",
        "|---|---|" + "---:|" * len(sizes),
    ]
    for name in sorted({c.name for c in cells}, key=lambda x: (next(c.collection for c in cells if c.name == x), x)):
        row = [c for c in cells if c.name == name]
        coll = row[0].collection
        parts = []
        for s in sizes:
            c = next((c for c in row if c.size == s), None)
            if c is None:
                parts.append("skipped")
            else:
                lo_m, vs = float(c.margins["labels only"].mean()), float(c.margins["vote split"].mean())
                dep = "" if c.dependence is None or np.isnan(c.dependence).all() else f", D = {float(np.nanmean(c.dependence)):.2f}"
                if c.interchangeable is not None and not np.isnan(c.interchangeable).all():
                    dep += f", interchangeable {int(np.nansum(c.interchangeable))}/{len(c.interchangeable)}"
                parts.append(f"{f2(lo_m)} → {f2(vs)} ({int(c.fallback.sum())}/{len(c.fallback)}{dep})")
        lines.append(f"| {name} | {coll} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def write_block(doc: Path, marker: str, text: str) -> None:
    """Put `text` between doc's `<!-- marker:start -->` and `<!-- marker:end -->` (appended when absent), atomically."""
    old = doc.read_text(encoding="utf-8") if doc.exists() else ""
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    block = f"{start}\n{text}{end}"
    new = old[: old.index(start)] + block + old[old.index(end) + len(end):] if start in old and end in old else old.rstrip("\n") + "\n\n" + block + "\n"
    atomic_write_text(doc, new)
    print(f"updated {doc}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of judgment files (searched recursively)")
    ap.add_argument("--r", default="10,30,56", help="numbers of labeled items, comma-separated")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="estimator names to keep, separated by ; (default: all)")
    ap.add_argument("--variants", choices=("product", "explore", "issue26", "round2", "round4", "round5"), default="product",
                    help="product: the product beside the earlier ones; explore: the alternatives for distinct judges")
    ap.add_argument("--diagnostics", action="store_true",
                    help="add two reference rows: the true P(wrong | split) and the uncalibrated Dawid-Skene plug-in")
    ap.add_argument("--collections", default="", help="comma-separated collections to keep (default: all)")
    ap.add_argument("--simulate", type=int, default=0, help="this many simulated distinct-judges datasets instead of the data")
    ap.add_argument("--sim-model", choices=("rasch", "beta83"), default="rasch",
                    help="--simulate's model: round 2's Rasch-type judges or round 4's Beta(8, 3) accuracies")
    ap.add_argument("--procs", type=int, default=1, help="worker processes (cells are independent; results identical)")
    ap.add_argument("--loco", action="store_true", help="choose the estimator leave-one-collection-out (docs/UNLABELED.md)")
    ap.add_argument("--update-doc", type=Path, help="write the results section into this Markdown file")
    args = ap.parse_args(argv)
    if not args.simulate and not args.data.is_dir():
        print(f"unlabeled benchmark skipped: no data folder at {args.data}", file=sys.stderr)
        return 0
    files = [] if args.simulate else sorted(p for p in args.data.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
    if not files and not args.simulate:
        print(f"unlabeled benchmark skipped: no *.jsonl files under {args.data}", file=sys.stderr)
        return 0
    if args.runs < 2:
        raise SystemExit("--runs must be at least 2")
    if args.variants != "product":
        VARIANTS.clear()
        VARIANTS.update({"explore": EXPLORE, "issue26": ISSUE26, "round2": ROUND2, "round4": ROUND4, "round5": ROUND5}[args.variants])
    if args.only:
        keep = set(args.only.split(";"))
        for k in list(VARIANTS):
            if k not in keep:
                del VARIANTS[k]
    sizes = [int(x) for x in args.r.split(",")]
    sim = simulate_beta83 if args.sim_model == "beta83" else simulate
    data = [sim(i, args.seed) for i in range(args.simulate)] if args.simulate else [load(p, args.data) for p in files]
    if args.collections:
        data = [d for d in data if d.collection in args.collections.split(",")]
    t0 = time.monotonic()
    cells: list[Cell] = []
    skipped: list[str] = []
    tasks = []
    for d in data:
        for size in sizes:
            if d.judgments.shape[0] < size + 1:
                skipped.append(f"{d.name} (r = {size}, {d.judgments.shape[0]} items)")
                continue
            tasks.append((d, size, args.runs, args.seed, args.diagnostics))
    with one_thread():
        if args.procs > 1:  # forked workers inherit VARIANTS as chosen above
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(args.procs) as pool:
                for cell in pool.imap(_run_task, tasks):
                    cells.append(cell)
                    print(f"  {cell.name} r = {cell.size}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
        else:
            for task in tasks:
                cells.append(_run_task(task))
                print(f"  {task[0].name} r = {task[1]}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    seconds = time.monotonic() - t0
    table, _stats = summary(cells, sizes, args.runs)
    rel = os.path.relpath(args.data, ROOT)
    command = f".venv/bin/python benchmarks/unlabeled.py --data {rel} --r {args.r} --runs {args.runs} --seed {args.seed}"
    command += (f" --only '{args.only}'" if args.only else "") + (" --variants explore" if args.variants == "explore" else "") + (" --diagnostics" if args.diagnostics else "")
    command += (f" --variants {args.variants}" if args.variants in ("issue26", "round2", "round4", "round5") else "") + (" --loco" if args.loco else "")
    command += (f" --collections {args.collections}" if args.collections else "") + (f" --simulate {args.simulate}" if args.simulate else "") + (
        f" --sim-model {args.sim_model}" if args.simulate and args.sim_model != "rasch" else "")
    where = "the simulation of distinct judges" if args.simulate else "the shared data"
    heading = {"issue26": f"### Results: issue 26, {where}", "round2": f"#### Results: issue 26 round 2, {where}",
               "round4": f"#### Results: issue 26 round 4, {where}",
               "round5": f"#### Results: issue 26 round 5, {where}"}.get(
        args.variants, "## Results")
    text = "\n".join([
        heading,
        "",
        f"Command: `{command}`  ",
        f"Run time: {seconds:.0f} s for {len(data)} datasets.",
        "",
        table,
        "Skipped (fewer than r + 1 items): " + (", ".join(skipped) if skipped else "none") + ".",
        "",
        *([("#### " if args.variants in ("round2", "round4", "round5") else "### ") + "Leave-one-collection-out (`--loco`)", "",
           "Each collection under the estimator chosen on the OTHER collections (`loco_choice`: coverage >= 88% in "
           "every other collection, then the least-bad worst other collection); mean margin over its datasets in "
           "points; coverage and width of the 90% interval against labels only.", "", loco(cells, sizes), ""]
          if args.loco else []),
        ("#### " if args.variants in ("round2", "round4", "round5") else "### ") + "Per dataset (mean margin in points over the draws; in brackets the draws where the guard fell back)",
        "",
        per_dataset(cells, sizes),
        "",
    ])
    if args.update_doc is not None:
        prefix = {"round2": "unlabeled-r2", "round4": "unlabeled-r4", "round5": "unlabeled-r5"}.get(args.variants, "unlabeled")
        write_block(args.update_doc, prefix + ("-sim" if args.simulate else "-loco" if args.loco else ""), text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
