"""Checked as a notebook user would (docs/API.md, "Checked as a notebook user"): what broke when the library and the
CLI's door were given data nobody had tried, each bug at its one place with its smallest case. The expected values
are worked out by hand beside each case (which class means which; which column is an index), never from the code."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

import betaconform_cli as bc
from betaconform_cli.errors import InputError, ParameterError
from betaconform_cli.inputs import values

from .conftest import QueryLog

pd = pytest.importorskip("pandas")

# 12 items, 3 judges: gold pass on items 0-5, fail on 6-11; judge "c" is wrong on items 0 and 6, "b" on item 1
# (so "c" says fail on items 0 and 7-11: 6 times)
ITEMS = [f"q{i:02d}" for i in range(12)]
GOLD = {it: "pass" if i < 6 else "fail" for i, it in enumerate(ITEMS)}
OTHER = {"pass": "fail", "fail": "pass"}


def rows(upper: str | None = None) -> list[dict[str, Any]]:
    """The long table; `upper`: that judge writes its verdicts in capitals ("PASS"), a class the gold never uses."""
    out = []
    for i, it in enumerate(ITEMS):
        for j in ("a", "b", "c"):
            wrong = (j == "c" and i in (0, 6)) or (j == "b" and i == 1)
            v = OTHER[GOLD[it]] if wrong else GOLD[it]
            out.append({"item_id": it, "judge": j, "verdict": v.upper() if j == upper else v, "gold": GOLD[it]})
    return out


class TestVocabularyWrittenApart:
    """A verdict class that means a gold class but is written apart would count as wrong on every item: refused."""

    @pytest.mark.parametrize("gold,verdicts,want", [
        (["fail", "pass"], ["FAIL", "fail", "pass"], [("FAIL", "fail")]),  # one judge in capitals
        (["fail", "pass"], ["fail", "pass", "yes"], [("yes", "pass")]),  # one judge in yes/no
        (["false", "true"], ["1", "false", "true"], [("1", "true")]),
        (["fail", "pass"], ["Pass.", "fail", "pass"], [("Pass.", "pass")]),  # an LLM's punctuation
        (["A", "B"], ["(A)", "A", "B"], [("(A)", "A")]),
        (["0", "1"], ["-1", "0", "1", "1.0"], []),  # 1.0 is the number 1: it agrees with "1"; -1 is another number
        (["fail", "pass"], ["fail", "maybe", "pass"], []),  # a class of its own, not a misspelling
        (["A", "B"], ["A", "B", "C"], []),
        (["A", "B"], ["A", "A-", "B", "B+"], []),  # a grade with its sign is another grade, not "A" written apart
        (["A>B", "B>A"], ["A=B", "A>B", "B>A"], []),  # a tie is no preference (the letters alike: "ab")
        (["A>B", "B>A"], ["[[A>B]]", "A>B", "B>A"], [("[[A>B]]", "A>B")]),  # an arena judge's brackets wrap it
    ])
    def test_written_apart(self, gold: list[str], verdicts: list[str], want: list[tuple[str, str]]) -> None:
        assert values.written_apart(gold, verdicts) == want

    @pytest.mark.parametrize("gold,verdicts,want", [
        (["0", "1"], ["0", "0.2", "0.7", "0.9", "1"], ["0.2", "0.7", "0.9"]),  # a judge's scores in [0, 1]
        (["fail", "pass"], ["0.25", "0.75", "fail"], ["0.25", "0.75"]),
        (["0", "1"], ["0", "0.5", "1"], []),  # one partial credit among 1/0 verdicts: a class of its own
        (["1", "2", "3"], ["1.5", "2.5", "3"], []),  # a rating scale is no pass/fail gold
    ])
    def test_scores_apart(self, gold: list[str], verdicts: list[str], want: list[str]) -> None:
        assert values.scores_apart(gold, verdicts) == want

    def test_refused_naming_the_judge_in_the_library_and_the_cli(self, tmp_path: Path) -> None:
        with pytest.raises(InputError, match=r'^<DataFrame>: the verdict "FAIL" \(6 on labeled items, by "c"\) is no gold '
                                             r'class but means the gold\'s "fail"'):
            bc.fit(pd.DataFrame(rows(upper="c")))
        from typer.testing import CliRunner

        from betaconform_cli.cli import app

        path = tmp_path / "mixed.csv"
        pd.DataFrame(rows(upper="c")).to_csv(path, index=False)
        res = CliRunner().invoke(app, ["fit", str(path)], catch_exceptions=False)
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
        assert res.output.startswith(f"error: {path}: the verdict \"FAIL\"")


    def test_gold_written_apart_on_a_few_items(self) -> None:
        records = [{**r, "gold": "Pass"} if r["item_id"] in ("q00", "q01") else r for r in rows()]  # items 0, 1: pass
        problems = bc.doctor(records).to_dict()["problems"]
        assert problems == ['the gold label "Pass" (2 items) is no verdict class but means the verdicts\' "pass", so every '
                            'verdict on those items would count as wrong; write the gold as the verdicts are written (the '
                            'verdicts\' classes: "fail", "pass")']


class TestColumns:
    """Which column plays which role in a DataFrame (the table reader's rules, as for a CSV file)."""

    def test_a_named_range_index_is_no_judge(self) -> None:
        wide = pd.DataFrame(rows()).pivot(index="item_id", columns="judge", values="verdict").reset_index(drop=True)
        wide["gold"] = [GOLD[it] for it in ITEMS]
        wide.index.name = "row"  # reset_index() makes it a column "row" of 0..11: before, a judge "row"
        doc = bc.doctor(wide).to_dict()
        assert doc["roles"] == {"gold": "gold", "judges": "a, b, c"}
        assert doc["notes"] == ["column 'row' skipped: the row index pandas writes (0, 1, 2, ...), not a judge"]

    def test_an_id_column_of_another_name_read_as_a_judge_is_refused(self) -> None:
        wide = pd.DataFrame(rows()).pivot(index="item_id", columns="judge", values="verdict").reset_index()
        wide = wide.rename(columns={"item_id": "uid"}).assign(gold=[GOLD[it] for it in ITEMS])  # "uid": no item role
        (problem,) = bc.doctor(wide).to_dict()["problems"]
        assert problem.startswith('judge "uid" gives no gold class on any of its 12 labeled items (its classes: "q00", ')
        assert bc.doctor(wide, item_col="uid", judge_cols="a,b,c").to_dict().get("problems") is None

    def test_a_column_tells_it_is_no_index_by_its_first_rows(self, tmp_path: Path) -> None:
        """A first column of another name (uid: q0, q1, ...) is no row index by its first rows: the check reads
        those only, where it scanned the whole table (on a 10^7-row Parquet file 0.8 s beside the read's 1.1 s);
        a range 0..n-1 is still found."""
        from betaconform_cli.inputs.table_open import open_table
        from betaconform_cli.inputs.table_sql import connect
        from betaconform_cli.inputs.tables import index_columns

        path = tmp_path / "long.csv"
        path.write_text("uid,judge,verdict,gold\n" + "".join(f"q{i},j,pass,pass\n" for i in range(30)), encoding="utf-8")
        con = connect()
        try:
            seen = QueryLog(con)
            assert index_columns(seen, open_table(con, path, "csv", str(path), False)) == ()
            assert seen.sql and all("LIMIT" in sql for sql in seen.sql)
            path.write_text("n,a,b,gold\n" + "".join(f"{i},pass,fail,pass\n" for i in range(30)), encoding="utf-8")
            assert index_columns(con, open_table(con, path, "csv", str(path), False)) == ("n",)
        finally:
            con.close()

    def test_headers_in_any_case_and_separator(self) -> None:
        frame = pd.DataFrame(rows()).rename(columns={"item_id": "Item ID", "judge": "Judge", "verdict": "Verdict",
                                                     "gold": "Ground Truth"})
        assert bc.doctor(frame).to_dict()["roles"] == {"item": "Item ID", "judge": "Judge", "verdict": "Verdict",
                                                        "gold": "Ground Truth"}

    def test_two_columns_of_one_name_and_an_unreadable_column(self) -> None:
        frame = pd.DataFrame(rows())
        twice = frame.set_axis(["item_id", "judge", "verdict", "verdict"], axis=1)
        with pytest.raises(InputError, match=r"^<DataFrame>: column 'verdict': names two columns"):
            bc.doctor(twice)
        frame["month"] = pd.period_range("2026-01", periods=len(frame), freq="M")
        with pytest.raises(InputError, match=r"^<DataFrame>: column 'month': DuckDB cannot read its period\[M\] values"):
            bc.doctor(frame)


class TestSources:
    """Data in the shapes a notebook holds it gives the numbers of the list of dicts."""

    def test_generator_dict_of_columns_and_pandas_values(self) -> None:
        records = rows()
        want = bc.doctor(records).to_dict()
        assert bc.doctor(r for r in records).to_dict() == want
        assert bc.doctor(pd.DataFrame(records).to_dict("list")).to_dict() == want
        stamped = [{**r, "at": pd.Timestamp("2026-01-01"), "gold": pd.NA if r["item_id"] == "q11" else r["gold"]}
                   for r in records]  # df.to_dict("records") of a frame with a datetime column and pd.NA gold
        assert bc.doctor(stamped).to_dict()["unlabeled_items"] == 1

    def test_a_git_lfs_pointer_is_named(self, tmp_path: Path) -> None:
        pointer = tmp_path / "judgments.csv"  # what a checkout without `git lfs pull` holds
        pointer.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n")
        with pytest.raises(InputError, match=r"judgments.csv:1: a Git LFS pointer, not the data"):
            bc.doctor(pointer)

    def test_refusals_are_one_line(self) -> None:
        with pytest.raises(ParameterError, match=r"^labels is the path of a gold file .* got a DataFrame"):
            bc.doctor(pd.DataFrame(rows()), labels=pd.DataFrame({"item_id": ITEMS}))
        with pytest.raises(ParameterError, match=r"^source is a dict of columns of different lengths"):
            bc.doctor({"item_id": ["a", "b"], "judge": ["x"]})
        with pytest.raises(TypeError, match=r"^doctor\(\) got an unexpected keyword argument 'gold_column' "
                                            r"\(did you mean 'gold_col'"):
            bc.doctor(rows(), gold_column="gold")


class TestResults:
    """A fit result: tab completion, intervals at another level, pickling (a notebook's cache, multiprocessing)."""

    def test_dir_lists_the_exports(self) -> None:
        assert {"fit", "score", "judges", "load_fit", "InputError"} <= set(dir(bc))

    def test_pickled_result_keeps_its_refit_and_conf_int_is_error(self) -> None:
        result = bc.fit(pd.DataFrame(rows()), ks=[3, 5], seed=pd.Series([7]).to_numpy()[0])  # numpy's int seed
        again = pickle.loads(pickle.dumps(result))  # the run-time document types and the refit (no closure) pickle
        assert again.to_dict() == result.to_dict() and again.error(3) == result.error(3)
        assert again.refit is not None and again.refit.options["seed"] == 7  # what error(k, alpha=...) fits again with
        pd.testing.assert_frame_equal(again.refit.source, result.refit.source)
        with pytest.warns(UserWarning, match=r"^data: k=5 is beyond the 3 judges any item has: extrapolated"):
            assert again.conf_int() == {3: result.error(3)[1:], 5: result.error(5)[1:]}
        with pytest.raises(ParameterError, match=r"^alpha must be strictly between 0 and 1"):
            result.error(3, alpha=2)
        with pytest.raises(ParameterError, match=r"^k is a number of judges \(an integer\); got '3'"):
            result.error("3")  # type: ignore[arg-type]
