"""The typed documents (betaconform_cli/fit_document.py: fit, report and transfer, with what every document shares in
document_types.py; doctor.py: doctor;
evaluate/document.py: evaluate; score/document.py: score; judges/document.py: judges; stopping/document.py: sample): each published schema (docs/schema/,
betaconform_cli/schemas.py) is its types' own, and every JSON golden of its commands is valid against it, checked
twice (jsonschema on the published file; msgspec decoding into the type). A command whose documents are not typed
would be listed in NOT_TYPED_YET, so that a new JSON golden cannot go unchecked without saying so."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
import yaml

from betaconform_cli.document_types import SCHEMA, plain
from betaconform_cli.fit_document import fit_document_type, json_schema, schema_text
from betaconform_cli.schemas import Published, published

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "docs" / "schema" / "fit.json"
GOLDEN = Path(__file__).parent / "golden"
TYPED = {"fit", "report", "transfer"}
SCHEMAS = {c: p for p in published() for c in p.commands}  # command -> its published schema
NOT_TYPED_YET: set[str] = set()  # every command's documents are typed


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
        published_fit = next(p.schema for p in published() if p.file == "fit.json")  # with a batch's failed input
        assert PUBLISHED.read_text() == schema_text(published_fit), "docs/schema/fit.json is stale: run `make schema`"

    def test_is_the_fit_document(self) -> None:
        schema = json_schema()
        assert [r["$ref"].rsplit("/", 1)[1] for r in schema["anyOf"]] == ["FitDocument", "ReportDocument"]
        assert "mean" in schema["$defs"]["Embedding"]["required"] and "mean" not in schema["$defs"]["EmbeddingShown"]["properties"]
        doc = schema["$defs"]["FitDocument"]
        assert doc["properties"]["schema"] == {"enum": [SCHEMA]}
        assert {"dataset", "items", "judges", "histogram", "method", "model", "error_rates"} <= set(doc["required"])
        row = schema["$defs"]["ErrorRate"]["properties"]
        assert {"estimate", "low", "high", "mixture", "binomial", "beta_binomial", "empirical"} <= set(row)


OTHER_GOLDENS = [(w, d) for w, d in golden_documents() if d.get("command") in SCHEMAS.keys() - TYPED]


class TestEverySchema:
    """Each published schema (docs/schema/) is current and every JSON golden of its commands is valid against it."""

    @pytest.mark.parametrize("p", published(), ids=[p.file for p in published()])
    def test_not_stale(self, p: Published) -> None:
        assert (ROOT / "docs" / "schema" / p.file).read_text() == schema_text(p.schema), f"docs/schema/{p.file} is stale: run `make schema`"

    def test_every_json_golden_is_checked_or_listed(self) -> None:
        commands = {d.get("command") for _, d in golden_documents()}
        assert commands <= set(SCHEMAS) | NOT_TYPED_YET, commands - set(SCHEMAS) - NOT_TYPED_YET
        assert not set(SCHEMAS) & NOT_TYPED_YET
        assert {d.get("command") for _, d in golden_documents()} >= {"doctor", "evaluate", "score", "judges", "sample"}  # checked below

    @pytest.mark.parametrize("where,doc", OTHER_GOLDENS, ids=[w for w, _ in OTHER_GOLDENS])
    def test_valid(self, where: str, doc: dict[str, Any]) -> None:
        p = SCHEMAS[doc["command"]]
        schema = json.loads((ROOT / "docs" / "schema" / p.file).read_text())
        errors = [e.message for e in jsonschema.validators.validator_for(schema)(schema).iter_errors(doc)]
        assert not errors, (where, errors[:3])
        msgspec.json.decode(json.dumps(doc), type=p.type_for(doc))

    @pytest.mark.parametrize("command,path,value", [
        ("doctor", ("items",), -1), ("doctor", ("agreement", 0, "agreement"), 1.5), ("doctor", ("vote_splits", 0, "items"), "3"),
        ("doctor", ("command",), "fit"), ("evaluate", ("cells", 0, "runs"), -2), ("evaluate", ("averages", 0, "margin_mean"), "x"),
        ("evaluate", ("interval", "confidence_level"), 1.0), ("evaluate", ("schema",), "betaconform/1"),
        ("score", ("score", "low"), 1.5), ("score", ("judges_say", "bias", "high"), -2.0), ("score", ("lambda",), "1"),
        ("score", ("target",), "all"), ("score", ("labeled_items",), -1), ("score", ("tool_version",), None),
        ("judges", ("judges", 0, "accuracy"), 1.5), ("judges", ("ensembles", 0, "k"), 0), ("judges", ("seed",), -1),
        ("judges", ("ensembles", 0, "search"), "greedy"), ("judges", ("model", "family"), "mixture"),
        ("judges", ("settings", "ks"), ["3"]), ("judges", ("pairs", 0, "note"), 3),
        ("sample run", ("actual", 0, "k"), 0), ("sample run", ("error_rates", 0, "low"), 1.5), ("sample run", ("run",), "0"),
        ("sample run", ("stopping_intervals",), None), ("sample run", ("pool_items",), -3),
        ("sample summary", ("summary", "runs"), -1), ("sample summary", ("mode",), "live"),
        ("sample live", ("stopped_by",), "patience"), ("sample live", ("more_needed",), -1),
        ("sample live", ("error_rates", 0, "estimate"), 2.0), ("sample live", ("command",), "fit"),
    ])
    def test_broken(self, command: str, path: tuple[Any, ...], value: Any) -> None:
        command, _, kind = command.partition(" ")
        doc = copy.deepcopy(next(d for _, d in OTHER_GOLDENS if d["command"] == command and kind in ("", _kind(d))))
        target = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        schema = SCHEMAS[command].schema
        assert list(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc))
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(json.dumps(doc), type=SCHEMAS[command].type_for(doc))

    def test_each_kind_of_sample_document_is_checked(self) -> None:
        kinds = {_kind(d) for _, d in OTHER_GOLDENS if d["command"] == "sample"}
        assert kinds == {"run", "summary", "live"}, kinds


def _kind(doc: dict[str, Any]) -> str:
    """sample's three documents: a live decision, a --replay run, the replay's summary (others: their command's)."""
    if doc.get("mode") == "live":
        return "live"
    return "summary" if "summary" in doc else "run"


class TestGoldens:
    """Every JSON golden of fit, report and transfer is a valid fit document; none is left unaccounted for."""

    def test_every_json_golden_is_checked_or_listed(self) -> None:
        assert TYPED == {c for c, p in SCHEMAS.items() if p.file == "fit.json"}
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
        (("baselines", "binomial", "p"), 1.5), (("baselines", "beta_binomial", "components"), []),
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


TYPED_FIT = [(w, d) for w, d in golden_documents() if ".txt#" in w and d.get("command") in TYPED | {"sample"}
             and d.get("mode") != "replay"]


class TestFitDocumentsAreTheirTypes:
    """fit, transfer, report and sample's live document are built as their types (fit_document.fit_document,
    report_document, stopping.document.live_document) and encoded as they are: each CLI golden decodes into its type
    and encodes back to the same text (the same keys in the same order at every level, the same values; a key the
    golden lacks stays absent), so the types' field order is the printed order."""

    def test_every_kind_is_here(self) -> None:
        assert {d["command"] for _, d in TYPED_FIT} == {"fit", "report", "transfer", "sample"}

    @pytest.mark.parametrize("where,doc", TYPED_FIT, ids=[w for w, _ in TYPED_FIT])
    def test_round_trip(self, where: str, doc: dict[str, Any]) -> None:
        type_ = SCHEMAS[doc["command"]].type_for(doc)
        typed = msgspec.json.decode(json.dumps(doc), type=type_)
        assert json.dumps(plain(typed)) == json.dumps(doc), where

    @pytest.mark.parametrize("command,path,value", [
        ("report", ("fitted_by",), 3), ("report", ("embedding",), {"dimension": 3}), ("report", ("gate", "on"), "lower"),
        ("report", ("unlabeled_items",), -1), ("fit", ("settings", "ks"), "all"), ("fit", ("baselines",), [1]),
        ("transfer", ("without_transfer", 0, "estimate"), 1.5), ("sample", ("pool_verdicts",), None),
        ("transfer", ("sources", 0, "items"), -1), ("transfer", ("sources", 0, "name"), None),
        ("transfer", ("sources", 0, "accuracy"), 1.5), ("transfer", ("transfer", "target_weight"), "0.5"),
        ("transfer", ("transfer", "target_profile", "judges"), [0]), ("transfer", ("transfer", "limited_at_k"), [0]),
    ])
    def test_broken(self, command: str, path: tuple[Any, ...], value: Any) -> None:
        doc = copy.deepcopy(next(d for _, d in TYPED_FIT if d["command"] == command))
        target = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(json.dumps(doc), type=SCHEMAS[command].type_for(doc))
        schema = SCHEMAS[command].schema  # anyOf the printed and report's document: report's own fields are checked too
        assert list(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc))

    def test_report_keeps_a_hand_written_fit_s_keys(self, tmp_path: Path) -> None:
        """A saved fit without some optional keys (a hand-written prior): `report` prints none of them (UNSET),
        not null, and adds its own (source and seed where the fit has none)."""
        from betaconform_cli import api
        from betaconform_cli.savedfit import load_fit

        saved = msgspec.to_builtins(load_fit(ROOT / "configs" / "priors" / "openqa_eval_nq.yaml"))
        for key in ("method_description", "baselines", "skipped_lines", "source", "seed"):
            del saved[key]
        for key in ("family", "bic", "n_starts"):
            del saved["model"][key]
        del saved["error_rates"][0]["mixture"]
        path = tmp_path / "prior.yaml"
        path.write_text(yaml.safe_dump({"schema": "betaconform/fit/1", **saved}, sort_keys=False))
        shown = plain(api.report([str(path)]).documents[0])
        assert not {"method_description", "baselines", "skipped_lines"} & set(shown)
        assert not {"family", "bic", "n_starts"} & set(shown["model"]) and "mixture" not in shown["error_rates"][0]
        assert (shown["source"], shown["seed"], shown["fitted_by"], shown["saved_fit"]) == (str(path), None, "fit", str(path))
        assert list(shown)[0] == "schema" and list(shown)[-3:] == ["embedding", "fitted_by", "saved_fit"]  # schema first: the output marker
        msgspec.json.decode(json.dumps(shown), type=SCHEMAS["report"].type_for(shown))


