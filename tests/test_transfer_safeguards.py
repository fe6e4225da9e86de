"""Transfer that never hurts (issue 13): the prior that no source applies, judge profiles, the judge-count match,
the limit on the move, and the "no source applies" verdict — by hand, and by simulation with fixed seeds."""

from __future__ import annotations

import math

import msgspec
import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import beta as beta_dist
from scipy.stats import betabinom, norm

from betaconform_cli import transfer as tr
from betaconform_cli.counts import CountTable
from betaconform_cli.distributions import Mixture, error_rates
from betaconform_cli.fit import analyse
from betaconform_cli.settings import FitSettings

FAST = FitSettings(n_draws=1000)
KS = (1, 3, 5, 7, 9)


def source(name: str, table: CountTable, emb: list[float]) -> tr.Source:
    return tr.Source(name, table, analyse(table, FAST).fit.mixture, np.asarray(emb, float), "fake")


def bb_source(name: str, a: float, b: float, judges: int, items: int, emb: list[float]) -> tr.Source:
    """A source whose histogram is the Beta-Binomial's expected counts (rounded) and whose mixture is that BB."""
    hist = np.round(items * betabinom.pmf(np.arange(judges + 1), judges, a, b)).astype(int)
    return tr.Source(name, CountTable.from_histogram(list(hist)), Mixture((1.0,), (a,), (b,)), np.asarray(emb, float), "fake")


def draw_target(rng: np.random.Generator, a: float, b: float, judges: int, items: int = 10) -> CountTable:
    p = rng.beta(a, b, size=items)
    return CountTable.from_histogram(list(np.bincount(rng.binomial(judges, p), minlength=judges + 1)))


def unit(angle: float) -> np.ndarray:
    """A 2-d unit vector; the cosine between unit(x) and unit(y) is cos(x - y)."""
    return np.array([math.cos(angle), math.sin(angle)])


class TestSourcePrior:
    """Eq. 14's sigmoid read as the probability that a source applies, computed by hand."""

    def test_prior_by_hand(self) -> None:
        st = tr.TransferSettings()
        sims = np.array([0.7, 0.2])
        p = tr.source_prior(10, [100, 50], sims, st)
        g = expit(10 * (sims - 0.5))
        assert p.no_transfer == pytest.approx(max(0.1, 1 - g.max()))
        lam = np.array([math.log(100) * g[0], math.log(50) * g[1]])
        np.testing.assert_allclose(p.family, (1 - p.no_transfer) * lam**3 / np.sum(lam**3))
        np.testing.assert_allclose(p.lam[1:], lam)

    def test_unrelated_sources_leave_the_prior_with_no_transfer(self) -> None:
        """However many sources there are, unrelated text (cosine 0) keeps the prior mass on no transfer: a
        hundred weak matches count as much as the best one."""
        st = tr.TransferSettings()
        one = tr.source_prior(10, [100], np.zeros(1), st)
        many = tr.source_prior(10, [100] * 100, np.zeros(100), st)
        assert one.no_transfer == pytest.approx(1 - expit(-5)) == many.no_transfer
        assert many.no_transfer > 0.99
        close = tr.source_prior(10, [100] * 8, np.full(8, 0.9), st)
        assert close.no_transfer == pytest.approx(0.1)  # the floor

    def test_fixed_and_eq14(self) -> None:
        sims = np.array([0.1])
        fixed = tr.source_prior(10, [100], sims, tr.TransferSettings.of(source_prior="fixed"))
        assert fixed.no_transfer == pytest.approx(0.1)
        eq14 = tr.source_prior(10, [100], sims, tr.TransferSettings.of(no_transfer_prior=None))
        lam0, lam1 = math.log(10) * expit(5), math.log(100) * expit(-4)
        assert eq14.no_transfer == pytest.approx(lam0 / (lam0 + lam1))


