"""BetaConform: majority-vote error of an LLM-judge ensemble for k = 1..11 judges from a few labels.

The library (docs/API.md): `fit`, `score`, `judges`, `doctor`, `sample`, `drift`, `plan` and `load_fit` take a path, a list of paths, a
pandas or polars DataFrame, an Arrow table or a list of dicts, with the CLI's options by their Python names, and
return the results the CLI prints. They are loaded on first use, so `import betaconform_cli` stays light.
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any  # typing: loaded by every command anyway (typer, numpy)

if TYPE_CHECKING:  # what a type checker sees; at run time __getattr__ below loads them on first use
    from .api._library import doctor as doctor
    from .api._library import drift as drift
    from .api._library import fit as fit
    from .api._library import judges as judges
    from .api._library import load_fit as load_fit
    from .api._library import plan as plan
    from .api._library import sample as sample
    from .api._library import score as score
    from .errors import BetaConformError as BetaConformError
    from .errors import EmbeddingError as EmbeddingError
    from .errors import InputError as InputError
    from .errors import OutputError as OutputError
    from .errors import ParameterError as ParameterError
    from .errors import ParamsError as ParamsError
    from .errors import UsageError as UsageError

from .version import __version__

# the library's functions (api/_library.py) and the errors a caller catches, by the name this package exports, and
# the module each is loaded from on first use (tests/test_imports.py reads this table as the package's imports)
_HOME = {"fit": "api._library", "score": "api._library", "judges": "api._library", "doctor": "api._library",
         "sample": "api._library", "drift": "api._library", "plan": "api._library", "load_fit": "api._library",
         "BetaConformError": "errors", "InputError": "errors",
         "ParameterError": "errors", "UsageError": "errors", "OutputError": "errors", "EmbeddingError": "errors",
         "ParamsError": "errors"}
_LIBRARY = tuple(name for name, home in _HOME.items() if home == "api._library")
__all__ = ["BetaConformError", "EmbeddingError", "InputError", "OutputError", "ParameterError", "ParamsError", "UsageError",
           "__version__", "doctor", "drift", "fit", "judges", "load_fit", "plan", "sample", "score"]


class _Package(types.ModuleType):
    """The package, whose `fit`, `score`, `judges` and `doctor` are the library's functions although modules of
    those names exist (betaconform_cli/fit.py, score/, judges/, doctor.py): importing one of them leaves it in
    sys.modules (`from betaconform_cli.fit import analyse` works as before) without making it the attribute."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LIBRARY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    """What tab completion offers (IPython and Jupyter call dir()): the exports, loaded or not, and the package's
    modules already imported; not the names this file imports for itself."""
    mine = {n for n, v in globals().items() if isinstance(v, types.ModuleType) and v.__name__.startswith(f"{__name__}.")}
    return sorted({*__all__, *mine, "__doc__", "__file__", "__name__", "__path__", "__version__"})


sys.modules[__name__].__class__ = _Package
