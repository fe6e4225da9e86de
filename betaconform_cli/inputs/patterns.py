"""Vote patterns: what every reader hands over besides the labeled histogram (`Votes`, dataset.py).

A verdict or a gold label becomes a *class*: its text by values.py's rule, so that two values are one class exactly
when `values.agree` scores them equal (1, 1.0, "1", " 1 " are one class; "A" and " A" one class; true and "true"
one class; "A" and "a" two). A missing value (null, empty, NA, NaN) is no class. Classes are sorted (numbers by
value first, then text), patterns by their codes, so that the same data in another order gives the same Votes.

Every reader builds Votes through `build`, from rows of class texts (already aligned to the judges) with counts:
JSON Lines and the tool logs count them in Python, tables in DuckDB (one GROUP BY: patterns, not rows, reach
Python). Correctness-only inputs (judgments 0/1, counts) carry no verdicts and have no Votes; nor do verdicts scored
with a tolerance (a numeric score is not a class).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from . import values
from .dataset import Votes


def class_text(value: Any) -> str | None:
    """A verdict or gold label as its class (text), None when missing; values.ValueProblem for a list or object."""
    values.check_scalar(value, "a verdict")
    if values.is_missing(value):
        return None
    x = values.number(value)
    if x is not None:
        return _number_text(x)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def canonical(text: str | None) -> str | None:
    """A class read as text (a table cell, trimmed) in class_text's form: numbers written one way."""
    if text is None:
        return None
    return class_text(text)


def _number_text(x: float) -> str:
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


def class_order(text: str) -> tuple[int, float, str]:
    """The order of classes in Votes: numbers by value first, then texts."""
    x = values.number(text)
    return (0, x, "") if x is not None and math.isfinite(x) else (1, 0.0, text)


Row = tuple[tuple[str | None, ...], str | None]  # (each judge's class or None, gold class or None)


def build(judges: Sequence[str], rows: Mapping[Row, int] | Iterable[tuple[Row, int]],
          items: Sequence[Row] | None = None, ids: Sequence[str] | None = None,
          clusters: Sequence[str] | None = None, no_verdict: Mapping[str | None, int] | None = None) -> Votes:
    """Votes from pattern rows and their counts. `items`: each item's row in input order (then `rows` may be
    empty: counted from the items), `ids` their ids, `clusters` their cluster ids (--cluster-field); kept as
    Votes.item_pattern / Votes.ids / Votes.clusters. Rows with no verdict at all are in no pattern: they are counted
    by their gold in Votes.no_verdict, with `no_verdict` ({gold class or None: items}) a reader counted itself."""
    judges = tuple(judges)
    tally: dict[Row, int] = {}
    if items is not None:
        for r in items:
            tally[r] = tally.get(r, 0) + 1
    else:
        for r, n in (rows.items() if isinstance(rows, Mapping) else rows):
            if n:
                tally[r] = tally.get(r, 0) + int(n)
    unjudged: dict[str | None, int] = dict(no_verdict or {})
    for (vs, g), n in tally.items():
        if all(v is None for v in vs):
            unjudged[g] = unjudged.get(g, 0) + n
    tally = {r: n for r, n in tally.items() if any(v is not None for v in r[0])}
    seen = {v for (vs, g) in tally for v in (*vs, g) if v is not None} | {g for g, n in unjudged.items() if g is not None and n}
    classes = sorted(seen, key=class_order)
    code = {c: i for i, c in enumerate(classes)}
    def coded(r: Row) -> tuple[tuple[int, ...], int]:
        vs, g = r
        return tuple(-1 if v is None else code[v] for v in vs), -1 if g is None else code[g]

    keyed = sorted((coded(r), n) for r, n in tally.items())
    width = len(judges)
    patterns = np.array([p for (p, _), _ in keyed], dtype=np.int32).reshape(-1, width)
    gold = np.array([g for (_, g), _ in keyed], dtype=np.int32)
    counts = np.array([n for _, n in keyed], dtype=np.int64)
    item_pattern = None
    kept_ids = None
    kept_clusters = None
    if items is not None:
        index = {pg: i for i, (pg, _) in enumerate(keyed)}
        pick = [i for i, r in enumerate(items) if any(v is not None for v in r[0])]
        item_pattern = np.array([index[coded(items[i])] for i in pick], dtype=np.int64)
        if ids is not None:
            kept_ids = tuple(str(ids[i]) for i in pick)
        if clusters is not None:
            kept_clusters = tuple(str(clusters[i]) for i in pick)
    none = tuple(sorted((-1 if g is None else code[g], n) for g, n in unjudged.items() if n))
    return Votes(judges, tuple(classes), patterns, gold, counts, item_pattern, kept_ids, kept_clusters, none)