class TestJudgeProfile:
    """Accuracy and overdispersion against scipy; the judge-count match by hand."""

    def test_overdispersion_of_a_beta_is_the_icc(self) -> None:
        assert tr.mixture_overdispersion(Mixture((1.0,), (3.0,), (5.0,))) == pytest.approx(1 / 9)

    def test_overdispersion_of_a_mixture(self) -> None:
        m = Mixture((0.3, 0.7), (2.0, 9.0), (6.0, 1.5))
        mu = sum(w * beta_dist.mean(a, b) for w, a, b in zip(m.weights, m.alphas, m.betas))
        ex2 = sum(w * (beta_dist.var(a, b) + beta_dist.mean(a, b) ** 2) for w, a, b in zip(m.weights, m.alphas, m.betas))
        assert tr.mixture_overdispersion(m) == pytest.approx((ex2 - mu**2) / (mu * (1 - mu)))

    def test_profile(self) -> None:
        t = CountTable.from_pairs([3, 3, 5, 5], [1, 3, 5, 2])
        p = tr.profile(t, Mixture((1.0,), (1.0,), (1.0,)))
        assert p.judges == (3, 5) and p.accuracy == pytest.approx(11 / 16) and p.overdispersion == pytest.approx(1 / 3)

    def test_same_judge_count(self) -> None:
        target = CountTable.from_pairs([3, 3, 5, 5, 5], [1, 2, 3, 4, 5])
        only5 = tr.Source("s", CountTable.from_histogram([1, 2, 3, 4, 5, 6]), Mixture((1.0,), (1.0,), (1.0,)), np.ones(2), "m")
        only7 = tr.Source("s", CountTable.from_histogram([1] * 8), Mixture((1.0,), (1.0,), (1.0,)), np.ones(2), "m")
        assert tr.same_judge_count(target, only5) == pytest.approx(3 / 5)
        assert tr.same_judge_count(target, only7) == 0.0


class TestJudgeCountMatch:
    """A source seen with another number of judges is another ensemble: it lends only its shape."""

    def test_other_judge_count_has_no_as_is_candidate(self) -> None:
        target = CountTable.from_histogram([0, 1, 2, 3, 2, 1, 1, 0])  # 7 judges
        same = bb_source("same", 4.0, 2.0, 7, 200, [1.0, 0.0])
        other = bb_source("other", 4.0, 2.0, 9, 200, [1.0, 0.0])
        st = tr.TransferSettings.of(max_move=None)
        res = tr.transfer(target, np.array([1.0, 0.0]), [same, other], st, FAST, np.random.default_rng(0))
        assert [s.same_judge_count for s in res.sources] == [1.0, 0.0]
        cells = tr.target_cells(target, FAST.ks)
        singles = [tr.source_centre(target, cells, s, 1.0) for s in (same, other)]
        prior = tr.source_prior(10, [200, 200], np.array([1.0, 1.0]), st)
        cands, p0 = tr.build_candidates(cells, [same, other], singles, prior, np.array([1.0, 0.0]), st)
        kinds_other = {k for k, m in zip(cands.kind, cands.membership[:, 1]) if m > 0}
        assert kinds_other == {"shifted"} and "pair" not in cands.kind and "pool" not in cands.kind
        assert p0 == pytest.approx(prior.no_transfer)
        assert cands.prior.sum() + p0 == pytest.approx(1.0)

    def test_without_shifted_copies_the_mass_goes_to_no_transfer(self) -> None:
        """shift_prior 0 and a source with another judge count: its mass is left to no transfer, and the weights
        are prior x Polya-urn evidence by hand."""
        target = CountTable.from_histogram([1, 2, 2, 1])  # 3 judges
        same = source("same", CountTable.from_histogram([10, 20, 30, 40]), [1.0, 0.0])
        other = source("other", CountTable.from_histogram([40, 30, 20, 10, 5]), [1.0, 0.0])
        st = tr.TransferSettings.of(strengths=(10.0,), shift_prior=0.0, histogram_smoothing=0.0, max_move=None,
                                 no_transfer_prior=0.2, similarity_power=1.0, no_transfer_evidence="beta-binomial")
        res = tr.transfer(target, np.array([1.0, 0.0]), [same, other], st, FAST, np.random.default_rng(0))
        lam = math.log(100) * expit(5), math.log(105) * expit(5)
        p_other = 0.8 * lam[1] / sum(lam)
        assert res.target_prior_weight == pytest.approx(0.2 + p_other)
        seq = [0, 1, 1, 2, 2, 3]
        alpha = 10 * np.array([0.1, 0.2, 0.3, 0.4]) + FAST.flat / 4
        seen, log_same = np.zeros(4), 0.0
        for t, c in enumerate(seq):
            log_same += math.log((alpha[c] + seen[c]) / (alpha.sum() + t))
            seen[c] += 1
        log0 = tr.no_transfer_log_evidence(target, st.evidence.grid_means, st.evidence.grid_concentrations)
        w_same = 1 / (1 + (0.2 + p_other) / (0.8 * lam[0] / sum(lam)) * math.exp(log0 - log_same))
        assert res.sources[0].weight == pytest.approx(w_same, rel=1e-9)
        assert res.sources[1].weight == 0.0 and res.target_weight == pytest.approx(1 - w_same, rel=1e-9)
        assert res.sources[0].log_bayes_factor == pytest.approx(log_same - log0)


