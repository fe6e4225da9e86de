"""Write docs/schema/*.json, the JSON schemas of the documents that are typed (fit, report and transfer; doctor; evaluate; score; judges; sample),
from their types (betaconform_cli/schemas.py). `make schema` runs it; tests/test_documents.py fails when one is stale."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from betaconform_cli.atomic import write_text  # noqa: E402
from betaconform_cli.fit_document import schema_text  # noqa: E402
from betaconform_cli.schemas import published  # noqa: E402

if __name__ == "__main__":
    for p in published():
        out = ROOT / "docs" / "schema" / p.file
        write_text(out, schema_text(p.schema))
        print(f"wrote {out.relative_to(ROOT)}")
