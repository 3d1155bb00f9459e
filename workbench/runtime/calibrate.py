"""Device calibration: microbenchmarks that measure what the lower bound's
hardware table needs, written to `data/targets/<device>.json`.

Measured on the device: DRAM bandwidth (a streaming copy), L2 bandwidth
(repeated reads of an L2-resident buffer through `__ldcg`), FP32 FMA
throughput (eight independent chains per thread over every SM), shared-memory
bandwidth (conflict-free reads), latencies by dependent chains timed with
`clock64()` (FMA, shared load, L1 hit, L2 hit by pointer chasing), and the
launch overhead of an empty kernel. The table keeps the datasheet figures the
microbenchmarks do not reach (limits, occupancy) and says, number by number,
which were measured. Rates are stored 5 % above the best measurement and
latencies 5 % below, so that noise cannot make the bound exceed a real run.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import numpy as np

from ..errors import WorkbenchError
from ..target import data_dir, load_target
from .cuda import NO_DEVICE, cupy_module, slug

SOURCE = r"""
extern "C" __global__ void wb_copy(const float4* __restrict__ a, float4* __restrict__ b, long n) {
  long stride = (long)gridDim.x * blockDim.x;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride) b[i] = a[i];
}
extern "C" __global__ void wb_l2_read(const float4* __restrict__ a, long n, int reps,
                                      float* out) {
  float acc = 0.f;
  long stride = (long)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; ++r)
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride) {
      float4 v = __ldcg(&a[i]);
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 1234.5f) out[0] = acc;
}
extern "C" __global__ void wb_fma(float* out, int iters) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3,
        a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  for (int i = 0; i < iters; ++i) {
    a0 = fmaf(a0, 0.999f, 0.001f); a1 = fmaf(a1, 0.999f, 0.001f);
    a2 = fmaf(a2, 0.999f, 0.001f); a3 = fmaf(a3, 0.999f, 0.001f);
    a4 = fmaf(a4, 0.999f, 0.001f); a5 = fmaf(a5, 0.999f, 0.001f);
    a6 = fmaf(a6, 0.999f, 0.001f); a7 = fmaf(a7, 0.999f, 0.001f);
  }
  float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (s == 1234.5f) out[0] = s;
}
extern "C" __global__ void wb_shared_read(float* out, int iters) {
  __shared__ float s[1024];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  float acc = 0.f;
  for (int i = 0; i < iters; ++i) acc += s[(threadIdx.x + 32 * i) & 1023];
  if (acc == 1234.5f) out[0] = acc;
}
extern "C" __global__ void wb_fma_chain(float* out, int iters, long long* cycles) {
  float a = out[0];
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) a = fmaf(a, 0.999f, 0.001f);
  long long t1 = clock64();
  out[1] = a;
  cycles[0] = t1 - t0;
}
extern "C" __global__ void wb_chase(const int* __restrict__ next, int steps, int l2_only,
                                    long long* cycles, int* out) {
  int j = 0;
  for (int i = 0; i < steps; ++i) j = l2_only ? __ldcg(&next[j]) : next[j];  // warm
  long long t0 = clock64();
  for (int i = 0; i < steps; ++i) j = l2_only ? __ldcg(&next[j]) : next[j];
  long long t1 = clock64();
  out[0] = j;
  cycles[0] = t1 - t0;
}
extern "C" __global__ void wb_chase_shared(int steps, long long* cycles, int* out) {
  __shared__ int next[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) next[i] = (i * 97 + 13) & 1023;
  __syncthreads();
  int j = 0;
  long long t0 = clock64();
  for (int i = 0; i < steps; ++i) j = next[j];
  long long t1 = clock64();
  out[0] = j;
  cycles[0] = t1 - t0;
}
extern "C" __global__ void wb_empty() {}
"""

RATE_MARGIN, LATENCY_MARGIN = 1.05, 0.95


def measure(cp) -> dict:
    """Run the microbenchmarks on device 0 (CuPy); returns raw figures."""
    mod = cp.RawModule(code=SOURCE)
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = int(props["multiProcessorCount"])
    l2 = int(props.get("l2CacheSize", 50 << 20))

    def timed(fn, reps=10):
        best = float("inf")
        fn()
        cp.cuda.Device().synchronize()
        for _ in range(reps):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            fn()
            b.record()
            b.synchronize()
            best = min(best, cp.cuda.get_elapsed_time(a, b) * 1e-3)
        return best  # seconds

    out = {}
    n = (1 << 30) // 16  # 1 GiB of float4
    pair = (cp.ones(4 * n, cp.float32), cp.empty(4 * n, cp.float32))
    copy = mod.get_function("wb_copy")
    out["dram_bytes_per_s"] = 2 * 16 * n / timed(
        lambda: copy((sms * 16,), (512,), (*pair, np.int64(n))))
    pair = None  # free the 2 GiB before the next benchmarks
    m = l2 // 2 // 16
    buf, sink = cp.ones(4 * m, cp.float32), cp.zeros(1, cp.float32)
    reps = 50
    rd = mod.get_function("wb_l2_read")
    out["l2_bytes_per_s"] = 16 * m * reps / timed(
        lambda: rd((sms * 8,), (512,), (buf, np.int64(m), np.int32(reps), sink)))
    iters = 4096
    fma = mod.get_function("wb_fma")
    blocks, threads = sms * 8, 512
    out["fma_per_s"] = 8 * iters * blocks * threads / timed(
        lambda: fma((blocks,), (threads,), (sink, np.int32(iters))))
    sh = mod.get_function("wb_shared_read")
    out["shared_bytes_per_s"] = 4 * iters * blocks * threads / timed(
        lambda: sh((blocks,), (threads,), (sink, np.int32(iters))))
    cyc = cp.zeros(1, cp.int64)
    io = cp.ones(2, cp.float32)
    mod.get_function("wb_fma_chain")((1,), (1,), (io, np.int32(iters), cyc))
    out["fma_latency_cycles"] = float(cyc.get()[0]) / iters
    out["shared_latency_cycles"] = _chase_shared(mod, cp, cyc)
    out["l1_latency_cycles"] = _chase(mod, cp, cyc, 4 << 10, l2_only=False)
    out["l2_latency_cycles"] = _chase(mod, cp, cyc, l2 // 4, l2_only=True)
    empty = mod.get_function("wb_empty")
    out["launch_overhead_s"] = timed(lambda: empty((1,), (1,), ()), reps=50)
    return out


def _chase(mod, cp, cyc, nbytes, l2_only) -> float:
    n = max(32, nbytes // 4)
    perm = np.random.default_rng(0).permutation(n // 32) * 32  # one element per 128-byte line
    nxt = np.zeros(n, np.int32)
    nxt[perm] = np.roll(perm, -1)
    steps = 4096
    d = cp.asarray(nxt)
    res = cp.zeros(1, cp.int32)
    mod.get_function("wb_chase")((1,), (1,), (d, np.int32(steps), np.int32(l2_only), cyc, res))
    return float(cyc.get()[0]) / steps


def _chase_shared(mod, cp, cyc) -> float:
    steps = 4096
    res = cp.zeros(1, cp.int32)
    mod.get_function("wb_chase_shared")((1,), (32,), (np.int32(steps), cyc, res))
    return float(cyc.get()[0]) / steps


def table(meas: dict, device: str, sms: int, clock_ghz: float, base: str = "h200",
          when: str | None = None) -> dict:
    """A target file from measured figures, starting from the datasheet
    table `base` for what is not measured."""
    raw = json.loads(json.dumps(load_target(base).raw))
    when = when or _dt.date.today().isoformat()
    m = raw["model"]
    src = raw["sources"]
    tag = f"measured by `python -m workbench calibrate` on {device}, {when}"
    hz = clock_ghz * 1e9
    m["clock_ghz"] = clock_ghz
    m["parallelism"]["sms"] = sms
    per_cycle = {
        ("gpu", "dram_bytes"): meas["dram_bytes_per_s"] / hz,
        ("gpu", "l2_bytes"): meas["l2_bytes_per_s"] / hz,
        ("gpu", "fma"): meas["fma_per_s"] / hz,
        ("block", "fma"): meas["fma_per_s"] / hz / sms,
    }
    for (lvl, r), v in per_cycle.items():
        m["resources"][lvl][r] = round(v * RATE_MARGIN, 3)
        src[f"model.resources.{lvl}.{r}"] = f"{tag}; best run +5 %"
    for r in ("issue", "lsu", "sync"):
        m["resources"]["gpu"][r] = m["resources"]["block"][r] * sms
        src[f"model.resources.gpu.{r}"] = f"{sms} SMs (measured count) × block.{r}"
    lat = {"fp": "fma_latency_cycles", "load_shared": "shared_latency_cycles",
           "load_l1": "l1_latency_cycles", "load_readonly": "l1_latency_cycles",
           "load_l2": "l2_latency_cycles"}
    for k, v in lat.items():
        m["latency"][k] = round(meas[v] * LATENCY_MARGIN, 2)
        src[f"model.latency.{k}"] = f"{tag} (dependent chain, clock64); -5 %"
    src["model.clock_ghz"] = f"{tag}: the device's reported SM clock"
    src["model.parallelism.sms"] = f"{tag}: multiProcessorCount"
    raw["name"] = slug(device)
    raw["description"] = f"{device}, calibrated {when}; unmeasured figures from {base}.json"
    raw["measured"] = {k: v for k, v in meas.items()}
    src["measured"] = f"{tag}: raw microbenchmark results"
    return raw


def calibrate(out_dir: str | Path | None = None) -> Path:
    cp = cupy_module()
    if cp is None:
        raise WorkbenchError(f"calibrate --backend cuda: {NO_DEVICE}")
    props = cp.cuda.runtime.getDeviceProperties(0)
    device = props["name"].decode()
    meas = measure(cp)
    raw = table(meas, device, int(props["multiProcessorCount"]), props["clockRate"] / 1e6)
    path = Path(out_dir or data_dir() / "targets") / f"{raw['name']}.json"
    path.write_text(json.dumps(raw, indent=2) + "\n")
    return path
