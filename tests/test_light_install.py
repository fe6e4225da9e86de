"""The light install (issue 30): a fresh virtual environment with `pip install <wheel of this checkout>` and no
extra runs fit, score, judges, doctor and sample on sample_data/, torch is not importable in it, and transfer says
which extra to install (one line, exit 2).

The wheel is built once (`pip wheel --no-deps`); the venv is made without pip and filled by this interpreter's pip
(`pip --python`), from the registries pip is configured with (PyPI), through pip's cache: about 30-60 s on 2 cores
(docs/INSTALL.md has the uncached sizes and times). Marked `slow` and `install`: `make test` runs it, the fast tier
does not; BETACONFORM_SKIP_INSTALL_TEST=1 skips it where no registry can be reached.
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
    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # pip must not see this checkout as installed
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", work / "wheels", src, env=bare)
    wheel = next((work / "wheels").glob("betaconform_cli-*.whl"))
    env = work / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", env)
    log = run(sys.executable, "-m", "pip", "--python", env / "bin" / "python", "install", "--disable-pip-version-check",
              wheel, env=bare)
    (work / "install.log").write_text(log.stdout + log.stderr)
    if not (env / "bin" / "betaconform").exists():
        pytest.fail(f"pip did not install betaconform into {env}:\n{log.stdout[-3000:]}\n{log.stderr[-2000:]}")
    return env


def test_the_light_install_runs_every_command_but_embeddings(venv: Path, tmp_path: Path) -> None:
    py = venv / "bin" / "python"
    cli = venv / "bin" / "betaconform"
    clean = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH: the installed package
    absent = run(py, "-c", "import importlib.util as u; print([m for m in ('torch', 'sentence_transformers', 'transformers', "
                           "'matplotlib') if u.find_spec(m) is not None])", env=clean)
    assert absent.stdout.strip() == "[]"
    assert run(py, "-c", "import torch", check=False, env=clean).returncode != 0
    data = SAMPLE / "qa_judges.jsonl"
    verdicts = SAMPLE / "system_verdicts.jsonl"
    for args in (("fit", SAMPLE), ("score", verdicts), ("judges", verdicts), ("doctor", SAMPLE), ("sample", data),
                 ("fit", data, "--ks", "1-3", "--save", tmp_path / "qa.yaml"), ("report", tmp_path / "qa.yaml")):
        res = run(cli, *args, "-f", "json", check=False, env=clean)
        assert res.returncode in ((0, 1) if args[0] == "sample" else (0,)), (args, res.stderr)  # sample: 1 is "continue"
        assert res.stdout.lstrip().startswith(("{", "[")), (args, res.stdout[:200])
    # the library too, on a list of dicts (no pandas in the light install)
    lib = run(py, "-c", "import betaconform_cli as bc; print(round(bc.fit([{'judgments': [1, 1, 0]}] * 5 + "
                        "[{'judgments': [0, 1, 0]}] * 2, ks=[1, 3]).error(3)[0], 3))", env=clean)
    assert 0 < float(lib.stdout) < 1
    refused = run(cli, "transfer", data, "--sources", tmp_path / "qa.yaml", check=False, env=clean)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "[embeddings]" in lines[0] and "Traceback" not in refused.stderr
