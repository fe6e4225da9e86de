"""Items no judge gave a verdict on, in `score`'s population (score/strata.py, issue 26): the estimate against the
stratified computation done here, the interval against the textbook stratified variance (scipy's t) and against a
seeded simulation of the estimator's own error, and every reader counting them alike."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from betaconform_cli.inputs import Keep, read_inputs
from betaconform_cli.score import score

from .conftest import invoke

LEVEL = 0.9


def _population(seed: int, judged: int, unjudged: int, p: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """0/1 gold of `judged` + `unjudged` items (pass rates p[0], p[1]) and three 80%-accurate judges' verdicts on
    the judged ones (-1 on the others)."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([rng.random(judged) < p[0], rng.random(unjudged) < p[1]]).astype(int)
    v = np.where(rng.random((len(y), 3)) < 0.8, y[:, None], 1 - y[:, None])
    v[judged:] = -1
    return y, v


def _label(y: np.ndarray, picks: np.ndarray) -> np.ndarray:
    g = np.full(len(y), -1)
    g[picks] = y[picks]
    return g


class TestEstimate:
    def test_labeled_unjudged_items_mix_by_count(self) -> None:
        """Some of the unjudged items labeled: the interval's centre is w1 * (eq. 1 on the judged items alone) + w0 *
        the unjudged labels' pass rate p0, w the strata's item counts (exact, to 1e-12); the estimate is w1 * (the
        judged items' estimate) + w0 * p0 moved toward it by min(|D|, V0/|D|, sqrt(V0)/2) (eq. 10), V0 written out
        here: (1 - n0/N0) (s0 (1 - p0) + 3 q (1 - q)) / (n0 + 2) / n0, q = (s0 + 1) / (n0 + 2)."""
        y, v = _population(3, 200, 40, (0.7, 0.4))
        g = _label(y, np.r_[0:60, 200:212])
        both = score(v, g, 1, confidence_level=LEVEL)
        judged = score(v[:200], g[:200], 1, confidence_level=LEVEL)
        w1, w0 = 200 / 240, 40 / 240
        n0, s0 = 12, float(y[200:212].sum())
        p0, q = s0 / n0, (s0 + 1) / (n0 + 2)
        v0 = (1 - n0 / 40) * (s0 * (1 - p0) + 3 * q * (1 - q)) / (n0 + 2) / n0
        d = judged.score.estimate - p0
        moved = p0 + math.copysign(min(abs(d), v0 / abs(d), 0.5 * math.sqrt(v0)), d)
        assert both.ppi_estimate == pytest.approx(w1 * judged.ppi_estimate + w0 * p0, abs=1e-12)
        assert both.score.estimate == pytest.approx(w1 * judged.score.estimate + w0 * moved, abs=1e-12)
        assert moved != p0
        assert both.judges_say == judged.judges_say  # the judges' majority is the judged items' own
        assert (both.sizes.labeled_items, both.sizes.unlabeled_items) == (72, 168)
        assert (both.sizes.no_verdict, both.sizes.no_verdict_labeled) == (40, 12)

    def test_unlabeled_unjudged_items_take_the_judged_rate(self) -> None:
        """None of the unjudged items labeled: predicted at the judged items' corrected rate (missing at random),
        so the estimate is the judged items' and only the interval widens."""
        y, v = _population(4, 200, 40, (0.7, 0.7))
        g = _label(y, np.r_[0:60])
        both = score(v, g, 1, confidence_level=LEVEL)
        judged = score(v[:200], g[:200], 1, confidence_level=LEVEL)
        assert both.score.estimate == pytest.approx(judged.score.estimate, abs=1e-12)
        assert both.score.high - both.score.low > judged.score.high - judged.score.low
        assert (both.sizes.no_verdict, both.sizes.no_verdict_labeled) == (40, 0)

    def test_labels_only_is_the_textbook_stratified_interval(self) -> None:
        """lambda = 0 (labels only in each stratum): the interval's centre is sum_h w_h ybar_h exactly, and it is
        sum_h w_h ybar_h +- t * sqrt(sum_h w_h^2 (1 - n_h/N_h) s_h^2 / n_h) (Cochran 5.6) within 0.4 points at
        these sizes (the three pseudo-items and Welch's degrees of freedom are the difference)."""
        y, v = _population(5, 600, 300, (0.6, 0.3))
        picks = np.r_[0:300:1, 600:720]
        g = _label(y, picks)
        r = score(v, g, 1, confidence_level=LEVEL, lambda_=0.0)
        strata = [(y[0:300], 600), (y[600:720], 300)]
        est = sum(N / 900 * s.mean() for s, N in strata)
        var = sum((N / 900) ** 2 * (1 - len(s) / N) * s.var(ddof=1) / len(s) for s, N in strata)
        half = stats.t.ppf(0.5 + LEVEL / 2, 418) * math.sqrt(var)
        assert r.ppi_estimate == pytest.approx(est, abs=1e-12)  # the interval's centre (eq. 10 moves the estimate)
        assert r.score.low == pytest.approx(est - half, abs=0.004)
        assert r.score.high == pytest.approx(est + half, abs=0.004)

    def test_predicted_stratum_variance_by_simulation(self) -> None:
        """lambda = 0, no unjudged item labeled: the estimate is the judged labels' mean, and its error against the
        pass rate of ALL items has variance fpc1 p(1 - p)/n1 + w0^2 p(1 - p)(1/N1 + 1/N0) (eq. 9) when items pass
        at random. A seeded simulation of that error (200,000 populations, numpy only) against the interval the
        code reports for one of them: the interval's half-width / t equals the simulated sd within 5% (without eq. 9 it
        would be 35% short)."""
        rng = np.random.default_rng(6)
        n1, big1, big0, p = 200, 300, 600, 0.5
        labeled = rng.binomial(n1, p, 200_000)  # the passes among the n1 labeled items, and among all the others
        errors = labeled / n1 - (labeled + rng.binomial(big1 + big0 - n1, p, 200_000)) / (big1 + big0)
        y, v = _population(7, big1, big0, (p, p))
        r = score(v, _label(y, np.arange(n1)), 1, confidence_level=LEVEL, lambda_=0.0)
        assert r.score.estimate == pytest.approx(y[:n1].mean(), abs=1e-12)
        sd = (r.score.high - r.score.low) / 2 / stats.t.ppf(0.5 + LEVEL / 2, n1 - 1)
        assert sd == pytest.approx(errors.std(), rel=0.05)
        without = score(v[:big1], _label(y, np.arange(n1))[:big1], 1, confidence_level=LEVEL, lambda_=0.0)
        assert r.score.high - r.score.low > without.score.high - without.score.low  # the prediction's own uncertainty

    def test_too_few_judged_labels_says_so(self) -> None:
        y, v = _population(8, 50, 20, (0.5, 0.5))
        with pytest.raises(Exception, match="labeled items that a judge gave a verdict on; got 1"):
            score(v, _label(y, np.r_[0, 50:60]), 1)