def merge_rows(judge_rows: Iterable[tuple[tuple[str, ...] | None, tuple[str | None, ...], str | None, int]]
               ) -> tuple[tuple[str, ...], dict[Row, int]]:
    """(judges, rows) from rows whose judges are named per row (keyed verdicts) or by position (None: "1", "2",
    ...): judges in order of first appearance, each row aligned to them."""
    index: dict[str, int] = {}
    got = list(judge_rows)
    for names, vs, _, _ in got:
        for judge in names if names is not None else (str(i + 1) for i in range(len(vs))):
            index.setdefault(judge, len(index))
    out: dict[Row, int] = {}
    for names, vs, g, n in got:
        row: list[str | None] = [None] * len(index)
        for name, v in zip(names if names is not None else (str(i + 1) for i in range(len(vs))), vs):
            row[index[name]] = v
        key = (tuple(row), g)
        out[key] = out.get(key, 0) + n
    return tuple(index), out


def as_dict(votes: Votes) -> dict[tuple[tuple[tuple[str, str], ...], str | None], int]:
    """Votes as {((judge, class) for each verdict, gold class or None): items}: independent of judge and class order
    (for comparing what two readers found)."""
    out: dict[tuple[tuple[tuple[str, str], ...], str | None], int] = {}
    for p, g, n in zip(votes.patterns, votes.gold, votes.counts):
        key = (tuple(sorted((votes.judges[j], votes.classes[c]) for j, c in enumerate(p) if c >= 0)),
               None if g < 0 else votes.classes[g])
        out[key] = out.get(key, 0) + int(n)
    return out


def vocabularies(votes: Votes) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(the gold's classes, the classes of the verdicts on labeled items, of the verdicts on unlabeled items), each in
    class order: what values.vocabulary_problem compares, and what doctor lists."""
    p, g, c = votes.patterns, votes.gold, votes.counts
    used = c > 0
    lab, unl = used & (g >= 0), used & (g < 0)
    gold = set(g[lab].tolist())

    def seen(rows: np.ndarray) -> set[int]:
        codes = p[rows]
        return set(codes[codes >= 0].tolist())

    def named(codes: set[int]) -> tuple[str, ...]:
        return tuple(votes.classes[i] for i in sorted(codes))

    return named(gold), named(seen(lab)), named(seen(unl))


def vote_splits(votes: Votes) -> list[tuple[int, str, int]]:
    """(judges who gave a verdict, split, items) over every item, labeled or not: the split is how many judges gave
    each class, largest first ("6-1"; "3-2-2" with several classes), sorted by judges, then by the largest share."""
    tally: dict[tuple[int, tuple[int, ...]], int] = {}
    for p, n in zip(votes.patterns, votes.counts):
        given = p[p >= 0]
        if not len(given) or not n:
            continue
        parts = tuple(sorted(np.bincount(given).tolist(), reverse=True))
        parts = tuple(x for x in parts if x) + ((0,) if len(set(given.tolist())) == 1 else ())
        key = (len(given), parts)
        tally[key] = tally.get(key, 0) + int(n)
    return [(k, "-".join(map(str, parts)), n) for (k, parts), n in sorted(tally.items(), key=lambda kv: (kv[0][0], [-x for x in kv[0][1]]))]


def agreement(votes: Votes) -> list[tuple[str, str, float, int]]:
    """(judge, judge, share of the items both judged on which they gave the same class, those items) for every pair
    of judges with an item in common, labeled items and unlabeled ones alike; most agreeing pairs first."""
    p, c = votes.patterns, votes.counts.astype(float)
    out: list[tuple[str, str, float, int]] = []
    for a in range(len(votes.judges)):
        both = (p[:, a:a + 1] >= 0) & (p[:, a + 1:] >= 0)
        if not both.size:
            continue
        n = c @ both
        same = c @ ((p[:, a:a + 1] == p[:, a + 1:]) & both)
        for k, b in enumerate(range(a + 1, len(votes.judges))):
            if n[k] > 0:
                out.append((votes.judges[a], votes.judges[b], float(same[k] / n[k]), int(n[k])))
    return sorted(out, key=lambda t: (-t[2], -t[3], t[0], t[1]))
