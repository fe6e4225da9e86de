"""The vote-split estimate of `judges` with unlabeled items (judges/splits.py) against independent computations:
item-by-item loops on a small multi-class case with missing verdicts, the labels' own errors, and the
Dawid-Skene and vote-split halves of what `analyse_judges` reports."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from betaconform_cli.judges import analyse_judges
from betaconform_cli.judges.document import judges_body
from betaconform_cli.judges.splits import combined_estimates, split_estimates
from betaconform_cli.judges.subsets import empirical_subset_errors
from betaconform_cli.judges.unlabeled import SubsetEstimates, Verdicts, fit_classes, subset_estimates

from .test_judges_unlabeled import FAST, as_votes, majority_error, per_item, simulate


def loop_estimates(v: Verdicts, posterior: np.ndarray, members: np.ndarray, a: float) -> list[float]:
    """The module docstring's estimate, item by item with dictionaries (no arrays of strata)."""
    k = members.shape[1]
    rows = []  # per candidate: list of (count, gold, said) on complete patterns
    for mem in members:
        rows.append([(int(v.counts[p]), int(v.gold[p]), [int(v.patterns[p, j]) for j in mem], p)
                     for p in range(len(v.gold)) if all(v.patterns[p, j] >= 0 for j in mem)])

    def stratum(said: list[int]) -> tuple[int, int] | None:
        tally = {c: said.count(c) for c in set(said)}
        lead = max(tally.values())
        tops = [c for c, n in tally.items() if n == lead]
        return (tops[0], lead) if len(tops) == 1 else None

    n_pool: dict[int, float] = {}
    w_pool: dict[int, float] = {}
    own = []
    for items in rows:
        n_s: dict[int, float] = {}
        w_s: dict[int, float] = {}
        for cnt, gold, said, _ in items:
            st = stratum(said)
            if gold < 0 or st is None:
                continue
            n_s[st[1]] = n_s.get(st[1], 0) + cnt
            w_s[st[1]] = w_s.get(st[1], 0) + cnt * (st[0] != gold)
        own.append((n_s, w_s))
        for m in n_s:
            n_pool[m] = n_pool.get(m, 0) + n_s[m]
            w_pool[m] = w_pool.get(m, 0) + w_s[m]
    out = []
    for items, (n_s, w_s) in zip(rows, own):
        total, err = 0.0, 0.0
        for cnt, gold, said, p in items:
            total += cnt
            if gold >= 0:
                err += cnt * majority_error(said, gold)
                continue
            st = stratum(said)
            if st is None:
                err += cnt * sum(posterior[p, c] * majority_error(said, c) for c in range(v.classes))
                continue
            top, m = st
            pool = (w_pool.get(m, 0) + 0.5) / (n_pool.get(m, 0) + 1)
            q = (w_s.get(m, 0) + a * pool) / (n_s.get(m, 0) + a)
            others = [c for c in range(v.classes) if c != top]
            mass = sum(posterior[p, c] for c in others)
            share = [posterior[p, c] / mass if mass > 1e-12 else 1 / len(others) for c in others]
            alt = sum(s * majority_error(said, c) for s, c in zip(share, others))
            err += cnt * ((1 - q) * majority_error(said, top) + q * alt)
        out.append(err / total)
    assert k == members.shape[1]
    return out


