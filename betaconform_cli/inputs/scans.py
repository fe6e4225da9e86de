"""What a pass over JSON Lines found (`Scan`), and how the scans of one file become its `Dataset`: counts and
skips summed in file order, the first error raised with the line a single pass would give, repeated ids found
and dropped or refused, and the verdicts turned into vote patterns. jsonl.py does the reading."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..counts import ItemClusters
from ..errors import InputError
from ..formats import load_json
from . import records
from .dataset import Dataset, Item, Reading, Skip, Slicing, Votes, count_table
from .options import InputOptions, Keep
from .paths import iter_lines

NO_ID = frozenset({hash("")})  # the fast path's id of a line without one or with a null one (jsonl._FastDecoder)


def id_hash(value: Any) -> int:
    """The hash of an id's text (3 and "3" are one id, as to `sample`); the exact comparison follows."""
    return hash(str(value))


@dataclass
class ScanVotes:
    """The verdicts as class patterns that a pass found (inputs with verdicts)."""

    patterns: dict[tuple[Any, ...], int] = field(default_factory=dict)  # (judge names or None, classes, gold) -> items
    items: list[tuple[tuple[Any, ...], str | None, int]] = field(default_factory=list)  # (votes key, id, line)
    clusters: dict[int, str] = field(default_factory=dict)  # line -> its cluster id (--cluster-field; items kept)
    keys: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)  # each distinct key, kept once
    no_verdict: dict[str | None, int] = field(default_factory=dict)  # gold class (None: unlabeled) -> items no judge gave a verdict on

    def add(self, key: tuple[Any, ...], weight: int) -> tuple[Any, ...]:
        """Count a line's votes key; returns the one copy of that key, so that what a line keeps (items kept)
        shares it. Nothing is kept per line otherwise: memory grows with distinct patterns, not items (README)."""
        key = self.keys.setdefault(key, key)
        self.patterns[key] = self.patterns.get(key, 0) + weight
        return key


@dataclass
class Scan:
    """What one pass over some lines found; errors are data here (local line numbers), raised by the caller."""

    counts: dict[tuple[int, int], int]
    items: list[tuple[Item, tuple[str, ...] | None]] = field(default_factory=list)
    skips: dict[str, list[int]] = field(default_factory=dict)  # reason -> [count, first line]
    shape: str | None = None
    first_line: int = 0
    lines: int = 0
    error: tuple[int, str, str | None] | None = None
    id_hashes: array[int] = field(default_factory=lambda: array("q"))  # hash of each id's text (id_hash)
    id_lines: array[int] | None = None  # and its line, for a stream (a file is read again to find the lines)
    votes: ScanVotes = field(default_factory=ScanVotes)
    slice_keys: dict[int, str | int | None] = field(default_factory=dict)  # line -> its raw slice key (--by; items kept)

    def skip(self, reason: str, lineno: int) -> None:
        entry = self.skips.setdefault(reason, [0, lineno])
        entry[0] += 1

    def add_id(self, value: Any, lineno: int) -> None:
        """A line's id (None: the line has none)."""
        if value is not None:
            self.id_hashes.append(id_hash(value))
            if self.id_lines is not None:
                self.id_lines.append(lineno)


@dataclass(frozen=True)
class FileRead:
    """One file being read, as the scans' merge needs it."""

    src: str  # the file as errors name it
    path: Path
    name: str  # the dataset's name
    stream: bool  # read from an open stream (stdin, a FIFO): it cannot be read again
    opts: InputOptions
    keep: Keep


