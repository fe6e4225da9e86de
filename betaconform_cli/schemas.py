"""The published JSON schemas (docs/schema/), each generated from its document's types: `make schema` writes them,
tests/test_documents.py fails when one is stale and checks every JSON golden of its commands against it."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from msgspec import Struct

from .doctor import DoctorDocument
from .document_types import SCHEMA, document_schema
from .evaluate.document import EvaluateDocument
from .evaluate.settings import SCHEMA as EVALUATE_SCHEMA
from .failed_inputs import InputFailure, with_failure_schema
from .fit_document import fit_document_type, json_schema, report_document_type
from .judges.document import JudgesDocument
from .judges.drift_document import DriftDocument
from .score.document import CompareDocument, ScoreDocument, score_schema
from .slicing import SlicesDocument
from .stopping.document import ReplaySummary, sample_schema, sample_type
from .stopping.forecast import PlanDocument


@dataclass(frozen=True)
class Published:
    """One published schema: its file in docs/schema/, the commands whose -f json documents it describes, their type."""

    file: str
    commands: tuple[str, ...]
    type: type[Struct]
    schema: dict[str, Any]
    choose: Callable[[Mapping[str, Any]], builtins.type[Struct]] | None = None  # where one command prints several kinds

    def type_for(self, doc: Mapping[str, Any]) -> builtins.type[Struct]:
        """The type of one of its commands' documents (plain values)."""
        return self.type if self.choose is None else self.choose(doc)


def _or_failure(choose: Callable[[Mapping[str, Any]], builtins.type[Struct]]) -> Callable[[Mapping[str, Any]], builtins.type[Struct]]:
    """A batch command's chooser: an input that failed (failed_inputs.InputFailure, its keys exactly), else `choose`."""
    keys = set(InputFailure.__struct_fields__)
    return lambda d: InputFailure if set(d) == keys else choose(d)


def published() -> tuple[Published, ...]:
    doctor = document_schema(DoctorDocument, f"BetaConform doctor document ({SCHEMA}): doctor -f json", "doctor")
    evaluate = document_schema(EvaluateDocument, f"BetaConform evaluate document ({EVALUATE_SCHEMA}): evaluate -f json",
                               "evaluate/document")
    judges = document_schema(JudgesDocument, f"BetaConform judges document ({SCHEMA}): judges -f json", "judges/document")
    return (  # fit, doctor, score and judges over several inputs: a bad one is an InputFailure document (failed_inputs.py)
        Published("fit.json", ("fit", "report", "transfer"), fit_document_type(), with_failure_schema(json_schema()),
                  _or_failure(lambda d: report_document_type() if d.get("command") == "report" else fit_document_type())),
        Published("doctor.json", ("doctor",), DoctorDocument, with_failure_schema(doctor), _or_failure(lambda d: DoctorDocument)),
        Published("evaluate.json", ("evaluate",), EvaluateDocument, evaluate),
        Published("score.json", ("score",), ScoreDocument, with_failure_schema(score_schema()),
                  _or_failure(lambda d: CompareDocument if "difference" in d else ScoreDocument)),
        Published("judges.json", ("judges",), JudgesDocument, with_failure_schema(judges), _or_failure(lambda d: JudgesDocument)),
        Published("drift.json", ("drift",), DriftDocument,
                  document_schema(DriftDocument, f"BetaConform drift document ({SCHEMA}): drift -f json", "judges/drift_document")),
        Published("slices.json", ("fit --by", "judges --by", "score --by"), SlicesDocument,
                  with_failure_schema(document_schema(
                      SlicesDocument, f"BetaConform slices document ({SCHEMA}): fit, judges and score --by -f json", "slicing")),
                  _or_failure(lambda d: SlicesDocument)),
        Published("sample.json", ("sample",), ReplaySummary,
                  sample_schema(f"BetaConform sample documents ({SCHEMA}): sample -f json, live or --replay"),
                  sample_type),
        Published("plan.json", ("plan",), PlanDocument,
                  document_schema(PlanDocument, f"BetaConform plan document ({SCHEMA}): plan -f json", "stopping/forecast")),
    )
