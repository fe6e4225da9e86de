"""Write docs/schema/fit.json, the JSON schema of the fit document (schema betaconform/1), from its types
(betaconform_cli/documents.py). `make schema` runs it; tests/test_documents.py fails when the file is stale."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from betaconform_cli.atomic import write_text  # noqa: E402
from betaconform_cli.documents import schema_text  # noqa: E402

if __name__ == "__main__":
    out = ROOT / "docs" / "schema" / "fit.json"
    write_text(out, schema_text())
    print(f"wrote {out.relative_to(ROOT)}")
