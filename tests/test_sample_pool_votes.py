"""`sample`'s live loop with the pool's verdicts (issue 17 item 5): the join by id, the rule on the vote-split
estimate, and that it stops with fewer labels than the labels alone at the same honesty."""

from __future__ import annotations

import numpy as np
import pytest

from betaconform_cli.distributions import item_error_table
from betaconform_cli.inputs import Item
from betaconform_cli.inputs.dataset import Votes
from betaconform_cli.stopping.live import decide, decide_with_votes, pool_verdicts, uses_pool_votes, vote_check
from betaconform_cli.stopping.rules import ConformalRule, PrecisionRule, VarianceRule


def assert_live_document(text: str) -> None:
    """The live document (with the pool's verdicts, used or not) is valid against docs/schema/sample.json and
    decodes as the live type (stopping/document.py)."""
    import json
    from pathlib import Path

    import jsonschema
    import msgspec

    from betaconform_cli.stopping.document import live_document_type

    schema = json.loads((Path(__file__).resolve().parent.parent / "docs" / "schema" / "sample.json").read_text())
    errors = [e.message for e in jsonschema.validators.validator_for(schema)(schema).iter_errors(json.loads(text))]
    assert not errors, errors[:3]
    msgspec.json.decode(text, type=live_document_type())


def votes_of(rows: list[list[int]], gold: list[int], classes: tuple[str, ...], ids: list[str]) -> Votes:
    """A reader's Votes with one pattern per item (kept in input order, with ids)."""
    n = len(rows)
    return Votes(judges=tuple(f"j{i}" for i in range(len(rows[0]))), classes=classes, patterns=np.array(rows),
                 gold=np.array(gold), counts=np.ones(n, dtype=np.int64), item_pattern=np.arange(n), ids=tuple(ids))


