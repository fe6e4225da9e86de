"""File suffixes, limits and choices in one place (formats.py, choices.py): a file of any data kind is read alike
alone, in a folder or by a glob, whatever the case of its name; the CLI's choices are the core's tuples."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from betaconform_cli import formats, output_formats
from betaconform_cli.errors import InputError, ParamsError
from betaconform_cli.inputs import read_inputs
from betaconform_cli.savedfit import expand_fits, read_yaml

# three items, three judges: the (judges, correct) cells (3, 2), (3, 3), (3, 0)
MARKS = {"q1": (1, 1, 0), "q2": (1, 1, 1), "q3": (0, 0, 0)}
EXPECTED = {(3, 2): 1, (3, 3): 1, (3, 0): 1}


def _jsonl() -> bytes:
    return "".join(json.dumps({"id": i, "judgments": list(m)}) + "\n" for i, m in MARKS.items()).encode()


def _table(sep: str) -> bytes:
    rows = [f"{i}{sep}j{j}{sep}{v}" for i, m in MARKS.items() for j, v in enumerate(m)]
    return (sep.join(("item_id", "judge", "correct")) + "\n" + "\n".join(rows) + "\n").encode()


def _write(path: Path) -> Path:
    """The same items in the kind the name says (gzip-compressed when it ends in .gz, any case)."""
    kind = formats.kind_by_name(path)
    data = _jsonl() if kind == "jsonl" else _table("\t" if kind == "tsv" else ",")
    path.write_bytes(gzip.compress(data) if path.name.lower().endswith(".gz") else data)
    return path


def _cells(ds) -> dict[tuple[int, int], int]:  # type: ignore[no-untyped-def]
    c = ds.table.counts
    return {(int(k), int(s)): int(c[k, s]) for k, s in zip(*np.nonzero(c))}


NAMES = ["a.ndjson", "a.ndjson.gz", "a.jsonl.gz", "A.JSONL", "a.Jsonl.GZ", "a.tsv", "a.tab", "a.TSV", "a.tab.gz",
         "a.csv.gz", "A.CSV"]


class TestFoldersReadLikeFiles:
    """A folder of one data file is read as that file alone (issue 20: a folder of .ndjson 'held no data file')."""

    @pytest.mark.parametrize("name", NAMES)
    def test_folder_equals_file(self, tmp_path: Path, name: str) -> None:
        """The folder, the file and a glob give the same counts and the same dataset name (its stem)."""
        folder = tmp_path / "runs"
        folder.mkdir()
        f = _write(folder / name)
        by_file, by_folder, by_glob = (read_inputs([str(a)]) for a in (f, folder, str(folder / "*")))
        assert [ds.source for ds in by_folder] == [str(f)] == [ds.source for ds in by_glob]
        assert _cells(by_file[0]) == _cells(by_folder[0]) == _cells(by_glob[0]) == EXPECTED
        assert by_folder[0].name == name.split(".")[0]

    def test_parquet_in_a_folder(self, tmp_path: Path) -> None:
        """A Parquet file named in upper case is found in a folder and read as Parquet."""
        import duckdb

        src = _write(tmp_path / "long.csv")
        folder = tmp_path / "runs"
        folder.mkdir()
        duckdb.sql(f"COPY (SELECT * FROM read_csv('{src}')) TO '{folder / 'B.PARQUET'}' (FORMAT parquet)")
        (ds,) = read_inputs([str(folder)])
        assert _cells(ds) == EXPECTED and ds.name == "B"

    def test_every_kind_of_a_mixed_folder_is_read_once(self, tmp_path: Path) -> None:
        """One folder holding every name above: one dataset per file, each with the same counts; other files
        (notes, a saved fit) are not data."""
        for n, name in enumerate(NAMES):
            _write(tmp_path / f"{n}{name}")
        (tmp_path / "notes.txt").write_text("not data")
        (tmp_path / "fit.yaml").write_text("schema: x")
        found = read_inputs([str(tmp_path)])
        assert len(found) == len(NAMES) and all(_cells(ds) == EXPECTED for ds in found)

    def test_a_folder_without_data_names_the_suffixes(self, tmp_path: Path) -> None:
        (tmp_path / "notes.txt").write_text("not data")
        with pytest.raises(InputError, match=r"holds no data file \(.*\*\.ndjson"):
            read_inputs([str(tmp_path)])

    def test_own_output_named_ndjson_is_left_out(self, tmp_path: Path) -> None:
        """This tool's JSON output is skipped in a folder under any JSON name, not read as judgment data."""
        _write(tmp_path / "a.jsonl")
        (tmp_path / "out.NDJSON").write_text('{"schema": "betaconform/1", "datasets": []}\n')
        (ds,) = read_inputs([str(tmp_path)])
        assert ds.name == "a" and any("out.NDJSON" in line for line in ds.left_out)


