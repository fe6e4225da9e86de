"""Adaptive mode: the stopping rules on random orders (the paper's Tables 1 and 3, Fig. 6)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..blas import one_thread
from ..counts import CountTable
from ..errors import P0, P1, P2, ParameterError, UsageError
from ..seeds import check_seed
from .fixed_r import Draws
from .results import Cell, Evaluation, RuleRuns, Skipped
from .settings import EvaluateSettings, Progress, Ticker, check_names, check_plain_methods, item_arrays, run_rng, truth


def evaluate_adaptive(
    datasets: Sequence[tuple[str, CountTable]],
    rules: Sequence[tuple[str, Any]],
    settings: EvaluateSettings = EvaluateSettings(),
    seed: int = 0,
    progress: Progress | None = None,
    rule_info: dict[str, Any] | None = None,
) -> Evaluation:
    """Each run labels the dataset in a random order until the rule stops (or the pool runs out), then every
    estimator is fitted on the items labeled so far, as in fixed-r mode; the samples used are recorded.

    rules: (condition label, rule) pairs, e.g. ('xi=0.03', ConformalRule(xi=0.03)); a rule is anything that
    `stopping.rule_path` accepts. settings.sizes is not used. Run `run` of condition c uses
    run_rng(seed, name, crc32(c), run) for the order, the rule and the fits.
    """
    check_plain_methods(settings)
    check_seed(seed)
    labels = _check_rules(rules)
    check_names([n for n, _ in datasets])
    ticker = Ticker(progress, settings.runs * len(rules) * len(datasets))
    cells: list[Cell] = []
    skipped: list[Skipped] = []
    with one_thread():
        for name, table in datasets:
            for label, rule in rules:
                least = fewest_to_stop(rule)
                if table.items < least:  # every run would label the whole pool: nothing about the rule to measure
                    skipped.append(Skipped(name, table.items, least, f"fewer items than the {label} rule needs to stop ({least})"))
                    ticker.tick(f"{name} {label} skipped", settings.runs)
                    continue
                cells.append(_rule_cell(name, table, label, rule, settings, seed, ticker))
    if not cells:
        small = "; ".join(sorted({f"{s.dataset} ({s.items} items)" for s in skipped}))
        raise ParameterError("min_samples", f"{P0}: every dataset has fewer items than the rule needs before it can stop "
                                            f"({max(s.size for s in skipped)}), nothing to evaluate: {small}")
    return Evaluation(
        settings=settings,
        seed=seed,
        cells=tuple(cells),
        skipped=tuple(skipped),
        mode="adaptive",
        conditions=tuple(labels),
        rule=rule_info,
    )


def _check_rules(rules: Sequence[tuple[str, Any]]) -> list[str]:
    """The conditions' labels: at least one, each once."""
    if not rules:
        raise UsageError("adaptive mode needs at least one rule setting")
    labels = [c for c, _ in rules]
    if len(set(labels)) != len(labels):
        raise UsageError(f"a stopping setting is given twice: {labels}")
    return labels


def _rule_cell(
    name: str, table: CountTable, label: str, rule: Any, settings: EvaluateSettings, seed: int, ticker: Ticker
) -> Cell:
    """One (dataset, rule) cell: run `run` labels the items in a random order until the rule stops (or the pool
    runs out); the estimates on the labels it stopped at, and how many."""
    from ..stopping.rules import rule_path

    judges, correct = item_arrays(table)
    n = len(judges)
    draws = Draws(settings, table.max_judges)
    samples = np.zeros(settings.runs, dtype=np.int64)
    stopped = 0
    for run in range(settings.runs):
        rng = run_rng(seed, name, zlib.crc32(label.encode("utf-8")), run)
        order = rng.permutation(n)
        j_run, c_run = judges[order], correct[order]
        path = rule_path(rule, j_run, c_run, rng, pool_size=n, until_stop=True)
        r = int(path.stop_at) if path.stop_at is not None else n
        stopped += path.stop_at is not None
        samples[run] = r
        draws.add(run, CountTable.from_pairs(j_run[:r], c_run[:r]), rng)
        ticker.tick(f"{name} {label}")
    actual, histogram = truth(table, settings.ks)
    return draws.cell(name, table.items, int(round(float(samples.mean()))), actual, histogram,
                      rule=RuleRuns(label, samples, stopped))


def fewest_to_stop(rule: Any) -> int:
    """The fewest labels at which `rule` can stop: min_samples, then patience - 1 more passing checks."""
    return int(getattr(rule, "min_samples", 2)) + int(getattr(rule, "patience", 1)) - 1


DEFAULT_VALUES = {"xi": (0.06, 0.03, 0.01), "target": (0.05, 0.03)}


def rule_grid(
    rule: str, xi: Sequence[float] | None = None, target: Sequence[float] | None = None, **common: Any
) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """The stopping settings of an adaptive evaluation: one rule per threshold value (xi for the conformal and
    variance rules, target for the precision rule), labelled 'xi=0.03'; and a description for the output.

    `common`: the rule's other options (epsilon, tau, patience, min_samples; ks and confidence_level for the
    precision rule), None for its defaults.
    """
    from ..stopping.rules import make_rule

    param = "target" if rule == "precision" else "xi"
    if rule == "precision" and xi is not None:
        raise ParameterError(("rule", "xi", "target"), f"{P0} precision takes {P2}, not {P1}")
    if rule != "precision" and target is not None:
        raise ParameterError(("rule", "target", "xi"), f"{P0} " + rule + f" takes {P2}, not {P1}")
    given = target if param == "target" else xi
    values = tuple(given) if given is not None else DEFAULT_VALUES[param]
    if not values:
        raise ParameterError(param, "needs at least one value")
    if rule != "precision":
        common = {k: v for k, v in common.items() if k not in ("ks", "confidence_level")}
    rules = [(f"{param}={v:g}", make_rule(rule, **{param: v}, **common)) for v in values]
    last = rules[-1][1].describe()
    info = {"rule": rule, "parameter": param, "values": list(values), **{k: v for k, v in last.items() if k != param}}
    return rules, info
