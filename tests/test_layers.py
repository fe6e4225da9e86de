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
    {"distributions", "em", "inputs", "gate", "slicing", "dawid_skene", "latent_classes", "ppi", "extrapolation"},
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


HEAVY = ("scipy", "numpy", "duckdb", "betaconform_cli.report", "betaconform_cli.api._fit", "matplotlib", "torch", "pydantic",
         "yaml", "rich.console")


def _loaded_after(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The `heavy` modules (or their submodules) in sys.modules after `code` runs in a fresh interpreter."""
    script = (f"import sys, io\n{code}\n"
              f"print(','.join(h for h in {heavy!r} if any(m == h or m.startswith(h + '.') for m in sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().splitlines()[-1].split(",") if m] if out.stdout.strip() else []


def _run_cli(*args: str) -> str:
    return ("from betaconform_cli.cli import app\nsys.stdout = io.StringIO()\n"
            f"try:\n    app({list(args)!r}, prog_name='betaconform')\nexcept SystemExit:\n    pass\n"
            "sys.stdout = sys.__stdout__")


class TestStartUp:
    """No command imports what its options do not need (issue 30): start-up and `--help` load neither the numbers
    (numpy, scipy), the readers (DuckDB), the output layer (report/, rich's console), the typer coercion's pydantic,
    YAML, matplotlib nor torch; each is imported where it is used (benchmarks/speed.py times what this buys)."""

    def test_importing_the_package_is_light(self) -> None:
        assert _loaded_after("import betaconform_cli") == []

    def test_importing_the_cli_is_light(self) -> None:
        assert _loaded_after("import betaconform_cli.cli") == []

    @pytest.mark.parametrize("args", [("--help",), ("fit", "--help"), ("judges", "--help"), ("fit", "--no-such-option")])
    def test_help_and_usage_errors_are_light(self, args: tuple[str, ...]) -> None:
        """(typer draws its help and usage errors with rich: its console is theirs to load)"""
        assert _loaded_after(_run_cli(*args), tuple(h for h in HEAVY if h != "rich.console")) == []

    def test_a_json_fit_of_correctness_loads_only_its_own(self) -> None:
        """`fit FILE -f json` on correctness data: the fit's numbers and the JSON report, not DuckDB, the table's
        console, YAML (saved fits), the vote patterns' model, scipy.stats, matplotlib or torch."""
        data = Path(__file__).resolve().parent.parent / "sample_data" / "qa_judges.jsonl"
        loaded = _loaded_after(_run_cli("fit", str(data), "-f", "json") + "\nimport betaconform_cli.report.fit")
        assert set(loaded) == {"numpy", "scipy", "betaconform_cli.report", "betaconform_cli.api._fit"}
        script = (_run_cli("fit", str(data), "-f", "json") + "\nprint(','.join(m for m in ('duckdb', 'yaml', 'rich.console', "
                  "'scipy.stats', 'betaconform_cli.votes', 'pydantic', 'matplotlib', 'torch') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-c", "import sys, io\n" + script], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == ""
