"""Every reader keeps what the judges said (Dataset.votes): labeled and unlabeled items, the same in every format.

The truth is drawn here (a seeded Generator) and written in each format; every reader's Votes must equal the
truth's patterns (patterns.as_dict: independent of judge, class and row order), and the labeled histogram must be
what it was (unlabeled items are not in Dataset.table).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from betaconform_cli.errors import InputError
from betaconform_cli.inputs import InputOptions, Keep, read_dataset
from betaconform_cli.inputs.patterns import as_dict, class_text

JUDGES = ("gpt", "claude", "llama", "mistral")


def draw(seed: int = 7, n: int = 80) -> list[dict[str, Any]]:
    """Items with verdicts among A/B/C (some missing), about half without gold; some written with spaces."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        gold = "ABC"[rng.integers(3)]
        verdicts: dict[str, str | None] = {}
        for j in JUDGES:
            r = rng.random()
            v = gold if r < 0.6 else "ABC"[rng.integers(3)] if r < 0.9 else None
            verdicts[j] = None if v is None else (f" {v}" if rng.random() < 0.1 else v)
        if all(v is None for v in verdicts.values()):
            verdicts["gpt"] = gold
        out.append({"id": f"q{i}", "gold": gold if rng.random() < 0.5 else None, "verdicts": verdicts})
    return out


def truth(items: list[dict[str, Any]]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for it in items:
        key = (tuple(sorted((j, v.strip()) for j, v in it["verdicts"].items() if v is not None)), it["gold"])
        out[key] = out.get(key, 0) + 1
    return out


def labeled_histogram(items: list[dict[str, Any]]) -> dict[tuple[int, int], int]:
    out: dict[tuple[int, int], int] = {}
    for it in items:
        if it["gold"] is None:
            continue
        given = [v.strip() for v in it["verdicts"].values() if v is not None]
        key = (len(given), sum(v == it["gold"] for v in given))
        out[key] = out.get(key, 0) + 1
    return out


def table_cells(ds: Any) -> dict[tuple[int, int], int]:
    arr = np.asarray(ds.table.counts)
    return {(k, s): int(arr[k, s]) for k in range(arr.shape[0]) for s in range(arr.shape[1]) if arr[k, s]}


def write_all(tmp: Path, items: list[dict[str, Any]], seed: int = 1) -> dict[str, Path]:
    """The items in every format: JSONL (list and keyed verdicts, label null or absent), long and wide tables (CSV
    with empty gold, Parquet with NULL gold), long rows in a shuffled order."""
    import duckdb

    rng = np.random.default_rng(seed)
    paths: dict[str, Path] = {}
    with open(tmp / "list.jsonl", "w") as fh:
        for k, it in enumerate(items):
            rec: dict[str, Any] = {"id": it["id"], "verdicts": [it["verdicts"][j] for j in JUDGES]}
            if it["gold"] is not None or k % 2:
                rec["label"] = it["gold"]  # null on odd lines, absent on even ones
            fh.write(json.dumps(rec) + "\n")
    paths["jsonl list"] = tmp / "list.jsonl"
    with open(tmp / "dict.jsonl", "w") as fh:
        for it in items:
            keys = list(JUDGES)
            rng.shuffle(keys)
            fh.write(json.dumps({"id": it["id"], "verdicts": {j: it["verdicts"][j] for j in keys if it["verdicts"][j] is not None},
                                 "label": it["gold"]}) + "\n")
    paths["jsonl keyed"] = tmp / "dict.jsonl"
    long_rows = [(it["id"], j, it["verdicts"][j] or "", it["gold"] or "") for it in items for j in JUDGES]
    order = rng.permutation(len(long_rows))
    for name, rows in (("long.csv", long_rows), ("shuffled.csv", [long_rows[i] for i in order])):
        with open(tmp / name, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["item_id", "judge", "verdict", "gold"])
            w.writerows(rows)
    paths["long csv"], paths["long csv shuffled"] = tmp / "long.csv", tmp / "shuffled.csv"
    with open(tmp / "wide.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", *JUDGES, "gold"])
        w.writerows([[it["id"], *[it["verdicts"][j] or "" for j in JUDGES], it["gold"] or ""] for it in items])
    paths["wide csv"] = tmp / "wide.csv"
    con = duckdb.connect()
    for src, dst in (("long.csv", "long.parquet"), ("wide.csv", "wide.parquet")):
        # empty cells become NULL (Parquet's missing value), text kept as written (spaces included)
        con.execute(f"COPY (SELECT * FROM read_csv('{tmp / src}', all_varchar = true)) TO '{tmp / dst}' (FORMAT parquet)")
    paths["long parquet"], paths["wide parquet"] = tmp / "long.parquet", tmp / "wide.parquet"
    con.close()
    return paths


