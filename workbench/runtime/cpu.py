"""The CPU backend: the reference executor (the generated C: every loop
sequential, the blocks spread over `threads` cores with OpenMP where the
compiler has it) compiled with the system C compiler and timed with
`perf_counter_ns`; numpy is the reference timing. Works on any machine, so a
machine without a GPU still measures real implementations."""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import tempfile
import time

import numpy as np

from ..codegen import generate
from ..codegen.compile import CompileError, compile_c, openmp_flag
from ..errors import WorkbenchError
from ..model.hardware import hardware, with_cores
from .backend import TOLERANCE, Measurement, Reference, max_error


class CpuBackend:
    name = "cpu"
    target = "cpu_reference"  # the bound's description of this executor

    def __init__(self, threads: int = 1):
        if not isinstance(threads, int) or threads < 1:
            raise WorkbenchError(f"threads must be a positive integer, got {threads!r}")
        self.threads = threads
        # the table describes one core; with more, blocks run on each
        self.bound_target = with_cores(hardware(self.target), threads)

    @property
    def device(self) -> str:
        return platform.processor() or platform.machine()

    driver = ""

    def versions(self) -> dict:
        cc = os.environ.get("CC", "cc")
        try:
            out = subprocess.run([cc, "--version"], capture_output=True, text=True,
                                 check=False).stdout.splitlines()
        except OSError:
            out = []
        return {"cc": out[0] if out else "unknown", "openmp": bool(openmp_flag()),
                "threads": self.threads}

    def run(self, kernel, cands, samples: int, timeout_s: float, seed: int):
        rng = np.random.default_rng(seed)
        inputs = kernel.make_inputs(rng)
        expected = kernel.reference(inputs)
        names = [f"wb_{i}" for i in range(len(cands))]
        results: list = [None] * len(cands)
        sources = {}
        for i, c in enumerate(cands):
            try:
                sources[i] = generate(c, names[i]).c
            except WorkbenchError as exc:
                results[i] = Measurement("compile_error", message=f"code generation: {exc}")
        libs = self._compile(sources, results)
        outs = {a.name: np.full(a.length, np.nan, np.float32) for a in kernel.outputs()}
        keep = [np.ascontiguousarray(inputs[a.name]) if a.role == "input" else outs[a.name]
                for a in kernel.arrays() if not a.temporary]
        args = [x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)) for x in keep]
        args += [ctypes.c_float(float(inputs[s])) for s in kernel.scalars]
        for i, lib in libs.items():
            fn = getattr(lib, names[i])
            fn.restype = None
            lib.wb_set_threads(self.threads)
            for o in outs.values():
                o.fill(np.nan)  # poisoned: an element never written fails
            t0 = time.perf_counter_ns()
            fn(*args)
            first = time.perf_counter_ns() - t0
            err = max_error(outs, expected)
            if not err < TOLERANCE:
                results[i] = Measurement("wrong_result", [first], f"normwise relative error "
                                         f"{err:.3g} against numpy (tolerance {TOLERANCE})",
                                         verified=False)
                continue
            if first > timeout_s * 1e9:
                results[i] = Measurement("timeout", [first], f"one run took {first / 1e9:.3g} s "
                                         f"(limit {timeout_s} s)", verified=True)
                continue
            times = []
            for _ in range(samples):
                t0 = time.perf_counter_ns()
                fn(*args)
                times.append(time.perf_counter_ns() - t0)
            results[i] = Measurement("ok", times, verified=True, extra={"max_error": err})
        ref = Reference("numpy", [])
        kernel.baseline(inputs)  # warm-up
        for _ in range(samples):
            t0 = time.perf_counter_ns()
            kernel.baseline(inputs)
            ref.times_ns.append(time.perf_counter_ns() - t0)
        return results, ref

    @staticmethod
    def _compile(sources: dict, results: list) -> dict:
        """One library for the batch; on a compile error, each source alone
        so that only the faulty ones get the status."""
        if not sources:
            return {}
        try:
            lib = compile_c(list(sources.values()), tempfile.mkdtemp(prefix="wb_cpu_"))
            return dict.fromkeys(sources, lib)
        except CompileError:
            pass
        libs = {}
        for i, src in sources.items():
            try:
                libs[i] = compile_c([src], tempfile.mkdtemp(prefix="wb_cpu_"))
            except CompileError as exc:
                results[i] = Measurement("compile_error", message=str(exc))
        return libs
