"""BetaConform: majority-vote error of an LLM-judge ensemble for k = 1..11 judges from a few labels."""

from __future__ import annotations

import importlib
from typing import Any

# A literal (importlib.metadata costs ~20 ms at every start); tests/test_cli.py checks it matches the
# installed package metadata.
__version__ = "0.1.0"

# The library's public names, each imported from its module when first used (PEP 562): `import betaconform_cli`
# (and so the CLI's start-up) loads no numpy, scipy, DuckDB or report layer; tests/test_layers.py checks it.
# An export is an entry here, name -> module under this package ("api" for betaconform_cli.api).
_LAZY: dict[str, str] = {}


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
