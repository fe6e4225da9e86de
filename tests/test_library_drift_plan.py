"""The library's `drift` and `plan` (docs/API.md): data in memory and files give the CLI's JSON and the CLI's errors;
the results offer the accessors every result has (summary, to_dict, rows, to_pandas)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import betaconform_cli as bc
from betaconform_cli.errors import InputError, ParameterError

from .test_library import SAMPLE, as_kind, cli, cli_json, long_rows, write_csv


def flipped(rows: list[dict[str, Any]], judge: str = "gpt-4o") -> list[dict[str, Any]]:
    """A new run: `judge` says the opposite on the items whose id ends in 0-3 (a drift the test must find)."""
    other = {"pass": "fail", "fail": "pass"}
    return [{**r, "verdict": other[r["verdict"]]} if r["judge"] == judge and r["item_id"][-1] in "0123" else r
            for r in rows]


def without_sources(doc: Any) -> Any:
    """The drift document less where each run came from (a path for the CLI, <DataFrame> or <records> here)."""
    return {**doc, "runs": [{k: v for k, v in run.items() if k != "source"} for run in doc["runs"]]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("drift")  # old.csv and new.csv: datasets "old" and "new", the library's default names
    return write_csv(folder / "old.csv", long_rows()), write_csv(folder / "new.csv", flipped(long_rows()))


class TestDrift:
    @pytest.mark.parametrize("kind", ["pandas", "records"])
    def test_same_json_as_the_cli(self, kind: str, runs: tuple[Path, Path]) -> None:
        lib = bc.drift(as_kind(kind, long_rows()), as_kind(kind, flipped(long_rows())), permutations=199, fail_on_drift=True)
        res = cli("drift", *runs, "--permutations", "199", "--fail-on-drift", "-f", "json")
        assert res.exit_code == lib.exit_code == 1  # gpt-4o drifted
        assert without_sources(lib.to_dict()) == without_sources(json.loads(res.stdout))
        kind_name = "<DataFrame" if kind == "pandas" else "<records"
        assert [r["source"] for r in lib.to_dict()["runs"]] == [kind_name + " old>", kind_name + " new>"]
        assert any("gpt-4o drifted" in f for f in lib.failures)

    def test_accessors(self) -> None:
        pytest.importorskip("pandas")
        got = bc.drift(SAMPLE / "system_verdicts.jsonl", str(SAMPLE / "system_b_verdicts.jsonl"), permutations=199)
        assert got.summary().splitlines()[0].startswith("drift system_verdicts -> system_b_verdicts: 150 items")
        frame = got.to_pandas()
        assert frame["name"].tolist() == [r["name"] for r in got.to_dict()["rows"]]
        assert got.exit_code == 0 and got.failures == ()  # no gate asked for

    def test_one_input_cut_in_time(self, tmp_path: Path) -> None:
        recs = [{**json.loads(line), "judged_at": i} for i, line in
                enumerate((SAMPLE / "system_verdicts.jsonl").read_text().splitlines())]
        file = tmp_path / "old.jsonl"  # the dataset "old", as the library names a first run in memory
        file.write_text("".join(json.dumps(r) + "\n" for r in recs))
        lib = bc.drift(recs, time_field="judged_at", split_at="75", permutations=199).to_dict()
        printed = cli_json("drift", file, "--time-field", "judged_at", "--split-at", "75", "--permutations", "199")
        assert without_sources(lib) == without_sources(printed)
        assert [r["items"] for r in lib["runs"]] == [75, 75]

    def test_errors_as_the_cli(self, tmp_path: Path) -> None:
        pd = pytest.importorskip("pandas")
        correctness = pd.DataFrame({"item_id": ["a", "a", "b"], "judge": ["x", "y", "x"], "correct": [1, 0, 1]})
        with pytest.raises(InputError, match="carries no verdicts"):
            bc.drift(correctness, correctness)
        for data, where in ((correctness, "<DataFrame old>: "), (correctness.to_dict("records"), "<records old>: ")):
            with pytest.raises(InputError) as named:  # the two runs in memory are told apart by their names
                bc.drift(data, data)
            assert str(named.value).startswith(where)
        with pytest.raises(ParameterError) as got:
            bc.drift(long_rows(), long_rows(), permutations=5)
        printed = cli("drift", SAMPLE / "system_verdicts.jsonl", SAMPLE / "system_verdicts.jsonl", "--permutations", "5")
        assert printed.exit_code == 2
        assert "error: " + got.value.render(lambda p: "--" + p.replace("_", "-")) == printed.stderr.strip()
        with pytest.raises(ParameterError, match="is one run .*the data given holds 2"):
            bc.drift({"a": long_rows(), "b": long_rows()}, long_rows())


class TestPlan:
    def test_same_json_as_the_cli(self, tmp_path: Path) -> None:
        file = write_csv(tmp_path / "data.csv", long_rows())  # dataset "data": the library's default name
        lib = bc.plan(as_kind("pandas", long_rows()), ks="1,3", draws=20, label_cost=0.8)
        printed = cli_json("plan", file, "--ks", "1,3", "--draws", "20", "--label-cost", "0.8")
        assert [{k: v for k, v in d.items() if k != "source"} for d in [lib.to_dict()]] == \
            [{k: v for k, v in d.items() if k != "source"} for d in [printed]]
        rows = lib.rows()
        assert [r["k"] for r in rows if r["k"] is not None] == [1, 3]
        assert lib.summary().splitlines()[0] == "data: plan" and lib.exit_code == 0

    def test_errors_as_the_cli(self) -> None:
        with pytest.raises(ParameterError) as got:
            bc.plan(long_rows(), label_cost=-1)
        printed = cli("plan", SAMPLE / "system_verdicts.jsonl", "--label-cost", "-1")
        assert printed.exit_code == 2
        assert "error: " + got.value.render(lambda p: "--" + p.replace("_", "-")) == printed.stderr.strip()
        with pytest.raises(InputError, match="carries no verdicts"):
            bc.plan(SAMPLE / "qa_judges.jsonl")


class TestNoLabelsYet:
    """plan and drift are for runs with few labels or none: a run without any reads (fit refuses it)."""

    def test_plan_and_drift_without_labels(self) -> None:
        unlabeled = [{**r, "gold": None} for r in long_rows()]
        planned = bc.plan(unlabeled, ks="1,3", draws=20).to_dict()
        assert planned["plan"]["labeled"] == 0 and planned["plan"]["items"] == 150
        drifted = bc.drift(unlabeled, unlabeled, permutations=99).to_dict()
        assert [r["labeled_items"] for r in drifted["runs"]] == [0, 0]
        with pytest.raises(InputError, match="no labeled items"):
            bc.fit(unlabeled)


class TestNotebookFrames:
    """DataFrames as a notebook makes them: the same items in other dtypes give the same numbers; what cannot be
    read is one line."""

    def test_dtypes_give_the_same_fit(self) -> None:
        pd = pytest.importorskip("pandas")
        pl = pytest.importorskip("polars")
        frame = pd.DataFrame(long_rows())
        plain = bc.fit(frame, ks="1,3").error(3)
        ids = {name: i for i, name in enumerate(frame["item_id"].unique())}
        variants = [
            frame.astype({"judge": "category", "verdict": "category", "gold": "category"}).assign(item_id=frame["item_id"].map(ids)),
            frame.assign(verdict=frame["verdict"] == "pass", gold=frame["gold"].map({"pass": True, "fail": False})),
            pl.from_pandas(frame).with_columns(pl.col("verdict").cast(pl.Enum(["fail", "pass"]))).lazy(),
        ]
        for v in variants:
            assert bc.fit(v, ks="1,3").error(3) == plain

    def test_a_lazy_frame_does_not_warn(self) -> None:
        pl = pytest.importorskip("polars")
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = bc.doctor(pl.LazyFrame(long_rows())).to_dict()
        assert (got["items"], got["unlabeled_items"]) == (40, 110)

    def test_columns_on_two_levels(self) -> None:
        pd = pytest.importorskip("pandas")
        wide = pd.DataFrame(long_rows()).pivot(index="item_id", columns="judge", values=["verdict"])
        with pytest.raises(InputError, match=r"^<DataFrame>: has columns on 2 levels \(a MultiIndex") as got:
            bc.fit(wide)
        assert "\n" not in str(got.value)