def to_dataset(scans: list[Scan], read: FileRead) -> Dataset:
    """The scans of a file's consecutive parts (in file order) as one Dataset."""
    counts, shape, skips, id_hashes = _merged(scans, read.src)
    if read.opts.labels is not None and shape not in (None, "verdicts"):
        raise InputError(read.src, f"--labels gives gold to verdicts; this file holds '{shape}' records (correctness "
                                   "only, already scored)")
    votes: dict[tuple[Any, ...], int] = {}
    no_verdict: dict[str | None, int] = {}
    for sc in scans:
        for vkey, n in sc.votes.patterns.items():
            votes[vkey] = votes.get(vkey, 0) + n
        for gold, n in sc.votes.no_verdict.items():
            no_verdict[gold] = no_verdict.get(gold, 0) + n
    counts = _drop_repeats(scans[0], counts, votes, skips, _repeated_ids(id_hashes, scans[0].id_lines, read, shape), read)
    skipped = sum(n for n, _ in skips.values())
    _check_labeled(counts, votes, skips, read)
    items, names = _aligned(scans[0].items, shape) if read.keep is not Keep.COUNTS else (None, ())
    reading = Reading(
        source_format=f"jsonl ({shape})",
        roles=_roles(shape, read),
        judge_counts=_judge_counts(items, names),
        skips=tuple(Skip(reason, n, first) for reason, (n, first) in skips.items()),
        notes=_labels_used(id_hashes, read.opts),
    )
    return Dataset(
        votes=_vote_set(votes, scans[0], read, no_verdict) if votes else None,
        name=read.name,
        source=read.src,
        table=count_table(counts.items()),
        shape=shape or "list",
        skipped=skipped,
        items=items,
        judge_names=names,
        reading=reading,
        clusters=_clusters(items, scans[0].votes.clusters, read),
        slicing=_slicing(scans[0], read),
    )


def _clusters(items: tuple[Item, ...] | None, by_line: dict[int, str], read: FileRead) -> ItemClusters | None:
    """The labeled items' clusters (`cluster_field`: read_inputs keeps the items when it is given), else None."""
    if read.opts.record.cluster_field is None or not items:
        return None
    from .build import item_clusters

    return item_clusters([(it.judges, it.correct, by_line.get(it.line, f"line {it.line}")) for it in items])


def _slicing(first: Scan, read: FileRead) -> Slicing | None:
    """Each line's raw slice key and the votes' lines (--by), for slices.split; None without --by."""
    if read.opts.record.by is None:
        return None
    return Slicing(read.opts.record.by, line_keys=first.slice_keys, vote_lines=tuple(ln for _, _, ln in first.votes.items))


def _merged(
    scans: list[Scan], src: str
) -> tuple[dict[tuple[int, int], int], str | None, dict[str, list[int]], array[int]]:
    """(counts, shape, skips, id hashes) over the scans; the first error, or a second shape, raised with its line."""
    counts: dict[tuple[int, int], int] = {}
    shape: str | None = None
    skips: dict[str, list[int]] = {}
    offset = 0
    id_hashes: array[int] = array("q")
    for sc in scans:
        id_hashes.extend(sc.id_hashes)
        if sc.error is not None:
            line, message, field_name = sc.error
            raise InputError(src, message, line=offset + line, field=field_name)
        if sc.shape is not None:
            if shape is not None and sc.shape != shape:
                raise InputError(src, f"mixed shapes in one file: this line is '{sc.shape}', the file's first item is '{shape}'",
                                 line=offset + sc.first_line)
            shape = sc.shape
        for key, n in sc.counts.items():
            counts[key] = counts.get(key, 0) + n
        for reason, (n, first) in sc.skips.items():
            entry = skips.setdefault(reason, [0, offset + first])
            entry[0] += n
        offset += sc.lines
    return counts, shape, skips, id_hashes


def _drop_repeats(
    first: Scan, counts: dict[tuple[int, int], int], votes: dict[tuple[Any, ...], int], skips: dict[str, list[int]],
    dropped: dict[int, tuple[tuple[int, int], int, records.Parsed]], read: FileRead,
) -> dict[tuple[int, int], int]:
    """The counts without the lines whose id repeats (--duplicates first / last); votes, skips and the first
    scan's items are updated in place."""
    if not dropped:
        return counts
    items_kept = [pair for pair in first.items if pair[0].line not in dropped]
    for key, n, p in dropped.values():
        if p.classes is not None:
            vkey = (p.names, p.classes, p.gold)
            votes[vkey] = votes.get(vkey, 0) - n
        if not p.unlabeled:
            counts[key] = counts.get(key, 0) - n
    first.items[:] = items_kept
    first.votes.items[:] = [v for v in first.votes.items if v[2] not in dropped]
    if read.opts.handling.duplicates != "error":
        skips[f"id repeated (--duplicates {read.opts.handling.duplicates})"] = [len(dropped), min(dropped)]
    return {k: n for k, n in counts.items() if n}


