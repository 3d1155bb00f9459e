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
from .cuda import NO_DEVICE, cupy_module, flush_buffer, slug, time_launches

SOURCE = r"""
extern "C" __global__ void wb_copy(const float4* __restrict__ a, float4* __restrict__ b, long n) {
  long stride = (long)gridDim.x * blockDim.x;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride) b[i] = a[i];
}
extern "C" __global__ void wb_copy_one(const float4* __restrict__ a, float4* __restrict__ b) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  b[i] = a[i];
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
  // the timed pass walks the lines the warm pass brought in: without this
  // restart it went on to cold lines and measured DRAM (601 cycles on an
  // H200 as "L2", and bounds above the measured time)
  int sink = j;
  j = 0;
  long long t0 = clock64();
  for (int i = 0; i < steps; ++i) j = l2_only ? __ldcg(&next[j]) : next[j];
  long long t1 = clock64();
  out[0] = j + sink;
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
# a launch's time varies more from run to run than a latency (two axpy
# kernels of the same work: 3.49 and 3.58 µs on an H200), so the floor keeps
# a wider margin below the fastest empty kernel
FLOOR_MARGIN = 0.8


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
    copy, one = mod.get_function("wb_copy"), mod.get_function("wb_copy_one")
    # the faster of a grid-stride copy and one float4 a thread: on the H200
    # the former read 3.89 TB/s, the latter (and cudaMemcpy) 4.16 TB/s
    # (benchmarks/gpu_copy.py), and axpy is held to the copy's bandwidth
    out["dram_bytes_per_s"] = 2 * 16 * n / min(
        timed(lambda: copy((sms * 16,), (512,), (*pair, np.int64(n)))),
        timed(lambda: one((n // 256,), (256,), pair)))
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
    # an empty kernel timed as the CUDA backend times a candidate: no kernel
    # it measures can be shorter (an idle GPU's events, as above, also time
    # the host's launch: 7.8 µs on an H200 that timed axpy kernels in 3.5 µs)
    flush = flush_buffer(cp, l2)
    out["empty_kernel_s"] = min(time_launches(
        cp, lambda: empty((1,), (1,), ()), flush, 50)) * 1e-9
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
        # A lower bound takes the fastest the chip can be: a benchmark that
        # fell short of the base table's peak (an FMA loop at a throttled
        # clock: 83 % of 128 lanes per SM on an H200) must not slow the model
        # down, only one that beat it may speed it up.
        peak = m["resources"][lvl][r]
        got = round(v * RATE_MARGIN, 3)
        m["resources"][lvl][r] = max(got, peak)
        src[f"model.resources.{lvl}.{r}"] = (
            f"{tag}; best run +5 %" if got >= peak else
            f"{base}.json's {peak} per cycle kept: {tag}, best run +5 %: {got}")
    for r in ("issue", "lsu", "sync"):
        m["resources"]["gpu"][r] = m["resources"]["block"][r] * sms
        src[f"model.resources.gpu.{r}"] = f"{sms} SMs (measured count) × block.{r}"
    lat = {"fp": "fma_latency_cycles", "load_shared": "shared_latency_cycles",
           "load_l1": "l1_latency_cycles", "load_readonly": "l1_latency_cycles",
           "load_l2": "l2_latency_cycles"}
    for k, v in lat.items():
        m["latency"][k] = round(meas[v] * LATENCY_MARGIN, 2)
        src[f"model.latency.{k}"] = f"{tag} (dependent chain, clock64); -5 %"
    if "empty_kernel_s" in meas:
        m["launch_floor_cycles"] = round(meas["empty_kernel_s"] * hz * FLOOR_MARGIN, 1)
        src["model.launch_floor_cycles"] = (
            f"{tag}: the fastest of 50 empty kernels, timed as the CUDA backend times a "
            "candidate (events, L2 flushed first); -20 %")
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
    path.parent.mkdir(parents=True, exist_ok=True)  # a fresh data directory has none
    path.write_text(json.dumps(raw, indent=2) + "\n")
    return path


# ------------------------------------------------------------------ the CPU
# Microbenchmarks of the reference executor's core, compiled by `compile_c`
# with the reference C's own flags (-O1 -ffp-contract=off, -mfma where the
# host has it), each timed best-of-many from Python; the table is in
# nanoseconds (clock_ghz 1: one "cycle" is one ns).
CPU_SOURCE = r"""
#include <math.h>
/* starting values from n, so that the compiler cannot fold the chains */
float wb_fma_tp(long n) {
  float b = (float)n * 1e-9f;
  float a0 = b + 1, a1 = b + 2, a2 = b + 3, a3 = b + 4, a4 = b + 5, a5 = b + 6, a6 = b + 7,
        a7 = b + 8;
  for (long i = 0; i < n; ++i) {
    a0 = fmaf(a0, 0.999f, 0.001f); a1 = fmaf(a1, 0.999f, 0.001f);
    a2 = fmaf(a2, 0.999f, 0.001f); a3 = fmaf(a3, 0.999f, 0.001f);
    a4 = fmaf(a4, 0.999f, 0.001f); a5 = fmaf(a5, 0.999f, 0.001f);
    a6 = fmaf(a6, 0.999f, 0.001f); a7 = fmaf(a7, 0.999f, 0.001f);
  }
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
float wb_add_tp(long n) {
  float b = (float)n * 1e-9f;
  float a0 = b + 1, a1 = b + 2, a2 = b + 3, a3 = b + 4, a4 = b + 5, a5 = b + 6, a6 = b + 7,
        a7 = b + 8;
  for (long i = 0; i < n; ++i) {
    a0 = a0 + 0.001f; a1 = a1 + 0.001f; a2 = a2 + 0.001f; a3 = a3 + 0.001f;
    a4 = a4 + 0.001f; a5 = a5 + 0.001f; a6 = a6 + 0.001f; a7 = a7 + 0.001f;
  }
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
float wb_fma_lat(long n) {
  float a = (float)n * 1e-9f + 0.5f;
  for (long i = 0; i < n; ++i) {
    a = fmaf(a, 0.999f, 0.001f); a = fmaf(a, 0.999f, 0.001f);
    a = fmaf(a, 0.999f, 0.001f); a = fmaf(a, 0.999f, 0.001f);
  }
  return a;
}
float wb_add_lat(long n) {
  float a = (float)n * 1e-9f + 0.5f;
  for (long i = 0; i < n; ++i) { a = a + 0.001f; a = a + 0.001f; a = a + 0.001f; a = a + 0.001f; }
  return a;
}
int wb_read(const int* __restrict__ x, long len, long reps) {
  /* integer xors (4 ALUs on any x86 core): the loads, not the adds, limit */
  int s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  for (long r = 0; r < reps; ++r)
    for (long i = 0; i < len; i += 8) {
      s0 ^= x[i]; s1 ^= x[i + 1]; s2 ^= x[i + 2]; s3 ^= x[i + 3];
      s4 ^= x[i + 4]; s5 ^= x[i + 5]; s6 ^= x[i + 6]; s7 ^= x[i + 7];
    }
  return s0 ^ s1 ^ s2 ^ s3 ^ s4 ^ s5 ^ s6 ^ s7;
}
void wb_write(float* __restrict__ x, long len, long reps) {
  for (long r = 0; r < reps; ++r)
    for (long i = 0; i < len; i += 4) {
      x[i] = (float)r; x[i + 1] = (float)r; x[i + 2] = (float)r; x[i + 3] = (float)r;
    }
}
long wb_chase(const long* __restrict__ next, long steps) {
  long j = 0;
  for (long i = 0; i < steps; ++i) j = next[j];
  return j;
}
long wb_int_lat(long n) {  /* 8 dependent 1-cycle integer adds per iteration */
  long x = n;
#if defined(__x86_64__)
  for (long i = 0; i < n; ++i)
    __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                     "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
#endif
  return x;
}
void wb_empty(float* __restrict__ a) { (void)a; }
void wb_loop(long n) {
  for (long i = 0; i < n; ++i) __asm__ volatile("");
}
/* 8 taken jumps and the back-edge an iteration: the most taken branches a
   cycle the front end follows (an empty loop shows 1 a cycle where Zen 5
   takes up to 2) */
#if defined(__x86_64__) || defined(__i386__)
#define WB_JUMP(k) "jmp " #k "f\n" #k ":\n"
#elif defined(__aarch64__) || defined(__arm__)
#define WB_JUMP(k) "b " #k "f\n" #k ":\n"
#else
#define WB_JUMP(k) ""
#endif
int wb_has_jumps(void) { return sizeof(WB_JUMP(1)) > 1; }
void wb_jumps(long n) {
  for (long i = 0; i < n; ++i)
    __asm__ volatile(WB_JUMP(1) WB_JUMP(2) WB_JUMP(3) WB_JUMP(4)
                     WB_JUMP(5) WB_JUMP(6) WB_JUMP(7) WB_JUMP(8));
}
"""

CPU_RATE_MARGIN, CPU_LATENCY_MARGIN = 1.10, 0.90


def measure_cpu(reps: int = 30) -> dict:
    """Run the CPU microbenchmarks on one core; raw figures per nanosecond
    (rates) and in nanoseconds (latencies), each the best of `reps` runs."""
    import ctypes
    import platform
    import tempfile
    import time

    from ..codegen.compile import compile_c

    lib = compile_c([CPU_SOURCE], tempfile.mkdtemp(prefix="wb_cal_"), openmp=False)
    c_long, c_float_p = ctypes.c_long, ctypes.POINTER(ctypes.c_float)
    lib.wb_int_lat.argtypes = [c_long]
    lib.wb_int_lat.restype = c_long
    for name in ("wb_fma_tp", "wb_add_tp", "wb_fma_lat", "wb_add_lat"):
        getattr(lib, name).argtypes = [c_long]
        getattr(lib, name).restype = ctypes.c_float
    lib.wb_read.argtypes = [ctypes.POINTER(ctypes.c_int), c_long, c_long]
    lib.wb_read.restype = ctypes.c_int
    lib.wb_write.argtypes = [c_float_p, c_long, c_long]
    lib.wb_write.restype = None
    lib.wb_chase.argtypes = [ctypes.POINTER(ctypes.c_long), c_long]
    lib.wb_chase.restype = c_long
    lib.wb_loop.argtypes = [c_long]
    lib.wb_loop.restype = None
    lib.wb_jumps.argtypes = [c_long]
    lib.wb_jumps.restype = None

    def best(fn, *args) -> float:
        fn(*args)
        t = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            fn(*args)
            t = min(t, time.perf_counter_ns() - t0)
        return t  # ns

    out: dict = {}
    n = 200_000
    out["fma_per_ns"] = 8 * n / best(lib.wb_fma_tp, n)
    out["add_per_ns"] = 8 * n / best(lib.wb_add_tp, n)
    out["fma_latency_ns"] = best(lib.wb_fma_lat, n) / (4 * n)
    out["add_latency_ns"] = best(lib.wb_add_lat, n) / (4 * n)
    out["loop_iterations_per_ns"] = n * 4 / best(lib.wb_loop, n * 4)
    if lib.wb_has_jumps():
        out["taken_branches_per_ns"] = 9 * n / best(lib.wb_jumps, n)
    if platform.machine() in ("x86_64", "AMD64"):
        out["clock_ghz"] = 8 * n / best(lib.wb_int_lat, n)  # one integer add per cycle
    for label, nbytes, r in (("l1", 16 << 10, 200), ("l2", 512 << 10, 8), ("dram", 256 << 20, 1)):
        x = np.ones(nbytes // 4, np.int32)
        ptr = x.ctypes.data_as(ctypes.POINTER(ctypes.c_int))
        out[f"{label}_read_bytes_per_ns"] = nbytes * r / best(lib.wb_read, ptr, x.size, r)
        if label == "l1":
            out["loads_per_ns"] = out["l1_read_bytes_per_ns"] / 4
            y = np.ones(nbytes // 4, np.float32)
            out["stores_per_ns"] = y.size * r / best(lib.wb_write, y.ctypes.data_as(c_float_p),
                                                      y.size, r)
    ptr = np.zeros(16, np.float32).ctypes.data_as(c_float_p)
    lib.wb_empty.restype = None
    out["call_ns"] = min(best(lib.wb_empty, ptr) for _ in range(10))  # ctypes call, 1 array
    m = (16 << 10) // 8
    perm = np.random.default_rng(0).permutation(m // 8) * 8  # one element per 64-byte line
    nxt = np.zeros(m, np.int64)
    nxt[perm] = np.roll(perm, -1)
    steps = 200_000
    out["l1_latency_ns"] = best(lib.wb_chase, nxt.ctypes.data_as(ctypes.POINTER(c_long)),
                                steps) / steps
    return out


def cpu_model_name() -> str:
    """The host's CPU model, as /proc/cpuinfo (or platform) names it."""
    import platform
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


def cpu_target_name() -> str:
    """The name of this host's calibrated CPU target: `cpu-<model>`."""
    return "cpu-" + slug(cpu_model_name())


def cpu_table(meas: dict, model: str, when: str | None = None) -> dict:
    """A CPU target file from measured figures, on `cpu_reference`'s layout:
    rates 10 % above, latencies 10 % below the best run (the machine this
    runs on may be shared, and a later run may find it idle)."""
    raw = json.loads(json.dumps(load_target("cpu_reference").raw))
    when = when or _dt.date.today().isoformat()
    m, src = raw["model"], raw["sources"]
    tag = f"measured by `python -m workbench calibrate --backend cpu` on {model}, {when}"
    up = f"{tag}; best of the runs +10 %"
    m["clock_ghz"] = 1.0
    src["model.clock_ghz"] = "1: rates are per nanosecond and latencies in nanoseconds"
    fp = max(meas["fma_per_ns"], meas["add_per_ns"])
    lsu = meas["loads_per_ns"] + meas["stores_per_ns"]
    l1 = max(meas["l1_read_bytes_per_ns"], meas["l2_read_bytes_per_ns"],
             meas["dram_read_bytes_per_ns"])
    # issue: nothing issues more than 8 instructions per cycle (cpu_reference's
    # dispatch width), at the clock a chain of 1-cycle integer adds shows
    # (without one, cpu_reference's 6.2 GHz)
    ghz = meas.get("clock_ghz", load_target("cpu_reference").raw["model"]["clock_ghz"])
    # the most taken branches the front end follows: a chain of jumps (Zen 5
    # takes up to 2 a cycle; an empty loop shows 1, and a kernel of this
    # host's took 1.2 a cycle of the calibrated clock), else 2 a cycle (what
    # `cpu_reference` assumes); never below the empty loop's rate or 1 a cycle
    branch = max(meas.get("taken_branches_per_ns", 2 * ghz), meas["loop_iterations_per_ns"],
                 ghz)
    rates = {"issue": 8 * ghz, "fma": fp, "lsu": lsu, "branch": branch}
    why = {"issue": f"8 instructions per cycle at {ghz:.2f} GHz (dependent integer adds)",
           "fma": "scalar FP32 FMA/add, 8 independent chains",
           "lsu": "L1-resident scalar loads plus stores per ns",
           "branch": "taken jumps of a chain of them (else 2 per cycle of the measured "
                     "clock), at least the iterations of an empty C loop and one per cycle"}
    for lvl in ("thread", "block", "gpu"):
        for r, v in rates.items():
            m["resources"][lvl][r] = round(v * CPU_RATE_MARGIN, 4)
            src[f"model.resources.{lvl}.{r}"] = f"{up}: {why[r]}"
    for r in ("l2_bytes", "dram_bytes"):
        m["resources"]["gpu"][r] = round(l1 * CPU_RATE_MARGIN, 3)
        src[f"model.resources.gpu.{r}"] = (f"{up}: the fastest read bandwidth measured (L1): "
                                           "timings do not flush caches")
    down = f"{tag}; best run -10 %"
    lat = {"fp": min(meas["fma_latency_ns"], meas["add_latency_ns"]),
           "load_shared": meas["l1_latency_ns"], "load_l1": meas["l1_latency_ns"],
           "load_readonly": meas["l1_latency_ns"], "load_l2": meas["l1_latency_ns"]}
    for k, v in lat.items():
        m["latency"][k] = round(v * CPU_LATENCY_MARGIN, 4)
        src[f"model.latency.{k}"] = f"{down} (dependent chain{'' if k == 'fp' else ', L1 hit'})"
    m["launch_cycles"] = round(meas["call_ns"] * CPU_LATENCY_MARGIN, 1)
    src["model.launch_cycles"] = (f"{down}: the cheapest call of an empty C function with three "
                                  "array arguments through ctypes, as the backend calls a kernel")
    raw["name"] = cpu_target_name() if model == cpu_model_name() else "cpu-" + slug(model)
    raw["description"] = (f"The reference executor on {model}, calibrated {when}; "
                          "layout and unmeasured figures from cpu_reference.json")
    raw["measured"] = dict(meas)
    src["measured"] = f"{tag}: raw microbenchmark results"
    return raw


def calibrate_cpu(out_dir: str | Path | None = None) -> Path:
    """Measure this host's core and write `targets/cpu-<model>.json`; the CPU
    backend's bounds use it from then on (`cpu_reference` stays the fallback)."""
    model = cpu_model_name()
    raw = cpu_table(measure_cpu(), model)
    path = Path(out_dir or data_dir() / "targets") / f"{raw['name']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(raw, indent=2) + "\n")
    return path


def host_cpu_target() -> str:
    """The calibrated target of this host if one is in the data directory,
    else `cpu_reference`."""
    name = cpu_target_name()
    return name if (data_dir() / "targets" / f"{name}.json").exists() else "cpu_reference"
