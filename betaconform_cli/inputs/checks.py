"""The refusals every dataset passes, whatever format it was read from and whichever command reads it: checked once,
here, after the reader (read_inputs, read_dataset), so that JSON Lines, tables, promptfoo and inspect logs, with or
without --labels, give one answer.

- **Gold and verdicts share a vocabulary** (values.vocabulary_problem): an input whose labeled items' verdicts
  never use a class of the gold (PASS/FAIL labels against pass/fail verdicts) is refused, both vocabularies named.
- **Clusters** asked for (`cluster_field`) are carried: a reader that keeps no per-item field is refused; so is
  a `threshold` given to a reader that reads no continuous scores.
- **Labeled items** are needed by every command that estimates from labels; a file of unlabeled items only (the
  pool of `sample --pool`) is read by `doctor` and as a pool, and refused elsewhere with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import InputError
from . import values
from .dataset import Dataset, Votes
from .options import InputOptions


def vocabulary_problem(ds: Dataset) -> str | None:
    """Why `ds`'s verdicts cannot be scored against its gold (None: they can, or it carries no verdicts), or why its
    judges cannot be told apart (`judges_written_alike`)."""
    alike = judges_written_alike(ds.votes.judges if ds.votes is not None else ds.judge_names)
    if alike is not None or ds.votes is None:
        return alike
    from .patterns import vocabularies

    gold, labeled, _ = vocabularies(ds.votes)
    problem = values.vocabulary_problem(gold, labeled)
    if problem is not None:
        return problem
    votes = ds.votes
    apart = values.written_apart(gold, labeled)  # a verdict class beside the gold's ("PASS" among pass/fail)
    if apart:
        v, g = apart[0]
        on = (votes.patterns == votes.classes.index(v)) & (votes.gold >= 0)[:, None]
        who = [votes.judges[j] for j in range(len(votes.judges)) if on[:, j].any()]
        return (f"the verdict {values.shown(v)}{values.hidden(v)} ({int(votes.counts @ on.sum(axis=1))} on labeled items, by "
                f"{values.quote_judges(who)}) is no gold class but means the gold's {values.shown(g)}, so each would "
                f"count as wrong; write the verdicts as the gold is written (the gold's classes: {values.listing(gold)})")
    apart = values.written_apart(labeled, gold)  # a gold class beside the verdicts' ("Pass" on a few items)
    if apart:
        g, v = apart[0]
        n = int(votes.counts[votes.gold == votes.classes.index(g)].sum())
        return (f"the gold label {values.shown(g)}{values.hidden(g)} ({n} items) is no verdict class but means the verdicts' "
                f"{values.shown(v)}, so every verdict on those items would count as wrong; write the gold as the "
                f"verdicts are written (the verdicts' classes: {values.listing(labeled)})")
    scores = values.scores_apart(gold, labeled)
    if scores:
        return (f"the verdicts are scores, not pass/fail: {values.listing(scores)} against the gold's "
                f"{values.listing(gold)}, so each would count as wrong unless it is exactly the gold; make verdicts of "
                "them first (pass where the score is at least your threshold), or compare numbers within a `tolerance`")
    return _judge_apart(votes, gold)


def judges_written_alike(names: Sequence[str]) -> str | None:
    """Why two judge names are one judge written two ways: equal as a reader sees them (values.seen: look-alike
    letters of another script, invisible characters) and without surrounding spaces, yet different ("j1" and
    "j1 ", "j1" and "j1" with a zero-width space). Each would be a judge of its own holding part of one judge's
    verdicts, shown twice under one name. None when every name is distinct to the eye."""
    first: dict[str, str] = {}
    for name in names:
        key = values.seen(str(name)).strip()
        if key in first and first[key] != name:
            a, b = first[key], name
            return (f"judges {values.shown(a)}{values.hidden(a)} and {values.shown(b)}{values.hidden(b)} look alike but "
                    "are two names, so one judge's verdicts would be split between two judges; write each judge's name "
                    "one way")
        first.setdefault(key, name)
    return None


NEVER_GOLD_MIN = 5  # labeled verdicts from which a judge that never gives a gold class is refused (an id read as one)


def _judge_apart(votes: Votes, gold: Sequence[str]) -> str | None:
    """Why one judge's verdicts cannot be scored: on its NEVER_GOLD_MIN or more labeled items it never gives a class
    the gold uses, and either gives a different class on at least half of them (an id column of a wide table not
    named `item_id`, a text column) or gives only classes of its own (no other judge gives them, and they are no
    pass/fail marks beside pass/fail gold: a wide table's `system` or `model_version` column, "gpt-4o" on every row):
    a column that is no judge's read as one, whose every value would count as wrong. A judge always wrong in the
    task's own classes (always "fail" where every gold is "pass") is a judge, and is read. None when no judge is such
    a column."""
    import numpy as np

    lab = votes.gold >= 0
    labeled, weight = votes.patterns[lab], votes.counts[lab]
    fits = np.array([any(c == g or values.agree(c, g) == 1 for g in gold) for c in votes.classes])
    marks = bool(gold) and all(map(values.is_mark, gold))
    for j, judge in enumerate(votes.judges):
        codes = labeled[:, j]
        given, n = codes[codes >= 0], int(weight[codes >= 0].sum())
        mine = [votes.classes[c] for c in sorted(set(given.tolist()))]
        if n < NEVER_GOLD_MIN or fits[given].any():
            continue
        others = set(np.delete(votes.patterns, j, axis=1).ravel().tolist())
        own = not others & set(given.tolist()) and not (marks and all(map(values.is_mark, mine)))
        if 2 * len(mine) >= n or own:
            return (f"judge {values.shown(judge)} gives no gold class on any of its {n} labeled items (its "
                    f"classes: {values.listing(mine)}; the gold's: {values.listing(gold)}), so its every verdict would "
                    "count as wrong: a column that is no judge (an id or a text column) read as one? Name the judges "
                    "(judge_cols=, --judge-cols) and the item column (item_col=, --item-col)")
    return None


def labels_problem(ds: Dataset) -> str | None:
    """Why `ds` cannot be estimated from labels: it has no labeled item (None when it has one)."""
    if ds.table.items > 0:
        return None
    unlabeled = ds.unlabeled_items
    if unlabeled:
        label = next((f"'{f}'" for r, f in (ds.reading.roles if ds.reading else ()) if r == "gold"), None)
        named = "" if label is not None or not ds.reading or not ds.reading.roles else \
            "; a table's gold column of another name (expected, target) is named with `gold_col`"
        return (f"no labeled items: {unlabeled} items have verdicts but no gold label ({label or 'no gold column'}); "
                f"label some, or give the gold in a separate file with `labels`{named}")
    why = "; ".join(f"{s.count} item(s): {s.reason}" for s in (ds.reading.skips if ds.reading else ()))
    return f"no usable items in {ds.name!r} ({why})" if why else f"no items in {ds.name!r}"


def clusters_problem(ds: Dataset, cluster_field: str | None) -> str | None:
    """Why `ds` cannot carry the clusters `cluster_field` asks for: its reader keeps no per-item field (None: it can,
    or none was asked for). JSON Lines read the field from each line; an inspect-ai log's clusters are its epochs."""
    if cluster_field is None or ds.clusters is not None or (ds.votes is not None and ds.votes.clusters is not None):
        return None
    return (f"--cluster-field '{cluster_field}': clusters are read from JSON Lines, long and wide tables (a column), "
            f"trace stores' exports and Ragas results (a field on each record; an inspect-ai log's epochs are clusters "
            f"without it), and this input is {ds.shape}; write one line or row per item with the cluster id in a field")


def threshold_problem(ds: Dataset, threshold: float | None) -> str | None:
    """Why `threshold` does not apply to `ds`: its reader reads no continuous scores (its reading has no threshold
    role); None where it applies or none was given."""
    if threshold is None or any(role == "threshold" for role, _ in (ds.reading.roles if ds.reading else ())):
        return None
    return (f"--threshold {threshold:g} reads continuous scores as pass/fail in Ragas results; this input is {ds.shape} "
            "(a verdict is compared with the gold as it is; --tolerance accepts one within T of it)")


def check_datasets(datasets: Sequence[Dataset], need_labels: bool = True, vocabulary: bool = True,
                   opts: InputOptions | None = None, failed: list[tuple[str, InputError]] | None = None) -> list[Dataset]:
    """The datasets, each checked: InputError (naming its file) for the first that fails a check. `need_labels`
    False: a dataset of unlabeled items only is kept (doctor, sample's pool); one with no item at all is not.
    `vocabulary` False: the caller shows the vocabularies itself (doctor). `opts`: the options every reader must
    have honoured: each dataset carries its items' clusters (`cluster_field`), and a `threshold` was applied.
    `failed` (a batch): each (dataset name, error) is added there and its dataset left out, instead of raised."""
    # a reader's slices (--by): a slice without labels says "too few labels" and a slice whose gold and verdicts share
    # no class is computed as it is, as long as another slice of its input passes (the input as a whole is checked)
    fine = {ds.slicing.parent for ds in datasets if ds.slicing is not None and ds.table.items > 0
            and (not vocabulary or vocabulary_problem(ds) is None)}
    # a file's datasets (a trace store's questions): one without labels is left out, and said, when another has some
    labeled = {ds.source for ds in datasets if ds.slicing is None and ds.table.items > 0}
    out, unlabeled = [], []
    for ds in datasets:
        problem = None if opts is None else clusters_problem(ds, opts.record.cluster_field) \
            or threshold_problem(ds, opts.handling.threshold)
        if problem is None and ds.slicing is not None and ds.slicing.key is not None and ds.slicing.parent in fine:
            out.append(ds)
            continue
        if problem is None:
            problem = labels_problem(ds) if need_labels or not ds.unlabeled_items else None
            if problem is not None and ds.slicing is None and ds.source in labeled:
                unlabeled.append(f"{ds.source}: dataset {ds.name!r} left out: {problem}")
                continue
        if problem is None and vocabulary:
            problem = vocabulary_problem(ds)
        if problem is not None and ds.slicing is None and (n := sum(d.source == ds.source for d in datasets)) > 1:
            problem = f"dataset {ds.name!r} (one of {n} it holds): {problem}"  # which question of a trace store's file
        if problem is None:
            out.append(ds)
        elif failed is None:
            raise InputError(ds.source, problem)
        else:
            failed.append((ds.name, InputError(ds.source, problem)))
    if out and unlabeled:
        out[0] = replace(out[0], left_out=out[0].left_out + tuple(unlabeled))
    return out
