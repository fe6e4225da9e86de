"""Shared fixtures: a pinned terminal width so rich output is stable, a CLI runner, a JSONL writer."""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI does, before numpy loads

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from typer.testing import CliRunner

# Property tests draw the same examples on every run, so CI cannot pass or fail by luck of the draw.
hypothesis_settings.register_profile("deterministic", derandomize=True, print_blob=True)
hypothesis_settings.load_profile("deterministic")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
SHARED_DATA = ROOT.parent / "shared" / "data"


HOSTILE = Path(__file__).resolve().parent / "hostile"


def _cost_class(item: pytest.Item) -> int:
    """0: the fresh venv and the JVM (tens of seconds of one worker); 1: seeded simulations and the real model
    (seconds); 2: the rest (milliseconds to a second)."""
    if item.get_closest_marker("install") or item.get_closest_marker("spark"):
        return 0
    return 1 if item.get_closest_marker("slow") or item.get_closest_marker("model") else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """tests/hostile/ runs real CLI processes (seconds each on 2 cores): marked `hostile`, left out of the fast tier.
    The longest tests run first (a stable sort by cost class): under `make test`'s `--dist worksteal` the first
    worker starts on them while the other starts on the short ones, and whichever runs out takes half of the other's
    queue from its end, so no long test is left to finish alone at the end (docs/TESTING.md)."""
    for item in items:
        if HOSTILE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.hostile)
    items.sort(key=_cost_class)
    _freeze_what_collection_made()


def _freeze_what_collection_made() -> None:
    """Every object alive after collection (the modules, the test items) moved out of the cyclic garbage collector's
    sight: a full collection then no longer walks them, which it did about 20 times per worker, each time through
    everything imported (statsmodels' Holm calls gc.collect() itself). Nothing a test creates is affected; measured on
    the fast tier: the collector's CPU time 10.7 -> 7.1 s (docs/TESTING.md)."""
    import gc

    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread() -> Any:
    """As the CLI does: tiny matrices, and spinning BLAS threads slow everything on 2 cores."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(autouse=True)
def _stable_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "dumb")
    # A cache of each test's own, beside its tmp_path and not in it: a worker whose first matplotlib import falls in
    # a test writes its font cache there, and tests that check a folder holds only what they wrote must not see it.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)  # a test run inside GitHub Actions: not its job page


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    def write(name: str, rows: list[Any], raw: bool = False) -> Path:
        p = tmp_path / name
        p.write_text("".join((r if raw else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
        return p

    return write


def fake_vector(text: str, dimension: int) -> Any:
    """A unit vector standing in for a text's embedding: a function of the text alone (its SHA-256)."""
    import hashlib

    import numpy as np

    h = np.frombuffer(hashlib.sha256(text.encode("utf-8")).digest(), dtype=np.uint8).astype(float)
    v = np.resize(h - h.mean(), dimension)
    return np.asarray(v / np.linalg.norm(v))


def fill_embedding_cache(root: Path, *files: Path) -> Path:
    """`root` as an embedding cache (--cache-dir) holding a vector for every text of the given JSON Lines files,
    for the default model: a command run with it never loads the model (torch, seconds of CPU; a missing text
    would). For tests whose subject is not the embeddings."""
    from betaconform_cli import embeddings

    embedder = embeddings.load_embedder(None, root)
    assert embedder.cache is not None
    for f in files:
        for line in Path(f).read_text(encoding="utf-8").splitlines():
            text = json.loads(line).get("text")
            if text:
                embedder.cache.put(text, fake_vector(text, embedder.dimension))
    return root


class QueryLog:
    """A DuckDB connection that keeps the SQL it ran (`sql`), for tests of which queries a read needs."""

    def __init__(self, con: Any) -> None:
        self.con = con
        self.sql: list[str] = []

    def execute(self, sql: str, *args: Any) -> Any:
        self.sql.append(sql)
        return self.con.execute(sql, *args)


def invoke(runner: CliRunner, *args: str) -> Any:
    from betaconform_cli.cli import app

    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def forecast_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    """For simulations of the live loop that never read `Decision.more` ("label about N more"): plan's forecast
    behind it (stopping.live._forecast_more, about 70% of each check's time) is the last thing decide_with_votes does
    and sets nothing but `more`; standing in 0 for it leaves every decision, half-width, estimate and pick as they
    were (checked on the pool-check loop's seeds: identical histories, 3.4x less time). Tests that read `more` keep
    the real forecast."""
    from betaconform_cli.stopping import live

    monkeypatch.setattr(live, "_forecast_more", lambda *args, **kwargs: 0)
