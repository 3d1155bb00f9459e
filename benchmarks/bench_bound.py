"""Latency of the lower-bound model on matmul 1024×1024×1024 (issue 4).

Reported: `wb.bound` of the root and of random fixed candidates (p50/p95),
look-ahead over every value of one open choice (each value applied with full
propagation, then bounded), and the choice ranking of the root. The peer,
measured in the same run on the same candidates, is one `Candidate.apply`
(a decision and its propagation): the ratios say what a bound costs next to
the step that produces the candidate it bounds.

    python benchmarks/bench_bound.py [--fixed 10] [--reps 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time

from peer import pct

import workbench as wb
from workbench.descent import descend
from workbench.errors import DeadEnd
from workbench.model.lookahead import lookahead, rank_choices
from workbench.orders import choice_order


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixed", type=int, default=10)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    k = wb.kernels.matmul(1024, 1024, 1024)
    root = wb.Candidate.root(k)
    wb.bound(root)  # warm the decoded-domain tables
    root_t = timed(lambda: wb.bound(root), args.reps)

    rng = random.Random(args.seed)
    fixed_t, apply_t, look_t, look_n, paths = [], [], [], [], []
    for _ in range(args.fixed):
        d = descend(root, rng, backtrack=True, keep_path=True)
        if d.candidate is None:
            continue
        paths.append(d.path)
        fixed_t += timed(lambda c=d.candidate: wb.bound(c), max(1, args.reps // 5))
    for path in paths:
        for c in path[::max(1, len(path) // 6)]:  # candidates along the descent
            ch = choice_order().next(c)
            if ch is None:
                continue
            try:  # a value whose propagation fails is a dead end, not a timing
                apply_t += timed(lambda c=c, ch=ch: c.apply(ch.name, ch.objects, ch.values[0]),
                                 1)
            except DeadEnd:
                pass
            parent = wb.bound(c)
            t0 = time.perf_counter()
            lookahead(c, ch.name, ch.objects, parent=parent)
            look_t.append(time.perf_counter() - t0)
            look_n.append(len(ch.values))
    rank_t = timed(lambda: rank_choices(root), 1)[0]

    ms = 1e3
    print(f"matmul 1024: bound of the root p50 {pct(root_t, .5) * ms:.2f} ms, "
          f"p95 {pct(root_t, .95) * ms:.2f} ms ({len(root_t)} runs)")
    print(f"matmul 1024: bound of a fixed candidate p50 {pct(fixed_t, .5) * ms:.2f} ms, "
          f"p95 {pct(fixed_t, .95) * ms:.2f} ms ({len(paths)} candidates)")
    print(f"look-ahead over all values of one choice: p50 {pct(look_t, .5) * ms:.1f} ms, "
          f"max {max(look_t) * ms:.1f} ms ({len(look_t)} choices, "
          f"{sum(look_n) / len(look_n):.1f} values on average)")
    print(f"peer, one apply+propagate on the same candidates: p50 "
          f"{pct(apply_t, .5) * ms:.2f} ms; bound of a fixed candidate / apply = "
          f"{pct(fixed_t, .5) / pct(apply_t, .5):.2f}×")
    print(f"ranking of every open choice the root's bound reads: {rank_t:.2f} s")


if __name__ == "__main__":
    main()
