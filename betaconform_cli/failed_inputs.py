"""An input of a batch that is bad input (issue 26): `score a.jsonl b.jsonl`, a folder, `fit`, `judges` or `doctor`
over several inputs report each good one as usual and each bad one as an InputFailure -- its one-line error, as
stderr says it -- in the JSON (one more document, validated by the command's published schema), the CSV (a row
with the error in an `error` column), the table, Markdown and HTML (a table of the inputs that failed), the JUnit
file and the job summary (a failing case). The exit code is then 2 (report/failed.py says why 2 wins over a gate's
1). One bad input alone, or every input bad, is the one-line error and exit code 2 it always was."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec
from msgspec import Struct

from .document_types import Count
from .errors import InputError
from .version import __version__


class InputFailure(Struct, kw_only=True, frozen=True):
    """One input that could not be analysed: its dataset name, its file, and its error as on stderr (the file, the
    line or row, the field, what is wrong), with the line and the field apart."""

    schema: Literal["betaconform/1"]
    command: str
    tool_version: str
    dataset: str
    source: str
    error: str
    line: Count | None
    field: str | None


def failure_documents(command: str, failed: Sequence[tuple[str, InputError]]) -> tuple[InputFailure, ...]:
    """The failures of a batch (inputs.read_batch's `failed`, or errors met while analysing an input) as documents."""
    return tuple(InputFailure(schema="betaconform/1", command=command, tool_version=__version__, dataset=name, source=exc.path,
                              error=str(exc), line=exc.line, field=exc.field) for name, exc in failed)


def with_failure_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A command's published schema (docs/schema/) that also accepts an InputFailure document (`anyOf`)."""
    (ref,), defs = msgspec.json.schema_components([InputFailure])
    out = dict(schema)
    alternatives = out.pop("anyOf", None) or [{"$ref": out.pop("$ref")}]
    return {**out, "anyOf": [*alternatives, ref], "$defs": {**out.get("$defs", {}), **defs}}
