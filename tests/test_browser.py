"""End to end in a real browser: JupyterLab on 127.0.0.1, Debian's Chromium
driven by Playwright, the explorer notebook run from the menu, values
clicked and keys typed as a person does; the status line, the domains and
the value labels on the page must follow. Skips where Chromium or
Playwright is missing (`make test` installs both where it can)."""

from __future__ import annotations

import re

import pytest

from widgets.explorer import Tab
from widgets.labdriver import explorer_page, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))


def _open(status: str) -> int:
    return int(re.search(r"([\d,]+) open choices?", status).group(1).replace(",", ""))


def test_explorer_in_jupyterlab(tmp_path):
    with explorer_page(tmp_path, tmp_path / "lab.log") as lab:
        lab.wait_lookahead()
        status = lab.status()
        # the first open: matmul 256×256×32, bounds on the measuring backend's target
        assert "0 decisions" in status and "bound" in status and "cpu" in status
        assert "m=256" in lab.text("matmul")
        labels = lab.page.eval_on_selector_all(".wb-choices .wb-name",
                                               "e => e.map(x => x.textContent)")
        assert labels and not any(re.search(r"\bd\d+\b", x) for x in labels)  # names, not ids
        lab.select_tab(Tab.DOMAINS.title)
        r = lab.click_value(0, 1)
        assert r["domains_changed"] and "1 decision ·" in r["status_after"]
        assert _open(r["status_after"]) < _open(r["status_before"])
        lab.wait_lookahead()
        lab.press("u")  # undo by keyboard
        lab.page.wait_for_function(
            "document.querySelector('.wb-status').textContent.includes('0 decisions')",
            timeout=30_000)
        lab.press("r")  # redo
        lab.page.wait_for_function(
            "document.querySelector('.wb-status').textContent.includes('1 decision ·')",
            timeout=30_000)
        shot = lab.screenshot(tmp_path / "explorer.png")
        assert shot.stat().st_size > 10_000
        # the decision was saved by the notebook's session (autosave)
        assert (tmp_path / "explorer" / "matmul_256x256x32.json").exists()
        # a whole recipe forced from its menu, from the root: a fixed candidate
        lab.press("u")
        lab.page.wait_for_function(
            "document.querySelector('.wb-status').textContent.includes('0 decisions')",
            timeout=30_000)
        lab.page.locator(".wb-explorer .widget-dropdown:has(label:text-is('recipe')) select"
                         ).select_option(
            label="register_tiled_matmul(tm=4, tn=4, threads=16, padded=True)")
        lab.page.click(".wb-explorer button:has-text('Force recipe')")
        lab.page.wait_for_function(  # "forcing …" first, then the fixed candidate's line
            "(document.querySelector('.wb-status') || {textContent: ''})"
            ".textContent.includes('fixed')", timeout=120_000)
        assert re.search(r"fixed · \d\d+ decisions", lab.status())
        lab.screenshot(tmp_path / "recipe.png")
        print(f"click → every panel {r['panels_ms']:.0f} ms, look-ahead of the listed "
              f"choices {r['lookahead_ms']:.0f} ms")


def test_every_tab_answers_on_matmul_1024_with_drawn_figures(tmp_path):
    """The thesis's size one menu away; every tab answers within its limit
    (the Sparsity tab once locked the kernel for ten minutes) and every
    figure on show has drawn marks, not empty axes."""
    with explorer_page(tmp_path, tmp_path / "lab.log") as lab:
        lab.open_kernel("matmul", {"m": 1024, "n": 1024, "k": 1024})
        assert "m=1,024" in lab.text("matmul") and "0 decisions" in lab.status()
        answers = [lab.tab_answer(t.title, timeout_s=90) for t in Tab]
        for a in answers:
            print(f"{a['tab']:>9}: {a['ms']:7.0f} ms, marks per figure {a['marks']}")
        figures = [n for a in answers for n in a["marks"]]
        assert len(figures) >= 3 and all(n > 0 for n in figures)
