"""configs/priors: every shipped prior carries the provenance a benchmark needs, the README lists them all, and
the script that builds the public ones reads pinned commits and skips cleanly without them."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PRIORS = ROOT / "configs" / "priors"
sys.path.insert(0, str(ROOT / "benchmarks"))

import make_public_priors as mpp  # noqa: E402

KINDS = {"pairwise-preference", "reward-model", "safety", "qa-grading", "crowd-labels", "classification"}
FIELDS = ("collection", "benchmark", "domain", "kind", "source", "licence", "judges", "note", "fitted_with", "contains")


@functools.lru_cache(maxsize=1)
def shipped() -> tuple[tuple[Path, dict[str, Any]], ...]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple((f, yaml.load(f.read_text(), Loader=loader)) for f in sorted(PRIORS.glob("*.yaml")))


class TestProvenance:
    """Each prior names its item set and kind, so a benchmark can drop every prior built on held-out items."""

    def test_fields(self) -> None:
        assert len(shipped()) >= 32
        for f, doc in shipped():
            prov = doc["provenance"]
            missing = [k for k in FIELDS if not prov.get(k)]
            assert not missing, f"{f.name}: provenance lacks {missing}"
            assert prov["kind"] in KINDS, f"{f.name}: kind {prov['kind']!r}"
            assert f.stem.startswith(prov["collection"].split("-")[0].lower()), f"{f.name}: not prefixed by its collection"

    def test_judges_match_histogram(self) -> None:
        for f, doc in shipped():
            if doc["provenance"]["collection"] == "snow-rte":
                continue  # worker slots: a different person per item, listed once per slot
            assert len(doc["provenance"]["judges"]) == doc["judges"], f.name

    def test_readme_lists_every_prior(self) -> None:
        rows = [line.split("|")[1].strip() for line in (PRIORS / "README.md").read_text().splitlines()
                if line.startswith("| ") and ".yaml" in line.split("|")[1]]
        assert sorted(rows) == sorted(f.name for f in PRIORS.glob("*.yaml"))


class TestHelpers:
    """The parsing rules, against hand-worked cases."""

    def test_normalise(self) -> None:
        assert mpp._normalise("The  Beatles!") == "beatles"
        assert mpp._normalise("an Apple, a day") == "apple day"
        assert mpp._normalise("US$1,499.00") == "us149900"

    def test_preferred(self) -> None:
        assert mpp._preferred(1, "x", "y") == "x"
        assert mpp._preferred(2, "x", "y") == "y"
        assert mpp._preferred(3, "x", "y") == "tie"
        assert mpp._preferred(None, "x", "y") == "tie"

    def test_winner(self) -> None:
        metrics = ["1. Is it concise?", {"swap = False": {"winner": "2"}, "swap = True": {"winner": "1"}}]
        assert mpp._winner(metrics) == "2"
        assert mpp._winner([{"swap = False": {"completion": ["?"]}}]) is None
        assert mpp._winner([{"swap = False": {"winner": 1}}]) == "1"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


class TestSnapshots:
    """A source is read at its pinned commit; a missing repository or commit is skipped, never guessed."""

    def test_pinned_commit(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        work = tmp_path / "work"
        work.mkdir()
        _git(work, "init", "-q")
        (work / "a.txt").write_text("first")
        _git(work, "add", "a.txt")
        _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
        pinned = _git(work, "rev-parse", "HEAD")
        (work / "a.txt").write_text("second")
        _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
        root = tmp_path / "snapshots"
        root.mkdir()
        _git(tmp_path, "clone", "-q", "--bare", str(work), str(root / "o+r"))
        monkeypatch.setitem(mpp.COMMITS, "o/r", pinned)
        snap = mpp.Snapshot.find(root, "o/r")
        assert snap is not None and snap.text("a.txt") == "first"
        monkeypatch.setitem(mpp.COMMITS, "o/r", "0" * 40)
        assert mpp.Snapshot.find(root, "o/r") is None

    def test_skips_without_snapshots(self, tmp_path: Path) -> None:
        res = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "make_public_priors.py"), str(tmp_path / "none"), "--out", str(tmp_path)],
            capture_output=True, text=True, timeout=120, check=False,
        )
        assert res.returncode == 0 and "skipped" in res.stderr
        assert not list(tmp_path.glob("*.yaml"))
