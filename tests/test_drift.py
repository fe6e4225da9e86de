"""`drift` (judges/drift.py, issue 27 item 3) against independent computations: statsmodels' Newcombe interval for
independent proportions, Newcombe's paired method 10 written out here from scipy's Wilson intervals and the phi
coefficient as numpy's correlation, scipy's chi-square of a contingency table, statsmodels' Holm, and the
permutation p-value against full enumeration of the permutations. Tolerances stated at each check."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep
from typer.testing import CliRunner

from betaconform_cli.judges.drift import (
    Run,
    _judge_categories,
    chi_square,
    correctness,
    drift,
    holm,
    newcombe_paired,
    newcombe_unpaired,
    pattern_tests,
    plurality,
)

from .conftest import invoke


def _wilson(x: int, n: int, level: float) -> tuple[float, float]:
    ci = stats.binomtest(x, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def _paired_by_hand(first: np.ndarray, second: np.ndarray, level: float) -> tuple[float, float]:
    """Newcombe (1998) method 10 for p1 - p2 on paired 0/1 outcomes: L = D - sqrt(dl1^2 - 2 phi dl1 du2 + du2^2),
    U = D + sqrt(du1^2 - 2 phi du1 dl2 + dl2^2), phi the Pearson correlation of the two outcome vectors (0 when
    either is constant)."""
    p1, p2 = first.mean(), second.mean()
    l1, u1 = _wilson(int(first.sum()), len(first), level)
    l2, u2 = _wilson(int(second.sum()), len(second), level)
    phi = 0.0 if first.std() == 0 or second.std() == 0 else float(np.corrcoef(first, second)[0, 1])
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return low, high


class TestIntervals:
    """Newcombe's intervals match independent computations (to 1e-9)."""

    @pytest.mark.parametrize(("x1", "n1", "x2", "n2"), [(30, 40, 20, 40), (0, 12, 5, 30), (17, 17, 3, 25), (9, 50, 40, 51)])
    @pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
    def test_unpaired_is_statsmodels_newcomb(self, x1: int, n1: int, x2: int, n2: int, level: float) -> None:
        low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=1 - level)
        assert newcombe_unpaired(x1, n1, x2, n2, level) == pytest.approx((float(low), float(high)), abs=1e-9)

    @pytest.mark.parametrize("seed", range(8))
    def test_paired_is_method_10_by_hand(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(8, 80))
        first = (rng.random(n) < rng.uniform(0.3, 0.95)).astype(int)
        second = np.where(rng.random(n) < 0.7, first, rng.random(n) < 0.6).astype(int)
        a = int(((first == 1) & (second == 1)).sum())
        b = int(((first == 1) & (second == 0)).sum())
        c = int(((first == 0) & (second == 1)).sum())
        d = n - a - b - c
        assert newcombe_paired(a, b, c, d, 0.9) == pytest.approx(_paired_by_hand(first, second, 0.9), abs=1e-9)

    def test_paired_identical_outcomes(self) -> None:
        """Every item right or wrong in both runs alike: phi = 1, and the half-widths are |dl - du| of the one
        Wilson interval (its asymmetry): narrow, centred on 0."""
        low, high = newcombe_paired(30, 0, 0, 10, 0.9)
        lo, hi = _wilson(30, 40, 0.9)
        width = abs((0.75 - lo) - (hi - 0.75))
        assert (low, high) == pytest.approx((-width, width), abs=1e-12)
        assert width < 0.05

    def test_paired_is_narrower_than_unpaired_when_outcomes_correlate(self) -> None:
        paired = newcombe_paired(30, 2, 6, 12, 0.9)
        unpaired = newcombe_unpaired(32, 50, 36, 50, 0.9)
        assert paired[1] - paired[0] < unpaired[1] - unpaired[0]


