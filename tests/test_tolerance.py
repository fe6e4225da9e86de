"""The tolerance policy itself (tests/tolerance.py): it forgives last-digit noise and nothing else."""

from __future__ import annotations

import pytest

from .tolerance import assert_close, close, text_differences


class TestText:
    """Text goldens: words and counts exact, floats within the tolerance or one printed unit."""

    def test_last_digit_noise_passes(self) -> None:
        assert not text_differences('{"estimate": 0.26775760733771237}', '{"estimate": 0.26775760733771176}')

    def test_rounding_boundary_passes(self) -> None:
        assert not text_differences("k=5  26.8%  (0.2675)", "k=5  26.7%  (0.2675)")

    def test_table_widths_pass(self) -> None:
        assert not text_differences("│ 0.1  │ a │\n└──────┘", "│ 0.1 │ a │\n└─────┘")

    @pytest.mark.parametrize("got,want", [
        ('{"estimate": 0.2678}', '{"estimate": 0.2677576}'),  # a real change beyond 1e-5 relative
        ("26.9%", "26.7%"),  # two printed units
        ("items: 121", "items: 120"),  # a count
        ("exit: 1", "exit: 0"),
        ("stop: enough labels", "continue: enough labels"),  # a word
        ("0.1 0.2", "0.1"),  # a number more
        ("k=1-11", "k=1-12"),
    ])
    def test_real_changes_fail(self, got: str, want: str) -> None:
        assert text_differences(got, want)


class TestStructures:
    """JSON goldens and literal expectations."""

    def test_close(self) -> None:
        assert close(0.26775760733771237, 0.26775760733771176)
        assert not close(0.2678, 0.26775)
        assert close(1e-9, 0.0) and not close(2e-6, 0.0)

    def test_nested(self) -> None:
        assert_close({"a": [1, 0.30000000000000004]}, {"a": [1, 0.3]}, "doc")
        with pytest.raises(AssertionError):
            assert_close({"a": [2, 0.3]}, {"a": [1, 0.3]}, "doc")
        with pytest.raises(AssertionError):
            assert_close({"a": [1, 0.31]}, {"a": [1, 0.3]}, "doc")
        with pytest.raises(AssertionError):
            assert_close({"a": True}, {"a": 1.0}, "doc")