def _rows(tmp_path: Path) -> tuple[list[dict[str, object]], Path]:
    rng = np.random.default_rng(9)
    rows: list[dict[str, object]] = []
    for i in range(60):
        verdicts: list[str | None] = [str(rng.choice(["pass", "fail"])) for _ in range(3)]
        row: dict[str, object] = {"id": f"i{i}", "verdicts": verdicts if i < 50 else [None, None, None]}
        if i % 3 == 0 or i in (50, 51):
            row["label"] = str(rng.choice(["pass", "fail"]))
        rows.append(row)
    path = tmp_path / "nv.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows, path


class TestReaders:
    def test_every_format_counts_the_unjudged_items_by_gold(self, tmp_path: Path) -> None:
        """JSON Lines, a wide table (a row whose judge cells are all empty) and a long table, counts and items:
        the same Votes.no_verdict, and the same skip count for fit's "no judge gave a verdict"."""
        rows, jsonl = _rows(tmp_path)
        wide, long = tmp_path / "wide.csv", tmp_path / "long.csv"
        wide.write_text("id,j1,j2,j3,label\n" + "".join(
            ",".join([str(r["id"]), *[x or "" for x in r["verdicts"]], str(r.get("label", ""))]) + "\n" for r in rows))  # type: ignore[attr-defined]
        long.write_text("id,judge,verdict,label\n" + "".join(
            f"{r['id']},j{j},{x or ''},{r.get('label', '')}\n" for r in rows for j, x in enumerate(r["verdicts"])))  # type: ignore[arg-type]
        labeled = [r for r in rows[50:] if "label" in r]
        want = {(None, 6)} | {(g, sum(r["label"] == g for r in labeled)) for g in {str(r["label"]) for r in labeled}}
        for path in (jsonl, wide, long):
            for keep in (Keep.COUNTS, Keep.ITEMS):
                ds = read_inputs([str(path)], keep=keep)[0]
                assert ds.votes is not None
                got = {(None if c < 0 else ds.votes.classes[c], n) for c, n in ds.votes.no_verdict}
                assert got == want, (path.name, keep)
                assert ds.skipped == 10 and [s.reason for s in ds.reading.skips] == ["no judge gave a verdict"]  # type: ignore[union-attr]


class TestCommand:
    def test_score_counts_them_and_says_how(self, runner, tmp_path: Path) -> None:
        _, path = _rows(tmp_path)
        res = invoke(runner, "score", str(path), "-f", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert (doc["no_verdict_items"], doc["no_verdict_labeled"]) == (10, 4)
        assert doc["labeled_items"] + doc["unlabeled_items"] == 60
        assert doc["no_verdict_note"].startswith("10 items had no verdict")
        assert "skipped" not in res.stderr  # part of the population, not skipped
        table = invoke(runner, "score", str(path))
        assert "10 items had no verdict: estimated from their own 4 labels" in table.stdout

    def test_doctor_reports_them(self, runner, tmp_path: Path) -> None:
        _, path = _rows(tmp_path)
        res = invoke(runner, "doctor", str(path), "-f", "json")
        assert res.exit_code == 0, res.output
        assert "no judge gave a verdict" in res.stdout and '"no_verdict_items":10' in res.stdout.replace(" ", "")
