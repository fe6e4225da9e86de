"""inspect-ai in full (issue 29 item 3): a judge panel inside one scorer, human edits of scores, epochs as clusters.

The log was written by inspect-ai itself (tests/fixtures/inspect_full/make.sh: `inspect eval` with mockllm/model, then
inspect_ai.log.edit_score); the truth comes from the fixture's plan (its seeded hashes), never from the log."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from scipy import stats

from betaconform_cli.counts import CountTable, ItemClusters
from betaconform_cli.distributions import Mixture
from betaconform_cli.fit import analyse
from betaconform_cli.inputs import InputOptions, Keep, read_dataset
from betaconform_cli.mixtures import MixtureFit
from betaconform_cli.settings import FitSettings

from .conftest import invoke

HERE = Path(__file__).parent / "fixtures" / "inspect_full"
LOGS = [next((HERE / d).iterdir()) for d in ("logs_eval", "logs_json")]
JUDGES = ["panel[0]", "panel[1]", "panel[2]", "pair[0]", "pair[1]", "solo"]


def plan() -> ModuleType:
    spec = importlib.util.spec_from_file_location("inspect_full_plan", HERE / "plan.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def truth() -> tuple[list[str], np.ndarray]:
    """Item ids (sample#epoch, in the log's order: epoch, then sample) and each judge's correctness (NaN: none)."""
    p = plan()
    ids, rows = [], []
    for epoch in range(1, p.EPOCHS + 1):
        for sid, _, _ in p.SAMPLES:
            gold = p.gold(sid, epoch)
            says = [p.verdict(j, sid, epoch) for j in (*p.PANEL, *p.PAIR, p.SOLO)]
            ids.append(f"{sid}#{epoch}")
            rows.append([np.nan if v is None else float(v == gold) for v in says])
    return ids, np.array(rows)


@pytest.mark.parametrize("log", LOGS, ids=["eval", "json"])
def test_panels_edits_and_epochs_against_the_plan(log: Path) -> None:
    """Seven scorer outputs, six judges (majority panel of 3, collect panel of 2, solo), 36 items in 12 clusters;
    the edited solo score keeps its first value as the verdict, the edited panel score gives q06#2 its gold."""
    ds = read_dataset(log, InputOptions(), Keep.JUDGMENTS)
    ids, m = truth()
    assert list(ds.judge_names) == JUDGES
    order = {it.id: i for i, it in enumerate(ds.items or ())}
    assert sorted(order) == sorted(ids)
    got = ds.judgment_matrix()[[order[i] for i in ids]]
    np.testing.assert_array_equal(got, m)
    p = plan()
    (scorer, sid, epoch, _), _ = p.EDITS
    assert scorer == "solo" and got[ids.index(f"{sid}#{epoch}"), -1] == 0  # its verdict: the first, wrong value
    assert p.gold("q06", 2) == "C" != p.target("q06")  # the edit moved this item's gold
    assert ds.clusters is not None and ds.clusters.clusters == 12 and len(ds.clusters.cluster) == 36


def test_doctor_says_samples_epochs_and_clusters(runner) -> None:
    res = invoke(runner, "doctor", LOGS[1], "-f", "json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["clusters"] == 12 and doc["items"] == 36 and doc["unlabeled_items"] == 0
    assert [j["name"] for j in doc["judges"]] == JUDGES and doc["roles"]["gold"] == "target"
    assert any("12 samples x 3 epochs = 12 clusters of 36 items" in n for n in doc["notes"])
    assert "in 12 clusters" in invoke(runner, "doctor", LOGS[1]).stdout


def test_fit_histogram_equals_a_canonical_jsonl(runner, tmp_path: Path) -> None:
    """fit on the log and on JSON Lines of the same items written here from the plan: the same histogram; the log's
    interval is wider (its items are clustered), its estimate the same."""
    ids, m = truth()
    canon = tmp_path / "canon.jsonl"
    canon.write_text("".join(json.dumps({"id": i, "judgments": {j: None if np.isnan(v) else int(v) for j, v in zip(JUDGES, row)}}) + "\n"
                             for i, row in zip(ids, m)), encoding="utf-8")
    a = json.loads(invoke(runner, "fit", LOGS[0], "-f", "json").stdout)
    b = json.loads(invoke(runner, "fit", canon, "-f", "json").stdout)
    assert a["histogram"] == b["histogram"] and a["items"] == b["items"] == 36
    ra, rb = a["error_rates"][2], b["error_rates"][2]
    assert ra["estimate"] == pytest.approx(rb["estimate"], abs=1e-12)
    assert ra["high"] - ra["low"] > rb["high"] - rb["low"]


def test_score_counts_clusters(runner) -> None:
    """`score` counts the epochs as clusters, and takes inspect's C (CORRECT) as the pass where gold and scores are
    C/I, with no --positive (score.FORMAT_PASSES)."""
    res = invoke(runner, "score", LOGS[0], "--target", "new", "-f", "json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["clusters"] == 12 and json.loads(res.stdout)["positive"] == "C"


def test_design_effect_is_statsmodels_cluster_variance_over_ols() -> None:
    """counts.ItemClusters.design_effects = the cluster-robust variance of a mean over the OLS one (statsmodels, an
    intercept-only regression), clipped to [1, largest cluster]."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    cluster = np.repeat(np.arange(40), 3)
    y = np.column_stack([rng.normal(size=40)[cluster] + rng.normal(size=120), rng.normal(size=120)])
    ones = np.ones((120, 1))
    want = []
    for col in y.T:
        robust = sm.OLS(col, ones).fit(cov_type="cluster", cov_kwds={"groups": cluster}).bse[0] ** 2
        want.append(min(max(robust / sm.OLS(col, ones).fit().bse[0] ** 2, 1.0), 3.0))
    cl = ItemClusters(np.zeros(120), np.zeros(120), cluster)
    np.testing.assert_allclose(cl.design_effects(y), want, rtol=1e-10)
    assert want[0] > 1.5 and want[1] < 1.5  # the first column is clustered, the second is not


def _simulated(rng: np.random.Generator, samples: int, epochs: int, rho: float) -> tuple[CountTable, ItemClusters]:
    """3 judges; sample accuracy p ~ Beta(4, 1.5); each later epoch repeats a judge's first verdict with
    probability rho, else draws it afresh (every epoch alone: 3 independent Bernoulli(p) judges)."""
    p = rng.beta(4.0, 1.5, size=samples)
    first = rng.random((samples, 3)) < p[:, None]
    rows = [first] + [np.where(rng.random((samples, 3)) < rho, first, rng.random((samples, 3)) < p[:, None])
                      for _ in range(epochs - 1)]
    correct = np.concatenate([r.sum(axis=1) for r in rows])
    counts = np.zeros((4, 4), dtype=np.int64)
    np.add.at(counts, (3, correct), 1)
    return CountTable(counts), ItemClusters(np.full(len(correct), 3), correct, np.tile(np.arange(samples), epochs))


@pytest.mark.slow
def test_epochs_as_clusters_keep_nominal_coverage() -> None:
    """Seeded simulation of correlated epochs (60 samples x 3 epochs, rho 0.9), 400 logs: the nominal 90% interval of
    the 3-judge majority error covers the truth (Beta-Binomial, exact) about 90% of the time with clusters, and
    clearly less with the epochs taken as independent items. The model is held at the truth so that only the
    interval is tested (benchmarks/epochs_coverage.py fits it: docs/FORMATS.md). Binomial sd of a coverage over
    400 logs: 1.5 points."""
    pmf = stats.betabinom(3, 4.0, 1.5).pmf(np.arange(4))
    true = pmf[0] + pmf[1]
    fit = MixtureFit(Mixture((1.0,), (4.0,), (1.5,)), "map", 0.0, True, 0, 1, 180)
    settings = FitSettings(ks=(3,), components=1, confidence_level=0.9)
    rng = np.random.default_rng(29)
    hits = {"clusters": 0, "independent": 0}
    for _ in range(400):
        table, clusters = _simulated(rng, 60, 3, 0.9)
        for name, cl in (("clusters", clusters), ("independent", None)):
            row = analyse(table, settings, np.random.default_rng(1), fit=fit, clusters=cl).rows[0]
            hits[name] += row.low <= true <= row.high
    assert 0.86 <= hits["clusters"] / 400 <= 0.95
    assert hits["independent"] / 400 <= 0.8


def _canonical(tmp_path: Path) -> Path:
    ids, m = truth()
    canon = tmp_path / "canon.jsonl"
    canon.write_text("".join(json.dumps({"id": i, "judgments": {j: None if np.isnan(v) else int(v) for j, v in zip(JUDGES, row)}}) + "\n"
                             for i, row in zip(ids, m)), encoding="utf-8")
    return canon


@pytest.mark.slow
def test_judges_counts_effective_items(runner, tmp_path: Path) -> None:
    """judges on the log: each judge's accuracy as on the same items written independently, its interval Wilson's at
    n / deff (deff from statsmodels' cluster-robust over OLS variance of its marks: the samples are the clusters),
    and every ensemble's interval at least as wide as with the epochs taken as independent items."""
    sm = pytest.importorskip("statsmodels.api")
    from statsmodels.stats.proportion import proportion_confint

    a = json.loads(invoke(runner, "judges", LOGS[1], "-f", "json").stdout)
    b = json.loads(invoke(runner, "judges", _canonical(tmp_path), "-f", "json").stdout)
    ids, m = truth()
    cluster = np.array([i.split("#")[0] for i in ids])
    for ja, jb in zip(sorted(a["judges"], key=lambda j: j["name"]), sorted(b["judges"], key=lambda j: j["name"])):
        assert ja["accuracy"] == pytest.approx(jb["accuracy"], abs=1e-12)
        col = m[:, JUDGES.index(ja["name"])]
        seen = ~np.isnan(col)
        ones = np.ones((int(seen.sum()), 1))
        robust = sm.OLS(col[seen], ones).fit(cov_type="cluster", cov_kwds={"groups": np.unique(cluster[seen], return_inverse=True)[1]})
        deff = min(max(robust.bse[0] ** 2 / sm.OLS(col[seen], ones).fit().bse[0] ** 2, 1.0), 3.0)
        n_eff = seen.sum() / deff
        low, high = proportion_confint(col[seen].mean() * n_eff, n_eff, alpha=0.1, method="wilson")
        assert (ja["low"], ja["high"]) == pytest.approx((low, high), abs=1e-9)
    for ea, eb in zip(a["ensembles"], b["ensembles"]):
        assert ea["high"] - ea["low"] >= eb["high"] - eb["low"] - 1e-12


def test_sample_counts_samples(runner) -> None:
    """sample's rule sees one item per sample (the first epoch): the live decision counts 12 labeled samples."""
    res = invoke(runner, "sample", LOGS[0], "-f", "json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["samples"] == 12 and doc["items"] == 36


def _edited_log(tmp_path: Path, change: Any) -> Path:
    log = json.loads(LOGS[1].read_text(encoding="utf-8"))
    change(log)
    out = tmp_path / "log.json"
    out.write_text(json.dumps(log), encoding="utf-8")
    return out


def _sample(log: dict[str, Any], sid: str, epoch: int) -> dict[str, Any]:
    return next(s for s in log["samples"] if s["id"] == sid and s["epoch"] == epoch)


def test_edits_that_disagree_are_an_error(runner, tmp_path: Path) -> None:
    """q06#2's panel was edited to C; an edit of its solo score to I is a second, contradicting human label."""

    def change(log: dict[str, Any]) -> None:
        score = _sample(log, "q06", 2)["scores"]["solo"]
        score["history"] = [{"value": score["value"], "metadata": {}},
                            {"value": "I", "provenance": {"timestamp": "2026-01-01T00:00:00Z", "author": "b", "metadata": {}}}]
        score["value"] = "I"

    res = invoke(runner, "fit", _edited_log(tmp_path, change))
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "human edits disagree" in res.stderr and "sample" in res.stderr


def test_an_edit_that_keeps_the_value_is_no_label(tmp_path: Path) -> None:
    """An edit of the explanation alone (value UNCHANGED) leaves the gold at the target."""

    def change(log: dict[str, Any]) -> None:
        for s in log["samples"]:
            for score in s["scores"].values():
                for h in score.get("history") or []:
                    if h.get("provenance") is not None:
                        h["value"] = "UNCHANGED"
                if score.get("history"):
                    score["value"] = score["history"][0]["value"]

    ds = read_dataset(_edited_log(tmp_path, change), InputOptions(), Keep.JUDGMENTS)
    p = plan()
    order = {it.id: i for i, it in enumerate(ds.items or ())}
    row = ds.judgment_matrix()[order["q06#2"]]
    says = [p.verdict(j, "q06", 2) for j in (*p.PANEL, *p.PAIR, p.SOLO)]
    np.testing.assert_array_equal(row, [np.nan if v is None else float(v == p.target("q06")) for v in says])
