"""Compiling generated code: reference C with the system C compiler (run
through ctypes), CUDA C with nvcc (a compile check where no GPU exists)."""

from __future__ import annotations

import ctypes
import functools
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import WorkbenchError

C_PRELUDE = """#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
void wb_set_threads(int n) { omp_set_num_threads(n); }
#else
void wb_set_threads(int n) { (void)n; }
#endif

"""


class CompileError(WorkbenchError):
    pass


def _run(cmd, what) -> None:
    got = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if got.returncode != 0:
        raise CompileError(f"{what} failed ({' '.join(cmd[:2])} ...):\n{got.stderr[-4000:]}")


def _cc() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise CompileError("no C compiler (cc/gcc) on PATH for the reference executor")
    return cc


_PROBED: dict = {}


def _compiles(source: str, flags: list, link: bool = False) -> bool:
    """Whether the C compiler builds `source` with `flags` (a shared
    library if `link`, else an object file); asked once per compiler."""
    cc = _cc()
    key = (cc, source, tuple(flags), link)
    if key not in _PROBED:
        with tempfile.TemporaryDirectory(prefix="wb_probe_") as tmp:
            d = Path(tmp)
            (d / "t.c").write_text(source)
            out = ["-shared", "-fPIC", "-o", str(d / "t.so")] if link \
                else ["-c", "-o", str(d / "t.o")]
            _PROBED[key] = subprocess.run([cc, *flags, *out, str(d / "t.c")],
                                          capture_output=True, check=False).returncode == 0
    return _PROBED[key]


def openmp_flag() -> str | None:
    """-fopenmp when the C compiler supports it (checked once), else None."""
    ok = _compiles("#include <omp.h>\nint f(void) { return omp_get_max_threads(); }\n",
                   ["-fopenmp"], link=True)
    return "-fopenmp" if ok else None


@functools.cache  # once per process: build_c asks at every compilation
def _host_has_fma() -> bool:
    try:
        host = " ".join(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return False
    return " fma " in f" {host} "


def fma_flags() -> list:
    """`-mfma` where the host and compiler have fused multiply-add, so that
    fmaf() is one instruction and not a libm call (which would cost every
    implementation the same ~1.5 ns per FMA and hide what its decisions
    change). -O1 does not vectorise, so the code stays scalar, within the
    `cpu_reference` table's per-cycle rates."""
    ok = _host_has_fma() and _compiles(
        "#include <math.h>\nfloat f(float a, float b, float c) { return fmaf(a, b, c); }\n",
        ["-mfma"])
    return ["-mfma"] if ok else []


# gcc -O1 completely unrolls a constant-trip loop when its estimate says the
# code does not grow (measured: trips of 2, even around a loop of 8, are
# unrolled; 3 or more kept); with no instruction allowed in a completely
# peeled loop it unrolls none, so every loop of the reference C runs as printed
KEEP_LOOPS = ["--param", "max-completely-peeled-insns=0"]
UNROLLED_TRIP = 4  # the least trip count kept without KEEP_LOOPS (a margin over 3)


def keep_loops_flags() -> list:
    """KEEP_LOOPS where the C compiler takes it (checked once), else []."""
    ok = _compiles("int f(int n) { int s = 0; for (int i = 0; i < 2; ++i) s += n; "
                   "return s; }\n", ["-O1", *KEEP_LOOPS, "-Werror"])
    return list(KEEP_LOOPS) if ok else []


def kept_trip() -> int:
    """The least trip count of a loop the reference C surely runs as a loop
    (the CPU bound's loop-control term counts those): 2 where the compiler
    keeps every loop (`keep_loops_flags`), else `UNROLLED_TRIP`."""
    return 2 if keep_loops_flags() else UNROLLED_TRIP


def build_c(sources: list[str], workdir: str | Path, openmp: bool = True) -> Path:
    """Compile C functions into one shared library in `workdir` without
    loading it (the CPU backend loads it in a child process); its path."""
    cc = _cc()
    d = Path(workdir)
    src, lib = d / "ref.c", d / "ref.so"
    src.write_text(C_PRELUDE + "\n".join(sources))
    omp = [openmp_flag()] if openmp and openmp_flag() else []
    # -ffp-contract=off: fmaf() is the only fused multiply-add, as on the GPU
    _run([cc, "-O1", *keep_loops_flags(), "-shared", "-fPIC", "-ffp-contract=off",
          *fma_flags(), *omp, "-o", str(lib), str(src), "-lm"], "C compilation")
    return lib


def compile_c(sources: list[str], workdir: str | None = None,
              openmp: bool = True) -> ctypes.CDLL:
    """Compile C functions into one shared library and load it in this
    process. With OpenMP (where the compiler has it) block loops run in
    parallel; the library's `wb_set_threads(n)` sets how many threads (one by
    default). Generated code run this way can hang or kill the caller: the
    CPU backend uses `build_c` and a child process instead."""
    lib = build_c(sources, workdir or tempfile.mkdtemp(prefix="wb_c_"), openmp)
    out = ctypes.CDLL(str(lib))
    out.wb_set_threads.argtypes = [ctypes.c_int]
    out.wb_set_threads(1)
    return out


def nvcc_path() -> str | None:
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)


