"""File suffixes, format names and limits: the one list of each (issue 20), read by the inputs, the saved fits, the
outputs and the CLI's choices alike.

A file's kind (how its bytes are laid out) comes from its name, compared without regard to case: `DATA.JSONL`,
`a.ndjson` and `b.jsonl.gz` are all JSON Lines, wherever they are named -- alone, in a folder or by a glob.
`INPUT_FORMATS` are the `--from` choices (a reader or a table shape, not a kind); `OUTPUT_FORMATS` are `--format`'s.
"""

from __future__ import annotations

from pathlib import Path

# --- limits -------------------------------------------------------------------------------------------------
MAX_K = 201  # the largest ensemble size k
MAX_JUDGES = 1000  # judges on one item: the (judges, correct) table is (K+1)^2 cells
# the one seed range, for every command and the library: JSON readers (and saved fits) carry integers below 2^53
# exactly, so a larger seed could not be written into the output and read back as the seed that was used
MAX_SEED = 2**53 - 1
MAX_LINE_BYTES = 16 << 20  # one line of a text input: a file without line ends (/dev/zero) stops with an error
MAX_YAML_BYTES = 16 << 20  # a saved fit or a config: a real fit is a few KB (1000 judges: ~1 MB)

# --- inputs -------------------------------------------------------------------------------------------------
# kind -> the name endings that say it (a ".gz" ending: gzip-compressed, decompressed on the fly)
KIND_SUFFIXES: dict[str, tuple[str, ...]] = {
    "parquet": (".parquet",),
    "csv": (".csv", ".csv.gz"),
    "tsv": (".tsv", ".tsv.gz", ".tab", ".tab.gz"),
    "jsonl": (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz"),
    "json": (".json", ".json.gz"),
    "eval": (".eval",),
}
DATA_SUFFIXES = tuple(s for suffixes in KIND_SUFFIXES.values() for s in suffixes)  # what a folder's data files end in
TABLE_SHAPES = ("long", "wide", "counts")
INPUT_FORMATS = ("auto", "jsonl", *TABLE_SHAPES, "promptfoo", "inspect")
DUPLICATES = ("error", "first", "last")

# --- saved fits and outputs ---------------------------------------------------------------------------------
FIT_SUFFIXES = (".yaml", ".yml")
OUTPUT_FORMATS = ("table", "json", "csv", "markdown", "html")
OUTPUT_EXTENSIONS = {".json": "json", ".jsonl": "json", ".ndjson": "json", ".csv": "csv", ".md": "markdown",
                     ".markdown": "markdown", ".txt": "table", ".html": "html", ".htm": "html"}
# name endings a dataset's name leaves out ("runs/a.jsonl.gz" is dataset "a"; so is a saved fit "a.yaml")
_NAME_SUFFIXES = tuple(sorted({*DATA_SUFFIXES, *FIT_SUFFIXES}, key=len, reverse=True))


def kind_by_name(path: str | Path) -> str | None:
    """The kind a file's name says (parquet, csv, tsv, jsonl, json, eval), or None."""
    name = Path(path).name.lower()
    return next((kind for kind, suffixes in KIND_SUFFIXES.items() if name.endswith(suffixes)), None)


def is_data_name(path: str | Path) -> bool:
    """A name a folder's data file has (any kind above)."""
    return kind_by_name(path) is not None


def is_gzip_name(path: str | Path) -> bool:
    """A name that says gzip (`.gz`, any case); readers also know gzip by its first bytes."""
    return str(path).lower().endswith(".gz")


def is_fit_name(path: str | Path) -> bool:
    """A saved fit's name (.yaml or .yml, any case)."""
    return Path(path).suffix.lower() in FIT_SUFFIXES


def stem(path: str | Path) -> str:
    """A file's name without its data or saved-fit ending, any case (`a.csv.gz` -> `a`, `B.NDJSON` -> `B`); a name
    that is only an ending is kept."""
    name = Path(path).name
    for endings in ((".gz",), _NAME_SUFFIXES):  # any gzip file first ("a.gz" is dataset "a"), then the kind
        cut = next((s for s in endings if name.lower().endswith(s) and len(name) > len(s)), "")
        name = name[: len(name) - len(cut)]
    return name


def temp_suffix(kind: str) -> str:
    """The suffix a stream of this kind is copied to a temporary file under (so that DuckDB reads it as such)."""
    return KIND_SUFFIXES[kind][0]
