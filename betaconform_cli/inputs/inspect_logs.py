"""inspect-ai logs: `.eval` archives and `.json` logs (a log directory gives one dataset per log).

Each sample x epoch is an item and each scorer a judge. Gold: the label field (a dotted path into the sample, e.g.
metadata.human), else the sample's target. A scorer is compared with gold when their kinds agree: text values
(C/I, A/B, ...) for equality with text gold; numbers with numeric gold (within the tolerance when one is given).
A scorer of the other kind, or with dict values, is left out and the reading says why. NOANSWER ("N"), an
unscored NaN and a missing score are no verdict.

inspect-ai's own reader (`pip install 'betaconform-cli[inspect]'`) reads every log version and compression; without
it, `.json` logs and deflate-compressed `.eval` archives are read with the standard library, and a zstd-compressed
archive (inspect-ai 0.3.2xx writes them) is an error that says what to install.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats import MAX_JSON_DEPTH, json_depth, load_json
from . import records, values
from .build import Mark, from_marks
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

NOANSWER = "N"


def load_log(path: Path, where: str) -> dict[str, Any]:
    """The log as the `.json` format's dictionary (header and samples)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        return _load_plain(path, where)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - inspect's reader raises many kinds; each is about the user's file
        raise InputError(where, f"not an inspect-ai log ({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__})") from None
    doc: dict[str, Any] = log.model_dump(mode="python", exclude={"samples": {"__all__": {"events", "messages", "attachments", "store"}}})
    if json_depth(doc) > MAX_JSON_DEPTH:  # the rule load_json applies to the plain reader
        raise InputError(where, f"not an inspect-ai log (nested deeper than {MAX_JSON_DEPTH} levels)")
    return doc


def _load_plain(path: Path, where: str) -> dict[str, Any]:
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as z:
                header = load_json(z.read("header.json"), stdlib=True)
                names = [n for n in z.namelist() if n.startswith("samples/") and n.endswith(".json")]
                samples = [load_json(z.read(n), stdlib=True) for n in names]
                order = {str(i): k for k, i in enumerate(((header.get("eval") or {}).get("dataset") or {}).get("sample_ids") or [])}
                header["samples"] = sorted(samples, key=lambda s: (s.get("epoch") or 1, order.get(str(s.get("id")), len(order)), str(s.get("id"))))
        except NotImplementedError:
            raise InputError(where, "this .eval archive is zstd-compressed (inspect-ai 0.3.2xx); reading it needs inspect-ai: "
                                    "pip install 'betaconform-cli[inspect]' (or inspect-ai)") from None
        except (KeyError, ValueError, zipfile.BadZipFile, OSError) as exc:
            raise InputError(where, f"not a readable inspect-ai .eval archive ({exc})") from None
        return dict(header)
    try:
        doc = load_json(path.read_bytes(), stdlib=True)
    except (ValueError, OSError) as exc:
        raise InputError(where, f"not an inspect-ai log ({exc})") from None
    if not isinstance(doc, dict) or "eval" not in doc:
        raise InputError(where, "not an inspect-ai log (no 'eval')")
    return doc


def _missing(v: Any) -> bool:
    """No verdict: inspect's NOANSWER, or a missing value (values.is_missing: null, NaN, NA, ...)."""
    return not isinstance(v, (list, dict)) and (v == NOANSWER or values.is_missing(v))


def _kind(v: Any) -> str:
    if isinstance(v, dict):
        return "dict"
    if isinstance(v, list):
        return "list"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return "number"
    return "text"


def _score_kind(v: Any) -> str:
    """A score value's kind: text and numbers are compared with gold of their kind; booleans, lists and the rest
    are kinds of their own, so a scorer giving them is left out (and `doctor` says why), never compared."""
    if isinstance(v, (str, dict)) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        return _kind(v)
    return {bool: "boolean", list: "list"}.get(type(v), type(v).__name__)


def check_shape(log: dict[str, Any], where: str) -> None:
    """Every part of a log this reader looks into has the type inspect-ai writes, else an InputError naming the
    sample and the field (a hand-edited or foreign log never meets `.get` on a string)."""

    def need(value: Any, field: str, types: tuple[type, ...], n: int | None = None) -> None:
        if value is not None and not isinstance(value, types) or isinstance(value, bool) and bool not in types:
            allowed = " or ".join({dict: "an object", list: "a list", str: "a string", int: "an integer"}[t] for t in types)
            raise InputError(where, f"must be {allowed}, got {records.show(value)}", line=n, field=field,
                             unit="sample" if n is not None else "")

    need(log.get("eval"), "eval", (dict,))
    need((log.get("eval") or {}).get("scorers"), "eval.scorers", (list,))
    need(log.get("samples"), "samples", (list,))
    for n, sample in enumerate(log.get("samples") or [], start=1):
        need(sample, "samples[]", (dict,), n)
        need(sample.get("scores"), "scores", (dict,), n)
        need(sample.get("epoch"), "epoch", (int,), n)
        need(sample.get("id"), "id", (str, int), n)
        for name, score in (sample.get("scores") or {}).items():
            need(score, f"scores.{name}", (dict,), n)


def _text(sample: dict[str, Any]) -> str | None:
    x = sample.get("input")
    if isinstance(x, str):
        return x
    if isinstance(x, list):
        parts = [str(m["content"]) for m in x if isinstance(m, dict) and isinstance(m.get("content"), str)]
        return "\n".join(parts) or None
    return None


