"""Compare what betaconform reads from the files of tests/fixtures/phoenix_server/run.py with what it logged (its
plan.py, on the ids it wrote in ids.json), item by item and judge by judge: the judges' verdict classes, the gold,
the items (labeled and unlabeled). Run in this project's venv:
    PYTHONPATH=. python scripts/recheck/phoenix/compare.py OUT FILE... [--kind trace|session]
Prints one line per file and dataset: OK, or what differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "phoenix_server"))
from plan import expected as planned  # noqa: E402

from betaconform_cli.inputs import InputOptions, Keep, read_inputs


def read_back(path: Path) -> dict[str, dict[str, dict[str, object]]]:
    """{question: {item: {judge or "GOLD": class}}} from the datasets' vote patterns."""
    out: dict[str, dict[str, dict[str, object]]] = {}
    for ds in read_inputs([path], InputOptions(), Keep.ITEMS, need_labels=False):
        v = ds.votes
        assert v is not None and v.ids is not None and v.item_pattern is not None, ds.name
        got = out.setdefault(ds.name, {})
        for item, p in zip(v.ids, v.item_pattern, strict=True):
            row = {j: v.classes[c] for j, c in zip(v.judges, v.patterns[p], strict=True) if c >= 0}
            if v.gold[p] >= 0:
                row["GOLD"] = v.classes[v.gold[p]]
            got[item] = row
    return out


def as_class(x: object) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def main() -> None:
    out, files = Path(sys.argv[1]), [a for a in sys.argv[2:] if not a.startswith("--")]
    kind = sys.argv[-1] if "--kind" in sys.argv else "span"
    expected = planned(json.loads((out / "ids.json").read_text())[kind])
    for f in files:
        got = read_back(out / f)
        for question, items in expected.items():
            name = question if len(got) > 1 else next(iter(got))
            want = {i: row for i, row in items.items() if len(row) > ("GOLD" in row)}
            have = {i: {j: as_class(x) for j, x in row.items()} for i, row in got.get(name, {}).items()}
            diff = {i: (want.get(i), have.get(i)) for i in set(want) | set(have) if want.get(i) != have.get(i)}
            print(f"{f} [{question}]:", "OK" if not diff else f"DIFFERS {diff}", f"({len(have)} items)")


if __name__ == "__main__":
    main()
