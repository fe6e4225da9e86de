"""What every command's api function shares: the progress callback, where saved fits go, the notes on what reading
skipped, the refusal of clusters where a command does not count them, and the one way a seed becomes random
generators."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..atomic import check_target
from ..errors import P0, P1, OutputError, ParameterError
from ..file_names import file_stem, file_stems
from ..inputs import Dataset, InputOptions
from ..protect import refuse_links

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class SaveTo:
    """Where saved fits go: one file (`path`, one input only) or one <dataset>.yaml per input in `directory`."""

    path: Path | None = None
    directory: Path | None = None

    def __post_init__(self) -> None:
        if self.path is not None and self.directory is not None:
            raise ParameterError(("save", "save_dir"), f"use {P0} or {P1}, not both")
        if self.directory is not None and self.directory.exists() and not self.directory.is_dir():
            raise OutputError(f"{self.directory}: cannot save fits there: not a directory")
        if self.path is not None:
            check_target(self.path, "saved fit")
            from ..savedfit import check_fit_name

            check_fit_name(self.path)

    def __bool__(self) -> bool:
        return self.path is not None or self.directory is not None

    def targets(self, names: Sequence[str]) -> list[Path]:
        """One file per dataset inside `directory`, named by file_names.file_stems; two datasets with one name would
        overwrite each other, so they are refused."""
        if self.path is not None:
            if len(names) > 1:
                raise ParameterError(("save", "save_dir"), f"{P0} takes one input, got {len(names)}; use {P1} for many")
            return [self.path]
        assert self.directory is not None
        seen: dict[str, int] = {}
        for n in names:
            seen[n] = seen.get(n, 0) + 1
        dup = next((n for n, c in seen.items() if c > 1), None)
        if dup is not None:
            raise OutputError(f"{self.directory}: two inputs are both named {dup!r}, so both would be saved as "
                              f"{file_stem(dup)}.yaml; rename one or save them separately")
        # names come from data (a dataset column, an inspect task): never a path ("../x", "/etc/x", "a/b"), and never
        # written through a link already there (one committed to the repository a CI job checks out)
        targets = [self.directory / f"{stem}.yaml" for stem in file_stems(names)]
        for target in targets:
            refuse_links(self.directory, target, "saved fit")
        return targets


def skip_note(ds: Dataset, used: int = 0) -> list[str]:
    """What reading skipped, for stderr: files of the arguments left out (this tool's own outputs), invalid lines
    of a JSON Lines file, or items and why; and labels of a labels file that matched no item (an id spelled apart). `used`: items without a verdict that the command uses after all
    (score's population: Votes.no_verdict), not skipped for it."""
    if used and ds.reading is not None:
        from dataclasses import replace

        from ..inputs.build import NO_VERDICT

        skips = tuple(replace(s, count=s.count - min(used, s.count)) if s.reason == NO_VERDICT else s for s in ds.reading.skips)
        ds = replace(ds, skipped=max(ds.skipped - used, 0), reading=replace(ds.reading, skips=tuple(s for s in skips if s.count)))
    from ..inputs.labels import UNMATCHED

    unmatched = [f"{ds.source}: {n}" for n in (ds.reading.notes if ds.reading else ()) if UNMATCHED in n]
    if not ds.skipped:
        return [*ds.left_out, *unmatched]
    why = "; ".join(f"{s.count} {s.reason}" for s in ds.reading.skips) if ds.reading is not None else ""
    if ds.reading is None or ds.reading.unit == "line":
        unjudged = any(s.reason == "no judge gave a verdict" for s in (ds.reading.skips if ds.reading else ()))
        what = "line(s)" if unjudged else "invalid line(s)"  # an item nobody judged is skipped, not invalid
        return [*ds.left_out, f"{ds.source}: skipped {ds.skipped} {what}" + (f" ({why})" if why else ""), *unmatched]
    return [*ds.left_out, f"{ds.source}: skipped {ds.skipped} item(s) of {ds.name} ({why})", *unmatched]



def unlabeled_only_judges(ds: Dataset) -> tuple[str, ...]:
    """Judges that gave verdicts only on unlabeled items: read and kept in the votes (fit and score use them), but
    with no verdict that a gold label checks."""
    if ds.votes is None:
        return ()
    import numpy as np

    labeled = ds.votes.gold >= 0
    return tuple(j for i, j in enumerate(ds.votes.judges) if not np.any(ds.votes.patterns[labeled, i] >= 0))


def no_clusters(opts: InputOptions, command: str) -> None:
    """A command whose figures take items as independent refuses `cluster_field` (an input option of every command:
    fit, judges, score, sample and doctor count clusters) rather than drop it in silence."""
    if opts.record.cluster_field is not None:
        raise ParameterError("cluster_field", f"{command} takes items as independent; leave {P0} out ({command} does not "
                                              "count clusters yet; fit, judges, score and sample do)")