class TestPatternsTest:
    """The label-free test: its statistic, its p-value and Holm, against scipy, enumeration and statsmodels."""

    def test_chi_square_is_scipy(self) -> None:
        rng = np.random.default_rng(3)
        cats = rng.integers(0, 5, 60)
        cats[cats == 3] = 4  # an empty category is left out
        member = (rng.random(60) < 0.4).astype(float)
        table = np.array([[((cats == k) & (member == g)).sum() for k in (0, 1, 2, 4)] for g in (0, 1)])
        expected = stats.chi2_contingency(table, correction=False).statistic
        assert chi_square(cats, member[None, :], 5)[0] == pytest.approx(expected, rel=1e-12)

    def test_categories_by_hand(self) -> None:
        v = np.array([[0, 0, 1], [1, -1, 1], [0, 1, -1], [-1, 0, 0]])
        cats = _judge_categories(v, 2)
        # category (verdict + 1) * 3 + (0 agrees with the others' plurality, 1 does not, 2 the others have none)
        # row 0: judges 0 and 1 say 0 and the other two tie (0, 1): 1*3+2; judge 2 says 1 against the others' 0: 2*3+1
        assert cats[0].tolist() == [5, 5, 7]
        # row 1: judges 0 and 2 say 1 as the one other verdict does: 2*3+0; judge 1 says nothing (not the 1): 0*3+1
        assert cats[1].tolist() == [6, 1, 6]
        # row 3: judge 0 nothing, the others 0: 0*3+1; judges 1 and 2 say 0 as the other verdict: 1*3+0
        assert cats[3].tolist() == [1, 3, 3]

    def test_holm_is_statsmodels(self) -> None:
        p = [0.01, 0.04, 0.03, 0.2, 0.005, 0.5]
        assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-12)

    def test_p_value_matches_full_enumeration(self) -> None:
        """5 + 5 items, no id shared: all C(10, 5) = 252 assignments enumerated; the Monte Carlo p with 20000
        permutations within 0.012 (4 standard errors) of the exact one."""
        rng = np.random.default_rng(11)
        v = rng.integers(0, 2, (10, 3))
        v[5:, 0] = 1 - v[5:, 0]  # judge 0 flipped in the new run
        old, new = Run(v[:5], np.full(5, -1)), Run(v[5:], np.full(5, -1))
        none = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        got = pattern_tests(old, new, 2, 20000, np.random.default_rng(0), none)
        cats = _judge_categories(v, 2)
        members = np.zeros((252, 10))
        for row, chosen in enumerate(itertools.combinations(range(10), 5)):
            members[row, list(chosen)] = 1.0
        observed = np.r_[np.zeros(5), np.ones(5)][None, :]
        for j in range(3):
            t0 = chi_square(cats[:, j], observed, 9)[0]
            exact = float((chi_square(cats[:, j], members, 9) >= t0 - 1e-9).mean())
            assert got[j][1] == pytest.approx(exact, abs=0.012)

    def test_shared_items_are_swapped_with_their_twin(self) -> None:
        """6 items in both runs: the 2^6 swaps enumerated; exact p against the Monte Carlo one (abs 0.012)."""
        rng = np.random.default_rng(5)
        vo = rng.integers(0, 2, (6, 3))
        vn = vo.copy()
        vn[:4, 1] = 1 - vn[:4, 1]
        ids = tuple(f"i{k}" for k in range(6))
        old, new = Run(vo, np.full(6, -1), ids), Run(vn, np.full(6, -1), ids)
        pairs = (np.arange(6), np.arange(6))
        got = pattern_tests(old, new, 2, 20000, np.random.default_rng(1), pairs)
        v = np.concatenate([vo, vn])
        cats = _judge_categories(v, 2)
        members = np.array([np.r_[np.array(s), 1 - np.array(s)] for s in itertools.product((0, 1), repeat=6)], dtype=float)
        observed = np.r_[np.zeros(6), np.ones(6)][None, :]
        t0 = chi_square(cats[:, 1], observed, 9)[0]
        exact = float((chi_square(cats[:, 1], members, 9) >= t0 - 1e-9).mean())
        assert got[1][1] == pytest.approx(exact, abs=0.012)


