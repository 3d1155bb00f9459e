"""What climbing the bound (`workbench.search.climb`) buys a search, without a GPU.

1. **The bound alone**, a matmul (`--sizes`, 1024³ by default) on a GPU
   table: from one uniform rollout's leaf, `--moves` moves of the climb,
   against the peer measured in the same run: uniform rollouts (the
   thesis's, before anything is measured) for the same CPU time, keeping
   the least bound. Beside them, the bound of the best forced recipe
   (`recipes.PLANS`), which no search here is given.
2. **Measured times on the CPU backend** (the generated C, timed): TAG searches
   of one matmul with `--budget` evaluations and `--climb` moves a rollout
   (with `--from-best F`, also searches whose climbs start at the fastest
   implementation measured below the node for a share F of rollouts),
   against plain TAG searches (climb 0) given the same wall time, same seeds.

    python benchmarks/bench_climb.py [--seeds 3] [--moves 300] [--target nvidia_h200]
        [--sizes 1024x1024x1024]
        [--cpu-sizes 128x128x64] [--budget 10] [--climb 30] [--from-best 0.5]
        [--skip-bound] [--skip-cpu] [--out data/bench/climb.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from peer import write_figures

import workbench as wb
from workbench.descent import descend
from workbench.errors import WorkbenchError
from workbench.recipes import forced_candidate, plan_name, plans
from workbench.search import Search
from workbench.search.climb import climb


def bound_alone(seed: int, moves: int, target: str, sizes=(1024, 1024, 1024)) -> dict:
    root = wb.Candidate.root(wb.kernels.matmul(*sizes))

    def bound_fn(c):
        return wb.bound(c, target).value_ns
    rng = random.Random(seed)
    t0 = time.perf_counter()
    leaf = descend(root, rng, backtrack=True).candidate
    c = climb(root, leaf, bound_fn, rng, steps=moves)
    spent = time.perf_counter() - t0
    peer_rng, peer_best, rollouts = random.Random(10_000 + seed), float("inf"), 0
    t1 = time.perf_counter()
    while time.perf_counter() - t1 < spent:
        d = descend(root, peer_rng, backtrack=True)
        if d.candidate is not None:
            rollouts += 1
            peer_best = min(peer_best, bound_fn(d.candidate))
    return {"seed": seed, "seconds": round(spent, 1), "moves": c.steps, "failed_moves": c.failed,
            "first_leaf_ns": c.start_ns, "climbed_ns": c.bound_ns,
            "improvements": [list(x) for x in c.improved],
            "peer_rollouts": rollouts, "peer_best_ns": peer_best}


def best_recipe(target: str, sizes=(1024, 1024, 1024)) -> dict:
    """The least bound of the matmul's forced plans (each a subtree's bound)."""
    root = wb.Candidate.root(wb.kernels.matmul(*sizes))
    out = []
    for recipe, options in plans(root.kernel):
        try:
            cand = forced_candidate(root, recipe, **options)
        except WorkbenchError:  # a plan the space refuses at these sizes
            continue
        out.append((wb.bound(cand, target).value_ns, plan_name(recipe, options)))
    b, name = min(out)
    return {"plan": name, "bound_ns": b}


def cpu_searches(sizes: tuple, seed: int, budget: int, moves: int, from_best: float = 0.0
                 ) -> dict:
    root = wb.Candidate.root(wb.kernels.matmul(*sizes))
    row = {"seed": seed}
    runs = [("climb", {"budget": budget, "climb": moves})]
    if from_best:
        runs.append(("climb_from_best", {"budget": budget, "climb": moves,
                                          "climb_from_best": from_best}))
    runs.append(("plain", None))
    for label, opts in runs:
        if opts is None:  # the peer: as long as the climbing search took
            opts = {"budget": None, "time_s": row["climb"]["seconds"], "climb": 0}
        t0 = time.perf_counter()
        s = Search(root, "cpu", workers=0, store=None, seed=seed, samples=5, **opts)
        r = s.run()
        times = [e["median_ns"] for e in s.history if e["median_ns"]]
        row[label] = {"seconds": round(time.perf_counter() - t0, 1),
                      "evaluations": r["evaluations"], "best_ns": r["best_ns"],
                      "best_bound_ns": r["best_bound_ns"],
                      "median_ns": statistics.median(times) if times else None,
                      "target": s.target.name}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--moves", type=int, default=300)
    ap.add_argument("--target", default="nvidia_h200")
    ap.add_argument("--sizes", default="1024x1024x1024", help="the matmul the bound alone climbs")
    ap.add_argument("--cpu-sizes", default="128x128x64")
    ap.add_argument("--budget", type=int, default=10)
    ap.add_argument("--climb", type=int, default=30)
    ap.add_argument("--from-best", type=float, default=0.0,
                    help="also searches with this climb_from_best (0: not run)")
    ap.add_argument("--skip-cpu", action="store_true")
    ap.add_argument("--skip-bound", action="store_true")
    ap.add_argument("--out", default="data/bench/climb.json")
    args = ap.parse_args(argv)
    bsizes = tuple(int(x) for x in args.sizes.split("x"))
    out = {"date": time.strftime("%Y-%m-%d"), "target": args.target, "sizes": list(bsizes),
           "recipe": best_recipe(args.target, bsizes), "bound_alone": [], "cpu": []}
    print(f"best recipe on {args.target}: {out['recipe']['plan']} "
          f"{out['recipe']['bound_ns'] / 1e3:.1f} us")
    for seed in range(0 if args.skip_bound else args.seeds):
        r = bound_alone(seed, args.moves, args.target, bsizes)
        out["bound_alone"].append(r)
        print(f"seed {seed}: first leaf {r['first_leaf_ns'] / 1e3:,.1f} us -> climbed "
              f"{r['climbed_ns'] / 1e3:,.1f} us in {r['moves']} moves ({r['seconds']} s); "
              f"peer: best of {r['peer_rollouts']} rollouts {r['peer_best_ns'] / 1e3:,.1f} us",
              flush=True)
    sizes = tuple(int(x) for x in args.cpu_sizes.split("x"))
    for seed in range(0 if args.skip_cpu else args.seeds):
        r = cpu_searches(sizes, seed, args.budget, args.climb, args.from_best)
        out["cpu"].append(r)
        c, p = r["climb"], r["plain"]
        if "climb_from_best" in r:
            b = r["climb_from_best"]
            print(f"cpu {args.cpu_sizes} seed {seed}: climb {args.climb}, from the best measured "
                  f"{args.from_best:g}: {b['evaluations']} evals in {b['seconds']} s, best "
                  f"{b['best_ns'] / 1e3:,.1f} us (median {b['median_ns'] / 1e3:,.0f})", flush=True)
        print(f"cpu {args.cpu_sizes} seed {seed}: climb {args.climb}: {c['evaluations']} evals "
              f"in {c['seconds']} s, best {c['best_ns'] / 1e3:,.1f} us (median "
              f"{c['median_ns'] / 1e3:,.0f}); plain: {p['evaluations']} evals, best "
              f"{p['best_ns'] / 1e3:,.1f} us (median {p['median_ns'] / 1e3:,.0f})", flush=True)
    write_figures(args.out, json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
