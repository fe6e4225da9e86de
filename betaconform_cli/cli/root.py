"""The root command: the typer app every command module registers on (`app`), its group (every error a user can
cause as one line on stderr and exit code 2; warnings as notes), `--version`, and the --help tables' folding.
cli/__init__.py pins BLAS, imports this and the command modules, and holds the console script's `main`."""

from __future__ import annotations

import errno
import re
import sys
import typing
import warnings
from collections.abc import Sequence
from enum import Enum
from typing import Any

import typer

# Unavoidable private import: typer >= 0.29 carries its own click (typer._click) and re-exports none of its usage
# errors, which main() must catch to print them as one line (standalone_mode=False). pyproject pins typer to
# >=0.29,<0.31, where this module exists; the usage-error goldens (tests/golden/cli/bad_*.txt) fail if it moves.
from typer._click import exceptions as usage
from typer.core import TyperOption, _TyperParameter

from ..errors import BetaConformError, InputError, ParameterError, fault_text
from ..version import __version__
from .streams import say

INTERNAL_ERROR = 70  # EX_SOFTWARE: neither a failed gate (1) nor bad input (2)

# core parameter names that an option of another name sets
ALIASES = {"sizes": "r", "precision_method": "precision_method", "embed": "embed", "costs": "cost"}  # judges: --cost


def _flag(command: Any, param: str) -> str:
    """The option that sets a core parameter in this command ('confidence_level' -> '--confidence-level')."""
    if command is not None:
        for name in (param, ALIASES.get(param, param)):
            for p in command.params:
                if p.name == name and isinstance(p, TyperOption):
                    return max(p.opts, key=len)
    return param


def _options_named(command: Any, text: str) -> str:
    """A core message names a parameter as `name`; the CLI shows the option that sets it. Only names that are this
    command's options are replaced: text from the user (a file named "`ks`.jsonl") is shown as it is."""

    def flag(m: re.Match[str]) -> str:
        shown = _flag(command, m.group(1))
        return shown if shown != m.group(1) else m.group()

    return re.sub(r"`([a-z_]+)`", flag, text)


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _fault(exc: BaseException) -> str | None:
    """errors.fault_text, naming standard output when it is what failed (help or --version `> /dev/full`): every
    file this tool writes by name goes through atomic.py, which names it, so a full disk without a file name is an
    inherited descriptor's; so is a write error that flushing stdout again repeats (the text is still buffered)."""
    fault = fault_text(exc)
    if fault is None or not isinstance(exc, OSError) or exc.filename or isinstance(exc, BrokenPipeError):
        return fault
    stdout = exc.errno in _FULL
    try:
        sys.stdout.flush()
    except OSError:
        stdout = True
    if stdout:
        from .streams import discard

        discard(sys.stdout)
        return f"<stdout>: cannot write: {fault}"
    return fault


_WARNED: set[str] = set()


def _note_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None,
                  line: str | None = None) -> None:
    """The one place a warning reaches the user: a line on stderr without the source path and line that Python's
    display adds (`.../distributions.py:35: RuntimeWarning: ...` means nothing to a user), each text once. A
    numeric warning (numpy's RuntimeWarning: a division by zero, an overflow) says what it means for the output."""
    text = " ".join(str(message).split())
    if text in _WARNED:
        return
    _WARNED.add(text)
    if issubclass(category, RuntimeWarning):
        say(f"note: a computation met a numeric edge case ({text}); numbers it affected may show as - or be less precise")
    else:
        say(f"warning: {text}")


class _Group(typer.core.TyperGroup):
    """One line on stderr and exit code 2 for every usage and input error, whoever raises it."""

    def invoke(self, ctx: Any) -> Any:
        try:
            with warnings.catch_warnings():  # the command's warnings as notes; restored after (CliRunner, a library caller)
                warnings.showwarning = _note_warning
                return super().invoke(ctx)
        except BetaConformError as exc:
            command = self.get_command(ctx, ctx.invoked_subcommand or "")
            text = exc.render(lambda p: _flag(command, p)) if isinstance(exc, ParameterError) else str(exc)
            head = text[: len(text) - len(exc.reason)] if isinstance(exc, InputError) and text.endswith(exc.reason) else ""
            say("error: " + head + _options_named(command, text[len(head):]))  # the file's name is shown as it is
        except Exception as exc:  # the net: a fault of the environment that no reader or writer named (a bug re-raised)
            fault = _fault(exc)
            if fault is None:
                raise
            say("error: " + fault)
        raise typer.Exit(2)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        given = list(sys.argv[1:] if args is None else args)
        if not given or "--help" in given:
            _fold_help_tables()
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except usage.NoArgsIsHelpError as exc:
            message = exc.format_message().strip()  # typer has printed the help itself: often nothing more to say
            if message:
                sys.stderr.write(message + "\n")
            code = 2
        except usage.UsageError as exc:
            where = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
            message = " ".join(exc.format_message().split()).replace("Value error, ", "")  # typer's pydantic prefix
            say("error: " + message + where)
            code = 2
        except typer.Abort:  # click's own Ctrl-C (at a prompt)
            code = 130
        except Exception as exc:  # a bug: it keeps its traceback, and an exit code CI cannot take for a failed gate
            fault = _fault(exc)  # unless the environment failed outside a command (`--help > /dev/full`)
            if fault is not None:
                say("error: " + fault)
                code = 2
            else:
                import traceback

                traceback.print_exc()
                say(f"internal error (a bug in betaconform {__version__}; please report it with the traceback above)")
                code = INTERNAL_ERROR
        code = code if isinstance(code, int) else 0
        if code == 130:  # typer turns a KeyboardInterrupt anywhere in parsing or the command into a silent Exit(130)
            say("interrupted")
        if standalone_mode:
            sys.exit(code)
        return code


