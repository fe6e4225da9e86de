"""Issue 25, items 1-3 (and the Action's gate papercut), as real processes: trust at the door.

1. Names from data never become markup, commands or outputs: hostile judge, dataset and file names through fit,
   judges, score and doctor into HTML, the job summary, JUnit, CSV, the terminal and --save-dir's file names; the
   Action's script with files named like options and inputs holding line breaks.
2. User text is never a format template: option values, file names and judge names holding `{0}`,
   `{0.__class__}`, `%s` reach messages as written, exit 2 with one line, never 70.
3. Nothing the user holds is overwritten: --labels, --pool and the job summary against -o, --junit, --save and
   sample's next items; symbolic links at --save-dir's targets and inside the embedding cache; SIGTERM in a write.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from .conftest import ROOT, Q, cli_env, one_error_line, run_cli, write_jsonl

SYSTEM = ROOT / "sample_data" / "system_verdicts.jsonl"  # named judges, pass/fail verdicts, gold on some items
JUDGE_NAMES = [
    "<img src=https://evil.example/x.png>",
    "run <!-- ",
    "[bold red]boom[/]",
    "a|b `c` *d*",
    "x\u202ey\u2066z",
    "c1\x85\x9bnel\u200b",
    "=cmd|'/C calc'!A0",
]
DATASET = "evil <!-- [bold]x \u202e\u200b ::warning::w"
INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _hostile(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in SYSTEM.read_text(encoding="utf-8").splitlines()]
    rename = dict(zip(rows[0]["verdicts"], JUDGE_NAMES))
    for r in rows:
        r["verdicts"] = {rename[k]: v for k, v in r["verdicts"].items()}
    return write_jsonl(tmp_path / f"{DATASET}.jsonl", rows)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: set[str] = set()
        self.comments = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs |= {a for a, _ in attrs}

    def handle_comment(self, data: str) -> None:
        self.comments += 1


class TestNamesFromData:
    @pytest.mark.parametrize("command", ["fit", "judges", "score", "doctor"])
    def test_every_output_of_a_command(self, tmp_path: Path, command: str) -> None:
        data = _hostile(tmp_path)
        summary = tmp_path / "summary.md"
        env = cli_env(GITHUB_STEP_SUMMARY=str(summary))
        html = run_cli(command, data, "-o", tmp_path / "r.html", "--junit", tmp_path / "j.xml", env=env)
        assert html.returncode == 0, html.stderr.decode()[-800:]
        page = _Tags()
        page.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
        assert not {"img", "script", "iframe", "a", "object"} & set(page.tags) and not page.comments
        assert not {a for a in page.attrs if a.startswith("on") or a in ("src", "href")}
        md = summary.read_text(encoding="utf-8")
        assert "<" not in md, re.findall(r".{0,60}<.{0,20}", md)
        assert "evil &lt;!--" in md and ("boom" not in md or "\\[bold red]boom" in md)  # shown as written, escaped
        assert not INVISIBLE.search(md.replace("\n", "")) and not re.search(r"^\s*::", md, re.M)
        root = ET.parse(tmp_path / "j.xml").getroot()
        for el in root.iter():
            assert not any(INVISIBLE.search(v) for v in el.attrib.values()), el.attrib
        # the terminal: every name as written (rich markup shown, not applied), nothing invisible, no workflow command
        out = html.stdout.decode("utf-8") + html.stderr.decode("utf-8")
        assert not INVISIBLE.search(out.replace("\n", "")) and not re.search(r"^\s*::", out, re.M)
        if command in ("judges", "doctor"):
            assert "[bold red]boom[/]" in html.stdout.decode("utf-8")
        as_csv = run_cli(command, data, "-f", "csv", env=cli_env())
        assert as_csv.returncode == 0
        text = as_csv.stdout.decode("utf-8")
        assert not INVISIBLE.search(text.replace("\n", ""))
        for row in csv.reader(text.splitlines()):
            assert not any(cell.startswith(("=", "@", "::")) for cell in row), row

    def test_report_of_a_saved_fit(self, tmp_path: Path) -> None:
        """The dataset name travels inside a saved fit: report's HTML, JUnit and job summary escape it too."""
        saved = tmp_path / "s.yaml"
        assert run_cli("fit", _hostile(tmp_path), "--save", saved, "-f", "json").returncode == 0
        summary = tmp_path / "summary.md"
        r = run_cli("report", saved, "--max-error", "0.01", "--at-k", "3", "-o", tmp_path / "r.html", "--junit",
                    tmp_path / "j.xml", env=cli_env(GITHUB_STEP_SUMMARY=str(summary)))
        assert r.returncode == 1, r.stderr.decode()[-500:]
        page = _Tags()
        page.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
        assert not page.comments and "img" not in page.tags
        md = summary.read_text(encoding="utf-8")
        assert "<" not in md and "gate failed" in md and "evil &lt;!--" in md
        failure = next(el for el in ET.parse(tmp_path / "j.xml").getroot().iter("failure"))
        assert not INVISIBLE.search(failure.get("message", "")) and "evil <!--" in failure.get("message", "")

    def test_save_dir_file_names(self, tmp_path: Path) -> None:
        """Dataset names from a column, with bidi, C1 and zero-width characters: plain file names in the folder."""
        table = tmp_path / "t.csv"
        names = ["a\u202eb", "c\x85d", "e\u200bf", "g\u2066h\U000e0041"]
        lines = ["id,set,gold,j1,j2,j3"]
        for i in range(80):
            g = "pass" if i % 3 else "fail"
            other = "fail" if g == "pass" else "pass"
            lines.append(f"i{i},{names[i % 4]},{g},{g},{g if i % 5 else other},{g if i % 7 else other}")
        table.write_text("\n".join(lines) + "\n", encoding="utf-8")
        r = run_cli("fit", table, "--dataset-col", "set", "--save-dir", tmp_path / "fits", "-f", "json")
        assert r.returncode == 0, r.stderr.decode()[-500:]
        saved = sorted(p.name for p in (tmp_path / "fits").iterdir())
        assert len(saved) == 4 and not any(INVISIBLE.search(n) for n in saved), saved