def read_inspect(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The inspect format's reader (formats.py): one log, named by its task (standard input: "stdin")."""
    path, name, where = src.path, src.name if src.stdin else None, src.where
    log = load_log(path, where)
    check_shape(log, where)
    samples = log.get("samples") or []
    if not samples:
        raise InputError(where, "the log holds no samples (was it written with samples?)")
    spec = log.get("eval") or {}
    scorers = [str(s["name"]) for s in spec.get("scorers") or [] if isinstance(s, dict) and s.get("name")]
    for s in samples:
        for k in s.get("scores") or {}:
            if k not in scorers:
                scorers.append(k)
    if not scorers:
        raise InputError(where, "no scorers: nothing plays a judge in this log")
    field, golds = _golds(samples, opts, where)
    gold_kind = {_kind(g) for g in golds if g is not None} or {"text"}
    if len(gold_kind) > 1 or "dict" in gold_kind:
        raise InputError(where, f"gold labels of mixed kinds in {field}: give a field holding one label per sample", field=field)
    gk = gold_kind.pop()
    use, notes = _usable_scorers(samples, scorers, gk, field, opts)
    if not use:
        raise InputError(where, f"no scorer can be compared with the gold label in {field}: " + "; ".join(notes))
    epochs = max(int(s.get("epoch") or 1) for s in samples)
    marks = []
    for n, (s, gold) in enumerate(zip(samples, golds), start=1):
        ident = str(s.get("id")) + (f"#{s.get('epoch') or 1}" if epochs > 1 else "")
        for sc in use:
            score = (s.get("scores") or {}).get(sc)
            value = score.get("value") if isinstance(score, dict) else None
            marks.append(Mark(ident, sc, None if _missing(value) or gold is None else _agree(value, gold, opts.handling.tolerance),
                              n, None, _text(s), gold is None, None if _missing(value) else class_text(value),
                              None if gold is None else class_text(gold)))
    reading = Reading("inspect", (("item", "samples[].id#epoch"), ("judges", "samples[].scores"), ("gold", field)),
                      unit="sample", notes=tuple(notes))
    task = str(spec.get("task") or "")
    # a numeric score within a tolerance is not a class: such logs stay labeled-only (as in every format)
    return from_marks(marks, name or task or path.stem, where, reading, keep, "sample", with_votes=opts.handling.tolerance is None)


def _golds(samples: list[Any], opts: InputOptions, where: str) -> tuple[str, list[Any]]:
    """(the gold label's field, each sample's gold: None where missing), from the log or a --labels file."""
    field = opts.record.label_field if opts.record.label_field != "label" else "target"
    golds = [_gold(records.get(s, field, None), where, n, field) for n, s in enumerate(samples, start=1)]
    if opts.labels is not None:  # a separate gold file, joined on the sample id (labels.py)
        from .labels import load

        lab = load(opts)
        try:
            golds = [lab.gold(s.get("id"), g) if lab is not None else g for s, g in zip(samples, golds)]
        except values.ValueProblem as exc:
            raise InputError(where, str(exc), field=field, unit="sample") from None
        golds = [None if _missing(g) else g for g in golds]
    if field != "target" and not any(records.has(s, field) for s in samples):
        meta = samples[0].get("metadata") if isinstance(samples[0], dict) else None
        known = ", ".join(f"metadata.{k}" for k in meta) if isinstance(meta, dict) and meta else "none"
        raise InputError(where, f"no sample has this field (the gold label); the first sample's metadata: {known}", field=field)
    return field, golds


def _usable_scorers(
    samples: list[Any], scorers: list[str], gold_kind: str, field: str, opts: InputOptions
) -> tuple[list[str], list[str]]:
    """(the scorers whose values compare with the gold, a note on each left out or compared with a caveat)."""
    gk = gold_kind
    use: list[str] = []
    notes: list[str] = []
    for sc in scorers:
        kinds = {_score_kind(s["scores"][sc]["value"]) for s in samples
                 if isinstance((s.get("scores") or {}).get(sc), dict) and not _missing(s["scores"][sc].get("value"))}
        if not kinds:
            notes.append(f"{sc}: left out, it gave no verdict")
        elif kinds != {gk}:
            notes.append(f"{sc}: left out, its {'/'.join(sorted(kinds))} values cannot be compared with {gk} gold in {field}")
        elif gk == "number" and opts.handling.tolerance is None and any(
                not float(s["scores"][sc]["value"]).is_integer() for s in samples if sc in (s.get("scores") or {})
                and not _missing(s["scores"][sc].get("value"))):
            notes.append(f"{sc}: compared with {field} for equality; scores need a tolerance to be close enough")
            use.append(sc)
        else:
            use.append(sc)
    return use, notes


def class_text(value: Any) -> str | None:
    from .patterns import class_text as text

    return text(value)


def _gold(value: Any, where: str, n: int, field: str) -> Any:
    """A sample's gold label: one value; a one-element list is its element, an empty list or a missing value is no
    gold, a longer list (several targets) an error naming the sample (give a field with one label)."""
    if isinstance(value, list):
        if len(value) > 1:
            raise InputError(where, f"holds {len(value)} labels ({values.shown(value)}); name a field holding one label "
                                    "per sample with `label_field`", line=n, field=field, unit="sample")
        value = value[0] if value else None
    return None if _missing(value) else value


def _agree(value: Any, gold: Any, tolerance: float | None) -> int:
    """values.agree, the scorer of every format (the kinds were matched before: it cannot fail here)."""
    return values.agree(value, gold, tolerance) or 0
