"""The output formats' registry: `--format`'s choices, the `-o` endings that choose each, and its writer.

Adding an output format is one entry (`register_output_format(OutputFormat(...))`, here for a built-in one) and
its writer; `--format`'s choices (read from here each time typer builds a command), `-o`'s detection, its message
for an unknown ending and emit.py's writing all read this registry (docs/ARCHITECTURE.md, "Where to add").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OutputFormat:
    """One output format, `-f NAME`: the endings of an `-o` file that choose it (the first is the one --help and
    messages show) and `writer(report, path) -> text` (`path`: the -o file, None for standard output), named
    "module:function" (imported only when a report is written in it) or the function. `json`: its text is JSON
    (standard output writes a character it cannot encode as a \\u escape, the same JSON; other text gets ASCII
    stand-ins). "table" is also the terminal's view: on standard output rich draws it (cli/terminal.py)."""

    name: str
    writer: str | Callable[..., str]
    extensions: tuple[str, ...] = ()
    json: bool = False


_OUTPUTS: dict[str, OutputFormat] = {}


def register_output_format(fmt: OutputFormat) -> None:
    """Add an output format: `-f NAME` for every command and `-o` with its endings. Its name and endings must be
    new; endings are lower case and start with '.'."""
    taken = ({fmt.name} & set(_OUTPUTS)) | (set(fmt.extensions) & {e for f in _OUTPUTS.values() for e in f.extensions})
    if taken:
        raise ValueError(f"output format {fmt.name!r}: {', '.join(sorted(taken))} already taken")
    if any(not e.startswith(".") or e != e.lower() for e in fmt.extensions):
        raise ValueError(f"output format {fmt.name!r}: endings are lower case and start with '.' ({fmt.extensions})")
    _OUTPUTS[fmt.name] = fmt


def unregister_output_format(name: str) -> None:
    """Remove a format added by register_output_format (KeyError when there is none by that name)."""
    del _OUTPUTS[name]


def output_formats() -> tuple[str, ...]:
    """`--format`'s choices, in the registry's order."""
    return tuple(_OUTPUTS)


def output_format(name: str) -> OutputFormat:
    """A registered format by its name (KeyError when there is none)."""
    return _OUTPUTS[name]


def output_format_of(path: str | Path) -> str | None:
    """The output format an `-o` file's name asks for (its ending, any case), or None."""
    name = Path(path).name.lower()
    return next((f.name for f in _OUTPUTS.values() if name.endswith(f.extensions)), None)


def output_endings() -> tuple[str, ...]:
    """Each output format's first ending (`.txt .json .csv .md .html`), as --help and messages show them."""
    return tuple(f.extensions[0] for f in _OUTPUTS.values() if f.extensions)


for _out in (  # the built-in output formats, `--format`'s choices in this order; their writers are cli/writers.py's
    OutputFormat("table", "betaconform_cli.cli.writers:table_text", (".txt",)),
    OutputFormat("json", "betaconform_cli.cli.writers:json_text", (".json", ".jsonl", ".ndjson"), json=True),
    OutputFormat("csv", "betaconform_cli.cli.writers:csv_text", (".csv",)),
    OutputFormat("markdown", "betaconform_cli.cli.writers:markdown_text", (".md", ".markdown")),
    OutputFormat("html", "betaconform_cli.cli.writers:html_text", (".html", ".htm")),
):
    register_output_format(_out)
