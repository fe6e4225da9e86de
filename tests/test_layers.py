"""The structure stays easy to see: each module imports only its own layer or lower ones, and only the CLI
imports typer and rich (docs/ARCHITECTURE.md draws these layers)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_imports import PACKAGE, all_modules, counted, graph, short

# The layer of every module, lower layers first: a module may import its own layer or a lower one, never a higher
# one. A key is a module or a package; the longest key that is a prefix of a module's name gives its layer (a
# package may have its modules in several layers). docs/ARCHITECTURE.md draws this table.
LAYER_OF = {
    # 0: the exception tree, escaping, file suffixes and limits, the fit settings, the options' choices, the seeds,
    # the sufficient statistic, the BLAS pin, the one file writer, the protected inputs, the version, the parameters
    # table, the interval helpers, the output formats' registry
    "errors": 0, "escape": 0, "formats": 0, "settings": 0, "choices": 0, "seeds": 0, "counts": 0, "blas": 0, "atomic": 0,
    "file_names": 0, "protect": 0, "version": 0, "parameters": 0, "intervals": 0, "output_formats": 0,
    # 1: the numbers' leaves and reading inputs
    "distributions": 1, "em": 1, "mixtures": 1, "inputs": 1, "gate": 1, "slicing": 1, "dawid_skene": 1,
    "extrapolation": 1,
    # 2: estimators, the error table, the fit's documents
    "fit": 2, "estimators": 2, "fit_document": 2, "document_types": 2, "posterior": 2, "savedfit": 2, "embeddings": 2, "votes": 2, "doctor": 2,
    "failed_inputs": 2,
    # 3: the commands' concepts
    "stopping": 3, "transfer": 3, "judges": 3, "score": 3,
    # 4: the paper's experiments, the published schemas' list
    "evaluate": 4, "schemas": 4,
    # 5: views and renderings
    "report": 5, "plots": 5,
    # 6: one function per command, and the package's `__init__` (""), whose library names load api/ on first use
    "api": 6, "": 6,
    # 7: the typer app
    "cli": 7, "__main__": 7,
}
UI = {"typer", "rich", "click"}


def layer(name: str) -> int:
    """The layer of a module of the package: its longest key in LAYER_OF (KeyError for a module without one)."""
    parts = name.split(".")[1:]
    for n in range(len(parts), -1, -1):
        key = ".".join(parts[:n])
        if key in LAYER_OF:
            return LAYER_OF[key]
    raise KeyError(name)


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py"))


def top(path: Path) -> str:
    rel = path.relative_to(PACKAGE).parts
    return rel[0].removesuffix(".py")


def outside_imports(path: Path) -> list[tuple[str, int]]:
    """(top-level name of an imported package outside this one, line) for every import, lazy ones too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.append(((node.module or "").split(".")[0], node.lineno))
    return out


class TestLayers:
    """Every module, every import (lazy imports inside functions included)."""

    def test_every_module_has_a_layer(self) -> None:
        missing = []
        for name in all_modules():
            try:
                layer(name)
            except KeyError:
                missing.append(name)
        assert missing == []

    def test_no_upward_import(self) -> None:
        """Every import of the package's graph (tests/test_imports.py: inside packages, lazy and type-only ones)."""
        up = []
        for name, out in graph().items():
            for target, line in counted(name, out):
                if layer(target) > layer(name):
                    up.append(f"{short(name)}:{line} (layer {layer(name)}) imports {short(target)} (layer {layer(target)})")
        assert up == [], "\n".join(up)

    @pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_only_the_cli_imports_the_ui(self, path: Path) -> None:
        for name, line in outside_imports(path):
            if name in UI:
                assert top(path) == "cli", f"{path.name}:{line}: only the CLI may import {name}"

    @pytest.mark.process  # a fresh interpreter: what a new process imports
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


@pytest.mark.process  # a fresh interpreter: what a new process imports
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
        """`fit FILE -f json` on correctness data (default options): the fit's numbers (numpy) and the JSON report,
        not scipy (the default fit's numerics are numpy's and the standard library's: docs/SPEED.md), DuckDB, the
        table's console, YAML (saved fits), the vote patterns' model, matplotlib or torch."""
        data = Path(__file__).resolve().parent.parent / "sample_data" / "qa_judges.jsonl"
        loaded = _loaded_after(_run_cli("fit", str(data), "-f", "json") + "\nimport betaconform_cli.report.fit")
        assert set(loaded) == {"numpy", "betaconform_cli.report", "betaconform_cli.api._fit"}
        script = (_run_cli("fit", str(data), "-f", "json") + "\nprint(','.join(m for m in ('duckdb', 'yaml', 'rich.console', "
                  "'scipy.stats', 'betaconform_cli.votes', 'pydantic', 'matplotlib', 'torch') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-c", "import sys, io\n" + script], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == ""

    def test_the_default_table_fit_loads_no_scipy(self) -> None:
        """`fit FILE` (the table) computes the same numbers as the JSON fit: no scipy either."""
        data = Path(__file__).resolve().parent.parent / "sample_data" / "counts_only.jsonl"
        assert "scipy" not in _loaded_after(_run_cli("fit", str(data)), ("scipy", "betaconform_cli.fit"))


def test_fit_imports_the_fitting_code_while_workers_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """While forked workers count a big file, `fit` imports the module betaconform_cli.fit (the fitting code) beside
    them, not after the read: `from .. import fit` would get the package's attribute, the library's function
    (betaconform_cli/__init__.py), and leave the import to after the read (with scipy, before the fit dropped it,
    the 1M-item fit was ~0.25 s slower)."""
    import betaconform_cli.api._fit as api_fit

    seen: list[bool] = []

    class Pending:
        works_meanwhile = True
        failed = ()

        def result(self) -> list[object]:
            seen.append("betaconform_cli.fit" in sys.modules)
            raise KeyboardInterrupt  # stop here: only the import before the read is checked

    monkeypatch.delitem(sys.modules, "betaconform_cli.fit", raising=False)
    monkeypatch.setattr(api_fit, "begin_read", lambda *a, **k: Pending())
    with pytest.raises(KeyboardInterrupt):
        api_fit.fit(["big.jsonl"])
    assert seen == [True]
