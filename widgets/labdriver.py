"""JupyterLab in a real browser: start a lab server on 127.0.0.1, open the
explorer notebook in Debian's Chromium through Playwright, run it, click
values and time how long the page takes to show the new state.

Used by the end-to-end test (tests/test_browser.py), the latency benchmark
(benchmarks/bench_explorer_browser.py) and the README's screenshots. The
explorer state the notebook loads comes from WORKBENCH_DATA, so a caller can
open the notebook on any prepared candidate (root, midway, fixed).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
# Without these, Chromium's background connections are refused by a closed
# network many at a time, and a fresh profile asks first-run questions.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]
REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = "notebooks/00_explorer.ipynb"


def missing() -> str | None:
    """Why a browser run cannot happen here, or None."""
    if not Path(CHROMIUM).exists():
        return f"no {CHROMIUM} (Debian's chromium package)"
    try:
        import jupyterlab  # noqa: F401
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_targets(data_dir: Path) -> Path:
    """`data_dir` holding the shipped hardware tables (a server's notebooks
    read their data there through WORKBENCH_DATA)."""
    import shutil
    data_dir.mkdir(parents=True, exist_ok=True)
    if not (data_dir / "targets").exists():
        shutil.copytree(REPO / "data" / "targets", data_dir / "targets")
    return data_dir


@contextmanager
def served(cmd: list, env: dict, log: Path, probe: str, what: str, timeout_s: float = 90):
    """Run the server `cmd` (output to `log`) until `probe` answers — any
    HTTP answer, an error status included; stop it on exit."""
    import urllib.error
    import urllib.request
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                urllib.request.urlopen(probe, timeout=2)
                break
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{what} did not start; see {log}") from None
                time.sleep(0.3)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextmanager
def chromium_page(width: int = 1500, height: int = 1100):
    """A page of a headless Debian Chromium, closed on exit."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


