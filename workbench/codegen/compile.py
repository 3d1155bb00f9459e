"""Compiling generated code: reference C with the system C compiler (run
through ctypes), CUDA C with nvcc (a compile check where no GPU exists)."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import tempfile
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


_OPENMP: dict = {}


def openmp_flag() -> str | None:
    """-fopenmp when the C compiler supports it (checked once), else None."""
    cc = _cc()
    if cc not in _OPENMP:
        d = Path(tempfile.mkdtemp(prefix="wb_omp_"))
        (d / "t.c").write_text("#include <omp.h>\nint f(void) { return omp_get_max_threads(); }\n")
        got = subprocess.run([cc, "-fopenmp", "-shared", "-fPIC", "-o", str(d / "t.so"),
                              str(d / "t.c")], capture_output=True, check=False)
        _OPENMP[cc] = "-fopenmp" if got.returncode == 0 else None
    return _OPENMP[cc]


_FMA: dict = {}


def fma_flags() -> list:
    """`-mfma` where the host and compiler have fused multiply-add, so that
    fmaf() is one instruction and not a libm call (which would cost every
    implementation the same ~1.5 ns per FMA and hide what its decisions
    change). -O1 does not vectorise, so the code stays scalar, within the
    `cpu_reference` table's per-cycle rates."""
    cc = _cc()
    if cc not in _FMA:
        try:
            host = " ".join(Path("/proc/cpuinfo").read_text().split())
        except OSError:
            host = ""
        ok = False
        if " fma " in f" {host} ":
            with tempfile.TemporaryDirectory(prefix="wb_fma_") as tmp:
                d = Path(tmp)
                (d / "t.c").write_text("#include <math.h>\nfloat f(float a, float b, float c)"
                                       " { return fmaf(a, b, c); }\n")
                ok = subprocess.run([cc, "-mfma", "-c", "-o", str(d / "t.o"), str(d / "t.c")],
                                    capture_output=True, check=False).returncode == 0
        _FMA[cc] = ["-mfma"] if ok else []
    return _FMA[cc]


def compile_c(sources: list[str], workdir: str | None = None,
              openmp: bool = True) -> ctypes.CDLL:
    """Compile C functions into one shared library and load it. With OpenMP
    (where the compiler has it) block loops run in parallel; the library's
    `wb_set_threads(n)` sets how many threads (one by default)."""
    cc = _cc()
    d = Path(workdir or tempfile.mkdtemp(prefix="wb_c_"))
    src, lib = d / "ref.c", d / "ref.so"
    src.write_text(C_PRELUDE + "\n".join(sources))
    omp = [openmp_flag()] if openmp and openmp_flag() else []
    # -ffp-contract=off: fmaf() is the only fused multiply-add, as on the GPU
    _run([cc, "-O1", "-shared", "-fPIC", "-ffp-contract=off", *fma_flags(), *omp, "-o",
          str(lib), str(src), "-lm"], "C compilation")
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
    "barriers": r"used (\d+) barriers",
}


def ptxas_info(source: str, name: str, arch: str = "sm_90",
               workdir: str | None = None) -> dict:
    """What `ptxas -v` reports for kernel `name` of a CUDA source: registers
    per thread, spilled bytes, stack frame, static shared memory, barriers
    (GPU facts without a GPU: nvcc compiles for any architecture)."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise CompileError("nvcc is not on PATH")
    d = Path(workdir or tempfile.mkdtemp(prefix="wb_ptxas_"))
    src, out = d / f"{name}.cu", d / f"{name}.cubin"
    src.write_text(source)
    got = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(out),
                          str(src)], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        raise CompileError(f"nvcc failed:\n{got.stderr[-4000:]}")
    text = got.stderr.split(f"Function properties for {name}", 1)[-1]
    info = {}
    for key, pat in _PTXAS.items():
        m = re.search(pat, text)
        info[key] = int(m.group(1)) if m else 0
    return info


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
