"""The notebook kernel's part of an explorer click, headless: the decision,
its propagation and the refresh of the status line, the choices column and
the tab on show, on matmul 1024, against a peer checkout's widgets and
engine measured in the same run (ABAB, each in a process of its own, so a
drift of the machine's speed hits both sides alike).

    git worktree add /tmp/base <commit>
    python benchmarks/bench_explorer_kernel.py --peer /tmp/base [--tab Domains] [--clicks 20]
        [--target h200] [--ranked]

The clicks are those a person makes in `bench_explorer_browser.py`: a value
of the first listed `dim_kind` choice, drawn at random; a first pass builds
the lowerings (not timed), a second from the root is timed. The browser's
share of a click (drawing what the kernel sent) is not in these figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from peer import pct, run_child

HERE = Path(__file__).resolve().parent


def child(args) -> None:
    sys.path.insert(0, args.engine)
    os.environ["WORKBENCH_PREBUILD"] = "0"
    import random
    import time

    import workbench as wb
    from widgets.explorer import CandidateExplorer, Tab
    ex = CandidateExplorer(wb.kernels.matmul(1024, 1024, 1024), store=None, lookahead="off",
                           backend="cpu")
    ex.tabs.selected_index = Tab[args.tab.upper()]
    if args.target:
        ex.target_dd.value = args.target
    if args.ranked:  # "most discriminating first" ticked
        ex.hint.value = True

    def descent():
        rng, out = random.Random(args.seed), []
        for _ in range(args.clicks):
            cand = ex.session.cand
            listed = cand.choices()
            ch = next((c for c in listed if c.name == "dim_kind"), listed[0])
            t0 = time.perf_counter()
            ex.force(ch.name, ch.objects, rng.choice(ch.values))
            out.append((time.perf_counter() - t0) * 1e3)
        ex.do(ex.session.reset)
        return out
    descent()  # builds the lowered problems
    print(json.dumps(descent()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", help="another checkout (its widgets and engine)")
    ap.add_argument("--tab", default="Domains")
    ap.add_argument("--clicks", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", help="the table the bound is on (default: the backend's)")
    ap.add_argument("--ranked", action="store_true", help="tick 'most discriminating first'")
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--engine", default=str(HERE.parent), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    engines = {"this": str(HERE.parent)}
    if args.peer:
        engines["peer"] = args.peer
    got: dict = {name: [] for name in engines}
    for _ in range(args.rounds):
        for name, path in engines.items():
            got[name] += run_child(__file__, path, "--tab", args.tab, "--clicks",
                                   str(args.clicks), "--seed", str(args.seed),
                                   *(["--target", args.target] if args.target else []),
                                   *(["--ranked"] if args.ranked else []))
    rows = {name: {"clicks": len(xs), "median_ms": round(statistics.median(xs), 1),
                   "p90_ms": round(pct(xs, 0.9), 1), "max_ms": round(max(xs), 1)}
            for name, xs in got.items()}
    for name, r in rows.items():
        print(f"{name}: {args.tab} on show, {r['clicks']} clicks: median {r['median_ms']} ms, "
              f"p90 {r['p90_ms']} ms, max {r['max_ms']} ms")
    if args.json:
        commits = {name: subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path,
                                        capture_output=True, text=True).stdout.strip()
                   for name, path in engines.items()}
        Path(args.json).write_text(json.dumps({"tab": args.tab, "target": args.target,
                                               "ranked": args.ranked, "commits": commits,
                                               "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
