"""A first visit, timed as a person meets it (the mission: a first-time
visitor on a laptop without a GPU sees something real in a minute).

With `--setup`: a fresh clone of this repository and `make .venv/.lab` in it
(what `make lab` does before it serves: a new virtual environment, the
package and its `lab` and `test` extras from pip — through this machine's pip
cache, so a laptop's first download comes on top), then the rest run by the
clone's own interpreter. Then, in Debian's Chromium: JupyterLab answering,
the explorer notebook open, Run All Cells until the explorer shows its status
line and choices, every listed value labelled with its child bound, and
the first click on a value answered (every panel, then the labels again).
Each phase is timed from the server's start; nothing is reused from an
earlier visit (a new data folder: no saved explorer state, no caches).

    python benchmarks/bench_first_visit.py [--setup] [--out data/bench/first_visit.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def visit(data: Path) -> dict:
    """The browser part, timed (seconds from the server's start)."""
    from widgets.labdriver import NOTEBOOK, LabPage, chromium_page, lab_server
    t0 = time.perf_counter()
    out: dict = {}
    with lab_server(data, data / "lab.log") as (base, token):
        out["server_s"] = time.perf_counter() - t0
        with chromium_page() as page:
            page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}", timeout=120_000)
            page.wait_for_selector(".jp-Notebook", timeout=120_000)
            out["notebook_s"] = time.perf_counter() - t0
            if page.locator(".jp-FileBrowser").is_visible():
                page.keyboard.press("Control+b")
            lab = LabPage(page)
            lab.run_all()
            out["explorer_s"] = time.perf_counter() - t0
            lab.wait_lookahead()
            out["labelled_s"] = time.perf_counter() - t0
            out["status"] = lab.status()
            click = lab.click_value(0, 1)
            out["first_click_panels_ms"] = click["panels_ms"]
            out["first_click_labels_ms"] = click["lookahead_ms"]
            out["first_click_s"] = time.perf_counter() - t0
    return out


def setup_clone(where: Path) -> dict:
    """A fresh clone and `make .venv/.lab` in it, timed."""
    t0 = time.perf_counter()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True)
    clone_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    subprocess.run(["make", ".venv/.lab"], cwd=where, check=True, stdout=subprocess.DEVNULL)
    return {"clone_s": clone_s, "setup_s": time.perf_counter() - t1,
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where,
                                     capture_output=True, text=True).stdout.strip()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setup", action="store_true",
                    help="time a fresh clone's set-up first, then visit with its interpreter")
    ap.add_argument("--out", default=str(ROOT / "data" / "bench" / "first_visit.json"))
    args = ap.parse_args(argv)
    from widgets.labdriver import missing
    if missing():
        print(f"no browser run here: {missing()}")
        return 2
    result = {"date": time.strftime("%Y-%m-%d"), "machine": platform.processor() or
              platform.machine(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        if args.setup:
            clone = Path(tmp) / "clone"
            result.update(setup_clone(clone))
            subprocess.run([str(clone / ".venv" / "bin" / "python"),
                            str(clone / "benchmarks" / "bench_first_visit.py"),
                            "--out", str(Path(tmp) / "visit.json")], check=True)
            result.update(json.loads((Path(tmp) / "visit.json").read_text()))
        else:
            result.update(visit(Path(tmp) / "data"))
    if "setup_s" in result:
        result["setup_and_labelled_s"] = result["setup_s"] + result["labelled_s"]
    for k, v in result.items():
        print(f"{k}: {v:.1f}" if isinstance(v, float) else f"{k}: {v}")
    from peer import write_figures
    write_figures(args.out, json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
