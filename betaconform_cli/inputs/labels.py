"""A separate gold file (`--labels FILE`): human labels kept in a spreadsheet, joined to the judges' verdicts by id.

The file is a table (CSV, TSV, JSON Lines, Parquet; read by DuckDB like any table) with an id column and a label
column: the id is `--id-col`/`--item-col`, else `--id-field`'s name, else a common id name (id, item_id, ...); the
label is `--gold-col`, else `--label-field`'s name, else a common gold name (gold, label, human, ...). An empty
label is no label.

The rule, applied by every reader that sees verdicts (JSON Lines `verdicts`, long and wide tables, promptfoo,
inspect) where it knows an item's gold:

- an item's gold is the data's own gold, else the labels file's label for the item's id (as text: 3 and "3" are
  one id), else none (an unlabeled item);
- a labels file that contradicts gold in the data (both given, `values.agree` says they differ) is an error
  naming the labels file's row and the data's line or row;
- an id twice in the labels file with the same label is one label (a long table repeats an item's gold on each of
  its rows: the pool's own long table can be the labels file); with two different labels it is an error naming both
  rows; a label that is a list or an object (JSON Lines, Parquet) is an error naming its row and column;
- ids that match no item are not an error (the labels may cover several inputs, or items left out of this run):
  each input's reading notes how many of the file's labels it used, and doctor shows it.

Correctness-only inputs (judgments 0/1, counts, correctness columns) have no verdicts to score: --labels with them
is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats import kind_by_name
from . import values
from .options import InputOptions

_CACHE: dict[tuple[str, float, int, str | None, str | None, str, str], Labels] = {}


UNMATCHED = "matched no item here"  # a labels note with this is said by every command, not only doctor (skip_note)


@dataclass(frozen=True)
class Labels:
    """id (text) -> (label as read, its row in the labels file); `where` the file, `id_col`/`label_col` its columns."""

    where: str
    id_col: str
    label_col: str
    by_id: dict[str, tuple[Any, int]]

    def get(self, ident: Any) -> tuple[Any, int] | None:
        return None if ident is None else self.by_id.get(str(ident).strip())

    def gold(self, ident: Any, own: Any) -> Any:
        """The gold of an item: its own (when not missing), else this file's label for its id; values.ValueProblem
        when both are given and differ (the message names this file and its row; the caller adds the item's place)."""
        got = self.get(ident)
        if got is None:
            return own
        label, row = got
        if values.is_missing(own):
            return label
        try:
            same = values.agree(own, label)
        except values.ValueProblem:
            same = 0
        if not same:
            raise values.ValueProblem(f"the gold label {values.shown(own)} of item {str(ident)!r} contradicts the labels "
                                      f"file {self.where} (row {row}: {values.shown(label)})")
        return own

    def note(self, used: int) -> str:
        """How many labels matched an item; where some matched none, said so (UNMATCHED: every command says it)."""
        left = len(self.by_id) - used
        return (f"labels file {self.where}: {used} of its {len(self.by_id)} labels matched an item here"
                + (f"; {left} {UNMATCHED} (ids are compared as text without surrounding spaces: 3 and \"3\" are one id, "
                   "\"Q1\" and \"q1\" are two)" if left > 0 else ""))


def load(opts: InputOptions) -> Labels | None:
    """The labels file of `opts` (None without one), read once per process."""
    if opts.labels is None:
        return None
    path = Path(opts.labels)
    try:
        st = path.stat()
    except OSError as exc:
        raise InputError(opts.labels, f"cannot open the labels file: {exc.strerror or exc}") from None
    import stat

    regular = stat.S_ISREG(st.st_mode)
    # a stream (--labels <(...), a pipe) can be read once: it is known by its name alone, and read on first use
    key = (str(path.resolve()) if regular else str(path), st.st_mtime if regular else 0.0, st.st_size if regular else -1,
           opts.table.item_col, opts.table.gold_col, opts.record.id_field, opts.record.label_field)
    if key not in _CACHE:
        _CACHE[key] = _read(path, opts) if regular else _read_stream(path, opts)
    return _CACHE[key]


def _read_stream(path: Path, opts: InputOptions) -> Labels:
    """A labels file given as a stream (a process substitution, a pipe, a device): copied once to a temporary file
    of its kind (by its name, else by its first bytes), which DuckDB reads like any file; errors name the stream."""
    import contextlib
    import os
    import tempfile

    from ..formats import kind_by_content, temp_suffix
    from .detect import copy_stream
    from .paths import open_binary, read_faults

    where = str(path)
    with read_faults(where), open_binary(path) as fh:
        head = bytes(fh.peek(1 << 16)[: 1 << 16])  # type: ignore[attr-defined]
        kind = kind_by_name(path) or kind_by_content(head)
        fd, tmp = tempfile.mkstemp(prefix="betaconform-labels-", suffix=temp_suffix(kind))
        try:
            with os.fdopen(fd, "wb") as out:
                copy_stream(fh, out, path, text=kind != "parquet")
            return _read(Path(tmp), opts, where, kind)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _read(path: Path, opts: InputOptions, where: str | None = None, kind_of: str | None = None) -> Labels:
    from .table_cells import check_cells
    from .table_open import ROLE_NAMES, by_role_key, open_table
    from .table_sql import connect, q

    where = where or str(path)
    kind = {"parquet": "parquet", "tsv": "tsv", "jsonl": "jsonl", "json": "jsonl"}.get(kind_of or kind_by_name(path) or "", "csv")
    con = connect()
    try:
        table = open_table(con, path, kind, where)

        def column(given: str | None, field: str, role: str) -> str:
            if given is not None:
                if given not in table.names:
                    raise InputError(where, f"no column {given!r} (the {role} column of the labels file); columns: "
                                            f"{', '.join(table.names)}")
                return given
            if field in table.names:
                return field
            keyed = by_role_key(table.names)
            found = [c for n in ROLE_NAMES["item" if role == "id" else "gold"] for c in keyed.get(n, [])]
            if len(found) != 1:
                what = "could each be" if found else "found for"
                opt = "--id-col" if role == "id" else "--gold-col"
                raise InputError(where, f"no single {role} column {what} the labels file ({', '.join(found) or 'none'}; "
                                        f"columns: {', '.join(table.names)}); name it with {opt}")
            return found[0]

        id_col = column(opts.table.item_col, opts.record.id_field, "id")
        label_col = column(opts.table.gold_col, opts.record.label_field, "label")
        check_cells(con, table, (id_col, label_col), path, kind)
        rows = con.execute(f"SELECT trim(CAST({q(id_col)} AS VARCHAR)), CAST({q(label_col)} AS VARCHAR), __row FROM "
                           f"{table.numbered} ORDER BY __row").fetchall()
    finally:
        con.close()
    by_id: dict[str, tuple[Any, int]] = {}
    for ident, label, row in rows:
        if ident is None or ident == "":
            if not values.is_missing(label):
                raise InputError(where, "a label without an id", line=int(row), field=id_col, unit="row")
            continue
        if values.is_missing(label):
            continue
        if ident in by_id:  # a long table repeats an item's gold on each of its rows: the same label is one label
            first, at = by_id[ident]
            if not _same(first, label):
                raise InputError(where, f"id {ident!r} has two different labels ({values.shown(first)} at row {at}, "
                                        f"{values.shown(label.strip())} here)", line=int(row), field=label_col, unit="row")
            continue
        by_id[ident] = (label.strip(), int(row))
    return Labels(where, id_col, label_col, by_id)


def _same(a: str, b: str) -> bool:
    try:
        return bool(values.agree(a, b))
    except values.ValueProblem:
        return False
