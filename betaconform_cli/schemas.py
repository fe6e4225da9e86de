"""The published JSON schemas (docs/schema/), each generated from its document's types: `make schema` writes them,
tests/test_documents.py fails when one is stale and checks every JSON golden of its commands against it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msgspec import Struct

from .doctor import DoctorDocument
from .documents import SCHEMA, document_schema, fit_document_type, json_schema
from .evaluate.document import EvaluateDocument
from .evaluate.settings import SCHEMA as EVALUATE_SCHEMA
from .judges.document import JudgesDocument
from .score_document import ScoreDocument, score_schema


@dataclass(frozen=True)
class Published:
    """One published schema: its file in docs/schema/, the commands whose -f json documents it describes, their type."""

    file: str
    commands: tuple[str, ...]
    type: type[Struct]
    schema: dict[str, Any]


def published() -> tuple[Published, ...]:
    doctor = document_schema(DoctorDocument, f"BetaConform doctor document ({SCHEMA}): doctor -f json", "doctor")
    evaluate = document_schema(EvaluateDocument, f"BetaConform evaluate document ({EVALUATE_SCHEMA}): evaluate -f json",
                               "evaluate/document")
    return (
        Published("fit.json", ("fit", "report", "transfer"), fit_document_type(), json_schema()),
        Published("doctor.json", ("doctor",), DoctorDocument, doctor),
        Published("evaluate.json", ("evaluate",), EvaluateDocument, evaluate),
        Published("score.json", ("score",), ScoreDocument, score_schema()),
        Published("judges.json", ("judges",), JudgesDocument,
                  document_schema(JudgesDocument, f"BetaConform judges document ({SCHEMA}): judges -f json", "judges/document")),
    )
