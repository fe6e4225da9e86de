"""Another version of mixtures.py against this checkout's: the same fits, bit for bit?

`python benchmarks/fit_same_as.py OLD_MIXTURES_PY [RANDOM]` (from the repository root): fit_candidates (1-3
components) on fit_without_scipy.py's histograms (the shared data sets, sample_data, the edge cases and RANDOM random
ones, default 30) by both, and how many mixtures and log posteriors are identical; e.g. OLD from
`git show e2dabb4:betaconform_cli/mixtures.py > /tmp/old.py`. A change meant to keep the optimiser's path
(docs/SPEED.md, "Widening the 1M-item margin") must report 0 not identical.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_without_scipy import DATA, ROOT, jsonl_table, random_tables  # noqa: E402

from betaconform_cli import mixtures as new  # noqa: E402
from betaconform_cli.settings import Prior  # noqa: E402


def load_old(path: str) -> object:
    spec = importlib.util.spec_from_file_location("betaconform_cli.mixtures_old", path)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old  # dataclasses look their module up
    spec.loader.exec_module(old)
    return old


def main() -> None:
    old: object = load_old(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    files = (sorted(DATA.rglob("*.jsonl")) if DATA.is_dir() else []) + sorted((ROOT / "sample_data").glob("*.jsonl"))
    tables = [(f.name, t) for f in files if (t := jsonl_table(f)) is not None] + random_tables(count)
    cpu = {"old": 0.0, "new": 0.0}
    iters = {"old": 0, "new": 0}
    same, apart, worst = 0, 0, (0.0, "")
    for name, table in tables:
        fits = {}
        for label, module in (("old", old), ("new", new)):
            start = time.process_time()
            fits[label] = module.fit_candidates(table, 3, Prior(), np.random.default_rng(0))  # type: ignore[attr-defined]
            cpu[label] += time.process_time() - start
        for c, a in fits["old"].items():
            b = fits["new"][c]
            iters["old"] += a.n_iter
            iters["new"] += b.n_iter
            if a.mixture == b.mixture and a.log_posterior == b.log_posterior:
                same += 1
                continue
            apart += 1
            gap = (b.log_posterior - a.log_posterior) / abs(a.log_posterior)
            if abs(gap) >= abs(worst[0]):
                worst = (gap, f"{name}, c={c}")
    print(f"{len(tables)} histograms: {same} fits identical (mixture and log posterior), {apart} not"
          + (f" (largest log posterior change {worst[0]:+.1e} relative, {worst[1]})" if apart else "")
          + f"; iterations old {iters['old']}, new {iters['new']}; CPU old {cpu['old']:.2f} s, new {cpu['new']:.2f} s")


if __name__ == "__main__":
    main()