class TestAccuracy:
    """The panel's plurality and each run's correctness, by hand."""

    def test_plurality_ties_and_missing(self) -> None:
        v = np.array([[0, 0, 1], [0, 1, -1], [-1, -1, -1], [2, 2, 1]])
        assert plurality(v, 3).tolist() == [0, -1, -1, 2]

    def test_correctness(self) -> None:
        run = Run(np.array([[0, 1, 1], [1, -1, 0], [0, 0, 0]]), np.array([1, 0, -1]))
        c = correctness(run, 2)
        # row 0 (gold 1): the panel says 1 (two of three); row 1 (gold 0): 1 against 0, a tie, wrong; row 2 unlabeled
        assert c.tolist() == [[0, 1, 1, 1], [0, -1, 1, 0], [-1, -1, -1, -1]]

    def test_paired_change_is_counted_on_shared_items(self) -> None:
        ids = tuple(f"i{k}" for k in range(40))
        rng = np.random.default_rng(2)
        gold = rng.integers(0, 2, 40)
        v_old = np.where(rng.random((40, 3)) < 0.85, gold[:, None], 1 - gold[:, None])
        v_new = v_old.copy()
        v_new[:12, 0] = 1 - gold[:12]  # judge 0 wrong on the first 12 items
        r = drift(Run(v_old, gold, ids), Run(v_new, gold, ids), ["a", "b", "c"], 2, permutations=99)
        a = r.rows[0].change
        right_old, right_new = (v_old[:, 0] == gold), (v_new[:, 0] == gold)
        assert r.paired and a.paired and a.pairs == 40
        assert a.estimate == pytest.approx(right_new.mean() - right_old.mean(), abs=1e-12)
        expected = _paired_by_hand(right_new.astype(int), right_old.astype(int), 1 - 0.05 / 4)  # half of 0.1, over 4 rows
        assert (a.low, a.high) == pytest.approx(expected, abs=1e-9)
        assert r.rows[1].change.estimate == 0.0 and not r.rows[1].drifted_labels
        assert (r.interval_level, r.test_alpha) == pytest.approx((1 - 0.05 / 4, 0.05), abs=1e-12)

    def test_without_labels_in_a_run_the_test_has_all_of_alpha(self) -> None:
        rng = np.random.default_rng(8)
        v = rng.integers(0, 2, (30, 3))
        r = drift(Run(v, rng.integers(0, 2, 30)), Run(v, np.full(30, -1)), ["a", "b", "c"], 2, permutations=19)
        assert r.test_alpha == pytest.approx(0.1, abs=1e-12)
        assert all(row.change.estimate is None and not row.drifted_labels for row in r.rows)


