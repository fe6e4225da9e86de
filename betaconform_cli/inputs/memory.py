"""Data already in memory, for the library (`betaconform_cli.fit(df)`): a pandas or polars DataFrame, an Arrow
table, or a list of dicts. Each goes through a reader the files use, so that the same rules check every value:

- a DataFrame or Arrow table is registered with DuckDB and read by the table reader (tables.py: the same column
  roles, `*_col` options, SQL and value rules as a CSV or Parquet file); rows are numbered from 1;
- a list of dicts is written as JSON Lines to a private temporary file and read like a `.jsonl` file (records.py:
  judgments, verdicts or a long table by its first record); line N is the N-th record.

pandas, polars and pyarrow are never imported here: an object is known by the module its type comes from.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, ParameterError

FRAME_MODULES = ("pandas", "polars", "pyarrow")
FRAME = "<DataFrame>"  # how messages name an in-memory table
RECORDS = "<records>"  # how messages name a list of dicts
DEFAULT_NAME = "data"  # the dataset's name when the caller gives none


def frame_library(obj: Any) -> str | None:
    """'pandas', 'polars' or 'pyarrow' for a DataFrame or Table of that library (by its type's module), else None."""
    top = type(obj).__module__.split(".")[0]
    if top in FRAME_MODULES and hasattr(type(obj), "columns" if top != "pyarrow" else "schema"):  # the type's: a polars
        # LazyFrame would resolve its schema (and warn) to answer for the object
        return top
    return None


def in_memory(source: Any) -> str | None:
    """'frame' or 'records' for data in memory, 'named' for {name: either}; None for paths (a str, a Path, or a
    sequence of them)."""
    if frame_library(source) is not None:
        return "frame"
    if isinstance(source, dict):
        if source and all(isinstance(k, str) and in_memory(v) in ("frame", "records") for k, v in source.items()):
            return "named"
        raise ParameterError("source", "is a dict: pass a list of dicts (one record per item, as JSON Lines lines), or "
                                       "{name: DataFrame or list of dicts} for named datasets")
    if isinstance(source, (str, bytes, os.PathLike)) or not isinstance(source, Sequence):
        return None
    if source and all(isinstance(r, dict) for r in source):
        return "records"
    return None


def given(source: Any) -> Any:
    """The source as the readers take it: an iterator (a generator of dicts, `map(...)`, `csv.DictReader`) read into
    a list once; a dict of equal-length columns ({"item_id": [...], "judge": [...], ...}, as `df.to_dict("list")`
    gives, a column may be a numpy array or a pandas Series) as its rows; anything else as it is."""
    if isinstance(source, dict) and source and all(isinstance(k, str) for k in source) \
            and all(map(_column, source.values())):
        cols = {k: v.tolist() if hasattr(v, "tolist") else v.to_list() if hasattr(v, "to_list") else list(v)
                for k, v in source.items()}
        if len({len(v) for v in cols.values()}) > 1:
            sizes = ", ".join(f"{k!r}: {len(v)}" for k, v in cols.items())
            raise ParameterError("source", f"is a dict of columns of different lengths ({sizes}): give every column one "
                                           "value per row")
        return [dict(zip(cols, row)) for row in zip(*cols.values())]
    if isinstance(source, dict):  # {name: data}: each dataset's data as above
        return {k: given(v) for k, v in source.items()}
    if isinstance(source, io.IOBase):
        raise ParameterError("source", f"is an open file: pass its path ({getattr(source, 'name', 'the file name')!r}), "
                                       "which every reader opens itself")
    if isinstance(source, Iterator) and frame_library(source) is None:
        return list(source)
    return source


def _column(value: Any) -> bool:
    """A column of a dict of columns: a list or tuple of values (no dict among them: {name: records} names datasets),
    or a one-dimensional numpy array, a pandas or a polars Series."""
    if getattr(value, "ndim", None) == 1 and hasattr(value, "tolist") and frame_library(value) is None:
        return True
    if type(value).__module__.split(".")[0] == "polars" and type(value).__name__ == "Series":
        return True
    return isinstance(value, (list, tuple)) and bool(value) and not any(isinstance(v, dict) for v in value)


def _json_default(value: Any) -> Any:
    """What orjson cannot write by itself, as a DataFrame's records hold it: pandas' missing values (pd.NA, pd.NaT)
    as null, a timestamp or a timedelta as its ISO text, a Decimal as its number. Anything else stays an error."""
    kind = type(value).__name__
    if kind in ("NAType", "NaTType"):
        return None
    if kind == "Decimal":
        return float(value) if value.is_finite() else None
    if hasattr(value, "isoformat") and type(value).__module__.split(".")[0] in ("pandas", "numpy", "datetime"):
        return value.isoformat()
    raise TypeError(f"Type is not JSON serializable: {kind}")


def _bad_field(rec: Any) -> str | None:
    """The key of a record whose value cannot be written as JSON (the first), for the message."""
    import orjson

    for key, value in rec.items() if isinstance(rec, dict) else ():
        try:
            orjson.dumps(value, default=_json_default, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)
        except TypeError:
            return str(key)
    return None


def as_arguments(source: Any) -> list[str]:
    """Paths as the readers take them: one path (str or Path) or a sequence of them -> a list of str."""
    if isinstance(source, (str, os.PathLike)):
        return [_user_path(os.fspath(source))]
    if isinstance(source, bytes) or not isinstance(source, Sequence):
        raise ParameterError("source", f"must be a path, a list of paths, a DataFrame, an Arrow table or a list of dicts; "
                                       f"got {type(source).__name__}")
    out = []
    for i, s in enumerate(source):
        if not isinstance(s, (str, os.PathLike)):
            several = " (several DataFrames: {name: DataFrame, ...}, one dataset each)" if frame_library(s) else ""
            raise ParameterError("source", f"item {i + 1} is a {type(s).__name__}: a list holds paths, or dicts (records), "
                                           f"not both{several}")
        out.append(_user_path(os.fspath(s)))
    if not out:
        raise ParameterError("source", "is empty: give a path, a DataFrame or records")
    return out


def _user_path(path: Any) -> Any:
    """`~/data.csv` as pandas' read_csv reads it (the home folder), where no file is named so; the CLI's shell
    expands it before the tool sees it."""
    if isinstance(path, str) and path.startswith("~") and not os.path.lexists(path):
        return os.path.expanduser(path)
    return path


def read_memory(source: Any, opts: Any, keep: Any, name: str | None = None) -> list[Any]:
    """Every dataset in a DataFrame, Arrow table or list of dicts (`in_memory` says which), or in each value of
    {name: one of those} (its datasets named by the key)."""
    how = in_memory(source)
    if how == "named":
        return [ds for key, value in source.items() for ds in read_memory(value, opts, keep, key)]
    label = name or DEFAULT_NAME
    if how == "frame":
        from .tables import read_frame

        library = frame_library(source) or ""
        if library == "pandas" and getattr(source.columns, "nlevels", 1) > 1:
            raise InputError(FRAME, f"has columns on {source.columns.nlevels} levels (a MultiIndex, as pivot(values=[...]) "
                                    "makes): give one name per column, e.g. df.columns = ['_'.join(map(str, c)) for c in "
                                    "df.columns], or pivot(values='verdict')")
        if library == "pandas" and any(n is not None for n in source.index.names):
            source = source.reset_index()  # a named index (df.set_index("item_id")) is a column, as it was before
        return read_frame(source, library, opts, keep, label, _where(FRAME, name))
    return read_records(source, opts, keep, label, _where(RECORDS, name))


def _where(kind: str, name: str | None) -> str:
    """How messages name data in memory: `<records>`, or `<records old>` for {"old": records}, so that two named
    inputs (drift's old and new runs) are told apart."""
    return kind if name is None else f"{kind[:-1]} {name}>"


def read_records(records: Sequence[dict[str, Any]], opts: Any, keep: Any, name: str, where: str = RECORDS) -> list[Any]:
    """A list of dicts, read as the JSON Lines file it would be (one record per line), from a temporary file that
    only this process can read and that is removed afterwards."""
    import tempfile

    import orjson

    from .dispatch import read_path

    with tempfile.TemporaryDirectory(prefix="betaconform-records-") as tmp:
        path = Path(tmp) / "records.jsonl"
        with open(path, "wb") as fh:
            for i, rec in enumerate(records, start=1):
                try:
                    fh.write(orjson.dumps(rec, default=_json_default,
                                          option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS) + b"\n")
                except TypeError as exc:
                    raise InputError(where, f"cannot be written as JSON ({exc})", line=i, field=_bad_field(rec)) from None
        return read_path(path, opts, keep, name=name, where=where)
