"""The CPU backend: the reference executor (the generated C: every loop
sequential, the blocks spread over `threads` cores with OpenMP where the
compiler has it) compiled with the system C compiler, run and timed with `perf_counter_ns` in
a child process that a deadline kills (`_child.py`); numpy is the reference
timing. Works on any machine, so a
machine without a GPU still measures real implementations."""

from __future__ import annotations

import json
import os
import platform
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..codegen import generate, program_digest
from ..codegen.compile import CompileError, build_c, openmp_flag
from ..errors import WorkbenchError
from ..model.hardware import hardware, with_cores
from .backend import TOLERANCE, Measurement, Reference, inputs_for


class CpuBackend:
    name = "cpu"

    def __init__(self, threads: int = 1):
        if not isinstance(threads, int) or threads < 1:
            raise WorkbenchError(f"threads must be a positive integer, got {threads!r}")
        self.threads = threads
        self._cores: tuple | None = None  # (Hardware of the table, with `threads` cores)

    @property
    def target(self) -> str:
        """The bound's table for this executor: this host's calibrated one
        if the data directory holds it, else `cpu_reference` — read at each
        use, so a backend made before a calibration, or under another data
        directory, does not keep a table that no longer applies."""
        from .calibrate import host_cpu_target
        return host_cpu_target()

    @property
    def bound_target(self):
        """`target`'s Hardware with `threads` cores (the table describes one
        core; with more, blocks run on each)."""
        hw = hardware(self.target)
        if self._cores is None or self._cores[0] is not hw:
            self._cores = (hw, with_cores(hw, self.threads))
        return self._cores[1]

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
        """Generate and compile the batch here, run it in a child process
        (`_child.py`): an endless loop is killed at its deadline (`timeout`),
        a crash becomes `crash` with its signal, and the batch goes on in a
        new child with the candidates after it. The temporary folder (source,
        library, inputs) is removed before returning."""
        inputs, expected = inputs_for(kernel, seed)
        names = [f"wb_{i}" for i in range(len(cands))]
        results: list = [None] * len(cands)
        sources = {}
        for i, c in enumerate(cands):
            try:
                sources[i] = generate(c, names[i]).c
            except WorkbenchError as exc:
                results[i] = Measurement("compile_error", message=f"code generation: {exc}")
        if sources:
            with tempfile.TemporaryDirectory(prefix="wb_cpu_", ignore_cleanup_errors=True
                                             ) as tmp:
                libs = self._compile(sources, results, Path(tmp))
                job = self._job(kernel, inputs, expected, Path(tmp), samples, timeout_s)
                for lib, idx in _group(libs).items():
                    run_in_child(job, lib, [(i, names[i]) for i in idx], results, timeout_s,
                                 samples, Path(tmp))
        for i, src in sources.items():  # what each record measured, compiled or not
            results[i].extra["source_digest"] = program_digest(src, names[i])
        return results, self.reference(kernel, inputs, samples)

    def reference(self, kernel, inputs, samples: int) -> Reference:
        """numpy's time for the kernel, on as many BLAS threads as the
        generated code has cores (the comparison a reference is for). It is
        timed here, in the caller's process: in a notebook, beside the
        explorer's threads. With one thread it is the CPU time of this
        thread, which no wait counts (for the interpreter lock, for a core):
        in a busy explorer on 2 cores the wall clock once gave 16.0 ms for a
        27 µs product, every sample a whole number of 4 ms scheduler ticks."""
        from threadpoolctl import threadpool_limits
        clock = time.thread_time_ns if self.threads == 1 else time.perf_counter_ns
        ref = Reference("numpy", [])
        with threadpool_limits(limits=self.threads, user_api="blas"):
            kernel.baseline(inputs)  # warm-up
            for _ in range(samples):
                t0 = clock()
                kernel.baseline(inputs)
                ref.times_ns.append(clock() - t0)
        return ref

    def _job(self, kernel, inputs, expected, tmp: Path, samples, timeout_s) -> dict:
        """What the child needs, the arrays saved beside it."""
        args, exp = [], {}
        for a in kernel.arrays():
            if a.temporary:
                continue
            if a.role == "input":
                f = tmp / f"in_{a.name}.npy"
                np.save(f, np.ascontiguousarray(inputs[a.name], dtype=np.float32))
                args.append({"kind": "input", "name": a.name, "file": str(f)})
            else:
                args.append({"kind": "output", "name": a.name, "length": int(a.length)})
        args += [{"kind": "scalar", "name": s, "value": float(inputs[s])}
                 for s in kernel.scalars]
        for name, arr in expected.items():
            f = tmp / f"expected_{name}.npy"
            np.save(f, np.asarray(arr))
            exp[name] = str(f)
        return {"threads": self.threads, "args": args, "expected": exp, "samples": samples,
                "timeout_s": float(timeout_s), "tolerance": TOLERANCE}

    @staticmethod
    def _compile(sources: dict, results: list, tmp: Path) -> dict:
        """One library for the batch; on a compile error, each source alone
        so that only the faulty ones get the status. {index: library path}"""
        try:
            d = tmp / "batch"
            d.mkdir()
            lib = build_c(list(sources.values()), d)
            return dict.fromkeys(sources, lib)
        except CompileError:
            pass
        libs = {}
        for i, src in sources.items():
            d = tmp / f"one_{i}"
            d.mkdir()
            try:
                libs[i] = build_c([src], d)
            except CompileError as exc:
                results[i] = Measurement("compile_error", message=str(exc))
        return libs


