"""Saved fits and configs a user may hand over (issue 10, items 5, 8, 10, 12, 23): bombs, values JSON cannot
carry, inconsistent numbers, and the messages for files that are not fits at all."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import Q, invoke, one_error_line, run_cli

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")
)


NUM = "{NUM}"  # in `old`: the number written there, whatever its last digits (tests/tolerance.py: floats vary by machine)


def edit(saved: Path, tmp_path: Path, old: str, new: str, name: str = "edited.yaml") -> Path:
    """The saved fit with the first `old` replaced by `new`; `old` may name a field's number as {NUM}."""
    text = saved.read_text()
    pattern = re.escape(old).replace(re.escape(NUM), r"-?[0-9][0-9.e+-]*")
    edited, found = re.subn(pattern, lambda _: new, text, count=1)
    assert found, old
    out = tmp_path / name
    out.write_text(edited)
    return out


def report_all_formats(path: Path) -> list[object]:
    return [invoke("report", path, "-f", fmt) for fmt in ("json", "table", "csv", "markdown")]


class TestAliasesAndUnknownKeys:
    """Item 5: YAML aliases are refused in fits and configs (a few KB could expand to gigabytes); keys outside the
    schema never reach the JSON."""

    @pytest.mark.parametrize("where", ["top", "nested", "merge"])
    def test_fit_with_aliases(self, saved_fit: Path, tmp_path: Path, where: str) -> None:
        extra = {"top": BOMB, "nested": "provenance: {x: &p [1, 2], y: *p}\n",
                 "merge": "settings_base: &s {confidence_level: 0.9}\nprovenance: {<<: *s}\n"}[where]
        bomb = tmp_path / "bomb.yaml"
        bomb.write_text(saved_fit.read_text() + extra)
        p = run_cli("report", bomb, "-f", "json")  # a real process under the memory cap: expansion would kill it
        assert "aliases" in one_error_line(p) and "refused" in p.stderr.decode()

    def test_config_with_aliases(self, embedded_fit: tuple[Path, Path], tmp_path: Path) -> None:
        config = tmp_path / "transfer.yaml"
        config.write_text("sigmoid_a: &a 10\nsigmoid_b: *a\n")
        res = invoke("transfer", Q, "--sources", embedded_fit[0], "--config", config)
        assert res.exit_code == 2 and "aliases" in res.stderr

    def test_unknown_keys_dropped(self, saved_fit: Path, tmp_path: Path) -> None:
        fit = tmp_path / "extra.yaml"
        fit.write_text(saved_fit.read_text() + "evil: [1, 2, 3]\n__class__: x\nnotes: {a: 1}\n")
        doc = json.loads(invoke("report", fit, "-f", "json").stdout)
        assert not {"evil", "__class__", "notes"} & set(doc)


