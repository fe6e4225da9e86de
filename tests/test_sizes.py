"""The rooms stay small: no function over 60 lines, no module over 500 lines (the house rules; issue 20)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "betaconform_cli"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500



def sources() -> list[Path]:
    """Every module of the package: no exceptions."""
    return sorted(PACKAGE.rglob("*.py"))


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """'name (lines, from line N)' for every function or method, nested ones too, longer than `limit` lines
    (from its `def` to its last line; decorators not counted)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                out.append(f"{node.name} ({length} lines, from line {node.lineno})")
    return out


class TestSizes:
    """Every module of the package but the ones being rewritten."""

    def test_the_check_sees_a_long_function(self, tmp_path: Path) -> None:
        """The measure itself: a 61-line function is reported, a 60-line one and a long string are not."""
        body = "\n".join(f"    x{i} = {i}" for i in range(59))
        (tmp_path / "m.py").write_text(
            f"def ok():\n{body}\n\n\ndef long():\n{body}\n    return 1\n\n\nTEXT = '''\n{body}\n'''\n", encoding="utf-8")
        assert long_functions(tmp_path / "m.py") == ["long (61 lines, from line 63)"]

    @pytest.mark.parametrize("path", sources(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
    def test_no_function_over_60_lines(self, path: Path) -> None:
        assert long_functions(path) == []

    @pytest.mark.parametrize("path", sources(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
    def test_no_module_over_500_lines(self, path: Path) -> None:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= MAX_MODULE_LINES, f"{path.name}: {lines} lines"
