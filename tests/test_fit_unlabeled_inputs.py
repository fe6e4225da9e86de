"""`fit` on real files with unlabeled items (issue 17.3 over the readers of 17.1/17.2): every verdict format hands
its unlabeled items to the fit. Independent computation: the same items written here as arrays, fitted by
votes.analyse_with_votes with the same seed (the centre is exact; the interval within simulation noise)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from betaconform_cli.counts import CountTable
from betaconform_cli.document_types import plain
from betaconform_cli.inputs.dataset import Votes
from betaconform_cli.settings import FitSettings
from betaconform_cli.votes import analyse_with_votes

from .conftest import invoke as _invoke

CLASSES = ("no", "yes")


def invoke(*args: Any) -> Any:
    from typer.testing import CliRunner

    return _invoke(CliRunner(), *args)


def items(seed: int = 7, n: int = 300, judges: int = 7, labeled: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """(verdicts as class codes, gold codes with -1 = unlabeled): judges of per-item accuracy ~ Beta(4, 1.5)."""
    rng = np.random.default_rng(seed)
    side = rng.integers(0, 2, size=n)
    right = rng.random((n, judges)) < rng.beta(4.0, 1.5, size=n)[:, None]
    votes = np.where(right, side[:, None], 1 - side[:, None])
    gold = np.full(n, -1)
    pick = rng.choice(n, size=labeled, replace=False)
    gold[pick] = side[pick]
    return votes, gold


def expected(votes: np.ndarray, gold: np.ndarray, seed: int = 0) -> dict[str, Any]:
    lab = gold >= 0
    table = CountTable.from_pairs([votes.shape[1]] * int(lab.sum()), (votes[lab] == gold[lab, None]).sum(axis=1).tolist())
    v = Votes(tuple(f"j{j}" for j in range(votes.shape[1])), CLASSES, votes, gold, np.ones(len(gold)))
    return plain(analyse_with_votes(table, v, FitSettings(), np.random.default_rng(seed)).record())


def write_jsonl(path: Path, votes: np.ndarray, gold: np.ndarray, absent: bool) -> None:
    with path.open("w") as fh:
        for i, (row, g) in enumerate(zip(votes, gold)):
            rec: dict[str, Any] = {"id": f"q{i}", "verdicts": [CLASSES[c] for c in row]}
            if g >= 0:
                rec["label"] = CLASSES[g]
            elif not absent:
                rec["label"] = None
            fh.write(json.dumps(rec) + "\n")


def write_wide(path: Path, votes: np.ndarray, gold: np.ndarray) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "gold", *[f"judge{j}" for j in range(votes.shape[1])]])
        for i, (row, g) in enumerate(zip(votes, gold)):
            w.writerow([f"q{i}", CLASSES[g] if g >= 0 else "", *[CLASSES[c] for c in row]])


def write_long(path: Path, votes: np.ndarray, gold: np.ndarray) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "judge", "verdict", "gold"])
        for i, (row, g) in enumerate(zip(votes, gold)):
            for j, c in enumerate(row):
                w.writerow([f"q{i}", f"judge{j}", CLASSES[c], CLASSES[g] if g >= 0 else ""])


WRITERS = {
    "jsonl label null": ("x.jsonl", lambda p, v, g: write_jsonl(p, v, g, absent=False)),
    "jsonl label absent": ("x.jsonl", lambda p, v, g: write_jsonl(p, v, g, absent=True)),
    "wide csv empty gold": ("x.csv", write_wide),
    "long csv empty gold": ("x.csv", write_long),
}


@pytest.mark.parametrize("case", sorted(WRITERS))
def test_every_format_feeds_the_fit(tmp_path: Path, case: str) -> None:
    votes, gold = items()
    name, writer = WRITERS[case]
    path = tmp_path / name
    writer(path, votes, gold)
    res = invoke("fit", path, "--format", "json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    want = expected(votes, gold)
    assert d["items"] == 40 and d["unlabeled_items"] == 260
    assert d["unlabeled"]["method"] == want["unlabeled"]["method"]
    for got, ref in zip(d["error_rates"], want["error_rates"]):
        assert got["estimate"] == pytest.approx(ref["estimate"], abs=1e-9)
        assert got["labels_only"] == pytest.approx(ref["labels_only"], abs=1e-9)
        assert got["low"] == pytest.approx(ref["low"], abs=0.01) and got["high"] == pytest.approx(ref["high"], abs=0.01)
    off = json.loads(invoke("fit", path, "--format", "json", "--no-unlabeled").stdout)
    assert [r["estimate"] for r in off["error_rates"]] == [r["labels_only"] for r in d["error_rates"]]


FIXTURES = Path(__file__).parent / "fixtures"


def test_promptfoo_cases_without_a_rating(tmp_path: Path) -> None:
    """promptfoo's fixture: 10 rated cases and 3 with verdicts but without a human rating; the table says both and the method."""
    path = FIXTURES / "promptfoo" / "results_human.jsonl"
    d = json.loads(invoke("fit", path, "--format", "json").stdout)
    doc = json.loads((FIXTURES / "promptfoo" / "results_human.expected.json").read_text())
    rated = sum(it["gold"] is not None for it in doc["items"])
    unrated = sum(it["gold"] is None and any(v is not None for v in it["verdicts"]) for it in doc["items"])
    assert (d["items"], d["unlabeled_items"]) == (rated, unrated) == (10, 3)  # a case with no verdict is no item
    assert all(r["low"] <= r["estimate"] <= r["high"] for r in d["error_rates"])
    text = invoke("fit", path, "--no-chart").stdout
    assert "10 labeled + 3 unlabeled items" in text


def test_inspect_samples_without_gold(tmp_path: Path) -> None:
    """An inspect log whose every third sample lost its human label: those are the unlabeled items."""
    log = next(iter(sorted((FIXTURES / "inspect" / "main_json").glob("*.json"))))
    doc = json.loads(log.read_text())
    dropped = 0
    for k, s in enumerate(doc["samples"]):
        if k % 3 == 0 and isinstance(s.get("metadata"), dict) and s["metadata"].pop("human", None) is not None:
            dropped += 1
    path = tmp_path / log.name
    path.write_text(json.dumps(doc))
    full = json.loads(invoke("fit", log, "--label-field", "metadata.human", "--format", "json").stdout)
    part = json.loads(invoke("fit", path, "--label-field", "metadata.human", "--format", "json").stdout)
    assert dropped > 0 and full["unlabeled_items"] == 0 and "unlabeled" not in full
    assert part["unlabeled_items"] == dropped and part["items"] == full["items"] - dropped
