"""What every published document shares: the schema tag, the annotated number types (a count, a fraction, a
level, an ensemble size), `plain` (a typed document as plain values, as the views and the JSON encoder read it),
`check` (the package's one msgspec.convert: a saved fit's typed parse) and `document_schema` (a document type's
published JSON schema, docs/schema/). Each command's own document types live beside its concept
(fit_document.py, doctor.py, judges/document.py, score/document.py, stopping/document.py, evaluate/document.py,
judges/drift_document.py, slicing.py)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct, UnsetType

from .formats import MAX_K
from .inputs.dataset import MAX_JUDGES  # the most judges a histogram entry may have

SCHEMA = "betaconform/1"  # the JSON documents
SLACK = 1e-9  # a fraction computed in floating point may pass 0 or 1 by this much

Count = Annotated[int, Meta(ge=0, lt=2**53, description="a count: a non-negative integer below 2^53")]
Fraction = Annotated[float, Meta(ge=-SLACK, le=1 + SLACK, description="a fraction from 0 to 1")]
Level = Annotated[float, Meta(gt=0, lt=1, description="a confidence level strictly between 0 and 1")]
K = Annotated[int, Meta(ge=1, le=MAX_K, description=f"an ensemble size from 1 to {MAX_K}")]
Judges = Annotated[int, Meta(ge=1, le=MAX_JUDGES)]
Json = Any  # a JSON value (savedfit checks that a saved fit's are ones JSON carries exactly)


Opt = UnsetType  # a key a document may lack: UNSET where absent, so that the JSON keeps exactly its keys


def document_schema(type_: type[Struct], title: str, module: str) -> dict[str, Any]:
    """A document type's published JSON schema (docs/schema/*.json), generated from `type_` (betaconform_cli/`module`.py)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": f"generated from betaconform_cli/{module}.py by `make schema`; do not edit",
        **msgspec.json.schema(type_),
    }


class TypeProblem(ValueError):
    """A value that does not have its field's type: `field` as written in a message (`error_rates[2].k`)."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"field '{field}': {problem}" if field else problem)
        self.field = field


_AT = re.compile(r"^(?P<problem>.*?)(?: - at `\$\.?(?P<path>[^`]*)`)?$")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")


def check(doc: Any, type_: type[Struct]) -> Any:
    """`doc` (plain Python values read from a file) converted to `type_`; a TypeProblem naming the field when it
    does not fit. The package's one msgspec.convert: a saved fit's typed parse (savedfit.validate); a document this
    tool builds is made typed from its result, never converted from a dict (tests/test_one_record.py)."""
    try:
        return msgspec.convert(doc, type_)
    except msgspec.ValidationError as exc:
        m = _AT.match(str(exc))
        problem, path = (m.group("problem"), m.group("path") or "") if m else (str(exc), "")
        missing = _MISSING.match(problem)
        if missing:
            path, problem = ".".join(p for p in (path, missing.group("name")) if p), "missing"
        raise TypeProblem(path, problem.replace("`", "").replace("Expected", "expected")) from None


def _number(value: Any) -> Any:
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    raise NotImplementedError(f"not a JSON value: {type(value).__name__}")


def plain(doc: Struct) -> Any:
    """A typed document as plain values, as the report's views and the JSON encoder read it (numpy scalars as
    Python numbers; NaN stays NaN, the encoder writes null)."""
    return msgspec.to_builtins(doc, enc_hook=_number)