class TestTemplates:
    @pytest.mark.parametrize("value", ["{0}", "{0.__class__}", "{1}", "{}", "%s", "{0!r:>{1}}"])
    def test_ks(self, value: str) -> None:
        err = one_error_line(run_cli("fit", Q, "--ks", value))
        assert repr(value) in err and "--ks" in err

    @pytest.mark.parametrize("args", [
        ("judges", Q, "--cost", "{0.__class__}", "--max-error", "0.3"),
        ("judges", Q, "--ensemble", "{0},{1.__init__}"),
        ("fit", Q, "-o", "out{0.__class__}"),
        ("evaluate", Q, "--r", "{0.__class__}"),
        ("sample", Q, "--rule", "{0.__class__}"),
        ("score", SYSTEM, "--positive", "{0.__class__}"),
    ])
    def test_option_values(self, args: tuple[object, ...]) -> None:
        err = one_error_line(run_cli(*args))
        assert "{" in err  # the value as given, not a formatted other text

    def test_file_and_judge_names(self, tmp_path: Path) -> None:
        odd = tmp_path / "{0.__class__} %s {1}.jsonl"
        odd.write_text('{"judgments": [1, 0]}\nnot json\n', encoding="utf-8")
        err = one_error_line(run_cli("fit", odd))
        assert "{0.__class__} %s {1}.jsonl" in err
        rows = [json.loads(line) for line in SYSTEM.read_text(encoding="utf-8").splitlines()]
        for r in rows:
            r["verdicts"] = {("{0.__class__}" if k == "gpt-4o" else k): v for k, v in r["verdicts"].items()}
        data = write_jsonl(tmp_path / "{2}.jsonl", rows)
        err = one_error_line(run_cli("judges", data, "--ensemble", "{0.__class__},nobody"))
        assert "nobody" in err