class TestValuesJsonCannotCarry:
    """Item 10's nested member: `report -f json` copies the schema keys' mappings; a huge integer, bytes, a set
    or a huge key anywhere under them is refused at load (exit 2, one line), in every format."""

    CASES = [
        ("strength: 20.0", "strength: 18446744073709551616"),  # settings
        ("  flat: 1.0", "  flat: 1.0\n  huge: 340282366920938463463374607431768211456"),  # a new key under settings
        ("n_starts: 3", "n_starts: 99999999999999999999999"),  # baselines
        ("  n_starts: 6\n", "  n_starts: 6\n  extra: -99999999999999999999999\n"),  # model
        ("beyond_data: false}\n- {k: 2", "beyond_data: false, z: 99999999999999999999999}\n- {k: 2"),  # a row
        ("embedding: null", "embedding: {model: m, dimension: 2, texts: 99999999999999999999999, mean: [0.1, 0.2]}"),
        ("embedding: null", "embedding: {model: m, dimension: 1, mean: [0.1], z: !!binary aGVsbG8=}"),
        ("tool_version: 0.1.0", "tool_version: 99999999999999999999999"),
        ("embedding: null", "embedding: null\nprovenance: {x: !!binary aGVsbG8=}"),
        ("embedding: null", "embedding: null\nprovenance: {x: !!set {a, b}}"),
        ("embedding: null", "embedding: null\nprovenance: {18446744073709551616: x}"),
        ("embedding: null", "embedding: null\nsources: [{a: 99999999999999999999999}]"),
        ("embedding: null", "embedding: null\ntransfer: {a: [99999999999999999999999]}"),
        ("embedding: null", "embedding: null\nreading: {a: {b: 99999999999999999999999}}"),
        ("embedding: null", "embedding: null\nwithout_transfer: [{k: 99999999999999999999999}]"),
    ]

    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_refused_in_every_format(self, saved_fit: Path, tmp_path: Path, case: int) -> None:
        fit = edit(saved_fit, tmp_path, *self.CASES[case])
        for res in report_all_formats(fit):
            assert res.exit_code == 2 and res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr  # type: ignore[attr-defined]

    def test_harmless_odd_values_pass_through(self, saved_fit: Path, tmp_path: Path) -> None:
        fit = edit(saved_fit, tmp_path, "embedding: null", "embedding: null\nprovenance: {retrieved: 2024-05-01, ratio: .nan}")
        doc = json.loads(invoke("report", fit, "-f", "json").stdout)
        assert doc["provenance"] == {"retrieved": "2024-05-01", "ratio": None}

    @pytest.mark.parametrize("old,new", [
        ("log_likelihood: -251", "log_likelihood: null\n  x: -251"),
        ("method_description: Dirichlet", "method_description: 5\nx: Dirichlet"),
        ("tie_rule: for even", "tie_rule: [1]\nx: for even"),
        ("interval: {confidence_level: 0.9,", "interval: {confidence_level: abc,"),
        ("interval: {confidence_level: 0.9,", "interval: {confidence_level: .nan,"),
        ("interval: {confidence_level: 0.9,", "interval: {confidence_level: 1e300,"),
        ("interval: {confidence_level: 0.9,", "interval: null\nx: {y: 0.9,"),
        ("source: ", "source: [1]\nx: "),
    ])
    def test_fields_the_tables_read(self, saved_fit: Path, tmp_path: Path, old: str, new: str) -> None:
        """Either refused with one line, or shown: never a traceback in any format."""
        fit = edit(saved_fit, tmp_path, old, new)
        for res in report_all_formats(fit):
            assert res.exit_code in (0, 2), res.output  # type: ignore[attr-defined]
            assert res.exit_code == 0 or res.stderr.count("\n") == 1  # type: ignore[attr-defined]


class TestConsistency:
    """Item 8 (and 12): a hand-edited fit must be a fit: checked on load, never passed to a gate."""

    CASES = {
        "weights sum to 50": ("weight: {NUM}", "weight: 49.234"),
        "low above high": ("low: {NUM}", "low: 0.9"),
        "estimate above high": ("estimate: {NUM}", "estimate: 0.5"),
        "items vs histogram": ("items: 120", "items: 121"),
        "judges vs histogram": ("judges: 11", "judges: 12"),
        "k twice": ("- {k: 2,", "- {k: 1,"),
        "no rows": ("error_rates:", "error_rates: []\nold_rows:"),
        "mean vs alpha and beta": ("mean: {NUM}", "mean: 0.9422"),
        "negative weight": ("weight: {NUM}", "weight: -0.234"),
        "alpha = beta = 1e308": ("alpha: 1.65", "alpha: 1.0e+308\n    x: 1.65"),
        "alpha = beta = 1e-320": ("alpha: 1.65", "alpha: 1.0e-320\n    x: 1.65"),
        "empirical above 1": ("empirical: {NUM}", "empirical: 1.5"),
        "histogram count negative": ("11: [3,", "11: [-3,"),
    }

    @pytest.mark.parametrize("name", list(CASES))
    def test_refused_before_the_gate(self, saved_fit: Path, tmp_path: Path, name: str) -> None:
        old, new = self.CASES[name]
        text = saved_fit.read_text()
        if name.startswith("alpha"):  # both parameters of the first component (and no mean to contradict them)
            value = name.split(" = ")[-1]
            text = re.sub(r"alpha: [0-9.e+-]+, beta: [0-9.e+-]+, mean: [0-9.e+-]+", f"alpha: {value}, beta: {value}", text, count=1)
            fit = tmp_path / "edited.yaml"
            fit.write_text(text)
        else:
            fit = edit(saved_fit, tmp_path, old, new)
        res = invoke("report", fit, "--max-error", "0.99", "--at-k", "1")
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "error: " in res.stderr, (name, res.output)
        assert "gate failed" not in res.stderr and not res.stdout
        if name.startswith("alpha"):
            assert "no valid distribution" in res.stderr

    def test_shipped_priors_pass(self) -> None:
        priors = sorted((Path(__file__).resolve().parents[2] / "configs" / "priors").glob("*.yaml"))
        assert priors
        res = invoke("report", *priors, "-f", "json")
        assert res.exit_code == 0, res.stderr


