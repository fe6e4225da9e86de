"""The GitHub Action's install step (scripts/github-action.sh): the light package unless the command needs text
embeddings (transfer, fit --embed, evaluate --transfer) or figures (evaluate --plot). BC_PYTHON is a stand-in that
records each call and does nothing, so nothing is installed and the pip commands are seen as the script runs them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pip_calls(tmp_path: Path, command: str, args: str = "") -> list[str]:
    log = tmp_path / "calls.log"
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    fake.chmod(0o755)
    env = {**os.environ, "BC_PYTHON": str(fake), "BC_COMMAND": command, "BC_FILES": "data.jsonl", "BC_ARGS": args,
           "BC_INSTALL": "/src/betaconform"}
    env.pop("GITHUB_OUTPUT", None)
    res = subprocess.run(["bash", str(ROOT / "scripts" / "github-action.sh")], check=False, env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=30)
    assert res.returncode == 0, res.stderr
    return [line for line in log.read_text().splitlines() if line.startswith("-m pip")]


@pytest.mark.parametrize("command, args, spec", [
    ("fit", "--ks 1,3", "/src/betaconform"),
    ("score", "", "/src/betaconform"),
    ("fit", "--save x.yaml --embed", "/src/betaconform[embeddings]"),
    ("transfer", "--sources fits/", "/src/betaconform[embeddings]"),
    ("evaluate", "--transfer", "/src/betaconform[embeddings]"),
    ("evaluate", "--plot f.png", "/src/betaconform[plot]"),
    ("evaluate", "--transfer --plot f.png", "/src/betaconform[embeddings,plot]"),
])
def test_what_the_action_installs(tmp_path: Path, command: str, args: str, spec: str) -> None:
    calls = pip_calls(tmp_path, command, args)
    assert calls[-1].endswith(f"install --quiet --disable-pip-version-check {spec}")
    torch = [c for c in calls if " torch " in c]
    if "embeddings" in spec and os.uname().sysname == "Linux":  # the CPU wheel first, never the CUDA-sized default
        assert len(torch) == 1 and "download.pytorch.org/whl/cpu" in torch[0]
    else:
        assert torch == []
