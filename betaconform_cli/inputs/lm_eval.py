"""lm-evaluation-harness per-sample logs (docs/FORMATS.md#lm-evaluation-harness): `samples_<task>_<date>.jsonl`,
written by `lm_eval ... --log_samples --output_path DIR` (one file per task and model run).

A line is one doc under one filter pipeline. Items are the docs (`doc_id`); each binary per-sample metric under
each filter is a judge, named as lm-eval names it in its results, `<metric>,<filter>` (`exact_match,strict`,
`acc,none`); its mark is the metric's value for the doc (1/0, true/false), which lm-eval computed against the
doc's `target`: the target is the gold, and the model run is the judge (a judging task: the model says whether an
answer is right, the target holds the human's label). A metric with other values (a BLEU score, a perplexity) is
left out, and the reading says so. Correctness only: the marks are lm-eval's, no verdict classes are kept.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import values
from .build import Mark, from_marks
from .dataset import Dataset, Reading
from .detect import Source
from .options import InputOptions, Keep
from .paths import iter_objects, runs_folder


def _task(name: str, default: str) -> str:
    """The task's name, from lm-eval's file name samples_<task>_<date>.jsonl (else `default`, the file's own name)."""
    name = name.removesuffix(".gz").removesuffix(".jsonl") if name.startswith("samples_") else default
    if name.startswith("samples_"):
        task, _, date = name[len("samples_"):].rpartition("_")
        return task if task and date[:4].isdigit() else name
    return name


def results_beside_samples(path: Path, siblings: list[Path]) -> str | None:
    """lm-eval's aggregated results_<date>.json when the folder holds a samples_<task>_<date>.jsonl of the same run
    (`--output_path` writes both into one folder): skipped there (formats.InputFormat.beside)."""
    name = path.name
    if not (name.startswith("results_") and name.endswith(".json")):
        return None
    date = name[len("results_"):-len(".json")]
    if any(q.name.startswith("samples_") and q.name.endswith(f"_{date}.jsonl") for q in siblings):
        return "lm-evaluation-harness's aggregated results (its samples_*.jsonl beside it are read)"
    return None


def read_lm_eval(src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The lm_eval format's reader (formats.py): one samples file, or a folder of runs (paths.runs_folder)."""
    if src.plan.kind == "json":
        raise InputError(src.where, "lm-evaluation-harness's aggregated results hold no per-sample marks: read its "
                                    "samples_<task>_<date>.jsonl files (written with --log_samples)")
    runs = runs_folder(src.path)
    if runs is not None:
        return _runs(runs, src, opts, keep)
    marks, left, kept = _marks(src.path, src.where, opts)
    return _datasets(marks, left, kept, _task(src.path.name, src.name), src.where, opts, keep, "<metric>,<filter>")


def _runs(files: list[Path], src: Source, opts: InputOptions, keep: Keep) -> list[Dataset]:
    """The runs of several models under lm-eval's --output_path (a folder per run): one dataset per task, each run's
    metrics its judges, `<run folder>: <metric>,<filter>` (`... <date>` where one folder ran the task twice)."""
    by_task: dict[str, list[Path]] = {}
    for f in files:
        by_task.setdefault(_task(f.name, f.name), []).append(f)
    out: list[Dataset] = []
    for task, paths in by_task.items():
        marks: list[Mark] = []
        left: dict[str, str] = {}
        kept: dict[int, Any] = {}
        folders = [p.parent.name for p in paths]
        for p in paths:
            run = p.parent.name + (f" {p.name.rsplit('_', 1)[1].split('.jsonl')[0]}" if folders.count(p.parent.name) > 1 else "")
            # --by: numbered after the last line kept (a blank line is a number skipped, not a line kept)
            got, gone, lines = _marks(p, str(p), opts, offset=max(kept, default=0))
            marks += [dataclasses.replace(m, judge=f"{run}: {m.judge}") for m in got]
            left |= {f"{run}: {k}": f"{run}: {v}" for k, v in gone.items()}
            kept |= lines
        out += _datasets(marks, left, kept, task, src.where, opts, keep, "<run folder>: <metric>,<filter>")
    return out


def _marks(path: Path, where: str, opts: InputOptions, offset: int = 0) -> tuple[list[Mark], dict[str, str], dict[int, Any]]:
    """(each binary metric's mark on each doc, the metrics left out and why, each line by its number for --by) of
    one samples file; `offset`: added to the line numbers kept (files read into one dataset)."""
    marks: list[Mark] = []
    left: dict[str, str] = {}
    kept: dict[int, Any] = {}  # --by: each line, for its item's slice
    for n, line in iter_objects(path, where):
        if opts.record.by is not None:
            kept[n + offset] = line
        doc_id = line.get("doc_id")
        if not isinstance(doc_id, (int, str)) or isinstance(doc_id, bool):
            raise InputError(where, f"must be a document id, got {values.shown(doc_id)}", line=n, field="doc_id")
        names = line.get("metrics")
        if not isinstance(names, list) or not all(isinstance(m, str) for m in names):
            raise InputError(where, "must be a list of metric names", line=n, field="metrics")
        filt = str(line.get("filter") or "none")
        text = _text(line)
        for metric in names:
            judge = f"{metric},{filt}"
            if judge in left:
                continue
            try:
                mark = values.mark(line.get(metric))
            except values.ValueProblem:
                left[judge] = f"{judge}: left out, its values are not correctness (1/0), e.g. {values.shown(line.get(metric))}"
                marks = [m for m in marks if m.judge != judge]
                continue
            marks.append(Mark(str(doc_id), judge, mark, n + offset, None, text))
    return marks, left, kept


def _datasets(marks: list[Mark], left: dict[str, str], kept: dict[int, Any], task: str, where: str, opts: InputOptions,
              keep: Keep, judges: str) -> list[Dataset]:
    if not marks:
        why = "; ".join(left.values()) or "no line names a metric: was it run with --predict_only?"
        raise InputError(where, f"no per-sample metric is a correctness mark: nothing plays a judge ({why})")
    roles = (("item", "doc_id"), ("judges", f"{judges} (metrics, filter)"), ("gold", "target (lm-eval's metric)"))
    reading = Reading("lm_eval", roles, unit="line", notes=tuple(left.values()))
    if opts.record.by is None:
        return from_marks(marks, task, where, reading, keep, "line")
    from .slices import mark_slices, named  # --by: a field of the line (doc.*, a metric, ...)

    return named(from_marks(mark_slices(marks, kept, opts.record.by, where), task, where, reading, keep, "line"), task,
                 opts.record.by)


def _text(line: dict[str, Any]) -> str | None:
    args = line.get("arguments")
    first = args.get("gen_args_0") if isinstance(args, dict) else None
    prompt = first.get("arg_0") if isinstance(first, dict) else None
    return prompt if isinstance(prompt, str) else None
