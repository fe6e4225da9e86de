"""BetaConform: majority-vote error of an LLM-judge ensemble for k = 1..11 judges from a few labels."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("betaconform-cli")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
