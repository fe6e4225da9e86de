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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats import MAX_JSON_DEPTH, json_depth, load_json
from . import records, values
from .build import Mark, from_marks
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep
from .slices import named, record_labels

NOANSWER = "N"
UNCHANGED = "UNCHANGED"  # a ScoreEdit field the edit left as it was


EVAL_SET_FILES = {"logs.json": "inspect-ai's eval-set index of the logs beside it",
                  "eval-set.json": "inspect-ai's eval-set manifest"}


def beside_logs(path: Path, siblings: list[Path]) -> str | None:
    """What `inspect eval-set` writes into a log directory beside the logs, holding no samples (formats.InputFormat.
    beside): skipped there, so that the directory can be given as it is (before, it was refused on these files)."""
    what = EVAL_SET_FILES.get(path.name)
    logs = any(q.suffix == ".eval" or (q.suffix == ".json" and q.name not in EVAL_SET_FILES) for q in siblings if q != path)
    return what if what is not None and logs else None


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
    if isinstance(v, bool):  # a boolean scorer (Score(value=True)) is compared with boolean gold, as true/false classes
        return "boolean"
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


@dataclass(frozen=True)
class _Judge:
    """One judge of a log: a scorer, or one member of a panel inside a scorer (`member`: its index in the panel's
    votes, `metadata.panel.votes` of inspect's `majority` reducer, or in a `collect` reducer's list value)."""

    name: str
    scorer: str
    member: int | None = None


def _original(score: Any) -> tuple[Any, Any]:
    """(the scorer's own value, its metadata): `history[0]` once a human edited the score (inspect keeps the first
    value there, with no provenance), else the score's. A score a human added (its first entry has provenance) has
    no scorer's value: (None, None)."""
    if not isinstance(score, dict):
        return None, None
    history = score.get("history") or []
    if history and isinstance(history[0], dict):
        first = history[0]
        if first.get("provenance") is not None:
            return None, None
        return first.get("value"), first.get("metadata")
    return score.get("value"), score.get("metadata")


def _edited(score: Any) -> Any:
    """The edited value (a human's: the gold) when an edit with provenance changed the value, else None."""
    if not isinstance(score, dict):
        return None
    edits = [h for h in score.get("history") or [] if isinstance(h, dict) and h.get("provenance") is not None]
    return score.get("value") if any(h.get("value", UNCHANGED) != UNCHANGED for h in edits) else None


def _panel(meta: Any) -> list[Any] | None:
    panel = meta.get("panel") if isinstance(meta, dict) else None
    votes = panel.get("votes") if isinstance(panel, dict) else None
    return votes if isinstance(votes, list) else None


def _judges(samples: list[Any], scorers: list[str]) -> list[_Judge]:
    """Every judge: a scorer is one judge, or as many as the longest panel in its scores: a collect list (every value
    the scorer gave is a list) or majority's metadata.panel.votes (its values are not lists). A scorer mixing lists
    and single values stays one judge, left out for its list values (_usable_judges)."""
    out: list[_Judge] = []
    for sc in scorers:
        given = [_original((s.get("scores") or {}).get(sc)) for s in samples]
        lists = [v for v, _ in given if isinstance(v, list)]
        single = any(not isinstance(v, list) and not _missing(v) for v, _ in given)
        panels = [] if lists else [p for _, m in given if (p := _panel(m)) is not None]
        size = max(map(len, lists if not single else panels), default=0)
        out += [_Judge(f"{sc}[{i}]", sc, i) for i in range(size)] if size else [_Judge(sc, sc)]
    return out


