"""docs/SPEED.md, "The default fit without scipy": the MAP mixture fit (mixtures.fit_mixture: exact sums for the
log-Beta and digamma differences, a bounded Newton method) against the fit it replaced (scipy.special's betaln and
digamma, scipy.optimize's L-BFGS-B with the same bounds, starts and options, written out below as it was), and the
whole `fit -f json` document of this checkout against another checkout's (--baseline: the code before the change).

Part 1, the optimum: on every shared data set (../shared/data, skipped without it), sample_data's labeled files and
--random seeded random histograms (items 1..10^6, 1..40 judges per item, equal or not, two-peak or one-peak truths)
plus edge cases (all correct, all wrong, one item, a single distinct count, huge counts, one judge, 200 judges),
with 1, 2 and 3 components each: whether the two fits reach the same optimum (log posterior within 1e-9 relative),
a higher or a lower one; at the same optimum, the largest relative difference of the majority error at k = 1..11
(both mixtures' errors computed by scipy.stats.betabinom, so that only the optimum differs) against scipy's fit as it
ran and polished to convergence, and of the single Beta-Binomial's alpha and beta.

Part 2, every printed number: `fit FILE -f json` of this checkout and of --baseline on each file: every number of
the two documents compared (relative difference, 1e-300 floor), the fit's own iteration count left out.

    .venv/bin/python benchmarks/fit_without_scipy.py [--random 200] [--baseline /tmp/base] [--update-doc docs/SPEED.md]

(--random 200 with --baseline: ~25 min on the shared 2-core machine, nearly all of it scipy's fits.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from scipy.optimize import minimize
from scipy.special import betaln, digamma, gammaln

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from betaconform_cli.counts import CountTable  # noqa: E402
from betaconform_cli.distributions import Mixture, log_comb, logsumexp  # noqa: E402
from betaconform_cli.mixtures import (  # noqa: E402
    LOG_BOUNDS,
    LOGIT_BOUNDS,
    _objective,
    _starts,
    _unpack,
    default_starts,
    fit_mixture,
)
from betaconform_cli.settings import Prior  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
KS = tuple(range(1, 12))


def scipy_objective(theta: np.ndarray, big_k: np.ndarray, s: np.ndarray, n: np.ndarray, c: int,
                    prior: Prior) -> tuple[float, np.ndarray]:
    """The replaced objective, as it was (scipy.special): negative log posterior and its gradient."""
    logw, la, lb = _unpack(theta, c)
    a, b = np.exp(la)[:, None], np.exp(lb)[:, None]
    lc = gammaln(big_k + 1) - gammaln(s + 1) - gammaln(big_k - s + 1)
    joint = logw[:, None] + lc[None, :] + betaln(s + a, big_k - s + b) - betaln(a, b)
    cell = logsumexp(joint, axis=0)
    resp = np.exp(joint - cell) * n
    psi_ab, psi_kab = digamma(a + b), digamma(big_k + a + b)
    g_la = a[:, 0] * (resp * (digamma(s + a) - psi_kab - digamma(a) + psi_ab)).sum(axis=1)
    g_lb = b[:, 0] * (resp * (digamma(big_k - s + b) - psi_kab - digamma(b) + psi_ab)).sum(axis=1)
    w = np.exp(logw)
    var, conc = prior.log_param_sd**2, prior.weight_concentration
    g_eta = resp.sum(axis=1) - n.sum() * w + (conc - 1.0) * (1.0 - c * w)
    lprior = -0.5 * float((la**2).sum() + (lb**2).sum()) / var + (conc - 1.0) * float(logw.sum())
    grad = np.concatenate((g_eta[1:], g_la - la / var, g_lb - lb / var))
    return -(float(n @ cell) + lprior), -grad


def scipy_fit(table: CountTable, c: int) -> tuple[Mixture, float, tuple[Mixture, float]]:
    """The replaced fit: L-BFGS-B from the same starts, bounds and options; (mixture, log posterior, polished)."""
    big_k, s, n = (x.astype(float) for x in table.cells())
    bounds = [LOGIT_BOUNDS] * (c - 1) + [LOG_BOUNDS] * (2 * c)
    lo, hi = [b[0] for b in bounds], [b[1] for b in bounds]
    best = None
    for theta0 in _starts(table, c, default_starts(c), np.random.default_rng(0)):
        res = minimize(scipy_objective, np.clip(theta0, lo, hi), args=(big_k, s, n, c, Prior()), jac=True,
                       method="L-BFGS-B", bounds=bounds, options={"maxiter": 500, "ftol": 1e-10, "gtol": 1e-7})
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    return mixture_of(best.x, c), -float(best.fun), polish(best.x, big_k, s, n, c, bounds)


def polish(x: np.ndarray, big_k: np.ndarray, s: np.ndarray, n: np.ndarray, c: int,
           bounds: list[tuple[float, float]]) -> tuple[Mixture, float]:
    """L-BFGS-B again from the old fit's optimum, run to convergence (ftol 1e-15, gtol 1e-11): where the old fit's
    stop (ftol 1e-10) left it short of the optimum, this is the optimum it was heading for."""
    res = minimize(scipy_objective, x, args=(big_k, s, n, c, Prior()), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-11})
    return mixture_of(res.x, c), -float(res.fun)


def mixture_of(x: np.ndarray, c: int) -> Mixture:
    logw, la, lb = _unpack(x, c)
    return Mixture(tuple(np.exp(logw)), tuple(np.exp(la)), tuple(np.exp(lb))).sorted()


def scipy_errors(m: Mixture) -> np.ndarray:
    """Majority error at k = 1..11 by scipy.stats.betabinom (ties half)."""
    out = []
    for k in KS:
        s = np.arange(k + 1)
        e = np.where(2 * s < k, 1.0, np.where(2 * s == k, 0.5, 0.0))
        out.append(sum(w * float(stats.betabinom.pmf(s, k, a, b) @ e) for w, a, b in zip(m.weights, m.alphas, m.betas)))
    return np.array(out)


def rel(x: np.ndarray, y: np.ndarray) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    return float(np.max(np.abs(x - y) / np.maximum(np.maximum(np.abs(x), np.abs(y)), 1e-300)))


def jsonl_table(path: Path) -> CountTable | None:
    pairs = []
    for line in path.read_text().splitlines():
        j = json.loads(line).get("judgments") if line.strip() else None
        if isinstance(j, list) and j and all(v in (0, 1) for v in j):
            pairs.append((len(j), sum(j)))
    return CountTable.from_pairs(*map(np.array, zip(*pairs))) if pairs else None


def random_tables(count: int) -> list[tuple[str, CountTable]]:
    rng = np.random.default_rng(20261127)
    out = [
        ("edge: all correct", CountTable.from_histogram([0] * 11 + [500])),
        ("edge: all wrong", CountTable.from_histogram([500] + [0] * 11)),
        ("edge: one item", CountTable.from_histogram([0] * 7 + [1] + [0] * 3)),
        ("edge: single distinct count", CountTable.from_histogram([0] * 5 + [300] + [0] * 5)),
        ("edge: huge counts", CountTable.from_histogram([10**7, 3 * 10**6] + [10**6] * 8 + [4 * 10**7, 9 * 10**7])),
        ("edge: one judge", CountTable.from_histogram([40, 160])),
        ("edge: 200 judges", CountTable.from_pairs(np.full(500, 200), rng.binomial(200, rng.beta(4, 1.5, 500)))),
        ("edge: 1 to 40 judges", CountTable.from_pairs(k := rng.integers(1, 41, 2000), rng.binomial(k, rng.beta(3, 1, 2000)))),
    ]
    for i in range(count):
        items = int(np.exp(rng.uniform(0, np.log(1e6))))
        judges = rng.integers(1, 41, items) if i % 3 == 0 else np.full(items, int(rng.integers(1, 16)))
        if i % 2:
            hard = rng.random(items) < rng.uniform(0.05, 0.5)
            p = np.where(hard, rng.beta(1, rng.uniform(2, 8), items), rng.beta(rng.uniform(2, 12), 1, items))
        else:
            p = rng.beta(rng.uniform(0.3, 10), rng.uniform(0.3, 5), items)
        out.append((f"random {i}", CountTable.from_pairs(judges, rng.binomial(judges, p))))
    return out


def gradient_at(table: CountTable, m: Mixture) -> float:
    """The largest gradient component of the new objective (exact sums) at a mixture's parameters."""
    big_k, s, n = table.cells()
    c = m.n_components
    theta = np.r_[np.log(m.weights[1:]) - np.log(m.weights[0]), np.log(m.alphas), np.log(m.betas)]
    return float(np.max(np.abs(_objective(theta, big_k, s, n.astype(float), log_comb(big_k, s), c, Prior())[1])))


