"""Does the space hold the fast kernels? (issue 16)

On matmul 1024×1024×1024 (h200 target):
- random completions of the root (descents with backtracking): how many put
  a multiply-add dimension on threads, and their bounds;
- every value the root offers for the multiply-add's dim_kind: does a
  completion exist below it;
- the register-tiled recipe (`workbench.recipes`): its bound against the
  root's, and what ptxas says of its CUDA;
- a model-guided search: Monte-Carlo descents (eq. 6.2, `workbench.descent.
  descend`) whose threshold T is the best bound found so far, so that each
  descent must end below every earlier one (no measurement: the h200 bound is
  the objective; a CPU run at 1024 would take minutes per candidate).

    python benchmarks/bench_fast_kernels.py [--completions 20] [--descents 40] [--minutes 15]
        [--out data/bench/fast_kernels.json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time

from peer import write_figures

import workbench as wb
from workbench.codegen import generate
from workbench.codegen.compile import nvcc_path, ptxas_info
from workbench.descent import descend, random_fixed
from workbench.recipes import forced_candidate

MAD_DIMS = ("c_m0", "c_m1", "c_m2", "c_n0", "c_n1", "c_n2", "c_k0", "c_k1")


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--completions", type=int, default=20)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--descents", type=int, default=40)
    ap.add_argument("--minutes", type=float, default=15.0, help="time box of the search")
    ap.add_argument("--out", default="data/bench/fast_kernels.json")
    a = ap.parse_args(argv)
    kernel = wb.kernels.matmul(a.size, a.size, a.size)
    root = wb.Candidate.root(kernel)
    lab = kernel.dims_by_label()
    root_ns = wb.bound(root, target="h200").value_ns
    out = {"kernel": kernel.spec(), "target": "h200", "root_bound_ns": root_ns}

    # random completions
    rows, t0 = [], time.perf_counter()
    for seed in range(a.completions):
        c = random_fixed(root, random.Random(seed))
        kinds = {d: c.value("dim_kind", (lab[d],)) for d in MAD_DIMS}
        rows.append({"seed": seed, "mad_threads": [d for d, k in kinds.items() if k == "THREAD"],
                     "bound_ns": wb.bound(c, target="h200").value_ns})
        print(f"completion {seed}: threads {rows[-1]['mad_threads']}, "
              f"bound {rows[-1]['bound_ns'] / 1e3:,.1f} µs", flush=True)
    bounds = [r["bound_ns"] for r in rows]
    out["completions"] = {
        "count": len(rows), "seconds": time.perf_counter() - t0,
        "with_mad_on_threads": sum(1 for r in rows if r["mad_threads"]),
        "bound_ns_min": min(bounds), "bound_ns_median": statistics.median(bounds),
        "bound_ns_max": max(bounds), "rows": rows}

    # every root value of the multiply-add's dim_kind completes
    values = []
    for d in MAD_DIMS:
        for v in sorted(root.domain("dim_kind", (lab[d],))):
            try:
                c = random_fixed(root.apply("dim_kind", (lab[d],), v), random.Random(0))
                ok = c.is_fixed
            except wb.WorkbenchError:
                ok = False
            values.append({"dim": d, "value": v, "completes": ok})
            print(f"dim_kind({d}) = {v}: {'completes' if ok else 'NO completion'}", flush=True)
    out["mad_dim_kind_values"] = values

    # the recipe
    t0 = time.perf_counter()
    c = forced_candidate(root, "register_tiled_matmul")
    fixed = random_fixed(c, random.Random(0))
    forced_s = time.perf_counter() - t0
    g = generate(fixed, "expert")
    b = wb.bound(fixed, target="h200")
    out["expert"] = {"bound_ns": b.value_ns, "ratio_to_root": b.value_ns / root_ns,
                     "bound_reason": b.justification.text, "seconds_to_force": forced_s,
                     "launch": g.launch, "barriers_per_block": g.implementation.barrier_count(),
                     "ptxas_sm90": ptxas_info(g.cuda, "expert") if nvcc_path() else None,
                     "trail": [d.to_dict() for d in fixed.trail]}
    print(f"expert: bound {b.value_ns / 1e3:,.1f} µs = {b.value_ns / root_ns:.2f}× the root's; "
          f"ptxas {out['expert']['ptxas_sm90']}")
    out["model_search"] = model_search(root, a.descents, a.minutes * 60, root_ns)
    write_figures(a.out, json.dumps(out, indent=1) + "\n")
    return out


def model_search(root, descents: int, seconds: float, root_ns: float) -> dict:
    """Descents by eq. 6.2 with T = the best bound so far (uniform before the
    first completion); a descent whose every child is at or above T is cut."""
    rng = random.Random(0)
    best, best_trail, rows, t0 = math.inf, None, [], time.perf_counter()

    def bound_fn(c):
        return wb.bound(c, target="h200").value_ns
    for i in range(descents):
        if time.perf_counter() - t0 > seconds:
            break
        d = descend(root, rng, backtrack=True, bound_fn=bound_fn, best_ns=best, start_bound=root_ns)
        fixed, cause, depth, dead = d.candidate, d.cause, d.depth, d.retries
        b = bound_fn(fixed) if fixed is not None else None
        if b is not None and b < best:
            best, best_trail = b, [d.to_dict() for d in fixed.trail]
        rows.append({"descent": i, "bound_ns": b, "cut": cause, "depth": depth,
                     "dead_ends": dead, "elapsed_s": time.perf_counter() - t0})
        print(f"descent {i}: {'cut by ' + cause if b is None else f'{b / 1e3:,.1f} µs'}; "
              f"best {best / 1e3:,.1f} µs = {best / root_ns:.2f}× root", flush=True)
    return {"descents": len(rows), "seconds": time.perf_counter() - t0, "best_bound_ns": best,
            "best_ratio_to_root": best / root_ns, "best_trail": best_trail, "rows": rows}


if __name__ == "__main__":
    main()
