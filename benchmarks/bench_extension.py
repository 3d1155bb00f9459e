"""The first lowering of a matmul: building the extended problem
(`Problem.extended`) and carrying the candidate over to it (`lowering.remap`), by
the fast build and, as the peer in the same run, by the plain generic
loops (`Problem._fast = False`, the engine before the fast paths). Each
measure runs in a fresh process (nothing cached), `--repeat` times, best
and median kept; the root's build is reported too.

    python benchmarks/bench_extension.py [--sizes 256 1024] [--repeat 3]

Writes data/bench/extension.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(size: int, fast: bool) -> None:
    import workbench as wb
    import workbench.space.lowering as lowering
    from workbench.space.problem import Problem
    Problem._fast = fast
    k = wb.kernels.matmul(m=size, n=size, k=size)
    t0 = time.perf_counter()
    root = wb.Candidate.root(k)
    root_s = time.perf_counter() - t0
    spent = {"extended": 0.0, "remap": 0.0}

    def timed(owner, name):
        f = getattr(owner, name)

        def g(*a, **kw):
            t = time.perf_counter()
            try:
                return f(*a, **kw)
            finally:
                spent[name] += time.perf_counter() - t
        setattr(owner, name, g)
    timed(Problem, "extended")
    timed(lowering, "remap")
    # the first pair that may go through memory (d0 → d10 on a matmul):
    # the lowering moves its whole communication (five pairs)
    ch = next(c for c in root.choices() if c.name == "dim_map" and "MEMORY" in c.values)
    t0 = time.perf_counter()
    kid = root.apply(ch.name, ch.objects, "MEMORY")
    click = time.perf_counter() - t0
    assert kid.problem is not root.problem
    print(json.dumps({"root_s": root_s, "click_s": click, "extended_s": spent["extended"],
                      "remap_s": spent["remap"], "instances": len(kid.problem.instances),
                      "digest": kid.digest()}))


def measure(size: int, fast: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(size), str(int(fast))],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1] == "1")
        return
    results = {}
    for size in args.sizes:
        runs = {"before": [], "after": []}
        for _ in range(args.repeat):  # interleaved: load on the machine hits both alike
            runs["before"].append(measure(size, False))
            runs["after"].append(measure(size, True))
        assert len({r["digest"] for r in runs["before"] + runs["after"]}) == 1, \
            "the fast build gives another candidate"
        row = {}
        for which, rs in runs.items():
            row[which] = {key: {"best": min(r[key] for r in rs),
                                "median": statistics.median(r[key] for r in rs)}
                          for key in ("click_s", "extended_s", "remap_s", "root_s")}
        row["speedup_click_median"] = (row["before"]["click_s"]["median"]
                                       / row["after"]["click_s"]["median"])
        row["speedup_click_best"] = (row["before"]["click_s"]["best"]
                                     / row["after"]["click_s"]["best"])
        row["instances"] = runs["after"][0]["instances"]
        results[f"matmul {size}"] = row
        print(f"matmul {size} ({row['instances']} instances after the lowering), "
              f"median of {args.repeat} (best):")
        for which in ("before", "after"):
            r = row[which]
            print(f"  {which:6}  click {r['click_s']['median']:6.2f} s ({r['click_s']['best']:.2f})"
                  f"  extended {r['extended_s']['median']:5.2f}  remap "
                  f"{r['remap_s']['median']:5.2f}  | root {r['root_s']['median']:5.2f}")
        print(f"  speed-up of the click: {row['speedup_click_median']:.2f}x median, "
              f"{row['speedup_click_best']:.2f}x best")
    path = ROOT / "data" / "bench" / "extension.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"machine": platform.node(), "python": platform.python_version(),
                                "repeat": args.repeat, "results": results}, indent=2) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