class TestEveryFormat:
    def test_unlabeled_items_read_identically(self, tmp_path: Path) -> None:
        items = draw()
        want = truth(items)
        unlabeled = sum(it["gold"] is None for it in items)
        hist = labeled_histogram(items)
        assert 10 < unlabeled < 70
        for fmt, path in write_all(tmp_path, items).items():
            for keep in (Keep.COUNTS, Keep.JUDGMENTS):
                ds = read_dataset(path, InputOptions(), keep)
                assert ds.votes is not None, fmt
                got = as_dict(ds.votes)
                if fmt == "jsonl list":  # judges by position: 1, 2, ...
                    got = {(tuple(sorted((JUDGES[int(j) - 1], c) for j, c in k)), g): n for (k, g), n in got.items()}
                assert got == want, (fmt, keep)
                assert ds.unlabeled_items == unlabeled and ds.votes.labeled_items == ds.n_items, (fmt, keep)
                assert table_cells(ds) == hist, (fmt, keep)  # the labeled histogram as before
                assert ds.skipped == 0, (fmt, keep)  # unlabeled items are not skipped

    def test_same_data_in_another_order_gives_the_same_votes(self, tmp_path: Path) -> None:
        paths = write_all(tmp_path, draw(seed=3))
        a, b = read_dataset(paths["long csv"]).votes, read_dataset(paths["long csv shuffled"]).votes
        assert a is not None and b is not None
        assert a.judges == b.judges and a.classes == b.classes
        for x, y in ((a.patterns, b.patterns), (a.gold, b.gold), (a.counts, b.counts)):
            np.testing.assert_array_equal(x, y)

    @pytest.mark.parametrize("fmt", ["jsonl keyed", "long csv", "long parquet", "wide csv", "wide parquet"])
    def test_items_keep_their_pattern_and_id(self, tmp_path: Path, fmt: str) -> None:
        items = draw(seed=5, n=30)
        ds = read_dataset(write_all(tmp_path, items)[fmt], InputOptions(), Keep.JUDGMENTS)
        votes = ds.votes
        assert votes is not None and votes.ids == tuple(it["id"] for it in items)
        verdicts, gold = votes.per_item()
        for it, row, g in zip(items, verdicts, gold):
            assert (None if g < 0 else votes.classes[g]) == it["gold"]
            assert {votes.judges[j]: votes.classes[c] for j, c in enumerate(row) if c >= 0} == {
                j: v.strip() for j, v in it["verdicts"].items() if v is not None}


class TestClasses:
    @pytest.mark.parametrize("a,b", [(1, "1"), (1.0, " 1 "), ("1.0", 1), (" A", "A "), (True, "true"), (0, "-0")])
    def test_one_class(self, a: Any, b: Any) -> None:
        assert class_text(a) == class_text(b)

    @pytest.mark.parametrize("a,b", [("A", "a"), (1, "one"), (2, 20), (True, 1)])
    def test_two_classes(self, a: Any, b: Any) -> None:
        assert class_text(a) != class_text(b)

    def test_classes_agree_with_the_scorer(self) -> None:
        from betaconform_cli.inputs.values import agree

        vals = [1, "1", 1.0, " 1", "1.5", 1.5, "A", " A", "a", True, "true", False, 0, "0", "no"]
        for a in vals:
            for b in vals:
                assert (class_text(a) == class_text(b)) == bool(agree(a, b)), (a, b)

    @pytest.mark.parametrize("v", [None, "", " ", "NA", "n/a", "null", float("nan")])
    def test_missing(self, v: Any) -> None:
        assert class_text(v) is None

    def test_numbers_sort_by_value(self, tmp_path: Path) -> None:
        p = tmp_path / "n.jsonl"
        p.write_text('{"verdicts": [10, 2, "b"], "label": 2}\n{"verdicts": [1, "a"]}\n')
        assert read_dataset(p).votes.classes == ("1", "2", "10", "a", "b")  # type: ignore[union-attr]


class TestWhatHasNoVotes:
    def test_correctness_only_inputs(self, tmp_path: Path) -> None:
        for name, text in (("j.jsonl", '{"judgments": [1, 0, 1]}\n'), ("c.jsonl", '{"correct": 2, "judges": 3}\n'),
                           ("l.csv", "item_id,judge,correct\n1,a,1\n1,b,0\n"), ("w.csv", "id,a,b\n1,1,0\n")):
            p = tmp_path / name
            p.write_text(text)
            ds = read_dataset(p)
            assert ds.votes is None and ds.unlabeled_items == 0, name

    def test_tolerance_stays_labeled_only(self, tmp_path: Path) -> None:
        p = tmp_path / "t.csv"
        p.write_text("item_id,judge,score,reference\n1,a,0.5,0.6\n1,b,0.9,0.6\n2,a,0.1,\n2,b,0.2,\n")
        ds = read_dataset(p, InputOptions(tolerance=0.15))
        assert ds.votes is None and ds.n_items == 1 and ds.skipped == 1
        j = tmp_path / "t.jsonl"
        j.write_text('{"verdicts": [0.5, 0.9], "label": 0.6}\n{"verdicts": [0.1, 0.2]}\n')
        with pytest.raises(InputError, match=":2: field 'label'.*tolerance"):
            read_dataset(j, InputOptions(tolerance=0.15))

    def test_only_unlabeled_items_is_an_error(self, tmp_path: Path) -> None:
        j = tmp_path / "u.jsonl"
        j.write_text('{"verdicts": ["A", "B"]}\n{"verdicts": ["A", "A"], "label": null}\n')
        with pytest.raises(InputError, match="no labeled items: 2 items"):
            read_dataset(j)


