"""promptfoo results (`promptfoo eval -o results.json` or `.jsonl`, `promptfoo export eval`).

Each result (a test case, for one prompt and one provider) is an item; each model-graded assertion in
`gradingResult.componentResults` is one judge's verdict (`pass`). A judge is named by its grader provider's label,
else its provider id, else "assertion K" (its position): two judges may share a provider id and differ in label.
A grader error (`metadata.graderError`) is no verdict; assertions that no model grades (`contains`, `javascript`)
and human ratings are not judges. Gold: the label field (a dotted path such as vars.gold; values pass/fail,
true/false, 1/0, yes/no), else the human rating recorded in the file (a thumbs up/down in promptfoo's viewer).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from ..formats import kind_by_name, load_json
from . import records, values
from .build import Mark, from_marks
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep
from .paths import iter_objects, open_binary
from .slices import named, record_labels

MODEL_GRADED = {
    "agent-rubric", "answer-relevance", "context-faithfulness", "context-recall", "context-relevance", "factuality",
    "llm-rubric", "model-graded-closedqa", "model-graded-factuality", "search-rubric", "trajectory:goal-success",
    "g-eval",
}
# comparison assertions: they rank the outputs of a test's providers or prompts (pass: chosen as the best; max-score
# from the other assertions' scores, with no grader of its own), so a pass is no verdict on one output's correctness
COMPARISON = ("select-best", "max-score")
HUMAN = "human"


def yaml_output(path: Path) -> bool:
    """promptfoo's YAML output (`-o results.yaml`) begins `evalId: ...` then `results:`; a saved fit (the other YAML
    this tool is given) never does: read_inputs refuses it with what to write instead."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(512).splitlines()[:2]
    except OSError:
        return False
    return len(head) == 2 and head[0].startswith(b"evalId:") and head[1].rstrip() == b"results:"


