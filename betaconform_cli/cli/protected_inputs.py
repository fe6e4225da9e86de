"""The CLI's half of input protection (the list itself is protect.py, layer 0): which of a command's arguments and
options name files it reads, and the files a folder or glob among them expands to, as its reader expands it. It
lives in cli/ because it knows the commands' parameter names and expands paths with the readers (inputs/,
savedfit.py), which protect.py, below them, cannot import; `options.grouped` calls `protect_inputs` before every
command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# the options that name what a command writes; every other option or argument that names a file is an input, and
# is protected (protect.py): an input option added later is protected without a line here
OUTPUT_OPTIONS = frozenset({"output", "junit", "save", "save_dir", "plot", "cache_dir"})
FIT_INPUTS = frozenset({"fits", "sources"})  # the arguments that read saved fits (a folder of them, a glob)


def protect_inputs(values: dict[str, Any]) -> None:
    """Protect every file a command reads (protect.py): each argument and option value that names a file, and
    the files a folder or glob given as input expands to (as the readers expand it)."""
    from .. import protect

    protect.clear()
    for name, value in values.items():
        if name in OUTPUT_OPTIONS or isinstance(value, bool):
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (str, Path)) and str(item) not in ("", "-"):
                protect.protect("input" if name in ("data", "fits", "labeled", "targets") else f"--{name.replace('_', '-')}",
                                _read_paths(str(item), fits=name in FIT_INPUTS))


def _read_paths(text: str, fits: bool) -> list[str | Path]:
    """The files an input argument names: itself, or what its reader reads of a folder or a glob (saved fits for
    report's arguments and transfer's sources, data files for the rest: `fit data/ --save-dir data/` may replace
    the fits it saved there before)."""
    import glob
    import os

    if os.path.isfile(text) or not (os.path.isdir(text) or glob.has_magic(text)):
        return [text]
    from ..inputs import expand_paths
    from ..savedfit import expand_fits

    try:
        return list((expand_fits if fits else expand_paths)([text]))
    except Exception:  # noqa: BLE001 - a bad input is reported by its read, with its own message
        return []
