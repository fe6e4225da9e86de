"""The HTML report in a real headless browser (Chromium): it renders (the screenshot is not blank), logs no
console error, and fetches nothing (every host name resolves to nowhere). Skipped where no Chromium is installed
(`apt-get install chromium`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SAMPLE, invoke

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome", "chrome") if shutil.which(b)), None)
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (apt-get install chromium)")]


def screenshot(page: Path, png: Path, width: int = 1000, height: int = 1400) -> subprocess.CompletedProcess[str]:
    """Load `page` headless, offline, and save a screenshot; the browser's log (console messages) on stderr."""
    assert BROWSER is not None
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={png.parent / 'chromium-profile'}",  # its own profile: two browsers at once (xdist) would share a lock
         f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )


def console_errors(log: str) -> list[str]:
    return [x for x in log.splitlines() if "CONSOLE" in x or "ERR_NAME_NOT_RESOLVED" in x or "Uncaught" in x]


@pytest.mark.parametrize("args", [("fit", SAMPLE), ("judges", SAMPLE / "pairwise_verdicts.jsonl")])
def test_report_renders(runner, tmp_path: Path, args):
    from matplotlib.image import imread

    page = tmp_path / "report.html"
    invoke(runner, *args, "-o", page)
    png = tmp_path / "shot.png"
    r = screenshot(page, png)
    assert png.exists(), r.stderr[-2000:]
    assert console_errors(r.stderr) == []
    img = imread(png)[..., :3]
    ink = (img.min(axis=2) < 0.9).mean()
    colours = len(np.unique((img.reshape(-1, 3) * 255).astype(np.uint8), axis=0))
    assert 0.02 < ink < 0.9 and colours > 20  # text, tables and coloured charts: not blank, not one colour