def _verdict(sample: dict[str, Any], judge: _Judge) -> Any:
    value, meta = _original((sample.get("scores") or {}).get(judge.scorer))
    if judge.member is None:
        return value
    votes = value if isinstance(value, list) else _panel(meta)
    return votes[judge.member] if votes is not None and judge.member < len(votes) else None


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
    field, golds, gold_notes = _golds(samples, opts, where)
    gold_kind = {_kind(g) for g in golds if g is not None} or {"text"}
    if len(gold_kind) > 1 or "dict" in gold_kind:
        raise InputError(where, f"gold labels of mixed kinds in {field}: give a field holding one label per sample", field=field)
    gk = gold_kind.pop()
    judges = _judges(samples, scorers)
    columns = {j.name: [_verdict(s, j) for s in samples] for j in judges}
    use, notes = _usable_judges(columns, gk, field, opts)
    notes = gold_notes + notes
    if not use:
        raise InputError(where, f"no scorer can be compared with the gold label in {field}: " + "; ".join(notes))
    notes += _run_notes(log, samples)
    epochs = max(int(s.get("epoch") or 1) for s in samples)
    ids = {str(s.get("id")) for s in samples}
    if epochs > 1:
        notes.append(f"{len(ids)} samples x {epochs} epochs = {len(ids)} clusters of {len(samples)} items: the epochs of "
                     "a sample are one cluster in fit, judges, score and sample (docs/FORMATS.md)")
    marks = []
    sliced = record_labels(samples, opts.record.by, where)  # --by: metadata.FIELD
    for n, (s, gold) in enumerate(zip(samples, golds), start=1):
        ident = str(s.get("id")) + (f"#{s.get('epoch') or 1}" if epochs > 1 else "")
        for j in use:
            value = columns[j][n - 1]
            marks.append(Mark(ident, j, None if _missing(value) or gold is None else _agree(value, gold, opts.handling.tolerance),
                              n, sliced[n - 1], _text(s), gold is None, None if _missing(value) else class_text(value),
                              None if gold is None else class_text(gold), str(s.get("id")) if epochs > 1 else None))
    roles: tuple[tuple[str, str], ...] = (("item", "samples[].id#epoch"), ("judges", "samples[].scores"), ("gold", field))
    if any(_edited(sc) is not None for s in samples for sc in (s.get("scores") or {}).values()):
        roles += (("edited gold", "samples[].scores.*.value (edited: history)"),)
    reading = Reading("inspect", roles, unit="sample", notes=tuple(notes))
    task = str(spec.get("task") or "")
    # a numeric score within a tolerance is not a class: such logs stay labeled-only (as in every format)
    found = from_marks(marks, name or task or path.stem, where, reading, keep, "sample", with_votes=opts.handling.tolerance is None)
    return found if opts.record.by is None else named(found, name or task or path.stem, opts.record.by)


