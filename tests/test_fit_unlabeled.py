"""`fit` with unlabeled items (issue 17 item 3): votes.analyse_with_votes, its JSON, table, saved fit and CLI.

Independent computations: the labels-only numbers from `fit.analyse` on a histogram built here from the raw arrays,
the counts from the raw arrays, the vote-split numbers from `votes.estimate_errors` called on per-item arrays (not
the reader's patterns), and each item set's actual error from scipy's hypergeometric distribution.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from betaconform_cli import api
from betaconform_cli.counts import CountTable
from betaconform_cli.document_types import plain
from betaconform_cli.errors import ParamsError
from betaconform_cli.fit import analyse
from betaconform_cli.fit_document import fit_document
from betaconform_cli.inputs.dataset import Votes
from betaconform_cli.report.fit import error_view, saved_document, summary_view
from betaconform_cli.savedfit import dump_fit, load_fit
from betaconform_cli.settings import FitSettings
from betaconform_cli.votes import METHOD_LABELS, METHOD_VOTES, analyse_with_votes, estimate_errors

from .oracles import hyper_error

KS = tuple(range(1, 12))


def make(seed: int, items: int = 600, judges: int = 11, labeled: int = 30, noise: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(votes, gold with -1 for unlabeled, correct counts): exchangeable judges, per-item accuracy ~ Beta(4, 1.5);
    `noise`: verdicts independent of the gold (they carry no information about correctness)."""
    rng = np.random.default_rng([17, seed])
    side = rng.integers(0, 2, size=items)
    if noise:
        votes = rng.integers(0, 2, size=(items, judges))
    else:
        acc = rng.beta(4.0, 1.5, size=items)
        right = rng.random((items, judges)) < acc[:, None]
        votes = np.where(right, side[:, None], 1 - side[:, None])
    gold = np.full(items, -1)
    pick = rng.choice(items, size=labeled, replace=False)
    gold[pick] = side[pick]
    return votes, gold, (votes == side[:, None]).sum(axis=1)


def as_votes(votes: np.ndarray, gold: np.ndarray) -> Votes:
    """The reader's form: distinct (verdicts, gold) patterns with counts."""
    rows, inv, counts = np.unique(np.column_stack([votes, gold]), axis=0, return_inverse=True, return_counts=True)
    return Votes(tuple(f"judge{j}" for j in range(votes.shape[1])), ("no", "yes"), rows[:, :-1], rows[:, -1], counts,
                 item_pattern=np.asarray(inv).ravel())


def labeled_table(votes: np.ndarray, gold: np.ndarray) -> CountTable:
    lab = gold >= 0
    return CountTable.from_pairs([votes.shape[1]] * int(lab.sum()), (votes[lab] == gold[lab, None]).sum(axis=1).tolist())


