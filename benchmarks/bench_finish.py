"""What "Finish from here" takes: the bound of the implementation it reaches
from the root (as the explorer calls it: 30 s of witness search at most, 3
tries, 16 climb moves), over the root's bound, and the seconds it takes, on
matmul 256 and 1024, against a peer checkout's engine measured in the same
run (each side in a process of its own).

    git worktree add /tmp/base <commit>
    python benchmarks/bench_finish.py [--peer /tmp/base] [--seeds 4]
        [--out data/bench/finish.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from peer import run_child, write_figures

HERE = Path(__file__).resolve()
CASES = (("matmul 256", {"m": 256, "n": 256, "k": 32}, "h200"),
         ("matmul 256", {"m": 256, "n": 256, "k": 32}, "cpu_reference"),
         ("matmul 1024", {"m": 1024, "n": 1024, "k": 1024}, "h200"))


def child(args) -> None:
    sys.path.insert(0, args.engine)
    import random
    import time

    import workbench as wb
    from workbench.session import Session
    out = []
    for label, sizes, target in CASES:
        for seed in range(args.seeds):
            s = Session(wb.Candidate.root(wb.kernels.matmul(**sizes)), target, None, None)
            s._rng = random.Random(seed)
            start = s.bound().value_ns
            t0 = time.perf_counter()
            s.finish(30.0, 3, 16)
            out.append({"kernel": label, "target": target, "seed": seed,
                        "over_start": s.bound().value_ns / start,
                        "seconds": time.perf_counter() - t0})
    print(json.dumps(out))


def summary(rows: list) -> dict:
    by: dict = {}
    for r in rows:
        by.setdefault(f"{r['kernel']} on {r['target']}", []).append(r)
    return {k: {"over_start": [round(r["over_start"], 2) for r in v],
                "over_start_median": round(statistics.median(r["over_start"] for r in v), 2),
                "seconds_median": round(statistics.median(r["seconds"] for r in v), 1),
                "seconds_max": round(max(r["seconds"] for r in v), 1)}
            for k, v in by.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--engine", default=str(HERE.parents[1]))
    ap.add_argument("--peer", default=None)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--out", default=str(HERE.parents[1] / "data/bench/finish.json"))
    args = ap.parse_args()
    if args.child:
        return child(args)
    got = {"this": summary(run_child(str(HERE), args.engine, "--seeds", str(args.seeds)))}
    if args.peer:
        got["peer"] = summary(run_child(str(HERE), args.peer, "--seeds", str(args.seeds)))
    for side, rows in got.items():
        for case, r in rows.items():
            print(f"{side:5} {case}: implementation / start {r['over_start']} "
                  f"(median {r['over_start_median']}), {r['seconds_median']} s median")
    write_figures(args.out, json.dumps({"seeds": args.seeds, **got}, indent=1))


if __name__ == "__main__":
    main()
