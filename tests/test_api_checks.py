"""Checks in one place (issue 20): options that depend on each other are refused by the api functions themselves,
so a script calling them gets the CLI's one-line error, never a silently dropped option; and one helper turns a
seed into generators."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from betaconform_cli import api
from betaconform_cli.errors import ParameterError
from betaconform_cli.seeds import generator, generators
from tests.conftest import SAMPLE

Q = SAMPLE / "qa_judges.jsonl"


class TestGenerators:
    """seeds.generators: the seed's own stream first, then spawned children."""

    def test_first_is_the_seeds_own_stream_and_the_rest_are_spawned_children(self) -> None:
        got = [g.random(6) for g in generators(7, 3)]
        want = [np.random.default_rng(7).random(6)] + [np.random.default_rng(c).random(6)
                                                      for c in np.random.SeedSequence(7).spawn(2)]
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
        assert np.array_equal(generator(7).random(6), want[0])

    def test_streams_differ_and_repeat_by_seed(self) -> None:
        a, b, c = (g.integers(0, 2**62, 4) for g in generators(3, 3))
        assert len({tuple(a), tuple(b), tuple(c)}) == 3
        assert all(np.array_equal(x.random(3), y.random(3)) for x, y in zip(generators(3, 3), generators(3, 3)))

    @pytest.mark.parametrize("seed", [-1, 2**53, True, 1.5])
    def test_a_bad_seed_is_refused(self, seed: object) -> None:
        with pytest.raises(ParameterError, match="seed"):
            generators(seed, 2)  # type: ignore[arg-type]


class TestLiveStreams:
    """sample live: the fit draws as `fit` does, the next items from their own stream (not a copy of the fit's)."""

    def test_next_items_come_from_the_third_stream(self, tmp_path: Path) -> None:
        from betaconform_cli.stopping.rules import ConformalRule

        lines = Q.read_text(encoding="utf-8").splitlines()
        (tmp_path / "labels.jsonl").write_text("\n".join(lines[:15]) + "\n", encoding="utf-8")
        ids = [json.loads(x)["id"] for x in lines]
        (tmp_path / "pool.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")
        rep = api.sample_live(str(tmp_path / "labels.jsonl"), ConformalRule(), str(tmp_path / "pool.jsonl"), seed=5, batch=6)
        pool = sorted(ids)
        order = np.random.default_rng(np.random.SeedSequence(5).spawn(2)[1]).permutation(len(pool))
        labeled = set(ids[:15])
        assert rep.document.next_ids == [pool[i] for i in order if pool[i] not in labeled][:6]
        fitted = api.fit([str(tmp_path / "labels.jsonl")], seed=5).documents[0]
        assert rep.document.error_rates == fitted.error_rates


class TestModesRefusedInApi:
    """An option of another mode is a ParameterError naming both options, before any input is read."""

    def test_evaluate_rule_with_transfer(self) -> None:
        from betaconform_cli import evaluate as ev

        rules = ev.rule_grid("conformal", None, None)
        with pytest.raises(ParameterError) as exc:
            api.evaluate(["no-such-file.jsonl"], ev.EvaluateSettings(sizes=(10,)), rules=rules, transfer=True)
        assert exc.value.params == ("rule", "transfer")

    def test_evaluate_methods_with_transfer(self) -> None:
        from betaconform_cli import evaluate as ev

        with pytest.raises(ParameterError) as exc:
            api.evaluate(["no-such-file.jsonl"], ev.EvaluateSettings(sizes=(10,), methods=("default",)), transfer=True)
        assert exc.value.params == ("transfer", "methods")

    def test_evaluate_embedding_without_transfer(self) -> None:
        from betaconform_cli import evaluate as ev
        from betaconform_cli.embeddings import EmbedOptions

        with pytest.raises(ParameterError) as exc:
            api.evaluate(["no-such-file.jsonl"], ev.EvaluateSettings(sizes=(10,)), embed=EmbedOptions())
        assert exc.value.params == ("embedding_model", "transfer")

    @pytest.mark.parametrize(("kwargs", "params"), [
        ({"replay": True, "pool": "p.jsonl"}, ("replay", "pool", "batch")),
        ({"replay": True, "batch": 3}, ("replay", "pool", "batch")),
        ({"runs": 5}, ("runs", "replay")),
    ])
    def test_sample_options_of_the_other_mode(self, kwargs: dict[str, object], params: tuple[str, ...]) -> None:
        from betaconform_cli.stopping.rules import ConformalRule

        with pytest.raises(ParameterError) as exc:
            api.sample("no-such-file.jsonl", ConformalRule(), **kwargs)  # type: ignore[arg-type]
        assert exc.value.params == params

    @pytest.mark.parametrize("args", [
        ["evaluate", str(Q), "--transfer", "--methods", "default"],
        ["evaluate", str(Q), "--cache-dir", "x"],
        ["sample", str(Q), "--replay", "--batch", "2"],
        ["sample", str(Q), "--runs", "3"],
    ])
    def test_the_cli_says_it_in_one_line(self, runner, args: list[str]) -> None:  # type: ignore[no-untyped-def]
        from tests.conftest import invoke

        res = invoke(runner, *args)
        assert res.exit_code == 2 and res.stdout == ""
        assert len(res.stderr.strip().splitlines()) == 1 and res.stderr.startswith("error: --")