class TestCore:
    def test_without_unlabeled_items_the_result_is_fit_analyse(self) -> None:
        votes, gold, _ = make(0, items=40, labeled=40)
        table = labeled_table(votes, gold)
        ref = analyse(table, FitSettings(), np.random.default_rng(3))
        for v in (None, as_votes(votes, gold)):
            got = analyse_with_votes(table, v, FitSettings(), np.random.default_rng(3))
            assert plain(got.record()) == plain(ref.record())
            assert "unlabeled_items" not in plain(got.record())

    def test_vote_split_rows_and_counts(self) -> None:
        votes, gold, _ = make(1)
        table = labeled_table(votes, gold)
        got = analyse_with_votes(table, as_votes(votes, gold), FitSettings(), np.random.default_rng(5))
        d = plain(got.record())
        assert d["unlabeled_items"] == int((gold < 0).sum()) == 570
        assert d["unlabeled"]["labeled_items"] == int((gold >= 0).sum()) == 30
        assert d["unlabeled"]["method"] == METHOD_VOTES and d["unlabeled"]["used"] is True
        # the same draws of the same generator, on per-item arrays instead of the reader's patterns
        rng = np.random.default_rng(5)
        ref = analyse(table, FitSettings(), rng)
        est = estimate_errors(votes, gold, KS, 0.9, rng, labels_only=ref)
        for row, lo, v in zip(d["error_rates"], ref.rows, est.rows):
            assert row["labels_only"] == pytest.approx(lo.estimate, abs=1e-12)
            assert (row["labels_only_low"], row["labels_only_high"]) == pytest.approx((lo.low, lo.high), abs=1e-12)
            # the posterior draws depend on pattern order: the centre is exact, the interval within simulation noise
            assert row["estimate"] == pytest.approx(v.estimate, abs=1e-9)
            assert row["low"] == pytest.approx(v.low, abs=0.01) and row["high"] == pytest.approx(v.high, abs=0.01)
            assert row["low"] <= row["estimate"] <= row["high"]
            for key in ("binomial", "beta_binomial", "mixture", "empirical"):  # the baselines stay the labels'
                assert row[key] == lo.column(key)

    def test_no_unlabeled_asked_gives_labels_only_numbers(self) -> None:
        votes, gold, _ = make(2)
        table = labeled_table(votes, gold)
        ref = analyse(table, FitSettings(), np.random.default_rng(0))
        got = analyse_with_votes(table, as_votes(votes, gold), FitSettings(), np.random.default_rng(0), use_unlabeled=False)
        d = plain(got.record())
        assert d["unlabeled"]["method"] == METHOD_LABELS and "not used" in d["unlabeled"]["reason"]
        assert d["unlabeled_items"] == 570
        assert [r["estimate"] for r in d["error_rates"]] == [r.estimate for r in ref.rows]
        assert [(r["low"], r["high"]) for r in d["error_rates"]] == [(r.low, r.high) for r in ref.rows]

    def test_uninformative_verdicts_fall_back_to_labels_only(self) -> None:
        """Verdicts independent of the gold: the labels favour 'the split says nothing': labels-only numbers."""
        fell_back = 0
        for seed in range(4):
            votes, gold, _ = make(seed, items=300, labeled=40, noise=True)
            table = labeled_table(votes, gold)
            ref = analyse(table, FitSettings(), np.random.default_rng(seed))
            d = plain(analyse_with_votes(table, as_votes(votes, gold), FitSettings(), np.random.default_rng(seed)).record())
            if d["unlabeled"]["method"] == METHOD_LABELS:
                fell_back += 1
                assert d["unlabeled"]["reason"].startswith("labels only")
                assert [r["estimate"] for r in d["error_rates"]] == [r.estimate for r in ref.rows]
        assert fell_back >= 3

    def test_multiclass_exact_where_the_split_decides(self) -> None:
        """3 classes, 9 judges: 60 labeled items of informative judges, and 200 unlabeled items split 3-3-3 (every
        class tied at the top: the plurality cannot be wrong, so S = 3 exactly). The vote-split estimate is then
        exact: (sum of the labeled items' errors + 200 e_k(9, 3)) / 260, each from scipy's hypergeometric."""
        rng = np.random.default_rng(171)
        gold_l = rng.integers(0, 3, size=60)
        acc = rng.beta(4.0, 1.5, size=60)
        right = rng.random((60, 9)) < acc[:, None]
        other = (gold_l[:, None] + rng.integers(1, 3, size=(60, 9))) % 3
        votes_l = np.where(right, gold_l[:, None], other)
        votes_u = np.tile(np.repeat(np.arange(3), 3), (200, 1))
        votes, gold = np.vstack([votes_l, votes_u]), np.concatenate([gold_l, np.full(200, -1)])
        s_lab = (votes_l == gold_l[:, None]).sum(axis=1)
        table = CountTable.from_pairs([9] * 60, s_lab.tolist())
        v = Votes(tuple(f"j{j}" for j in range(9)), ("a", "b", "c"), votes, gold, np.ones(260))
        d = plain(analyse_with_votes(table, v, FitSettings(ks=(1, 3, 5)), np.random.default_rng(2)).record())
        assert d["unlabeled"]["labeled_items"] == 60 and d["unlabeled_items"] == 200 and d["unlabeled"]["method"] == METHOD_VOTES
        for row in d["error_rates"]:
            k = row["k"]
            want = (sum(hyper_error(9, int(x), k) for x in s_lab) + 200 * hyper_error(9, 3, k)) / 260
            assert row["estimate"] == pytest.approx(want, abs=1e-9)
            assert row["low"] <= row["estimate"] <= row["high"]

    @pytest.mark.slow  # seeded statistical check (the full suite runs it)
    def test_closer_to_the_whole_sets_error_than_labels_only(self) -> None:
        """12 seeds, 600 items, r = 30: mean |estimate - actual| at k = 1, 5, 11 below labels only's, the 90%
        intervals cover >= 75% of the checks (the actual error: over all items, exact per item)."""
        ours, labels, covered = [], [], 0
        per_s = {k: np.array([hyper_error(11, s, k) for s in range(12)]) for k in (1, 5, 11)}
        for seed in range(12):
            votes, gold, s = make(seed)
            d = plain(analyse_with_votes(labeled_table(votes, gold), as_votes(votes, gold), FitSettings(ks=(1, 5, 11)),
                                         np.random.default_rng(seed)).record())
            for row in d["error_rates"]:
                actual = float(per_s[row["k"]][s].mean())
                ours.append(abs(row["estimate"] - actual))
                labels.append(abs(row["labels_only"] - actual))
                covered += row["low"] <= actual <= row["high"]
        assert np.mean(ours) < np.mean(labels)
        assert covered / len(ours) >= 0.75