SAME = 1e-9  # relative difference in log posterior below which two fits are at the same optimum


def part_one(tables: list[tuple[str, CountTable]]) -> dict[str, Any]:
    """Each fit against the old one polished: at the same optimum (|log posterior difference| <= SAME relative), the
    worst differences in errors and parameters (those of one component only: a mixture's components can trade
    places and an empty one has any parameters); elsewhere, whether the new fit is higher or lower."""
    worst: dict[str, Any] = {"err": (0.0, ""), "par": (0.0, ""), "old_err": (0.0, ""), "low": (0.0, ""),
                             "gain": (0.0, ""), "fits": 0, "same": 0, "apart": 0, "nearer": 0, "higher": 0, "lower": 0, "not_converged": 0}
    t_new = t_old = 0.0
    for name, table in tables:
        for c in (1, 2, 3):
            t0 = time.perf_counter()
            new = fit_mixture(table, c, n_init=default_starts(c), rng=np.random.default_rng(0))
            t1 = time.perf_counter()
            old, old_lp, (tight, tight_lp) = scipy_fit(table, c)
            t_new, t_old = t_new + t1 - t0, t_old + time.perf_counter() - t1
            assert new.log_posterior is not None
            where = f"{name}, c={c}"
            worst["fits"] += 1
            worst["not_converged"] += not new.converged
            lp = max(old_lp, tight_lp)
            dlp = (new.log_posterior - lp) / max(1.0, abs(lp))
            worst["low"] = min(worst["low"], (dlp, where))
            if abs(dlp) > SAME:
                worst["higher" if dlp > 0 else "lower"] += 1
                worst["gain"] = max(worst["gain"], (dlp, where))
                print(f"  {where}: another optimum, log posterior {dlp:+.2e} relative", file=sys.stderr, flush=True)
                continue
            worst["same"] += 1
            errors = scipy_errors(new.mixture)
            derr = rel(errors, scipy_errors(tight))
            worst["err"] = max(worst["err"], (derr, where))
            if derr > 1e-6:  # which of the two is nearer the optimum: the gradient there (the exact sums' objective)
                gn, gs = gradient_at(table, new.mixture), gradient_at(table, tight)
                worst["apart"] += 1
                worst["nearer"] += gn < gs
                print(f"  {where}: errors {derr:.1e} apart; largest gradient new {gn:.1e}, scipy {gs:.1e}", file=sys.stderr)
            worst["old_err"] = max(worst["old_err"], (rel(errors, scipy_errors(old)), where))
            if c == 1:
                m1 = new.mixture
                worst["par"] = max(worst["par"], (rel(np.r_[m1.alphas, m1.betas], np.r_[tight.alphas, tight.betas]), where))
    worst["seconds"] = (t_new, t_old)
    return worst


