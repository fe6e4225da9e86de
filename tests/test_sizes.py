"""The rooms stay small: no function over 60 lines, no module over 500 lines, no dataclass or msgspec Struct over 12
fields but the published documents (the house rules; issue 20)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

import betaconform_cli

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "betaconform_cli"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500
MAX_FIELDS = 12

# The msgspec Structs whose fields ARE a published JSON schema (docs/schema/, `make schema`): a field is a key that
# users' scripts and the schema name, so the width is the document's, not a room to split.
DOCUMENTS = {
    "betaconform_cli.judges.document.JudgesDocument": "judges -f json's top level (docs/schema/judges.json)",
    "betaconform_cli.score.document.ScoreDocument": "score -f json's top level (docs/schema/score.json)",
    "betaconform_cli.doctor.DoctorDocument": "doctor -f json's top level (docs/schema/doctor.json)",
    "betaconform_cli.evaluate.document.EvaluateDocument": "evaluate -f json's top level (docs/schema/evaluate.json)",
    "betaconform_cli.evaluate.document.CellResult": "one of evaluate -f json's cells (docs/schema/evaluate.json)",
    "betaconform_cli.fit_document.TransferSource": "one of a transfer fit's sources (docs/schema/fit.json)",
}



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


def field_count(cls: type) -> int | None:
    """A dataclass's or msgspec Struct's fields, inherited ones included; None for any other class."""
    if dataclasses.is_dataclass(cls):
        return len(dataclasses.fields(cls))
    if issubclass(cls, msgspec.Struct):
        return len(cls.__struct_fields__)
    return None


def wide_classes(module: ModuleType, limit: int = MAX_FIELDS) -> dict[str, int]:
    """'module.Class' -> fields, for every dataclass or Struct defined in `module` with more than `limit` fields."""
    out = {}
    for name, obj in vars(module).items():
        if inspect.isclass(obj) and obj.__module__ == module.__name__:
            n = field_count(obj)
            if n is not None and n > limit:
                out[f"{module.__name__}.{name}"] = n
    return out


def package_modules() -> list[ModuleType]:
    """Every module of the package, imported (but __main__, which runs the app)."""
    names = [m.name for m in pkgutil.walk_packages(betaconform_cli.__path__, "betaconform_cli.")]
    return [importlib.import_module(n) for n in sorted(names) if not n.endswith(".__main__")]


class TestSizes:
    """Every module of the package."""

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


class TestFields:
    """No dataclass or Struct over 12 fields in the package but the listed published documents."""

    def test_the_check_sees_a_wide_class(self, tmp_path: Path) -> None:
        """The measure itself: a 13-field dataclass and a 13-field Struct are reported, inherited fields counted;
        12 fields and a plain class are not."""
        body = "\n".join(f"    f{i}: int = {i}" for i in range(12))
        (tmp_path / "wide_toy.py").write_text(
            "import dataclasses\nimport msgspec\n\n\n@dataclasses.dataclass\nclass Twelve:\n" + body + "\n\n\n"
            "@dataclasses.dataclass\nclass Thirteen(Twelve):\n    extra: int = 0\n\n\n"
            "class Doc(msgspec.Struct):\n" + body + "\n    extra: int = 0\n\n\nclass Plain:\n" + body + "\n    extra: int = 0\n",
            encoding="utf-8")
        spec = importlib.util.spec_from_file_location("wide_toy", tmp_path / "wide_toy.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["wide_toy"] = module
        try:
            spec.loader.exec_module(module)
        finally:
            del sys.modules["wide_toy"]
        assert wide_classes(module) == {"wide_toy.Thirteen": 13, "wide_toy.Doc": 13}

    def test_no_wide_class_but_the_documents(self) -> None:
        wide = {}
        for module in package_modules():
            wide.update(wide_classes(module))
        assert sorted(set(wide) - set(DOCUMENTS)) == []

    def test_the_listed_documents_are_published(self) -> None:
        """Each exception is a Struct that a published schema defines (and still over 12 fields: else unlist it)."""
        from betaconform_cli.schemas import published

        defined = {name for p in published() for name in p.schema.get("$defs", {})}
        for path in DOCUMENTS:
            module, name = path.rsplit(".", 1)
            cls = getattr(importlib.import_module(module), name)
            assert issubclass(cls, msgspec.Struct) and name in defined, path
            assert (field_count(cls) or 0) > MAX_FIELDS, f"{path} has {field_count(cls)} fields: drop it from DOCUMENTS"
