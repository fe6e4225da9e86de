"""What a CI job gets beside the report: the JUnit file (one test case per dataset and gate) and GitHub's job
summary ($GITHUB_STEP_SUMMARY: the failed gates first, then the report as Markdown, within GitHub's 1 MiB). Both are
written after the report and never change the exit code: a failure to write them is a warning on stderr.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from .. import atomic
from ..errors import BetaConformError
from ..escape import markdown
from .streams import say

if TYPE_CHECKING:
    from ..report import Report, Verdict


def command_name() -> str:
    """The command being run ('fit'), from the command line's context; 'betaconform' outside one."""
    # unavoidable private import: typer's own click (typer._click, typer >= 0.29 as pinned) holds the running context,
    # and typer re-exports no way to reach it
    from typer._click.globals import get_current_context
    ctx = get_current_context(silent=True)
    return str(ctx.info_name) if ctx is not None and ctx.info_name else "betaconform"


def verdict_line(v: Verdict) -> str:
    """'qa_judges (max-error 20% at k=5): upper interval bound ... (limit 20.00%)'."""
    head = f"{v.dataset} ({v.gate})" if v.gate else v.dataset
    reason = v.reason[len(v.dataset) + 2:] if v.reason.startswith(f"{v.dataset}: ") else v.reason
    return f"{head}: {reason}" if reason else head


def write_junit(report: Report, path: Path) -> None:
    """One JUnit test case per dataset and gate, atomically; a file that cannot be written is one line on
    stderr, and the exit code stays the verdict's."""
    from ..report import verdicts
    from ..report.junit import to_junit

    try:
        atomic.write_text(path, to_junit(command_name(), verdicts(report)))
    except (OSError, BetaConformError) as exc:
        say(f"warning: could not write the JUnit file {path}: {_reason(exc)}")
        return
    say(f"wrote {path}")


STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


SUMMARY_LIMIT = (1 << 20) - 1024  # GitHub drops a job summary over 1 MiB (the whole step's, gates included): 1 KiB spare
SUMMARY_CUT = ("the rest of this report is left out: GitHub shows at most 1 MiB of a job summary; write the whole "
               "report with -o report.md")


def step_summary_text(report: Report, room: int | None = None) -> str:
    """The job summary's Markdown: the command, each failed gate first with its reason, then the report; within
    `room` bytes when given (the report cut first, with a note: render.cap_markdown)."""
    from ..report import verdicts
    from ..report.render import cap_markdown, to_markdown

    lines = [f"## betaconform {command_name()}", ""]
    found = verdicts(report)
    failed = [v for v in found if not v.passed]
    for v in failed:
        lines.append(f"> **:x: {'gate failed' if v.gate else 'failed'}:** {markdown(verdict_line(v))}")
        lines.append(">")
    if failed:
        lines[-1] = ""
    passed = [v for v in found if v.passed and v.gate]
    lines += [f"- :white_check_mark: gate passed: {markdown(verdict_line(v))}" for v in passed]
    if passed:
        lines.append("")
    parts = ["\n".join(lines) + "\n", to_markdown(report.blocks(markdown=True)) + "\n"]
    return "".join(parts) if room is None else cap_markdown(parts, room, SUMMARY_CUT)


def _size(path: str) -> int:
    """A file's size now (0 when it does not exist yet, or is no regular file); stat never blocks on a FIFO."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def append_step_summary(report: Report) -> None:
    """Append the Markdown report to $GITHUB_STEP_SUMMARY (GitHub Actions' job page) when it is set, all or
    nothing (atomic.append_bytes: a full disk appends nothing); a failure is one line on stderr."""
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return
    try:
        size = _size(target)
        # the file's whole content counts toward GitHub's limit (what earlier steps and commands wrote too), and a
        # newline append_bytes may put first
        data = step_summary_text(report, SUMMARY_LIMIT - size - 1).encode("utf-8", "backslashreplace")
        if not data:
            say(f"warning: the job summary ${STEP_SUMMARY} ({target}) is full ({size} bytes; GitHub shows at most "
                "1 MiB): nothing appended")
            return
        atomic.append_bytes(target, data)
    except (OSError, BetaConformError) as exc:
        say(f"warning: could not append to the job summary ${STEP_SUMMARY} ({target}): {_reason(exc)}")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
