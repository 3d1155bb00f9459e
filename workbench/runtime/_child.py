"""The CPU backend's child process: loads one compiled library of generated
C, runs its functions on inputs saved by the parent, verifies each against
the expected outputs and times it, and reports on stdout, one JSON line per
event. It imports only numpy and the standard library (never `workbench`),
so it starts in a fraction of a second, and whatever the generated code does
(an endless loop, an invalid memory access) happens here, not in the caller:
the parent (`runtime.cpu`) kills it at its deadline or reads its signal.

Run as `python _child.py JOB.json`. Events: `ready`; `start` (i) before a
candidate's first run; `ran` (i, ns) after it; `result` (i, status,
times_ns, message, verified, max_error); `end`.
"""

from __future__ import annotations

import ctypes
import json
import math
import sys
import time

import numpy as np


def max_error(got: dict, want: dict) -> float:
    """Largest normwise relative error over the outputs (NaN: never written)."""
    worst = 0.0
    for name, w in want.items():
        g = np.asarray(got[name], dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        err = float(np.max(np.abs(g - w))) / max(float(np.max(np.abs(w))), 1e-30)
        if math.isnan(err):  # an output never written
            return math.inf
        worst = max(worst, err)
    return worst


def _say(**event) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _one(fn, args, outs, expected, samples, timeout_s, tolerance) -> dict:
    for o in outs.values():
        o.fill(np.nan)  # poisoned: an element never written fails
    t0 = time.perf_counter_ns()
    fn(*args)
    first = time.perf_counter_ns() - t0
    _say(ev="ran", ns=first)
    err = max_error(outs, expected)
    if not err < tolerance:
        return dict(status="wrong_result", times_ns=[first], verified=False,
                    message=f"normwise relative error {err:.3g} against numpy "
                            f"(tolerance {tolerance})")
    if first > timeout_s * 1e9:
        return dict(status="timeout", times_ns=[first], verified=True,
                    message=f"one run took {first / 1e9:.3g} s (limit {timeout_s} s)")
    times = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        fn(*args)
        times.append(time.perf_counter_ns() - t0)
    return dict(status="ok", times_ns=times, verified=True, max_error=err)


def main(job_path: str) -> int:
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    lib = ctypes.CDLL(job["lib"])
    lib.wb_set_threads.argtypes = [ctypes.c_int]
    lib.wb_set_threads(int(job["threads"]))
    keep, args, outs = [], [], {}
    for a in job["args"]:
        if a["kind"] == "scalar":
            args.append(ctypes.c_float(float(a["value"])))
            continue
        if a["kind"] == "input":
            arr = np.ascontiguousarray(np.load(a["file"]), dtype=np.float32)
        else:
            arr = np.full(int(a["length"]), np.nan, np.float32)
            outs[a["name"]] = arr
        keep.append(arr)
        args.append(arr.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
    expected = {name: np.load(f) for name, f in job["expected"].items()}
    _say(ev="ready")
    for c in job["cands"]:
        fn = getattr(lib, c["fn"])
        fn.restype = None
        _say(ev="start", i=c["i"])
        res = _one(fn, args, outs, expected, int(job["samples"]), float(job["timeout_s"]),
                   float(job["tolerance"]))
        _say(ev="result", i=c["i"], **res)
    _say(ev="end")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
