"""Vote patterns as a table: the output of the published aggregation (sql/vote_patterns.sql) that any engine can run
on a long table of verdicts -- Spark, DuckDB, a warehouse -- and that `fit` reads back (docs/SCALE.md).

One row per pattern and gold: `pattern` holds every judge's verdict on the items of that row, written as
`<length>:<judge><length>:<verdict>` pairs (lengths in characters, so that any text can be a name or a class),
`gold` the items' gold label (empty: unlabeled items), `items` how many items share both. The SQL text is read from
its file here and nowhere else: the docs show it and tests run it, so the published query is the one the code uses.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from ..errors import InputError
from .patterns import canonical

COLUMNS = ("pattern", "gold", "items")
SOURCE = "judge_results"  # the relation the SQL reads: (item_id, judge, verdict, gold)


@cache
def vote_patterns_sql() -> str:
    """The published aggregation, as plain SQL over `judge_results` (sql/vote_patterns.sql, comments included)."""
    return resources.files("betaconform_cli.inputs").joinpath("sql/vote_patterns.sql").read_text(encoding="utf-8")


def split_pattern(text: str) -> list[tuple[str, str]]:
    """A pattern's (judge, verdict) pairs; ValueError when the text is not such pairs."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        pair: list[str] = []
        for _ in range(2):
            colon = text.find(":", i)
            if colon <= i or not text[i:colon].isdigit():
                raise ValueError(f"expected <length>:<text> at character {i + 1}")
            n = int(text[i:colon])
            if colon + 1 + n > len(text):
                raise ValueError(f"a length of {n} runs past the end at character {i + 1}")
            pair.append(text[colon + 1:colon + 1 + n])
            i = colon + 1 + n
        out.append((pair[0], pair[1]))
    return out


def read_rows(rows: list[tuple[Any, ...]], where: str) -> tuple[list[tuple[None, int, int, int, int]], tuple[Any, ...]]:
    """(histogram cells for build.from_histograms, (judges, {(classes, gold): items}) for build.attach_votes) of a
    pattern table's (pattern, gold, items, row) rows. A labeled pattern's cell is (judges with a verdict, judges
    whose class is the gold's); an unlabeled one counts as an item without gold, as the long table's reading does.
    Classes are written one way (patterns.canonical: numbers as numbers), so a verdict agrees with gold as the
    readers' one rule says."""
    parsed: list[tuple[dict[str, str | None], str | None, int]] = []
    judges: set[str] = set()
    for text, gold, items, row in rows:
        try:
            pairs = split_pattern("" if text is None else str(text))
        except ValueError as exc:
            raise InputError(where, f"not a vote pattern: {exc}", line=int(row), field="pattern", unit="row") from None
        verdicts = {j: canonical(v) for j, v in pairs}
        if len(verdicts) != len(pairs):
            raise InputError(where, "a judge appears twice in one pattern", line=int(row), field="pattern", unit="row")
        n = _count(items, where, int(row))
        judges.update(verdicts)
        parsed.append((verdicts, canonical(None if gold is None else str(gold)), n))
    order = tuple(sorted(judges))
    tally: dict[tuple[tuple[str | None, ...], str | None], int] = {}
    cells: list[tuple[None, int, int, int, int]] = []
    for verdicts, gold, n in parsed:
        classes = tuple(verdicts.get(j) for j in order)
        tally[(classes, gold)] = tally.get((classes, gold), 0) + n
        given = [c for c in classes if c is not None]
        if gold is None:
            cells.append((None, 0, 0, n, n))
        else:
            cells.append((None, len(given), sum(c == gold for c in given), n, 0))
    return cells, (order, tally)


def _count(value: Any, where: str, row: int) -> int:
    try:
        n = float(str(value).strip())
    except ValueError:
        n = -1.0
    if not (n >= 0 and n == int(n) and n < 2**53):
        raise InputError(where, f"items must be a non-negative integer, got {value!r}", line=row, field="items", unit="row")
    return int(n)
