"""The problem cache's budget (`workbench.space.problem.KEEP_INSTANCES`):
time and peak memory of a replay-heavy workload with the shipped budget,
against the cache before (every extended problem kept: an unbounded budget)
and no recent problems kept at all (budget 0), each in a fresh process of
the same run.

The workload is what the laws, the workers and a reloaded notebook do:
random fixed candidates of matmul 64×64×32 in random choice order, each
replayed from the root twice (a worker evaluating it, then a re-check).

    python benchmarks/bench_problem_cache.py [--candidates 8] [--seed 0]

Writes data/bench/problem_cache.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(budget: float, candidates: int, seed: int) -> None:
    import workbench as wb
    from workbench.descent import random_fixed
    from workbench.space import problem as pm

    pm._RECENT.budget = budget
    built = 0
    real_init = pm.Problem.__init__

    def counting(self, *a, **k):
        nonlocal built
        built += 1
        real_init(self, *a, **k)

    pm.Problem.__init__ = counting
    kernel = wb.kernels.matmul(m=64, n=64, k=32)
    t0 = time.perf_counter()
    root = wb.Candidate.root(kernel)
    trails = []
    for i in range(candidates):
        fixed = random_fixed(root, random.Random(seed * 1000 + i), order="random")
        trails.append(fixed.trail)
        del fixed
    descend_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    for _ in range(2):
        for trail in trails:
            wb.Candidate.replay(kernel, trail)
    replay_s = time.perf_counter() - t1
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"budget": budget, "descend_s": descend_s, "replay_s": replay_s,
                      "total_s": descend_s + replay_s, "problems_built": built,
                      "peak_rss_mb": peak_mb}))


def run(budget: float, candidates: int, seed: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(budget),
                          "--candidates", str(candidates), "--seed", str(seed)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidates", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.candidates, args.seed)
        return
    from workbench.space.problem import KEEP_INSTANCES
    rows = {}
    for name, budget in (("shipped", KEEP_INSTANCES), ("unbounded (before)", float("inf")),
                         ("none kept", 0)):
        rows[name] = run(budget, args.candidates, args.seed)
        r = rows[name]
        print(f"{name:20s} total {r['total_s']:6.1f} s (descents {r['descend_s']:.1f}, "
              f"replays {r['replay_s']:.1f})  problems built {r['problems_built']:4d}  "
              f"peak RSS {r['peak_rss_mb']:6.0f} MB")
    path = ROOT / "data" / "bench" / "problem_cache.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"machine": platform.node(), "python": platform.python_version(),
                                "date": time.strftime("%Y-%m-%d %H:%M"),
                                "kernel": "matmul m=64 n=64 k=32", "order": "random",
                                "candidates": args.candidates, "seed": args.seed,
                                "keep_instances": KEEP_INSTANCES, "rows": rows}, indent=1))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
