"""Transfer core: eq. 14-15 by hand, the evidence against brute-force sums, and the behaviour that matters:
a conflicting source is ignored, a matching one is used."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import betabinom

from betaconform_cli import transfer as tr
from betaconform_cli.data import CountTable
from betaconform_cli.distributions import Mixture, error_rates
from betaconform_cli.errors import EmbeddingError, ParamsError, UsageError
from betaconform_cli.fit import FitSettings, analyse, fit_paper_em

ROOT = Path(__file__).resolve().parent.parent
FAST = FitSettings(n_draws=1000)


def source(name: str, hist: list[int], emb: list[float], model: str = "fake") -> tr.Source:
    table = CountTable.from_histogram(hist)
    return tr.Source(name, table, analyse(table, FAST).fit.mixture, np.asarray(emb, float), model)


class TestWeights:
    """Eq. 14 and its Table 5 ablations, computed by hand."""

    def test_paper_lambda(self) -> None:
        s = tr.TransferSettings()
        lam = tr.transfer_weights(np.array([10, 100]), np.array([1.0, 0.8]), s)
        expected = [math.log(10) / (1 + math.exp(-10 * 0.5)), math.log(100) / (1 + math.exp(-10 * 0.3))]
        np.testing.assert_allclose(lam, expected)

    def test_ablations(self) -> None:
        lin = tr.transfer_weights(np.array([100]), np.array([0.8]), tr.TransferSettings(size_weight="linear"))
        np.testing.assert_allclose(lin, [100 / (1 + math.exp(-3))])
        nosig = tr.transfer_weights(np.array([100]), np.array([0.8]), tr.TransferSettings(sigmoid=False))
        np.testing.assert_allclose(nosig, [math.log(100) * 0.8])

    def test_similarities(self) -> None:
        e0 = np.array([1.0, 0.0])
        np.testing.assert_allclose(tr.similarities(e0, [np.array([1.0, 1.0])], "cosine"), [1 / math.sqrt(2)])
        np.testing.assert_allclose(tr.similarities(e0, [np.array([1.0, 2.0])], "inverse-euclidean"), [0.5])

    def test_eq15_average(self) -> None:
        m1 = Mixture((0.2, 0.8), (1.0, 8.0), (4.0, 2.0))
        m2 = Mixture((0.6, 0.4), (2.0, 6.0), (6.0, 1.0))
        avg = tr.average_mixtures([m1, m2], np.array([1.0, 3.0]))
        np.testing.assert_allclose(avg.weights, [0.5, 0.5])
        np.testing.assert_allclose(avg.alphas, [1.75, 6.5])
        np.testing.assert_allclose(avg.betas, [5.5, 1.25])


class TestEvidence:
    """Marginal likelihoods against independent brute-force computations."""

    def test_dirichlet_multinomial_is_polya_urn(self) -> None:
        alpha = np.array([0.5, 1.5, 2.0])
        sequence = [1, 1, 0, 2, 1]
        counts = np.bincount(sequence, minlength=3)
        # Polya urn: P(x_t = c | past) = (alpha_c + past count of c) / (A + t)
        p, seen = 1.0, np.zeros(3)
        for t, c in enumerate(sequence):
            p *= (alpha[c] + seen[c]) / (alpha.sum() + t)
            seen[c] += 1
        assert tr.dirichlet_multinomial_log_ml(counts, alpha) == pytest.approx(math.log(p))

    def test_no_transfer_evidence_is_grid_average(self) -> None:
        table = CountTable.from_histogram([1, 0, 2, 3])
        means, concs = 4, (1.0, 10.0)
        total = 0.0
        for i, c in itertools.product(range(means), concs):
            m = (i + 0.5) / means
            total += betabinom.pmf(0, 3, m * c, (1 - m) * c) * betabinom.pmf(2, 3, m * c, (1 - m) * c) ** 2 * betabinom.pmf(
                3, 3, m * c, (1 - m) * c
            ) ** 3
        expected = math.log(total / (means * len(concs)))
        assert tr.no_transfer_log_evidence(table, means, concs) == pytest.approx(expected)


class TestBehaviour:
    """The labels decide: a conflicting source is ignored and flagged, a matching one earns weight."""

    def test_conflicting_source_is_ignored(self) -> None:
        target = CountTable.from_histogram([0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5])  # judges nearly always right
        bad = source("bad", [40, 30, 20, 10, 5, 0, 0, 0, 0, 0, 0, 0], [1.0, 0.0])  # same text, judges mostly wrong
        res = tr.transfer(target, np.array([1.0, 0.0]), [bad], tr.TransferSettings(), FAST, np.random.default_rng(0))
        assert res.conflict and res.sources[0].weight < 0.01
        est = np.array([r.estimate for r in res.result.rows])
        no = np.array([r.estimate for r in res.without.rows])
        assert np.max(np.abs(est - no)) < 0.01
        width = np.array([r.high - r.low for r in res.result.rows])
        width0 = np.array([r.high - r.low for r in res.without.rows])
        assert np.all(width >= 0.8 * width0 - 0.01)  # no narrower just because a source was on offer

    def test_matching_source_is_used(self) -> None:
        hist = [0, 1, 2, 4, 8, 12, 16, 20, 16, 12, 6, 3]
        good = source("good", [4 * h for h in hist], [1.0, 0.0])
        far = source("far", [60, 30, 10, 5, 0, 0, 0, 0, 0, 0, 0, 0], [0.0, 1.0])
        target = CountTable.from_histogram([0, 0, 0, 0, 1, 1, 2, 2, 2, 1, 1, 0])
        res = tr.transfer(target, np.array([1.0, 0.1]), [good, far], tr.TransferSettings(), FAST, np.random.default_rng(0))
        w = {s.name: s.weight for s in res.sources}
        assert w["good"] > 0.5 and w["far"] < 0.05 and not res.conflict
        # the truth is the good source's distribution: transfer moves the estimate towards it
        truth = error_rates(Mixture.from_dict(good.mixture.to_dict()), (1, 3, 5))
        est = {r.k: r.estimate for r in res.result.rows}
        no = {r.k: r.estimate for r in res.without.rows}
        assert sum(abs(est[k] - truth[k]) for k in truth) < sum(abs(no[k] - truth[k]) for k in truth)
        assert sum(s.weight for s in res.sources) + res.target_weight == pytest.approx(1.0)

    def test_paper_method_is_eq15(self) -> None:
        target = CountTable.from_histogram([0, 1, 0, 0, 1, 1, 2, 1, 1, 1, 1, 1])
        src = source("s", [5, 5, 6, 8, 10, 12, 16, 20, 16, 12, 6, 3], [0.6, 0.8])
        res = tr.transfer(target, np.array([1.0, 0.0]), [src], tr.TransferSettings(method="paper"), FAST)
        lam = [math.log(10) / (1 + math.exp(-5)), math.log(src.items) / (1 + math.exp(-10 * (0.6 - 0.5)))]
        m0, m1 = fit_paper_em(target).mixture, fit_paper_em(src.table).mixture
        w = (lam[0] * np.array(m0.weights) + lam[1] * np.array(m1.weights)) / sum(lam)
        a = (lam[0] * np.array(m0.alphas) + lam[1] * np.array(m1.alphas)) / sum(lam)
        b = (lam[0] * np.array(m0.betas) + lam[1] * np.array(m1.betas)) / sum(lam)
        expected = error_rates(Mixture(tuple(w), tuple(a), tuple(b)), FAST.ks)
        for r in res.result.rows:
            assert r.estimate == pytest.approx(expected[r.k], abs=1e-9)
        assert res.sources[0].similarity == pytest.approx(0.6)


class TestValidation:
    """Settings, config file and sources fail early with clear messages."""

    def test_config_file_matches_defaults(self) -> None:
        cfg = yaml.safe_load((ROOT / "configs" / "transfer.yaml").read_text())
        assert tr.settings_from_config(cfg) == tr.TransferSettings()

    def test_unknown_config_key(self) -> None:
        with pytest.raises(ParamsError, match="unknown key"):
            tr.settings_from_config({"sigmoid_c": 1})

    @pytest.mark.parametrize("kw", [{"method": "magic"}, {"strengths": ()}, {"no_transfer_prior": 1.5}, {"similarity": "l1"}])
    def test_bad_settings(self, kw) -> None:
        with pytest.raises(UsageError):
            tr.TransferSettings(**kw)

    def test_source_without_embedding(self) -> None:
        doc = {"dataset": "x", "histogram": {2: [1, 1, 1]}, "model": Mixture((1.0,), (1.0,), (1.0,)).to_dict(), "embedding": None}
        with pytest.raises(EmbeddingError, match="--embed"):
            tr.Source.from_saved(doc, "x.yaml")

    def test_model_mismatch(self) -> None:
        s = source("s", [1, 2, 3], [1.0, 0.0], model="other-model")
        with pytest.raises(EmbeddingError, match="other-model"):
            tr.check_embeddings([s], "fake", 2)
        with pytest.raises(EmbeddingError, match="dimension"):
            tr.check_embeddings([source("t", [1, 2, 3], [1.0, 0.0])], "fake", 3)


class TestShippedPriors:
    """configs/priors: loadable sources with provenance and licence, and nothing but aggregates."""

    def test_priors_load(self) -> None:
        from betaconform_cli import params

        files = sorted((ROOT / "configs" / "priors").glob("*.yaml"))
        assert len(files) >= 15
        for f in files:
            doc = params.load_fit(f)
            src = tr.Source.from_saved(doc, str(f))
            assert src.model == "all-MiniLM-L6-v2" and len(src.embedding) == 384
            assert doc["provenance"]["licence"] and doc["provenance"]["source"]
            assert "items" not in str(doc.get("provenance", {}).get("contains", "x")).replace("no texts or items", "")
            assert not any(key in doc for key in ("texts", "item_texts", "ids"))


class TestBenchmarkScript:
    """The benchmark skips cleanly without ../shared/data."""

    def test_skips_without_data(self, tmp_path: Path) -> None:
        import subprocess
        import sys

        res = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "transfer.py"), "--data", str(tmp_path / "none")],
            capture_output=True, text=True, timeout=120,
        )
        assert res.returncode == 0 and "skipped" in res.stderr
