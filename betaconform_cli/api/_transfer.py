"""`transfer`: a few labels plus what saved source fits know."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import refuse_inputs
from ..errors import P0, ParameterError
from ..formats import is_fit_name
from ..inputs import InputOptions, Keep, read_inputs
from ..seeds import check_seed
from ..settings import FitSettings
from ._common import SaveTo, no_clusters, skip_note

if TYPE_CHECKING:
    from ..embeddings import EmbedOptions
    from ..report.transfer import TransferReport
    from ..transfer import TransferSettings


def transfer(
    targets: Sequence[str], sources: Sequence[str], tsettings: TransferSettings, settings: FitSettings = FitSettings(),
    seed: int = 0, opts: InputOptions = InputOptions(), embed: EmbedOptions | None = None, save: SaveTo = SaveTo(),
    progress: Callable[[int, int], None] | None = None,
) -> TransferReport:
    """Borrow strength from saved source fits for targets with a few labeled items (with texts)."""
    from .. import embeddings
    from .. import transfer as tr
    from ..report.fit import saved_document
    from ..report.transfer import TransferReport
    from ..savedfit import expand_fits, load_fit

    check_seed(seed)
    embeddings.require_backend(embed.model if embed is not None else None)  # the light install: one line, before any reading
    fits = [t for t in targets if isinstance(t, (str, Path)) and is_fit_name(t)]  # targets may be data in memory
    if fits:
        raise ParameterError("sources", f"{fits[0]}: a target must be judgment data; this looks like a saved fit. Give each "
                                        f"source its own {P0}, or one quoted glob: {P0} 'fits/*.yaml'")
    source_paths = expand_fits(sources, what="source")
    srcs = [tr.Source.from_saved(load_fit(p), str(p)) for p in source_paths]
    no_clusters(opts, "transfer")
    datasets = read_inputs(targets, opts, Keep.ITEMS)
    save_paths = save.targets([ds.name for ds in datasets]) if save else []
    refuse_inputs([("saved fit", p) for p in save_paths], source_paths)  # --save-dir onto a source of the same name
    texts = {ds.name: embeddings.item_texts(ds) for ds in datasets}  # a missing text fails before any model time
    embedder = embeddings.embedder_for(embed or embeddings.EmbedOptions())
    tr.check_embeddings(srcs, embedder.name, embedder.dimension)
    embedder.progress = progress
    vectors = {name: embeddings.mean_embedding(embedder, t) for name, t in texts.items()}
    embedder.progress = None
    results = tr.transfer_many([(ds.table, vectors[ds.name]) for ds in datasets], srcs, tsettings, settings, seed)
    notes: list[str] = []
    docs = []
    saves = []
    for i, (ds, res) in enumerate(zip(datasets, results)):
        notes += skip_note(ds)
        if res.conflict:
            notes.append(f"warning: {ds.name}: prior conflict: {res.conflict_reason}")
        elif res.no_source_applies:
            notes.append(f"{ds.name}: no source applies ({res.no_source_reason}): the estimate is the labels' own")
        doc = res.document(ds.name, ds.source, ds.table, seed, ds.skipped)
        docs.append(doc)
        if save_paths:
            emb = {"model": embedder.name, "dimension": int(embedder.dimension), "texts": len(texts[ds.name]),
                   "mean": [float(x) for x in vectors[ds.name]]}
            saves.append((save_paths[i], saved_document(doc, emb)))
    return TransferReport(tuple(docs), (), False, tuple(notes), tuple(saves))


def transfer_settings(config: Path | None = None, **overrides: Any) -> TransferSettings:
    """The transfer's hyper-parameters: configs/transfer.yaml-like `config` (safe YAML), then `overrides`."""
    from ..savedfit import read_yaml
    from ..transfer import settings_from_config

    cfg = (read_yaml(config, "transfer config") or {}) if config is not None else {}
    return settings_from_config(cfg, str(config or "config"), **overrides)

