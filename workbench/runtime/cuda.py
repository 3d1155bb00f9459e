"""The CUDA backend: the generated CUDA compiled with CuPy (NVRTC through
`RawModule`) — or, where nvcc exists, a whole batch at once by nvcc for the
device's architecture with `ptxas -v`, whose facts go into the records as
`x_ptxas` — launched with the generated grid and block, timed with CUDA
events after a warm-up, the L2 flushed between runs (a buffer twice the L2
size is rewritten), every sample kept. cuBLAS (`cupy.matmul`) or a CuPy
elementwise expression is the reference timing. Without CuPy or a GPU every
candidate gets the `no_device` status and a message saying how to get one."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from ..codegen import Generated, generate
from ..codegen.compile import CompileError, compile_cuda, nvcc_path, ptxas_report
from ..errors import WorkbenchError
from ..target import available_targets
from .backend import TOLERANCE, Measurement, Reference, inputs_for, max_error

NO_DEVICE = ("no CUDA device: install CuPy for your CUDA version (pip install cupy-cuda12x) "
             "on a machine with an NVIDIA GPU, or use --backend cpu")


# a kernel nvcc has not compiled in this time is a compile_error (a fully unrolled
# kernel of thousands of lines can keep cicc busy for minutes; NVRTC would too)
NVCC_TIMEOUT_S = 30.0


def cupy_module():
    """CuPy when it is installed and sees a device, else None."""
    try:
        import cupy
    except ImportError:
        return None
    try:
        return cupy if cupy.is_available() else None
    except (RuntimeError, OSError):  # a broken driver install reads as no device
        return None


_cupy = cupy_module  # the name tests and notebooks used before it was public


def slug(device: str) -> str:
    """The target-file name of a device ("NVIDIA H200" -> "nvidia_h200")."""
    return "".join(ch if ch.isalnum() else "_" for ch in device.lower()).strip("_")


class CudaBackend:
    name = "cuda"

    # a first run longer than this is killed with its process (status timeout)
    first_run_limit_s = 20.0
    compile_s = NVCC_TIMEOUT_S  # a kernel's own NVRTC build, when nvcc could not batch it

    def __init__(self, isolate: bool = True):
        self.isolate = isolate
        self._child = None  # (process, connection) of the measuring child
        self.cp = cupy_module()
        self.device, self.driver = "none", ""
        self.arch: str | None = None  # ptxas's architecture: the device's
        self._cubins: dict = {}  # cubin path -> loaded module
        if self.cp is not None:
            props = self.cp.cuda.runtime.getDeviceProperties(0)
            self.device = props["name"].decode()
            self.driver = str(self.cp.cuda.runtime.driverGetVersion())
            self.l2_bytes = int(props.get("l2CacheSize", 50 << 20))
            self.arch = f"sm_{props['major']}{props['minor']}"

    @property
    def target(self) -> str:
        """The bound's table: the device's calibrated one when the data
        directory holds it, else the datasheet's `h200` — read at each use,
        so a calibration made after this backend counts."""
        return "h200" if self.cp is None else _target_for(self.device)

    def versions(self) -> dict:
        if self.cp is None:
            return {}
        return {"cupy": self.cp.__version__,
                "cuda_runtime": str(self.cp.cuda.runtime.runtimeGetVersion())}

    def prebuild(self, cand, name: str = "wb_0") -> dict | None:
        """Compile a fixed candidate's CUDA for this device, where it is
        drawn (a search worker: many compile while the GPU measures one at a
        time): {"cuda", "cubin" (bytes), "facts"} or {"cuda", "error"}; None
        without nvcc or a device. `run(..., prebuilt=...)` uses it when the
        code it generates is the same text, and compiles it otherwise."""
        if self.arch is None:  # no device: nothing to build for
            return None
        try:
            g = generate(cand, name)
        except WorkbenchError:
            return None  # run() records it
        with tempfile.TemporaryDirectory(prefix="wb_pre_") as d:
            got = self._prebuild([g], d).get(name)
            if got is None:
                return None
            if isinstance(got, str):
                return {"cuda": g.cuda, "error": got}
            return {"cuda": g.cuda, "cubin": Path(got[0]).read_bytes(), "facts": got[1]}

    def run(self, kernel, cands, samples: int, timeout_s: float, seed: int, prebuilt=None):
        """Measure fixed candidates of `kernel`. Their CUDA is generated here;
        compiling, running and timing happen in a child process (`isolate`,
        for a kernel that `build_kernel` rebuilds from its spec), which a
        deadline kills: a CUDA kernel cannot be interrupted, so a candidate
        whose first run outlasts `first_run_limit_s` would otherwise hold the
        caller (a notebook, a campaign) for as long as it runs — minutes for
        the slowest random candidates (3,345 times their bound on an H200)."""
        if self.cp is None:
            return [Measurement("no_device", message=NO_DEVICE) for _ in cands], None
        gens = []
        for i, cand in enumerate(cands):
            try:
                g = generate(cand, f"wb_{i}")
                gens.append(Generated(g.name, g.cuda, "", g.launch, None))  # picklable
            except WorkbenchError as exc:
                gens.append(str(exc))
        pre = _matching(gens, prebuilt)
        spec = _rebuildable(kernel)
        if self.isolate and spec is not None:
            results, ref = _in_child(self, spec, gens, samples, timeout_s, seed, pre)
        else:
            results, ref = self.run_generated(kernel, gens, samples, timeout_s, seed,
                                              prebuilt=pre)
        for g, m in zip(gens, results):  # what each record measured, compiled or not
            if not isinstance(g, str):
                m.extra["source_digest"] = g.source_digest("cuda")
        return results, ref

    def run_generated(self, kernel, gens, samples, timeout_s, seed, report=None,
                      workdir=None, prebuilt=None):
        """Compile, check and time generated kernels (`Generated`, or the
        message of one that could not be generated) in this process, then the
        reference; `report(event, ...)` hears ("start", i) before a candidate
        and ("result", i, measurement) after it. The cubins go to `workdir`
        (default: a temporary folder removed at the end); `prebuilt` (name ->
        cubin bytes and ptxas facts, or nvcc's message) are not compiled again."""
        cp = self.cp
        inputs, expected = inputs_for(kernel, seed)
        dev_in = {a.name: cp.asarray(inputs[a.name]) for a in kernel.inputs()}
        dev_out = {a.name: cp.empty(a.length, cp.float32) for a in kernel.outputs()}
        flush = flush_buffer(cp, self.l2_bytes)
        results = []
        with tempfile.TemporaryDirectory(prefix="wb_cubin_") as own:  # cubins, until loaded
            pre = prebuilt or {}
            built = self._prebuild([g for g in gens if not isinstance(g, str)
                                    and g.name not in pre], workdir or own)
            built.update(unpack_prebuilt(pre, workdir or own))
            for i, g in enumerate(gens):
                if report:
                    report("start", i)
                m = (Measurement("compile_error", message=g) if isinstance(g, str) else
                     self._one(kernel, g, inputs, expected, dev_in, dev_out, flush, samples,
                               timeout_s, built))
                results.append(m)
                if report:
                    report("result", i, m)
        self._cubins = {}
        ref = self._reference(kernel, inputs, flush, samples)
        return results, ref

    def _time(self, launch, flush, samples):
        return time_launches(self.cp, launch, flush, samples)

    def _prebuild(self, gens, workdir: str | None = None) -> dict:
        """All generated kernels compiled at once by nvcc for this device
        (parallel jobs, `ptxas -v`): name -> (cubin path, ptxas facts), or
        name -> nvcc's message for a kernel that does not compile. Empty
        without nvcc: each kernel then goes through NVRTC alone."""
        if self.arch is None or nvcc_path() is None or not gens:
            return {}
        try:
            rep = ptxas_report(gens, self.arch, workdir=workdir, timeout_s=NVCC_TIMEOUT_S)
        except (CompileError, OSError):
            return {}
        out: dict = {n: (rep.cubins[n], rep.facts[n]) for n in rep.cubins}
        out.update(rep.errors)
        return out

    def _function(self, g, built: dict):
        """The compiled kernel of `g`: from the batch's cubin when there is
        one (with its ptxas facts), else NVRTC; raises CompileError when nvcc
        refused it."""
        got = built.get(g.name)
        if isinstance(got, str):
            raise CompileError(f"nvcc failed:\n{got}")
        if got is not None:
            path, facts = got
            try:
                if path not in self._cubins:
                    self._cubins[path] = self.cp.RawModule(path=str(path))
                return self._cubins[path].get_function(g.name), facts
            except Exception:  # noqa: BLE001 - an unloadable cubin: NVRTC instead
                pass
        return self._module(g.cuda).get_function(g.name), None

    def _one(self, kernel, g, inputs, expected, dev_in, dev_out, flush, samples,
             timeout_s, built=None):
        cp = self.cp
        try:
            fn, facts = self._function(g, built or {})
            dyn = g.launch.get("dynamic_shared_bytes", 0)
            if dyn:  # above 48 KB a kernel must opt in to its dynamic shared memory
                fn.max_dynamic_shared_size_bytes = dyn
            extra = {"registers": fn.num_regs, "shared_bytes": fn.shared_size_bytes + dyn,
                     "local_bytes": fn.local_size_bytes}
            if facts is not None:
                extra["ptxas"] = facts
        except (WorkbenchError, CompileError, cp.cuda.compiler.CompileException) as exc:
            return Measurement("compile_error", message=str(exc))
        args = [dev_in[a.name] if a.role == "input" else dev_out[a.name]
                for a in kernel.arrays() if not a.temporary]
        args += [np.float32(inputs[s]) for s in kernel.scalars]
        if g.launch["scratch_floats"]:
            args.append(cp.empty(g.launch["scratch_floats"], cp.float32))

        def launch():
            fn(tuple(g.launch["grid"]), tuple(g.launch["block"]), tuple(args),
               shared_mem=dyn)
        try:
            for o in dev_out.values():
                o.fill(np.nan)  # poisoned outputs
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            launch()
            stop.record()
            stop.synchronize()
            first = cp.cuda.get_elapsed_time(start, stop) * 1e6
        except self._cuda_errors() as exc:
            return Measurement("launch_error", message=f"{type(exc).__name__}: {exc}",
                               extra=extra)
        err = max_error({k: cp.asnumpy(v) for k, v in dev_out.items()}, expected)
        if not err < TOLERANCE:
            return Measurement("wrong_result", [first], f"normwise relative error {err:.3g}",
                               verified=False, extra=extra)
        if first > timeout_s * 1e9:
            return Measurement("timeout", [first], f"one run took {first / 1e9:.3g} s",
                               verified=True, extra=extra)
        try:
            times = self._time(launch, flush, samples)
        except self._cuda_errors() as exc:
            return Measurement("launch_error", message=f"{type(exc).__name__}: {exc}",
                               extra=extra)
        return Measurement("ok", times, verified=True, extra={**extra, "max_error": err})

    def _module(self, code: str):
        """NVRTC through CuPy; where NVRTC cannot be loaded, nvcc to PTX."""
        cp = self.cp
        try:
            return cp.RawModule(code=code, options=("--std=c++17",))
        except (OSError, RuntimeError) as exc:
            if isinstance(exc, cp.cuda.compiler.CompileException):
                raise
            ptx = compile_cuda([code], arch=self.arch, jobs=1)[0]
            return cp.RawModule(path=str(ptx))

    def _cuda_errors(self) -> tuple:
        cp = self.cp
        return (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError, ValueError,
                TypeError)

    def _reference(self, kernel, inputs, flush, samples):
        cp = self.cp
        dev = {k: (cp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
        name = "cupy.matmul (cuBLAS)" if "C" in {a.name for a in kernel.outputs()} \
            else "cupy elementwise"
        return Reference(name, self._time(lambda: kernel.baseline(dev, cp), flush, samples))


def _matching(gens, prebuilt) -> dict:
    """name -> (cubin bytes, facts) or nvcc's message, for each generated
    kernel whose prebuilt code (`CudaBackend.prebuild`) is the same text."""
    out: dict = {}
    for g, p in zip(gens, prebuilt or (), strict=False):
        if p is None or isinstance(g, str) or p.get("cuda") != g.cuda:
            continue
        out[g.name] = p["error"] if "error" in p else (p["cubin"], p.get("facts"))
    return out


def unpack_prebuilt(pre: dict, workdir: str) -> dict:
    """`_prebuild`'s form (name -> (cubin path, facts) or nvcc's message)
    of prebuilt kernels, their cubins written to `workdir`."""
    out: dict = {}
    for name, got in pre.items():
        if isinstance(got, str):
            out[name] = got
            continue
        path = Path(workdir) / f"pre_{name}.cubin"
        path.write_bytes(got[0])
        out[name] = (path, got[1])
    return out


WARMUP_S, WARMUP_MAX = 0.005, 20  # warm-up launches: until 5 ms have passed, at most 20


def flush_buffer(cp, l2_bytes: int):
    """Floats to overwrite before each timed launch: twice the L2, so that
    nothing a kernel reads is still cached (`time_launches`)."""
    return cp.empty(2 * l2_bytes // 4, cp.float32)


def time_launches(cp, launch, flush, samples: int) -> list:
    """`samples` times (ns) of `launch()` after a warm-up, each by CUDA
    events around the launch with the L2 flushed first (timings start from
    DRAM, as the bound assumes). The flush also keeps the GPU busy while the
    host queues the launch, so the host's part of a launch is not timed.
    The calibration times its empty kernel the same way (`empty_kernel_s`)."""
    times = []
    # warm-up: one launch loads the module and the handles, but a 10 µs
    # kernel needs a few ms of work before the clocks settle (the H200's
    # cuBLAS matmul 256 read 196, 85, 62 µs ... 9 µs after a single one)
    t_end = time.perf_counter() + WARMUP_S
    for _ in range(WARMUP_MAX):
        launch()
        cp.cuda.Device().synchronize()
        if time.perf_counter() >= t_end:
            break
    for _ in range(samples):
        flush.fill(0)
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) * 1e6)
    return times


def _target_for(device: str) -> str:
    """The target file the bound should use for this device: a calibrated
    file named after it when one exists, else the datasheet table."""
    if slug(device) in available_targets():
        return slug(device)
    return "h200"


# ---------------------------------------------------------------- the child
def _rebuildable(kernel):
    """The kernel's spec when `kernels.from_spec` makes this very kernel again
    in a fresh process (a thesis kernel at any sizes; not a builder this
    process registered), else None."""
    from ..kernels import BUILDERS
    spec = kernel.spec() or {}
    return spec if spec.get("builder") in BUILDERS and spec["builder"] != "basic_block" else None


def serve(conn, run_job) -> None:
    """A measuring process's loop: jobs in from `conn`, `run_job(job, send)`
    sends its events, until None or a closed pipe."""
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        run_job(job, conn.send)


def _child_main(conn) -> None:
    """The measuring process: jobs (kernel spec, gens, samples, timeout_s,
    seed, cubin folder, prebuilt cubins) in, events out."""
    from ..kernels import from_spec
    be = CudaBackend(isolate=False)

    def run_job(job, send):
        spec, gens, samples, timeout_s, seed, workdir, pre = job
        try:
            kernel = from_spec(spec)
            _, ref = be.run_generated(kernel, gens, samples, timeout_s, seed,
                                      report=lambda *ev: send(ev), workdir=workdir,
                                      prebuilt=pre)
            send(("end", ref))
        except Exception as exc:  # noqa: BLE001 - said to the parent, which records it
            send(("error", f"{type(exc).__name__}: {exc}"))
        finally:  # an idle child holds no device memory
            be.cp.get_default_memory_pool().free_all_blocks()
    serve(conn, run_job)


def _child(be):
    import multiprocessing
    proc, conn = be._child or (None, None)
    if proc is not None and proc.is_alive():
        return proc, conn
    # spawn: a forked child would share the parent's CUDA context
    ctx = multiprocessing.get_context("spawn")
    mine, theirs = ctx.Pipe()
    proc = ctx.Process(target=getattr(be, "child_main", _child_main), args=(theirs,), daemon=True,
                       name="workbench-cuda")
    proc.start()
    theirs.close()
    be._child = (proc, mine)
    return proc, mine


def _kill(be) -> None:
    proc, conn = be._child or (None, None)
    be._child = None
    if proc is not None:
        proc.kill()
        proc.join(5)
        conn.close()


def _lost(results, todo, current, died, exit_code, took, limit) -> None:
    """What a killed (or dead) child leaves: the candidate it was running is a
    timeout (or a launch error); killed while building the batch or timing
    the reference, every candidate still without a result is a launch error."""
    if current is None:
        why = (f"the measuring process died (exit {exit_code}) after {took:.0f} s"
               if died else f"the measuring process took more than {took:.0f} s")
        _fill_missing(results, todo, why + ", before a candidate ran or after the last one")
    elif died:
        results[todo[current]] = Measurement(
            "launch_error", message=f"the measuring process died (exit {exit_code}) while it ran")
    else:
        results[todo[current]] = Measurement(
            "timeout", message=f"killed after {took:.1f} s: its run did not end within "
                               f"{limit:.0f} s; the measuring process was replaced")


def _fill_missing(results, todo, why) -> None:
    """Every candidate of the batch still without a result: a launch error."""
    for j in todo:
        if results[j] is None:
            results[j] = Measurement("launch_error", message=why)


def _in_child(be, spec, gens, samples, timeout_s, seed, pre=None):
    """Run the batch in the child. A candidate past its deadline, or one the
    child died on, is recorded and the child replaced for the rest; so is a
    launch error (it may leave the CUDA context broken for what follows).
    The child's cubins go to a folder this process owns and removes. An
    exception here (a notebook's interrupt) kills the child, so that the
    next call does not read this batch's events."""
    results: list = [None] * len(gens)
    ref = None
    # spawn and CuPy, then the batch's nvcc: waves of (cores × 4) kernels,
    # each job within compile_s, retried kernel by kernel once
    waves = math.ceil(max(1, len(gens)) / (4 * (os.cpu_count() or 1)))
    start_allowance = 60.0 + 2 * be.compile_s * waves
    # a first run of first_run_limit_s, then the samples (each under timeout_s)
    per_candidate = be.first_run_limit_s + timeout_s * (samples + 2) + be.compile_s
    ref_tries = 0
    workdir = tempfile.mkdtemp(prefix="wb_cubin_")
    try:
        while any(r is None for r in results) or (ref is None and ref_tries < 2):
            todo = [i for i, r in enumerate(results) if r is None]
            ref_tries += not todo  # only the reference is missing: a last candidate was killed
            proc, conn = _child(be)
            conn.send((spec, [gens[i] for i in todo], samples, timeout_s, seed, workdir,
                       pre or {}))
            current, t_start = None, time.monotonic()
            deadline = t_start + start_allowance
            while True:
                wait = deadline - time.monotonic()
                ready = wait > 0 and conn.poll(wait)
                try:
                    ev = conn.recv() if ready else None
                except (EOFError, OSError):
                    ev = ("died", None)
                if ev is None or ev[0] == "died":
                    _kill(be)
                    _lost(results, todo, current, died=ev is not None, exit_code=proc.exitcode,
                          took=time.monotonic() - t_start, limit=per_candidate)
                    break
                kind = ev[0]
                if kind == "start":
                    current, t_start = ev[1], time.monotonic()
                    deadline = t_start + per_candidate
                elif kind == "result":
                    results[todo[ev[1]]] = ev[2]
                    current, t_start = None, time.monotonic()
                    deadline = t_start + per_candidate
                    if ev[2].status == "launch_error":  # the context may be broken: a new child
                        _kill(be)
                        break
                elif kind == "end":
                    ref = ev[1]
                    break
                elif kind == "error":
                    _kill(be)
                    _fill_missing(results, todo, ev[1])
                    break
    except BaseException:
        _kill(be)
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results, ref
