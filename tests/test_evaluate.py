"""The evaluate core against independent computations: brute-force enumeration of sub-ensembles, scipy.stats,
explicit loops over the reconstructed draws."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from betaconform_cli.counts import CountTable
from betaconform_cli.errors import ParameterError, UsageError
from betaconform_cli.evaluate import ESTIMATORS, EvaluateSettings, evaluate
from betaconform_cli.evaluate.settings import run_rng
from betaconform_cli.fit import analyse
from betaconform_cli.report.evaluate import EvaluationReport
from betaconform_cli.report.render import to_markdown as render_markdown
from betaconform_cli.settings import FitSettings


def to_json(ev):  # type: ignore[no-untyped-def]
    return EvaluationReport(ev).json()


def to_csv(ev):  # type: ignore[no-untyped-def]
    return EvaluationReport(ev).csv()


def to_markdown(ev):  # type: ignore[no-untyped-def]
    return render_markdown(EvaluationReport(ev).blocks(markdown=True))

# per-judge correctness of a small fully-labeled dataset: 9 items, 5 judges each
VECTORS = [
    (1, 1, 1, 1, 1),
    (1, 1, 1, 1, 0),
    (1, 1, 1, 0, 0),
    (1, 1, 0, 0, 0),
    (0, 0, 0, 0, 0),
    (1, 0, 0, 0, 0),
    (1, 1, 1, 1, 1),
    (0, 1, 1, 1, 1),
    (1, 1, 1, 1, 0),
]
KS = (1, 2, 3, 4, 5)


def brute_error(vectors: list[tuple[int, ...]], k: int) -> float:
    """Mean over items and over every k-subset of judges of the majority error (a tie is half an error)."""
    total = 0.0
    for v in vectors:
        subsets = list(itertools.combinations(v, k))
        errs = []
        for sub in subsets:
            c = sum(sub)
            errs.append(1.0 if 2 * c < k else 0.5 if 2 * c == k else 0.0)
        total += sum(errs) / len(errs)
    return total / len(vectors)


def table_of(vectors: list[tuple[int, ...]]) -> CountTable:
    return CountTable.from_pairs([len(v) for v in vectors], [sum(v) for v in vectors])


def binomial_error(p: float, k: int) -> float:
    """P(majority of k independent judges wrong) with scipy.stats, ties half."""
    wrong = stats.binom.cdf(math.ceil(k / 2) - 1, k, p)
    if k % 2 == 0:
        wrong += 0.5 * stats.binom.pmf(k // 2, k, p)
    return float(wrong)


@pytest.fixture(scope="module")
def small_eval():
    settings = EvaluateSettings(sizes=(4, 8, 9), runs=4, ks=KS, n_draws=200)
    return evaluate([("small", table_of(VECTORS))], settings, seed=3)


class TestActualError:
    """The ground truth is the exact mean over all sub-ensembles."""

    def test_actual_matches_enumeration(self, small_eval):
        cell = small_eval.cell("small", 4)
        for i, k in enumerate(KS):
            assert cell.actual[i] == pytest.approx(brute_error(VECTORS, k), abs=1e-12)

    def test_mixed_judges_leave_large_k_undefined(self):
        vectors = VECTORS + [(1, 0, 1)]
        ev = evaluate([("mixed", table_of(vectors))], EvaluateSettings(sizes=(3,), runs=2, ks=KS, n_draws=200), 0)
        cell = ev.cell("mixed", 3)
        assert cell.margin_ks == (1, 3)
        assert np.isnan(cell.actual[3]) and np.isnan(cell.actual[4])
        assert cell.actual[2] == pytest.approx(brute_error(vectors, 3), abs=1e-12)


class TestDraws:
    """Each run's estimators see the same r distinct items, reconstructed here from the documented seeding."""

    def _drawn(self, seed: int, size: int, run: int) -> list[tuple[int, ...]]:
        # items in cell order (K, then S ascending), the order evaluate draws from
        order = sorted(VECTORS, key=lambda v: (len(v), sum(v)))
        idx = run_rng(seed, "small", size, run).choice(len(order), size=size, replace=False)
        assert len(set(idx.tolist())) == size
        return [order[i] for i in idx]

    def test_empirical_and_binomial_columns(self, small_eval):
        cell = small_eval.cell("small", 4)
        je = cell.methods.index("empirical")
        jb = cell.methods.index("binomial")
        for run in range(cell.runs):
            drawn = self._drawn(3, 4, run)
            p = sum(map(sum, drawn)) / sum(map(len, drawn))
            for i, k in enumerate(KS):
                assert cell.draws.estimates[run, je, i] == pytest.approx(brute_error(drawn, k), abs=1e-12)
                assert cell.draws.estimates[run, jb, i] == pytest.approx(binomial_error(p, k), abs=1e-12)

    def test_paper_column_is_the_paper_fit(self, small_eval):
        cell = small_eval.cell("small", 8)
        j = cell.methods.index("paper")
        for run in range(cell.runs):
            drawn = self._drawn(3, 8, run)
            res = analyse(table_of(drawn), FitSettings(method="paper", ks=KS, n_draws=200), np.random.default_rng(0))
            assert cell.draws.estimates[run, j] == pytest.approx([r.estimate for r in res.rows], abs=1e-12)

    def test_too_small_datasets_are_skipped(self, small_eval):
        assert small_eval.cell("small", 9) is None
        assert [(s.dataset, s.items, s.size) for s in small_eval.skipped] == [("small", 9, 9)]
        assert small_eval.cell("small", 8) is not None

    def test_seeded_and_independent_of_companions(self, small_eval):
        other = table_of([(1, 1, 0, 0, 1)] * 6 + [(0, 0, 0, 1, 1)] * 6)
        again = evaluate(
            [("other", other), ("small", table_of(VECTORS))], EvaluateSettings(sizes=(4,), runs=4, ks=KS, n_draws=200), 3
        )
        a = again.cell("small", 4).draws.estimates
        b = small_eval.cell("small", 4).draws.estimates
        np.testing.assert_array_equal(a, b)


