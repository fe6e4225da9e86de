"""The structure stays easy to see: each module imports only its own layer or lower ones, and only the CLI
imports typer and rich (docs/ARCHITECTURE.md draws these layers)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "betaconform_cli"

# lower layers first; a module may import its own layer and any lower one, never a higher one
LAYERS = [
    {"errors", "escape", "formats", "settings", "counts", "blas", "atomic", "protect"},
    {"distributions", "em", "inputs", "gate", "dawid_skene", "latent_classes", "ppi"},
    {"fit", "estimators", "documents", "posterior", "savedfit", "embeddings", "votes", "doctor"},
    {"stopping", "transfer", "judges", "score", "score_document"},
    {"evaluate", "schemas"},
    {"report", "plots"},
    {"api"},
    {"cli", "__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
UI = {"typer", "rich", "click"}


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def top(path: Path) -> str:
    rel = path.relative_to(PACKAGE).parts
    return rel[0].removesuffix(".py")


def imports(path: Path) -> list[tuple[str, int]]:
    """(imported top-level name inside the package or an outside package, line) for every import, lazy ones too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    depth = len(path.relative_to(PACKAGE).parts) - 1  # a module in a subpackage: '..' is the package
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                name = (node.module or "").split(".")
                out.append((name[1] if name[0] == "betaconform_cli" and len(name) > 1 else name[0], node.lineno))
            elif node.level == depth + 1:  # relative to the package root
                if node.module:
                    out.append(("pkg:" + node.module.split(".")[0], node.lineno))
                else:
                    out += [("pkg:" + a.name, node.lineno) for a in node.names]
    return out


class TestLayers:
    """Every module, every import (lazy imports inside functions included)."""

    def test_every_module_has_a_layer(self) -> None:
        assert {top(p) for p in modules()} - {"__init__", "py"} <= set(RANK)

    @pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_upward_import(self, path: Path) -> None:
        me = top(path)
        if me == "__init__":
            return
        for name, line in imports(path):
            if name.startswith("pkg:"):
                other = name[4:]
                if other in RANK:
                    assert RANK[other] <= RANK[me], f"{path.name}:{line}: {me} (layer {RANK[me]}) imports {other} (layer {RANK[other]})"
            elif name in UI:
                assert me == "cli", f"{path.name}:{line}: only the CLI may import {name}"

    def test_importing_the_core_leaves_the_ui_and_torch_out(self) -> None:
        names = [".".join(("betaconform_cli", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
                 for p in modules() if top(p) not in ("cli", "__main__")]
        code = "import sys\n" + "".join(f"import {m}\n" for m in names) + (
            "print(','.join(m for m in ('typer', 'rich', 'click', 'torch', 'sentence_transformers') if m in sys.modules))\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == ""

    def test_the_cli_starts_light(self) -> None:
        """`betaconform --version` and every command's parsing load no scipy, DuckDB or torch (measured start-up:
        0.13 s; scipy alone is ~0.3 s) and no input format's reader (formats.py names them as "module:function"):
        heavy modules are imported where they are used."""
        from betaconform_cli import formats

        readers = tuple(f.reader.split(":")[0] for f in formats.registered() if isinstance(f.reader, str))
        assert len(readers) == len(formats.registered()) >= 4
        code = ("import sys, betaconform_cli.cli\n"
                f"print(','.join(m for m in ('scipy', 'duckdb', 'torch', 'matplotlib', 'inspect_ai', *{readers!r}) if m in sys.modules))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == ""
