"""The teaching dashboard in a real browser: start Voilà on
notebooks/demo.ipynb on 127.0.0.1 and open it in Debian's Chromium through
Playwright (the same browser and flags as `labdriver`, which drives
JupyterLab).

Used by tests/test_demo.py and for docs/demo.png. Voilà runs every cell
before it answers the first request, so the page arrives with the explorer
built; the widgets are then drawn in the browser. The notebook's data
(targets, the demo's record store) comes from WORKBENCH_DATA.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from .labdriver import CHROMIUM, CHROMIUM_ARGS, LabPage
from .labdriver import missing as _lab_missing

REPO = Path(__file__).resolve().parents[1]
DEMO = "notebooks/demo.ipynb"


def missing() -> str | None:
    """Why a Voilà browser run cannot happen here, or None."""
    why = _lab_missing()
    if why is not None:
        return why
    try:
        import voila  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def voila_server(data_dir: Path, log: Path, notebook: str = DEMO, timeout_s: float = 120):
    """Voilà serving `notebook` on a free port of 127.0.0.1, the notebook's
    data in `data_dir`; yields the base URL once the server answers (the
    notebook itself runs on the first page request)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    if not (data_dir / "targets").exists():  # the hardware tables come along
        shutil.copytree(REPO / "data" / "targets", data_dir / "targets")
    port = _free_port()
    env = {**os.environ, "WORKBENCH_DATA": str(data_dir)}
    cmd = [sys.executable, "-m", "voila", str(REPO / notebook), "--no-browser",
           "--Voila.ip=127.0.0.1", f"--port={port}", "--show_tracebacks=True"]
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:  # a static file: answered without running the notebook
                urllib.request.urlopen(f"{base}/voila/static/voila.js", timeout=2)
                break
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"Voilà did not start; see {log}") from None
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


class DemoPage(LabPage):
    """The dashboard loaded in Chromium: the explorer's page helpers
    (`LabPage`: clicks, keys, tabs, the picker) and the tour's."""

    def __init__(self, page):
        super().__init__(page)
        self.load_s = 0.0  # page request → explorer on show (set by demo_page)

    def tour_text(self) -> str:
        return self.page.inner_text(".wb-tour .widget-html-content >> nth=0")

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@contextmanager
def demo_page(data_dir: Path, log: Path, width: int = 1500, height: int = 1100,
              timeout_s: float = 120):
    """Voilà serving the dashboard, open in Chromium with the explorer shown."""
    from playwright.sync_api import sync_playwright
    with voila_server(data_dir, log, timeout_s=timeout_s) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            t0 = time.perf_counter()
            page.goto(base + "/", timeout=timeout_s * 1e3)
            page.wait_for_selector(".wb-explorer", timeout=timeout_s * 1e3)
            demo = DemoPage(page)
            page.wait_for_function("(() => { const e = [...document.querySelectorAll("
                                   "'.wb-explorer .widget-html-content')]; return e.some("
                                   "x => x.textContent.includes('bound')) })()",
                                   timeout=timeout_s * 1e3)
            demo.load_s = time.perf_counter() - t0
            yield demo
        finally:
            browser.close()


__all__ = ["DEMO", "DemoPage", "demo_page", "missing", "voila_server"]