class TestSummaries:
    """Margins, standard errors, coverage and averages recomputed with explicit loops."""

    def test_margin_is_mean_over_odd_k(self, small_eval):
        cell = small_eval.cell("small", 8)
        margins = cell.margins()
        for run in range(cell.runs):
            for j in range(len(cell.methods)):
                expect = np.mean([abs(cell.draws.estimates[run, j, i] - cell.actual[i]) for i, k in enumerate(KS) if k % 2])
                assert margins[run, j] == pytest.approx(expect, abs=1e-15)

    def test_mean_sd_se(self, small_eval):
        cell = small_eval.cell("small", 4)
        s = cell.summary("binomial")
        m = cell.margins()[:, cell.methods.index("binomial")]
        assert s.margin_mean == pytest.approx(sum(m) / len(m))
        assert s.margin_sd == pytest.approx(stats.tstd(m))
        assert s.margin_se == pytest.approx(stats.sem(m))

    def test_coverage_and_width(self, small_eval):
        cell = small_eval.cell("small", 8)
        s = cell.summary("default")
        inside = width = n = 0
        for run in range(cell.runs):
            for i, k in enumerate(KS):
                if k % 2:
                    inside += cell.draws.low[run, i] - 1e-12 <= cell.actual[i] <= cell.draws.high[run, i] + 1e-12
                    width += cell.draws.high[run, i] - cell.draws.low[run, i]
                    n += 1
        assert s.coverage == pytest.approx(inside / n)
        assert s.width_mean == pytest.approx(width / n)
        assert cell.summary("binomial").coverage is None

    def test_average_over_datasets(self):
        a = table_of(VECTORS)
        b = table_of([(1, 1, 0, 0, 1)] * 6 + [(0, 0, 0, 1, 1)] * 3 + [(1, 1, 1, 1, 1)] * 3)
        ev = evaluate([("a", a), ("b", b)], EvaluateSettings(sizes=(5,), runs=3, ks=KS, n_draws=200), 1)
        rows = {r.method: r for r in ev.averages(5)}
        ca, cb = ev.cell("a", 5), ev.cell("b", 5)
        j, d = ev.settings.methods.index("binomial"), ev.settings.methods.index("default")
        ma, mb = ca.margins()[:, j], cb.margins()[:, j]
        assert rows["binomial"].margin_mean == pytest.approx((ma.mean() + mb.mean()) / 2)
        assert rows["binomial"].margin_se == pytest.approx(math.hypot(stats.sem(ma), stats.sem(mb)) / 2)
        da, db = ma - ca.margins()[:, d], mb - cb.margins()[:, d]
        assert rows["binomial"].diff_vs_default == pytest.approx((da.mean() + db.mean()) / 2)
        assert rows["binomial"].default_wins == int(da.mean() > 0) + int(db.mean() > 0)
        assert rows["default"].diff_vs_default is None


