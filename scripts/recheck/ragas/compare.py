"""Compare what betaconform reads from Ragas result files with an independent parse of the same files (json, csv,
pyarrow), cell by cell: each metric's verdict per row (NaN / empty: none), the human_label gold, the items.
    PYTHONPATH=. python scripts/recheck/ragas/compare.py FILE...
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

from betaconform_cli.inputs import InputOptions, Keep, read_inputs

METRICS = ("correct_a", "correct_b", "correct_c")


def independent(path: Path) -> dict[str, dict[str, str]]:
    if path.suffix == ".csv":
        with path.open(newline="") as fh:
            rows = [(r[""], r) for r in csv.DictReader(fh)]
    elif path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = list(enumerate(pq.read_table(path).to_pylist()))
    elif path.suffix == ".jsonl":
        rows = list(enumerate(json.loads(line) for line in path.read_text().splitlines()))
    else:
        rows = list(enumerate(json.loads(path.read_text())))
    out = {}
    for i, r in rows:
        def cls(v: object) -> str | None:
            if v in (None, "") or isinstance(v, float) and math.isnan(v):
                return None
            return str(int(float(v)))  # type: ignore[arg-type]
        row = {m: c for m in METRICS if (c := cls(r.get(m))) is not None}
        if (g := cls(r.get("human_label"))) is not None:
            row["GOLD"] = g
        out[str(i)] = row
    return out


def ours(path: Path) -> dict[str, dict[str, str]]:
    (ds,) = read_inputs([path], InputOptions(), Keep.ITEMS, need_labels=False)
    v = ds.votes
    assert v is not None and v.ids is not None and v.item_pattern is not None
    out = {}
    for item, p in zip(v.ids, v.item_pattern, strict=True):
        row = {j: v.classes[c] for j, c in zip(v.judges, v.patterns[p], strict=True) if c >= 0}
        out[item] = row | ({"GOLD": v.classes[v.gold[p]]} if v.gold[p] >= 0 else {})
    return out


for f in map(Path, sys.argv[1:]):
    want, got = independent(f), ours(f)
    want = {i: r for i, r in want.items() if len(r) > ("GOLD" in r)}
    diff = {i: (want.get(i), got.get(i)) for i in set(want) | set(got) if want.get(i) != got.get(i)}
    print(f.name, "OK" if not diff else f"DIFFERS {diff}", f"({len(got)} items)")