def numbers(doc: Any, path: str = "") -> dict[str, float]:
    if isinstance(doc, dict):
        return {k: v for key, val in doc.items() for k, v in numbers(val, f"{path}.{key}").items()}
    if isinstance(doc, list):
        return {k: v for i, val in enumerate(doc) for k, v in numbers(val, f"{path}[{i}]").items()}
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        return {path: float(doc)}
    return {}


def fit_json(checkout: Path, path: Path) -> Any:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, "-m", "betaconform_cli", "fit", str(path.resolve()), "-f", "json"], env=env,
                         capture_output=True, text=True, check=True, cwd=checkout)  # `-m` puts the cwd first
    return json.loads(out.stdout)


def part_two(files: list[Path], baseline: Path) -> tuple[float, str, float, str]:
    """(worst relative difference among error_rates' numbers, where; worst among every other number, where)."""
    rates, other = (0.0, ""), (0.0, "")
    for f in files:
        a, b = numbers(fit_json(ROOT, f)), numbers(fit_json(baseline, f))
        assert a.keys() == b.keys(), f"{f}: the documents' keys differ"
        for key in a:
            if key.endswith(".n_iter"):
                continue
            d = rel(np.array(a[key]), np.array(b[key])) if np.isfinite(a[key]) or np.isfinite(b[key]) else 0.0
            slot = (d, f"{f.name} {key}")
            if ".error_rates[" in key:
                rates = max(rates, slot)
            else:
                other = max(other, slot)
    return rates[0], rates[1], other[0], other[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=200)
    ap.add_argument("--baseline", type=Path)
    ap.add_argument("--update-doc", type=Path)
    args = ap.parse_args()
    shared = sorted(DATA.rglob("*.jsonl")) if DATA.is_dir() else []
    samples = sorted((ROOT / "sample_data").glob("*.jsonl"))
    labeled = [(f"{f.name}", t) for f in shared + samples if (t := jsonl_table(f)) is not None]
    tables = labeled + random_tables(args.random)
    w = part_one(tables)
    lines = [
        f"`python benchmarks/fit_without_scipy.py --random {args.random}"
        + (" --baseline BASE`" if args.baseline else "`")
        + f": {len(tables)} histograms ({len(shared)} shared data sets, {len(labeled) - len(shared)} of sample_data, "
        f"{len(tables) - len(labeled)} random and edge cases), {w['fits']} fits (1, 2 and 3 components each; "
        f"{w['not_converged']} not converged).",
        "",
        f"At the same optimum (log posterior within {SAME:.0e} relative) {w['same']}; at a higher one {w['higher']} "
        f"(at most {w['gain'][0]:+.1e} relative: {w['gain'][1]}; L-BFGS-B had stopped in a lower mode); at a lower one "
        f"{w['lower']} (the lowest: {w['low'][0]:+.1e}, {w['low'][1]}).",
        "",
        "| at the same optimum, the new fit against | worst relative difference | where |",
        "|---|---:|---|",
        f"| scipy's L-BFGS-B as the fit ran it (ftol 1e-10): majority error at k = 1..11 | {w['old_err'][0]:.1e} | "
        f"{w['old_err'][1]} |",
        f"| the same polished to convergence (ftol 1e-15, gtol 1e-11): majority error at k = 1..11 | {w['err'][0]:.1e} "
        f"| {w['err'][1]} |",
        f"| the same polished: alpha and beta of the single Beta-Binomial (c = 1) | {w['par'][0]:.1e} | {w['par'][1]} |",
        "",
        f"Where the errors were more than 1e-6 apart ({w['apart']} fits), the new point had the smaller gradient (of the "
        f"exact sums' objective) in {w['nearer']}: there the difference is how far L-BFGS-B stopped from the optimum "
        "(its stop is relative to f, which grows with the items, and its betaln and digamma lose digits at large "
        "alpha, beta), not the new fit's.",
        "",
        f"Time of all fits (the machine shared): new {w['seconds'][0]:.1f} s, scipy {w['seconds'][1]:.1f} s.",
    ]
    if args.baseline:
        r, rw, o, ow = part_two(shared + samples, args.baseline)
        lines += [
            "",
            f"`fit FILE -f json` of this checkout against BASE on {len(shared + samples)} files (shared data, sample_data): "
            f"every number of error_rates within {r:.1e} relative ({rw}); every other number but the iteration counts "
            f"within {o:.1e} ({ow}).",
        ]
    text = "\n".join(lines)
    print(text)
    if args.update_doc:
        doc = args.update_doc.read_text()
        start, end = "<!-- fit-without-scipy:start -->\n", "<!-- fit-without-scipy:end -->"
        i, j = doc.index(start) + len(start), doc.index(end)
        args.update_doc.write_text(doc[:i] + text + "\n" + doc[j:])


if __name__ == "__main__":
    main()