def _check_labeled(counts: dict[tuple[int, int], int], votes: dict[tuple[Any, ...], int], skips: dict[str, list[int]],
                   read: FileRead) -> None:
    """A file with no labeled item is an error that says why: unlabeled verdicts, invalid lines, or nothing."""
    if any(counts.values()):
        return
    if any(n for (_, _, g), n in votes.items() if g is None):
        return  # unlabeled items only: a pool (checks.labels_problem refuses it where labels are needed)
    if skips:
        why = "; ".join(f"{n} {'lines' if n > 1 else 'line'}: {r}" for r, (n, _) in skips.items())
        raise InputError(read.src, f"no valid items ({why})", line=min((first for _, first in skips.values()), default=0) or None)
    raise InputError(read.src, "empty file: no items")


def _roles(shape: str | None, read: FileRead) -> tuple[tuple[str, str], ...]:
    """(role, field) of the fields read, for the reading's description."""
    opts = read.opts
    roles = {"list": (("judgments", opts.record.judgments_field),), "dict": (("judgments", opts.record.judgments_field),),
             "counts": (("correct", opts.record.correct_field), ("judges", opts.record.judges_field)),
             "verdicts": (("verdicts", opts.record.verdicts_field), ("gold", opts.record.label_field))}.get(shape or "list", ())
    if read.keep is not Keep.COUNTS:
        roles += (("id", opts.record.id_field), ("text", opts.record.text_field))
    return roles


def _vote_set(votes: dict[tuple[Any, ...], int], first: Scan, read: FileRead,
              no_verdict: dict[str | None, int] | None = None) -> Votes:
    """The verdicts as vote patterns: counts only, or (items kept) one row per item in file order; `no_verdict` the
    items no judge gave a verdict on, by gold (Votes.no_verdict)."""
    from .patterns import build, merge_rows

    judges, rows = merge_rows((keys, classes, gold, n) for (keys, classes, gold), n in votes.items())
    if read.keep is Keep.COUNTS:
        return build(judges, rows, no_verdict=no_verdict)
    index = {j: i for i, j in enumerate(judges)}
    per_item = []
    for (keys, classes, gold), _, _ in first.votes.items:
        row: list[str | None] = [None] * len(judges)
        for nm, c in zip(keys if keys is not None else (str(i + 1) for i in range(len(classes))), classes):
            row[index[nm]] = c
        per_item.append((tuple(row), gold))
    clusters = [first.votes.clusters[ln] for _, _, ln in first.votes.items] if read.opts.record.cluster_field is not None else None
    return build(judges, {}, per_item, [i if i is not None else str(ln) for _, i, ln in first.votes.items], clusters,
                 no_verdict)


def _labels_used(hashes: array[int], opts: InputOptions) -> tuple[str, ...]:
    """The note of a labels file: how many of its ids some line here has (by the hash of the id's text)."""
    if opts.labels is None:
        return ()
    from .labels import load

    lab = load(opts)
    if lab is None:
        return ()
    seen = set(hashes)
    return (lab.note(sum(id_hash(i) in seen for i in lab.by_id)),)


