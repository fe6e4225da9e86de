"""The fit document's types (betaconform_cli/documents.py): the published schema is the types' own, and every fit,
report and transfer JSON golden is valid against it, checked twice (jsonschema on the published file; msgspec
decoding into the type). The other commands' documents (judges, score, sample, doctor, evaluate) are not typed
yet: they are listed here, so that a new JSON golden cannot go unchecked without saying so."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from betaconform_cli.documents import SCHEMA, fit_document_type, json_schema, schema_text

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "docs" / "schema" / "fit.json"
GOLDEN = Path(__file__).parent / "golden"
TYPED = {"fit", "report", "transfer"}
NOT_TYPED_YET = {"judges", "score", "sample", "doctor", "evaluate"}  # being changed by others; typed later


def golden_documents() -> list[tuple[str, dict[str, Any]]]:
    """(where, document) for every JSON document in the goldens: tests/golden/*.json and the stdout of the CLI
    goldens that print JSON (one document, or one per line)."""
    out = [(p.name, json.loads(p.read_text())) for p in sorted(GOLDEN.glob("*.json"))]
    for p in sorted((GOLDEN / "cli").glob("*.txt")):
        stdout = p.read_text().split("--- stdout\n", 1)[1].rsplit("\n--- stderr", 1)[0].strip()
        decoder, i = json.JSONDecoder(), 0
        while stdout[i:i + 1] == "{":
            doc, i = decoder.raw_decode(stdout, i)
            out.append((f"{p.name}#{len(out)}", doc))
            while stdout[i:i + 1] in (" ", "\n"):
                i += 1
    return out


def fit_goldens() -> list[tuple[str, dict[str, Any]]]:
    return [(w, d) for w, d in golden_documents() if d.get("command") in TYPED]


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(PUBLISHED.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


class TestPublishedSchema:
    """docs/schema/fit.json is generated from the types and kept current."""

    def test_not_stale(self) -> None:
        assert PUBLISHED.read_text() == schema_text(), "docs/schema/fit.json is stale: run `make schema`"

    def test_is_the_fit_document(self) -> None:
        schema = json_schema()
        doc = schema["$defs"][schema["$ref"].rsplit("/", 1)[1]]
        assert doc["properties"]["schema"] == {"enum": [SCHEMA]}
        assert {"dataset", "items", "judges", "histogram", "method", "model", "error_rates"} <= set(doc["required"])
        row = schema["$defs"]["ErrorRate"]["properties"]
        assert {"estimate", "low", "high", "mixture", "binomial", "beta_binomial", "empirical"} <= set(row)


class TestGoldens:
    """Every JSON golden of fit, report and transfer is a valid fit document; none is left unaccounted for."""

    def test_every_json_golden_is_checked_or_listed(self) -> None:
        commands = {d.get("command") for _, d in golden_documents()}
        assert commands <= TYPED | NOT_TYPED_YET, commands - TYPED - NOT_TYPED_YET
        assert len(fit_goldens()) >= 10  # tests/golden/*.json (4), fit_json, fit_dir_json (6), fit_plugin, report, transfer

    @pytest.mark.parametrize("where,doc", fit_goldens(), ids=[w for w, _ in fit_goldens()])
    def test_valid(self, where: str, doc: dict[str, Any], validator: jsonschema.protocols.Validator) -> None:
        doc = {"schema": SCHEMA, **doc}  # tests/golden/*.json are stored without tool_version; they keep schema
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, (where, errors[:3])
        msgspec.json.decode(json.dumps(doc), type=fit_document_type())


class TestTheCheckCanFail:
    """A document that breaks its types is refused by both checks."""

    @pytest.mark.parametrize("path,value", [
        (("items",), -1), (("error_rates", 0, "estimate"), 1.5), (("model", "components"), []),
        (("error_rates", 0, "k"), 0), (("schema",), "betaconform/2"), (("histogram",), {}),
    ])
    def test_broken(self, path: tuple[Any, ...], value: Any, validator: jsonschema.protocols.Validator) -> None:
        doc = copy.deepcopy(fit_goldens()[0][1])
        target = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        assert list(validator.iter_errors(doc))
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(json.dumps(doc), type=fit_document_type())