class TestSplitEstimates:
    """split_estimates and combined_estimates against loops, the labels' own errors, and what judges reports."""

    @pytest.mark.parametrize("k", [2, 3, 4])
    def test_matches_an_item_by_item_loop_with_three_classes_and_missing_verdicts(self, k: int) -> None:
        rng = np.random.default_rng(11)
        gold = rng.integers(0, 3, size=70)
        right = rng.random((70, 5)) < np.array([0.8, 0.7, 0.6, 0.75, 0.65])
        patterns = np.where(right, gold[:, None], (gold[:, None] + rng.integers(1, 3, size=(70, 5))) % 3)
        patterns[rng.random((70, 5)) < 0.1] = -1
        shown = np.where(np.arange(70) < 25, gold, -1)
        v = Verdicts(patterns, shown, rng.integers(1, 4, size=70), 3)
        model = fit_classes(v)
        members = np.array(list(itertools.combinations(range(5), k)))
        got = split_estimates(v, model, members, 0.9, pseudo_items=7.0)
        assert np.allclose(got.estimate, loop_estimates(v, model.posterior, members, 7.0), atol=1e-12)
        assert np.all((got.floor <= got.low) & (got.low <= got.estimate) & (got.estimate <= got.high)
                      & (got.high <= got.ceiling))

    def test_binary_pick_is_labels_plus_unlabeled_times_q(self) -> None:
        """Two classes, k = 3: estimate = (labeled errors + sum over strata of unlabeled items x q) / items, q
        written out by hand for the first candidate."""
        rng = np.random.default_rng(12)
        votes, _, shown = simulate(rng, 90, np.array([0.8, 0.7, 0.75, 0.6]), 30)
        v = per_item(votes, shown)
        members = np.array(list(itertools.combinations(range(4), 3)))
        got = split_estimates(v, fit_classes(v), members, 0.9).estimate[0]
        lab = shown >= 0
        ones = votes[:, members].sum(axis=2)
        lead = np.maximum(ones, 3 - ones)
        wrong = (ones >= 2).astype(int) != shown[:, None]
        pool = {m: (np.sum(wrong[lab] & (lead[lab] == m)) + 0.5) / (np.sum(lead[lab] == m) + 1) for m in (2, 3)}
        want = float(np.sum(wrong[lab, 0]))
        for m in (2, 3):
            n, w = np.sum(lead[lab, 0] == m), np.sum(wrong[lab, 0] & (lead[lab, 0] == m))
            want += np.sum(~lab & (lead[:, 0] == m)) * (w + 20 * pool[m]) / (n + 20)
        assert got == pytest.approx(want / 90, abs=1e-12)

    def test_all_labeled_is_the_labels_own_error(self) -> None:
        rng = np.random.default_rng(13)
        votes, gold, _ = simulate(rng, 50, np.array([0.8, 0.7, 0.75, 0.6, 0.9]), 50)
        v = per_item(votes, gold)
        members = np.array(list(itertools.combinations(range(5), 3)))
        est = split_estimates(v, fit_classes(v), members, 0.9)
        want = empirical_subset_errors((votes == gold[:, None]).astype(float), members)[0]
        assert np.allclose(est.estimate, want, atol=1e-12)
        assert np.allclose(est.low, want) and np.allclose(est.high, want)

    def test_same_items_in_another_order_same_answer(self) -> None:
        rng = np.random.default_rng(14)
        votes, _, shown = simulate(rng, 80, np.array([0.8, 0.7, 0.75, 0.6, 0.65]), 20)
        members = np.array(list(itertools.combinations(range(5), 3)))
        order = rng.permutation(80)
        a = split_estimates(per_item(votes, shown), fit_classes(per_item(votes, shown)), members, 0.9)
        vb = per_item(votes[order], shown[order])
        b = split_estimates(vb, fit_classes(vb), members, 0.9)
        for x, y in zip((a.estimate, a.low, a.high), (b.estimate, b.low, b.high)):
            assert np.allclose(x, y, atol=1e-10)

    def test_combined_is_the_mean_and_the_mean_of_the_bounds(self) -> None:
        one = SubsetEstimates(*(np.array([x]) for x in (0.2, 0.1, 0.3, 0.05, 0.6)), np.array([10]))
        two = SubsetEstimates(*(np.array([x]) for x in (0.1, 0.06, 0.2, 0.05, 0.6)), np.array([10]))
        got = combined_estimates(one, two)
        assert (got.estimate[0], got.low[0], got.high[0]) == pytest.approx((0.15, 0.08, 0.25))

    def test_judges_reports_the_mean_of_both_halves_at_its_pick(self) -> None:
        """analyse_judges' ensembles: the reported error is the mean of subset_estimates and split_estimates (over
        every candidate of the size) at the chosen members."""
        rng = np.random.default_rng(15)
        votes, gold, shown = simulate(rng, 200, np.array([0.85, 0.8, 0.75, 0.7, 0.65]), 40)
        names = ("a", "b", "c", "d", "e")
        correct = (votes[:40] == gold[:40, None]).astype(float)
        res = analyse_judges(correct, names, votes=as_votes(votes, shown, names), ks=(3,), settings=FAST)
        doc = judges_body(res)
        assert doc["unlabeled"]["used"]
        row = doc["ensembles"][0]
        v = per_item(votes, shown)
        model = fit_classes(v)
        members = np.array(list(itertools.combinations(range(5), 3)))
        i = [tuple(names[j] for j in m) for m in members].index(tuple(row["members"]))
        ds, sp = subset_estimates(v, model, members, 0.9), split_estimates(v, model, members, 0.9)
        assert row["estimate"] == pytest.approx((ds.estimate[i] + sp.estimate[i]) / 2, abs=1e-9)


def err_together(rng: np.random.Generator, n: int, labeled: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Binary items, 20% hard ones on which every judge is right with probability 0.35 (they err together), the
    rest easy with accuracies 0.9, 0.85, 0.8, 0.95, 0.75."""
    gold = rng.integers(0, 2, size=n)
    hard = rng.random(n) < 0.2
    acc = np.where(hard[:, None], 0.35, np.array([0.9, 0.85, 0.8, 0.95, 0.75])[None, :])
    votes = np.where(rng.random((n, 5)) < acc, gold[:, None], 1 - gold[:, None])
    shown = np.full(n, -1)
    shown[:labeled] = gold[:labeled]
    return votes, gold, shown


class TestAtThePick:
    """Seeded simulation: the 3-subset with the lowest labeled error, as judges errs together on hard items."""

    @pytest.mark.slow
    def test_combined_interval_covers_and_beats_the_labels_at_the_pick(self) -> None:
        """40 sets of 300 items, 30 labeled: the combined 90% interval covers the pick's error on the set in at
        least 80% of them (binomial sd 0.05 at 0.9), and its |estimate - truth| is below the labels' own error's at
        the pick, which carries the winner's curse."""
        rng = np.random.default_rng(16)
        members = np.array(list(itertools.combinations(range(5), 3)))
        cover, ours, naive = [], [], []
        for _ in range(40):
            votes, gold, shown = err_together(rng, 300, 30)
            v = per_item(votes, shown)
            model = fit_classes(v)
            correct = (votes == gold[:, None]).astype(float)
            emp = empirical_subset_errors(correct[:30], members)[0]
            i = int(np.argmin(emp))
            truth = empirical_subset_errors(correct, members)[0][i]
            est = combined_estimates(subset_estimates(v, model, members, 0.9), split_estimates(v, model, members, 0.9))
            cover.append(est.low[i] <= truth <= est.high[i])
            ours.append(abs(est.estimate[i] - truth))
            naive.append(abs(emp[i] - truth))
        assert np.mean(cover) >= 0.8
        assert np.mean(ours) < np.mean(naive)