class TestAsIsStrength:
    """A source as it is takes only the kappas of at least as_is_min_strength: a Dirichlet with few pseudo-items
    around a source fits any ten labels near it, so its evidence would be the labels', not the source's."""

    def test_strength_prior_by_hand(self) -> None:
        target = CountTable.from_histogram([0, 1, 2, 3, 2, 1, 1, 0])
        same = bb_source("same", 4.0, 2.0, 7, 200, [1.0, 0.0])
        st = tr.TransferSettings()
        cells = tr.target_cells(target, FAST.ks)
        prior = tr.source_prior(10, [200], np.array([1.0]), st)
        cands, _ = tr.build_candidates(cells, [same], [tr.source_centre(target, cells, same, 1.0)], prior, np.array([1.0]), st)
        as_is = np.array([k == "source" for k in cands.kind])
        assert as_is.sum() == 1 and (~as_is).sum() == len(tr.shift_grid(st))
        split = tr.strength_prior(cands, (5.0, 20.0, 100.0), 20.0)
        np.testing.assert_allclose(split[as_is], [[0.0, 0.5, 0.5]])
        np.testing.assert_allclose(split[~as_is], 1 / 3)
        np.testing.assert_allclose(tr.strength_prior(cands, (5.0, 20.0, 100.0), 0.0), 1 / 3)
        np.testing.assert_allclose(tr.strength_prior(cands, (5.0, 20.0), 50.0)[as_is], [[0.0, 1.0]])  # only the largest

    def test_weights_by_hand(self) -> None:
        """One source as it is, strengths 5 and 20: its weight is prior x the Polya-urn evidence at kappa 20 alone."""
        target = CountTable.from_histogram([1, 2, 2, 1])  # 3 judges
        src = source("s", CountTable.from_histogram([10, 20, 30, 40]), [1.0, 0.0])
        st = tr.TransferSettings.of(strengths=(5.0, 20.0), as_is_min_strength=20.0, shift_prior=0.0, histogram_smoothing=0.0,
                                 max_move=None, source_prior="fixed", no_transfer_prior=0.3,
                                 no_transfer_evidence="beta-binomial")
        res = tr.transfer(target, np.array([1.0, 0.0]), [src], st, FAST, np.random.default_rng(0))
        alpha = 20 * np.array([0.1, 0.2, 0.3, 0.4]) + FAST.flat / 4
        seen, log_src = np.zeros(4), 0.0
        for t, c in enumerate([0, 1, 1, 2, 2, 3]):
            log_src += math.log((alpha[c] + seen[c]) / (alpha.sum() + t))
            seen[c] += 1
        log0 = tr.no_transfer_log_evidence(target, st.evidence.grid_means, st.evidence.grid_concentrations)
        w = 1 / (1 + 0.3 / 0.7 * math.exp(log0 - log_src))
        assert res.sources[0].weight == pytest.approx(w, rel=1e-9)
        assert res.sources[0].log_bayes_factor == pytest.approx(log_src - log0)
        assert res.sources[0].log_evidence == pytest.approx(log_src)

    @pytest.mark.slow  # seeded statistical check (the full suite runs it)
    def test_evidence_tells_the_right_source_from_an_unlike_one_better(self) -> None:
        """Labels simulated from one source's judges (80% right, nearly independent); another source's judges are
        right 50% of the time with items of every difficulty. The log Bayes factor of the right source over the
        unlike one is larger when sources as they are take only kappa >= 20 than at every kappa."""
        good = bb_source("good", 40.0, 10.0, 9, 300, [1.0, 0.0])
        unlike = bb_source("unlike", 1.0, 1.0, 9, 300, [1.0, 0.0])
        margin: dict[float, list[float]] = {0.0: [], 20.0: []}
        rng = np.random.default_rng(5)
        for d in range(20):
            target = draw_target(rng, 40.0, 10.0, 9)
            for m, out in margin.items():
                st = tr.TransferSettings.of(as_is_min_strength=m, shift_prior=0.0)
                res = tr.transfer(target, np.array([1.0, 0.0]), [good, unlike], st, FAST, np.random.default_rng(d))
                bf = [s.log_bayes_factor for s in res.sources]
                assert bf[0] is not None and bf[1] is not None
                out.append(bf[0] - bf[1])
        assert np.mean(margin[0.0]) > 2 and np.mean(margin[20.0]) > np.mean(margin[0.0]) + 0.3