def test_a_doctor_document_lacks_the_keys_it_has_no_value_for() -> None:
    """UNSET keys (no reading, no verdicts) are absent from the JSON, not null; the rest keep their order."""
    from betaconform_cli.doctor import DoctorDocument

    doc = DoctorDocument(schema="betaconform/1", command="doctor", tool_version="0", dataset="d", source="s", items=2,
                         unlabeled_items=0, most_judges=3, histogram={3: [0, 1, 0, 1]}, notes=[])
    assert list(msgspec.to_builtins(doc)) == ["schema", "command", "tool_version", "dataset", "source", "items",
                                             "unlabeled_items", "most_judges", "histogram", "notes"]


def _compare_document() -> Any:
    """A real `score --compare` document (two systems on shared items), with a passing gate."""
    from betaconform_cli import api
    from betaconform_cli.gate import make_score_gate
    from betaconform_cli.inputs import InputOptions

    a, b = ROOT / "sample_data" / "system_verdicts.jsonl", ROOT / "sample_data" / "system_b_verdicts.jsonl"
    report = api.score([str(a), str(b)], InputOptions(), compare=True, gate=make_score_gate(-1.0, difference=True))
    return report.documents[0]


def test_a_compare_document_is_valid_and_a_broken_one_is_refused() -> None:
    """--compare has no JSON golden: its document, from a real run, is valid against score.json (anyOf its two
    types) and decodes as a CompareDocument; a broken one is refused by both."""
    from betaconform_cli.score.document import CompareDocument

    doc = msgspec.to_builtins(_compare_document())
    assert list(doc) == ["schema", "command", "tool_version", "dataset", "a", "b", "difference", "shared_items",
                         "labeled_both", "confidence_level", "target", "gate"]
    schema = SCHEMAS["score"].schema
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert not list(validator.iter_errors(doc))
    assert msgspec.json.decode(json.dumps(doc), type=CompareDocument).a.dataset == doc["a"]["dataset"]
    doc["difference"]["low"] = -1.5
    assert list(validator.iter_errors(doc))
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(doc), type=CompareDocument)


