"""A long table of verdicts read in ONE pass over its rows: the (judges, correct) histogram, the checks and the vote
patterns (issue 29). Each item's verdicts are packed by DuckDB into one 64-bit key -- a class code of a few bits per
judge, at its place among the judges' names, and the gold's code on top -- and table_sql.histograms' checks ride on
the same aggregates and on the table's row count, so that the rows are read once, with integer work per row; Python
decodes the few distinct keys into patterns. The verdict and gold texts are taken from the first rows (a text they
miss shows in the key, and the pass runs again with every text). Where the judges' slots cannot fit 64 bits (many
judges or classes), None: the reader takes table_sql.vote_patterns, a second pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import values
from .dataset import Votes
from .options import InputOptions
from .patterns import canonical, class_order
from .table_sql import Roles, Table, check_rows, fail, gold_expr, lookup, q

MAX_CODES = 255  # distinct verdict texts a key codes (more: the second pass)
ONE_HOT_GOLDS = 31  # distinct gold texts whose one-hot code may ride on top of the key (more: aggregated apart)
SAMPLE_ROWS = 1 << 16  # judges, verdict and gold texts are read from the first rows (one they miss: read all, again)


class _Unseen(Exception):
    """The first rows missed a verdict or gold text (or the key's checks failed): read every text and run again."""


def _slots(names: list[str], col: str, bits: int, width: int = 64) -> tuple[str, dict[str, int]] | None:
    """SQL for each judge's weight in the key -- 2 to the power of its bit offset, its place among the sorted names
    times `bits` -- as a constant list indexed by list_position (both evaluated once per distinct name of a
    dictionary-encoded column; a name not in the list gives NULL, so its row sets no bit and its item is bad) -- and
    each name's offset; None when they do not fit `width` bits."""
    if not names or len(names) * bits > width:
        return None
    return lookup(col, names, [1 << (i * bits) for i in range(len(names))]), {n: i * bits for i, n in enumerate(names)}


def _texts(con: Any, table: Table, roles: Roles, sample: int | None) -> tuple[list[str], dict[str, str | None], list[tuple[Any, Any]]] | None:
    """The distinct judges (sorted), verdict texts (raw -> class, None: a missing-value word) and gold texts (raw, as
    gold_expr reads it), from the first `sample` rows (None: all rows): a name or a text those rows miss has no code,
    and the key shows it (counts_and_patterns). Where the first rows name one judge only (a file sorted by judge),
    the judges are read from their whole column. None when a judge name is empty (an error histograms' checks name)
    or there are too many texts to code."""
    judge, verdict, gold_col = q(roles.judge or ""), q(roles.verdict or ""), q(roles.gold or "")
    src = table.sql
    if sample is not None:  # the first rows, read once (each distinct query below then reads a few thousand rows)
        con.execute(f"CREATE OR REPLACE TEMP TABLE __first_rows AS SELECT {judge}, {verdict}, {gold_col} FROM {table.sql} "
                    f"LIMIT {int(sample)}")
        src = "__first_rows"
    names = [r[0] for r in con.execute(f"SELECT DISTINCT CAST({judge} AS VARCHAR) FROM {src}").fetchall()]
    if sample is not None and len(names) < 2:
        names = [r[0] for r in con.execute(f"SELECT DISTINCT CAST({judge} AS VARCHAR) FROM {table.sql}").fetchall()]
    raws = [r[0] for r in con.execute(f"SELECT DISTINCT CAST({verdict} AS VARCHAR) FROM {src}").fetchall()]
    gold_texts = con.execute(f"SELECT {gold_col}, {gold_expr(table, roles.gold or '')} FROM (SELECT DISTINCT CAST({gold_col} "
                             f"AS VARCHAR) AS {gold_col} FROM {src})").fetchall()
    if any(n is None for n in names) or len(raws) > MAX_CODES + 1 or len(gold_texts) > MAX_CODES + 1:
        return None
    cls = {raw: None if values.is_missing(raw) else canonical(raw) for raw in raws if raw is not None}
    return sorted(str(n) for n in names), cls, gold_texts


def counts_and_patterns(con: Any, table: Table, roles: Roles, opts: InputOptions) -> tuple[list[tuple[Any, ...]], dict[Any, Votes]] | None:
    """(histogram rows as table_sql.histograms gives them, {dataset: its Votes}) of a long table whose verdicts are scored
    against a gold column, from one GROUP BY that also runs histograms' checks; None when the patterns do not fit a
    64-bit key. The verdict and gold texts are read from the first SAMPLE_ROWS rows; where the rows hold one they
    missed (or a check fails), every text is read and the pass runs again (and then names the bad row)."""
    try:
        return _one_pass(con, table, roles, opts, SAMPLE_ROWS)
    except _Unseen:
        try:
            return _one_pass(con, table, roles, opts, None)
        except _Unseen:  # every text had its code: a check failed that check_rows did not name (none is known)
            return None


def _layout(names: list[str], judge: str, classes: list[str], golds: list[str]) -> tuple[int, int | None, tuple[str, dict[str, int]] | None]:
    """(the code of a row without a verdict (0: the judges present are counted by a mask instead), the gold's first
    bit on top of the key (None: aggregated apart), the judges' slots) for the widest key layout that fits."""
    none = len(classes) + 1  # a row without a verdict: its slot is filled all the same (the repeat check counts it)
    top = 62 - len(golds)  # the gold's one-hot code (no gold, each gold text, a text not coded): bits top .. 63
    found = _slots(names, judge, none.bit_length(), top) if len(golds) <= ONE_HOT_GOLDS else None
    if found is not None:
        return none, top, found
    found = _slots(names, judge, none.bit_length())  # no room on top of the verdicts: the gold codes are aggregated apart
    if found is not None:
        return none, None, found
    return 0, None, _slots(names, judge, max(1, len(classes).bit_length()))  # no room for a missing verdict's code


def _one_pass(con: Any, table: Table, roles: Roles, opts: InputOptions, sample: int | None) -> tuple[list[tuple[Any, ...]], dict[Any, Votes]] | None:
    """counts_and_patterns with the texts of the first `sample` rows (None: all); _Unseen where the key shows a text
    without a code, or a check fails before every text was read.

    Every row costs integer work only: its verdict and its gold become small codes, its judge a weight (2 to the
    power of its slot), each by a constant list indexed by list_position over the few distinct texts (_texts,
    table_sql.lookup: evaluated on a Parquet column's dictionary, not per row); the key is code * weight | gold bit. The checks ride on the same aggregates: a
    judge repeated within an item shows as fewer filled slots than rows (a verdict that is missing fills its slot
    with a code of its own, a verdict text without a code fills none; where the missing code leaves too few bits, a
    mask of the judges present is OR-ed beside the key), two gold labels or gold on some rows only as more than one
    bit of the gold's one-hot code on top of the key (a bit for no gold, one for each gold text, one for a text
    without a code; where the key has no room for it, bit_or <> bit_and of the gold codes aggregated apart). A
    labeled item's (judges, correct) cell is read off its pattern: its verdicts' classes against the gold's class,
    patterns.canonical's form, so that a verdict agrees with gold by values.agree's rule (numbers as numbers)."""
    texts = _texts(con, table, roles, sample)
    if texts is None:
        return None
    names, cls, gold_texts = texts
    classes = sorted({c for c in cls.values() if c is not None})
    judge = f"CAST({q(roles.judge or '')} AS VARCHAR)"
    golds = sorted({t for _, t in gold_texts if t is not None})
    none, gold_at, found = _layout(names, judge, classes, golds)
    if found is None or not classes or (none == 0 and sample is not None):  # a mask cannot show a text without a code
        if sample is not None:
            raise _Unseen
        return None
    (weight, slots), bits = found, max(1, none.bit_length(), len(classes).bit_length())
    # a row's verdict code (a text without one: NULL, so its slot stays empty) times its judge's weight
    raws = [raw for raw in cls if raw is not None]
    codes = [none if c is None else classes.index(c) + 1 for c in (cls[r] for r in raws)]
    code = lookup(f"CAST({q(roles.verdict or '')} AS VARCHAR)", [*raws, None], [*codes, none])
    g = f"CAST({q(roles.gold or '')} AS VARCHAR)"
    ds = f"CAST({q(roles.dataset)} AS VARCHAR)" if roles.dataset else "NULL"
    item = q(roles.item or "")
    # the rows beyond the judges present, per item, where a mask counts them; else the filled slots are summed in
    # _decode and compared with the table's row count (one number: Parquet keeps it in its metadata)
    rows_sql = f"count(*) - bit_count(bit_or({lookup(judge, names, [1 << i for i in range(len(names))])}))" if none == 0 else "0"
    key = f"{code} * {weight}"
    if gold_at is not None:  # the gold's one-hot bit on top; a gold text without a code: NULL, so the row fills no slot
        top = _gold_code(g, gold_texts, golds, lambda c: 1 << (gold_at + c))
        gold = f"bit_or({key} | {top}) AS key, 0 AS gold, {item} IS NULL"
    else:  # the gold's code apart (a text without one: the last code)
        gc = f"coalesce({_gold_code(g, gold_texts, golds, lambda c: c)}, {len(golds) + 1})"
        gold = f"bit_or({key}) AS key, bit_or({gc}) AS gold, {item} IS NULL OR bit_or({gc}) <> bit_and({gc})"
    inner = (f"SELECT {ds} AS ds, {gold} AS bad, {rows_sql} AS n FROM {table.sql} GROUP BY {ds + ', ' if roles.dataset else ''}{item}")
    try:
        got = con.execute(f"SELECT ds, key, gold, count(*) AS items, n, bool_or(bad) AS bad FROM ({inner}) "
                          "GROUP BY ds, key, gold, n").fetchnumpy()  # columns as arrays: no Python tuple per key
        total = None if none == 0 else int(con.execute(f"SELECT count(*) FROM {table.sql}").fetchone()[0])
    except Exception as exc:  # noqa: BLE001
        raise fail(table.where, exc) from None
    rows = (got["ds"].tolist(), *(np.ma.filled(got[c], 0) for c in ("key", "gold", "items", "n", "bad")))
    bad, hist, votes = _decode(rows, classes, golds, slots, bits, gold_at, total)
    if bad and sample is not None:
        raise _Unseen
    if bad:
        check_rows(con, table, roles, opts)  # raises the first bad row's InputError
        raise _Unseen
    return hist, votes


def _gold_code(g: str, gold_texts: list[tuple[Any, Any]], golds: list[str], value: Callable[[int], int]) -> str:
    """SQL for a row's gold code as value(code): 0 no gold (NULL or a missing-value word), 1 + its index in `golds`
    for a gold text; NULL for a text not in `gold_texts` (the first rows missed it)."""
    given = [(raw, value(0 if t is None else golds.index(t) + 1)) for raw, t in gold_texts if raw is not None]
    return lookup(g, [*(raw for raw, _ in given), None], [*(c for _, c in given), value(0)])


def _decode(rows: tuple[Any, ...], classes: list[str], golds: list[str], slots: dict[str, int], bits: int,
            gold_at: int | None = None, total: int | None = None) -> tuple[bool, list[tuple[Any, ...]], dict[Any, Votes]]:
    """(whether a check failed, the histogram rows, each dataset's Votes) of the columns (dataset: a list, then as
    arrays: key (0: NULL), gold code, items, rows per item beyond the judges present, bad) (gold code: 1 + an index into `golds`, 0 none; with `gold_at`, the
    code is the bit set on top of the key from that bit on). `total`: the table's rows, which must equal the filled
    slots summed over the items (each row fills its judge's slot: a judge named twice for an item, or a verdict or
    judge without a code, leaves fewer); None: a mask counted them per item (the rows column). A check fails there,
    or where an item is bad (no id, two gold labels, gold on some rows only, a gold text without a code). The keys
    are unpacked with numpy, the Votes laid out as patterns.build lays them out (classes in its order, patterns
    sorted, repeats merged)."""
    ds_col, key_col, gc_col, items_col, n_col, bad_col = rows
    if not len(ds_col):
        return False, [], {}
    names = sorted(slots)
    shifts = np.array([slots[j] for j in names], dtype=np.uint64)
    keys = np.asarray(key_col, dtype=np.uint64)
    codes = ((keys[:, None] >> shifts[None, :]) & np.uint64((1 << bits) - 1)).astype(np.int64)
    extra = np.array(n_col, dtype=np.int64)
    if total is not None and total != int(np.dot(np.array(items_col, dtype=np.int64), (codes > 0).sum(axis=1))):
        return True, [], {}
    gc = np.array(gc_col, dtype=np.int64)
    if gold_at is not None:  # exactly one gold code per item, or the item had two gold labels (or gold on some rows)
        top = keys >> np.uint64(gold_at)
        extra += (top == 0) | ((top & (top - np.uint64(1))) != 0)
        gc = np.log2(np.maximum(top, np.uint64(1)).astype(np.float64)).astype(np.int64)  # a power of two: exact
    extra += gc > len(golds)  # a gold text without a code (the first rows did not show it)
    if np.any(bad_col) or extra.any():
        return True, [], {}
    codes[codes > len(classes)] = 0  # 0: no verdict (no row, or a row without one)
    gold_class = [None, *(canonical(t) for t in golds)]  # each gold code's class, None: no gold
    items = np.array(items_col, dtype=np.int64)
    gold_code = np.array([classes.index(c) + 1 if c in classes else -1 for c in gold_class], dtype=np.int64)
    labeled = np.array([c is not None for c in gold_class])[gc]
    given, right = (codes > 0).sum(axis=1), (codes == gold_code[gc][:, None]).sum(axis=1)
    cells = np.column_stack([labeled, np.where(labeled, given, 0), np.where(labeled, right, 0)])
    hist: list[tuple[Any, ...]] = []
    out: dict[Any, Votes] = {}
    for ds in dict.fromkeys(ds_col):
        mine = np.array([d == ds for d in ds_col]) if len(set(ds_col)) > 1 else np.ones(len(ds_col), dtype=bool)
        cell, inverse = _unique_rows(cells[mine], len(names) + 1)
        sums = np.bincount(inverse, weights=items[mine], minlength=len(cell)).astype(np.int64)
        hist += [(ds, j, c, n, 0 if is_lab else n) for (is_lab, j, c), n in zip(cell.tolist(), sums.tolist())]
        voted = mine & (given > 0)
        if voted.any():
            unjudged: dict[str | None, int] = {}  # the items no judge gave a verdict on, by gold (Votes.no_verdict)
            for g, n in zip(gc[mine & (given == 0)].tolist(), items[mine & (given == 0)].tolist()):
                unjudged[gold_class[g]] = unjudged.get(gold_class[g], 0) + int(n)
            out[ds] = _votes(codes[voted], gc[voted], items[voted], classes, gold_class, names, unjudged)
    return False, hist, out


def _votes(codes: np.ndarray, gc: np.ndarray, counts: np.ndarray, classes: list[str], gold_class: list[str | None],
           names: list[str], unjudged: dict[str | None, int] | None = None) -> Votes:
    """Votes of coded patterns (codes: 1 + an index into `classes`, 0 none; gc: gold codes, gold_class[code] its class),
    exactly as patterns.build makes them from the same rows: the judges who gave a verdict, the classes seen sorted its
    way, patterns sorted and merged; `unjudged` the items with no verdict by gold class (Votes.no_verdict)."""
    unjudged = unjudged or {}
    used: np.ndarray = np.asarray(codes.any(axis=0), dtype=bool)
    codes = codes[:, used]
    seen = {classes[c - 1] for c in np.flatnonzero(np.bincount(codes.reshape(-1), minlength=len(classes) + 1)[1:]) + 1}
    seen |= {g for g in (gold_class[c] for c in np.unique(gc).tolist()) if g is not None}
    seen |= {g for g, n in unjudged.items() if g is not None and n}
    ordered = sorted(seen, key=class_order)
    remap = np.array([-1] + [ordered.index(c) if c in seen else -1 for c in classes], dtype=np.int64)
    # gold_class spans every dataset of the table: a class only another dataset's gold uses is never indexed here
    gremap = np.array([-1 if g is None or g not in seen else ordered.index(g) for g in gold_class], dtype=np.int64)
    unique, inverse = _unique_rows(np.column_stack([remap[codes], gremap[gc]]), len(ordered))
    merged = np.bincount(inverse, weights=counts, minlength=len(unique)).astype(np.int64)
    judges = tuple(j for j, u in zip(names, used.tolist()) if u)
    none = tuple(sorted((-1 if g is None else ordered.index(g), n) for g, n in unjudged.items() if n))
    return Votes(judges, tuple(ordered), unique[:, :-1], unique[:, -1], merged, no_verdict=none)


def _unique_rows(table: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(table, axis=0, return_inverse=True) for rows of values in -1 .. width-1 (int32 rows): each row packed
    into one int64 in the same (lexicographic) order where it fits, which sorts ~10x faster than rows."""
    base, m = width + 1, table.shape[1]
    if base ** m >= 1 << 62:
        unique, inverse = np.unique(table.astype(np.int32), axis=0, return_inverse=True)
        return unique, inverse.reshape(-1)
    weights = base ** np.arange(m - 1, -1, -1, dtype=np.int64)
    packed, inverse = np.unique((table + 1) @ weights, return_inverse=True)
    unique = (packed[:, None] // weights[None, :]) % base - 1
    return unique.astype(np.int32), inverse.reshape(-1)