class TestExactOnTinyCase:
    """With r = n - 1 there are only n possible draws: the mean empirical estimate over many runs approaches
    the exact average over the n leave-one-out subsets (which is the actual error: the estimator is unbiased)."""

    @pytest.mark.slow
    def test_empirical_unbiased(self):
        vectors = VECTORS[:5]
        ev = evaluate(
            [("tiny", table_of(vectors))],
            EvaluateSettings(sizes=(4,), runs=60, ks=(1, 3), methods=("empirical",), n_draws=100),
            0,
        )
        cell = ev.cell("tiny", 4)
        exact = [np.mean([brute_error(list(sub), k) for sub in itertools.combinations(vectors, 4)]) for k in (1, 3)]
        assert exact == pytest.approx([brute_error(vectors, 1), brute_error(vectors, 3)], abs=1e-12)
        mean = cell.draws.estimates[:, 0, :].mean(axis=0)
        se = cell.draws.estimates[:, 0, :].std(axis=0, ddof=1) / math.sqrt(60)
        assert np.all(np.abs(mean - exact) < 4 * se + 1e-9)


class TestValidation:
    """Bad settings fail early with messages naming the option."""

    @pytest.mark.parametrize(
        ("kwargs", "needle"),
        [
            ({"sizes": (1,)}, "sizes"),
            ({"runs": 1}, "runs"),
            ({"methods": ("bogus",)}, "methods"),
            ({"methods": ()}, "methods"),
            ({"ks": (2, 4)}, "odd k"),
            ({"confidence_level": 1.5}, "confidence"),
        ],
    )
    def test_bad_settings(self, kwargs, needle):
        with pytest.raises(UsageError, match=needle):
            EvaluateSettings(**kwargs)

    def test_negative_seed_and_duplicate_names(self):
        t = table_of(VECTORS)
        with pytest.raises(UsageError, match="seed"):
            evaluate([("a", t)], EvaluateSettings(sizes=(3,), runs=2, ks=KS), -1)
        with pytest.raises(UsageError, match="named"):
            evaluate([("a", t), ("a", t)], EvaluateSettings(sizes=(3,), runs=2, ks=KS), 0)


class TestRenderings:
    """JSON, CSV and Markdown carry the same numbers."""

    def test_json_csv_markdown(self, small_eval):
        doc = json.loads(to_json(small_eval))
        assert doc["mode"] == "fixed-r" and doc["seed"] == 3
        assert doc["skipped"][0]["r"] == 9
        cell = small_eval.cell("small", 4)
        margin = cell.summary("default").margin_mean
        got = next(c for c in doc["cells"] if c["r"] == 4)["methods"][0]
        assert got["method"] == "default" and got["margin_mean"] == pytest.approx(margin)
        rows = to_csv(small_eval).splitlines()
        assert len(rows) == 1 + 2 * len(ESTIMATORS)
        first = rows[1].split(",")
        assert first[:5] == ["small", "9", "4", "4", "default"]
        assert float(first[5]) == pytest.approx(100 * margin, abs=1e-4)
        md = to_markdown(small_eval)
        assert "| small | 9 |" in md and "skipped, fewer than r + 1 items: small (9 items) at r = 9" in md