class TestProtectedPaths:
    @staticmethod
    def _labels(tmp_path: Path, suffix: str = ".csv") -> tuple[Path, Path]:
        rows = [json.loads(line) for line in SYSTEM.read_text(encoding="utf-8").splitlines()]
        gold = [(r["id"], r["label"]) for r in rows if "label" in r]
        for r in rows:
            r.pop("label", None)
        data = write_jsonl(tmp_path / "verdicts.jsonl", rows)
        labels = tmp_path / f"labels{suffix}"
        if suffix == ".csv":
            labels.write_text("id,label\n" + "".join(f"{i},{g}\n" for i, g in gold), encoding="utf-8")
        else:
            write_jsonl(labels, [{"id": i, "label": g} for i, g in gold])
        return data, labels

    @pytest.mark.parametrize("command,output", [("fit", "-o"), ("score", "--junit"), ("judges", "-o"), ("doctor", "--junit")])
    def test_labels_are_inputs(self, tmp_path: Path, command: str, output: str) -> None:
        data, labels = self._labels(tmp_path)
        before = labels.read_bytes()
        alias = tmp_path / "alias.csv"
        alias.symlink_to(labels)
        for target in (labels, alias):
            err = one_error_line(run_cli(command, data, "--labels", labels, output, target, "-f", "csv"))
            assert "labels" in err
        assert labels.read_bytes() == before

    def test_next_items_onto_the_labels(self, tmp_path: Path) -> None:
        data, labels = self._labels(tmp_path, ".jsonl")
        before = labels.read_bytes()
        one_error_line(run_cli("sample", data, "--labels", labels, "--pool", data, "-o", labels))
        assert labels.read_bytes() == before

    def test_summary_is_neither_an_input_nor_another_output(self, tmp_path: Path) -> None:
        data, labels = self._labels(tmp_path)
        before = labels.read_bytes()
        err = one_error_line(run_cli("judges", data, "--labels", labels, env=cli_env(GITHUB_STEP_SUMMARY=str(labels))))
        assert "GITHUB_STEP_SUMMARY" in err and labels.read_bytes() == before
        for args in (("-o", "out.json"), ("--junit", "out.json"), ("--save", "out.json")):
            target = tmp_path / "out.json"
            name = "out.yaml" if args[0] == "--save" else "out.json"
            target = tmp_path / name
            r = run_cli("fit", Q, args[0], target, env=cli_env(GITHUB_STEP_SUMMARY=str(target)))
            assert "GITHUB_STEP_SUMMARY" in one_error_line(r) and not target.exists()

    def test_what_is_not_read_may_be_replaced(self, tmp_path: Path) -> None:
        """A folder's own earlier outputs are not its inputs: `fit data/ --save-dir data/ -o data/r.json` runs twice."""
        data = tmp_path / "data"
        data.mkdir()
        shutil.copy(Q, data / "q.jsonl")
        for _ in range(2):
            r = run_cli("fit", data, "--save-dir", data, "-o", data / "r.json")
            assert r.returncode == 0, r.stderr.decode()[-500:]
        assert (data / "q.yaml").exists() and (data / "q.jsonl").read_bytes() == Q.read_bytes()

    def test_link_at_a_save_dir_target(self, tmp_path: Path) -> None:
        """A link committed at fits/qa_judges.yaml: refused, naming it; the file it points to is not created."""
        fits = tmp_path / "fits"
        fits.mkdir()
        outside = tmp_path / "outside.yaml"
        (fits / "qa_judges.yaml").symlink_to(outside)
        err = one_error_line(run_cli("fit", Q, "--save-dir", fits))
        assert "qa_judges.yaml" in err and "link" in err and not outside.exists()
        victim = tmp_path / "victim.yaml"
        victim.write_text("keep\n")
        (fits / "qa_judges.yaml").unlink()
        (fits / "qa_judges.yaml").symlink_to(victim)
        one_error_line(run_cli("fit", Q, "--save-dir", fits))
        assert victim.read_text() == "keep\n"

    def test_link_inside_the_embedding_cache(self, tmp_path: Path, embedded_fit: tuple[Path, Path]) -> None:
        _, filled = embedded_fit
        cache = tmp_path / "cache"
        shutil.copytree(filled, cache, symlinks=True)
        model = next(p for p in cache.iterdir() if p.is_dir())
        sub = next(p for p in model.iterdir() if p.is_dir())
        elsewhere = tmp_path / "elsewhere"
        shutil.move(str(sub), elsewhere)
        sub.symlink_to(elsewhere, target_is_directory=True)  # a link to a folder in the path below the cache
        err = one_error_line(run_cli("fit", Q, "--embed", "--save", tmp_path / "q.yaml", "--cache-dir", cache))
        assert "link" in err and str(sub.name) in err and not (tmp_path / "q.yaml").exists()