class TestLimit:
    """The estimate stays within max_move no-transfer posterior standard deviations of the labels' own."""

    def test_limit_by_hand(self) -> None:
        target = CountTable.from_histogram([0, 1, 2, 3, 2, 1, 1, 0])
        without = analyse(target, FAST, np.random.default_rng(0))
        own = np.array([r.estimate for r in without.rows])
        lo = np.array([r.low for r in without.rows])
        hi = np.array([r.high for r in without.rows])
        z = norm.ppf(0.95)
        far_up, held = tr.limit_move(own + 1.0, without, 0.5, 0.9)
        np.testing.assert_allclose(far_up, own + 0.5 * (hi - own) / z)
        far_down, _ = tr.limit_move(own - 1.0, without, 0.5, 0.9)
        np.testing.assert_allclose(far_down, own - 0.5 * (own - lo) / z)
        near, held_near = tr.limit_move(own + 1e-4, without, 0.5, 0.9)
        np.testing.assert_allclose(near, own + 1e-4)
        assert held.all() and not held_near.any()
        free, none_held = tr.limit_move(own + 1.0, without, None, 0.9)
        np.testing.assert_allclose(free, own + 1.0)
        assert not none_held.any()

    def test_a_trusted_wrong_source_moves_the_estimate_at_most_max_move(self) -> None:
        """A source forced on the labels (fixed prior 0.01 on no transfer, no shifted copies) pulls the estimate
        far without the limit and at most max_move sds with it; the result names the k it held back."""
        target = CountTable.from_histogram([0, 0, 0, 0, 1, 2, 3, 2, 1, 1])  # 9 judges, mostly right
        wrong = bb_source("wrong", 3.0, 4.0, 9, 300, [1.0, 0.0])  # judges mostly wrong
        base = tr.TransferSettings.of(source_prior="fixed", no_transfer_prior=0.01, shift_prior=0.0)
        free = tr.transfer(target, np.array([1.0, 0.0]), [wrong], tr.TransferSettings.of(**{**base.to_dict(), "max_move": None}),
                           FAST, np.random.default_rng(0))
        held = tr.transfer(target, np.array([1.0, 0.0]), [wrong], base, FAST, np.random.default_rng(0))
        z = norm.ppf(0.95)
        for r0, rh in zip(held.without.rows, held.result.rows):
            assert r0.estimate - 0.5 * (r0.estimate - r0.low) / z - 1e-12 <= rh.estimate
            assert rh.estimate <= r0.estimate + 0.5 * (r0.high - r0.estimate) / z + 1e-12
            assert rh.low <= rh.estimate <= rh.high
        assert max(rf.estimate - r0.estimate for r0, rf in zip(free.without.rows, free.result.rows)) > 0.05
        assert held.limited and not free.limited and held.record().limited_at_k == list(held.limited)


