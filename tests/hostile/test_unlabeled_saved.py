"""Saved fits with the unlabeled items' record (issue 17.3), hand-edited: `report` either refuses them with one
line naming the field, or shows them, in every format; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from betaconform_cli.report.fit import saved_document
from betaconform_cli.savedfit import dump_fit

from ..test_fit_unlabeled import document
from .conftest import one_error_line, run_cli


@pytest.fixture(scope="module")
def body(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("fit") / "toy.yaml"
    dump_fit(path, saved_document(document()))
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def write(body: dict[str, Any], tmp_path: Path, edit: Any) -> Path:
    doc = json.loads(json.dumps(body))  # a deep copy (the histogram's keys become text: put them back)
    doc["histogram"] = {int(k): v for k, v in doc["histogram"].items()}
    edit(doc)
    path = tmp_path / "edited.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return path


SHOWN = {
    "markup and control characters in the reason": lambda d: d["unlabeled"].update(reason="[bold red]x[/] \x1b[2J\u202e y"),
    "b0 as text": lambda d: d["unlabeled"]["model"].update(b0="x"),
    "model probabilities as text": lambda d: d["unlabeled"]["model"].update(model_probabilities={"flat": "x", "[b]": 1}),
    "split counts as a long list": lambda d: d["unlabeled"]["model"].update(labeled_splits=list(range(10_000))),
    "model probabilities a list": lambda d: d["unlabeled"]["model"].update(model_probabilities=[1, 2]),
    "no record, only the count": lambda d: d.pop("unlabeled"),
}
REFUSED = {
    "unknown method": (lambda d: d["unlabeled"].update(method="oracle"), "unlabeled.method"),
    "record without the count": (lambda d: d.pop("unlabeled_items"), "unlabeled_items"),
    "labels_only beyond 1": (lambda d: d["error_rates"][3].update(labels_only=7), "error_rates[3].labels_only"),
}


@pytest.mark.parametrize("case", sorted(SHOWN))
def test_odd_values_are_shown(body: dict[str, Any], tmp_path: Path, case: str) -> None:
    path = write(body, tmp_path, SHOWN[case])
    for fmt in ("table", "json"):
        p = run_cli("report", path, "-f", fmt)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        assert b"\x1b[2J" not in p.stdout


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_inconsistent_records_are_refused(body: dict[str, Any], tmp_path: Path, case: str) -> None:
    edit, field = REFUSED[case]
    line = one_error_line(run_cli("report", write(body, tmp_path, edit)))
    assert f"field '{field}'" in line and "edited.yaml" in line