def _results(path: Path, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(record number, result) for a results.json (version 3) or a results.jsonl."""
    if kind_by_name(path) in ("csv", "tsv"):
        raise InputError(where, "promptfoo's CSV output holds each prompt's overall Status and Score, not the graders' "
                                "verdicts: write the results as JSON (promptfoo eval -o results.json or results.jsonl, or "
                                "promptfoo export eval EVAL_ID -o results.json)")
    with open_binary(path) as fh:
        head = fh.peek(64)[:64].lstrip()  # type: ignore[attr-defined]
    if head.startswith(b"{") and kind_by_name(path) != "jsonl":
        try:
            with open_binary(path) as fh:
                doc = load_json(fh.read())
        except orjson.JSONDecodeError as exc:
            raise InputError(where, f"not a promptfoo results file: malformed JSON ({exc})") from None
        if isinstance(doc, dict) and "results" in doc and isinstance(doc["results"], dict):
            inner = doc["results"]
            if not isinstance(inner.get("results"), list):
                version = inner.get("version", "?")
                raise InputError(where, f"promptfoo results version {version} without a results list (version 3, promptfoo "
                                        "0.40 and later, is read); export it again with a recent promptfoo")
            for n, r in enumerate(inner["results"], start=1):
                if not isinstance(r, dict):
                    raise InputError(where, f"each result must be an object, got {_kind(r)}", line=n,
                                     field="results.results", unit="record")
                yield n, r
            return
        if isinstance(doc, dict) and "gradingResult" in doc:
            yield 1, doc
            return
        raise InputError(where, "not a promptfoo results file (no 'results')")
    yield from iter_objects(path, where, lambda obj: "each line must be a promptfoo result object")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), f"a {type(value).__name__}")


def check_shape(result: dict[str, Any], where: str, n: int) -> None:
    """Every part of a result this reader looks into has the type promptfoo writes (an object, a list of objects),
    else an InputError naming the record and the field: a hand-edited or foreign file never meets `.get` on a
    string. Absent (null) parts are allowed: each use has its default."""

    def need(value: Any, field: str, *types: type, optional: bool = True) -> None:
        if (value is not None or not optional) and not isinstance(value, types):
            allowed = " or ".join(_kind(t()) for t in types)
            got = _kind(value) + ("" if value is None else f" {records.show(value)}")
            raise InputError(where, f"must be {allowed}, got {got}", line=n, field=field,
                             unit="record")

    for key in ("testCase", "gradingResult", "response", "vars"):
        need(result.get(key), key, dict)
    need(result.get("provider"), "provider", dict, str)
    need(result.get("testIdx"), "testIdx", int, str)
    need((result.get("testCase") or {}).get("vars"), "testCase.vars", dict)
    comps = (result.get("gradingResult") or {}).get("componentResults")
    need(comps, "gradingResult.componentResults", list)
    for k, c in enumerate(comps or []):
        at = f"gradingResult.componentResults[{k}]"
        need(c, at, dict, optional=False)
        need(c.get("assertion"), f"{at}.assertion", dict)
        need(c.get("metadata"), f"{at}.metadata", dict)
        need((c.get("assertion") or {}).get("provider"), f"{at}.assertion.provider", dict, str)


def _provider_name(provider: Any) -> str | None:
    """A provider's label, else its id; a provider object promptfoo serialized as it was (`eval --grader X` writes
    the grader's instance into options.provider: no id, an empty label) by its `modelName`, else its script."""
    if isinstance(provider, dict):
        for key in ("label", "id", "modelName"):
            if isinstance(provider.get(key), str) and provider[key]:
                return str(provider[key])
        if isinstance(provider.get("scriptPath"), str) and provider["scriptPath"]:
            return f"file://{provider['scriptPath']}"
    return provider if isinstance(provider, str) and provider else None


def judge_name(component: dict[str, Any], k: int, result: dict[str, Any] | None = None) -> str:
    """The grader's label, else its id: the assertion's provider, else the test's `options.provider` (promptfoo grades
    an assertion without a provider with it, e.g. `defaultTest.options.provider`); else the position."""
    own = _provider_name((component.get("assertion") or {}).get("provider"))
    options = ((result or {}).get("testCase") or {}).get("options")
    return own or _provider_name(options.get("provider") if isinstance(options, dict) else None) or f"assertion {k}"


def _judge_names(result: dict[str, Any], judged: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """Each model-graded assertion's judge name; a name two assertions of the result share (two rubrics graded by
    one options.provider) gets its position, `NAME (assertion K)`, so they stay two judges."""
    names = [judge_name(c, k, result) for k, c in judged]
    return [f"{x} (assertion {k})" if names.count(x) > 1 else x for x, (k, _) in zip(names, judged)]


def _gold(result: dict[str, Any], field: str | None, where: str, n: int) -> tuple[bool | None, str]:
    """The gold label of a result and where it came from ("" when it has none)."""
    if field is not None:
        value = records.get(result, field, None)
        try:
            gold = values.mark(value)  # pass/fail, true/false, 1/0, yes/no, ...; a missing value: no gold
        except values.ValueProblem as exc:
            raise InputError(where, f"gold label: {exc}", line=n, field=field, unit="record") from None
        return (None, "") if gold is None else (bool(gold), field)
    for k, c in enumerate(_components(result, where, n)):
        if (c.get("assertion") or {}).get("type") == HUMAN:
            rating = _pass(c, where, n, k)
            if rating is not None:
                return bool(rating), "human rating"
    return None, ""


def _labeled(opts: InputOptions, ident: str, gold: bool | None, source: str, where: str, n: int) -> tuple[bool | None, str]:
    from .labels import load

    lab = load(opts)
    got = lab.get(ident) if lab is not None else None
    if lab is None or got is None:
        return gold, source
    try:
        label = values.mark(got[0])
    except values.ValueProblem as exc:
        raise InputError(lab.where, f"label: {exc}", line=got[1], field=lab.label_col, unit="row") from None
    if gold is not None and label is not None and bool(label) != gold:
        raise InputError(where, f"the gold label of item {ident!r} ({'pass' if gold else 'fail'}) contradicts the labels file "
                                f"{lab.where} (row {got[1]}: {values.shown(got[0])})", line=n, field=source, unit="record")
    return (gold, source) if gold is not None or label is None else (bool(label), "labels file")


def _components(result: dict[str, Any], where: str, n: int) -> list[dict[str, Any]]:
    """A result's `gradingResult.componentResults`, each an object (InputError naming the record otherwise)."""
    grading = result.get("gradingResult") or {}
    if not isinstance(grading, dict):
        raise InputError(where, f"must be an object, got {records.show(grading)}", line=n, field="gradingResult", unit="record")
    comps = grading.get("componentResults") or []
    if not isinstance(comps, list):
        raise InputError(where, f"must be a list, got {records.show(comps)}", line=n, field="gradingResult.componentResults",
                         unit="record")
    for k, c in enumerate(comps):
        if not isinstance(c, dict) or not isinstance(c.get("assertion") or {}, dict):
            raise InputError(where, f"must be an assertion result (an object), got {records.show(c)}", line=n,
                             field=f"gradingResult.componentResults[{k}]", unit="record")
    return comps


def _pass(component: dict[str, Any], where: str, n: int, k: int) -> int | None:
    """An assertion's `pass` as 1/0 (values.mark: a boolean, or text such as "false"), None when it has none."""
    try:
        return values.mark(component.get("pass"))
    except values.ValueProblem as exc:
        raise InputError(where, str(exc), line=n, field=f"gradingResult.componentResults[{k}].pass", unit="record") from None


def _text(result: dict[str, Any], skip: str | None) -> str | None:
    vars_ = result.get("vars") or (result.get("testCase") or {}).get("vars") or {}
    parts = [f"{k}: {v}" for k, v in vars_.items() if f"vars.{k}" != skip and isinstance(v, (str, int, float))]
    if parts:
        return "\n".join(parts)
    output = (result.get("response") or {}).get("output")
    return output if isinstance(output, str) else None


def read_promptfoo(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The promptfoo format's reader (formats.py): a results file (JSON, version 3) or JSON Lines of results."""
    path, name, where = src.path, src.name, src.where
    results = list(_results(path, where))
    if not results:
        raise InputError(where, "no promptfoo results")
    for n, r in results:
        check_shape(r, where, n)
    field = opts.record.label_field if records.has(results[0][1], opts.record.label_field) or opts.record.label_field != "label" else None
    idents, clusters, repeat_note = _idents([r for _, r in results])
    marks: list[Mark] = []
    sources: Counter[str] = Counter()
    graded = 0
    compared: Counter[str] = Counter()
    sliced = record_labels([r for _, r in results], opts.record.by, where, inner="testCase")  # --by: vars.FIELD
    for (n, r), part, ident, cluster in zip(results, sliced, idents, clusters):
        gold, source = _gold(r, field, where, n)
        sources[source or "none"] += 1
        if opts.labels is not None:  # a separate gold file, joined on the item id shown (labels.py)
            gold, source = _labeled(opts, cluster or ident, gold, source, where, n)  # repeats share the test's label
        comps = _components(r, where, n)
        types = [str((c.get("assertion") or {}).get("type", "")).removeprefix("not-") for c in comps]
        judged = [(k, c) for k, (c, t) in enumerate(zip(comps, types, strict=True)) if t in MODEL_GRADED]
        compared.update(t for t in types if t in COMPARISON)
        graded += bool(judged)
        text = _text(r, field)
        if not judged:
            marks.append(Mark(ident, "", None, n, part, text, gold is None))
        for (k, c), judge in zip(judged, _judge_names(r, judged)):
            verdict = None if (c.get("metadata") or {}).get("graderError") else _pass(c, where, n, k)
            mark = None if verdict is None or gold is None else int(bool(verdict) == gold)
            marks.append(Mark(ident, judge, mark, n, part, text, gold is None,
                              None if verdict is None else str(int(verdict)), None if gold is None else str(int(gold)), cluster))
    left = (f"left out: {', '.join(f'{n} {t}' for t, n in compared.items())} assertion(s): they rank the outputs of the "
            "providers or prompts (a pass: chosen as the best), no verdict on one output's correctness",) if compared else ()
    if not graded:
        raise InputError(where, "no model-graded assertions (llm-rubric, model-graded-closedqa, factuality, ...): nothing "
                                "plays a judge in this promptfoo file" + (f" ({left[0]})" if left else ""))
    if sum(v for k, v in sources.items() if k != "none") == 0:
        if field is not None and not any(records.has(r, field) for _, r in results):
            vars_ = results[0][1].get("vars") or ((results[0][1].get("testCase") or {}).get("vars")) or {}
            known = ", ".join(f"vars.{k}" for k in vars_) if isinstance(vars_, dict) and vars_ else "none"
            raise InputError(where, f"no result has this field (the gold label); the first result's vars: {known}",
                             field=field)
        raise InputError(where, "no gold label: name it with `label_field` (e.g. vars.gold, values pass/fail), "
                                "or rate results in promptfoo's viewer")
    used = ", ".join(f"{k} ({v})" for k, v in sources.items() if k != "none")
    reading = Reading("promptfoo", (("item", "testCase.description"), ("judges", "gradingResult.componentResults"),
                                    ("gold", used)), unit="record", notes=repeat_note + left)
    datasets = from_marks((m for m in marks if m.judge), name, where, reading, keep, "record", with_votes=True)
    blank = sum(1 for m in marks if not m.judge)
    if blank:
        from .dataset import Skip

        datasets = [_with_skip(d, Skip("no model-graded verdict (the test errored)", blank)) for d in datasets]
    return datasets if opts.record.by is None else named(datasets, name, opts.record.by)


def _provider(result: dict[str, Any]) -> str:
    provider = result.get("provider") or ""
    return str(provider.get("label") or provider.get("id") or "") if isinstance(provider, dict) else str(provider)


def _prompt(result: dict[str, Any]) -> str:
    """The prompt's label (the user's, else promptfoo's: the prompt's template), else `prompt promptIdx`."""
    prompt = result.get("prompt")
    label = prompt.get("label") if isinstance(prompt, dict) else None
    return label if isinstance(label, str) and label else f"prompt {result.get('promptIdx')}"


def _idents(results: list[dict[str, Any]]) -> tuple[list[str], list[str | None], tuple[str, ...]]:
    """(each result's item id, its cluster, a note). An item is a test case (its description, else `test testIdx` of
    its first result; a description that several different tests share gets ` (test testIdx)`) for one prompt and one
    provider: `[provider]` and `[prompt]` are added where the file holds
    several. `--repeat N` writes a test N times under new testIdx values with the same test case (description, vars,
    assertions, options): those results are N items `#1`..`#N` of one cluster (correlated, as an inspect-ai sample's
    epochs), never one item given twice."""
    several_providers = len({_provider(r) for r in results}) > 1
    # promptIdx numbers a (prompt, provider) column of the eval, not a prompt: a prompt is its promptId (else label)
    several_prompts = len({r.get("promptId") or _prompt(r) for r in results}) > 1
    first: dict[tuple[str, bytes], tuple[str, Any]] = {}
    keys = []
    for n, r in enumerate(results):
        case = r.get("testCase") or {}
        suffix = (f" [{_provider(r)}]" if several_providers else "") + (f" [{_prompt(r)}]" if several_prompts else "")
        key = (suffix, orjson.dumps(case, option=orjson.OPT_SORT_KEYS, default=str))  # repeats share their test case
        keys.append(key)
        first.setdefault(key, (str(case.get("description") or f"test {r.get('testIdx', n)}"), r.get("testIdx", n)))
    # two different tests of one description (vars apart) are two items: each then named by its testIdx as well
    named = Counter(text + suffix for (suffix, _), (text, _) in first.items())
    base_of = {key: text + (f" (test {idx})" if named[text + key[0]] > 1 else "") + key[0]
               for key, (text, idx) in first.items()}
    bases = [base_of[key] for key in keys]
    per_key = Counter(keys)
    if all(v == 1 for v in per_key.values()):
        return bases, [None] * len(results), ()
    seen: Counter[tuple[str, bytes]] = Counter()
    idents: list[str] = []
    for base, key in zip(bases, keys):
        seen[key] += 1
        idents.append(f"{base} #{seen[key]}" if per_key[key] > 1 else base)
    clusters: list[str | None] = list(bases)
    note = (f"{len(per_key)} test cases (per prompt and provider) x up to {max(per_key.values())} repeats (promptfoo --repeat) = {len(per_key)} clusters of "
            f"{len(results)} items: the repeats of a test are one cluster in fit, judges, score and sample (docs/FORMATS.md)",)
    return idents, clusters, note


def _with_skip(d: Dataset, skip: Any) -> Dataset:
    from dataclasses import replace

    reading = replace(d.reading, skips=d.reading.skips + (skip,)) if d.reading else None
    return replace(d, skipped=d.skipped + skip.count, reading=reading)