class TestNames:
    """Dataset names and saved-fit names, from the one list of endings."""

    @pytest.mark.parametrize(("name", "stem"), [
        ("a.jsonl", "a"), ("a.csv.gz", "a"), ("B.NDJSON", "B"), ("c.tab", "c"), ("d.yaml", "d"), ("e.gz", "e"),
        ("f.v2.parquet", "f.v2"), ("g.txt", "g.txt"), (".jsonl", ".jsonl"), ("h.JSON.GZ", "h"),
    ])
    def test_stem(self, name: str, stem: str) -> None:
        assert formats.stem(Path("x") / name) == stem

    def test_every_data_suffix_has_one_kind(self) -> None:
        """No ending is claimed by two kinds (the first would silently win)."""
        suffixes = formats.kind_suffixes()
        owners = [k for s in formats.data_suffixes() for k, ends in suffixes.items() if s in ends]
        assert len(owners) == len(formats.data_suffixes()) == len(set(formats.data_suffixes()))

    def test_upper_case_saved_fits_are_found_and_data_is_refused_as_yaml(self, tmp_path: Path) -> None:
        (tmp_path / "A.YAML").write_text("schema: x\n")
        (tmp_path / "b.yml").write_text("schema: x\n")
        assert [p.name for p in expand_fits([str(tmp_path)])] == ["A.YAML", "b.yml"]
        data = _write(tmp_path / "c.NDJSON")
        with pytest.raises(ParamsError, match="looks like judgment data"):
            read_yaml(data, "transfer config")

    def test_a_saved_fit_given_as_data_is_refused_in_any_case(self, tmp_path: Path) -> None:
        (tmp_path / "fit.YML").write_text("schema: x\n")
        with pytest.raises(InputError, match="saved fit"):
            read_inputs([str(tmp_path / "fit.YML")])


def _core_choices() -> list[tuple[str, str, tuple[str, ...]]]:
    import importlib

    from betaconform_cli import choices, gate

    score = importlib.import_module("betaconform_cli.score")  # the module: betaconform_cli.score is the library function
    from betaconform_cli.stopping import rules
    from betaconform_cli.transfer import settings as tsettings

    return [
        ("fit", "--from", formats.input_formats()), ("doctor", "--duplicates", formats.DUPLICATES),
        ("judges", "--format", output_formats.output_formats()), ("fit", "--components", tuple(str(c) for c in choices.COMPONENTS)),
        ("fit", "--on", gate.GATE_ON), ("report", "--on", gate.GATE_ON), ("score", "--on", gate.SCORE_ON),
        ("score", "--target", score.TARGETS), ("sample", "--rule", rules.RULES), ("evaluate", "--rule", rules.RULES),
        ("sample", "--precision-method", rules.PRECISION_METHODS), ("transfer", "--method", tsettings.METHODS),
        ("transfer", "--size-weight", tsettings.SIZE_WEIGHTS), ("transfer", "--similarity", tsettings.SIMILARITIES),
        ("judges", "--csv-table", choices.JUDGES_CSV_TABLES),
    ]


class TestChoicesAreTheCores:
    """Every CLI choice lists exactly the core's tuple, so that a value added to the core is offered at once."""

    @pytest.mark.parametrize(("command", "option", "core"), _core_choices())
    def test_a_wrong_value_lists_the_cores_choices(self, runner, command: str, option: str, core: tuple[str, ...]) -> None:
        from tests.conftest import invoke

        res = invoke(runner, command, "x.jsonl", option, "no-such-choice")
        assert res.exit_code == 2
        listed = res.output.split("is not one of ", 1)[1].split(".", 1)[0]
        assert tuple(v.strip(" '") for v in listed.split(",")) == core


class TestEndingsReachEveryReader:
    """The readers that look at a name use the one list: gzip in any case, a .tab or .ndjson gold file."""

    def test_upper_case_gz_is_never_split_into_byte_ranges(self, tmp_path: Path) -> None:
        """JSON Lines counted by forked workers read byte ranges of the file: a gzip named .GZ is read whole."""
        from betaconform_cli.inputs.jsonl import read_jsonl

        path = _write(tmp_path / "X.JSONL.GZ")
        assert _cells(read_jsonl(path, workers=2)) == EXPECTED

    @pytest.mark.parametrize("name", ["gold.tab", "gold.ndjson", "GOLD.TSV", "gold.csv.gz"])
    def test_labels_file_by_its_ending(self, tmp_path: Path, name: str) -> None:
        """--labels reads a gold file by the same endings: the items' gold joined by id gives the counts."""
        from betaconform_cli.inputs import InputOptions, read_dataset

        verdicts = tmp_path / "v.jsonl"
        verdicts.write_text("".join(json.dumps({"id": i, "verdicts": ["A" if v else "B" for v in m]}) + "\n"
                                    for i, m in MARKS.items()))
        kind = formats.kind_by_name(name)
        if kind == "jsonl":
            data = "".join(json.dumps({"id": i, "label": "A"}) + "\n" for i in MARKS).encode()
        else:
            sep = "\t" if kind == "tsv" else ","
            data = ("id" + sep + "label\n" + "".join(f"{i}{sep}A\n" for i in MARKS)).encode()
        gold = tmp_path / name
        gold.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        assert _cells(read_dataset(verdicts, InputOptions(labels=str(gold)))) == EXPECTED
