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
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from .labdriver import LabPage, chromium_page, free_port, served, with_targets
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


@contextmanager
def voila_server(data_dir: Path, log: Path, notebook: str = DEMO, timeout_s: float = 120):
    """Voilà serving `notebook` on a free port of 127.0.0.1, the notebook's
    data in `data_dir`; yields the base URL once the server answers (the
    notebook itself runs on the first page request)."""
    with_targets(data_dir)
    port = free_port()
    env = {**os.environ, "WORKBENCH_DATA": str(data_dir)}
    cmd = [sys.executable, "-m", "voila", str(REPO / notebook), "--no-browser",
           "--Voila.ip=127.0.0.1", f"--port={port}", "--show_tracebacks=True"]
    base = f"http://127.0.0.1:{port}"
    # a static file: answered without running the notebook
    with served(cmd, env, log, f"{base}/voila/static/voila.js", "Voilà", timeout_s):
        yield base


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
    with voila_server(data_dir, log, timeout_s=timeout_s) as base, \
            chromium_page(width, height) as page:
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


__all__ = ["DEMO", "DemoPage", "demo_page", "missing", "voila_server"]
