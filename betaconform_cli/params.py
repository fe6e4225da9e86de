"""Saved fits: a versioned YAML file per dataset, written atomically, read with a safe loader.

Schema ``betaconform/fit/1``::

    schema: betaconform/fit/1
    tool_version: 0.1.0
    dataset: name            # file name without extension
    source: path/to/file.jsonl
    command: fit             # or transfer
    items: 100               # labeled items
    judges: 11               # most judges on one item
    histogram: {11: [..]}    # items by number of judges, then by number correct (sufficient statistic)
    method: default
    seed: 0
    settings: {...}          # FitSettings.to_dict()
    model: {...}             # fitted mixture (family, components, log-likelihood, ...)
    error_rates: [{k, estimate, low, high, mixture, binomial, beta_binomial, empirical}, ...]
    embedding: null          # or {model, dimension, texts, mean: [...]}, added by `fit --embed`
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from .errors import ParamsError

SCHEMA = "betaconform/fit/1"
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema": str,
    "dataset": str,
    "items": int,
    "judges": int,
    "histogram": dict,
    "method": str,
    "model": dict,
    "error_rates": list,
}
ROW_KEYS = ("k", "estimate", "low", "high", "binomial", "beta_binomial", "empirical")
MAX_JUDGES = 1000  # as data.MAX_JUDGES (not imported: data pulls in numpy, this module stays light)


def atomic_write(path: str | Path, write: Callable[[BinaryIO], None], suffix: str = ".tmp", sync: bool = True) -> None:
    """Call write(fh) on a temporary file in the target's directory, fsync, then rename it over the target:
    readers see the old file or the new one, never half of one; on any failure the old file is kept."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ParamsError(f"{path}: cannot write: is a directory (give a file name)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=directory)
    except OSError as exc:
        raise ParamsError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, _mode_for(path))  # mkstemp makes 0600; give the file the mode a plain open() would
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # a full disk, a path that became a directory: the old file is kept
            raise ParamsError(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise


def _mode_for(path: Path) -> int:
    """The existing file's permissions, else 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically (see `atomic_write`)."""
    data = text.encode("utf-8")

    def write(fh: BinaryIO) -> None:
        fh.write(data)

    atomic_write(path, write)


def _plain(obj: Any) -> Any:
    """numpy scalars and tuples -> plain Python, so the YAML carries no object tags."""
    if isinstance(obj, dict):
        return {(_plain(k) if not isinstance(k, str) else k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    return obj


def dump_fit(path: str | Path, document: dict[str, Any]) -> None:
    doc = _plain({"schema": SCHEMA, **document})
    validate(doc, str(path))
    atomic_write_text(path, yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120))


def load_fit(path: str | Path) -> dict[str, Any]:
    """Read and validate one saved fit. Python object tags are refused by the safe loader."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParamsError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ParamsError(f"{p}: cannot read: {exc}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.constructor.ConstructorError as exc:
        raise ParamsError(f"{p}: refused: the YAML carries a tag the safe loader does not allow ({exc.problem})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        raise ParamsError(f"{where}: malformed YAML ({getattr(exc, 'problem', exc)})") from None
    validate(doc, str(p))
    for c in doc["model"]["components"]:  # a hand-written prior may leave out each component's mean accuracy
        c.setdefault("mean", c["alpha"] / (c["alpha"] + c["beta"]))
    return doc  # type: ignore[no-any-return]


def validate(doc: Any, where: str) -> None:
    if not isinstance(doc, dict):
        raise ParamsError(f"{where}: not a saved BetaConform fit (top level must be a mapping)")
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise ParamsError(f"{where}: field 'schema': expected {SCHEMA!r}, got {schema!r}")
    for key, typ in REQUIRED.items():
        if key not in doc:
            raise ParamsError(f"{where}: field '{key}': missing")
        if not isinstance(doc[key], typ) or isinstance(doc[key], bool):
            raise ParamsError(f"{where}: field '{key}': expected {getattr(typ, '__name__', typ)}, got {type(doc[key]).__name__}")
    if not doc["histogram"]:
        raise ParamsError(f"{where}: field 'histogram': expected at least one entry")
    for k, counts in doc["histogram"].items():
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_JUDGES or not isinstance(counts, list) or len(counts) != k + 1:
            raise ParamsError(f"{where}: field 'histogram': entry {k!r} must be a number of judges K from 1 to {MAX_JUDGES} listing K + 1 counts")
        if any(not isinstance(c, int) or c < 0 for c in counts):
            raise ParamsError(f"{where}: field 'histogram[{k}]': counts must be non-negative integers")
    comps = doc["model"].get("components")
    if not isinstance(comps, list) or not comps:
        raise ParamsError(f"{where}: field 'model.components': expected a non-empty list")
    for i, c in enumerate(comps):
        for name in ("weight", "alpha", "beta"):
            v = c.get(name) if isinstance(c, dict) else None
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v < math.inf or (name != "weight" and v == 0):
                raise ParamsError(f"{where}: field 'model.components[{i}].{name}': expected a positive number, got {v!r}")
        if "mean" in c and not (_number(c["mean"]) and 0 <= c["mean"] <= 1):
            raise ParamsError(f"{where}: field 'model.components[{i}].mean': expected a number from 0 to 1, got {c['mean']!r}")
    if not sum(c["weight"] for c in comps) > 0:
        raise ParamsError(f"{where}: field 'model.components': the weights must not all be 0")
    for name in ("log_likelihood", "bic"):
        if name in doc["model"] and not _number(doc["model"][name]):
            raise ParamsError(f"{where}: field 'model.{name}': expected a number, got {doc['model'][name]!r}")
    for i, row in enumerate(doc["error_rates"]):
        if not isinstance(row, dict) or any(key not in row for key in ROW_KEYS):
            raise ParamsError(f"{where}: field 'error_rates[{i}]': expected keys {', '.join(ROW_KEYS)}")
        if not isinstance(row["k"], int) or isinstance(row["k"], bool) or row["k"] < 1:
            raise ParamsError(f"{where}: field 'error_rates[{i}].k': expected a positive integer, got {row['k']!r}")
        for key in (*ROW_KEYS[1:], "mixture"):
            if row.get(key) is not None and not (_number(row[key]) and -1e-9 <= row[key] <= 1 + 1e-9):
                raise ParamsError(f"{where}: field 'error_rates[{i}].{key}': expected a fraction from 0 to 1 or null, got {row[key]!r}")
    for name in ("settings", "interval"):
        if doc.get(name) is not None and not isinstance(doc[name], dict):
            raise ParamsError(f"{where}: field '{name}': expected a mapping, got {type(doc[name]).__name__}")
    emb = doc.get("embedding")
    if emb is not None:
        if not isinstance(emb, dict) or not isinstance(emb.get("mean"), list) or not isinstance(emb.get("model"), str):
            raise ParamsError(f"{where}: field 'embedding': expected a mapping with 'model' and 'mean'")
        if emb.get("dimension") != len(emb["mean"]):
            raise ParamsError(f"{where}: field 'embedding.dimension': does not match the length of 'mean'")
        if not emb["mean"] or any(not _number(v) or not math.isfinite(v) for v in emb["mean"]):
            raise ParamsError(f"{where}: field 'embedding.mean': expected a non-empty list of finite numbers")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
