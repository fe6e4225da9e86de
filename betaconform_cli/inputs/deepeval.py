"""DeepEval test runs (docs/FORMATS.md#deepeval): the JSON document DeepEval writes for a test run
(`test_run_<time>.json` in DEEPEVAL_RESULTS_FOLDER, `.deepeval/.latest_run_full.json`, or
`.deepeval/.latest_test_run.json`, which holds it under `testRunData`).

Items are its test cases (`testCases[]` and `conversationalTestCases[]`), named by `name` (else `order`); each
metric in a case's `metricsData[]` is a judge, named by the metric's `name`; its verdict is `success` (DeepEval's
own pass/fail: the score against the threshold, in the metric's direction and strict mode), none where the metric
recorded an `error`, no `success` or no `score` (a metric that raised in `deepeval test run`). Gold is a human's pass/fail for the case, which DeepEval does not keep as
such: the field `--label-field` names (default `label`) in the case's `metadata` (DeepEval's `additional_metadata`),
or as a dotted path from the case, else `--labels FILE` joined on the case's name. A gold value is a correctness
value (pass/fail, true/false, 1/0: values.mark); `expectedOutput` is a reference answer, not a verdict on the
output, and is never read as gold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats import load_json
from . import records, values
from .build import Mark, from_marks
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep

CASE_LISTS = ("testCases", "conversationalTestCases")


def beside_run(path: Path, siblings: list[Path]) -> str | None:
    """What DeepEval keeps beside its runs in `.deepeval/` that is no run of its own (formats.InputFormat.beside): the
    metric cache, and `.latest_test_run.json` where `.latest_run_full.json` holds the same run (read once)."""
    if path.name == ".deepeval-cache.json":
        return "DeepEval's metric cache"
    if path.name == ".latest_test_run.json" and any(q.name == ".latest_run_full.json" for q in siblings):
        return "DeepEval's copy of the run in .latest_run_full.json (read there)"
    return None


def _run(doc: Any) -> Any:
    """The test run: the document, or its `testRunData` (how .deepeval/.latest_test_run.json wraps it)."""
    return doc["testRunData"] if isinstance(doc, dict) and isinstance(doc.get("testRunData"), dict) else doc


def _load(src: Source) -> dict[str, Any]:

    from .paths import open_binary

    try:
        with open_binary(src.path) as fh:
            doc = load_json(fh.read(), stdlib=True)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise InputError(src.where, f"not a DeepEval test run ({str(exc).splitlines()[0]})") from None
    doc = _run(doc)
    if not isinstance(doc, dict) or not any(isinstance(doc.get(k), list) for k in CASE_LISTS):
        raise InputError(src.where, "not a DeepEval test run (no testCases list)")
    return doc


def _cases(doc: dict[str, Any], where: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(record number, field prefix, case) for every test case."""
    out: list[tuple[int, str, dict[str, Any]]] = []
    for key in CASE_LISTS:
        for i, case in enumerate(doc.get(key) or []):
            if not isinstance(case, dict):
                raise InputError(where, f"must be an object, got {values.shown(case)}", line=len(out) + 1, field=f"{key}[{i}]",
                                 unit="test case")
            out.append((len(out) + 1, f"{key}[{i}]", case))
    if not out:
        raise InputError(where, "the test run holds no test cases")
    return out


def gold_path(cases: list[tuple[int, str, dict[str, Any]]], opts: InputOptions) -> str:
    """Where a case's gold is: metadata.<field>, else the field as a dotted path from the case."""
    field = opts.record.label_field
    inner = f"metadata.{field}"
    return inner if any(records.has(c, inner) for _, _, c in cases) or not any(records.has(c, field) for _, _, c in cases) else field


def correctness(value: Any, where: str, n: int, field: str) -> int | None:
    """A gold label or verdict as 1/0 (None: missing), by the one value rule; an error naming the case and field."""
    try:
        return values.mark(value)
    except values.ValueProblem as exc:
        raise InputError(where, str(exc), line=n, field=field, unit="test case") from None


def judge_names(metrics: list[dict[str, Any]]) -> list[str]:
    """Each metric's judge name: its `name`, unless the case holds that name more than once (one metric class run with
    several models, e.g. two AnswerRelevancyMetric: both "Answer Relevancy"): then `name [evaluationModel]` where the
    models differ, else `name #k` (its k-th occurrence in the case, in the order the metrics were given)."""
    out: list[str] = []
    for j, m in enumerate(metrics):
        same = [x for x in metrics if x["name"] == m["name"]]
        models = [x.get("evaluationModel") for x in same]
        if len(same) == 1:
            out.append(m["name"])
        elif all(isinstance(x, str) for x in models) and len(set(models)) == len(models):
            out.append(f"{m['name']} [{m['evaluationModel']}]")
        else:
            out.append(f"{m['name']} #{sum(x['name'] == m['name'] for x in metrics[:j]) + 1}")
    return out


def read_deepeval(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The deepeval format's reader (formats.py)."""
    cases = _cases(_load(src), src.where)
    at = gold_path(cases, opts)
    lab = None
    if opts.labels is not None:
        from .labels import load

        lab = load(opts)
    marks: list[Mark] = []
    for n, prefix, case in cases:
        item = str(case.get("name") if case.get("name") is not None else case.get("order", n))
        own = records.get(case, at, None)
        try:
            raw = lab.gold(item, own) if lab is not None else own
        except values.ValueProblem as exc:
            raise InputError(src.where, str(exc), line=n, field=at, unit="test case") from None
        gold = correctness(raw, src.where, n, f"{prefix}.{at}")
        metrics = case.get("metricsData") or []
        if not isinstance(metrics, list):
            raise InputError(src.where, "must be a list", line=n, field=f"{prefix}.metricsData", unit="test case")
        for j, m in enumerate(metrics):
            if not isinstance(m, dict) or not isinstance(m.get("name"), str):
                raise InputError(src.where, "must be an object with a name", line=n, field=f"{prefix}.metricsData[{j}]",
                                 unit="test case")
        names = judge_names(metrics)
        for j, m in enumerate(metrics):
            ok = m.get("success")
            if ok is not None and not isinstance(ok, bool):
                raise InputError(src.where, f"must be true, false or null, got {values.shown(ok)}", line=n,
                                 field=f"{prefix}.metricsData[{j}].success", unit="test case")
            # no verdict: an error recorded, no success, or no score (`deepeval test run` without ignore_errors writes
            # a metric that raised as `success: false` with no score, no reason and no error)
            verdict = None if m.get("error") or ok is None or m.get("score") is None else int(ok)
            marks.append(Mark(item, names[j], None if verdict is None or gold is None else int(verdict == gold), n, None,
                              case.get("input") if isinstance(case.get("input"), str) else None, gold is None,
                              None if verdict is None else str(verdict), None if gold is None else str(gold)))
    if not marks:
        raise InputError(src.where, "no metric results (metricsData) in any test case: nothing plays a judge")
    roles = (("item", "testCases[].name"), ("judges", "testCases[].metricsData[].name"),
             ("verdict", "metricsData[].success"), ("gold", at if lab is None else f"{at}, else {lab.where}"))
    reading = Reading("deepeval", roles, unit="test case")
    if opts.record.by is None:
        return from_marks(marks, src.name, src.where, reading, keep, "test case", with_votes=True)
    from .slices import mark_slices, named  # --by: a field of the test case

    marks = mark_slices(marks, {n: case for n, _, case in cases}, opts.record.by, src.where)
    return named(from_marks(marks, src.name, src.where, reading, keep, "test case", with_votes=True), src.name, opts.record.by)
