"""The light install (issue 30): a fresh virtual environment with `pip install <wheel of this checkout>` and no
extra runs fit, score, judges, doctor and sample on sample_data/, torch is not importable in it, and transfer says
which extra to install (one line, exit 2).

The wheel is built once, the venv is made without pip and filled from the registries (PyPI): by `uv` where the dev
install has it (`uv build`, `uv venv`, `uv pip install`: hardlinks from uv's cache, about 3 s where pip took 30-60 s
on 2 cores), else, or with BETACONFORM_INSTALLER=pip, by this interpreter's pip as docs/INSTALL.md does it (`pip
wheel --no-deps`, `pip --python VENV install`). Both install the same wheel with the dependencies its metadata
names, into a venv that does not see this one's packages. Marked `slow` and `install`: `make test` runs it (first,
tests/conftest.py orders it so), the fast tier does not; BETACONFORM_SKIP_INSTALL_TEST=1 skips it where no registry
can be reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"

pytestmark = [pytest.mark.slow, pytest.mark.install]


def run(*args: str | Path, check: bool = True, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(a) for a in args], check=False, capture_output=True, text=True, timeout=timeout, env=env)
    if check and res.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {res.returncode}:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    return res


def uv_binary() -> str | None:
    """uv from the dev install (the `uv` package puts its binary beside this interpreter), or on PATH."""
    if os.environ.get("BETACONFORM_INSTALLER", "uv") == "pip":
        return None
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("BETACONFORM_SKIP_INSTALL_TEST"):
        pytest.skip("BETACONFORM_SKIP_INSTALL_TEST is set")
    work = tmp_path_factory.mktemp("light")
    src = work / "src"  # a copy of what the wheel holds: building leaves build/ and *.egg-info where it runs
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "betaconform_cli", src / "betaconform_cli", ignore=shutil.ignore_patterns("__pycache__"))
    bare = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}  # not this checkout
    env = work / "venv"
    uv = uv_binary()
    if uv:
        run(uv, "build", "--quiet", "--wheel", "--python", sys.executable, "--out-dir", work / "wheels", src, env=bare)
        run(uv, "venv", "--quiet", "--python", sys.executable, env, env=bare)
        install = [uv, "pip", "install", "--python", env / "bin" / "python"]
    else:
        run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", work / "wheels", src, env=bare)
        run(sys.executable, "-m", "venv", "--without-pip", env)
        install = [sys.executable, "-m", "pip", "--python", env / "bin" / "python", "install", "--disable-pip-version-check"]
    wheel = next((work / "wheels").glob("betaconform_cli-*.whl"))
    log = run(*install, wheel, env=bare)
    (work / "install.log").write_text(log.stdout + log.stderr)
    if not (env / "bin" / "betaconform").exists():
        pytest.fail(f"{install[0]} did not install betaconform into {env}:\n{log.stdout[-3000:]}\n{log.stderr[-2000:]}")
    return env


def test_the_light_install_runs_every_command_but_embeddings(venv: Path, tmp_path: Path) -> None:
    py = venv / "bin" / "python"
    cli = venv / "bin" / "betaconform"
    clean = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH: the installed package
    # one process: none of the heavy extras can be found (so `import torch` fails), and the library runs on a list of
    # dicts (no pandas in the light install)
    probe = run(py, "-c", "import importlib.util as u; import betaconform_cli as bc; "
                          "print([m for m in ('torch', 'sentence_transformers', 'transformers', 'matplotlib') "
                          "if u.find_spec(m) is not None]); print(round(bc.fit([{'judgments': [1, 1, 0]}] * 5 + "
                          "[{'judgments': [0, 1, 0]}] * 2, ks=[1, 3]).error(3)[0], 3))", env=clean)
    absent, error = probe.stdout.split("\n")[:2]
    assert absent == "[]", probe.stdout
    assert 0 < float(error) < 1
    data = SAMPLE / "qa_judges.jsonl"
    verdicts = SAMPLE / "system_verdicts.jsonl"
    for args in (("fit", SAMPLE), ("score", verdicts), ("judges", verdicts), ("doctor", SAMPLE), ("sample", data),
                 ("fit", data, "--ks", "1-3", "--save", tmp_path / "qa.yaml"), ("report", tmp_path / "qa.yaml")):
        res = run(cli, *args, "-f", "json", check=False, env=clean)
        assert res.returncode in ((0, 1) if args[0] == "sample" else (0,)), (args, res.stderr)  # sample: 1 is "continue"
        assert res.stdout.lstrip().startswith(("{", "[")), (args, res.stdout[:200])
    refused = run(cli, "transfer", data, "--sources", tmp_path / "qa.yaml", check=False, env=clean)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "[embeddings]" in lines[0] and "Traceback" not in refused.stderr
