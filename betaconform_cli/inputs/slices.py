"""Slices (`--by`): each item's slice key, read once by the reader, and the split of a dataset into one dataset per
slice (docs/SLICES.md).

`--by` is a field of the JSON Lines record (a dotted path: `metadata.category`), a column of a table, or a derived
bucket `length:FIELD[:N]`: the text length of FIELD (a field or a column) in N quantile buckets (default 4, 2..9).
An item without the field (null, empty text, absent) is in the slice `(missing)`. A slice is a dataset of its own
(`Dataset.slicing` names its parent and its key), so every command computes a slice exactly as it computes a file
of the slice's items alone. Slices are sorted by their key (numbers by value, then text), whatever the input order.
Formats other than JSON Lines records and tables carry no per-item field to slice by: InputError names the field
and the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..counts import ItemClusters
from ..errors import InputError, ParameterError
from .dataset import Dataset, Slicing, Votes, count_table

if TYPE_CHECKING:
    from .build import Mark

MISSING = "(missing)"
DEFAULT_BUCKETS = 4
MAX_BUCKETS = 9
SEP = "\x1f"  # between a table's dataset value and its slice key (tables.py's composite dataset column)


@dataclass(frozen=True)
class SliceSpec:
    """What `--by` names: a field or column (`field`), or its text length in `buckets` quantile buckets."""

    text: str
    field: str
    buckets: int = 0  # 0: the field's value itself

    @property
    def length(self) -> bool:
        return self.buckets > 0


def parse_by(by: str) -> SliceSpec:
    """`FIELD` or `length:FIELD[:N]`; ParameterError (`by`) for an empty field or N outside 2..9."""
    text = by.strip()
    if not text.startswith("length:"):
        return SliceSpec(text, text)
    parts = text.split(":")
    field = parts[1].strip() if len(parts) > 1 else ""
    n = DEFAULT_BUCKETS
    if len(parts) == 3 and parts[2].strip().isdigit():
        n = int(parts[2])
    elif len(parts) != 2:
        raise ParameterError("by", f"is FIELD or length:FIELD[:N] (N buckets, 2..{MAX_BUCKETS}); got {by!r}")
    if not field or not 2 <= n <= MAX_BUCKETS:
        raise ParameterError("by", f"is FIELD or length:FIELD[:N] (N buckets, 2..{MAX_BUCKETS}); got {by!r}")
    return SliceSpec(text, field, n)


def record_key(obj: Mapping[str, Any], spec: SliceSpec) -> str | int | None:
    """One JSON record's raw key: the field's value as text (its length for `length:`), None when missing; a
    list or an object is a RecordError naming the field."""
    from . import records
    from .patterns import class_text

    value = records.get(obj, spec.field, None)
    if isinstance(value, (list, dict)):
        raise records.RecordError(spec.field, f"--by needs one value per item (text, a number or a boolean), got {records.show(value)}")
    if spec.length:
        return None if value is None or value == "" else len(value if isinstance(value, str) else str(value))
    text = class_text(value)
    return None if text is None or text == "" else text


def length_edges(lengths: Sequence[int] | np.ndarray, buckets: int) -> tuple[int, ...]:
    """The bucket edges: floor of the lengths' i/N quantiles (linear interpolation, numpy's and DuckDB's
    quantile_cont), i = 1..N-1; an item of length L is in the first bucket whose edge is >= L, else the last."""
    arr = np.asarray(lengths, dtype=float)
    if arr.size == 0:
        return ()
    return tuple(int(np.floor(np.quantile(arr, i / buckets))) for i in range(1, buckets))


def bucket_label(length: int | None, edges: Sequence[int]) -> str:
    """`Q2 41-90 chars`: the bucket's number and its range of lengths (`(missing)` for no text)."""
    if length is None:
        return MISSING
    i = int(np.searchsorted(np.asarray(edges), length, side="left")) if edges else 0
    return label_of(i, edges)


def label_of(i: int, edges: Sequence[int]) -> str:
    """The label of bucket i (0-based) of the given edges."""
    if not edges:
        return "Q1 all lengths"
    if i == 0:
        return f"Q1 <={edges[0]} chars"
    if i >= len(edges):
        return f"Q{i + 1} >{edges[-1]} chars"
    return f"Q{i + 1} {edges[i - 1] + 1}-{edges[i]} chars"


def sort_key(key: str) -> tuple[int, float, str]:
    """Slices in order: `(missing)` last, numbers by value, then text."""
    if key == MISSING:
        return (2, 0.0, key)
    try:
        return (0, float(key), key)
    except ValueError:
        return (1, 0.0, key)


def slice_name(parent: str, key: str) -> str:
    return f"{parent}[{key}]"