class TestRepeatedIds:
    @pytest.mark.parametrize("keep", ["first", "last"])
    def test_an_unlabeled_repeat_is_dropped_from_the_votes(self, tmp_path: Path, keep: str) -> None:
        j = tmp_path / "r.jsonl"
        j.write_text('{"id": 1, "verdicts": ["A", "B"], "label": "A"}\n{"id": 2, "verdicts": ["A", "A"]}\n'
                     '{"id": 2, "verdicts": ["B", "B"]}\n')
        votes = read_dataset(j, InputOptions(duplicates=keep)).votes
        assert votes is not None and votes.unlabeled_items == 1 and votes.labeled_items == 1
        kept = "A" if keep == "first" else "B"
        assert as_dict(votes)[((("1", kept), ("2", kept)), None)] == 1


class TestTools:
    """Files written by the real tools (tests/fixtures): promptfoo cases without a human rating are unlabeled."""

    def test_promptfoo_votes_equal_the_same_data_as_a_long_table(self, tmp_path: Path) -> None:
        fixtures = Path(__file__).parent / "fixtures" / "promptfoo"
        doc = json.loads((fixtures / "results_human.expected.json").read_text())
        ds = read_dataset(fixtures / "results_human.jsonl")
        assert ds.votes is not None and ds.unlabeled_items == 3
        judges = [j["name"] for j in doc["judges"]]
        p = tmp_path / "same.csv"
        with open(p, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["item_id", "judge", "verdict", "gold"])
            one = {"pass": 1, "fail": 0, None: ""}
            for it in doc["items"]:
                w.writerows([it["id"], j, one[v], one[it["gold"]]] for j, v in zip(judges, it["verdicts"]))
        assert as_dict(read_dataset(p).votes) == as_dict(ds.votes)  # type: ignore[arg-type]

    def test_inspect_samples_without_usable_gold(self, tmp_path: Path) -> None:
        fixtures = Path(__file__).parent / "fixtures" / "inspect" / "main_json"
        log = next(iter(sorted(fixtures.glob("*.json"))))
        doc = json.loads(log.read_text())
        dropped = 0
        for k, s in enumerate(doc["samples"]):
            if k % 3 == 0 and isinstance(s.get("metadata"), dict):
                s["metadata"].pop("human", None)
                dropped += 1
        p = tmp_path / log.name
        p.write_text(json.dumps(doc))
        full = read_dataset(log, InputOptions(label_field="metadata.human"))
        part = read_dataset(p, InputOptions(label_field="metadata.human"))
        assert full.votes is not None and part.votes is not None and dropped > 0
        assert part.unlabeled_items == dropped and full.unlabeled_items == 0
        # the same verdicts, some without gold now
        strip = {(k, None): 0 for k, _ in as_dict(full.votes)}
        for (k, _), n in as_dict(full.votes).items():
            strip[(k, None)] += n
        assert sum(as_dict(part.votes).values()) == sum(as_dict(full.votes).values())
        assert {k for k, _ in as_dict(part.votes)} <= {k for k, _ in as_dict(full.votes)}


class TestCommands:
    """Every command reads a file with unlabeled items (the labeled histogram is what they use today)."""

    @pytest.mark.parametrize("command", ["fit", "doctor", "judges", "score"])
    def test_jsonl_and_tables_with_unlabeled_items(self, runner: Any, tmp_path: Path, command: str) -> None:
        from .conftest import invoke

        paths = write_all(tmp_path, draw(seed=13, n=60))
        for fmt in ("jsonl list", "jsonl keyed", "long csv", "wide parquet"):
            res = invoke(runner, command, paths[fmt], "-f", "json")
            if command == "score" and res.exit_code == 2:
                continue  # score needs its own options on some inputs; what matters: no internal error
            assert res.exit_code == 0, (fmt, res.output[-500:])

    def test_judge_names_and_votes_name_the_same_judges(self, tmp_path: Path) -> None:
        paths = write_all(tmp_path, draw(seed=13, n=60))
        for fmt in ("jsonl list", "jsonl keyed", "long csv", "wide csv"):
            ds = read_dataset(paths[fmt], InputOptions(), Keep.JUDGMENTS)
            assert ds.votes is not None and set(ds.judge_names) == set(ds.votes.judges), fmt
