"""`evaluate`: the paper's experiments on fully labeled data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import P0, P1, ParameterError
from ..inputs import Dataset, InputOptions, Keep, read_inputs
from ..seeds import check_seed
from ._common import Progress, no_clusters, skip_note

if TYPE_CHECKING:
    from ..embeddings import EmbedOptions
    from ..evaluate import EvaluateSettings
    from ..report.evaluate import EvaluationReport


def evaluate(
    arguments: Sequence[str], settings: EvaluateSettings, seed: int = 0, opts: InputOptions = InputOptions(),
    rules: tuple[list[tuple[str, Any]], dict[str, Any]] | None = None, transfer: bool = False,
    embed: EmbedOptions | None = None, per_run: bool = False, progress: Progress | None = None,
) -> EvaluationReport:
    """The paper's experiments on fully labeled data: fixed r, adaptive stopping (`rules`) or leave-one-out
    transfer (`transfer`, embedding the texts with `embed`, default the bundled model). A mode's option given with
    another mode is refused, never dropped."""
    from .. import evaluate as ev
    from ..report.evaluate import EvaluationReport

    check_seed(seed)
    check_modes(rules is not None, transfer, settings.methods != ev.ESTIMATORS, embed is not None)
    if transfer:
        from ..embeddings import require_backend

        require_backend(embed.model if embed is not None else None)
    no_clusters(opts, "evaluate")
    datasets = read_inputs(arguments, opts, Keep.ITEMS if transfer else Keep.COUNTS)
    notes = [line for ds in datasets for line in skip_note(ds)]
    named = [(ds.name, ds.table) for ds in datasets]
    if transfer:
        ev.check_transfer_cells([(ds.name, _group(ds), ds.n_items) for ds in datasets], settings.sizes)  # before any embedding
        result = ev.evaluate_transfer(_transfer_data(datasets, embed), settings, seed, progress)
    elif rules is not None:
        result = ev.evaluate_adaptive(named, rules[0], settings, seed, progress, rules[1])
    else:
        result = ev.evaluate(named, settings, seed, progress)
    return EvaluationReport(result, per_run, tuple(notes))


def check_modes(adaptive: bool, transfer: bool, methods: bool, embed: bool) -> None:
    """Options of one experiment given with another's (each flag: that option was given)."""
    if adaptive and transfer:
        raise ParameterError(("rule", "transfer"), f"{P0} (adaptive mode) and {P1} are separate modes: use one of them")
    if transfer and methods:
        raise ParameterError(("transfer", "methods"), f"{P0} always compares no transfer, transfer, paper transfer and empirical: drop {P1}")
    if embed and not transfer:
        raise ParameterError(("embedding_model", "transfer"), f"{P0} and the cache options need {P1}")


def _group(ds: Dataset) -> str:
    """A dataset's group in leave-one-out transfer: the folder it came from."""
    return str(Path(ds.source).resolve().parent)


def _transfer_data(datasets: Sequence[Dataset], embed: EmbedOptions | None) -> list[Any]:
    """Each dataset's items and text embeddings; its group: the folder it came from."""
    import numpy as np

    from .. import embeddings
    from ..evaluate import TransferData

    embedder = embeddings.embedder_for(embed or embeddings.EmbedOptions())
    out = []
    for ds in datasets:
        items = ds.items or ()
        vectors = np.asarray(embedder.embed(embeddings.item_texts(ds)), dtype=np.float64)
        out.append(TransferData(
            ds.name, _group(ds),
            np.array([it.judges for it in items], dtype=np.int64), np.array([it.correct for it in items], dtype=np.int64),
            vectors, embedder.name,
        ))
    return out