def _group(libs: dict) -> dict:
    out: dict = {}
    for i, lib in libs.items():
        out.setdefault(lib, []).append(i)
    return out


# seconds the child may take beyond the measured work: start, load, verify
STARTUP_S = 30.0
GRACE_S = 1.0
CHILD = Path(__file__).with_name("_child.py")


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def run_in_child(job: dict, lib: Path, todo: list, results: list, timeout_s: float,
                 samples: int, tmp: Path) -> None:
    """Run `todo` ([(index, function name)]) of library `lib` in child
    processes, one after another until every one has a result: a child that
    dies or passes its deadline ends its running candidate (`crash` with the
    signal, or `timeout`) and a new child takes the rest."""
    while todo:
        done = _child_batch(job, lib, todo, results, timeout_s, samples, tmp)
        todo = todo[done:]


def _child_batch(job, lib, todo, results, timeout_s, samples, tmp) -> int:
    """One child over `todo`; returns how many of them now have a result."""
    path = tmp / "job.json"
    path.write_text(json.dumps({**job, "lib": str(lib),
                                "cands": [{"i": i, "fn": fn} for i, fn in todo]}))
    err_path = tmp / "child.stderr"
    with err_path.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-I", str(CHILD), str(path)],
                                stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    reader = _Lines(proc)
    done, current, why = 0, None, None
    deadline = time.monotonic() + STARTUP_S
    try:
        while True:
            ev = reader.next(deadline)
            if ev is None:  # the child ended, or passed its deadline
                break
            kind = ev.get("ev")
            if kind == "start":
                current = ev["i"]
                deadline = time.monotonic() + timeout_s + GRACE_S
                why = (f"the first run did not end within {timeout_s + GRACE_S:.3g} s "
                       f"(limit {timeout_s} s): killed")
            elif kind == "ran":
                first = ev["ns"] / 1e9
                deadline = time.monotonic() + STARTUP_S + samples * first * 3 + GRACE_S
                why = (f"first run {first:.3g} s, then {samples} samples did not end "
                       f"within {samples * first * 3 + GRACE_S:.3g} s: killed")
            elif kind == "result":
                i = ev.pop("i")
                ev.pop("ev")
                err_ = ev.pop("max_error", None)
                results[i] = Measurement(ev["status"], ev["times_ns"], ev.get("message", ""),
                                         ev.get("verified"),
                                         extra={"max_error": err_} if err_ is not None else {})
                done += 1
                current = None
                deadline = time.monotonic() + STARTUP_S
            elif kind == "end":
                break
    finally:
        timed_out = False
        if reader.eof:  # it closed its output: it is ending, let it finish
            try:
                proc.wait(timeout=GRACE_S + 5)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:  # past its deadline (or an error here): kill it
            timed_out = True
            proc.kill()
        rc = proc.wait()
        reader.close()
    if done == len(todo):
        return done
    stderr = err_path.read_text(errors="replace")[-1500:]
    i = todo[done][0] if current is None else current
    if timed_out and current is not None:
        results[i] = Measurement("timeout", [], why, verified=None,
                                 extra={"killed": True})
    elif rc < 0:
        name = _signal_name(-rc)
        results[i] = Measurement("crash", [], f"the generated code died of {name}"
                                 + (f"\n{stderr}" if stderr.strip() else ""),
                                 extra={"signal": -rc, "signal_name": name})
    else:
        what = "did not start in time" if timed_out else f"exited with status {rc}"
        results[i] = Measurement("crash", [], f"the evaluation process {what}"
                                 + (f":\n{stderr}" if stderr.strip() else ""),
                                 extra={"exit_code": rc})
        if current is None:  # it died before any candidate: all the rest share it
            for j, _ in todo[done + 1:]:
                results[j] = results[i]
            return len(todo)
    return done + 1


class _Lines:
    """JSON lines from a child's stdout, read with a deadline."""

    def __init__(self, proc):
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self.buf = b""
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)
        self.eof = False

    def next(self, deadline: float):
        while b"\n" not in self.buf:
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            return {"ev": "noise"}

    def close(self) -> None:
        self.sel.close()
        self.proc.stdout.close()
