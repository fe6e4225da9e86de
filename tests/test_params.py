"""Saved fits: round trip, safe loading, schema errors, atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from betaconform_cli import atomic
from betaconform_cli import savedfit as params
from betaconform_cli.errors import OutputError, ParamsError


def minimal() -> dict:
    return {
        "dataset": "d",
        "items": 3,
        "judges": 2,
        "histogram": {2: [1, 1, 1]},
        "method": "default",
        "model": {"family": "beta_binomial_mixture", "components": [{"weight": 1.0, "alpha": 2.0, "beta": 1.0, "mean": 2 / 3}]},
        "error_rates": [{"k": 1, "estimate": 0.5, "low": 0.1, "high": 0.9, "binomial": 0.5, "beta_binomial": 0.5, "empirical": 0.5}],
        "embedding": None,
    }


class TestRoundTrip:
    """What is saved is read back unchanged."""

    def test_round_trip(self, tmp_path: Path) -> None:
        p = tmp_path / "fit.yaml"
        params.dump_fit(p, minimal())
        doc = params.load_fit(p)
        assert doc.schema == params.SCHEMA and doc.histogram == {2: [1, 1, 1]} and doc.error_rates[0].high == 0.9

    def test_failed_write_keeps_the_old_file(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        p = tmp_path / "fit.yaml"
        p.write_text("precious\n")

        def boom(*_a, **_k):
            raise OSError("disk full")

        monkeypatch.setattr(os, "fsync", boom)
        with pytest.raises(OutputError, match="fit.yaml: cannot write: disk full"):  # one line for the CLI, no traceback
            atomic.write_text(p, "new")
        assert p.read_text() == "precious\n"
        assert [q.name for q in tmp_path.iterdir()] == ["fit.yaml"]

    def test_a_directory_as_the_target_is_a_one_line_error(self, tmp_path: Path) -> None:
        (tmp_path / "out").mkdir()
        for target in (tmp_path / "out", Path("")):
            with pytest.raises(OutputError, match="is a directory"):
                atomic.write_text(target, "new")
        assert list(tmp_path.iterdir()) == [tmp_path / "out"] and not list((tmp_path / "out").iterdir())


    def test_new_file_gets_the_umask_mode_and_existing_keeps_its_own(self, tmp_path: Path) -> None:
        old = os.umask(0o022)
        try:
            atomic.write_text(tmp_path / "new.txt", "x")
            assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o644
            kept = tmp_path / "kept.txt"
            kept.write_text("old")
            kept.chmod(0o600)
            atomic.write_text(kept, "new")
            assert kept.stat().st_mode & 0o777 == 0o600 and kept.read_text() == "new"
        finally:
            os.umask(old)


class TestRefusals:
    """Unsafe or malformed files give one clear ParamsError."""

    def test_python_object_tag_refused(self, tmp_path: Path) -> None:
        p = tmp_path / "evil.yaml"
        p.write_text("schema: !!python/object/apply:os.system ['echo hi']\n")
        with pytest.raises(ParamsError, match="refused"):
            params.load_fit(p)

    @pytest.mark.parametrize(
        "mutate,field",
        [
            (lambda d: d.update(schema="other/1"), "schema"),
            (lambda d: d.pop("histogram"), "histogram"),
            (lambda d: d.update(items="3"), "items"),
            (lambda d: d["model"]["components"][0].update(alpha=-1), "alpha"),
            (lambda d: d["error_rates"][0].pop("low"), "error_rates[0]"),
            (lambda d: d.update(histogram={2: [1, 1]}), "histogram"),
            (lambda d: d.update(embedding={"model": "m", "dimension": 3, "mean": [0.1]}), "embedding.dimension"),
            # each of these passed validation and then crashed `report` or `transfer` with a traceback
            (lambda d: d.update(embedding={"model": "m", "dimension": 2, "mean": ["a", "b"]}), "embedding.mean"),
            (lambda d: d.update(histogram={}), "histogram"),
            (lambda d: d.update(histogram={0: [1]}), "histogram"),
            (lambda d: d.update(histogram={-1: []}), "histogram"),
            (lambda d: d["model"]["components"][0].update(alpha=float("inf")), "alpha"),
            (lambda d: d["model"]["components"][0].update(weight=0), "model.components"),
            (lambda d: d["model"]["components"][0].update(mean="x"), r"components[0].mean"),
            (lambda d: d["model"].update(bic="x"), "model.bic"),
            (lambda d: d["error_rates"][0].update(k="x"), "error_rates[0].k"),
            (lambda d: d["error_rates"][0].update(estimate="x"), "error_rates[0].estimate"),
            (lambda d: d.update(settings="x"), "settings"),
        ],
    )
    def test_schema_errors_name_the_field(self, tmp_path: Path, mutate, field: str) -> None:
        doc = {"schema": params.SCHEMA, **minimal()}
        mutate(doc)
        p = tmp_path / "bad.yaml"
        p.write_text(yaml.safe_dump(doc))
        with pytest.raises(ParamsError, match=field.replace("[", r"\[").replace("]", r"\]")):
            params.load_fit(p)

    def test_a_missing_component_mean_is_filled_in(self, tmp_path: Path) -> None:
        doc = {"schema": params.SCHEMA, **minimal()}
        for c in doc["model"]["components"]:
            c.pop("mean", None)
        p = tmp_path / "prior.yaml"
        p.write_text(yaml.safe_dump(doc))
        c = params.load_fit(p).model.components[0]
        assert c.mean == c.alpha / (c.alpha + c.beta)

    def test_malformed_yaml_names_the_line(self, tmp_path: Path) -> None:
        p = tmp_path / "bad.yaml"
        p.write_text("schema: x\nitems: [1, 2\n")
        with pytest.raises(ParamsError, match="malformed YAML"):
            params.load_fit(p)

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(ParamsError, match="no such file"):
            params.load_fit(tmp_path / "nope.yaml")