def split(ds: Dataset, spec: SliceSpec) -> list[Dataset]:
    """A dataset whose reader kept each item's raw key (JSON Lines) as one dataset per slice, in slice order."""
    sl = ds.slicing
    assert sl is not None and sl.line_keys is not None
    keys = _labels(sl.line_keys, spec)
    if keys and all(k == MISSING for k in keys.values()):
        raise InputError(ds.source, f"--by '{spec.text}': no item has this field (an item without it is in '{MISSING}', "
                                    "but none has it: a misspelt field?)", field=spec.field)
    items = ds.items or ()
    item_keys = [keys.get(it.line, MISSING) for it in items]
    vote_keys = [keys.get(ln, MISSING) for ln in sl.vote_lines] if sl.vote_lines is not None else None
    found = sorted(set(item_keys) | set(vote_keys or ()), key=sort_key)
    out = []
    for n, key in enumerate(found):
        mine = tuple(it for it, k in zip(items, item_keys) if k == key)
        votes = _sub_votes(ds.votes, [k == key for k in vote_keys]) if ds.votes is not None and vote_keys is not None else None
        out.append(_without_silent(replace(
            ds, name=slice_name(ds.name, key), table=count_table(((it.judges, it.correct), 1) for it in mine), items=mine,
            votes=votes, skipped=ds.skipped if n == 0 else 0, left_out=ds.left_out if n == 0 else (),
            clusters=_sub_clusters(ds.clusters, [k == key for k in item_keys]),
            slicing=Slicing(spec.text, key, ds.name))))
    return out


def _sub_clusters(clusters: ItemClusters | None, pick: list[bool]) -> ItemClusters | None:
    """The slice's labeled items' clusters (--cluster-field: one per kept item, in the items' order), else None."""
    if clusters is None or len(clusters.cluster) != len(pick):
        return None
    at = np.flatnonzero(pick)
    return ItemClusters(clusters.judges[at], clusters.correct[at], clusters.cluster[at]) if len(at) else None


def _without_silent(ds: Dataset) -> Dataset:
    """The slice without the judges that said nothing on its items (a judge of other slices only), as a file of the
    slice's items alone would be read."""
    items = ds.items or ()
    votes = ds.votes
    spoke = {n for j, n in enumerate(ds.judge_names) if any(it.marks is not None and it.marks[j] is not None for it in items)}
    if votes is not None:
        spoke |= {n for j, n in enumerate(votes.judges) if bool((votes.patterns[:, j] >= 0).any())}
    names = tuple(n for n in ds.judge_names if n in spoke)
    if names != ds.judge_names:
        keep = [j for j, n in enumerate(ds.judge_names) if n in spoke]
        items = tuple(replace(it, marks=tuple(it.marks[j] for j in keep)) if it.marks is not None else it for it in items)
    if votes is not None and any(n not in spoke for n in votes.judges):
        cols = [j for j, n in enumerate(votes.judges) if n in spoke]
        votes = Votes(tuple(votes.judges[j] for j in cols), votes.classes, votes.patterns[:, cols], votes.gold, votes.counts,
                      votes.item_pattern, votes.ids, votes.clusters)
    return replace(ds, items=items, judge_names=names, votes=votes) if names != ds.judge_names or votes is not ds.votes else ds


def _labels(line_keys: Mapping[int, str | int | None], spec: SliceSpec) -> dict[int, str]:
    """Each line's slice key: the value, or its length bucket (edges from every item's length)."""
    if not spec.length:
        return {ln: MISSING if k is None else str(k) for ln, k in line_keys.items()}
    lengths = [int(k) for k in line_keys.values() if k is not None]
    edges = length_edges(lengths, spec.buckets)
    return {ln: bucket_label(None if k is None else int(k), edges) for ln, k in line_keys.items()}


def _sub_votes(votes: Votes, mask: Sequence[bool]) -> Votes | None:
    """The votes of the items the mask keeps (votes kept per item: item_pattern), None when it keeps none."""
    if votes.item_pattern is None:
        return None
    pick = np.flatnonzero(np.asarray(mask, dtype=bool))
    if pick.size == 0:
        return None
    ip = votes.item_pattern[pick]
    used, inverse = np.unique(ip, return_inverse=True)
    return Votes(votes.judges, votes.classes, votes.patterns[used], votes.gold[used],
                 np.bincount(inverse, minlength=len(used)), inverse,
                 None if votes.ids is None else tuple(votes.ids[i] for i in pick),
                 None if votes.clusters is None else tuple(votes.clusters[i] for i in pick))