def test_core_imports_no_cli_or_plotting_libraries():
    """Importing the evaluate core leaves typer, rich and matplotlib unloaded."""
    code = (
        "import sys, betaconform_cli.evaluate, betaconform_cli.plots;"
        "print(sorted(m for m in ('typer', 'rich', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


class TestAccuracyBenchmark:
    """benchmarks/accuracy.py skips cleanly without data and rewrites only its own section of the doc."""

    SCRIPT = str(__import__("pathlib").Path(__file__).resolve().parent.parent / "benchmarks" / "accuracy.py")

    def test_skips_without_data(self, tmp_path):
        res = subprocess.run([sys.executable, self.SCRIPT, "--data", str(tmp_path / "absent")], capture_output=True, text=True, check=False)
        assert res.returncode == 0 and "skipped" in res.stderr and res.stdout == ""

    def test_updates_its_section(self, tmp_path):
        sub = tmp_path / "data" / "group"
        sub.mkdir(parents=True)
        (sub / "small.jsonl").write_text("".join(json.dumps({"judgments": list(v)}) + "\n" for v in VECTORS))
        doc = tmp_path / "B.md"
        doc.write_text("# Benchmarks\n\n<!-- accuracy:start -->\nold\n<!-- accuracy:end -->\n\n## Speed\nkept\n")
        res = subprocess.run(
            [sys.executable, self.SCRIPT, "--data", str(tmp_path / "data"), "--r", "4,9", "--runs", "2", "--update-doc", str(doc), "--no-cli-timing"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert res.returncode == 0, res.stderr
        text = doc.read_text()
        assert "old" not in text and text.endswith("## Speed\nkept\n")
        assert "| 4 | 1 |" in text and "small (9 items) at r = 9" in text and "nproc" in text


class TestAdaptive:
    """Adaptive mode: random orders stopped by a rule; samples and estimates checked on the reconstructed order."""

    def test_always_passing_rule_stops_at_min_samples(self):
        import zlib

        from betaconform_cli.evaluate import evaluate_adaptive
        from betaconform_cli.stopping import VarianceRule

        rule = VarianceRule(xi=10.0, min_samples=5, patience=1)
        ev = evaluate_adaptive(
            [("small", table_of(VECTORS))], [("xi=10", rule)], EvaluateSettings(runs=3, ks=KS, n_draws=200), seed=2,
            rule_info={"rule": "variance", "parameter": "xi", "values": [10.0]},
        )
        cell = ev.cell("small", "xi=10")
        assert cell.rule.samples.tolist() == [5, 5, 5] and cell.rule.stopped == 3
        order_items = sorted(VECTORS, key=lambda v: (len(v), sum(v)))
        j = cell.methods.index("empirical")
        for run in range(3):
            perm = run_rng(2, "small", zlib.crc32(b"xi=10"), run).permutation(len(VECTORS))
            first = [order_items[i] for i in perm[:5]]
            for i, k in enumerate(KS):
                assert cell.draws.estimates[run, j, i] == pytest.approx(brute_error(first, k), abs=1e-12)
        assert ev.to_dict()["mode"] == "adaptive" and "samples" in to_markdown(ev)
        # its JSON document (typed: evaluate/document.py) is valid against the published schema, with the keys an
        # adaptive run and --per-run add, in their places
        import json

        import jsonschema

        from betaconform_cli.report.render import to_json
        from betaconform_cli.schemas import published

        doc = json.loads(to_json([ev.to_dict(per_run=True)]))
        schema = next(p for p in published() if p.file == "evaluate.json").schema
        assert not list(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc))
        assert list(doc)[:5] == ["schema", "command", "mode", "rule", "tool_version"]
        assert list(doc["cells"][0])[-7:] == ["not_converged_fits", "samples", "samples_mean", "samples_sd", "stopped",
                                              "methods", "margins_per_run"]

    def test_never_passing_rule_uses_the_whole_pool(self):
        from betaconform_cli.evaluate import evaluate_adaptive
        from betaconform_cli.stopping import VarianceRule

        ev = evaluate_adaptive(
            [("small", table_of(VECTORS))],
            [("xi=1e-09", VarianceRule(xi=1e-9, min_samples=9))],  # the pool (9) could stop; the rule never passes
            EvaluateSettings(runs=2, ks=KS, methods=("empirical", "binomial"), n_draws=200),
            seed=0,
        )
        cell = ev.cell("small", "xi=1e-09")
        assert cell.rule.samples.tolist() == [9, 9] and cell.rule.stopped == 0
        # the whole pool's own error is the actual error: zero margin
        assert cell.summary("empirical").margin_mean == pytest.approx(0.0, abs=1e-15)


class FakeEmbedder:
    """Deterministic stand-in for the sentence-transformers model."""

    name = "fake"
    dimension = 4

    def embed(self, texts):
        import hashlib

        return np.array([[b / 255 for b in hashlib.sha256(t.encode()).digest()[:4]] for t in texts])


class TestTransfer:
    """Leave-one-out transfer: paired draws, lone datasets skipped, the no-transfer and empirical columns checked."""

    def _data(self, name, group, vectors):
        from betaconform_cli.evaluate import TransferData

        order = sorted(vectors, key=lambda v: (len(v), sum(v)))
        texts = [f"{name} item {i}" for i in range(len(order))]
        return TransferData(
            name, group, np.array([len(v) for v in order]), np.array([sum(v) for v in order]), FakeEmbedder().embed(texts), "fake"
        ), order

    def test_columns_and_skips(self):
        from betaconform_cli.evaluate import evaluate_transfer

        a, a_items = self._data("a", "g1", VECTORS)
        b, _ = self._data("b", "g1", [(1, 1, 0, 0, 1)] * 6 + [(0, 0, 0, 1, 1)] * 4)
        lone, _ = self._data("lone", "g2", VECTORS)
        ev = evaluate_transfer([a, b, lone], EvaluateSettings(sizes=(4,), runs=2, ks=KS, n_draws=200), seed=1)
        assert ev.mode == "transfer" and ev.cell("lone", 4) is None
        assert [(s.dataset, s.why) for s in ev.skipped] == [("lone", "no other dataset in its group")]
        cell = ev.cell("a", 4)
        assert cell.methods == ("default", "transfer", "paper_transfer", "empirical")
        for run in range(2):
            rng = run_rng(1, "a", 4, run)
            pick = rng.choice(len(a_items), size=4, replace=False)
            drawn = [a_items[i] for i in pick]
            for i, k in enumerate(KS):
                assert cell.draws.estimates[run, 3, i] == pytest.approx(brute_error(drawn, k), abs=1e-12)
            own = analyse(table_of(drawn), FitSettings(ks=KS, n_draws=200), rng)
            assert cell.draws.estimates[run, 0] == pytest.approx([r.estimate for r in own.rows], abs=1e-12)
        assert np.isfinite(cell.draws.estimates[:, 1:3]).all()
        doc = json.loads(to_json(ev))
        assert doc["mode"] == "transfer" and "transfer" in doc and "no transfer" in to_markdown(ev)


def test_too_small_names_each_dataset_once() -> None:
    """Every dataset smaller than every r: the message names each dataset once with its items (it named the first
    dataset once per r and left the others out)."""
    small = CountTable.from_histogram([0, 1, 1])
    with pytest.raises(ParameterError, match=r"nothing to evaluate: a \(2 items\); b \(2 items\)$"):
        evaluate([("a", small), ("b", small)], EvaluateSettings(sizes=(5, 6), runs=2, ks=(1,), n_draws=200), 0)