def _repeated_ids(hashes: array[int], lines: array[int] | None, read: FileRead, shape: str | None
                  ) -> dict[int, tuple[tuple[int, int], int, records.Parsed]]:
    """Lines whose id an earlier (or later) line repeats. Ids are compared by a hash of their text first (8 bytes
    per line, sorted once); when two hashes meet, the file is read again and those lines' ids compared exactly (a
    stream cannot be read again: its lines were kept). A repeated id is an InputError naming both lines, unless
    opts.handling.duplicates keeps the first or the last line: then {line dropped: ((judges, correct), weight, parsed)}."""
    if len(hashes) < 2:
        return {}
    import numpy as np

    h = np.frombuffer(hashes, dtype=np.int64)
    sh = np.sort(h)
    same = sh[1:] == sh[:-1]
    if not same.any():
        return {}
    twice = set(sh[1:][same].tolist()) - NO_ID
    if not twice:
        return {}
    opts = read.opts
    if read.stream:  # read once: its lines were kept; 64-bit hashes of different ids do not meet in practice
        at: dict[int, list[int]] = {}
        for line, x in zip(lines or (), hashes):
            if x in twice:
                at.setdefault(x, []).append(line)
        pairs = sorted((g[:2] for g in at.values() if len(g) > 1), key=lambda pair: pair[1])
        if not pairs:
            return {}
        if opts.handling.duplicates != "error":
            raise InputError(read.src, f"the id of line {pairs[0][0]} appears again; keeping the first or the last line of an id "
                                  "needs a file, not a stream: save it to a file first", line=pairs[0][1], field=opts.record.id_field)
        raise InputError(read.src, f"the id of line {pairs[0][0]} appears again; keep the first or the last with `duplicates`",
                         line=pairs[0][1], field=opts.record.id_field)
    seen: dict[str, list[tuple[int, records.Parsed]]] = {}
    for lineno, raw in iter_lines(read.path):
        try:
            obj = load_json(raw)
        except orjson.JSONDecodeError:
            continue  # skipped (skip_invalid)
        value = records.get(obj, opts.record.id_field, None) if isinstance(obj, dict) else None
        if value is None or id_hash(value) not in twice:
            continue
        try:
            parsed = records.parse(obj, shape or "list", opts)
        except records.RecordError:
            continue  # skipped (skip_invalid): not counted, so not a repeat
        seen.setdefault(str(records.exact_id(value, raw, opts.record.id_field)), []).append((lineno, parsed))
    groups = sorted(((ident, g) for ident, g in seen.items() if len(g) > 1), key=lambda kv: kv[1][1][0])
    if not groups:
        return {}  # the hashes of different ids met
    if opts.handling.duplicates == "error":
        ident, ((first, _), (again, _)) = groups[0][0], groups[0][1][:2]
        raise InputError(read.src, f"id {ident!r} appears again (first on line {first}); keep the first or the last with "
                              "`duplicates`", line=again, field=opts.record.id_field)
    dropped: dict[int, tuple[tuple[int, int], int, records.Parsed]] = {}
    for _, g in groups:
        for lineno, p in (g[1:] if opts.handling.duplicates == "first" else g[:-1]):
            dropped[lineno] = ((p.judges, p.correct), p.weight, p)
    return dropped


def _aligned(pairs: list[tuple[Item, tuple[str, ...] | None]], shape: str | None) -> tuple[tuple[Item, ...], tuple[str, ...]]:
    """Items with their marks in one judge order: names by first appearance (keyed shapes) or by position, 1-based."""
    if not pairs or pairs[0][0].marks is None:
        return tuple(it for it, _ in pairs), ()
    if all(names is None for _, names in pairs):
        width = max(len(it.marks or ()) for it, _ in pairs)
        names = tuple(str(i + 1) for i in range(width))
        return tuple(_pad(it, width) for it, _ in pairs), names
    index: dict[str, int] = {}
    for _, ns in pairs:
        for n in ns or ():
            index.setdefault(n, len(index))
    out = []
    for it, ns in pairs:
        row: list[int | None] = [None] * len(index)
        for n, m in zip(ns or (), it.marks or ()):
            row[index[n]] = m
        out.append(Item(it.judges, it.correct, it.id, it.text, it.line, tuple(row)))
    return tuple(out), tuple(index)


def _pad(it: Item, width: int) -> Item:
    marks = tuple(it.marks or ()) + (None,) * (width - len(it.marks or ()))
    return Item(it.judges, it.correct, it.id, it.text, it.line, marks)


def _judge_counts(items: tuple[Item, ...] | None, names: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    if not items or not names:
        return ()
    totals = [0] * len(names)
    for it in items:
        for j, m in enumerate(it.marks or ()):
            totals[j] += m is not None
    return tuple(zip(names, totals))