@pytest.mark.slow
class TestFalseAlarm:
    """Null (the same judges, two independent samples of items): the gate's false-alarm rate (either part) is at
    most 1 - level = 0.1; 200 simulated pairs, the rate within 3 standard errors above 0.1."""

    def test_false_alarm_rate(self) -> None:
        rng = np.random.default_rng(27)
        acc = np.array([0.85, 0.8, 0.75, 0.7, 0.9])
        alarms = 0
        sims = 200
        for _ in range(sims):
            runs = []
            for _side in range(2):
                gold = rng.integers(0, 2, 120)
                easy = rng.random(120) < 0.3  # items every judge gets right: judges dependent through the items
                right = (rng.random((120, 5)) < acc) | easy[:, None]
                runs.append(Run(np.where(right, gold[:, None], 1 - gold[:, None]), np.where(rng.random(120) < 0.2, gold, -1)))
            r = drift(runs[0], runs[1], list("abcde"), 2, permutations=199, rng=rng)
            alarms += any(row.drifted for row in r.rows)
        assert alarms / sims <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / sims)


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class TestCommand:
    """The CLI: the gate's exit code and lines, and bad inputs as one line, exit 2."""

    def _runs(self, tmp_path: Path, flip: bool) -> tuple[Path, Path]:
        rng = np.random.default_rng(4)
        old, new = [], []
        for i in range(120):
            gold = "pass" if rng.random() < 0.6 else "fail"
            say = {j: gold if rng.random() < 0.85 else ("fail" if gold == "pass" else "pass") for j in "abcd"}
            old.append({"id": f"q{i}", "verdicts": say, "label": gold if i < 60 else None})
            later = dict(say)
            if flip and rng.random() < 0.4:
                later["a"] = "fail" if later["a"] == "pass" else "pass"
            new.append({"id": f"q{i}", "verdicts": later, "label": gold if i < 60 else None})
        for rows in (old, new):
            for r in rows:
                if r["label"] is None:
                    del r["label"]
        return _write(tmp_path / "old.jsonl", old), _write(tmp_path / "new.jsonl", new)

    def test_gate_passes_on_the_same_verdicts(self, runner: CliRunner, tmp_path: Path) -> None:
        old, _ = self._runs(tmp_path, flip=False)
        r = invoke(runner, "drift", old, old, "--fail-on-drift", "--permutations", "99")
        assert r.exit_code == 0, r.output
        assert "gate: ok" in r.stdout

    def test_gate_fails_on_a_degraded_judge(self, runner: CliRunner, tmp_path: Path) -> None:
        old, new = self._runs(tmp_path, flip=True)
        r = invoke(runner, "drift", old, new, "--fail-on-drift", "--permutations", "199", "-f", "json")
        assert r.exit_code == 1
        doc = json.loads(r.stdout)
        assert "a" in doc["gate"]["drifted"] and not doc["gate"]["passed"]
        lines = r.stderr.strip().splitlines()
        assert lines and all(line.startswith("gate failed: old -> new: ") for line in lines)
        assert any(": a drifted:" in line for line in lines)

    def test_without_the_gate_exit_0(self, runner: CliRunner, tmp_path: Path) -> None:
        old, new = self._runs(tmp_path, flip=True)
        r = invoke(runner, "drift", old, new, "--permutations", "99")
        assert r.exit_code == 0 and "DRIFT" in r.stdout

    def test_no_common_judges_is_one_line(self, runner: CliRunner, tmp_path: Path) -> None:
        old = _write(tmp_path / "x.jsonl", [{"id": "1", "verdicts": {"a": "pass", "b": "fail"}, "label": "pass"}])
        new = _write(tmp_path / "y.jsonl", [{"id": "1", "verdicts": {"c": "pass", "d": "fail"}, "label": "pass"}])
        r = invoke(runner, "drift", old, new)
        assert r.exit_code == 2 and r.stdout == "" and r.stderr.count("\n") == 1
        assert "share 0 judge(s) by name" in r.stderr

    def test_too_few_permutations_say_so(self, runner: CliRunner, tmp_path: Path) -> None:
        """4 judges and the panel at Holm level 0.05 need (4 + 1) / (B + 1) <= 0.05: B >= 99; 50 says so."""
        old, new = self._runs(tmp_path, flip=False)
        r = invoke(runner, "drift", old, new, "--permutations", "50")
        assert r.exit_code == 0 and "cannot reject at level 0.05" in r.stderr and "use at least 99" in r.stderr
        assert "cannot reject" not in invoke(runner, "drift", old, new, "--permutations", "99").stderr

    def test_one_input_cut_in_time(self, runner: CliRunner, tmp_path: Path) -> None:
        """--time-field/--split-at: the items before are the old run; numbers compare as numbers (9 < 10)."""
        rows = [{"id": str(i), "t": i, "verdicts": {"a": "pass", "b": "pass" if i < 10 else "fail", "c": "pass"},
                 "label": "pass"} for i in range(20)]
        path = _write(tmp_path / "timed.jsonl", rows)
        r = invoke(runner, "drift", path, "--time-field", "t", "--split-at", "10", "-f", "json", "--permutations", "99")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert [run["items"] for run in doc["runs"]] == [10, 10]
        b = next(row for row in doc["rows"] if row["name"] == "b")
        assert (b["labels"]["old"]["accuracy"], b["labels"]["new"]["accuracy"]) == (1.0, 0.0)

    @pytest.mark.parametrize(("args", "says"), [
        ([], "drift compares two inputs (OLD NEW), or one input cut in time"),
        (["--time-field", "t"], "--time-field and --split-at go together"),
        (["--time-field", "t", "--split-at", "99"], "every item's 't' is before --split-at 99"),
    ])
    def test_time_split_errors(self, runner: CliRunner, tmp_path: Path, args: list[str], says: str) -> None:
        path = _write(tmp_path / "timed.jsonl", [{"id": str(i), "t": i, "verdicts": {"a": 1, "b": 0}, "label": 1} for i in range(4)])
        r = invoke(runner, "drift", path, *args)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1 and says in r.stderr

    @pytest.mark.parametrize(("flag", "value"), [("--permutations", "5"), ("--confidence-level", "1"), ("--seed", "-1")])
    def test_bad_option_names_itself(self, runner: CliRunner, tmp_path: Path, flag: str, value: str) -> None:
        old, new = self._runs(tmp_path, flip=False)
        r = invoke(runner, "drift", old, new, flag, value)
        assert r.exit_code == 2 and r.stderr.startswith("error: ") and flag in r.stderr
