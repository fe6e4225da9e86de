"""Clusters everywhere (issue 29.3): one per-item cluster key (`cluster_field=`, `--cluster-field`) read once by the
inputs and counted by fit, judges (its agreement figures included), score, sample and doctor.

Truths are computed here independently: the cluster-robust covariance by a plain loop over clusters, Wilson's
interval of items that are exact triplicates by the interval of the items once (Kish: three copies of an item in one
cluster carry one item's information, and the design effect is exactly 3), and the intervals' growth by comparing
the same data read with and without clusters.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import betaconform_cli as bc
from betaconform_cli.cli import app
from betaconform_cli.inputs.patterns import build
from betaconform_cli.judges import agreement as ag
from betaconform_cli.judges.clustered import cell_covariance, compositions
from betaconform_cli.judges.gold import votes_agreement

ROOT = Path(__file__).resolve().parents[1]
ROWS = [json.loads(line) for line in (ROOT / "sample_data" / "pairwise_verdicts.jsonl").read_text().splitlines()]
TRIPLED = [dict(r, id=f"{r['id']}#{e}", prompt=r["id"]) for r in ROWS for e in range(3)]  # 3 epochs of each item


def _votes(rows: list[dict], clusters: list[str] | None) -> object:
    items = [(tuple(r["verdicts"][:4]), r["label"]) for r in rows]
    return build([f"j{i}" for i in range(4)], {}, items, [r["id"] for r in rows], clusters)


def _figures(agreement: object) -> list[tuple[float, float]]:
    out = []
    for row in agreement.judges:  # type: ignore[attr-defined]
        f = row.labels
        out += [(x.low, x.high) for x in (f.accuracy, *f.recall, f.kappa, f.ac1, f.alpha) if x is not None]
    p = agreement.panel  # type: ignore[attr-defined]
    return out + [(x.low, x.high) for x in (p.fleiss_kappa, p.alpha) if x is not None]


def _agreement(rows: list[dict], clusters: list[str] | None) -> object:
    return votes_agreement(_votes(rows, clusters), [f"j{i}" for i in range(4)], (), 0.9, np.random.default_rng(7),
                           use_unlabeled=False)


class TestAgreement:
    def test_every_item_its_own_cluster_is_todays_interval(self):
        # the cluster bootstrap over singleton clusters is the item bootstrap draw for draw (same seed), and the
        # design effects are 1: every interval equals the one read without clusters
        plain = _figures(_agreement(ROWS, None))
        own = _figures(_agreement(ROWS, [r["id"] for r in ROWS]))
        assert len(plain) == len(own) > 20
        np.testing.assert_allclose(own, plain, rtol=0, atol=1e-9)

    def test_epochs_as_clusters_widen_every_interval(self):
        plain = _figures(_agreement(TRIPLED, None))  # 180 items taken as independent: too narrow
        clustered = _figures(_agreement(TRIPLED, [r["prompt"] for r in TRIPLED]))
        widths = np.diff(np.array(plain), axis=1).ravel(), np.diff(np.array(clustered), axis=1).ravel()
        assert (widths[1] > widths[0] * 1.3).all(), widths

    def test_exact_triplicates_give_the_accuracy_interval_of_the_items_once(self):
        once = _agreement(ROWS, None)
        thrice = _agreement(TRIPLED, [r["prompt"] for r in TRIPLED])
        for a, b in zip(once.judges, thrice.judges):  # type: ignore[attr-defined]
            assert (b.labels.accuracy.low, b.labels.accuracy.high) == pytest.approx(
                (a.labels.accuracy.low, a.labels.accuracy.high), abs=1e-9)

    def test_cell_covariance_is_the_loop_over_clusters(self):
        rng = np.random.default_rng(3)
        ids = [f"c{rng.integers(0, 15)}" for _ in ROWS]
        votes = _votes(ROWS, ids)
        v, comp = compositions(votes, [f"j{i}" for i in range(4)])
        j = 1
        members: dict[str, list[tuple[int, int]]] = {}
        for r, c in zip(ROWS, ids):  # each item's confusion cell of judge j1, by cluster
            cell = ("AB".index(r["label"]), "AB".index(r["verdicts"][j]))
            members.setdefault(c, []).append(cell)
        n = len(ROWS)
        t = np.zeros((2, 2))
        for cl in members.values():
            for g, k in cl:
                t[g, k] += 1
        p = t.reshape(-1) / n
        want = np.zeros((4, 4))
        for cl in members.values():
            s = np.zeros(4)
            for g, k in cl:
                s[2 * g + k] += 1
            r = s - len(cl) * p
            want += np.outer(r, r) / n**2
        np.testing.assert_allclose(cell_covariance(v, j, comp), want, atol=1e-15)
        ones = compositions(_votes(ROWS, [r["id"] for r in ROWS]), [f"j{i}" for i in range(4)])
        np.testing.assert_allclose(cell_covariance(ones[0], j, ones[1]), ag.multinomial_covariance(t), atol=1e-15)


class TestEveryCommand:
    def test_doctor_counts_the_clusters(self):
        doc = json.loads(bc.doctor(TRIPLED, name="pw", cluster_field="prompt").json())
        assert doc["clusters"] == 60 and doc["items"] == 180

    def test_fit_interval_widens_with_clusters(self):
        def width(**kw: object) -> float:
            doc = json.loads(bc.fit(TRIPLED, name="pw", ks="3", components=1, **kw).json())
            row = doc["error_rates"][0]
            return float(row["high"] - row["low"])

        assert width(cluster_field="prompt") > 1.4 * width()

    def test_sample_counts_one_item_per_cluster(self):
        doc = json.loads(bc.sample(TRIPLED, name="pw", ks="3", components=1, cluster_field="prompt").json())
        plain = json.loads(bc.sample(TRIPLED, name="pw", ks="3", components=1).json())
        assert doc["samples"] == 60 and plain["samples"] == 180

    def test_a_counts_table_cannot_carry_clusters(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_text("judges,correct,count\n3,2,10\n3,3,5\n")
        out = CliRunner().invoke(app, ["fit", str(path), "--cluster-field", "prompt"])
        assert out.exit_code == 2
        assert "--cluster-field 'prompt'" in out.output and "t.csv" in out.output and "Traceback" not in out.output


def _tables(tmp_path: Path) -> dict[str, Path]:
    """TRIPLED as JSON Lines, as a long CSV and as a wide Parquet file (written by DuckDB), the prompt a column."""
    import duckdb

    n = len(TRIPLED[0]["verdicts"])
    files = {"jsonl": tmp_path / "t.jsonl", "long": tmp_path / "long.csv", "wide": tmp_path / "wide.parquet"}
    files["jsonl"].write_text("".join(json.dumps(r) + "\n" for r in TRIPLED))
    files["long"].write_text("item,judge,verdict,gold,prompt\n" + "".join(
        f"{r['id']},j{j},{v},{r['label']},{r['prompt']}\n" for r in TRIPLED for j, v in enumerate(r["verdicts"])))
    wide = tmp_path / "wide.csv"
    wide.write_text(f"item,gold,prompt,{','.join(f'j{j}' for j in range(n))}\n" + "".join(
        f"{r['id']},{r['label']},{r['prompt']},{','.join(r['verdicts'])}\n" for r in TRIPLED))
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{wide}', all_varchar = true)) TO '{files['wide']}' (FORMAT parquet)")
    return files


class TestTables:
    """--cluster-field names a table's column (long or wide; CSV, Parquet): read in the same pass as the rest of the
    table's roles, so every command counts the clusters exactly as for the same items in JSON Lines."""

    def test_fit_and_doctor_equal_json_lines(self, tmp_path):
        files = _tables(tmp_path)
        docs = {k: json.loads(bc.fit(str(f), ks="3", components=1, cluster_field="prompt").json()) for k, f in files.items()}
        plain = json.loads(bc.fit(str(files["long"]), ks="3", components=1).json())["error_rates"][0]
        want = docs["jsonl"]["error_rates"][0]
        assert want["high"] - want["low"] > 1.4 * (plain["high"] - plain["low"])  # the clusters are counted
        for k in ("long", "wide"):
            got = docs[k]["error_rates"][0]
            np.testing.assert_allclose([got["low"], got["estimate"], got["high"]], [want["low"], want["estimate"], want["high"]],
                                       rtol=1e-12)
            doc = json.loads(bc.doctor(str(files[k]), cluster_field="prompt").json())
            assert (doc["clusters"], doc["items"]) == (60, 180)
            assert doc["roles"]["cluster"] == "prompt" and "text" not in doc["roles"]  # never also guessed as the text

    def test_score_counts_the_table_clusters(self, tmp_path):
        files = _tables(tmp_path)
        got = [json.loads(bc.score(str(files[k]), positive="A", cluster_field="prompt").json()) for k in ("jsonl", "long")]
        assert got[0]["clusters"] == got[1]["clusters"] == 60 and got[0]["score"] == got[1]["score"]

    @pytest.mark.parametrize(("rows", "want"), [
        ("a,j1,1,1,\n", "row 1: column 'prompt': no cluster id for item 'a'"),
        ("a,j1,1,1,p\na,j2,0,1,q\n", "row 2: column 'prompt': item 'a' is in cluster 'p' (row 1) and 'q' here"),
    ])
    def test_a_missing_or_second_cluster_names_the_row(self, tmp_path, rows, want):
        path = tmp_path / "t.csv"
        path.write_text("item,judge,verdict,gold,prompt\n" + rows)
        out = CliRunner().invoke(app, ["fit", str(path), "--cluster-field", "prompt"])
        assert out.exit_code == 2 and want in out.output and "Traceback" not in out.output, out.output

    def test_a_column_that_is_not_there(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_text("item,judge,verdict,gold\na,j1,1,1\na,j2,0,1\n")
        out = CliRunner().invoke(app, ["fit", str(path), "--cluster-field", "prompt"])
        assert out.exit_code == 2 and "no column 'prompt'" in out.output and "'item', 'judge'" in out.output, out.output


class TestTraceStoresAndRagas:
    """The same key for the formats read as annotations (trace stores, Ragas): each record's field is its item's
    cluster."""

    def test_ragas_rows_of_one_question_are_one_cluster(self, tmp_path):
        lines = (ROOT / "tests" / "fixtures" / "ragas" / "results.jsonl").read_text().splitlines()
        path = tmp_path / "sampled.jsonl"  # each question answered three times (three rows sharing user_input)
        path.write_text("\n".join(line for line in lines for _ in range(3)) + "\n")
        doc = json.loads(bc.doctor(str(path), threshold=0.5, cluster_field="user_input").json())
        assert (doc["items"], doc["unlabeled_items"], doc["clusters"]) == (18, 6, 6)

        def width(**kw: object) -> float:
            got = json.loads(bc.fit(str(path), ks="3", components=1, threshold=0.5, **kw).json())
            return float(got["error_rates"][0]["high"] - got["error_rates"][0]["low"])

        assert width(cluster_field="user_input") > 1.3 * width()

    def test_an_item_in_two_clusters_is_an_error(self, tmp_path):
        scores = json.loads((ROOT / "tests" / "fixtures" / "langfuse" / "scores.json").read_text())["data"]
        for i, s in enumerate(scores):
            s["sessionId"] = f"s{i}"  # every score of trace t1 in a session of its own
        path = tmp_path / "scores.json"
        path.write_text(json.dumps(scores))
        out = CliRunner().invoke(app, ["doctor", str(path), "--cluster-field", "sessionId"])
        assert out.exit_code == 2 and "item 't1' is in cluster 's0' (record 1) and 's1' here" in out.output


def test_drift_says_it_does_not_count_clusters(tmp_path):
    """drift's tests take items as independent: --cluster-field is refused, never dropped; its --time-field (read as
    the same per-item key) is still refused by its own name on a table."""
    data = str(ROOT / "sample_data" / "system_verdicts.jsonl")
    out = CliRunner().invoke(app, ["drift", data, data, "--cluster-field", "prompt"])
    assert out.exit_code == 2 and "leave --cluster-field out (drift does not count" in out.output
    path = tmp_path / "t.csv"  # a table's column is read the same way (tables read --cluster-field's column)
    path.write_text("item,judge,verdict,gold,ts\na,j1,1,1,1\na,j2,0,1,1\nb,j1,1,0,2\nb,j2,1,0,2\nc,j1,0,0,2\nc,j2,0,0,2\n")
    out = CliRunner().invoke(app, ["drift", str(path), "--time-field", "ts", "--split-at", "2", "-f", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert [(r["source"].rsplit(" ", 3)[-3:], r["items"]) for r in doc["runs"]] == [(["(ts", "<", "2)"], 1), (["(ts", ">=", "2)"], 2)]


def test_each_slice_keeps_its_clusters():
    """--by with --cluster-field: each slice of a JSON Lines input counts its own items' clusters."""
    rows = [dict(r, cat="a" if int(r["prompt"][3:]) % 2 else "b") for r in TRIPLED]
    report = bc.fit(rows, name="pw", ks="3", components=1, by="cat", cluster_field="prompt")
    assert [n.split(": ")[1] for n in report.notes if "clusters" in n] == [
        "90 labeled items in 30 clusters (epochs or the cluster field)"] * 2
