"""Agreement with the gold and among judges (issue 27; judges/agreement.py, judges/gold.py), checked against
independent implementations: statsmodels' `cohens_kappa` (kappa and its Fleiss-Cohen-Everitt variance) and
`fleiss_kappa`, the `krippendorff` package, scipy's Wilson interval, statsmodels' Holm, Gwet's AC1 and its variance
written here from Gwet (2008), and hand counts. Coverage by seeded simulation (slow)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from betaconform_cli.judges import agreement as ag
from betaconform_cli.judges.gold import (
    agreement,
    confusion,
    labels_figures,
    model_figures,
    ppi_table,
)
from betaconform_cli.judges.results import PairRow
from betaconform_cli.judges.unlabeled import Verdicts, fit_classes

krippendorff = pytest.importorskip("krippendorff")
inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
multitest = pytest.importorskip("statsmodels.stats.multitest")


def _tables(seed: int, n: int = 12) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c = 2 + i % 3
        t = rng.integers(0, 25, (c, c)).astype(float) + np.diag(rng.integers(5, 40, c))
        out.append(t)
    return out


def _pairs(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (gold, verdict) of every item of a table of counts."""
    g, v = np.nonzero(t)
    reps = t[g, v].astype(int)
    return np.repeat(g, reps), np.repeat(v, reps)


def _ac1_gwet(gold: np.ndarray, verdict: np.ndarray, c: int) -> tuple[float, float]:
    """Gwet's AC1 and its variance (Gwet 2008, two raters, f = 0), item by item from the paper's formulas."""
    n = len(gold)
    pa = float(np.mean(gold == verdict))
    pi = np.array([(np.sum(gold == k) + np.sum(verdict == k)) / (2 * n) for k in range(c)])
    pe = float(np.sum(pi * (1 - pi)) / (c - 1))
    ac1 = (pa - pe) / (1 - pe)
    p = np.zeros((c, c))
    for g, v in zip(gold, verdict):
        p[g, v] += 1 / n
    t1 = sum(p[k, k] * (1 - pi[k]) for k in range(c)) / (c - 1)
    t2 = sum(p[k, m] * (1 - (pi[k] + pi[m]) / 2) ** 2 for k in range(c) for m in range(c)) / (c - 1) ** 2
    var = (pa * (1 - pa) - 4 * (1 - ac1) * (t1 - pa * pe) + 4 * (1 - ac1) ** 2 * (t2 - pe * pe)) / (n * (1 - pe) ** 2)
    return ac1, var


