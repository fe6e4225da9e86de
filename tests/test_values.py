"""The one value rule (inputs/values.py): what a correctness value, a missing value and a verdict-vs-gold comparison
mean, in Python and in the SQL that the table reader runs -- the two must agree on every value."""

from __future__ import annotations

import itertools

import pytest

from betaconform_cli.inputs import values

BAD = -9


def _py_mark(v: object) -> int | None:
    try:
        return values.mark(v)
    except values.ValueProblem:
        return BAD


def _py_agree(v: object, g: object, tol: float | None) -> int | None:
    try:
        return values.agree(v, g, tol)
    except values.ValueProblem:
        return BAD


class TestMark:
    """Correctness values: documented words are read, missing markers are no verdict, the rest is an error."""

    @pytest.mark.parametrize("v", [1, 1.0, True, "1", "1.0", "1.00", " yes ", "TRUE", "Pass", "passed", "correct", "y", "t"])
    def test_true(self, v: object) -> None:
        assert values.mark(v) == 1

    @pytest.mark.parametrize("v", [0, 0.0, False, "0", "no", "FALSE", "fail", "failed", "incorrect", "n", "f", "-0"])
    def test_false(self, v: object) -> None:
        assert values.mark(v) == 0

    @pytest.mark.parametrize("v", [None, float("nan"), "", "  ", "NA", "n/a", "NaN", "null", "None"])
    def test_missing(self, v: object) -> None:
        assert values.mark(v) is None

    @pytest.mark.parametrize("v", [2, -1, 0.5, "2", "maybe", "x", [1], {"a": 1}, "inf"])
    def test_refused(self, v: object) -> None:
        with pytest.raises(values.ValueProblem, match="must be 1/0"):
            values.mark(v)


class TestAgree:
    """Verdicts against gold: numbers as numbers, the rest as trimmed text; missing on either side is no verdict."""

    @pytest.mark.parametrize(("v", "g", "want"), [
        ("A", "A", 1), (" A ", "A", 1), ("a", "A", 0), ("1", "1.0", 1), (1, "1", 1), (3, 3.0, 1), (True, "true", 1),
        (True, 1, 0), ("B", "A", 0), ("NA", "A", None), ("A", None, None), (None, "A", None), (float("nan"), 1, None),
    ])
    def test_equality(self, v: object, g: object, want: int | None) -> None:
        assert values.agree(v, g) == want

    def test_tolerance(self) -> None:
        assert values.agree(2.5, "3", 0.5) == 1 and values.agree(2.4, 3, 0.5) == 0
        with pytest.raises(values.ValueProblem, match="tolerance compares numbers"):
            values.agree("x", 3, 0.5)

    @pytest.mark.parametrize("bad", [[1, 2], {"a": 1}])
    def test_lists_and_objects_are_refused(self, bad: object) -> None:
        with pytest.raises(values.ValueProblem, match="one value"):
            values.agree(bad, "A")
        with pytest.raises(values.ValueProblem, match="one value"):
            values.agree("A", bad)


TEXTS = ["1", "0", "1.0", "1.00", " 1 ", "yes", "No", "PASS", "incorrect", "t", "", " ", "NA", "n/a", "NaN", "null", "None",
         "2", "-1", "0.5", "maybe", "A", "a", " A", "B", "3", "3.0", "2.6", "inf", "1e0", "true", "false",
         # issue 25: what Python's float() or DuckDB's cast would read as numbers, each its own way
         "١", "١.٠", "１", "1_0", "1_000", "0x1", "+1", ".5", "5.", "1e400", "-1e400", "infinity", "-0", "1d", "٣"]


