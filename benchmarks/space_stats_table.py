"""Dead-end probability, mean depth and size of the GPU decision space for the
kernels and sizes of thesis Tables 4.3 and 6.1, beside the thesis figures.

Each row is `python -m workbench space-stats` on that kernel (random
descents in the fixed choice order, no backtracking), with dead ends
counted both ways: the first random pick fails, and the thesis's way (a
choice every value of which fails; the size is Knuth's estimate over valid
children). Prints a Markdown table for the README.

    python benchmarks/space_stats_table.py [--descents 100] [--seed 0] [--order thesis]
        [--no-globals]
"""

from __future__ import annotations

import argparse
import math
import time

import workbench as wb
from workbench.cli import space_stats

# kernel, sizes, thesis dead-end % (Table 4.3), thesis size and depth (Table 6.1)
ROWS = [
    ("axpy", {"n": 2 ** 26}, 0.1, 1.1e11, 21.9),
    ("matmul", {"m": 256, "n": 256, "k": 32}, 14, 1.83e21, 41.0),
    ("matmul", {"m": 1024, "n": 1024, "k": 1024}, 2.8, 3.5e21, 41.0),
    ("strided_matmul", {"m": 1024, "n": 1024, "k": 1024, "stride": 32}, 2.3, 6.0e20, 40.9),
    ("batched_matmul", {"b": 512, "m": 32, "n": 32, "k": 64}, 17, 2.5e28, 57.4),
    ("reuse_matmul", {"b": 512, "m": 32, "n": 32, "k": 64}, 31, 7.1e25, 56.2),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--descents", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--order", default="thesis", help="a registered choice order")
    ap.add_argument("--only", default=None, help="rows of these kernels only (comma-separated)")
    ap.add_argument("--no-globals", action="store_true",
                    help="the peer: the clauses alone, without the global propagators")
    args = ap.parse_args()
    prune = None
    if args.no_globals:
        from workbench.space.problem import Problem
        Problem._globals = False

        def prune(kernel):  # a root of its own, not the kernel's cached one
            return ()
    print(f"{args.descents} random descents per kernel, seed {args.seed}, "
          f"order {args.order}.\n")
    print("| kernel | sizes | dead ends, first pick (ours) | dead ends, every value fails "
          "(ours) | dead ends (thesis) | mean depth (ours) | depth (thesis) | log10 size (ours, "
          "valid children) | log10 size (thesis) | s / descent |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, sizes, dead, size, depth in ROWS:
        if args.only and name not in args.only.split(","):
            continue
        root = wb.Candidate.root(getattr(wb.kernels, name)(**sizes), prune=prune)
        t0 = time.perf_counter()
        s = space_stats(root, args.descents, args.seed, args.order)
        per = (time.perf_counter() - t0) / args.descents
        size_txt = f"{s['thesis_log10_space_size']:.1f}"
        if s["thesis_dead_ends"] == s["descents"]:  # no leaf reached: the Cartesian bound
            size_txt = f"≤ {size_txt}"
        sz = ", ".join(f"{k}={v}" for k, v in sizes.items())
        print(f"| {name} | {sz} | {100 * s['dead_end_probability']:.0f}% "
              f"| {100 * s['thesis_dead_end_probability']:.0f}% | {dead}% "
              f"| {s['mean_depth']:.1f} | {depth} | {size_txt} | {math.log10(size):.1f} "
              f"| {per:.2f} |", flush=True)


if __name__ == "__main__":
    main()