def test_a_score_document_without_a_gate_lacks_the_key() -> None:
    """The gate is UNSET without --min-score: absent from the JSON, not null; `lambda_` is written `lambda`."""
    golden = next(d for _, d in OTHER_GOLDENS if d["command"] == "score")
    from betaconform_cli.score.document import ScoreDocument

    doc = msgspec.json.decode(json.dumps(golden), type=ScoreDocument)
    assert list(msgspec.to_builtins(doc)) == list(golden) and "gate" not in golden


def test_a_judges_document_has_unlabeled_keys_only_with_unlabeled_items() -> None:
    """The unlabeled items' keys are UNSET (absent, not null) for an input without them, and in their place
    (after `items`) for one with them; the document's body is JudgesResult.to_dict's."""
    from betaconform_cli.judges.document import JudgesDocument

    docs = [d for _, d in OTHER_GOLDENS if d["command"] == "judges"]
    with_unlabeled = [d for d in docs if "unlabeled" in d]
    assert with_unlabeled and len(with_unlabeled) < len(docs)
    for golden in docs:
        doc = msgspec.json.decode(json.dumps(golden), type=JudgesDocument)
        assert list(msgspec.to_builtins(doc)) == list(golden)
    assert list(with_unlabeled[0])[6:9] == ["items", "unlabeled_items", "unlabeled"]


DOCUMENT_MODULES = ("betaconform_cli.fit_document", "betaconform_cli.document_types", "betaconform_cli.doctor", "betaconform_cli.score.document",
                    "betaconform_cli.judges.document", "betaconform_cli.evaluate.document",
                    "betaconform_cli.stopping.document")


def test_no_two_document_types_share_a_name() -> None:
    """A document type's name says what it is: no two modules define a Struct of the same name (judges' Interval,
    Settings, Model and Unlabeled had fit's names with other shapes), so that a schema's $defs name one shape."""
    import importlib
    import inspect

    where: dict[str, list[str]] = {}
    for name in DOCUMENT_MODULES:
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if inspect.isclass(cls) and issubclass(cls, msgspec.Struct) and cls.__module__ == name:
                where.setdefault(cls.__name__, []).append(name)
    assert len(where) > 30  # the modules were read
    assert {n: ms for n, ms in where.items() if len(ms) > 1} == {}