def synthetic_pool(n: int, judges: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Binary verdicts of `judges` judges on n items of two kinds (each item's judges right with its own chance, Beta(3, 1));
    (verdicts, gold side)."""
    rng = np.random.default_rng(seed)
    side = rng.integers(0, 2, size=n)
    p = rng.beta(3.0, 1.0, size=n)
    right = rng.random((n, judges)) < p[:, None]
    return np.where(right, side[:, None], 1 - side[:, None]), side


class TestJoin:
    def test_gold_by_id_and_class_name(self) -> None:
        """Gold comes from the labeled file by id and class name (its class order differs from the pool's); gold the
        pool itself carries is not a label; a class only the labeled file names is added."""
        pool = votes_of([[0, 0, 1], [1, 1, 1], [0, 1, 0], [1, 0, 0]], [0, -1, 1, -1], ("yes", "no"), ["a", "b", "c", "d"])
        lab = votes_of([[1, 1, 0], [0, 0, 0]], [1, 2], ("no", "yes", "maybe"), ["b", "a"])
        joined, why = pool_verdicts(pool, lab)
        assert joined is not None, why
        # b's gold "yes" is code 0 in the pool; a's gold "maybe" is new: code 2; c's own gold in the pool is dropped
        assert joined.gold.tolist() == [2, 0, -1, -1]
        assert joined.verdicts.tolist() == [[0, 0, 1], [1, 1, 1], [0, 1, 0], [1, 0, 0]]
        assert joined.n_classes == 3 and "2 labeled and 2 unlabeled" in why

    @pytest.mark.parametrize("case", ["no labeled votes", "pool without ids", "labeled without ids", "no overlap"])
    def test_no_join(self, case: str) -> None:
        pool = votes_of([[0, 1], [1, 1]], [-1, -1], ("x", "y"), ["a", "b"])
        lab = votes_of([[0, 1]], [0], ("x", "y"), ["a"])
        if case == "no labeled votes":
            lab = None  # type: ignore[assignment]
        elif case == "pool without ids":
            pool = Votes(pool.judges, pool.classes, pool.patterns, pool.gold, pool.counts)
        elif case == "labeled without ids":
            lab = Votes(lab.judges, lab.classes, lab.patterns, lab.gold, lab.counts)
        else:
            lab = votes_of([[0, 1]], [0], ("x", "y"), ["z"])
        joined, why = pool_verdicts(pool, lab)
        assert joined is None and why


class TestRule:
    def test_which_rules(self) -> None:
        assert uses_pool_votes(PrecisionRule())
        assert not uses_pool_votes(PrecisionRule(method="sequential"))
        assert not uses_pool_votes(PrecisionRule(patience=2))
        assert not uses_pool_votes(ConformalRule()) and not uses_pool_votes(VarianceRule())
        with pytest.raises(ValueError):
            vote_check(ConformalRule(), np.zeros((3, 3), dtype=int), np.array([0, -1, -1]), np.random.default_rng(0))

    def test_threshold(self) -> None:
        """Stops exactly when the widest half-width over the checked ks is at most the target and r >= min_samples;
        the half-width is the vote-split interval's at the monitoring level (independently: the rows' own)."""
        verdicts, side = synthetic_pool(200, 7, 1)
        gold = np.full(200, -1)
        gold[:40] = side[:40]
        items = [Item(7, int((verdicts[i] == side[i]).sum())) for i in range(40)]
        base = PrecisionRule(target=0.05, ks=(1, 3, 5, 7))
        check = vote_check(base, verdicts, gold, np.random.default_rng(5))
        assert check.estimate.confidence_level == pytest.approx(0.95)
        halves = [(r.high - r.low) / 2 for r in check.estimate.rows]
        assert check.half_width == pytest.approx(max(halves)) and [r.k for r in check.estimate.rows] == [1, 3, 5, 7]
        above = PrecisionRule(target=check.half_width + 1e-9, ks=(1, 3, 5, 7))
        below = PrecisionRule(target=check.half_width - 1e-9, ks=(1, 3, 5, 7))
        d_above, _ = decide_with_votes(above, items, verdicts, gold, np.random.default_rng(5))
        d_below, _ = decide_with_votes(below, items, verdicts, gold, np.random.default_rng(5))
        assert d_above.stopped_by == "rule" and d_above.stop_at == 40 and d_above.more == 0
        assert not d_below.stopped and d_below.more >= 1 and d_below.statistic == pytest.approx(check.half_width)
        late = PrecisionRule(target=check.half_width + 1e-9, ks=(1, 3, 5, 7), min_samples=41)
        assert not decide_with_votes(late, items, verdicts, gold, np.random.default_rng(5))[0].stopped

    def test_every_pool_item_labeled(self) -> None:
        """Nothing left unlabeled: the vote split has nothing to add, and the decision is the labels-only rule's
        (a stop: by the rule or with the pool exhausted)."""
        verdicts, side = synthetic_pool(30, 5, 2)
        items = [Item(5, int((verdicts[i] == side[i]).sum())) for i in range(30)]
        rule = PrecisionRule(target=1e-6, ks=(1, 3))
        d, check = decide_with_votes(rule, items, verdicts, side.copy(), np.random.default_rng(0))
        base = decide(rule, items, np.random.default_rng(0), 30)
        assert not check.estimate.used_unlabeled
        assert d.stopped and d.stopped_by == base.stopped_by and d.more == 0


@pytest.mark.slow  # seeded statistical check (the full suite runs it)
class TestFewerLabels:
    @pytest.mark.usefixtures("forecast_unread")  # batches of 10: the forecast's N is never read
    def test_stops_sooner_and_stays_within_target(self) -> None:
        """The live loop (batches of 10, target 0.05) on pools whose split tells right from wrong: with the pool's
        verdicts it stops with fewer labels than the labels alone, and its estimate at the stop is within the
        target of the pool's exact error (computed here from every item's gold) at every checked k."""
        ks = (1, 3, 5, 7, 9, 11)
        rule = PrecisionRule(target=0.05, ks=ks)
        stops: dict[str, list[int]] = {"ids": [], "votes": []}
        within = []
        for seed in range(4):  # measured: stops 120-130 vs 130-150, estimate within 0.05 in 3 of 4
            verdicts, side = synthetic_pool(300, 11, 10 + seed)
            correct = (verdicts == side[:, None]).sum(axis=1)
            truth = np.array([item_error_table(11, k)[correct].mean() for k in ks])
            order = np.random.default_rng(seed).permutation(300)
            items = [Item(11, int(correct[i])) for i in order]
            done = {"ids": False, "votes": False}
            for r in range(10, 310, 10):
                if not done["ids"] and decide(rule, items[:r], np.random.default_rng(r), 300).stopped:
                    stops["ids"].append(r)
                    done["ids"] = True
                if not done["votes"]:
                    gold = np.full(300, -1)
                    gold[order[:r]] = side[order[:r]]
                    d, check = decide_with_votes(rule, items[:r], verdicts, gold, np.random.default_rng(r))
                    if d.stopped:
                        stops["votes"].append(r)
                        done["votes"] = True
                        est = np.array([row.estimate for row in check.estimate.rows])
                        within.append(bool(np.all(np.abs(est - truth) <= 0.05)))
                if all(done.values()):
                    break
        assert np.mean(stops["votes"]) < np.mean(stops["ids"]) and all(v <= i for v, i in zip(stops["votes"], stops["ids"])), stops
        assert sum(within) >= 3, within


class TestApi:
    """api.sample_live with a pool whose reader kept the verdicts (Dataset.votes with ids): the input layer's readers
    are stood in for by a reader that returns such datasets, so the wiring is checked here whatever format fills them."""

    def _patch(self, monkeypatch: pytest.MonkeyPatch, tmp_path, pool_format: str):  # type: ignore[no-untyped-def]
        import dataclasses
        import json

        from betaconform_cli import api
        from betaconform_cli.api import _sample  # noqa: F401  (api._sample exists once loaded: run alone, nothing had)
        from betaconform_cli.counts import CountTable
        from betaconform_cli.inputs import Dataset

        verdicts, side = synthetic_pool(200, 11, 3)
        ids = [f"q{i}" for i in range(200)]
        classes = ("A", "B")
        correct = (verdicts == side[:, None]).sum(axis=1)
        lab_n = 60
        pool_path = tmp_path / f"pool.{pool_format}"
        lab_path = tmp_path / "lab.jsonl"
        if pool_format == "jsonl":
            pool_path.write_text("".join(json.dumps({"id": i, "x": 1}) + "\n" for i in ids))
        else:
            pool_path.write_text("id,judge,verdict\n" + "".join(f"{i},j0,A\n" for i in ids))
        lab_path.write_text("".join(json.dumps({"id": ids[i], "judgments": [int(v == side[i]) for v in verdicts[i]]}) + "\n"
                                    for i in range(lab_n)))
        real = api._sample.read_inputs

        def fake(arguments, opts, keep):  # type: ignore[no-untyped-def]
            (ds,) = real(arguments, opts, keep) if arguments[0] == str(lab_path) else (None,)
            if ds is not None:  # the labeled file: its items as read, plus their verdicts and gold
                v = votes_of(verdicts[:lab_n].tolist(), side[:lab_n].tolist(), classes, ids[:lab_n])
                return [dataclasses.replace(ds, votes=v)]
            v = votes_of(verdicts.tolist(), [-1] * 200, classes, ids)
            return [Dataset("pool", arguments[0], CountTable.from_pairs([11], [int(correct[0])]), "verdicts", votes=v)]

        monkeypatch.setattr(api._sample, "read_inputs", fake)  # the module of sample's api function reads the inputs
        return api, str(lab_path), str(pool_path), ids[:lab_n]

    @pytest.mark.parametrize("pool_format", ["jsonl", "csv"])
    def test_pool_verdicts_used(self, monkeypatch: pytest.MonkeyPatch, tmp_path, pool_format: str) -> None:  # type: ignore[no-untyped-def]
        from betaconform_cli.stopping.rules import PrecisionRule

        api, lab, pool, labeled = self._patch(monkeypatch, tmp_path, pool_format)
        rule = PrecisionRule(target=0.01, ks=(1, 3, 5))
        rep = api.sample_live(lab, rule, pool, batch=5)
        doc = rep.document
        pv = doc.pool_verdicts
        assert pv.used is True and pv.labeled_items == 60 and pv.unlabeled_items == 140
        assert doc.statistic == pytest.approx(pv.half_width) and not doc.stopped
        assert "pool items' verdicts" in doc.message
        assert_live_document(rep.json())
        nxt = [__import__("json").loads(x) for x in rep.next_lines]
        assert len(nxt) == 5 and not {n["id"] for n in nxt} & set(labeled)
        if pool_format == "jsonl":
            assert all(n.get("x") == 1 for n in nxt)  # a JSON Lines pool's own lines
        else:
            assert all(set(n) == {"id"} for n in nxt)

    def test_other_rules_say_why_not(self, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
        api, lab, pool, _ = self._patch(monkeypatch, tmp_path, "jsonl")
        rep = api.sample_live(lab, VarianceRule(), pool)
        doc = rep.document
        assert doc.pool_verdicts.used is False and "labels" in doc.pool_verdicts.reason
        assert_live_document(rep.json())


class TestCli:
    """The real readers: a JSON Lines pool of verdicts without gold, the labeled file with gold."""

    def _files(self, tmp_path, n: int = 200, lab: int = 60):  # type: ignore[no-untyped-def]
        import csv
        import json

        verdicts, side = synthetic_pool(n, 9, 4)
        judges = [f"j{i}" for i in range(9)]
        rows = [{"id": f"q{i}", "label": "AB"[side[i]], "verdicts": {j: "AB"[v] for j, v in zip(judges, verdicts[i])}}
                for i in range(n)]
        (tmp_path / "pool.jsonl").write_text("".join(json.dumps({**r, "label": None}) + "\n" for r in rows))
        (tmp_path / "lab.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:lab]))
        with open(tmp_path / "pool.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "judge", "verdict", "gold"])
            for r in rows:
                for j, v in r["verdicts"].items():
                    w.writerow([r["id"], j, v, ""])
        with open(tmp_path / "wide.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "gold", *judges])
            for r in rows:
                w.writerow([r["id"], "", *r["verdicts"].values()])
        return rows

    def test_jsonl_pool_verdicts(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        import json

        from typer.testing import CliRunner

        from betaconform_cli.cli import app

        self._files(tmp_path)
        res = CliRunner().invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / "pool.jsonl"),
                                       "--rule", "precision", "--target", "0.01", "--batch", "3", "-f", "json",
                                       "-o", str(tmp_path / "next.jsonl")])
        assert res.exit_code == 1, res.output
        doc = json.loads(res.stdout)
        assert doc["pool_verdicts"]["used"] is True and doc["pool_verdicts"]["unlabeled_items"] == 140
        nxt = [json.loads(x) for x in (tmp_path / "next.jsonl").read_text().splitlines()]
        assert len(nxt) == 3 and all(int(x["id"][1:]) >= 60 and x["label"] is None for x in nxt)
        # the same loop with the conformal rule: the labels decide, and the JSON says why
        res = CliRunner().invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / "pool.jsonl"), "-f", "json"])
        assert json.loads(res.stdout)["pool_verdicts"]["used"] is False

    @pytest.mark.parametrize("table", ["pool.csv", "wide.csv"])
    def test_table_pool(self, tmp_path, table: str) -> None:  # type: ignore[no-untyped-def]
        """A long or wide CSV pool (empty gold): its verdicts are used, the next items are written as {"id": ...} lines."""
        import json

        from typer.testing import CliRunner

        from betaconform_cli.cli import app

        self._files(tmp_path)
        res = CliRunner().invoke(app, ["sample", str(tmp_path / "lab.jsonl"), "--pool", str(tmp_path / table),
                                       "--rule", "precision", "--target", "0.01", "--batch", "4", "-f", "json",
                                       "-o", str(tmp_path / "next.jsonl")])
        assert res.exit_code == 1, res.output
        doc = json.loads(res.stdout)
        assert doc["pool_verdicts"]["used"] is True and doc["pool_verdicts"]["unlabeled_items"] == 140
        nxt = [json.loads(x) for x in (tmp_path / "next.jsonl").read_text().splitlines()]
        assert len(nxt) == 4 and all(set(x) == {"id"} and int(x["id"][1:]) >= 60 for x in nxt)
