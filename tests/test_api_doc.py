"""docs/API.md's examples run: every fenced Python block, in order, in one namespace, from the repository's root
(as a reader would paste them into one notebook)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "API.md"


def blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_doc_has_examples() -> None:
    assert len(blocks()) >= 8


@pytest.mark.slow
def test_every_block_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for lib in ("pandas", "polars", "pyarrow"):
        pytest.importorskip(lib)
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "api_doc"}
    for i, code in enumerate(blocks(), start=1):
        try:
            exec(compile(code, f"docs/API.md block {i}", "exec"), namespace)  # noqa: S102 - our own documentation
        except Exception as exc:  # noqa: BLE001 - say which block failed
            pytest.fail(f"docs/API.md block {i} failed: {type(exc).__name__}: {exc}")
    out = capsys.readouterr().out
    assert "majority-vote error by number of judges k" in out  # block 1 printed the fit's table
    assert "<DataFrame>: row 3: column 'judge'" in out  # the error example printed the error it shows