class TestNumberRule:
    """Text reads as a number only as ASCII decimal text: digits of other scripts, underscores, hexadecimal and
    infinities are text (issue 25: one rule for JSON Lines and tables)."""

    @pytest.mark.parametrize("text,want", [("1", 1.0), (" -0.5 ", -0.5), ("1e3", 1000.0), (".5", 0.5), ("5.", 5.0),
                                           ("+1", 1.0), ("١", None), ("１", None), ("1_0", None), ("0x1", None),
                                           ("inf", None), ("1e400", None), ("nan", None), ("", None)])
    def test_number(self, text: str, want: float | None) -> None:
        assert values.number(text) == want

    def test_a_non_ascii_one_is_neither_a_number_nor_a_mark(self) -> None:
        assert values.agree("١", "1") == 0 and values.agree("١", "١") == 1
        with pytest.raises(values.ValueProblem):
            values.mark("١")


class TestVocabulary:
    """Gold and verdicts that share no class are named, with how they would match; any shared class is enough."""

    @pytest.mark.parametrize("gold,verdicts,hint", [
        (["FAIL", "PASS"], ["fail", "pass"], "differ only in case"),
        (["Yes"], ["no", "yes"], "differ only in case"),
        (["false", "true"], ["0", "1"], "mean the same pass/fail"),
        (["4"], ["3", "4.5"], "--tolerance"),
        (["A", "B"], ["x", "y"], "one vocabulary"),
    ])
    def test_disjoint(self, gold: list[str], verdicts: list[str], hint: str) -> None:
        message = values.vocabulary_problem(gold, verdicts)
        assert message is not None and hint in message
        assert all(f'"{c}"' in message for c in gold + verdicts)

    @pytest.mark.parametrize("gold,verdicts", [(["pass"], ["fail", "pass"]), ([], ["a"]), (["a"], []), (["A", "b"], ["b"])])
    def test_sharing_or_empty(self, gold: list[str], verdicts: list[str]) -> None:
        assert values.vocabulary_problem(gold, verdicts) is None

    def test_a_long_vocabulary_is_cut(self) -> None:
        message = values.vocabulary_problem([f"g{i}" for i in range(20)], ["v"])
        assert message is not None and "(20 classes)" in message


class TestSqlMatchesPython:
    """tables.py scores in DuckDB with SQL built from the same word lists; every text value is read the same way."""

    @pytest.fixture(scope="class")
    def con(self):  # type: ignore[no-untyped-def]
        duckdb = pytest.importorskip("duckdb")
        con = duckdb.connect()
        yield con
        con.close()

    def test_mark(self, con) -> None:  # type: ignore[no-untyped-def]
        cases = [*TEXTS, None]
        got = con.execute(f"SELECT v, {values.sql_mark('v', BAD)} FROM (SELECT unnest(?::VARCHAR[]) AS v)", [cases]).fetchall()
        assert len(got) == len(cases)
        for v, sql in got:
            assert sql == _py_mark(v), v

    @pytest.mark.parametrize("tol", [None, 0.5])
    def test_agree(self, con, tol: float | None) -> None:  # type: ignore[no-untyped-def]
        pairs = list(itertools.product([*TEXTS, None], repeat=2))
        expr = values.sql_agree("v", "g", tol, BAD)
        got = con.execute(f"SELECT v, g, {expr} FROM (SELECT unnest(?::VARCHAR[]) AS v, unnest(?::VARCHAR[]) AS g)",
                          [[p[0] for p in pairs], [p[1] for p in pairs]]).fetchall()
        assert len(got) == len(pairs)
        for v, g, sql in got:
            want = _py_agree(v, g, tol)
            assert sql == want, (v, g, tol, sql, want)


def test_nul_hint() -> None:
    """NUL bytes are called UTF-16 only when they look like it."""
    assert "UTF-16" in values.nul_hint('{"a": 1}'.encode("utf-16-le"))
    assert "UTF-16" in values.nul_hint(b"\xff\xfe{\x00")
    assert "NUL byte at byte 4" in values.nul_hint(b'{"a\x00": 1, "judgments": [1, 0, 1, 1, 0, 1]}')
    assert "NUL byte at byte 1" in values.nul_hint(b"\x00")