def compile_cuda(sources: list[str], arch: str = "sm_90", workdir: str | None = None,
                 jobs: int | None = None) -> list[Path]:
    """Compile CUDA kernels to PTX with nvcc, in `jobs` parallel nvcc
    processes (default: one per CPU); returns the PTX files."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise CompileError("nvcc is not on PATH")
    d = Path(workdir or tempfile.mkdtemp(prefix="wb_cu_"))
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(sources) or 1))
    procs = []
    for j in range(jobs):
        src, out = d / f"kernels{j}.cu", d / f"kernels{j}.ptx"
        src.write_text("\n".join(sources[j::jobs]))
        cmd = [nvcc, f"-arch={arch}", "--ptx", "-o", str(out), str(src)]
        procs.append((out, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True)))
    errors = []
    for _out, proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            errors.append(err[-4000:])
    if errors:
        raise CompileError("nvcc failed:\n" + "\n".join(errors))
    return [out for out, _ in procs]


_PTXAS = {
    "registers": r"Used (\d+) registers",
    "spill_stores": r"(\d+) bytes spill stores",
    "spill_loads": r"(\d+) bytes spill loads",
    "stack_bytes": r"(\d+) bytes stack frame",
    "shared_bytes": r"(\d+) bytes smem",
    "local_bytes": r"(\d+) bytes lmem",
    "barriers": r"used (\d+) barriers",
}
_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")


def parse_ptxas(text: str) -> dict:
    """`ptxas -v`'s report, one entry per kernel: {name: {registers,
    spill_stores, spill_loads, spill_bytes, stack_bytes, shared_bytes
    (static), local_bytes, barriers, arch}}. `spill_bytes` is the bytes
    spill stores and loads move per thread (both: the DESIGN contract's
    one figure); `local_bytes` is the per-thread local memory: the stack
    frame (where spills go) or an older ptxas's `lmem`."""
    out: dict = {}
    parts = _ENTRY.split(text)
    for name, arch, body in zip(parts[1::3], parts[2::3], parts[3::3]):
        info = {}
        for key, pat in _PTXAS.items():
            m = re.search(pat, body)
            info[key] = int(m.group(1)) if m else 0
        info["local_bytes"] = max(info["local_bytes"], info["stack_bytes"])
        info["spill_bytes"] = info["spill_stores"] + info["spill_loads"]
        info["arch"] = arch
        out[name] = info
    return out


def spills(info: dict) -> bool:
    """Whether ptxas spilled registers to local memory for this kernel
    (from the two counts: records written before `spill_bytes` lack it)."""
    return bool(info.get("spill_stores") or info.get("spill_loads"))


def ptxas_info(source: str, name: str, arch: str = "sm_90",
               workdir: str | None = None) -> dict:
    """What `ptxas -v` reports for kernel `name` of a CUDA source: registers
    per thread, spilled bytes, stack frame, static shared memory, barriers
    (GPU facts without a GPU: nvcc compiles for any architecture)."""
    if workdir is None:  # nothing left behind
        with tempfile.TemporaryDirectory(prefix="wb_ptxas_") as tmp:
            return ptxas_info(source, name, arch, tmp)
    got = ptxas_report({name: source}, arch, workdir=workdir, jobs=1)
    if name not in got.facts:
        raise CompileError(f"ptxas reported no kernel {name!r}:\n{got.log[-2000:]}")
    return got.facts[name]


