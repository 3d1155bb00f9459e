"""Apply + propagate latency on matmul 1024 in the choice order a search
takes (thesis) and in a person's (random), against a peer: the engine of
another checkout (`--peer PATH`, e.g. a `git worktree` of the commit
before), measured in the same run on the same seeds; and the time to find
a witness of each candidate met along random-order descents.

    git worktree add /tmp/base <commit>
    python benchmarks/bench_apply_latency.py --peer /tmp/base [--descents 6]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

from peer import pct, run_child

HERE = Path(__file__).resolve().parent


def child(args) -> None:
    """One engine, one order: latencies of every apply (the first descent
    pays for building the lowered problems: reported apart as cold)."""
    sys.path.insert(0, args.engine)
    from bench_gpu_space import timed_descents

    import workbench as wb
    root = wb.Candidate.root(wb.kernels.matmul(m=1024, n=1024, k=1024))
    cold, _ = timed_descents(root, 1, args.seed, order=args.order)
    lat, _ = timed_descents(root, args.descents, args.seed + 1, order=args.order)
    print(json.dumps({"cold_n": len(cold), "cold_p95_ms": pct(cold, .95) * 1e3,
                      # the first lowerings (problems built at the click)
                      "cold_slowest_ms": [round(x * 1e3) for x in sorted(cold)[-4:]],
                      "n": len(lat), "p50_ms": pct(lat, .5) * 1e3,
                      "p95_ms": pct(lat, .95) * 1e3}))


def witnesses(descents: int, seed: int) -> dict:
    """Seconds to find a witness of the child of a random value of a random
    open choice, along random-order descents that only move to a child with
    a witness (a person following proven values who clicks an open one):
    found, proven empty (the search ran out of subtree), or not found in 10 s."""
    import workbench as wb
    from workbench.witness import find_witness
    root = wb.Candidate.root(wb.kernels.matmul(m=1024, n=1024, k=1024))
    rng = random.Random(seed)
    find_witness(root, rng=rng, budget_s=120)  # builds the first lowered problems
    found, empty, missed = [], 0, 0
    for _ in range(descents):
        c = root
        while not c.is_fixed:
            ch = rng.choice(c.choices())
            values = list(ch.values)
            rng.shuffle(values)
            for v in values:
                try:
                    kid = c.apply(ch.name, ch.objects, v)
                except wb.DeadEnd:
                    continue
                got = find_witness(kid, rng=rng, budget_s=10)
                if got.witness is not None:
                    found.append(got.seconds)
                    c = kid
                    break
                empty += got.exhausted
                missed += not got.exhausted
            else:
                break  # cannot happen: the parent's witness takes one of the values
    return {"found": len(found), "proven_empty": empty, "not_found_in_10s": missed,
            "median_s": statistics.median(found), "p90_s": pct(found, .9)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", help="another checkout whose engine is the peer")
    ap.add_argument("--descents", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--witness-descents", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--engine", default=str(HERE.parent), help=argparse.SUPPRESS)
    ap.add_argument("--order", default="thesis", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    engines = [("this", str(HERE.parent))] + ([("peer", args.peer)] if args.peer else [])
    rows = []
    for order in ("thesis", "random") if args.descents else ():
        for name, path in engines:
            row = {"engine": name, "order": order,
                   **run_child(__file__, path, "--order", order, "--descents",
                               str(args.descents), "--seed", str(args.seed))}
            rows.append(row)
            print(json.dumps(row), flush=True)
    w = witnesses(args.witness_descents, args.seed) if args.witness_descents else None
    if w:
        print(json.dumps({"witness": w}), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"apply": rows, "witness": w}, indent=1))


if __name__ == "__main__":
    main()
