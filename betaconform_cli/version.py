"""The tool's version, in a module of its own (layer 0): every document names it, and importing it from the package
itself would make each document's module depend on the package's `__init__`, which loads the library (api/).

A literal (importlib.metadata costs ~20 ms at every start); tests/test_cli.py checks it matches the installed
package metadata."""

__version__ = "0.1.0"
