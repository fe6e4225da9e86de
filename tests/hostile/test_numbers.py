"""Wrong answers and exit codes (issue 10, items 14, 15, 17 and the unbounded options found on the way)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import betabinom, hypergeom

from .conftest import MIXED, Q, invoke, q_rows, write_jsonl

COLUMNS = ("estimate", "low", "high", "mixture", "binomial", "beta_binomial")


def majority_error(correct: np.ndarray, k: int) -> np.ndarray:
    """Error of a majority of k votes with `correct` right ones; a tie is half an error."""
    return np.where(2 * correct < k, 1.0, np.where(2 * correct == k, 0.5, 0.0))


def population_error(weights: list[float], alphas: list[float], betas: list[float], k: int) -> float:
    """The mixture's k-judge majority error, by scipy: sum_j w_j sum_S BB(S | k, a_j, b_j) err(S, k)."""
    s = np.arange(k + 1)
    return float(sum(w * betabinom.pmf(s, k, a, b) @ majority_error(s, k) for w, a, b in zip(weights, alphas, betas)))


def cell_error(weights: list[float], alphas: list[float], betas: list[float], big_k: int, s: int, k: int) -> float:
    """Independent odd-k cell error: hypergeometric thinning for k <= K; beyond, the k - K missing judges from the
    item's posterior (scipy's betabinom)."""
    if k <= big_k:
        h = np.arange(k + 1)
        return float(hypergeom.pmf(h, big_k, s, k) @ majority_error(h, k))
    post = np.array([w * betabinom.pmf(s, big_k, a, b) for w, a, b in zip(weights, alphas, betas)])
    post /= post.sum()
    x = np.arange(k - big_k + 1)
    return float(sum(p * betabinom.pmf(x, k - big_k, a + s, b + big_k - s) @ majority_error(s + x, k)
                     for p, a, b in zip(post, alphas, betas)))