class TestAgainstIndependentImplementations:
    """Every coefficient and variance equals another package's or the paper's formula written out here."""

    @pytest.mark.parametrize("t", _tables(1), ids=lambda t: f"{len(t)}x{len(t)}")
    def test_cohen_kappa_and_variance_match_statsmodels(self, t: np.ndarray) -> None:
        ref = inter_rater.cohens_kappa(t)
        assert ag.cohen_kappa(t) == pytest.approx(ref.kappa, abs=1e-12)
        var = ag.delta_variance(ag.cohen_kappa, t / t.sum(), ag.multinomial_covariance(t))
        assert var == pytest.approx(ref.var_kappa, rel=1e-6)  # numerical gradient: 1e-6 relative

    @pytest.mark.parametrize("t", _tables(2), ids=lambda t: f"{len(t)}x{len(t)}")
    def test_ac1_and_variance_match_gwet(self, t: np.ndarray) -> None:
        g, v = _pairs(t)
        ac1, var = _ac1_gwet(g, v, len(t))
        assert ag.gwet_ac1(t) == pytest.approx(ac1, abs=1e-12)
        assert ag.delta_variance(ag.gwet_ac1, t / t.sum(), ag.multinomial_covariance(t)) == pytest.approx(var, rel=1e-6)

    @pytest.mark.parametrize("t", _tables(3), ids=lambda t: f"{len(t)}x{len(t)}")
    def test_pair_alpha_matches_krippendorff(self, t: np.ndarray) -> None:
        g, v = _pairs(t)
        ref = krippendorff.alpha(reliability_data=np.vstack([g, v]).astype(float), level_of_measurement="nominal")
        assert ag.krippendorff_alpha_pair(t) == pytest.approx(ref, abs=1e-12)

    @pytest.mark.parametrize("seed", range(4))
    def test_panel_alpha_with_missing_verdicts_matches_krippendorff(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        c, j = 2 + seed % 3, 3 + seed
        truth = rng.integers(0, c, 150)
        pat = np.where(rng.random((150, j)) < 0.75, truth[:, None], rng.integers(0, c, (150, j)))
        pat = np.where(rng.random((150, j)) < 0.15, -1, pat)  # some verdicts missing
        ref = krippendorff.alpha(reliability_data=np.where(pat < 0, np.nan, pat).T.astype(float),
                                 level_of_measurement="nominal")
        assert ag.panel_alpha(ag.class_counts(pat, c), np.ones(150)) == pytest.approx(ref, abs=1e-12)

    @pytest.mark.parametrize("seed", range(4))
    def test_fleiss_kappa_matches_statsmodels(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        c, j = 2 + seed % 3, 3 + seed
        truth = rng.integers(0, c, 120)
        pat = np.where(rng.random((120, j)) < 0.7, truth[:, None], rng.integers(0, c, (120, j)))
        ref = inter_rater.fleiss_kappa(inter_rater.aggregate_raters(pat, n_cat=c)[0])
        # merged patterns with counts give the same value as one row per item
        keys, counts = np.unique(pat, axis=0, return_counts=True)
        assert ag.fleiss_kappa(ag.class_counts(keys, c), counts.astype(float)) == pytest.approx(ref, abs=1e-12)

    def test_fleiss_kappa_uses_only_items_every_judge_judged(self) -> None:
        pat = np.array([[0, 0, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1], [0, -1, 1]])
        ref = inter_rater.fleiss_kappa(inter_rater.aggregate_raters(pat[:4], n_cat=2)[0])
        assert ag.fleiss_kappa(ag.class_counts(pat, 2), np.ones(5)) == pytest.approx(ref, abs=1e-12)

    def test_holm_matches_statsmodels(self) -> None:
        p = np.array([0.001, 0.04, 0.03, 0.2, np.nan, 0.011, 0.5])
        ok = ~np.isnan(p)
        ref = multitest.multipletests(p[ok], alpha=0.1, method="holm")[0]
        got = ag.holm(p, 0.1)
        assert got[ok].tolist() == ref.tolist() and not got[~ok].any()

    def test_undefined_where_every_item_is_one_class(self) -> None:
        t = np.array([[10.0, 0.0], [0.0, 0.0]])
        assert ag.gwet_ac1(t) == 1.0  # AC1 stays defined (its chance term is 0 there): the reason it exists
        assert np.isnan(ag.cohen_kappa(t)) and np.isnan(ag.krippendorff_alpha_pair(t))
        assert ag.delta_interval(ag.cohen_kappa, t / 10, ag.multinomial_covariance(t), 0.9) is None


class TestPerJudgeRates:
    """Sensitivity, specificity, false-pass and false-fail rates by hand count; Wilson intervals as scipy's."""

    def test_hand_count(self) -> None:
        # gold (1 = pass), the judge's verdict: 6 true passes, 2 false fails, 3 false passes, 9 true fails
        gold = np.array([1] * 8 + [0] * 12)
        said = np.array([1] * 6 + [0] * 2 + [1] * 3 + [0] * 9)
        v = Verdicts(said[:, None], gold, np.ones(20, dtype=np.int64), 2)
        t = confusion(v, 0)
        assert t.tolist() == [[9, 3], [2, 6]]  # rows gold 0, 1; columns verdict 0, 1
        f = labels_figures(t, ("fail", "pass"), 1, 0.9)
        b = f.binary
        assert b is not None and b.positive == "pass"
        assert b.sensitivity.estimate == 6 / 8 and b.specificity.estimate == 9 / 12
        assert b.false_fail.estimate == pytest.approx(2 / 8) and b.false_pass.estimate == pytest.approx(3 / 12)
        assert f.accuracy.estimate == 15 / 20 and f.items == 20
        ci = stats.binomtest(6, 8).proportion_ci(0.9, method="wilson")
        assert (b.sensitivity.low, b.sensitivity.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert (b.false_fail.low, b.false_fail.high) == pytest.approx((1 - ci.high, 1 - ci.low), abs=1e-12)
        ci = stats.binomtest(15, 20).proportion_ci(0.9, method="wilson")
        assert (f.accuracy.low, f.accuracy.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert f.recall[0].estimate == 9 / 12 and f.recall[1].estimate == 6 / 8

    def test_no_pass_class_gives_recall_per_class_only(self) -> None:
        t = np.array([[5.0, 2.0], [1.0, 7.0]])
        f = labels_figures(t, ("A", "B"), None, 0.9)
        assert f.binary is None and [r.estimate for r in f.recall] == [5 / 7, 7 / 8]

    def test_panel_and_pairs(self) -> None:
        """The panel's record on a small set: Fleiss on complete items, dependent pairs by Holm on the pairs' p."""
        pat = np.array([[0, 0, 1], [1, 1, 1], [0, 1, 0], [1, 1, -1], [0, 0, 0]])
        v = Verdicts(pat, np.array([0, 1, -1, 1, 0]), np.array([3, 2, 4, 1, 5]), 2)
        pairs = (PairRow("a", "b", 5, 0.1, 0.05, 0.001), PairRow("a", "c", 5, 0.1, 0.09, 0.5), PairRow("b", "c", 0, None, None, None))
        a = agreement(v, ("a", "b", "c"), ("0", "1"), 1, pairs, 0.9, np.random.default_rng(0))
        assert a.panel.items == 15 and a.panel.complete_items == 14 and a.panel.dependent_pairs == (("a", "b"),)
        ref = inter_rater.fleiss_kappa(inter_rater.aggregate_raters(np.repeat(pat[[0, 1, 2, 4]], [3, 2, 4, 5], axis=0), n_cat=2)[0])
        assert a.panel.fleiss_kappa.estimate == pytest.approx(ref, abs=1e-12)
        assert a.judges[0].confusion == ((8, 0), (0, 3))  # gold 0: 3 + 5 items, gold 1: 2 + 1 and a.model_used is False


class TestPredictionPowered:
    """The model-based table: mean of the prediction on unlabeled items plus the labeled items' mean residual."""

    def test_formula(self) -> None:
        rng = np.random.default_rng(4)
        m = 40
        cells = np.eye(4)[rng.integers(0, 4, m)]
        pred = rng.dirichlet(np.ones(4), m)
        lab = np.arange(m) < 15
        counts = rng.integers(1, 4, m).astype(float)
        p, cov = ppi_table(cells, pred, lab, counts)
        expect = np.average(pred[~lab], axis=0, weights=counts[~lab]) + np.average((cells - pred)[lab], axis=0, weights=counts[lab])
        assert p == pytest.approx(np.maximum(expect, 0) / np.maximum(expect, 0).sum(), abs=1e-12)
        assert np.allclose(cov, cov.T) and np.all(np.linalg.eigvalsh(cov) > -1e-15)

    def test_perfect_prediction_gives_the_whole_sets_table(self) -> None:
        """Where the prediction is each item's true cell, the estimate is the table of every item (labeled or not)."""
        rng = np.random.default_rng(5)
        cells = np.eye(4)[rng.integers(0, 4, 60)]
        lab = np.arange(60) < 10
        p, _ = ppi_table(cells, cells, lab, np.ones(60))
        unl = cells[~lab].mean(axis=0)
        assert p == pytest.approx(unl, abs=1e-12)


def _simulate(rng: np.random.Generator, n: int, acc: np.ndarray, prior: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    """Independent judges of given accuracies on binary items (the Dawid-Skene model's own world)."""
    gold = (rng.random(n) < prior).astype(np.int64)
    right = rng.random((n, len(acc))) < acc[None, :]
    return np.where(right, gold[:, None], 1 - gold[:, None]).astype(np.int64), gold


@pytest.mark.slow
class TestCoverage:
    """Seeded simulations: 90% intervals cover the population value in about 90% of runs (tolerance: 3 binomial
    standard errors of the run count, and at least 0.85)."""

    RUNS = 300

    def _check(self, hits: list[bool]) -> None:
        rate = float(np.mean(hits))
        se = np.sqrt(0.9 * 0.1 / len(hits))
        assert rate >= min(0.9 - 3 * se, 0.85), rate

    SCENARIOS = (  # population shares, rows gold, columns verdict; the number of labeled items
        (np.array([[0.45, 0.1], [0.08, 0.37]]), 20),
        (np.array([[0.78, 0.07], [0.05, 0.10]]), 20),  # unequal classes: the plain delta interval covered 71%
        (np.array([[0.78, 0.07], [0.05, 0.10]]), 60),
        (np.array([[0.25, 0.05, 0.03], [0.04, 0.22, 0.04], [0.03, 0.04, 0.30]]), 20),
    )

    @pytest.mark.parametrize(("p", "n"), SCENARIOS, ids=("balanced-20", "skewed-20", "skewed-60", "3-classes-20"))
    def test_labels_only_kappa_ac1_alpha(self, p: np.ndarray, n: int) -> None:
        rng = np.random.default_rng(11)
        c = len(p)
        truth = (ag.cohen_kappa(p), ag.gwet_ac1(p), ag.krippendorff_alpha_pair(p * 1e9))
        hits: list[list[bool]] = [[], [], []]
        for _ in range(400):
            t = rng.multinomial(n, p.reshape(-1)).reshape(c, c).astype(float)
            f = labels_figures(t, tuple(str(i) for i in range(c)), None, 0.9)
            for h, x, tr in zip(hits, (f.kappa, f.ac1, f.alpha), truth):
                h.append(x is not None and x.low <= tr <= x.high)
        for h in hits:
            assert float(np.mean(h)) >= 0.84, np.mean(h)  # 400 runs: 3 standard errors below 0.9 is 0.855

    def test_panel_fleiss_and_alpha(self) -> None:
        rng = np.random.default_rng(12)
        acc = np.array([0.85, 0.8, 0.75, 0.7])
        big, _ = _simulate(rng, 400_000, acc)
        n_big = ag.class_counts(big, 2)
        truth = (float(ag.fleiss_kappa(n_big, np.ones(len(big)))), float(ag.panel_alpha(n_big, np.ones(len(big)))))
        hits: list[list[bool]] = [[], []]
        for _ in range(150):
            pat, _ = _simulate(rng, 100, acc)
            n_uc = ag.class_counts(pat, 2)
            boot = ag.resample(np.ones(100), rng, 400)
            for h, stat, tr in zip(hits, (ag.fleiss_kappa, ag.panel_alpha), truth):
                x = ag.bootstrap_interval(float(stat(n_uc, np.ones(100))), stat(n_uc, boot), 0.9)
                h.append(x is not None and x.low <= tr <= x.high)
        for h in hits:
            rate = float(np.mean(h))
            assert rate >= 0.84, rate  # 150 runs: 3 standard errors below 0.9 is 0.83

    def test_model_based_accuracy_and_sensitivity(self) -> None:
        """Independent judges, 30 labeled of 200 items: the model-based accuracy, sensitivity and kappa cover the
        population values."""
        rng = np.random.default_rng(13)
        acc = np.array([0.85, 0.8, 0.75, 0.7, 0.65])
        pop = np.array([[0.6 * acc[0], 0.6 * (1 - acc[0])], [0.4 * (1 - acc[0]), 0.4 * acc[0]]])  # gold 1: 40%
        kappa = float(ag.cohen_kappa(pop))
        hits: list[list[bool]] = [[], [], []]
        for _ in range(120):
            pat, gold = _simulate(rng, 200, acc)
            shown = np.where(np.arange(200) < 30, gold, -1)
            v = Verdicts(pat, shown, np.ones(200, dtype=np.int64), 2)
            model = fit_classes(v)
            f = model_figures(v, model, 0, ("0", "1"), 1, 0.9)
            assert f is not None and f.binary is not None
            hits[0].append(f.accuracy.low <= acc[0] <= f.accuracy.high)
            hits[1].append(f.binary.sensitivity.low <= acc[0] <= f.binary.sensitivity.high)
            hits[2].append(f.kappa is not None and f.kappa.low <= kappa <= f.kappa.high)
        for h in hits:
            assert float(np.mean(h)) >= 0.84, np.mean(h)

    def test_model_based_when_judges_err_together(self) -> None:
        """A misspecified model (every judge at 35% on a hard 30% of the items, which the Dawid-Skene model's
        independence cannot express): the labels' rectification keeps the model-based accuracy and sensitivity
        covering the population values (measured: 0.90 / 0.92 at 20 labels, 300 runs)."""
        rng = np.random.default_rng(5)
        acc = np.array([0.9, 0.85, 0.85, 0.8, 0.75])

        def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
            gold = (rng.random(n) < 0.5).astype(np.int64)
            hard = rng.random(n) < 0.3
            right = rng.random((n, 5)) < np.where(hard[:, None], 0.35, acc[None, :])
            return np.where(right, gold[:, None], 1 - gold[:, None]), gold

        big, big_gold = draw(400_000)
        t_acc, t_sens = float((big[:, 0] == big_gold).mean()), float((big[big_gold == 1, 0] == 1).mean())
        hits: list[list[bool]] = [[], []]
        for _ in range(150):
            pat, gold = draw(200)
            v = Verdicts(pat, np.where(np.arange(200) < 20, gold, -1), np.ones(200, dtype=np.int64), 2)
            f = model_figures(v, fit_classes(v), 0, ("0", "1"), 1, 0.9)
            assert f is not None and f.binary is not None
            hits[0].append(f.accuracy.low <= t_acc <= f.accuracy.high)
            hits[1].append(f.binary.sensitivity.low <= t_sens <= f.binary.sensitivity.high)
        for h in hits:
            assert float(np.mean(h)) >= 0.84, np.mean(h)  # 150 runs: 3 standard errors below 0.9 is 0.83