def test_sigterm_during_a_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A writer killed by SIGTERM (a cancelled CI job) in the middle of a write: exit 143, the old file whole,
    and no .bc- temporary file beside it."""
    target = tmp_path / "out.json"
    target.write_text("old\n")
    script = (
        "import os, signal, time\n"
        "from betaconform_cli import atomic\n"
        "def write(fh):\n"
        "    fh.write(b'new, half')\n"
        "    fh.flush()\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(5)\n"
        f"atomic.write_bytes({str(target)!r}, b'') if False else atomic.atomic_write({str(target)!r}, write)\n"
    )
    p = subprocess.run([sys.executable, "-c", script], env=cli_env(), capture_output=True, timeout=60, check=False)
    assert p.returncode == 128 + signal.SIGTERM, p.stderr.decode()[-500:]
    assert target.read_text() == "old\n"
    assert [q.name for q in tmp_path.iterdir()] == ["out.json"]


def test_sigterm_from_outside_during_a_long_write(tmp_path: Path) -> None:
    target = tmp_path / "big.bin"
    script = (
        "import sys, time\n"
        "from betaconform_cli import atomic\n"
        "def write(fh):\n"
        "    print('writing', flush=True)\n"
        "    for _ in range(600):\n"
        "        fh.write(b'x' * 1024)\n"
        "        time.sleep(0.05)\n"
        f"atomic.atomic_write({str(target)!r}, write)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", script], env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout is not None and p.stdout.readline() == b"writing\n"
        time.sleep(0.2)
        os.kill(p.pid, signal.SIGTERM)
        assert p.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert list(tmp_path.iterdir()) == []


class TestAction:
    """scripts/github-action.sh run here with a fake $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY."""

    @staticmethod
    def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
        full = cli_env(BC_INSTALL="none", BC_PYTHON=sys.executable, GITHUB_OUTPUT=str(tmp_path / "gh-output"),
                       GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), **env)
        return subprocess.run(["bash", str(ROOT / "scripts" / "github-action.sh")], capture_output=True, text=True,
                              env=full, cwd=tmp_path, timeout=120, check=False)

    @staticmethod
    def outputs(path: Path) -> dict[str, str]:
        """$GITHUB_OUTPUT as the runner reads it: name=value lines and name<<DELIMITER blocks."""
        lines = path.read_text().split("\n")
        out: dict[str, str] = {}
        i = 0
        while i < len(lines):
            line = lines[i]
            if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
                name, delimiter = line.split("<<", 1)
                end = lines.index(delimiter, i + 1)
                assert name not in out
                out[name] = "\n".join(lines[i + 1:end])
                i = end + 1
            elif line:
                name, value = line.split("=", 1)
                assert name not in out
                out[name] = value
                i += 1
            else:
                i += 1
        return out

    @pytest.mark.parametrize("name", ["--help", "--on=estimate", "--save-dir=saved", "-o=x.jsonl"])
    def test_files_named_like_options_are_files(self, tmp_path: Path, name: str) -> None:
        (tmp_path / name).write_bytes(Q.read_bytes())
        r = self._run(tmp_path, BC_FILES=name, BC_MAX_ERROR="0.01", BC_AT_K="5")
        assert r.returncode == 1, r.stderr[-800:]  # the gate ran on the file, and failed
        assert f"gate failed: {name.removesuffix('.jsonl')}:" in r.stderr
        assert self.outputs(tmp_path / "gh-output") == {"exit-code": "1", "junit": "", "html": ""}
        assert not (tmp_path / "saved").exists() and not (tmp_path / "x.jsonl").exists()

    @pytest.mark.parametrize("field", ["BC_JUNIT", "BC_HTML"])
    def test_a_line_break_in_an_output_input_is_refused(self, tmp_path: Path, field: str) -> None:
        r = self._run(tmp_path, BC_FILES=str(Q), BC_MAX_ERROR="0.01", **{field: "j.xml\nexit-code=0"})
        assert r.returncode == 2 and "line break" in r.stderr
        assert not (tmp_path / "gh-output").exists() or "exit-code=0" not in (tmp_path / "gh-output").read_text()

    def test_outputs_use_the_delimiter_syntax(self, tmp_path: Path) -> None:
        r = self._run(tmp_path, BC_FILES=str(Q), BC_MAX_ERROR="0.01", BC_JUNIT="j.xml", BC_HTML="r.html")
        assert r.returncode == 1
        text = (tmp_path / "gh-output").read_text()
        delimiters = re.findall(r"^[a-z-]+<<(\S+)$", text, re.M)
        assert len(delimiters) == 3 and len(set(delimiters)) == 3 and all(len(d) > 20 for d in delimiters)
        assert self.outputs(tmp_path / "gh-output") == {"exit-code": "1", "junit": "j.xml", "html": "r.html"}

    @pytest.mark.parametrize("command", ["score", "doctor", "transfer", "evaluate", "sample"])
    def test_max_error_only_where_the_command_gates_on_it(self, tmp_path: Path, command: str) -> None:
        r = self._run(tmp_path, BC_COMMAND=command, BC_FILES=str(Q), BC_MAX_ERROR="0.2")
        assert r.returncode == 2 and "max-error" in r.stderr and "No such option" not in r.stderr
        assert r.stderr.count("\n") == 1

    def test_judges_gates_without_at_k(self, tmp_path: Path) -> None:
        r = self._run(tmp_path, BC_COMMAND="judges", BC_FILES=str(SYSTEM), BC_MAX_ERROR="0.9", BC_AT_K="3")
        assert r.returncode == 0, r.stderr[-800:]
        assert "--at-k" not in r.stderr