def _first_line(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else error
    return str(message or "").strip().splitlines()[0][:120] if str(message or "").strip() else "no message"


def _run_notes(log: dict[str, Any], samples: list[Any]) -> list[str]:
    """What a user must know about the run behind the log: it did not finish (`status` error, cancelled or started:
    only the samples written so far are read), and samples that ended in an error (inspect keeps the scores given
    before it; a sample left with none is skipped, with the other items without a verdict)."""
    notes: list[str] = []
    status = log.get("status")
    if isinstance(status, str) and status != "success":
        why = f": {_first_line(log.get('error'))}" if log.get("error") else ""
        notes.append(f"the log's status is '{status}' (the eval did not finish{why}): only the {len(samples)} "
                     "sample-epochs it holds are read")
    failed = [s for s in samples if s.get("error")]
    if failed:
        first = failed[0]
        notes.append(f"{len(failed)} sample-epoch(s) ended in an error (first: {first.get('id')}#{first.get('epoch') or 1}: "
                     f"{_first_line(first.get('error'))}): the scores each holds are read, one with none is skipped")
    return notes


def _golds(samples: list[Any], opts: InputOptions, where: str) -> tuple[str, list[Any], list[str]]:
    """(the gold label's field, each sample's gold: None where missing, notes), from the log or a --labels file; a
    human's edit of a score (score.history) is the gold of its sample-epoch, over both (_edits). A `target` that
    shares no class with any score is a reference answer ("Paris", which the scorers grade C/I), not a gold: where a
    labels file or edits give gold, the target is set aside (the samples they leave out are unlabeled); where
    nothing else does, it stays, and the reading is refused ("share no class")."""
    field = opts.record.label_field if opts.record.label_field != "label" else "target"
    raw = [records.get(s, field, None) for s in samples]
    scorer_of, edited = _edits(samples, where)
    notes: list[str] = []
    shown = _reference(raw, samples) if field == "target" and (edited or opts.labels is not None) else None
    golds = [None] * len(raw) if shown is not None else [_gold(g, where, n, field) for n, g in enumerate(raw, start=1)]
    if shown is not None:
        notes.append(f"gold: target ({shown}) shares no class with the scores (reference answers, not verdicts): the "
                     f"gold is the {'labels file and ' if opts.labels is not None else ''}human edits; a sample without one "
                     "is unlabeled")
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
    kinds = {_kind(g) for i, g in enumerate(golds) if i not in edited and g is not None}
    for i, v in edited.items():
        if kinds and _kind(v) not in kinds:
            raise InputError(where, f"a human edit gives {values.shown(v)} ({_kind(v)}) as gold, but the gold in {field} is "
                                    f"{'/'.join(sorted(kinds))}: edit it in the gold's vocabulary", line=i + 1,
                             field=f"scores.{scorer_of[i]}.history", unit="sample")
        golds[i] = v
    return field, golds, notes


def _edits(samples: list[Any], where: str) -> tuple[dict[int, str], dict[int, Any]]:
    """({sample index: the scorer a human edited}, {sample index: the edited value}); edits of one sample that
    disagree are an error naming it."""
    edited: dict[int, Any] = {}
    scorer_of: dict[int, str] = {}
    for n, s in enumerate(samples, start=1):
        edits = {sc: v for sc, score in (s.get("scores") or {}).items() if (v := _edited(score)) is not None and not _missing(v)}
        if len({class_text(v) for v in edits.values()}) > 1:
            shown = ", ".join(f"{sc}: {values.shown(v)}" for sc, v in edits.items())
            raise InputError(where, f"human edits disagree on this sample's gold ({shown})", line=n, field="scores.*.history",
                             unit="sample")
        if edits:
            scorer_of[n - 1], edited[n - 1] = next(iter(edits.items()))
    return scorer_of, edited


def _reference(golds: list[Any], samples: list[Any]) -> str | None:
    """The first few target classes, shown, when the targets share no class with the scores (else None)."""
    flat = [x for g in golds for x in (g if isinstance(g, list) else [g])]  # a target may list several answers
    kept = {class_text(g) for g in flat if not _missing(g) and _kind(g) not in ("dict", "list")}
    if not kept or kept & _score_classes(samples):
        return None
    return ", ".join(f'"{c}"' for c in sorted(kept, key=str)[:3]) + (", ..." if len(kept) > 3 else "")


def _score_classes(samples: list[Any]) -> set[str | None]:
    """Every class a scorer (or a panel member) gave in the log, as class_text."""
    out: set[str | None] = set()
    for s in samples:
        for score in (s.get("scores") or {}).values():
            value, meta = _original(score)
            for v in [*(value if isinstance(value, list) else [value]), *(_panel(meta) or [])]:
                if not isinstance(v, (list, dict)) and not _missing(v):
                    out.add(class_text(v))
    return out


def _usable_judges(columns: dict[str, list[Any]], gold_kind: str, field: str, opts: InputOptions) -> tuple[list[str], list[str]]:
    """(the judges whose values compare with the gold, a note on each left out or compared with a caveat)."""
    gk = gold_kind
    use: list[str] = []
    notes: list[str] = []
    for judge, col in columns.items():
        given = [v for v in col if not _missing(v)]
        kinds = {_score_kind(v) for v in given}
        if not kinds:
            notes.append(f"{judge}: left out, it gave no verdict")
        elif kinds != {gk}:
            notes.append(f"{judge}: left out, its {'/'.join(sorted(kinds))} values cannot be compared with {gk} gold in {field}")
        elif gk == "number" and opts.handling.tolerance is None and any(not float(v).is_integer() for v in given):
            notes.append(f"{judge}: compared with {field} for equality; scores need a tolerance to be close enough")
            use.append(judge)
        else:
            use.append(judge)
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
