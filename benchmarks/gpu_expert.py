"""Time the expert register-tiled matmul (recipes.register_tiled_matmul,
completed at random) on the GPU against its bound and cuBLAS, at the
thesis's matmul 1024 and matmul 256 sizes; the records are appended to
data/gpu/<device>/expert.jsonl and a table is printed.

    python benchmarks/gpu_expert.py [--seeds 4] [--samples 20]

Without a GPU every record is status no_device (nothing is timed)."""
from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time

import workbench as wb
from workbench.descent import random_fixed
from workbench.paths import data_dir
from workbench.recipes import forced_candidate
from workbench.runtime import RecordStore, evaluate, get_backend

# (kernel label, sizes, recipe tiles): the test's 64 × 64 block of 16 × 16
# threads with 4 × 4 accumulators, and a 128 × 128 block of 32 × 32 threads
PLANS = [("matmul 1024", {"m": 1024, "n": 1024, "k": 1024}, {"tm": 4, "tn": 4, "threads": 16}),
         ("matmul 1024", {"m": 1024, "n": 1024, "k": 1024}, {"tm": 4, "tn": 4, "threads": 32}),
         ("matmul 256", {"m": 256, "n": 256, "k": 32}, {"tm": 4, "tn": 4, "threads": 16})]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4, help="random completions per plan")
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args(argv)
    from workbench.runtime.cuda import slug
    be = get_backend("cuda")
    out = data_dir() / "gpu" / slug(be.device) / "expert.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"device {be.device}; records -> {out}", flush=True)
    for label, sizes, tile in PLANS:
        kernel = wb.kernels.matmul(**sizes)
        t0 = time.perf_counter()
        try:
            forced = forced_candidate(wb.Candidate.root(kernel), "register_tiled_matmul",
                                      **tile)
        except wb.WorkbenchError as exc:
            print(f"{label} {tile}: recipe failed: {exc}", flush=True)
            continue
        fixed = [random_fixed(forced, random.Random(s)) for s in range(args.seeds)]
        recs = [dataclasses.replace(r, extra={**r.extra, "expert": {
                    "label": label, "tiles": tile, "seed": s}})
                for s, r in enumerate(evaluate(fixed, be, store=None, samples=args.samples,
                                               timeout_s=2.0))]
        RecordStore(out).append(recs)  # tagged x_expert: the campaign report's table
        for s, r in enumerate(recs):
            best = min(r["times_ns"]) if r["times_ns"] else None
            print(f"{label} {tile} seed {s}: {r['status']} verified={r['verified']} "
                  f"median {r['median_ns']} best {best} bound {r['bound_ns']:.0f} "
                  f"ref {r['reference']} {r['reference_median_ns']} "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
            if r["status"] != "ok":
                print("   ", r["message"][-400:], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