@contextmanager
def lab_server(data_dir: Path, log: Path):
    """A JupyterLab server on the repository, its notebooks' data in
    `data_dir`; yields the base URL with the token."""
    with_targets(data_dir)
    port, token = free_port(), secrets.token_hex(16)
    settings = data_dir / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)  # no "get Jupyter news?" pop-up
    (settings / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}')
    docs = data_dir / "lab-settings" / "@jupyterlab" / "docmanager-extension"
    docs.mkdir(parents=True, exist_ok=True)  # a run must not save outputs into the notebook
    (docs / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    env = {**os.environ, "WORKBENCH_DATA": str(data_dir),
           "JUPYTERLAB_SETTINGS_DIR": str(data_dir / "lab-settings"),
           # a fresh workspace: no tabs restored from an earlier session
           "JUPYTERLAB_WORKSPACES_DIR": str(data_dir / "lab-workspaces")}
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={REPO}", "--ServerApp.disable_check_xsrf=True",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    base = f"http://127.0.0.1:{port}"
    with served(cmd, env, log, f"{base}/api/status?token={token}", "JupyterLab"):
        yield base, token


# JavaScript run in the page: click a value and time until the page shows
# the new state. "panels" = the status line, the choices column and the
# panel on show (the domains table when the Domains tab is open) all changed;
# "lookahead" = every listed value carries its child bound again.
_LABELLED_JS = """(() => {
    const c = document.querySelector('.wb-choices');
    return !!c && c.dataset.labelled === 'true' && c.querySelectorAll('.wb-row').length > 0;
})()"""
_CLICK_JS = """
async ([rowIndex, valueIndex, panelMustChange]) => {
  const status = document.querySelector('.wb-status');
  const choices = document.querySelector('.wb-choices');
  const shown = () => [...document.querySelectorAll('.wb-explorer .widget-tab-contents > *')]
      .find(p => p.offsetParent !== null);
  const panelText = () => { const p = shown(); return p ? p.textContent : ''; };
  const rows = [...choices.querySelectorAll('.wb-row')];
  const row = rows[Math.min(rowIndex, rows.length - 1)];
  const buttons = [...row.querySelectorAll('button')].filter(b => !b.disabled);
  const button = buttons[valueIndex % buttons.length];
  const before = [status.textContent, panelText(), choices.dataset.gen];
  const label = button.textContent;
  const t0 = performance.now();
  button.click();
  const wait = (pred) => new Promise((resolve) => {
    const tick = () => pred() ? resolve(performance.now() - t0) : requestAnimationFrame(tick);
    tick();
  });
  const panels = await wait(() => {
    const s = document.querySelector('.wb-status');
    return s && s.textContent !== before[0] && choices.dataset.gen !== before[2]
      && (!panelMustChange || panelText() !== before[1]);
  });
  const lookahead = await wait(() => LABELLED());
  return {value: label, panels_ms: panels, lookahead_ms: lookahead,
          status_before: before[0], status_after: document.querySelector('.wb-status').textContent,
          domains_changed: panelText() !== before[1]};
}
""".replace("LABELLED()", _LABELLED_JS)


# the panel on show, and the drawn marks of each plotly figure in it
_SHOWN_JS = """[...document.querySelectorAll('.wb-explorer .widget-tab-contents > *')]
    .find(p => p.offsetParent !== null)"""
_MARKS_JS = """(() => { const p = SHOWN; if (!p) return [];
    return [...p.querySelectorAll('.js-plotly-plot')].map(f => f.querySelectorAll(
        'g.trace path, g.trace .point, g.hm image, .imagelayer image, g.trace rect').length);
})()""".replace("SHOWN", _SHOWN_JS)
_TAB_READY_JS = """(() => { const p = SHOWN; if (!p) return false;
    const t = p.textContent;
    if (!t.trim() || t.includes('computing')) return false;
    const bar = [...document.querySelectorAll('.jp-StatusBar-TextItem')];  // lab, not Voilà
    if (bar.length && !bar.some(e => e.textContent.includes('| Idle'))) return false;
    const marks = MARKS;
    return marks.every(n => n > 0);
})()""".replace("SHOWN", _SHOWN_JS).replace("MARKS", _MARKS_JS)


class LabPage:
    """The explorer notebook open and run in Chromium."""

    def __init__(self, page):
        self.page = page

    def run_all(self, timeout_s: float = 240) -> None:
        page = self.page
        page.wait_for_function("document.body.innerText.includes('Idle')",
                               timeout=timeout_s * 1e3)
        page.click("li.lm-MenuBar-item:has-text('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
        page.wait_for_selector(".wb-explorer", timeout=timeout_s * 1e3)
        page.wait_for_selector(".wb-status", timeout=timeout_s * 1e3)
        page.wait_for_selector(".wb-choices", timeout=timeout_s * 1e3)

    def wait_lookahead(self, timeout_s: float = 120) -> None:
        self.page.wait_for_function(_LABELLED_JS, timeout=timeout_s * 1e3)

    def text(self, contains: str) -> str:
        return self.page.evaluate(
            "(c) => ([...document.querySelectorAll('.widget-html-content')]"
            ".find(e => e.textContent.includes(c)) || {textContent: ''}).textContent", contains)

    def click_value(self, row: int = 0, value: int = 0, panel_changes: bool = True) -> dict:
        """Click a value of the `row`-th listed choice; the timings in ms.
        `panel_changes`: wait for the panel on show to change too (the
        Domains table always does; the Bound tab only when the bound does)."""
        return self.page.evaluate(_CLICK_JS, [row, value, panel_changes])

    def open_kernel(self, kernel: str, sizes: dict, timeout_s: float = 240) -> None:
        """Pick `kernel` and `sizes` in the picker's menus and press Open, as
        a person does; returns once the new explorer shows its status."""
        page = self.page
        before = self.status()
        from .picker import TITLES
        page.locator(".wb-picker .widget-dropdown:has(label:text-is('kernel')) select"
                     ).select_option(label=TITLES[kernel])
        for name, v in sizes.items():
            page.locator(f".wb-picker .widget-dropdown:has(label:text-is('{name}')) select"
                         ).select_option(label=f"{v:,}" if v < 2 ** 14 else
                                         f"{v:,} (2^{v.bit_length() - 1})")
        page.click(".wb-picker button:has-text('Open')")
        page.wait_for_function(
            "(b) => { const s = document.querySelector('.wb-status');"
            " return s && s.textContent !== b; }", arg=before, timeout=timeout_s * 1e3)

    def tab_answer(self, title: str, timeout_s: float = 60) -> dict:
        """Show the tab `title` and wait until it answers: its panel has text,
        no progress text (computing …) and every figure in it has drawn marks. The time
        in ms and each figure's mark count."""
        t0 = time.perf_counter()
        self.select_tab(title)
        self.page.wait_for_timeout(50)  # the kernel turns busy with the tab's message
        self.page.wait_for_function(_TAB_READY_JS, timeout=timeout_s * 1e3)
        ms = (time.perf_counter() - t0) * 1e3
        return {"tab": title, "ms": ms, "marks": self.page.evaluate(_MARKS_JS)}

    def status(self) -> str:
        return self.page.evaluate(
            "(document.querySelector('.wb-status') || {textContent: ''}).textContent")

    def select_tab(self, title: str) -> None:
        """Show the explorer's tab `title` (e.g. "Domains")."""
        self.page.click(f".wb-explorer .lm-TabBar-tab:has-text('{title}')")

    def press(self, key: str) -> None:
        """A key typed in the choices column (u: undo, r: redo, arrows, Enter)."""
        self.page.focus(".wb-choices")
        self.page.keyboard.press(key)

    def screenshot(self, path: Path) -> Path:
        """The page with the explorer scrolled to the top of the notebook."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.evaluate("document.querySelector('.wb-explorer').scrollIntoView()")
        self.page.screenshot(path=str(path))
        return path


@contextmanager
def explorer_page(data_dir: Path, log: Path, width: int = 1500, height: int = 1100,
                  notebook: str = NOTEBOOK):
    """JupyterLab serving the repository, the explorer notebook open and run."""
    with lab_server(data_dir, log) as (base, token), chromium_page(width, height) as page:
        page.goto(f"{base}/lab/tree/{notebook}?token={token}", timeout=120_000)
        page.wait_for_selector(".jp-Notebook", timeout=120_000)
        if page.locator(".jp-FileBrowser").is_visible():  # room for the explorer
            page.keyboard.press("Control+b")
        lab = LabPage(page)
        lab.run_all()
        yield lab


__all__ = ["CHROMIUM", "LabPage", "chromium_page", "explorer_page", "free_port", "lab_server",
           "missing", "served", "with_targets"]
