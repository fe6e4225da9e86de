"""Regenerate configs/priors/: one source-parameter YAML per dataset of ../shared/data.

Each file holds the default fit (`fit --save --embed`, seed 0) of one public judge dataset: the fitted
mixture, the (judges, correct) histogram, the error table and the mean text embedding of the bundled
all-MiniLM-L6-v2, plus where the data came from and under which licence. Never the texts or items.

    .venv/bin/python benchmarks/make_priors.py            # skips cleanly when ../shared/data is absent
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from betaconform_cli import embeddings, savedfit  # noqa: E402
from betaconform_cli.fit import FitSettings, analyse  # noqa: E402
from betaconform_cli.inputs import Keep, read_dataset  # noqa: E402
from betaconform_cli.report import fit as report  # noqa: E402

LICENCE_NOTES = {
    "MIT": "MIT licence (princeton-nlp/LLMBar)",
    "Snow": "research release of Snow et al. 2008 (no formal licence file); only aggregate statistics are shipped",
    "none": "JudgeBench states no licence. Only aggregate statistics are shipped (a histogram of how many of 7 judges "
    "agreed with the gold label, fitted mixture parameters, a mean sentence embedding); no item, text or verdict. "
    "We judge such aggregates to be facts about the benchmark rather than a copy of it; delete judgebench_*.yaml if "
    "your policy requires an explicit licence.",
}


def licence_of(source: str) -> str:
    if "MIT" in source:
        return LICENCE_NOTES["MIT"]
    if "Snow" in source:
        return LICENCE_NOTES["Snow"]
    return LICENCE_NOTES["none"]


def main() -> int:
    data_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data"
    if not (data_dir / "MANIFEST.yaml").exists():
        print(f"skipped: no data at {data_dir}", file=sys.stderr)
        return 0
    out = ROOT / "configs" / "priors"
    embedder = embeddings.load_embedder(None, cache_dir=embeddings.cache_path(None))
    manifest = yaml.safe_load((data_dir / "MANIFEST.yaml").read_text())
    for entry in manifest["datasets"]:
        path = next(iter(sorted(data_dir.rglob(entry["file"]))))
        ds = read_dataset(path, keep=Keep.ITEMS)
        result = analyse(ds.table, FitSettings(), np.random.default_rng(0))
        doc = report.fit_document("fit", ds.name, entry["source"], ds.table, result, 0)
        saved = report.saved_document(doc, embeddings.dataset_embedding(embedder, ds))
        saved["provenance"] = {
            "collection": entry["collection"],
            "domain": entry["domain"],
            "source": entry["source"],
            "licence": licence_of(entry["source"]),
            "judges": list(entry["judges"]),
            "note": entry.get("note", ""),
            "fitted_with": "betaconform fit --save --embed (default method, seed 0); embedding all-MiniLM-L6-v2",
            "contains": "fitted parameters, the correct-count histogram and a mean embedding only; no texts or items",
        }
        savedfit.dump_fit(out / f"{ds.name}.yaml", saved)
        print(f"wrote {out / (ds.name + '.yaml')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
