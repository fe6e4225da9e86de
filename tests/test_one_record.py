"""One record per result (issue 28 item 3): a document is built from its typed result, never rebuilt from a dict;
a saved fit is parsed and checked once (docs/ARCHITECTURE.md, "One record per result")."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import msgspec
import numpy as np
import pytest

from betaconform_cli import api
from betaconform_cli.counts import CountTable
from betaconform_cli.document_types import plain
from betaconform_cli.fit import analyse
from betaconform_cli.fit_document import fit_document
from betaconform_cli.savedfit import dump_fit, load_fit
from betaconform_cli.settings import FitSettings

PACKAGE = Path(__file__).resolve().parent.parent / "betaconform_cli"
# the modules that hold a published document's types and builders (docs/schema/)
DOCUMENT_MODULES = ("fit_document.py", "document_types.py", "doctor.py", "slicing.py", "score/document.py",
                    "judges/document.py", "judges/drift_document.py", "stopping/document.py", "evaluate/document.py")
ONE_CONVERT = "document_types.py"  # document_types.check: a saved fit's one typed parse (savedfit.validate)


@functools.cache
def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]


@functools.cache
def _package_calls() -> list[tuple[str, ast.Call]]:
    """Every call in the package, by module (parsed once for the tests below)."""
    return [(str(p.relative_to(PACKAGE)), c) for p in sorted(PACKAGE.rglob("*.py"))
            if any(word in p.read_text(encoding="utf-8") for word in ("to_dict", "convert")) for c in _calls(p)]


def _is_to_dict(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to_dict"


def _is_convert(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr == "convert" and isinstance(f.value, ast.Name) and f.value.id == "msgspec"


class TestNoDictBetween:
    """Read from the source: no document type is filled from a result's dict."""

    def test_no_struct_is_built_from_a_to_dict(self) -> None:
        """`Type(**x.to_dict())` rebuilds a record from its dict; the builder reads the attributes instead."""
        found = [f"{m}:{c.lineno}" for m, c in _package_calls() if any(k.arg is None and _is_to_dict(k.value) for k in c.keywords)]
        assert found == []

    def test_msgspec_convert_only_in_the_saved_fit_s_parse(self) -> None:
        """msgspec.convert turns plain values into a type: only a file's contents need that (a saved fit)."""
        found = [f"{m}:{c.lineno}" for m, c in _package_calls() if _is_convert(c) and m != ONE_CONVERT]
        assert found == []

    def test_builders_splat_only_typed_fields(self) -> None:
        """A builder names each field; the only `**` left copy a typed record's own fields (report's document of the
        typed saved fit, the live sample document extending the fit document) or the registry's estimator columns,
        named at run time like the row type itself."""
        allowed = {("fit_document.py", "shown"), ("stopping/document.py", "fields"), ("fit.py", "self.columns")}
        found = [(m, ast.unparse(k.value).split(",")[0].strip("{*")) for m in (*DOCUMENT_MODULES, "fit.py")
                 if (PACKAGE / m).exists() for c in _calls(PACKAGE / m) for k in c.keywords if k.arg is None]
        assert [f for f in found if f not in allowed] == []

    def test_document_modules_call_no_to_dict(self) -> None:
        """A document's builder reads its result's attributes, not the result's dict view."""
        found = [f"{m}:{c.lineno}" for m in DOCUMENT_MODULES if (PACKAGE / m).exists()
                 for c in _calls(PACKAGE / m) if _is_to_dict(c)]
        assert found == []


def _table() -> CountTable:
    return CountTable.from_pairs(np.array([3] * 8 + [5] * 6), np.array([3, 2, 3, 1, 3, 3, 0, 2, 5, 4, 5, 3, 5, 2]))


class TestTypedRecords:
    """The document is the complete record: it round-trips through its own JSON, and a saved fit through YAML."""

    def test_fit_document_round_trips_through_its_type(self) -> None:
        table = _table()
        result = analyse(table, FitSettings(ks=(1, 3), n_draws=200), np.random.default_rng(0))
        doc = fit_document("fit", "toy", "toy.jsonl", table, result.record(), 0)
        again = msgspec.json.decode(msgspec.json.encode(doc), type=type(doc))
        assert again == doc
        assert [r.k for r in doc.error_rates] == [1, 3] and doc.model.components == result.record().model.components
        assert doc.items == 14 and doc.settings.ks == [1, 3] and doc.settings.n_draws == 200

    def test_saved_fit_is_parsed_and_checked_once(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """`report` of a saved fit converts its contents to the typed saved fit once (load_fit), and shows that."""
        table = _table()
        result = analyse(table, FitSettings(ks=(1, 3), n_draws=200), np.random.default_rng(0))
        doc = fit_document("fit", "toy", "toy.jsonl", table, result.record(), 0)
        path = tmp_path / "toy.yaml"
        dump_fit(path, {k: v for k, v in plain(doc).items() if k != "schema"})
        real = msgspec.convert
        seen: list[str] = []

        def counting(obj: object, type: object, **kw: object) -> object:  # noqa: A002 - msgspec's own name
            seen.append(getattr(type, "__name__", str(type)))
            return real(obj, type, **kw)  # type: ignore[call-overload]

        monkeypatch.setattr(msgspec, "convert", counting)
        saved = load_fit(path)
        assert seen == ["SavedFit"]
        shown = api.report([str(path)]).documents[0]
        assert seen == ["SavedFit", "SavedFit"]  # report: its own load, nothing more
        assert saved.error_rates == doc.error_rates and saved.model == doc.model and saved.histogram == doc.histogram
        assert shown.error_rates == doc.error_rates and shown.saved_fit == str(path)