def document(seed: int = 1, **kw: Any) -> Any:
    """The typed fit document (fit_document.fit_document) of a toy data set."""
    votes, gold, _ = make(seed, **kw)
    table = labeled_table(votes, gold)
    result = analyse_with_votes(table, as_votes(votes, gold), FitSettings(), np.random.default_rng(0))
    return fit_document("fit", "toy", "toy.jsonl", table, result.record(), 0)


class TestReport:
    def test_items_stay_labeled_and_caption_states_both_counts_and_the_method(self) -> None:
        d = document()
        assert d.items == 30 and d.unlabeled_items == 570
        caption = error_view(d).caption
        assert "30 labeled + 570 unlabeled items" in caption and "all 600" in caption and "vote split" in caption
        assert json.loads(json.dumps(plain(d)))["unlabeled"]["model"]["labeled_splits"] >= 5
        view = error_view(d)
        assert view.columns[2] == "labels only"
        assert [row[2] for row in view.rows] == [f"{100 * r.labels_only:.1f}%" for r in d.error_rates]

    def test_fallback_caption_says_labels_only(self) -> None:
        for seed in range(4):
            d = document(seed, items=300, labeled=40, noise=True)
            if d.unlabeled.method == METHOD_LABELS:
                caption = error_view(d).caption
                assert "40 labeled + 260 unlabeled items" in caption and "covers the 40 labeled items" in caption
                assert "labels only" in caption
                return
        pytest.fail("no seed fell back")

    def test_no_unlabeled_items_no_new_keys_or_column(self) -> None:
        d = document(items=40, labeled=40)
        p = plain(d)
        assert "unlabeled_items" not in p and "unlabeled" not in p and "labels_only" not in p["error_rates"][0]
        assert "labels only" not in error_view(d).columns and "unlabeled" not in error_view(d).caption

    def test_summary_keeps_labeled_count(self) -> None:
        assert summary_view([document()]).rows[0][1] == "30"


