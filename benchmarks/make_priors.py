"""Regenerate configs/priors/: one source-parameter YAML per dataset of ../shared/data.

Each file holds the default fit (`fit --save --embed`, seed 0) of one public judge dataset: the fitted
mixture, the (judges, correct) histogram, the error table and the mean text embedding of the bundled
all-MiniLM-L6-v2, plus where the data came from and under which licence. Never the texts or items.
`write_prior` is the one code path for every shipped prior; benchmarks/make_public_priors.py uses it too.

    .venv/bin/python benchmarks/make_priors.py            # skips cleanly when ../shared/data is absent
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from betaconform_cli import embeddings, savedfit  # noqa: E402
from betaconform_cli.fit import analyse  # noqa: E402
from betaconform_cli.fit_document import fit_document  # noqa: E402
from betaconform_cli.inputs import Keep, read_dataset  # noqa: E402
from betaconform_cli.report import fit as report  # noqa: E402
from betaconform_cli.settings import FitSettings  # noqa: E402

PRIORS = ROOT / "configs" / "priors"
FITTED_WITH = "betaconform fit --save --embed (default method, seed 0); embedding all-MiniLM-L6-v2"
CONTAINS = "fitted parameters, the correct-count histogram and a mean embedding only; no texts or items"

LICENCE_NOTES = {
    "MIT": "MIT licence (princeton-nlp/LLMBar)",
    "Snow": "research release of Snow et al. 2008 (no formal licence file); only aggregate statistics are shipped",
    "none": "JudgeBench states no licence. Only aggregate statistics are shipped (a histogram of how many of 7 judges "
    "agreed with the gold label, fitted mixture parameters, a mean sentence embedding); no item, text or verdict. "
    "We judge such aggregates to be facts about the benchmark rather than a copy of it; delete judgebench_*.yaml if "
    "your policy requires an explicit licence.",
}

# collection -> (benchmark: the item set, so a benchmark can drop every prior built on the same items; kind of task)
BENCHMARK_AND_KIND = {
    "llmbar-ChatGPT": ("llmbar", "pairwise-preference"),
    "snow-rte": ("snow-rte", "crowd-labels"),
    "judgebench": ("judgebench", "reward-model"),  # pairwise, judged mostly by reward models (and o1-mini)
}


def licence_of(source: str) -> str:
    if "MIT" in source:
        return LICENCE_NOTES["MIT"]
    if "Snow" in source:
        return LICENCE_NOTES["Snow"]
    return LICENCE_NOTES["none"]


def write_prior(
    path: Path, out_dir: Path, source: str, provenance: dict[str, Any], embedder: embeddings.Embedder
) -> Path:
    """`betaconform fit PATH --save OUT --embed` (default method, seed 0) plus a `provenance` block.

    The output is named after the input file (dataset name = file stem), as `fit --save-dir` names it.
    """
    ds = read_dataset(path, keep=Keep.ITEMS)
    result = analyse(ds.table, FitSettings(), np.random.default_rng(0))
    doc = fit_document("fit", ds.name, source, ds.table, result.record(), 0)
    saved = report.saved_document(doc, embeddings.dataset_embedding(embedder, ds))
    saved["provenance"] = {**provenance, "fitted_with": FITTED_WITH, "contains": CONTAINS}
    out = out_dir / f"{ds.name}.yaml"
    savedfit.dump_fit(out, saved)
    return out


def main() -> int:
    data_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data"
    if not (data_dir / "MANIFEST.yaml").exists():
        print(f"skipped: no data at {data_dir}", file=sys.stderr)
        return 0
    embedder = embeddings.load_embedder(None, cache_dir=embeddings.cache_path(None))
    manifest = yaml.safe_load((data_dir / "MANIFEST.yaml").read_text())
    for entry in manifest["datasets"]:
        path = next(iter(sorted(data_dir.rglob(entry["file"]))))
        benchmark, kind = BENCHMARK_AND_KIND[entry["collection"]]
        provenance = {
            "collection": entry["collection"],
            "benchmark": benchmark,
            "domain": entry["domain"],
            "kind": kind,
            "source": entry["source"],
            "licence": licence_of(entry["source"]),
            "judges": list(entry["judges"]),
            "note": entry.get("note", ""),
        }
        out = write_prior(path, PRIORS, entry["source"], provenance, embedder)
        print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
