"""GPU facts without a GPU (issue 21): ptxas's resource report for random
fixed candidates of every thesis kernel at the thesis's sizes.

Reported per kernel: the cost of `ptxas_report` per candidate (one nvcc
job per core over the whole batch: front end, PTX, ptxas -v, cubin), the
cost of one candidate compiled alone (`ptxas_info`, what the Code tab and
`codegen --json` pay), the share of candidates that spill registers,
registers (median, max), local memory, the resource that limits occupancy
on h200, and how often the bound with ptxas registers in μ
(`model.registers`) exceeds the plain bound. The candidates come from
random descents (`descent.random_fixed`), cached in data/campaign/drawn/
(the campaign's cache: its random stage reuses them).

    python benchmarks/bench_ptxas.py [--n 100] [--single 10] [--jobs 2] [--seed 0]
        [--timeout 60] [--kernels "axpy,matmul 256"] [--out data/bench/ptxas.json]

A kernel nvcc has not compiled within --timeout seconds (a fully unrolled
one of thousands of lines) is counted in `timed_out`, not waited for.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from peer import write_figures

import workbench as wb
from workbench.campaign.run import DrawnCache
from workbench.codegen import generate
from workbench.codegen.compile import nvcc_path, occupancy, ptxas_info, ptxas_report, spills
from workbench.descent import random_fixed
from workbench.model.registers import bound_with_registers
from workbench.paths import data_dir
from workbench.search.thesis import KERNELS


def draw(builder, sizes, n, seed, cache):
    root = wb.Candidate.root(wb.kernels.build_kernel(builder, sizes))
    have = cache.load(builder, sizes)
    out = []
    for s in range(seed * 1_000_003, seed * 1_000_003 + n):
        cand = None
        if s in have:
            try:
                cand = wb.Candidate.replay(root.kernel, have[s])
            except wb.WorkbenchError:
                cand = None
        if cand is None:
            cand = random_fixed(root, random.Random(s))
            cache.add(builder, sizes, s, [d.to_dict() for d in cand.trail])
        out.append(cand)
    return out


def bench_kernel(label, n, single, jobs, seed, cache, timeout) -> dict:
    builder, sizes = KERNELS[label]
    t0 = time.perf_counter()
    cands = draw(builder, sizes, n, seed, cache)
    draw_s = time.perf_counter() - t0
    gens = [generate(c, f"k{i}") for i, c in enumerate(cands)]
    with tempfile.TemporaryDirectory() as tmp:
        rep = ptxas_report(gens, "sm_90", workdir=tmp, jobs=jobs, timeout_s=timeout)
    one = []
    for g in [g for g in gens if g.name in rep.facts][:single]:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            ptxas_info(g.cuda, g.name, "sm_90", tmp)
            one.append(time.perf_counter() - t)
    facts = [rep.facts[g.name] for g in gens if g.name in rep.facts]
    occ = [occupancy(rep.facts[g.name], g.launch, "h200") for g in gens if g.name in rep.facts]
    raised = 0
    for c, g in zip(cands, gens):
        if g.name in rep.facts:
            b = wb.bound(c, "h200").value_ns
            if bound_with_registers(c, rep.facts[g.name]["registers"], "h200").value_ns \
                    > b * (1 + 1e-9):
                raised += 1
    regs = [f["registers"] for f in facts]
    return {"kernel": label, "sizes": sizes, "candidates": len(gens),
            "compiled": len(facts), "errors": len(rep.errors),
            "timed_out": sum(1 for e in rep.errors.values() if "took more than" in e),
            "lines_median": statistics.median(g.cuda.count("\n") for g in gens),
            "lines_max": max(g.cuda.count("\n") for g in gens),
            "batch_s": round(rep.seconds, 2), "jobs": jobs,
            "ms_per_candidate_batched": round(1e3 * rep.seconds / len(gens), 1),
            "ms_per_candidate_alone": round(1e3 * statistics.median(one), 1) if one else None,
            "spilling": sum(1 for f in facts if spills(f)),
            "share_spilling": sum(1 for f in facts if spills(f)) / len(facts) if facts else None,
            "registers_median": statistics.median(regs) if regs else None,
            "registers_max": max(regs) if regs else None,
            "local_bytes_max": max((f["local_bytes"] for f in facts), default=0),
            "limited_by": dict(Counter(o["limited_by"] for o in occ)),
            "occupancy_median": statistics.median(o["occupancy"] for o in occ) if occ else None,
            "register_bound_raised": raised, "draw_s": round(draw_s, 1)}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--single", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per nvcc job")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--out", default=str(data_dir() / "bench" / "ptxas.json"))
    args = ap.parse_args(argv)
    if nvcc_path() is None:
        sys.exit("nvcc is not on PATH")
    cache = DrawnCache(data_dir() / "campaign" / "drawn")
    rows = []
    for label in [x.strip() for x in args.kernels.split(",")]:
        row = bench_kernel(label, args.n, args.single, args.jobs, args.seed, cache,
                           args.timeout)
        rows.append(row)
        print(json.dumps(row), flush=True)
    total = sum(r["candidates"] for r in rows)
    out = {"benchmark": "ptxas", "when": time.strftime("%Y-%m-%d"),
           "host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
           "nvcc": os.popen(f"{nvcc_path()} --version").read().strip().splitlines()[-1],
           "kernels": rows,
           "all": {"candidates": total,
                   "ms_per_candidate_batched": round(1e3 * sum(r["batch_s"] for r in rows)
                                                     / total, 1),
                   "share_spilling": sum(r["spilling"] for r in rows) / total,
                   "timed_out": sum(r["timed_out"] for r in rows),
                   "register_bound_raised": sum(r["register_bound_raised"] for r in rows)}}
    write_figures(args.out, json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["all"]))


if __name__ == "__main__":
    main()