@dataclass
class PtxasReport:
    """`ptxas_report`'s answer: per-kernel facts, the cubin holding each
    kernel (loadable with CuPy's RawModule(path=...)), the kernels whose job
    failed with the compiler's message, and the seconds it took."""
    facts: dict = field(default_factory=dict)  # name -> parse_ptxas entry
    cubins: dict = field(default_factory=dict)  # name -> Path of its cubin
    errors: dict = field(default_factory=dict)  # name -> nvcc's message
    seconds: float = 0.0
    log: str = ""


def ptxas_report(sources, arch: str = "sm_90", workdir: str | None = None,
                 jobs: int | None = None, per_job: int = 4,
                 timeout_s: float | None = 120.0) -> PtxasReport:
    """Compile CUDA kernels to cubins for `arch` with `nvcc -Xptxas -v`, at
    most `jobs` nvcc processes at a time (default: one per CPU), `per_job`
    kernels per file (nvcc's fixed cost shared; cicc slows down on long
    files, so few), and read every kernel's registers, spills, shared and
    local memory. `sources`: a dict name -> CUDA source (one `extern "C"`
    kernel each, as `generate` prints it) or a list of `Generated`. A job
    whose file does not compile (or takes more than `timeout_s`: a fully
    unrolled kernel of thousands of lines can keep cicc busy for minutes) is
    retried kernel by kernel, so one bad kernel costs only itself; its error
    says which."""
    import time
    t0 = time.perf_counter()
    if not isinstance(sources, dict):
        sources = {g.name: g.cuda for g in sources}
    names = list(sources)
    rep = PtxasReport()
    if not names:
        return rep
    nvcc = nvcc_path()
    if nvcc is None:
        raise CompileError("nvcc is not on PATH")
    d = Path(workdir or tempfile.mkdtemp(prefix="wb_ptxas_"))
    d.mkdir(parents=True, exist_ok=True)
    jobs = max(1, jobs or os.cpu_count() or 1)
    per_job = max(1, min(per_job, -(-len(names) // jobs)))
    groups = [names[i:i + per_job] for i in range(0, len(names), per_job)]
    failed = _ptxas_jobs(nvcc, arch, d, "job", groups, sources, rep, jobs, timeout_s)
    if failed:  # one by one: which kernel broke the file, and the rest's facts
        singles = [[n] for g, _ in failed for n in g]
        if len(singles) == 1:  # the group was that kernel alone: its answer stands
            rep.errors[singles[0][0]] = failed[0][1]
            singles = []
        for g, msg in _ptxas_jobs(nvcc, arch, d, "one", singles, sources, rep, jobs,
                                  timeout_s):
            rep.errors[g[0]] = msg
    rep.seconds = time.perf_counter() - t0
    return rep


def _ptxas_jobs(nvcc, arch, d, tag, groups, sources, rep, jobs: int,
                timeout_s: float | None = None) -> list:
    """Run one nvcc per group, `jobs` at a time; fills `rep`; returns
    (group, nvcc's message) for each group that failed or timed out."""
    from concurrent.futures import ThreadPoolExecutor

    def one(j):
        group = groups[j]
        src, out = d / f"{tag}{j}.cu", d / f"{tag}{j}.cubin"
        src.write_text("\n".join(sources[n] for n in group))
        cmd = [nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(out), str(src)]
        # a new session: on a timeout the whole nvcc tree (cicc, ptxas) is killed
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return group, out, subprocess.CompletedProcess(
                cmd, -9, "", f"nvcc took more than {timeout_s:g} s (killed)")
        return group, out, subprocess.CompletedProcess(cmd, proc.returncode, "", err)
    failed = []
    with ThreadPoolExecutor(max(1, min(jobs, len(groups)))) as pool:
        for group, out, got in pool.map(one, range(len(groups))):
            rep.log += got.stderr
            if got.returncode != 0:
                failed.append((group, got.stderr[-4000:]))
                continue
            facts = parse_ptxas(got.stderr)
            for n in group:
                if n in facts:
                    rep.facts[n] = facts[n]
                    rep.cubins[n] = out
    return failed


def occupancy(facts: dict, launch: dict, target=None) -> dict:
    """Blocks and warps one SM of `target` can hold for a kernel with these
    ptxas `facts` and this launch (threads per block, static + dynamic
    shared memory), each limit named: threads, blocks, registers (allocated
    per warp in units of `register_unit`, 256 on every CUDA GPU since
    Kepler), shared memory. `occupancy` is resident warps / the SM's
    maximum; `limited_by` names the smallest limit. The figures are upper
    bounds on what the device runs at once (the 1 KB of shared memory the
    driver reserves per block from sm_80 on is not subtracted), so a bound
    that uses them stays a lower bound."""
    from ..target import load_target
    t = load_target(target or "h200")
    par = t.raw.get("model", {}).get("parallelism", {})
    warp = int(t.limits.get("warp_size", 32))
    threads = int(math.prod(launch.get("block", [1])))
    warps_per_block = -(-threads // warp)
    regs = int(facts.get("registers", 0))
    unit = int(par.get("register_unit", 256))
    regs_per_warp = -(-regs * warp // unit) * unit
    smem = max(int(launch.get("shared_bytes", 0)),
               int(facts.get("shared_bytes", 0)) + int(launch.get("dynamic_shared_bytes", 0)))
    limits = {}
    if par.get("max_threads_per_sm"):
        limits["threads"] = int(par["max_threads_per_sm"]) // warp // warps_per_block
    if par.get("max_blocks_per_sm"):
        limits["blocks"] = int(par["max_blocks_per_sm"])
    if par.get("registers_per_sm") and regs_per_warp:
        limits["registers"] = int(par["registers_per_sm"]) // regs_per_warp // warps_per_block
    if par.get("shared_bytes_per_sm") and smem:
        limits["shared_memory"] = int(par["shared_bytes_per_sm"]) // smem
    blocks = min(limits.values()) if limits else None
    max_warps = int(par.get("max_threads_per_sm", 0)) // warp
    return {"target": t.name, "threads_per_block": threads, "registers": regs,
            "shared_bytes_per_block": smem, "blocks_per_sm": blocks,
            "warps_per_sm": None if blocks is None else blocks * warps_per_block,
            "occupancy": (blocks * warps_per_block / max_warps
                          if blocks is not None and max_warps else None),
            "limited_by": (min(limits, key=limits.get) if limits else None),
            "limits": limits}


def resources(cand_or_generated, target=None, arch: str = "sm_90",
              workdir: str | None = None) -> dict:
    """ptxas facts of one fixed candidate's CUDA (or of a `Generated`) and
    the occupancy they allow on `target` (default: the kernel's): what the
    Code tab, `codegen --json` and the records show."""
    from . import generate
    g = cand_or_generated
    if not hasattr(g, "cuda"):
        target = target or g.kernel.target.name
        g = generate(g, "kernel")
    facts = ptxas_info(g.cuda, g.name, arch, workdir)
    return {**facts, "occupancy": occupancy(facts, g.launch, target)}


def run_reference(lib: ctypes.CDLL, name: str, kernel, inputs: dict) -> dict:
    """Run a reference-C function on `inputs`; outputs start poisoned (NaN) so
    that an element the implementation never writes cannot pass."""
    args, outs = [], {}
    keep = []
    for a in kernel.arrays():
        if a.temporary:
            continue
        if a.role == "input":
            arr = np.ascontiguousarray(inputs[a.name], dtype=np.float32)
        else:
            arr = np.full(a.length, np.nan, dtype=np.float32)
            outs[a.name] = arr
        keep.append(arr)
        args.append(arr.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
    for s in kernel.scalars:
        args.append(ctypes.c_float(float(inputs[s])))
    fn = getattr(lib, name)
    fn.restype = None
    fn(*args)
    return outs
