"""`--labels FILE`: gold in a separate file joined by id gives the same dataset as gold written in the data."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from betaconform_cli.errors import InputError
from betaconform_cli.inputs import InputOptions, Keep, read_dataset
from betaconform_cli.inputs.patterns import as_dict

from .conftest import invoke
from .test_votes_inputs import draw, write_all


def strip_gold(tmp: Path, items: list[dict[str, Any]]) -> tuple[dict[str, Path], list[dict[str, Any]]]:
    """The items written without any gold (every format), and the gold as a list of {id, label}."""
    bare = [dict(it, gold=None) for it in items]
    sub = tmp / "bare"
    sub.mkdir()
    return write_all(sub, bare), [{"id": it["id"], "label": it["gold"]} for it in items if it["gold"] is not None]


def write_labels(tmp: Path, labels: list[dict[str, Any]], kind: str, id_name: str = "id", label_name: str = "label") -> Path:
    rows = [{id_name: r["id"], label_name: r["label"]} for r in labels]
    if kind == "jsonl":
        p = tmp / "gold.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return p
    p = tmp / f"gold.{ 'tsv' if kind == 'tsv' else 'csv'}"
    with open(p, "w", newline="") as fh:
        w = csv.DictWriter(fh, [id_name, label_name], delimiter="\t" if kind == "tsv" else ",")
        w.writeheader()
        w.writerows(rows)
    if kind == "parquet":
        import duckdb

        q = tmp / "gold.parquet"
        duckdb.connect().execute(f"COPY (SELECT * FROM read_csv('{p}', all_varchar = true)) TO '{q}' (FORMAT parquet)")
        return q
    return p


def cells(ds: Any) -> list[list[int]]:
    return np.asarray(ds.table.counts).tolist()


class TestJoin:
    @pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "parquet"])
    def test_same_as_gold_in_the_data(self, tmp_path: Path, kind: str) -> None:
        items = draw(seed=11, n=50)
        with_gold = write_all(tmp_path, items)
        bare, labels = strip_gold(tmp_path, items)
        gold = write_labels(tmp_path, labels, kind)
        for fmt in ("jsonl list", "jsonl keyed", "long csv", "long parquet", "wide csv", "wide parquet"):
            want = read_dataset(with_gold[fmt])
            got = read_dataset(bare[fmt], InputOptions(labels=str(gold)))
            assert cells(got) == cells(want) and got.unlabeled_items == want.unlabeled_items, (fmt, kind)
            assert as_dict(got.votes) == as_dict(want.votes), (fmt, kind)  # type: ignore[arg-type]

    def test_label_columns_are_named_or_guessed(self, tmp_path: Path) -> None:
        items = draw(seed=2, n=30)
        bare, labels = strip_gold(tmp_path, items)
        want = read_dataset(write_all(tmp_path, items)["long csv"])
        guessed = write_labels(tmp_path, labels, "csv", "question_id", "human_label")
        assert cells(read_dataset(bare["long csv"], InputOptions(labels=str(guessed)))) == cells(want)
        named = write_labels(tmp_path, labels, "csv", "key", "truth")
        with pytest.raises(InputError, match="no single id column"):
            read_dataset(bare["jsonl list"], InputOptions(labels=str(named)))
        ok = read_dataset(bare["jsonl list"], InputOptions(labels=str(named), item_col="key", gold_col="truth"))
        assert cells(ok) == cells(want)

    def test_gold_in_the_data_wins_where_they_agree(self, tmp_path: Path) -> None:
        items = draw(seed=4, n=40)
        paths = write_all(tmp_path, items)
        gold = write_labels(tmp_path, [{"id": it["id"], "label": it["gold"] or "A"} for it in items], "csv")
        for fmt in ("jsonl list", "long csv", "wide parquet"):
            try:
                ds = read_dataset(paths[fmt], InputOptions(labels=str(gold)))
            except InputError as exc:  # a labeled item whose gold is not "A" contradicts nothing: gold is theirs
                raise AssertionError(str(exc)) from None
            assert ds.unlabeled_items == 0 and ds.n_items == len(items), fmt

    def test_ids_that_match_no_item_are_a_note(self, tmp_path: Path) -> None:
        data = tmp_path / "v.csv"
        data.write_text("item_id,judge,verdict\na,1,A\na,2,B\nb,1,A\nb,2,A\n")
        gold = tmp_path / "g.csv"
        gold.write_text("id,label\na,A\nzz,B\nyy,A\n")
        ds = read_dataset(data, InputOptions(labels=str(gold)))
        assert ds.n_items == 1 and ds.unlabeled_items == 1
        assert ds.reading is not None and any("1 of its 3 labels matched" in n for n in ds.reading.notes)


class TestErrors:
    def test_contradiction_names_both_files(self, tmp_path: Path) -> None:
        gold = tmp_path / "g.csv"
        gold.write_text("id,label\nq1,A\nq2,B\n")
        j = tmp_path / "d.jsonl"
        j.write_text('{"id": "q1", "verdicts": ["A", "B"], "label": "A"}\n{"id": "q2", "verdicts": ["A", "B"], "label": "A"}\n')
        with pytest.raises(InputError, match=r"d.jsonl:2: field 'label': .*contradicts the labels file .*g.csv \(row 2"):
            read_dataset(j, InputOptions(labels=str(gold)))
        t = tmp_path / "d.csv"
        t.write_text("item_id,judge,verdict,gold\nq1,a,A,A\nq2,a,B,A\n")
        with pytest.raises(InputError, match=r"d.csv: row 2: column 'gold': .*contradicts the labels file .*\(row 2"):
            read_dataset(t, InputOptions(labels=str(gold)))
        w = tmp_path / "w.csv"
        w.write_text("id,a,b,gold\nq1,A,B,A\nq2,B,B, A\n")
        with pytest.raises(InputError, match=r"w.csv: row 2: column 'gold'"):
            read_dataset(w, InputOptions(labels=str(gold)))

    def test_numbers_that_agree_are_no_contradiction(self, tmp_path: Path) -> None:
        gold = tmp_path / "g.csv"
        gold.write_text("id,label\n1,1.0\n2,0\n")
        t = tmp_path / "d.csv"
        t.write_text("item_id,judge,verdict,gold\n1,a,1,1\n1,b,0,1\n2,a,0,\n2,b,0,\n")
        ds = read_dataset(t, InputOptions(labels=str(gold)))
        assert ds.n_items == 2 and ds.unlabeled_items == 0

    def test_repeated_id_in_the_labels_file(self, tmp_path: Path) -> None:
        """An id repeated with the same label is one label (a long table's rows); with another label, an error."""
        gold = tmp_path / "g.csv"
        gold.write_text("id,label\nq1,A\nq2,B\nq1,A\n")
        j = tmp_path / "d.jsonl"
        j.write_text('{"id": "q1", "verdicts": ["A", "B"]}\n')
        assert read_dataset(j, InputOptions(labels=str(gold))).table.items == 1
        gold.write_text("id,label\nq1,A\nq2,B\nq1,B\n")
        with pytest.raises(InputError, match=r"g.csv: row 3: column 'label': id 'q1' has two different labels \(\"A\" at row 1"):
            read_dataset(j, InputOptions(labels=str(gold)))

    def test_correctness_only_inputs_refuse_labels(self, tmp_path: Path) -> None:
        gold = tmp_path / "g.csv"
        gold.write_text("id,label\n1,A\n")
        j = tmp_path / "j.jsonl"
        j.write_text('{"id": 1, "judgments": [1, 0]}\n')
        t = tmp_path / "t.csv"
        t.write_text("item_id,judge,correct\n1,a,1\n")
        for p in (j, t):
            with pytest.raises(InputError, match="--labels gives gold to verdicts"):
                read_dataset(p, InputOptions(labels=str(gold)))

    def test_a_missing_labels_file(self, tmp_path: Path) -> None:
        j = tmp_path / "d.jsonl"
        j.write_text('{"id": "q1", "verdicts": ["A", "B"], "label": "A"}\n')
        with pytest.raises(InputError, match="cannot open the labels file"):
            read_dataset(j, InputOptions(labels=str(tmp_path / "nope.csv")))

    @pytest.mark.parametrize("command", ["fit", "doctor", "judges"])
    def test_every_command_takes_labels(self, runner: Any, tmp_path: Path, command: str) -> None:
        items = draw(seed=9, n=60)
        bare, labels = strip_gold(tmp_path, items)
        gold = write_labels(tmp_path, labels, "csv")
        res = invoke(runner, command, bare["long csv"], "--labels", gold, "-f", "json")
        assert res.exit_code == 0, res.output
        bad = tmp_path / "bad.csv"
        bad.write_text("id,label\nq0,A\nq0,B\n")
        res = invoke(runner, command, bare["long csv"], "--labels", bad)
        assert res.exit_code == 2 and "bad.csv: row 2" in res.output and "Traceback" not in res.output


class TestMoreFormats:
    def test_jsonl_notes_the_labels_it_used(self, tmp_path: Path) -> None:
        j = tmp_path / "d.jsonl"
        j.write_text('{"id": "a", "verdicts": ["A", "B"]}\n{"id": "b", "verdicts": ["A", "A"]}\n')
        gold = tmp_path / "g.csv"
        gold.write_text("id,label\na,A\nzz,B\n")
        ds = read_dataset(j, InputOptions(labels=str(gold)))
        assert ds.n_items == 1 and ds.unlabeled_items == 1
        assert ds.reading is not None and any("1 of its 2 labels matched" in n for n in ds.reading.notes)

    def test_promptfoo_cases_without_a_rating_take_the_labels_file(self, tmp_path: Path) -> None:
        fixtures = Path(__file__).parent / "fixtures" / "promptfoo"
        doc = json.loads((fixtures / "results_human.expected.json").read_text())
        before = read_dataset(fixtures / "results_human.jsonl", InputOptions(), Keep.JUDGMENTS)
        unrated = [it for it in doc["items"] if it["gold"] is None and any(v is not None for v in it["verdicts"])]
        assert len(unrated) == before.unlabeled_items == 3
        gold = tmp_path / "g.csv"
        with open(gold, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "label"])
            w.writerows([it["id"], "pass"] for it in unrated)
        after = read_dataset(fixtures / "results_human.jsonl", InputOptions(labels=str(gold)), Keep.JUDGMENTS)
        assert after.unlabeled_items == 0 and after.n_items == before.n_items + 3
        rated = next(it for it in doc["items"] if it["gold"] is not None)
        with open(gold, "a", newline="") as fh:
            csv.writer(fh).writerow([rated["id"], "fail" if rated["gold"] == "pass" else "pass"])
        with pytest.raises(InputError, match="contradicts the labels file"):
            read_dataset(fixtures / "results_human.jsonl", InputOptions(labels=str(gold)))
