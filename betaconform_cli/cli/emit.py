"""The one output path: any result (report.Report) in any output format (output_formats.py), to stdout or a file.

Data goes to stdout, messages to stderr. Tables never cut a number: a cell wraps between words and no column
gets narrower than its longest word; a table that still does not fit the width is split into several tables that
repeat the first column ("continued"). Output that is not a terminal (a pipe, a file) gets each table's natural
width unless COLUMNS says otherwise. Where the stream cannot encode the box and block characters (LC_ALL=C,
PYTHONIOENCODING=ascii), plain ASCII stands in; other characters it cannot encode are written as escapes (JSON
as \\uXXXX, so it stays the same JSON). Files are always UTF-8.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .. import atomic, protect
from ..errors import P0, P1, ParameterError, UsageError
from ..escape import rich_markup, terminal
from ..formats import resolve
from ..output_formats import output_endings, output_format_of
from ..output_formats import output_format as format_named
from .ci_outputs import STEP_SUMMARY, append_step_summary, write_junit
from .streams import discard, encodable, json_encodable, say

if TYPE_CHECKING:
    from ..report import Report
    from .options import OutputGroup

# The report layer and rich are imported where a report is written (terminal.py holds the rich side), not when
# this module is: the CLI imports it at start for `say`, and `--help` or a usage error needs neither.


def resolve_format(out: OutputGroup) -> str:
    """--format, else -o's ending (output_formats.py's registry: .txt the table), else the table; an ending no
    format has is refused."""
    if out.output is not None:
        atomic.check_target(out.output)
    if out.fmt is not None:
        return out.fmt
    if out.output is None:
        return "table"
    found = output_format_of(out.output)
    if found is not None:
        return found
    suffix = out.output.suffix.lower()
    if not suffix:
        raise ParameterError(("output", "fmt"), f"{P0} {out.output}: cannot tell the format without an extension; add {P1}")
    *most, last = output_endings()
    raise ParameterError(("output", "fmt"), f"{P0} {out.output}: unknown extension {suffix!r} (use {', '.join(most)} or {last}), or add {P1}")


def text_of(report: Report, fmt: str, path: Path | None = None) -> str:
    """The report in an output format, by the writer output_formats.py's registry names for it (cli/writers.py's
    for the built-in ones); `path` is the -o file (None for standard output)."""
    return str(resolve(format_named(fmt).writer)(report, path))


def write_stdout(text: str, fmt: str = "table") -> None:
    """Data on stdout in an encoding it can write: JSON with \\u escapes (the same JSON), other text with ASCII
    stand-ins and backslash escapes."""
    enc = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        sys.stdout.write(json_encodable(text, enc) if format_named(fmt).json else encodable(text, enc))
        sys.stdout.flush()
    except BrokenPipeError:
        discard(sys.stdout)


@dataclass(frozen=True)
class FileOut:
    """A file a command writes beside its report (sample's next items, evaluate's figure): `write(path)` writes it
    (through atomic.py), `message` says so on stderr afterwards."""

    what: str
    path: Path
    write: Callable[[Path], object]
    message: str


def emit(report: Report, out: OutputGroup, fmt: str | None = None, files: Sequence[FileOut] = ()) -> int:
    """The report to stdout (the table also when -o writes a file), -o, saved fits and `files`; the JUnit file and
    the job summary; the exit code (the report's: the JUnit file and the summary never change it).

    What we promise is what happens: every output is checked (distinct, writable, a saved fit that can be read
    back) and written before anything is printed, so a failing output is the only line shown, never a table
    followed by an error; then notes, the data, what was written, and a failed gate. The JUnit file and the job
    summary come last: a failure to write them is a warning."""
    fmt = fmt or resolve_format(out)
    saves = list(getattr(report, "saves", ()))
    targets = [("output", out.output)] + [("saved fit", p) for p, _ in saves] + [(f.what, f.path) for f in files]
    check_outputs(targets + [("JUnit file", out.junit)], out)  # --save-dir's names are known now
    for what, path in targets:
        if path is not None:
            atomic.check_writable(path, what)
    texts: list[tuple[Path, str, str]] = []  # (path, text, message): rendered (and a saved fit validated) first
    if out.output is not None:
        texts.append((out.output, text_of(report, fmt, out.output), f"wrote {out.output}"))
    if saves:
        from ..savedfit import render_fit  # YAML: only when fits are saved

        texts += [(path, render_fit(path, body), f"saved {path}") for path, body in saves]
    for path, text, _ in texts:
        atomic.write_text(path, text)
    for f in files:
        f.write(f.path)
    for note in dict.fromkeys(report.notes):  # an input's note, which each of its slices carries, said once
        say(note)
    if out.output is None and fmt != "table":
        write_stdout(text_of(report, fmt), fmt)
    else:
        from .terminal import show, stdout_console

        show(report.blocks(), stdout_console())
    for message in [m for _, _, m in texts] + [f.message for f in files]:
        say(message)
    for line in report.failures:
        say(line)
    if out.junit is not None:
        write_junit(report, out.junit)
    if out.step_summary:
        append_step_summary(report)
    return report.exit_code


def refuse_overwrites(inputs: Sequence[str], fits: Sequence[str] = (), others: Sequence[Path | None] = (),
                      out: OutputGroup | None = None, **outputs: Path | None) -> None:
    """No output may be one of the inputs (`fit d.jsonl -o d.jsonl` would destroy the data): judgment files
    (`inputs`), saved fits (`fits`: report's arguments, transfer's sources) and other files read (a config) join
    the protected inputs (protect.py; the CLI has protected every input option already); nor may two outputs be
    one file (`-o x.json --save x.json`). `out`: the output group's files (-o, --junit) and the job summary."""
    from ..inputs import expand_paths

    fit_paths: list[Path] = []
    if fits:
        from ..savedfit import expand_fits  # YAML: only where saved fits are read

        fit_paths = _expanded(fits, expand_fits)
    paths = _expanded(inputs, expand_paths) + fit_paths + [p for p in others if p is not None]
    protect.protect("input", paths)
    if out is not None:
        outputs = {"output": out.output, "JUnit file": out.junit, **outputs}
    check_outputs([(name.replace("_", " "), p) for name, p in outputs.items() if p is not None], out)


def check_outputs(named: Sequence[tuple[str, Path | None]], out: OutputGroup | None) -> None:
    """Every output (and the job summary, appended to when it is on) against every protected input and every
    other output, before anything is written."""
    summary = os.environ.get(STEP_SUMMARY) if out is not None and out.step_summary else None
    if summary:
        hit = protect.protected(summary)
        clash = f"the input {hit[1]}{protect.read_by(hit[0])}" if hit else next(
            (f"the {w} {p}" for w, p in named if p is not None and atomic.clobbers(Path(summary), p)), None)
        if clash is not None:
            raise UsageError(f"${STEP_SUMMARY} ({summary}) is {clash}, and the job summary is appended "
                             "there: point it elsewhere, or add --no-step-summary")
    protect.refuse_overwrites(named)
    atomic.refuse_same(named)


def output_format(out: OutputGroup, inputs: Sequence[str], fits: Sequence[str] = (), others: Sequence[Path | None] = (),
                  **outputs: Path | None) -> str:
    """What a command checks before its api call: the output format (resolve_format), then that no output is an
    input or another output (refuse_overwrites)."""
    fmt = resolve_format(out)
    refuse_overwrites(inputs, fits, others, out=out, **outputs)
    return fmt


def _expanded(arguments: Sequence[str], expand: Callable[[list[str]], list[Path]]) -> list[Path]:
    try:
        return list(expand(list(arguments)))
    except Exception:  # noqa: BLE001 - a bad input is reported by the read itself, with its own message
        return []


def write_lines(path: Path, lines: tuple[bytes, ...]) -> None:
    atomic.write_bytes(path, b"".join(lines))


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


_TERMINAL_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")  # what makes rich take a pipe for a terminal


@contextlib.contextmanager
def progress(what: str) -> Iterator[Callable[..., None]]:
    """A transient progress bar on stderr, only when stderr is a terminal (a log gets no stray lines); yields
    update(done, total, label=what)."""
    if not _isatty(sys.stderr) and not any(os.environ.get(v) for v in _TERMINAL_ENV):
        yield lambda done, total, label=what: None  # no terminal, as rich would find: no bar, nothing imported
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .terminal import stderr

    console = stderr()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(what, total=None)

        def update(done: int, total: int, label: str = what) -> None:  # a label holds dataset names: never markup
            bar.update(task, completed=done, total=total, description=rich_markup(terminal(label)))

        yield update
