"""Click latency of the explorer in a real browser (Debian's Chromium through
Playwright) on matmul 1024, opened from the picker's menus as a person does,
in JupyterLab (`make lab`) or in the Voilà dashboard (`make demo`), with the
Domains tab (or --tab) on show; and the README's screenshots.

First the tab's own first drawing (`tab_first_ms`: the tab shown after
the root is labelled, until every figure in it has drawn marks). Then, for
each click: `panels_ms` — click to the page showing the new status line,
the new choices column and the new domains table (every visible panel
updated); `lookahead_ms` — click to every listed value carrying its child
bound again; `kernel_ms` — the part spent in the notebook kernel (decision +
refresh), as the status line reports it.

    python benchmarks/bench_explorer_browser.py [--app lab|voila] [--tab Bound]
        [--clicks 20] [--read-ms 300] [--shots docs/]

WORKBENCH_PREBUILD=0 runs it without building lowerings ahead (the peer).
Writes data/bench/explorer_browser.json (voila: explorer_browser_voila.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import workbench as wb
from widgets.labdriver import explorer_page, missing
from widgets.picker import state_path
from widgets.voiladriver import demo_page
from workbench.descent import random_fixed
from workbench.names import choice_label
from workbench.session import Session

KERNEL = {"m": 1024, "n": 1024, "k": 1024}


def _state(data: Path, cand, pos: int | None = None) -> None:
    """The explorer state the notebook will load: `cand`'s trail, at step
    `pos` (default: its end)."""
    kernel = cand.problem.root_problem.kernel
    s = Session(wb.Candidate.root(kernel))
    s.new_branch("shown", cand)
    s.branches = [s.branches[-1]]
    s.branches[0].name, s.current = "main", 0
    if pos is not None:
        s.branches[0].pos = pos
    s.save(data / "explorer" / state_path(kernel).name)


# The stuck states look-ahead-only descents met (bench_stuck.py, matmul
# 64×64×32, seeds 0–15 of the twentieth session's engine): every value of
# one choice dead-ends.
STUCK = ROOT / "data" / "bench" / "stuck_lookahead_pair_clauses_seeds0_15.json"


def stuck_shot(path: Path) -> Path:
    """The explorer on a stored stuck state, its stuck choice filtered in:
    the explanation it shows once the look-ahead finds every value dead, its
    drop buttons coloured by where they lead."""
    rows = json.loads(STUCK.read_text())
    st = min((s for r in rows for s in r.get("stuck_states", [])), key=lambda s: s["culprits"])
    # replayed, not loaded: its saved domains are those of the engine of its day
    cand = wb.Candidate.replay(wb.kernels.from_spec(st["candidate"]["kernel"]),
                               st["candidate"]["trail"])
    sizes = dict(cand.kernel.spec())
    name = sizes.pop("builder")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        _state(data, cand)
        with explorer_page(data, data / "lab.log") as lab:
            lab.open_kernel(name, sizes)
            label = choice_label(cand, st["choice"][0], tuple(st["choice"][1]))
            lab.page.fill("input[placeholder^='filter']", label)
            lab.page.wait_for_function(
                "() => [...document.querySelectorAll('.widget-html-content')]"
                ".some(e => e.textContent.includes('leave no value of'))", timeout=240e3)
            lab.page.wait_for_function(  # then each drop button says where it leads
                "() => [...document.querySelectorAll('.widget-html-content')]"
                ".some(e => e.textContent.includes('leads to an implementation'))", timeout=120e3)
            lab.page.wait_for_timeout(1000)
            return lab.screenshot(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clicks", type=int, default=20)
    ap.add_argument("--shots", type=Path, default=None, help="folder for the screenshots")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--app", choices=("lab", "voila"), default="lab")
    ap.add_argument("--tab", default="Domains", help="the tab on show while clicking")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--sizes", default=None,
                    help="m,n,k of the matmul opened (default 1024,1024,1024)")
    ap.add_argument("--read-ms", type=int, default=300,
                    help="how long the person reads the labels before the next click")
    args = ap.parse_args()
    if args.sizes:
        KERNEL.update(zip("mnk", (int(x) for x in args.sizes.split(","))))
    args.out = args.out or ROOT / "data" / "bench" / (
        "explorer_browser.json" if args.app == "lab" else "explorer_browser_voila.json")
    why = missing()
    if why:
        sys.exit(f"cannot run: {why}")
    rng = random.Random(args.seed)
    clicks = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        page = explorer_page if args.app == "lab" else demo_page
        with page(data, data / "app.log") as lab:
            lab.open_kernel("matmul", KERNEL)
            lab.wait_lookahead()
            # the tab's first drawing (plotly's first figure in the kernel and
            # the page, seconds) is its own figure, not the first click's
            first_tab = lab.tab_answer(args.tab)
            print(f"{args.tab} first shown in {first_tab['ms']:.0f} ms")
            lab.wait_lookahead()
            if args.shots and args.app == "lab":
                lab.screenshot(args.shots / "explorer_root.png")
            for k in range(args.clicks):
                r = lab.click_value(0, rng.randrange(4), panel_changes=args.tab == "Domains")
                m = re.search(r"\((\d+) ms in the kernel\)", r["status_after"])
                r["kernel_ms"] = float(m.group(1)) if m else None
                clicks.append(r)
                print(f"click {k}: {r['value']:>22}  panels {r['panels_ms']:7.1f} ms  "
                      f"look-ahead {r['lookahead_ms']:8.1f} ms  kernel {r['kernel_ms']} ms")
                lab.wait_lookahead()
                lab.page.wait_for_timeout(args.read_ms)  # a person reads before the next click
        if args.shots and args.app == "lab":
            fixed = random_fixed(wb.Candidate.root(wb.kernels.matmul(**KERNEL)),
                                 random.Random(args.seed))
            for name, pos in (("midway", len(fixed.trail) // 2), ("fixed", len(fixed.trail))):
                _state(data, fixed, pos)
                with explorer_page(data, data / "lab.log") as lab:
                    lab.open_kernel("matmul", KERNEL)
                    if name == "fixed":
                        lab.page.click(".wb-explorer .lm-TabBar-tab:has-text('Code')")
                    lab.page.wait_for_timeout(1500)
                    lab.screenshot(args.shots / f"explorer_{name}.png")

    if args.shots and args.app == "lab":
        stuck_shot(args.shots / "explorer_stuck.png")

    def stats(key):
        xs = [c[key] for c in clicks if c.get(key) is not None]
        return {"median": statistics.median(xs), "p90": sorted(xs)[int(0.9 * (len(xs) - 1))],
                "max": max(xs)} if xs else None

    out = {"app": args.app, "tab": args.tab, "kernel": {"builder": "matmul", **KERNEL},
           "read_ms": args.read_ms, "tab_first_ms": first_tab["ms"],
           "prebuild": os.environ.get("WORKBENCH_PREBUILD", "1") != "0",
           "clicks": clicks,
           "panels_ms": stats("panels_ms"), "lookahead_ms": stats("lookahead_ms"),
           "kernel_ms": stats("kernel_ms"), "target_ms": 150,
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: out[k] for k in ("panels_ms", "lookahead_ms", "kernel_ms")}))


if __name__ == "__main__":
    main()
