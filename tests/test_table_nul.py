"""A NUL byte inside a CSV or TSV table's cells is binary data or a damaged file (inputs/table_cells.py): an error
naming the file and the line of the first NUL byte, not a verdict class that matches no gold ("vocabulary mismatch",
as it was) nor a second gold label of the item."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from typer.testing import CliRunner

from .conftest import QueryLog, invoke

HEAD = b"item_id,judge,verdict,gold\nq1,a,pass,pass\n"


@pytest.mark.parametrize(("name", "body", "byte"), [
    ("verdict.csv", HEAD + b"q1,b,pa\x00ss,pass\nq2,a,fail,fail\n", 50),
    ("gold.csv.gz", HEAD + b"q1,b,pass,pa\x00ss\n", 55),  # gzip: the byte of the text it holds
])
def test_a_nul_byte_in_a_cell_is_binary_data(tmp_path: Path, name: str, body: bytes, byte: int) -> None:
    path = tmp_path / name
    path.write_bytes(gzip.compress(body) if name.endswith(".gz") else body)
    res = invoke(CliRunner(), "fit", path)
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {path}:3: a NUL byte (at byte {byte} of the file): binary data or a damaged file, not text"
    assert body.index(b"\x00") + 1 == byte and body[:byte].count(b"\n") + 1 == 3


def test_a_file_without_nul_is_told_by_its_bytes(tmp_path: Path) -> None:
    """A plain CSV without a NUL byte is cleared by a scan of its bytes, with no query over its cells (which cost
    ~0.3 s of a 5M-row read); one with a NUL still runs it and is named (test above)."""
    from betaconform_cli.inputs.table_cells import _no_nul
    from betaconform_cli.inputs.table_open import open_table
    from betaconform_cli.inputs.table_sql import connect

    path = tmp_path / "long.csv"
    path.write_text("item_id,judge,verdict,gold\nq1,a,pass,pass\nq1,b,fail,pass\n", encoding="utf-8")
    con = connect()
    try:
        seen = QueryLog(con)
        _no_nul(seen, open_table(con, path, "csv", str(path), False), ["item_id", "judge", "verdict", "gold"], path)
        assert not any("chr(0)" in sql for sql in seen.sql)
    finally:
        con.close()
