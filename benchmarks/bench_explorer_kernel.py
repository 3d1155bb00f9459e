"""The notebook kernel's part of an explorer click, headless: the decision,
its propagation and the refresh of the status line, the choices column and
the tab on show, on matmul 1024, against a peer checkout's widgets and
engine measured in the same run (ABAB, each in a process of its own, so a
drift of the machine's speed hits both sides alike).

    git worktree add /tmp/base <commit>
    python benchmarks/bench_explorer_kernel.py --peer /tmp/base [--tab Domains] [--clicks 20]
        [--target h200] [--ranked [--wait-ranked]] [--lookahead process] [--read-ms 1000]

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
    ex = CandidateExplorer(wb.kernels.matmul(1024, 1024, 1024), store=None,
                           lookahead=args.lookahead, backend="cpu")
    ex.tabs.selected_index = Tab[args.tab.upper()]
    if args.target:
        ex.target_dd.value = args.target
    if args.ranked:  # "most discriminating first" ticked
        ex.hint.value = True

    def ranked_after(t0: float) -> float | None:
        """ms from t0 until the candidate on show is ranked (None: not in 60 s)."""
        key = ex.choices._seen_as(ex.session.cand)
        while key not in ex.choices._rankings:
            if time.perf_counter() - t0 > 60:
                return None
            time.sleep(0.005)
        return (time.perf_counter() - t0) * 1e3

    def descent():
        rng, out, ranked = random.Random(args.seed), [], []
        for _ in range(args.clicks):
            cand = ex.session.cand
            listed = cand.choices()
            ch = next((c for c in listed if c.name == "dim_kind"), listed[0])
            t0 = time.perf_counter()
            ex.force(ch.name, ch.objects, rng.choice(ch.values))
            out.append((time.perf_counter() - t0) * 1e3)
            if args.wait_ranked:
                ranked.append(ranked_after(t0))
            time.sleep(args.read_ms / 1e3)  # a person reading before the next click
        ex.do(ex.session.reset)
        return out, ranked
    descent()  # builds the lowered problems
    ex.choices._rankings.clear()  # the timed descent ranks its candidates anew
    clicks, ranked = descent()
    ex.close()
    print(json.dumps({"clicks": clicks, "ranked_ms": ranked}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", help="another checkout (its widgets and engine)")
    ap.add_argument("--tab", default="Domains")
    ap.add_argument("--clicks", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", help="the table the bound is on (default: the backend's)")
    ap.add_argument("--ranked", action="store_true", help="tick 'most discriminating first'")
    ap.add_argument("--lookahead", default="off", help="the explorer's look-ahead mode "
                    "(process: the labels, and the ranking, in processes of their own)")
    ap.add_argument("--read-ms", type=float, default=0.0, help="a pause after each click")
    ap.add_argument("--wait-ranked", action="store_true",
                    help="after each click, wait until its candidate is ranked (timed)")
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
    ranked: dict = {name: [] for name in engines}
    for _ in range(args.rounds):
        for name, path in engines.items():
            out = run_child(__file__, path, "--tab", args.tab, "--clicks",
                                   str(args.clicks), "--seed", str(args.seed),
                                   *(["--target", args.target] if args.target else []),
                                   *(["--ranked"] if args.ranked else []),
                                   "--lookahead", args.lookahead,
                                   "--read-ms", str(args.read_ms),
                                   *(["--wait-ranked"] if args.wait_ranked else []))
            got[name] += out["clicks"]
            ranked[name] += out["ranked_ms"]
    rows = {name: {"clicks": len(xs), "median_ms": round(statistics.median(xs), 1),
                   "p90_ms": round(pct(xs, 0.9), 1), "max_ms": round(max(xs), 1)}
            for name, xs in got.items()}
    for name, xs in ranked.items():
        done = [x for x in xs if x is not None]
        if xs:  # click → the new candidate's ranking kept
            rows[name]["ranked"] = {"within_60s": len(done), "of": len(xs),
                                    "median_ms": round(statistics.median(done), 1) if done
                                    else None, "max_ms": round(max(done), 1) if done else None}
    for name, r in rows.items():
        print(f"{name}: {args.tab} on show, {r['clicks']} clicks: median {r['median_ms']} ms, "
              f"p90 {r['p90_ms']} ms, max {r['max_ms']} ms"
              + (f"; ranked after the click: {r['ranked']}" if "ranked" in r else ""))
    if args.json:
        commits = {name: subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path,
                                        capture_output=True, text=True).stdout.strip()
                   for name, path in engines.items()}
        Path(args.json).write_text(json.dumps({"tab": args.tab, "target": args.target,
                                               "ranked": args.ranked, "commits": commits,
                                               "lookahead": args.lookahead,
                                               "read_ms": args.read_ms,
                                               "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
