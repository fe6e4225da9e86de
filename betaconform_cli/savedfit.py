"""Saved fits: a versioned YAML file per dataset, written atomically, read with a safe loader and checked.

Schema ``betaconform/fit/1``::

    schema: betaconform/fit/1
    tool_version: 0.1.0
    dataset: name            # file name without extension
    source: path/to/file.jsonl
    command: fit             # or transfer
    items: 100               # labeled items (the histogram's total)
    judges: 11               # most judges on one item (the histogram's largest K)
    histogram: {11: [..]}    # items by number of judges, then by number correct (sufficient statistic)
    method: default
    seed: 0
    settings: {...}          # FitSettings (fit.settings_document)
    model: {...}             # fitted mixture (family, components, log-likelihood, ...)
    baselines: {binomial: {family, p}, beta_binomial: {...}}   # the Binomial and the single Beta-Binomial (a model)
    error_rates: [{k, estimate, low, high, mixture, binomial, beta_binomial, empirical}, ...]
    unlabeled_items: 900     # items without gold whose verdicts the fit saw (`fit` writes 0 when none)
    unlabeled: {method, reason, used, labeled_items, unlabeled_items, dropped_items, prior, model}
                             # how the estimate used them (votes.VoteEstimate.fit_record); rows then add
                             # labels_only, labels_only_low, labels_only_high
    provenance: {...}        # shipped priors: where the data came from and its licence
    embedding: null          # or {model, dimension, texts, mean: [...]}, added by `fit --embed` (written last)

A file is refused when it is bigger than MAX_YAML_BYTES, not UTF-8 YAML, carries tags or aliases (an alias can
expand a few KB into gigabytes), does not match its types (fit_document.saved_fit_type(): msgspec Structs), holds a value JSON cannot carry exactly (an integer
beyond 2^53, bytes, a set) anywhere under a kept key, or is not self-consistent (weights that do not sum to 1, a
component's mean that is not alpha / (alpha + beta), low > high, an item count that does not match the histogram,
a k listed twice, no error rows, parameters that give no valid distribution). Keys outside the schema are
dropped, never copied into the stable JSON. '-' reads a fit (or a config) from standard input.

A saved fit is parsed and checked once: `load_fit` returns the typed saved fit that `validate` made (the one check,
also run before a write), and `report` and `transfer` read that as it is.
"""

from __future__ import annotations

import errno
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from .atomic import write_text
from .document_types import TypeProblem, check
from .errors import ParamsError
from .fit_document import SAVED_SCHEMA, fields, saved_fit_type
from .formats import MAX_JSON_DEPTH, MAX_K, MAX_YAML_BYTES, is_data_name, is_fit_name, json_depth

SCHEMA = SAVED_SCHEMA
MAX_INT = 2**53  # counts and seeds beyond this are not exact as floats and cannot be real
TOLERANCE = 1e-6
STDIN = "-"


# YAML 1.1 (PyYAML) reads 1e-3 as the string '1e-3' (its floats need a dot): a config's `shift_step: 1e-3` was
# then "expected a number, got '1e-3'". Floats as YAML 1.2 and JSON write them are floats here.
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


def _loader() -> Any:
    return _LOADER


def _make_loader() -> Any:
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader: a 2 MB file in ~0.3 s, not ~30 s

    class Loader(base):  # type: ignore[valid-type,misc]
        pass

    Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))
    return Loader


_LOADER = _make_loader()


def _make_dumper() -> Any:
    """The safe dumper that knows the same floats, so that a name such as '1e5' is written quoted."""

    class Dumper(yaml.SafeDumper):  # type: ignore[misc]
        pass

    Dumper.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))
    return Dumper


_DUMPER = _make_dumper()


