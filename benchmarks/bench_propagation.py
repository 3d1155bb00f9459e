"""Latency of apply + propagate on the largest space so far.

Random descents on basic blocks of growing size; each step is one
`Candidate.apply` (decision, propagation to a fixpoint, new immutable
candidate). Peer, measured in the same run on the same decisions: a naive
fixpoint that re-runs every propagator until none prunes (what a propagation
loop without watch lists does).

    python benchmarks/bench_propagation.py [--sizes 12,24,32] [--descents 20]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from peer import pct

import workbench as wb
from workbench.space.propagators import DECISION, Store


def naive_apply(cand, ch, value):
    """Same decision, propagated by sweeping all propagators to a fixpoint."""
    d = wb.Decision(ch.name, ch.objects, (value,))
    v, mask = d.check(cand)
    p = cand.problem
    st = Store(p, cand._tables)
    st.put(v, cand._dom(v) & mask, DECISION)
    changed = True
    while changed:
        changed = False
        for inst in p.instances:
            if inst.run(st):
                changed = True
    return st


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="12,24,32")
    ap.add_argument("--descents", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"{'instructions':>12} {'vars':>6} {'propagators':>11} {'root ms':>8} "
          f"{'apply p50 us':>12} {'apply p95 us':>12} {'naive p50 us':>12} {'speedup':>8}")
    for n in map(int, args.sizes.split(",")):
        k = wb.kernels.random_basic_block(n, 0.15, seed=n)
        t0 = time.perf_counter()
        root = wb.Candidate.root(k)
        root_ms = (time.perf_counter() - t0) * 1e3
        rng = random.Random(args.seed)
        ours, naive = [], []
        for _ in range(args.descents):
            c = root
            while not c.is_fixed:
                ch = rng.choice(c.choices())
                val = rng.choice(ch.values)
                t0 = time.perf_counter()
                c2 = c.apply(ch.name, ch.objects, val)
                ours.append(time.perf_counter() - t0)
                if len(naive) < 200:
                    t0 = time.perf_counter()
                    st = naive_apply(c, ch, val)
                    naive.append(time.perf_counter() - t0)
                    assert [list(t) for t in st.tables] == [list(t) for t in c2._tables]
                c = c2
        p = root.problem
        p50, p95, n50 = pct(ours, .5) * 1e6, pct(ours, .95) * 1e6, statistics.median(naive) * 1e6
        print(f"{n:>12} {len(p.keys):>6} {len(p.instances):>11} {root_ms:>8.1f} "
              f"{p50:>12.0f} {p95:>12.0f} {n50:>12.0f} {n50 / p50:>7.1f}x")


if __name__ == "__main__":
    main()