def record_labels(objs: Sequence[Any], by: str | None, where: str, inner: str | None = None) -> list[str | None]:
    """Each record's slice key (its Mark's dataset, for readers that build marks: promptfoo, inspect-ai, the trace
    stores): SEP and the key (a length bucket from every record's length), None without --by; `inner` a key whose
    object is looked in too (promptfoo's testCase.vars). InputError (naming `where`, the record and the field) for a
    value that is not one value, or when no record has the field. slices.named splits the datasets' names back."""
    if by is None:
        return [None] * len(objs)
    from . import records

    spec = parse_by(by)

    def raw(obj: Any) -> str | int | None:
        if not isinstance(obj, dict):
            return None
        found = record_key(obj, spec)
        if found is None and inner is not None and isinstance(obj.get(inner), dict):
            found = record_key(obj[inner], spec)
        return found

    keys: dict[int, str | int | None] = {}
    for i, o in enumerate(objs):
        try:
            keys[i] = raw(o)
        except records.RecordError as err:
            raise InputError(where, f"--by '{spec.text}': {err.message}", line=i + 1, field=err.field, unit="record") from None
    labels = _labels(keys, spec)
    if labels and all(k == MISSING for k in labels.values()):
        raise InputError(where, f"--by '{spec.text}': no item has this field (an item without it is in '{MISSING}', "
                                "but none has it: a misspelt field?)", field=spec.field)
    return [SEP + labels[i] for i in range(len(objs))]


def mark_slices(marks: Sequence[Mark], recs: Mapping[int, Any], by: str | None, where: str,
                inner: str | None = None) -> list[Mark]:
    """--by for a reader that builds marks: each mark's dataset joined by its item's slice (SEP and the key), read from
    the record (`recs`, by the marks' row) of the item's first mark; the marks as they are without --by."""
    if by is None:
        return list(marks)
    first: dict[tuple[str | None, str], int] = {}
    for m in marks:
        first.setdefault((m.dataset, m.item), m.row)
    items = list(first)
    labels = dict(zip(items, record_labels([recs.get(first[i]) for i in items], by, where, inner)))
    return [replace(m, dataset=(m.dataset or "") + str(labels[(m.dataset, m.item)])) for m in marks]


def named(datasets: list[Dataset], name: str, by: str) -> list[Dataset]:
    """Datasets whose names are a composite `parent SEP key` (a table's dataset column, the marks' dataset), named
    `parent[key]` and carrying their slice, in slice order per parent."""
    out = []
    for ds in datasets:
        parent, _, key = ds.name.partition(SEP)
        parent = parent or name
        out.append(replace(ds, name=slice_name(parent, key), slicing=Slicing(parse_by(by).text, key, parent)))
    first: dict[str, int] = {}
    for i, d in enumerate(out):
        first.setdefault(d.slicing.parent if d.slicing and d.slicing.parent else "", i)
    return sorted(out, key=lambda d: (first[d.slicing.parent if d.slicing and d.slicing.parent else ""],
                                      sort_key(d.slicing.key or "") if d.slicing else (0, 0.0, "")))


def apply(datasets: Sequence[Dataset], by: str | None) -> list[Dataset]:
    """The datasets split by `by` (None: as they are): a dataset whose reader kept raw keys is split here, one that
    a table's reader split already is kept, and one whose format carries no per-item field is an InputError."""
    if by is None:
        return list(datasets)
    spec = parse_by(by)
    out: list[Dataset] = []
    for ds in datasets:
        if ds.slicing is None:
            fmt = ds.reading.source_format if ds.reading is not None else ds.shape
            raise InputError(ds.source, f"--by '{spec.text}': this input ({fmt}) carries no per-item field to slice by; "
                                        "slices are read from JSON Lines records (a dotted field) and table columns",
                             field=spec.field)
        out += split(ds, spec) if ds.slicing.line_keys is not None else [ds]
    _refuse_look_alike_keys(out, spec)
    return out


def _refuse_look_alike_keys(datasets: Sequence[Dataset], spec: SliceSpec) -> None:
    """Two slice keys of one input that read the same (values.seen: "en" and "еn" with a Cyrillic е, a zero-width
    space) are one slice written two ways, which would be two slices shown under one name: an InputError."""
    from .values import hidden, seen, shown

    first: dict[tuple[str | None, str], str] = {}
    for ds in datasets:
        sl = ds.slicing
        if sl is None or sl.key is None:
            continue
        key = (sl.parent, seen(str(sl.key)).strip())
        other = first.setdefault(key, str(sl.key))
        if other != str(sl.key):
            a, b = other, str(sl.key)
            raise InputError(ds.source, f"--by '{spec.text}': slice keys {shown(a)}{hidden(a)} and {shown(b)}{hidden(b)} "
                                        "look alike but are two keys, so one slice's items would be split between two "
                                        "slices; write each key one way", field=spec.field)