class TestSavedFit:
    def test_round_trip_keeps_the_record_and_report_shows_it(self, tmp_path: Path) -> None:
        d = document()
        path = tmp_path / "toy.yaml"
        dump_fit(path, saved_document(d))
        saved = load_fit(path)
        assert saved.unlabeled_items == 570 and saved.unlabeled.method == METHOD_VOTES
        assert saved.error_rates[0].labels_only == pytest.approx(d.error_rates[0].labels_only)
        shown = api.report([str(path)]).documents[0]
        assert error_view(shown).caption == error_view(d).caption

    @pytest.mark.parametrize(("edit", "field"), [
        (lambda d: d.update(unlabeled="yes"), "'unlabeled'"),
        (lambda d: d["unlabeled"].update(method="magic"), "'unlabeled.method'"),
        (lambda d: d["unlabeled"].update(reason=3), "'unlabeled.reason'"),
        (lambda d: d["unlabeled"].update(model=[1]), "'unlabeled.model'"),
        (lambda d: d.update(unlabeled_items=-4), "'unlabeled_items'"),
        (lambda d: d.pop("unlabeled_items"), "'unlabeled_items'"),
        (lambda d: d["error_rates"][2].update(labels_only=1.5), "'error_rates[2].labels_only'"),
        (lambda d: d["error_rates"][0].update(labels_only_high="x"), "'error_rates[0].labels_only_high'"),
    ])
    def test_bad_records_name_the_field(self, tmp_path: Path, edit: Any, field: str) -> None:
        path = tmp_path / "bad.yaml"
        dump_fit(path, saved_document(document()))
        body = yaml.safe_load(path.read_text())
        edit(body)
        path.write_text(yaml.safe_dump(body))
        with pytest.raises(ParamsError, match=re.escape(f"field {field}")):
            load_fit(path)


class TestCli:
    """The command end to end in this process: datasets as a reader with unlabeled items hands them over."""

    @pytest.fixture
    def data(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        votes, gold, _ = make(4)
        path = tmp_path / "toy.jsonl"
        lab = gold >= 0
        with path.open("w") as fh:  # the labeled items as today's readers read them; the votes added below
            for row, g in zip(votes[lab], gold[lab]):
                fh.write(json.dumps({"judgments": [int(x == g) for x in row]}) + "\n")
        fit_api = importlib.import_module("betaconform_cli.api._fit")  # not api._fit: set only once something imported it
        real = fit_api.begin_read

        class Pending:
            def __init__(self, inner: Any) -> None:
                self.inner = inner
                self.failed = inner.failed  # the inputs of a batch that failed (none here)
                self.works_meanwhile = inner.works_meanwhile

            def result(self) -> list[Any]:
                return [replace(ds, votes=as_votes(votes, gold)) for ds in self.inner.result()]

        monkeypatch.setattr(fit_api, "begin_read", lambda *a, **kw: Pending(real(*a, **kw)))  # fit's api module
        return path

    def test_json_and_table(self, runner: Any, data: Path) -> None:
        from betaconform_cli.cli import app

        out = runner.invoke(app, ["fit", str(data), "--format", "json"])
        assert out.exit_code == 0, out.output
        d = json.loads(out.stdout)
        assert d["items"] == 30 and d["unlabeled_items"] == 570 and d["unlabeled"]["method"] == METHOD_VOTES
        assert all("labels_only" in r for r in d["error_rates"])
        text = runner.invoke(app, ["fit", str(data), "--no-chart"])
        assert text.exit_code == 0 and "30 labeled + 570 unlabeled items" in text.stdout

    def test_no_unlabeled_option(self, runner: Any, data: Path) -> None:
        from betaconform_cli.cli import app

        out = runner.invoke(app, ["fit", str(data), "--format", "json", "--no-unlabeled"])
        assert out.exit_code == 0, out.output
        d = json.loads(out.stdout)
        assert d["unlabeled"]["method"] == METHOD_LABELS
        assert [r["estimate"] for r in d["error_rates"]] == [r["labels_only"] for r in d["error_rates"]]

    def test_gate_checks_the_estimate_it_reports(self, runner: Any, data: Path) -> None:
        """A limit between the two upper bounds at k = 5: passes with the unlabeled items, fails without."""
        from betaconform_cli.cli import app

        highs = []
        for extra in ([], ["--no-unlabeled"]):
            out = runner.invoke(app, ["fit", str(data), "--format", "json", *extra])
            highs.append(next(r["high"] for r in json.loads(out.stdout)["error_rates"] if r["k"] == 5))
        assert highs[0] < highs[1]
        limit = f"{(highs[0] + highs[1]) / 2:.6f}"
        gate = ["--max-error", limit, "--at-k", "5", "--format", "json"]
        assert runner.invoke(app, ["fit", str(data), *gate]).exit_code == 0
        assert runner.invoke(app, ["fit", str(data), *gate, "--no-unlabeled"]).exit_code == 1