class TestNoSourceApplies:
    """Simulated with fixed seeds: the labels overrule sources that describe other judges, and borrow from one
    that describes theirs."""

    def test_verdict_by_hand(self) -> None:
        assert tr.result.no_source_verdict(0.49, 0.3) == (False, "")
        applies, reason = tr.result.no_source_verdict(0.8, 0.3)
        assert applies and "0.80" in reason and "0.30" in reason

    PREVIOUS = {"source_prior": "fixed", "match_judge_count": False, "max_move": None, "pair_prior": 0.3,
                "no_transfer_evidence": "beta-binomial"}

    @staticmethod
    def far(st: tr.TransferSettings, cosine: float) -> tuple[list[bool], float, float]:
        """Sources whose judges err nearly independently (one narrow peak, right 85% or 40% of the time); the
        target's judges err together (an item is right for nearly all of them or for nearly none: a shape no
        source has at any location); texts at the given cosine to the first source (a little less to the
        second). 15 draws: the verdicts, and the summed absolute
        error of transfer and of no transfer against the exact truth (odd k). Every estimate is checked to lie
        within max_move of the labels' own."""
        srcs = [bb_source("easy", 17.0, 3.0, 9, 150, list(unit(0.9))), bb_source("hard", 8.0, 12.0, 9, 150, list(unit(1.0)))]
        truth = error_rates(Mixture((1.0,), (0.25,), (0.25,)), KS)
        rng = np.random.default_rng(5)
        z = norm.ppf(0.95)
        verdicts, err_t, err_0 = [], 0.0, 0.0
        for d in range(15):
            target = draw_target(rng, 0.25, 0.25, 9)
            res = tr.transfer(target, unit(0.9 - math.acos(cosine)), srcs, st, FAST, np.random.default_rng(d))
            verdicts.append(res.no_source_applies)
            if st.applies.max_move is not None:
                for r, r0 in zip(res.result.rows, res.without.rows):
                    assert r0.estimate - st.applies.max_move * (r0.estimate - r0.low) / z - 1e-12 <= r.estimate
                    assert r.estimate <= r0.estimate + st.applies.max_move * (r0.high - r0.estimate) / z + 1e-12
            err_t += sum(abs(res.result.row(k).estimate - truth[k]) for k in KS)
            err_0 += sum(abs(res.without.row(k).estimate - truth[k]) for k in KS)
        return verdicts, err_t, err_0

    def test_target_far_from_unrelated_sources_gets_the_no_transfer_answer(self) -> None:
        """Judges unlike the sources' and unrelated texts (cosine 0.1 and 0.0): no source applies in every draw, and the
        estimate is the no-transfer one to within half a point."""
        verdicts, err_t, err_0 = self.far(tr.TransferSettings(), 0.1)
        assert all(verdicts) and abs(err_t - err_0) < 0.005 * 15 * len(KS)

    @pytest.mark.slow  # seeded statistical check (the full suite runs it)
    def test_target_far_from_sources_of_similar_text(self) -> None:
        """The same judges, texts fairly similar (cosine 0.6 and 0.52: a priori some source applies with
        probability 0.73):
        the labels say that no source applies in most draws, the estimate stays within max_move of theirs, and
        transfer costs less than without the limit or with the previous default."""
        verdicts, err_t, _ = self.far(tr.TransferSettings(), 0.6)
        _, err_free, _ = self.far(tr.TransferSettings.of(max_move=None), 0.6)
        previous, err_prev, _ = self.far(tr.TransferSettings.of(**self.PREVIOUS), 0.6)
        assert np.mean(verdicts) >= 0.7 > np.mean(previous)
        assert err_t < err_free and err_t < err_prev

    def test_unrelated_text_means_no_source_applies_before_the_labels(self) -> None:
        """Sources whose texts are unrelated (cosine 0) hold little prior mass, even when they fit the labels."""
        srcs = [bb_source(f"s{i}", 6.0, 2.0, 9, 150, list(unit(math.pi / 2))) for i in range(3)]
        target = draw_target(np.random.default_rng(1), 6.0, 2.0, 9)
        res = tr.transfer(target, unit(0.0), srcs, tr.TransferSettings(), FAST, np.random.default_rng(0))
        assert res.target_prior_weight > 0.97

    @staticmethod
    def simulate(srcs: list[tr.Source], st: tr.TransferSettings, a: float, b: float, draws: int = 20) -> tuple[float, float, float]:
        """Targets of 10 items drawn from BB(9, a, b), text unit(0.1): (transfer's error / no transfer's, summed
        over draws and odd k against the exact truth; the first source's mean weight; share where sources apply)."""
        truth = error_rates(Mixture((1.0,), (a,), (b,)), KS)
        rng = np.random.default_rng(2)
        err_t = err_0 = 0.0
        weights, applies = [], []
        for d in range(draws):
            target = draw_target(rng, a, b, 9)
            res = tr.transfer(target, unit(0.1), srcs, st, FAST, np.random.default_rng(d))
            weights.append(res.sources[0].weight)
            applies.append(not res.no_source_applies)
            err_t += sum(abs(res.result.row(k).estimate - truth[k]) for k in KS)
            err_0 += sum(abs(res.without.row(k).estimate - truth[k]) for k in KS)
        return err_t / err_0, float(np.mean(weights)), float(np.mean(applies))

    @pytest.mark.slow  # seeded statistical check (the full suite runs it)
    def test_target_simulated_from_a_source_borrows_from_it(self) -> None:
        """The target's judges are the source's (same Beta-Binomial, similar text; another source of less similar
        text describes judges right 20% of the time): the source earns the weight, transfer applies, and the
        estimate is closer to the truth than without transfer."""
        a, b = 1.2, 0.4  # judges right 75% of the time, errors strongly shared (a two-peaked histogram)
        good = bb_source("good", a, b, 9, 300, list(unit(0.0)))
        far = bb_source("far", 2.0, 8.0, 9, 300, list(unit(1.2)))
        ratio, weight, applies = self.simulate([good, far], tr.TransferSettings(), a, b)
        assert ratio < 0.8 and weight > 0.8 and applies >= 0.8
        alone, weight_alone, _ = self.simulate([good], tr.TransferSettings(), a, b)
        assert alone < 0.75 and weight_alone > 0.9

    @pytest.mark.slow  # seeded statistical check (the full suite runs it)
    def test_unlike_sources_of_like_text_cost_little(self) -> None:
        """The same target, but the unlike source's text is as similar as the right one's: a mixture of the two
        fits two-peaked labels, so pooled or in-between centres pull the estimate towards the wrong judges. With
        no points between sources (pair_prior 0, the default) and the move limited, the cost stays small; with
        them (pair_prior 0.3, the previous default) transfer is clearly worse than none."""
        a, b = 1.2, 0.4
        good = bb_source("good", a, b, 9, 300, list(unit(0.0)))
        far = bb_source("far", 2.0, 8.0, 9, 300, list(unit(0.3)))
        ratio, _, _ = self.simulate([good, far], tr.TransferSettings(), a, b)
        with_pairs, _, _ = self.simulate([good, far], tr.TransferSettings.of(pair_prior=0.3), a, b)
        assert ratio < 1.1 < with_pairs

    def test_same_text_other_judge_profile_loses_weight(self) -> None:
        """Two sources with the target's text and its judges' accuracy (80%); one shares its judges' profile
        (errors nearly independent), the other's judges err together (a U-shaped item distribution). The labels
        give the first the weight."""
        indep = bb_source("independent", 40.0, 10.0, 9, 300, [1.0, 0.0])
        together = bb_source("together", 0.8, 0.2, 9, 300, [1.0, 0.0])
        assert tr.mixture_overdispersion(indep.mixture) < 0.05 < 0.4 < tr.mixture_overdispersion(together.mixture)
        rng = np.random.default_rng(3)
        ratio = []
        for d in range(15):
            target = draw_target(rng, 40.0, 10.0, 9)
            res = tr.transfer(target, np.array([1.0, 0.0]), [indep, together], tr.TransferSettings(), FAST,
                              np.random.default_rng(d))
            w = {s.name: s.weight for s in res.sources}
            bf = {s.name: s.log_bayes_factor for s in res.sources}
            ratio.append(w["independent"] > w["together"] and bf["independent"] > bf["together"])
        assert np.mean(ratio) >= 0.9


def test_result_document_fields() -> None:
    """The JSON of a default transfer carries the verdict, the limit and the judge profiles."""
    target = CountTable.from_histogram([0, 1, 2, 3, 2, 1, 1, 0])
    src = bb_source("s", 4.0, 2.0, 7, 200, [1.0, 0.0])
    res = tr.transfer(target, np.array([1.0, 0.0]), [src], tr.TransferSettings(), FAST, np.random.default_rng(0))
    d = msgspec.to_builtins(res.record())
    assert {"no_source_applies", "no_source_reason", "limited_at_k", "target_profile"} <= set(d)
    assert d["target_profile"]["judges"] == [7]
    assert d["target_profile"]["accuracy"] == pytest.approx(target.single_judge_accuracy())
    s = msgspec.to_builtins(res.sources[0].record())
    assert list(s) == ["name", "items", "similarity", "lambda", "prior_weight", "log_evidence", "log_bayes_factor", "weight",
                       "shift", "judges", "accuracy", "overdispersion", "same_judge_count"]
    assert s["judges"] == [7] and s["same_judge_count"] == 1.0 and s["overdispersion"] == pytest.approx(1 / 7)
    assert res.target_weight + sum(x.weight for x in res.sources) == pytest.approx(1.0)
