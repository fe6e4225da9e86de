"""docs/FORMATS.md lists every registered format (issue 29, item 1): a section and a row of the table each, and
every `--from` choice, read from the registry, so a format cannot be added without its documentation."""

from __future__ import annotations

import re
from pathlib import Path

from betaconform_cli import formats

DOC = (Path(__file__).resolve().parent.parent / "docs" / "FORMATS.md").read_text(encoding="utf-8")


def test_every_registered_format_has_a_section_and_a_row() -> None:
    sections = re.findall(r"^## (\S+)$", DOC, flags=re.M)
    rows = re.findall(r"^\| `([^`]+)`", DOC, flags=re.M)
    for f in formats.registered():
        assert f.name in sections, f"docs/FORMATS.md has no section '## {f.name}'"
        assert f.name in rows, f"docs/FORMATS.md's table has no row for {f.name}"


def test_every_from_choice_is_named() -> None:
    for choice in formats.input_formats()[1:]:
        assert f"`{choice}`" in DOC, f"--from {choice} is not named in docs/FORMATS.md"