def safe_load(text: str, where: str, what: str = "saved fit") -> Any:
    """YAML with the safe loader; aliases and tags refused; a one-line ParamsError for anything malformed."""
    loader = _loader()
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                raise ParamsError(f"{where}: refused: YAML aliases (*{event.anchor}) are not allowed in BetaConform files")
        doc = yaml.load(text, Loader=loader)  # noqa: S506 - the safe loader (C or Python)
    except yaml.constructor.ConstructorError as exc:
        raise ParamsError(f"{where}: refused: the YAML carries a tag the safe loader does not allow ({exc.problem})") from None
    except yaml.YAMLError as exc:
        if "nesting depth" in str(exc):  # the parser's own limit: the same words as MAX_JSON_DEPTH's
            raise ParamsError(f"{where}: refused: nested deeper than {MAX_JSON_DEPTH} levels") from None
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}" if mark is not None else where
        raise ParamsError(f"{at}: malformed YAML in the {what} ({getattr(exc, 'problem', None) or exc})") from None
    except RecursionError:
        raise ParamsError(f"{where}: refused: nested deeper than {MAX_JSON_DEPTH} levels") from None
    if json_depth(doc) > MAX_JSON_DEPTH:  # JSON's rule (formats.load_json): no reader or writer recurses past it
        raise ParamsError(f"{where}: refused: nested deeper than {MAX_JSON_DEPTH} levels")
    return doc


def read_yaml(path: str | Path, what: str = "saved fit") -> Any:
    """A BetaConform YAML file (or '-': standard input), read with a size cap and the safe loader. A config (not a
    saved fit, whose kept keys load_fit checks) holds only values JSON carries: an integer beyond 2^53 is refused
    (`sigmoid_a: 10**300` overflowed float() in the settings)."""
    doc = safe_load(_read_text(path, what), str(path), what)
    return doc if what == "saved fit" else _json_value(doc, str(path), "", what)