class TestFilesThatAreNotFits:
    """Item 23's saved-fit members, and item 9's: each says what is wrong, in one line, within the memory cap."""

    def test_messages(self, tmp_path: Path, saved_fit: Path) -> None:
        (tmp_path / "loop.yaml").symlink_to("loop2.yaml")
        (tmp_path / "loop2.yaml").symlink_to("loop.yaml")
        (tmp_path / "broken.yaml").symlink_to("gone.yaml")
        (tmp_path / "u16.yaml").write_bytes(saved_fit.read_text().encode("utf-16"))
        (tmp_path / "latin1.yaml").write_bytes("dataset: caf\xe9\n".encode("latin-1"))
        (tmp_path / "empty").mkdir()
        cases = {
            tmp_path / "loop.yaml": "symbolic link loop",
            tmp_path / "broken.yaml": "broken symbolic link",
            tmp_path / "u16.yaml": "UTF-16",
            tmp_path / "latin1.yaml": "not UTF-8",
            Q: "judgment data",
            tmp_path / "empty": "no saved fit",
            tmp_path / "nope.yaml": "no such file",
            str(tmp_path / "*.yml"): "pattern matches no",
        }
        for path, words in cases.items():
            res = invoke("report", path)
            assert res.exit_code == 2 and words in res.stderr and res.stderr.count("\n") == 1, (path, res.stderr)

    def test_directory_and_glob_are_read(self, saved_fit: Path, tmp_path: Path) -> None:
        for name in ("a.yaml", "b.yml"):
            (tmp_path / name).write_bytes(saved_fit.read_bytes())
        for arg in (tmp_path, str(tmp_path / "*.y*ml")):
            res = invoke("report", arg, "-f", "json")
            assert res.exit_code == 0 and len(res.stdout.splitlines()) == 2

    @pytest.mark.parametrize("how", ["report", "sources", "config"])
    def test_endless_file_is_capped(self, how: str, tmp_path: Path, embedded_fit: tuple[Path, Path]) -> None:
        zero = tmp_path / "zero.yaml"
        zero.symlink_to("/dev/zero")
        args = {"report": ["report", zero], "sources": ["transfer", Q, "--sources", zero],
                "config": ["transfer", Q, "--sources", embedded_fit[0], "--config", zero]}[how]
        assert "larger than 16 MiB" in one_error_line(run_cli(*args))

    def test_standard_input(self, saved_fit: Path) -> None:
        p = run_cli("report", "-", "-f", "csv", input=saved_fit.read_bytes())
        assert p.returncode == 0 and p.stdout.startswith(b"dataset,k"), p.stderr
        assert "only once" in one_error_line(run_cli("report", "-", "-", input=saved_fit.read_bytes()))

    def test_python_tag_in_config_is_refused(self, tmp_path: Path, embedded_fit: tuple[Path, Path]) -> None:
        for tag in ("!!python/object/apply:os.system ['echo hi']", "!!python/name:os.system", "!custom 5"):
            config = tmp_path / "c.yaml"
            config.write_text(f"sigmoid_a: {tag}\n")
            res = invoke("transfer", Q, "--sources", embedded_fit[0], "--config", config)
            assert res.exit_code == 2 and "refused" in res.stderr and "malformed" not in res.stderr, res.stderr


class TestConfigNumbers:
    """Item 10 in configs: a number beyond 2^53 is refused (float() overflowed); 1e-3 is a number (YAML 1.2)."""

    @pytest.mark.parametrize("line,words", [
        ("sigmoid_a: " + "9" * 400, "beyond 2^53"),
        ("sigmoid_a: 1e400", "finite"),
        ("grid_concentrations: [99999999999999999999999]", "beyond 2^53"),
        ("shift_step: 1e-3", "shift_step"),  # read as a number, then its own range check speaks
    ])
    def test_refused_with_their_reason(self, line: str, words: str, tmp_path: Path, embedded_fit: tuple[Path, Path]) -> None:
        config = tmp_path / "c.yaml"
        config.write_text(line + "\n")
        res = invoke("transfer", Q, "--sources", embedded_fit[0], "--config", config)
        assert res.exit_code == 2 and words in res.stderr and "expected a number" not in res.stderr, res.stderr

    def test_exponent_names_round_trip(self, tmp_path: Path) -> None:
        data = tmp_path / "1e5.jsonl"
        data.write_bytes(Q.read_bytes())
        assert invoke("fit", data, "--save", tmp_path / "1e5.yaml", "-f", "csv").exit_code == 0
        assert "dataset: '1e5'" in (tmp_path / "1e5.yaml").read_text()
        assert json.loads(invoke("report", tmp_path / "1e5.yaml", "-f", "json").stdout)["dataset"] == "1e5"
