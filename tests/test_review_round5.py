"""Review of round 5's merged changes (helper V2): each test failed before its fix (docs/REVIEW_ROUND5.md)."""

from __future__ import annotations


def test_phoenix_metadata_whose_python_literal_cannot_be_built_is_no_metadata() -> None:
    """A CSV cell "{[1]: 2}" parses as Python but a list is no dict key: ast.literal_eval raised TypeError, which
    escaped the reader as an internal error (exit 70). It is text that is no metadata, as any other such text."""
    from betaconform_cli.inputs.phoenix import _metadata

    for cell in ("{[1]: 2}", "{'a': {{}: 1}}"):
        assert _metadata({"span_id": "s1", "metadata": cell})["metadata"] is None
    assert _metadata({"metadata": "{'model': 'gpt-4o'}"})["metadata"] == {"model": "gpt-4o"}  # pandas' to_csv, read