def _fold_help_tables() -> None:
    """--help on a narrow terminal: typer's option tables cut names and texts with "…" (`--judgme…`); folded onto
    more lines instead, nothing is lost. Only when help is asked for (typer's rich_utils costs import time)."""
    from rich.columns import Columns
    from rich.table import Table
    from rich.text import Text
    from typer import rich_utils

    def fold(renderable: Any) -> None:
        if isinstance(renderable, Text):
            renderable.overflow = "fold"
        elif isinstance(renderable, Columns):  # an option's help: its text, default and so on side by side
            for item in renderable.renderables:
                fold(item)

    if getattr(getattr(rich_utils, "Table", None), "_folds", False):
        return

    class FoldingTable(Table):
        _folds = True

        def add_row(self, *renderables: Any, **kwargs: Any) -> None:
            for r in renderables:
                fold(r)
            super().add_row(*renderables, **kwargs)
            for column in self.columns:
                column.overflow = "fold"

    # Monkeypatches, unavoidable and limited to --help: typer offers no hook for its help tables' overflow nor for the
    # type column of a flag. rich_utils imports Table by name, so that name is replaced (once: see _folds).
    setattr(rich_utils, "Table", FoldingTable)  # noqa: B010

    # a flag takes no value: no "<bool>" type beside --skip-invalid, --chart/--no-chart, --help
    shown_type = TyperOption.display_type_rich
    TyperOption.display_type_rich = lambda self, ctx: None if self.is_flag else shown_type(self, ctx)  # type: ignore[method-assign]


class _AsGiven:
    """typer's coercion of a value that needs none (see _plain_values)."""

    @staticmethod
    def coerce(value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if isinstance(value, tuple) and typing.get_origin(param.type_descriptor.annotation) is list:
            return list(value)  # as typer's adapter for a list gives it
        return value


def _needs_no_coercion(param: Any, value: Any) -> bool:
    """None, the option's own default, or text where text is asked for: a str, a choice written exactly as it is
    offered, a list of str (typer's adapter returns each as it is, or the tuple as a list)."""
    if value is None or value is param.default:
        return True
    info = param.type_descriptor.parameter_info
    ann = param.type_descriptor.annotation
    if info.parser is not None or getattr(info, "click_type", None) is not None:
        return False
    if ann is str:
        return type(value) is str
    if typing.get_origin(ann) is typing.Literal or (isinstance(ann, type) and issubclass(ann, Enum)):
        choices = typing.get_args(ann) or tuple(ann)  # an Enum of plain str: options.Format, the output formats' registry
        return type(value) is str and all(type(c) is str for c in choices) and value in choices
    if typing.get_origin(ann) is list and typing.get_args(ann) == (str,):
        return type(value) in (tuple, list) and all(type(v) is str for v in value)
    return False


def _plain_values() -> None:
    """typer (>= 0.29, as pinned) coerces every option's value through a pydantic TypeAdapter that it builds on first
    use -- the first one imports and warms up pydantic (~50 ms), then ~1 ms each, 41 for `fit` -- for options the
    command line does not give too. Values that need no coercion go through as given: None, the default this package
    declared, and text where text is asked for, which the adapter returns unchanged (_AsGiven gives what it gives).
    Any other value (a number, a path, a choice not written as offered) takes typer's own coercion, and its errors."""
    original = _TyperParameter.process_value

    def process_value(self: Any, ctx: Any, value: Any) -> Any:
        if self._runtime_param is None and _needs_no_coercion(self, value):
            self._runtime_param = _AsGiven
            try:
                return original(self, ctx, value)
            finally:
                self._runtime_param = None
        return original(self, ctx, value)

    # A monkeypatch, like --help's below: typer offers no hook for its coercion. Limited to values that need none.
    _TyperParameter.process_value = process_value  # type: ignore[method-assign]


_plain_values()

app = typer.Typer(
    cls=_Group,
    name="betaconform",
    help="How accurate is your ensemble of LLM judges? Majority-vote error for k = 1..11 judges from a few human labels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        print(f"betaconform {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="show the version and exit"),
) -> None:
    """How accurate is your ensemble of LLM judges? Majority-vote error for k = 1..11 judges from a few labels.

    Exit codes: 0 ok, 1 a --max-error gate failed (or `sample` says continue), 2 bad usage or input, 130 interrupted.
    """
