"""The bound along random descents, at the size the issue asks (500 per kernel),
beyond the 200 per kernel that CI checks (issue 4).

For each kernel at the test sizes (tests/gpu_cases.py SMALL): random descents
with backtracking; the bound of every candidate on the way for the h200,
kepler_k4000 and cpu_reference targets, each shown value the max with the
parent's; how often the raw model dipped below an ancestor; for every fixed
candidate its reference C compiled, timed (best of 5) and checked against the
`cpu_reference` bound, and every target's bound checked against the roofline.
Writes data/bound/descents.json (or, when that record exists, a file beside
it with the time in its name) and prints a Markdown table.

    python benchmarks/bound_descents.py [--descents 500] [--workers N] [--cpu-target NAME]
                                        [--cpu-only]

`--cpu-target host` checks the CPU timings against this host's calibrated
target (`python -m workbench calibrate --backend cpu`) instead of
`cpu_reference`.
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from peer import write_figures

import workbench as wb
from workbench.codegen import generate
from workbench.codegen.compile import compile_c
from workbench.kernels.linalg import SMALL_SIZES
from workbench.model import hardware
from workbench.model.audit import descent_with_bounds, dips, roofline_ns

TARGETS = ("h200", "kepler_k4000", "cpu_reference")
CPU = "cpu_reference"  # the target the CPU timings are checked against
SIZES = SMALL_SIZES


def _work(args):
    name, seeds, targets = args
    root = wb.Candidate.root(getattr(wb.kernels, name)(**SIZES[name]))
    out = []
    for seed in seeds:
        cand, path = descent_with_bounds(root, random.Random(seed), targets)
        out.append((seed, generate(cand, f"k{seed}").c, path))
    return out


def _time_ns(fn, args, repeat=5) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn(*args)
        best = min(best, time.perf_counter_ns() - t0)
    return best


def audit(name: str, descents: int, workers: int) -> dict:
    seeds = list(range(descents))
    chunks = [(name, seeds[i::workers], TARGETS) for i in range(workers)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        drawn = sorted((x for part in pool.map(_work, chunks) for x in part),
                       key=lambda x: x[0])
    kernel = getattr(wb.kernels, name)(**SIZES[name])
    lib = compile_c([c for _, c, _ in drawn], tempfile.mkdtemp(prefix="wb_audit_"))
    inputs = kernel.make_inputs(np.random.default_rng(0))
    keep = [np.ascontiguousarray(inputs[a.name]) if a.role == "input"
            else np.zeros(a.length, np.float32) for a in kernel.arrays() if not a.temporary]
    args = [x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)) for x in keep]
    args += [ctypes.c_float(float(inputs[s])) for s in kernel.scalars]
    n_dips = n_steps = 0
    cpu_viol, roof_viol, ratios = [], [], []
    roofs = {t: roofline_ns(kernel, hardware(t)) for t in TARGETS}
    for seed, _, path in drawn:
        d, s = dips(path)
        n_dips, n_steps = n_dips + d, n_steps + s
        for t in TARGETS:
            shown = [v for _, v in path[t]]
            assert all(b >= a for a, b in itertools.pairwise(shown))
            if path[t][-1][0] < roofs[t] * (1 - 1e-9):
                roof_viol.append((seed, t))
        fn = getattr(lib, f"k{seed}")
        fn.restype = None
        measured = _time_ns(fn, args)
        b = path[CPU][-1][1]
        ratios.append(b / measured)
        if b > measured:
            cpu_viol.append((seed, b, measured))
    return {
        "kernel": name, "sizes": SIZES[name], "descents": len(drawn), "steps": n_steps,
        "raw_dips": n_dips, "dip_fraction": n_dips / n_steps,
        "cpu_violations": cpu_viol, "roofline_violations": roof_viol,
        "cpu_bound_over_measured_median": statistics.median(ratios),
        "cpu_bound_over_measured_max": max(ratios),
        "h200_fixed_bound_ns_median": (statistics.median(p["h200"][-1][1] for _, _, p in drawn)
                                       if "h200" in TARGETS else None),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--descents", type=int, default=500)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--kernels", default=",".join(SIZES))
    ap.add_argument("--cpu-target", default="cpu_reference",
                    help="target of the CPU check; `host`: this host's calibrated one")
    ap.add_argument("--cpu-only", action="store_true",
                    help="bound only the CPU target along each descent (the soundness audit "
                         "at 1,000 descents; GPU targets are audited by the default run)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "bound"
                                          / "descents.json"))
    args = ap.parse_args(argv)
    global TARGETS, CPU
    if args.cpu_target != "cpu_reference":
        from workbench.runtime.calibrate import host_cpu_target
        CPU = host_cpu_target() if args.cpu_target == "host" else args.cpu_target
        TARGETS = ("h200", "kepler_k4000", CPU)
    if args.cpu_only:
        TARGETS = (CPU,)
    rows = [audit(k, args.descents, args.workers) for k in args.kernels.split(",")]
    write_figures(args.out, json.dumps({"date": time.strftime("%Y-%m-%d"), "cpu_target": CPU,
                                          "targets": TARGETS, "rows": rows}, indent=1) + "\n")
    print(f"| kernel | descents | steps ({len(TARGETS)} targets) | raw dips | "
          "CPU bound > measured | below roofline | CPU bound / measured (median, max) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['kernel']} | {r['descents']} | {r['steps']:,} | {r['raw_dips']} "
              f"({100 * r['dip_fraction']:.2f} %) | {len(r['cpu_violations'])} | "
              f"{len(r['roofline_violations'])} | {r['cpu_bound_over_measured_median']:.3f}, "
              f"{r['cpu_bound_over_measured_max']:.3f} |")
    bad = any(r["cpu_violations"] or r["roofline_violations"] for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