class TestTieRuleBeyondTheJudges:
    """Item 17: an even k equals k - 1 in every column, also where the mixture extrapolates missing judges."""

    @pytest.fixture(scope="class")
    def mixed_counts(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        rng = np.random.default_rng(7)
        rows = [{"id": i, "judgments": r["judgments"][: int(rng.choice([1, 2, 3, 5, 6, 7, 11]))]} for i, r in enumerate(q_rows())]
        return write_jsonl(tmp_path_factory.mktemp("mixed") / "mixed.jsonl", rows)

    @pytest.mark.parametrize("method", ["default", "plugin", "paper"])
    @pytest.mark.parametrize("data", ["mixed_counts", "code_review"])
    def test_every_even_row_is_the_odd_row_above(self, data: str, method: str, mixed_counts: Path) -> None:
        path = mixed_counts if data == "mixed_counts" else MIXED
        doc = json.loads(invoke("fit", path, "--ks", "1-21", "--method", method, "-f", "json").stdout)
        rows = {r["k"]: r for r in doc["error_rates"]}
        assert any(r["extrapolated"] for r in rows.values())
        for k in range(2, 22, 2):
            for c in COLUMNS:
                assert rows[k][c] == pytest.approx(rows[k - 1][c], abs=1e-12), (k, c)

    def test_cells_against_scipy(self, mixed_counts: Path) -> None:
        """Each cell's error at odd k (thinned or extrapolated) by an independent computation; and averaged over the
        mixture's own distribution of S at each K, every k (odd or even) gives the mixture's k-judge error: the
        identity the even rows rest on holds for the quantity estimated."""
        from betaconform_cli.distributions import Mixture
        from betaconform_cli.inputs import read_dataset
        from betaconform_cli.posterior import cell_posterior

        table = read_dataset(mixed_counts).table
        mix = Mixture((0.3, 0.7), (1.5, 9.0), (4.0, 2.0))
        w, a, b = list(mix.weights), list(mix.alphas), list(mix.betas)
        ks = tuple(range(1, 22))
        post = cell_posterior(table, mix, ks, 0.0, 1.0)
        for i, k in enumerate(ks):
            pop = population_error(w, a, b, k)
            for big_k in np.unique(post.judges):
                at = post.judges == big_k
                q = mix.pmf(int(big_k))
                assert float(q @ post.errors[at, i]) == pytest.approx(pop, abs=1e-10), (int(big_k), k)
                if k % 2:
                    want = [cell_error(w, a, b, int(big_k), int(s), k) for s in post.correct[at]]
                    np.testing.assert_allclose(post.errors[at, i], want, atol=1e-10)
                else:  # cell by cell, as the hypergeometric rows are: what makes every column obey the tie rule
                    np.testing.assert_allclose(post.errors[at, i], post.errors[at, i - 1], atol=1e-12)
        for k in range(2, 22, 2):  # the identity itself, on the model
            assert population_error(w, a, b, k) == pytest.approx(population_error(w, a, b, k - 1), abs=1e-12)


class TestPoolExhausted:
    """Item 14: a fully labeled pool with the rule unmet is 'pool exhausted', not 'enough labels'; exit 0."""

    def test_live(self, tmp_path: Path) -> None:
        pool = write_jsonl(tmp_path / "pool.jsonl", q_rows()[:12])
        for rule in ("conformal", "variance"):
            res = invoke("sample", pool, "--pool", pool, "--rule", rule)
            assert res.exit_code == 0 and res.stdout.startswith("stop: pool exhausted"), res.output
            doc = json.loads(invoke("sample", pool, "--pool", pool, "--rule", rule, "-f", "json").stdout)
            assert doc["stopped"] is True and doc["stopped_by"] == "pool exhausted" and doc["next_ids"] == []
        res = invoke("sample", pool, "--pool", pool, "--rule", "variance", "--xi", "0.5")  # the rule is met
        assert res.exit_code == 0 and res.stdout.startswith("stop: enough labels")
        doc = json.loads(invoke("sample", pool, "--pool", pool, "--rule", "variance", "--xi", "0.5", "-f", "json").stdout)
        assert doc["stopped_by"] == "rule"

    def test_replay(self, tmp_path: Path) -> None:
        pool = write_jsonl(tmp_path / "pool.jsonl", q_rows()[:12])
        res = invoke("sample", pool, "--replay", "--runs", "2")
        assert res.exit_code == 0 and "pool exhausted" in res.stdout
        runs = [json.loads(line) for line in invoke("sample", pool, "--replay", "--runs", "2", "-f", "json").stdout.splitlines()]
        assert all(r["stopped"] is False for r in runs[:-1])


class TestNothingToEvaluate:
    """Item 15: every dataset too small is exit 2 in each mode (not exit 0 with an empty table)."""

    @pytest.fixture(scope="class")
    def small(self, tmp_path_factory: pytest.TempPathFactory) -> Path:
        d = tmp_path_factory.mktemp("small")
        write_jsonl(d / "a.jsonl", q_rows()[:5])
        write_jsonl(d / "b.jsonl", q_rows()[5:10])
        return d

    @pytest.mark.parametrize("args,words", [
        (["--r", "10"], "fewer than r + 1"),
        (["--r", "10,30"], "fewer than r + 1"),
        (["--rule", "conformal"], "needs before it can stop"),
        (["--rule", "variance", "--min-samples", "6"], "needs before it can stop"),
        (["--rule", "precision"], "needs before it can stop"),
        (["--transfer"], "fewer than r + 1"),
        (["--transfer", "--r", "3,4", "--embedding-model", "/nonexistent"], None),  # 5 items: r = 3, 4 can be evaluated
    ])
    def test_exit_2(self, small: Path, args: list[str], words: str | None) -> None:
        res = invoke("evaluate", small, "--runs", "2", *args)
        if words is None:  # evaluable: reaches the embedding model, which is missing
            assert res.exit_code == 2 and "embedding model" in res.stderr, res.stderr
            return
        assert res.exit_code == 2 and words in res.stderr and res.stderr.count("\n") == 1, res.stderr
        assert not res.stdout

    def test_refused_before_embedding(self, small: Path, tmp_path: Path) -> None:
        res = invoke("evaluate", small, "--transfer", "--embedding-model", tmp_path / "no-model")
        assert res.exit_code == 2 and "fewer than r + 1" in res.stderr  # not the missing model: nothing was embedded
        res = invoke("evaluate", small / "a.jsonl", "--transfer", "--embedding-model", tmp_path / "no-model")
        assert res.exit_code == 2 and "alone in its folder" in res.stderr

    def test_some_too_small_is_a_note(self, small: Path) -> None:
        res = invoke("evaluate", small / "a.jsonl", Q, "--rule", "variance", "--xi", "0.1", "--runs", "2")
        assert res.exit_code == 0 and "skipped" in res.stderr and "a (5 items)" in res.stderr


class TestUnboundedOptions:
    """Options whose size reached arithmetic or JSON unchecked: each is a one-line usage error or a capped answer."""

    @pytest.mark.parametrize("args,words", [
        (["sample", str(Q), "--min-samples", "99999999999999999999999"], "--min-samples"),
        (["sample", str(Q), "--patience", "99999999999999999999999"], "--patience"),
        (["sample", str(Q), "--replay", "--runs", "99999999999999999999"], "--runs"),
        (["evaluate", str(Q), "--runs", "99999999999999999999"], "--runs"),
        (["fit", str(Q), "--ks", "1-99999999999999999999999"], "--ks"),
    ])
    def test_refused(self, args: list[str], words: str) -> None:
        res = invoke(*args)
        assert res.exit_code == 2 and words in res.stderr and res.stderr.count("\n") == 1, res.stderr

    @pytest.mark.parametrize("args", [["--rule", "precision", "--target", "1e-300"], ["--rule", "variance", "--xi", "1e-300"]])
    def test_tiny_targets_say_a_capped_number(self, args: list[str], tmp_path: Path) -> None:
        labeled = write_jsonl(tmp_path / "lab.jsonl", q_rows()[:30])
        doc = json.loads(invoke("sample", labeled, *args, "-f", "json").stdout)
        assert doc["stopped"] is False and 0 < doc["more_needed"] <= 10**9
