"""The teaching dashboard (`make demo`) end to end: Voilà serving
notebooks/demo.ipynb on 127.0.0.1, Debian's Chromium driven by Playwright.
The explorer must appear without any code on the page, a value clicked in
the choices column must change the status line and the walk-through's Next
its text. Skips where Chromium, Playwright or Voilà is missing.

`DEMO_SHOT=docs/demo.png pytest tests/test_demo.py` also writes the README's
screenshot there (otherwise it goes to the test's temporary folder)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from widgets.voiladriver import demo_page, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

REPO = Path(__file__).resolve().parents[1]
# a code cell's input in Voilà's templates (none may be visible)
CODE = (".jp-CodeCell .jp-Cell-inputArea, .jp-InputArea-editor, .jp-CodeMirrorEditor, "
        ".cm-editor, .CodeMirror, .jp-InputPrompt")


def _open_choices(status: str) -> int:
    m = re.search(r"(\d+) open choices?", status)
    assert m, status
    return int(m.group(1))


def test_demo_dashboard(tmp_path):
    t0 = time.perf_counter()
    with demo_page(tmp_path / "data", tmp_path / "voila.log") as demo:
        page = demo.page
        shown_s = time.perf_counter() - t0
        assert page.locator(".wb-explorer").is_visible()
        # no code: neither a cell's input nor the notebook's source on the page
        assert not [e for e in page.locator(CODE).all() if e.is_visible()]
        body = page.inner_text("body")
        assert "import workbench" not in body and "def " not in body
        assert "Traceback" not in body and "Error" not in body

        status = demo.status()
        assert "bound" in status and _open_choices(status) > 0, status

        # the walk-through: Next changes the text, Back brings it back
        first = demo.tour_text()
        page.click(".wb-tour button:has-text('Next')")
        page.wait_for_function("(t) => !document.querySelector('.wb-tour .widget-html-content')"
                               ".innerText.includes(t)", arg=first[:40], timeout=20_000)
        second = demo.tour_text()
        assert second != first and "candidate" in second.lower()
        # the step points at the status line (outlined)
        page.wait_for_selector(".wb-explorer .wb-demo-here", timeout=20_000)

        # a value of the first listed choice: the status line follows
        button = next(b for b in page.locator(".wb-choices button").all()
                      if b.is_visible() and b.is_enabled())
        button.click()
        page.wait_for_function("""(before) => {
            const e = [...document.querySelectorAll('.wb-explorer .widget-html-content')]
              .find(x => /open choice|fixed/.test(x.textContent)
                         && x.textContent.includes('bound'));
            return e && e.textContent !== before; }""", arg=status, timeout=60_000)
        after = demo.status()
        assert _open_choices(after) < _open_choices(status), (status, after)
        assert re.search(r"\b1 decision", after), after

        # the Domains step of the tour shows a tab with plotly figures (anywidget)
        for _ in range(2):
            page.click(".wb-tour button:has-text('Next')")
        page.wait_for_selector(".wb-explorer .js-plotly-plot", timeout=30_000)

        # Back: the step on choices, its column outlined (the screenshot's state)
        page.click(".wb-tour button:has-text('Back')")
        page.wait_for_function("() => document.querySelector('.wb-tour .widget-html-content')"
                               ".innerText.includes('is a choice still open')", timeout=20_000)
        page.wait_for_timeout(500)  # the outline moves
        shot = demo.screenshot(tmp_path / "demo.png")
        assert shot.stat().st_size > 10_000
        if os.environ.get("DEMO_SHOT"):
            shutil.copy(shot, REPO / os.environ["DEMO_SHOT"])

        # another kernel: Open rebuilds the explorer from its root
        page.select_option(".wb-demo select >> nth=0", label="axpy z = αx + y")
        page.click(".wb-demo button:has-text('Open')")
        page.wait_for_function("""() => [...document.querySelectorAll(
            '.wb-explorer .widget-html-content')].some(e => /axpy/.test(e.textContent))""",
                               timeout=60_000)
        assert re.search(r"\b0 decisions", demo.status()), demo.status()
        print(f"Voilà start → explorer shown {shown_s:.1f} s (page request → explorer "
              f"{demo.load_s:.1f} s)")