def _read_text(path: str | Path, what: str) -> str:
    p = Path(path)
    if str(path) == STDIN:
        import sys

        data = _read_capped(sys.stdin.buffer, str(path), what)
    else:
        if p.is_dir():
            raise ParamsError(f"{p}: is a directory, not a {what}")
        if is_data_name(p) and not p.name.lower().endswith(".json"):  # a JSON document may be a transfer config
            raise ParamsError(f"{p}: this looks like judgment data, not a {what} (YAML); fit it with `betaconform fit {p}`")
        try:
            from .inputs.paths import open_raw  # a FIFO nothing writes to is refused, never waited on forever

            with open_raw(p) as fh:
                data = _read_capped(fh, str(p), what)
        except FileNotFoundError:
            if p.is_symlink():
                raise ParamsError(f"{p}: broken symbolic link (it points to {os.readlink(p)}, which does not exist)") from None
            raise ParamsError(f"{p}: no such file") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ParamsError(f"{p}: symbolic link loop (the link points back to itself)") from None
            raise ParamsError(f"{p}: cannot read the {what}: {exc.strerror or exc}") from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(data) >= 2 and b"\x00" in data[:4]):
        raise ParamsError(f"{path}: cannot read the {what}: not UTF-8 text (it looks like UTF-16: save the file as UTF-8)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ParamsError(f"{path}: cannot read the {what}: not UTF-8 text (save the file as UTF-8)") from None


def _read_capped(fh: Any, where: str, what: str) -> bytes:
    try:
        data: bytes = fh.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise ParamsError(f"{where}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(data) > MAX_YAML_BYTES:
        raise ParamsError(f"{where}: refused: larger than {MAX_YAML_BYTES >> 20} MiB, too big for a {what}")
    return data


_SURROGATE = re.compile("[\ud800-\udfff]")


def _unsurrogate(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def _plain(obj: Any) -> Any:
    """numpy scalars and tuples -> plain Python, so the YAML carries no object tags; a lone surrogate (a file name
    that is not UTF-8) as its escape, which YAML can read back (it refuses a surrogate escape)."""
    if isinstance(obj, str):
        return _SURROGATE.sub(_unsurrogate, obj)
    if isinstance(obj, dict):
        return {(_plain(k) if not isinstance(k, str) else k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    return obj


def check_fit_name(path: str | Path) -> None:
    """A saved fit is YAML: its name ends in .yaml or .yml (`report DIR` finds it; `--save out.csv` would leave YAML
    behind a CSV name)."""
    if not is_fit_name(path):
        from .errors import P0, ParameterError

        raise ParameterError("save", f"{P0} {path}: a saved fit is YAML; give it a .yaml or .yml name")


def render_fit(path: str | Path, document: dict[str, Any]) -> str:
    """A saved fit's YAML text, validated (so that a fit that could not be read back fails before anything is
    written or printed)."""
    doc = _plain({"schema": SCHEMA, **{k: v for k, v in document.items() if k in fields()}})
    validate(doc, str(path))
    return str(yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, default_flow_style=None, width=120))


def dump_fit(path: str | Path, document: dict[str, Any]) -> None:
    write_text(path, render_fit(path, document))


def load_fit(path: str | Path) -> Any:
    """Read one saved fit: the YAML parsed once (safe loader, size cap), its kept keys as JSON values, then typed
    and checked once (`validate`): the typed saved fit (fit_document.saved_fit_type()) that `report` and `transfer`
    read as it is. A component without its mean accuracy (a hand-written prior) gets alpha / (alpha + beta)."""
    doc = read_yaml(path)
    _check_schema(doc, str(path))
    fit = validate({k: _json_value(v, str(path), k) for k, v in doc.items() if k in fields()}, str(path))
    for c in fit.model.components:  # absent, or null (NaN reads as null): the views format it as a number
        if c.mean is None:
            c.mean = c.alpha / (c.alpha + c.beta)
    return fit


def _json_value(v: Any, where: str, at: str, what: str = "saved fit") -> Any:
    """A value under a kept key, as the JSON output will carry it: strings, finite numbers (integers below 2^53),
    booleans, null, lists, mappings with string or integer keys; dates become ISO text. Anything else (bytes, a
    set, a huge integer) is refused, naming where it is."""
    import datetime

    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        if abs(v) >= MAX_INT:
            raise ParamsError(f"{where}: {_field(at)}{str(v)[:40]} is beyond 2^53, too large for a {what}")
        return v
    if isinstance(v, float):  # a fit's NaN is null in JSON; a config's infinity is for its own check to name
        return v if math.isfinite(v) or what != "saved fit" else None
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, list):
        return [_json_value(x, where, f"{at}[{i}]", what) for i, x in enumerate(v)]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)) or (isinstance(k, int) and abs(k) >= MAX_INT):
                raise ParamsError(f"{where}: {_field(at)}key {str(k)[:40]!r} is not a name or a small integer")
            out[k] = _json_value(x, where, f"{at}.{k}" if at else str(k), what)
        return out
    raise ParamsError(f"{where}: {_field(at)}a YAML {type(v).__name__} is not allowed in a {what}")


def _field(at: str) -> str:
    return f"field '{at}': " if at else ""


def _check_schema(doc: Any, where: str) -> None:
    if not isinstance(doc, dict):
        raise ParamsError(f"{where}: not a saved BetaConform fit (top level must be a mapping)")
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise ParamsError(f"{where}: field 'schema': expected {SCHEMA!r}, got {str(schema)[:40]!r}")


def validate(doc: Any, where: str) -> Any:
    """The one check of a saved fit, on read (load_fit) and before a write (render_fit): the schema, the kept keys
    typed by fit_document.saved_fit_type() (msgspec: types and ranges), then consistent (what a type cannot say).
    Returns the typed saved fit; a ParamsError naming the file and the field."""
    _check_schema(doc, where)
    try:
        fit = check({k: v for k, v in doc.items() if k in fields()}, saved_fit_type())
        _histogram(fit)
        _model(fit)
        _rows(fit)
        _others(fit)
    except TypeProblem as exc:
        raise ParamsError(f"{where}: {exc}") from None
    return fit


def _histogram(fit: Any) -> None:
    for k, counts in fit.histogram.items():
        if len(counts) != k + 1:
            raise TypeProblem("histogram", f"entry {k} must list K + 1 = {k + 1} counts (0 to K correct), not {len(counts)}")
    total = sum(sum(c) for c in fit.histogram.values())
    if total == 0:
        raise TypeProblem("histogram", "no items")
    if fit.items != total:
        raise TypeProblem("items", f"{fit.items} does not match the histogram's {total} items")
    top = max(k for k, c in fit.histogram.items() if sum(c))
    if fit.judges != top:
        raise TypeProblem("judges", f"{fit.judges} does not match the histogram's largest number of judges, {top}")


def _model(fit: Any) -> None:
    comps = fit.model.components
    total = sum(c.weight for c in comps)
    if abs(total - 1) > 1e-3:
        raise TypeProblem("model.components", f"the weights sum to {total:.6g}, not 1")
    for i, c in enumerate(comps):
        if c.mean is not None and abs(c.mean - c.alpha / (c.alpha + c.beta)) > 1e-6:
            raise TypeProblem(f"model.components[{i}].mean", f"{c.mean:.6g} is not alpha / (alpha + beta) = "
                              f"{c.alpha / (c.alpha + c.beta):.6g}")
    import numpy as np

    mixture = fit.model.mixture()  # the derived distribution must be a distribution (alpha = beta = 1e308 is not)
    # a subnormal alpha or beta (below ~2.2e-308; 1/alpha overflows) is refused as too small: the exact sums give it
    # a pmf, but no fit yields one and the derivatives of the model are not finite there
    tiny = min(min(c.alpha, c.beta) for c in comps) < np.finfo(float).tiny
    for n in sorted({int(fit.judges), MAX_K}):  # the data's judges, and the most a table or a transfer asks for
        with np.errstate(all="ignore"):
            pmf = mixture.pmf(n)
        if tiny or not (np.all(np.isfinite(pmf)) and np.all(pmf >= -1e-12) and abs(float(pmf.sum()) - 1) < 1e-6):
            raise TypeProblem("model.components", f"alpha and beta give no valid distribution over {n} judges "
                              "(too large or too small to compute)")


def _rows(fit: Any) -> None:
    seen: set[int] = set()
    for i, row in enumerate(fit.error_rates):
        if row.k in seen:
            raise TypeProblem(f"error_rates[{i}].k", f"k = {row.k} is listed twice")
        seen.add(row.k)
        if not row.low - TOLERANCE <= row.estimate <= row.high + TOLERANCE:
            raise TypeProblem(f"error_rates[{i}]", f"the estimate {row.estimate:.6g} lies outside its interval "
                              f"[{row.low:.6g}, {row.high:.6g}]")


def _others(fit: Any) -> None:
    if fit.embedding and fit.embedding.dimension != len(fit.embedding.mean):  # absent (UNSET) or null: no embedding
        raise TypeProblem("embedding.dimension", "does not match the length of 'mean'")
    if fit.unlabeled and not fit.unlabeled_items:
        raise TypeProblem("unlabeled_items", "expected the number of unlabeled items beside field 'unlabeled'")


def expand_fits(arguments: Sequence[str], what: str = "saved fit") -> list[Path]:
    """Saved fits named by files, directories (every *.yaml / *.yml inside) or quoted globs, sorted, each once."""
    import glob

    out: list[Path] = []
    if sum(arg == STDIN for arg in arguments) > 1:
        raise ParamsError(f"{STDIN}: standard input can be read only once; give '-' once")
    from .inputs.paths import as_path  # a file named '-' ('./-') is that file, not standard input

    for arg in arguments:
        p = as_path(arg)
        if arg == STDIN:
            found = [p]
        elif p.is_dir():
            found = sorted(q for q in p.iterdir() if q.is_file() and is_fit_name(q))
            if not found:
                raise ParamsError(f"{arg}: directory holds no {what} (*.yaml or *.yml)")
        elif any(ch in arg for ch in "*?[") and not os.path.lexists(p):
            found = sorted(Path(x) for x in glob.glob(arg) if Path(x).is_file())
            if not found:
                raise ParamsError(f"{arg}: pattern matches no {what} (*.yaml)")
        else:
            found = [p]
        out += [q for q in found if q not in out]
    return out
