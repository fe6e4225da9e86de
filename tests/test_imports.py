"""No import cycles, module by module (issue 28, item 1); tests/test_layers.py checks the same graph for imports of a
higher layer.

The graph has a node for every module of the package, a package's `__init__` included (named by the package), and an
edge for every import written anywhere in a module: at the top, inside a function (lazy), under `if TYPE_CHECKING:`,
`from . import x` and `from .pkg import y` (an edge to the submodule `pkg.y` when there is one, else to `pkg`),
`importlib.import_module("...")` with a literal (relative ones resolved against `__package__`), and the lazy tables
that a package's PEP 562 `__getattr__` reads (`_HOME = {"name": "submodule"}`). Like import-linter, importing
`a.b.c` is an edge to `a.b.c` only: the parents' `__init__`s that Python runs on the way are not edges (every module
would then import its package's `__init__` and every `__init__` that re-exports would close a cycle).

Not edges: the formats' registry names each reader as a "module:function" string (formats.py, layer 0); the reader
is loaded by `formats.resolve` when a file of it is read. That is the plugin mechanism (llm's hooks, entry points):
the registry does not depend on the readers, the readers depend on it.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "betaconform_cli"
ROOT = "betaconform_cli"

# Imports under `if TYPE_CHECKING:` are edges like any other (a type a module names is a dependency, and mypy
# follows it). Those allowed to close a cycle or run up a layer (tests/test_layers.py), each with the reason the
# type-only import is the only way, as (importer, imported).
TYPE_ONLY: dict[tuple[str, str], str] = {
    ("fit", "votes"): "two results that hold each other: FitResult.unlabeled is the votes.VoteEstimate whose "
                      "labels_only is that FitResult (the vote split refits the labels alone through fit.analyse); at "
                      "run time fit never loads votes",
}


def module_name(path: Path) -> str:
    """'betaconform_cli.inputs.paths' for inputs/paths.py; 'betaconform_cli.inputs' for inputs/__init__.py."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((ROOT, *parts))


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _absolute(package: str, level: int, module: str | None) -> str:
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _targets(node: ast.AST, package: str, modules: set[str]) -> Iterator[str]:
    """The modules of the package that one AST node imports."""
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        source = _absolute(package, node.level, node.module) if node.level else (node.module or "")
        for alias in node.names:
            yield f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
    elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            text = first.value
            if text.startswith("."):
                dots = len(text) - len(text.lstrip("."))
                yield _absolute(package, dots, text[dots:] or None)
            else:
                yield text
    elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_HOME" for t in node.targets):
        if isinstance(node.value, ast.Dict):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    yield _absolute(package, 1, value.value)


def _is_import_module(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module")


def edges_of(name: str, path: Path, modules: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module of the package, line, under TYPE_CHECKING) for every import that `name` writes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _type_checking_lines(tree)
    package = _package(name, path)
    out = []
    for node in ast.walk(tree):
        for target in _targets(node, package, modules):
            while target not in modules and "." in target:  # `import a.b.c` of a name inside a module
                target = target.rpartition(".")[0]
            if target in modules and target != name:
                line = getattr(node, "lineno", 0)
                out.append((target, line, line in typing_only))
    return out


def graph() -> dict[str, list[tuple[str, int, bool]]]:
    """Every module's imports (built once per package folder: the tests here and test_layers.py share it)."""
    return _graph_of(PACKAGE)


@functools.lru_cache(maxsize=2)
def _graph_of(package: Path) -> dict[str, list[tuple[str, int, bool]]]:
    modules = all_modules()
    return {name: edges_of(name, path, set(modules)) for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of the graph, as paths a -> b -> a: for every module in a strongly connected component of more
    than one (Tarjan's algorithm), a shortest cycle through it, each cycle once."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    shown: dict[tuple[str, ...], list[str]] = {}
    for comp in sorted(found, key=sorted):
        for start in sorted(comp):
            cycle = _cycle_through(start, comp, edges)
            first = cycle.index(min(cycle[:-1]))
            rotated = cycle[first:-1] + cycle[:first] + [cycle[first]]
            shown.setdefault(tuple(rotated), rotated)
    return list(shown.values())


def _cycle_through(start: str, comp: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest path start -> ... -> start inside one component (breadth first)."""
    back: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges.get(v, set()) & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(back[path[-1]])
                    return [start, *reversed(path[:-1]), start] if v != start else [start, start]
                if w not in back:
                    back[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")


def counted(name: str, out: list[tuple[str, int, bool]]) -> list[tuple[str, int]]:
    """(imported module, line) of the imports of `name` that count: all but the listed type-only ones."""
    return [(t, line) for t, line, typing_only in out if not (typing_only and (short(name), short(t)) in TYPE_ONLY)]


def short(name: str) -> str:
    return name.removeprefix(ROOT + ".") if name != ROOT else "betaconform_cli (__init__)"


class TestImportGraph:
    """The graph itself: every module, every kind of import."""

    def test_the_graph_sees_every_kind_of_import(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A toy package: a top-level, a lazy, a TYPE_CHECKING, `from . import`, `from .pkg import`,
        `import_module` and a `_HOME` table import are each an edge, and a three-module cycle is shown as a path."""
        pkg = tmp_path / ROOT
        (pkg / "sub").mkdir(parents=True)
        files = {
            "__init__.py": "_HOME = {'fit': 'a'}\n",
            "a.py": "from . import b\n",
            "b.py": "def f():\n    from .sub import c\n",
            "sub/__init__.py": "",
            "sub/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import x\n",
            "sub/d.py": "import importlib\nm = importlib.import_module('..b', __package__)\nimport betaconform_cli.a.x\n",
        }
        for rel, text in files.items():
            (pkg / rel).write_text(text, encoding="utf-8")
        monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
        g = graph()
        assert {k: sorted(e) for k, e in g.items() if e} == {
            ROOT: [(f"{ROOT}.a", 1, False)], f"{ROOT}.a": [(f"{ROOT}.b", 1, False)],
            f"{ROOT}.b": [(f"{ROOT}.sub.c", 2, False)], f"{ROOT}.sub.c": [(f"{ROOT}.a", 3, True)],
            f"{ROOT}.sub.d": [(f"{ROOT}.a", 3, False), (f"{ROOT}.b", 2, False)]}
        assert cycles({k: {t for t, _, _ in e} for k, e in g.items()}) == [
            [f"{ROOT}.a", f"{ROOT}.b", f"{ROOT}.sub.c", f"{ROOT}.a"]]


class TestNoCycles:
    """No module imports, directly or through others, one that imports it."""

    def test_no_cycle(self) -> None:
        edges = {name: {t for t, _ in counted(name, out)} for name, out in graph().items()}
        shown = [" -> ".join(short(m) for m in c) for c in cycles(edges)]
        assert shown == [], "import cycles:\n" + "\n".join(shown)

    def test_the_exceptions_are_still_needed(self) -> None:
        """Each listed type-only import still exists (else unlist it)."""
        seen = {(short(n), short(t)) for n, out in graph().items() for t, _, typing_only in out if typing_only}
        assert set(TYPE_ONLY) <= seen
