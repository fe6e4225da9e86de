"""BetaConform: majority-vote error of an LLM-judge ensemble for k = 1..11 judges from a few labels."""

# A literal (importlib.metadata costs ~20 ms at every start); tests/test_cli.py checks it matches the
# installed package metadata.
__version__ = "0.1.0"
