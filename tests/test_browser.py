"""End to end in a real browser: JupyterLab on 127.0.0.1, Debian's Chromium
driven by Playwright, the explorer notebook run from the menu, a value
clicked; the bound line and the domains on the page must change. Skips
where Chromium or Playwright is missing (`make test` installs both where it
can)."""

from __future__ import annotations

import re

import pytest

from widgets.labdriver import explorer_page, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))


def test_explorer_in_jupyterlab(tmp_path):
    with explorer_page(tmp_path, tmp_path / "lab.log") as lab:
        lab.wait_lookahead()
        status = lab.text("decisions ·")
        assert "bound" in status and "0 decisions" in status
        assert "values left" in lab.text("values left")
        before_bound = lab.text("on h200:")
        r = lab.click_value(0, 1)
        assert r["domains_changed"] and "1 decisions" in r["status_after"]
        # the first listed choice was decided: it no longer heads the list
        open_before = int(re.search(r"(\d+) open choices", r["status_before"]).group(1))
        open_after = int(re.search(r"(\d+) open choices", r["status_after"]).group(1))
        assert open_after < open_before
        lab.wait_lookahead()
        assert lab.text("on h200:") != "" and before_bound != ""
        shot = lab.screenshot(tmp_path / "explorer.png")
        assert shot.stat().st_size > 10_000
        # the decision was saved by the notebook's session (autosave)
        assert (tmp_path / "explorer" / "matmul_1024.json").exists()
        print(f"click → every panel {r['panels_ms']:.0f} ms, look-ahead of the first "
              f"choice {r['lookahead_ms']:.0f} ms")
