"""Latency of the GPU decision space on matmul 1024×1024×1024 (issue 3).

Random descents in the fixed choice order of `workbench.descent`; every step
is one `Candidate.apply` (decision, propagation, lowering when a trigger
fires, new immutable candidate). Reported: apply+propagate p50/p95, the time
of one descent to a fixed candidate (with backtracking on dead ends), cold
(first descents pay for building each lowered problem once) and warm; and,
measured in the same run, the foundation benchmark's basic block of 32
instructions as the peer the ratios are taken against.

    python benchmarks/bench_gpu_space.py [--descents 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time

from peer import pct

import workbench as wb
import workbench.candidate as wc
from workbench.descent import descend


def timed_descents(root, n, seed, backtrack=True, order="thesis"):
    lat, per = [], []
    orig = wc.Candidate.decide

    def decide(self, d):
        t0 = time.perf_counter()
        try:
            return orig(self, d)
        finally:
            lat.append(time.perf_counter() - t0)
    wc.Candidate.decide = decide
    try:
        rng = random.Random(seed)
        for _ in range(n):
            t0 = time.perf_counter()
            descend(root, rng, backtrack=backtrack, order=order)
            per.append(time.perf_counter() - t0)
    finally:
        wc.Candidate.decide = orig
    return lat, per


def basic_block_peer(descents, seed):
    k = wb.kernels.random_basic_block(32, 0.15, seed=32)
    root = wb.Candidate.root(k)
    rng = random.Random(seed)
    lat = []
    for _ in range(descents):
        c = root
        while not c.is_fixed:
            ch = rng.choice(c.choices())
            t0 = time.perf_counter()
            c = c.apply(ch.name, ch.objects, rng.choice(ch.values))
            lat.append(time.perf_counter() - t0)
    return lat


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--descents", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    k = wb.kernels.matmul(m=1024, n=1024, k=1024)
    t0 = time.perf_counter()
    root = wb.Candidate.root(k)
    root_s = time.perf_counter() - t0
    p = root.problem
    print(f"matmul 1024: {len(p.keys)} variables, {len(p.instances)} propagators, "
          f"root {root_s:.2f} s")
    cold_lat, cold = timed_descents(root, args.descents, args.seed)
    warm_lat, warm = timed_descents(root, args.descents, args.seed + 1)
    peer = basic_block_peer(10, args.seed)
    bb50, bb95 = pct(peer, .5), pct(peer, .95)
    rows = [("cold", cold_lat, cold), ("warm", warm_lat, warm)]
    print(f"{'':>5} {'apply p50 ms':>12} {'apply p95 ms':>12} {'descent p50 s':>13} "
          f"{'descent mean s':>14} {'p50 / bb32':>10} {'p95 / bb32':>10}")
    for name, lat, per in rows:
        a50, a95 = pct(lat, .5), pct(lat, .95)
        print(f"{name:>5} {a50 * 1e3:>12.2f} {a95 * 1e3:>12.2f} {pct(per, .5):>13.2f} "
              f"{sum(per) / len(per):>14.2f} {a50 / bb50:>9.1f}x {a95 / bb95:>9.1f}x")
    print(f"peer: basic block of 32 instructions, apply p50 {bb50 * 1e6:.0f} us, "
          f"p95 {bb95 * 1e6:.0f} us")


if __name__ == "__main__":
    main()
