"""The copy bandwidth axpy is held to, measured several ways in one run
beside the fastest axpy the campaign recorded (its trail replayed, its CUDA
generated again) and CuPy's: is the calibration's grid-stride copy the
fastest copy this GPU does? Every kernel is timed as the runtime times a
candidate (`time_launches`: L2 flushed before each launch), in interleaved
rounds so that clock drift falls on all alike.

    python benchmarks/gpu_copy.py [--rounds 3] [--samples 30] [--out FILE]

Writes data/gpu/<device>/copy_bandwidth.json (or --out), the runs before
kept under its `earlier`. Needs a GPU (`gpu_session.sh` runs it with COPY_S)."""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

# the copies are the calibration's own (`runtime.calibrate.SOURCE`: wb_copy,
# grid-stride, and wb_copy_one); the axpy a person writes by hand beside them
AXPY = r"""
extern "C" __global__ void axpy_one(const float4* __restrict__ x, const float4* __restrict__ y,
                                    float4* __restrict__ z, float alpha) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  float4 u = x[i], v = y[i];
  z[i] = make_float4(fmaf(alpha, u.x, v.x), fmaf(alpha, u.y, v.y),
                     fmaf(alpha, u.z, v.z), fmaf(alpha, u.w, v.w));
}
"""


def best_axpy(records: Path, n: int):
    """The ok axpy record of size n with the fastest sample."""
    best = None
    for line in records.read_text().splitlines():
        r = json.loads(line)
        if (r.get("kernel") == "axpy" and r.get("status") == "ok"
                and (r.get("sizes") or {}).get("n") == n and r.get("times_ns")
                and (best is None or min(r["times_ns"]) < min(best["times_ns"]))):
            best = r
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    import cupy as cp

    import workbench as wb
    from workbench.paths import data_dir
    from workbench.runtime.calibrate import SOURCE as CALIBRATION
    from workbench.runtime.cuda import flush_buffer, slug, time_launches
    from workbench.runtime.records import record_candidate
    if not cp.is_available():
        print("no GPU: nothing is timed", file=sys.stderr)
        return 2
    props = cp.cuda.runtime.getDeviceProperties(0)
    device = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    sms, l2 = int(props["multiProcessorCount"]), int(props.get("l2CacheSize", 50 << 20))
    folder = data_dir() / "gpu" / slug(device)
    n = 2 ** 26  # the thesis's axpy: x, y, z of n floats
    alpha = np.float32(1.5)
    x, y = (cp.random.rand(n, dtype=cp.float32) for _ in range(2))
    z = cp.empty(n, cp.float32)
    calib = cp.RawModule(code=CALIBRATION)
    stride, one = calib.get_function("wb_copy"), calib.get_function("wb_copy_one")
    axpy = cp.RawModule(code=AXPY).get_function("axpy_one")
    q = n // 4  # float4s
    copy_bytes, axpy_bytes = 2 * 4 * n, 3 * 4 * n
    rt = cp.cuda.runtime
    kernels = {
        # name: (bytes moved, launch)
        "copy, grid-stride (the calibration's: 16 blocks an SM of 512)":
            (copy_bytes, lambda: stride((sms * 16,), (512,), (x, z, np.int64(q)))),
        "copy, one float4 a thread (blocks of 256)":
            (copy_bytes, lambda: one((q // 256,), (256,), (x, z))),
        "copy, cudaMemcpyAsync device to device":
            (copy_bytes, lambda: rt.memcpyAsync(z.data.ptr, x.data.ptr, 4 * n,
                                                rt.memcpyDeviceToDevice,
                                                cp.cuda.get_current_stream().ptr)),
        "axpy, hand-written: one float4 a thread (blocks of 256)":
            (axpy_bytes, lambda: axpy((q // 256,), (256,), (x, y, z, alpha))),
        "axpy, cupy elementwise alpha * x + y (the campaign's reference)":
            (axpy_bytes, lambda: alpha * x + y),
    }
    rec = best_axpy(folder / "records.jsonl", n)
    ours = None
    if rec is not None:
        cand = record_candidate(rec)
        gen = wb.generate(cand)
        fn = cp.RawModule(code=gen.cuda, options=("--std=c++17",)).get_function("kernel")
        grid, block = tuple(gen.launch["grid"]), tuple(gen.launch["block"])
        ours = f"axpy, ours: the campaign's fastest record ({rec['digest'][:12]}, replayed)"
        kernels[ours] = (axpy_bytes, lambda: fn(grid, block, (x, y, z, alpha)))
        fn(grid, block, (x, y, z, alpha))
        err = float(cp.abs(z - (alpha * x + y)).max())
        print(f"ours: grid {grid} block {block}; max error {err:.3g}", flush=True)
    flush = flush_buffer(cp, l2)
    times = {k: [] for k in kernels}
    for _ in range(args.rounds):
        for k, (_, launch) in kernels.items():
            times[k] += time_launches(cp, launch, flush, args.samples)
    rows = []
    for k, (nbytes, _) in kernels.items():
        med, fast = statistics.median(times[k]), min(times[k])
        rows.append({"kernel": k, "bytes": nbytes, "median_ns": med, "min_ns": fast,
                     "bytes_per_s_median": nbytes / (med * 1e-9),
                     "bytes_per_s_best": nbytes / (fast * 1e-9), "times_ns": times[k]})
    best_copy = max(r["bytes_per_s_median"] for r in rows if r["kernel"].startswith("copy"))
    for r in rows:
        r["share_of_best_copy"] = r["bytes_per_s_median"] / best_copy
        print(f"{r['kernel']}: median {r['median_ns'] / 1e3:.1f} µs, "
              f"{r['bytes_per_s_median'] / 1e12:.3f} TB/s ({100 * r['share_of_best_copy']:.1f} % "
              f"of the fastest copy)", flush=True)
    out = Path(args.out) if args.out else folder / "copy_bandwidth.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    # the report reads the latest run; the earlier ones are kept beneath it
    prev = json.loads(out.read_text()) if out.exists() else None
    earlier = [*prev.pop("earlier", []), prev] if prev else []
    out.write_text(json.dumps({
        "device": device, "n": n, "rounds": args.rounds, "samples": args.samples,
        "ours_record": rec and {"digest": rec["digest"], "median_ns": rec["median_ns"],
                                "bound_ns": rec["bound_ns"]},
        "best_copy_bytes_per_s": best_copy, "rows": rows,
        "versions": {"cupy": cp.__version__, "numpy": np.__version__},
        "earlier": earlier}, indent=1) + "\n")
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
