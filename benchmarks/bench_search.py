"""Search against random implementations on the CPU backend (issue 6).

matmul 256×256×32: a TAG-MCTS search with a budget of 200 evaluations (2 dask
workers by default) and, in the same run, the peer — random fixed
candidates (uniform random descents) measured on the same backend. Reports
the best time found, the median random time and their ratio; the records of
both go to data/runs/ (every sample kept).

    python benchmarks/bench_search.py [--budget 200] [--random 60] [--workers 2]
                                      [--seed 0] [--out data/search/matmul256_cpu.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

import pandas as pd

import workbench as wb
from workbench.descent import random_fixed
from workbench.runtime import evaluate
from workbench.search import Search


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--random", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--policy", default="tag")
    ap.add_argument("--order", default="thesis")
    ap.add_argument("--runs", default="data/runs")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    root = wb.Candidate.root(wb.kernels.matmul(m=256, n=256, k=32))

    t0 = time.perf_counter()
    rng = random.Random(args.seed)
    randoms = evaluate([random_fixed(root, rng) for _ in range(args.random)], "cpu",
                       store=f"{args.runs}/random_matmul256_cpu.jsonl")
    random_s = time.perf_counter() - t0
    times = sorted(r["median_ns"] for r in randoms if r["status"] == "ok")
    median = statistics.median(times)

    s = Search(root, "cpu", budget=args.budget, workers=args.workers, seed=args.seed,
               policy=args.policy, order=args.order,
               store=f"{args.runs}/search_matmul256_cpu.jsonl")
    out = s.run()
    hist = s.frame()
    first_below = hist.index[hist["best_ns"] <= median / 5].min() if len(hist) else None
    result = {
        "kernel": "matmul 256x256x32", "backend": "cpu", "search_id": out["search_id"],
        "policy": out["policy"], "order": out["order"], "workers": args.workers,
        "evaluations": out["evaluations"], "search_s": out["elapsed_s"],
        "best_ns": out["best_ns"], "best_bound_ns": out["best_bound_ns"],
        "numpy_median_ns": out["reference_median_ns"],
        "random": {"count": len(times), "median_ns": median, "best_ns": times[0],
                   "worst_ns": times[-1], "seconds": random_s},
        "speedup_over_median_random": median / out["best_ns"],
        "best_random_over_best_search": times[0] / out["best_ns"],
        "evaluations_to_5x": None if pd.isna(first_below) else int(first_below) + 1,
        "cuts": out["cuts"], "descent_failures": out["descent_failures"],
        "best_trail": out["best_trail"],
    }
    print(f"search: best {out['best_ns'] / 1e3:,.1f} us after {out['evaluations']} evaluations "
          f"({out['elapsed_s']:.0f} s, {args.workers} workers); bound of the best "
          f"{out['best_bound_ns'] / 1e3:,.1f} us; numpy {out['reference_median_ns'] / 1e3:,.1f} us")
    print(f"random ({len(times)}): median {median / 1e3:,.1f} us, best {times[0] / 1e3:,.1f} us")
    print(f"median random / best search: {result['speedup_over_median_random']:.2f}x; "
          f"best random / best search: {result['best_random_over_best_search']:.2f}x; "
          f"cuts {out['cuts']}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
