"""The evaluator protocol: fixed candidates in, one record each out.

A backend turns a batch of fixed candidates of one kernel into
`Measurement`s; `evaluate` adds what every record carries (kernel, sizes,
trail, bound and its top-level reason, reference timing and the ratio to it,
versions, timestamp) and appends them to the store. Every failure is a
status — compile_error, launch_error, wrong_result, timeout, no_device —
never an exception that ends a notebook or a search.
"""

from __future__ import annotations

import datetime as _dt
import math
import platform
import statistics
from dataclasses import dataclass, field

import numpy as np

from .. import __version__
from ..errors import WorkbenchError
from .records import RecordStore

MIN_SAMPLES = 10


@dataclass
class Measurement:
    status: str
    times_ns: list = field(default_factory=list)
    message: str = ""
    verified: bool | None = None
    extra: dict = field(default_factory=dict)  # registers, shared memory, spills, ...

    @property
    def median_ns(self) -> float | None:
        return float(statistics.median(self.times_ns)) if self.times_ns else None


@dataclass
class Reference:
    name: str  # e.g. "numpy.matmul", "cupy.matmul (cuBLAS)"
    times_ns: list

    @property
    def median_ns(self) -> float | None:
        return float(statistics.median(self.times_ns)) if self.times_ns else None


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


TOLERANCE = 1e-4  # float32 sums: normwise relative error


def get_backend(name: str, **options):
    if name == "cpu":
        from .cpu import CpuBackend
        return CpuBackend(**options)
    if name == "cuda":
        from .cuda import CudaBackend
        return CudaBackend()
    raise WorkbenchError(f"unknown backend {name!r}; backends: cpu, cuda")


def evaluate(cands, backend="cpu", store: RecordStore | str | None = "default",
             samples: int = MIN_SAMPLES, timeout_s: float = 10.0, seed: int = 0) -> list[dict]:
    """Evaluate fixed candidates of one kernel; returns the records (dicts),
    appended to `store` unless it is None."""
    from ..model import bound
    cands = list(cands)
    if not cands:
        return []
    # a lowering gives a candidate its own copy of the kernel (with the new
    # temporaries); inputs and outputs are those of the root's kernel
    kernel = cands[0].problem.root_problem.kernel
    if any(c.problem.root_problem.kernel is not kernel for c in cands):
        raise WorkbenchError("evaluate() takes candidates of one kernel per call")
    be = get_backend(backend) if isinstance(backend, str) else backend
    samples = max(MIN_SAMPLES, samples)
    results, reference = be.run(kernel, cands, samples=samples, timeout_s=timeout_s, seed=seed)
    now = _dt.datetime.now(_dt.UTC).isoformat()  # one time for the batch
    records = []
    for cand, m in zip(cands, results):
        rec = _record(kernel, be, reference, now, **{
            "trail": [d.to_dict() for d in cand.trail], "digest": cand.digest(),
            "status": m.status, "message": m.message[-2000:], "verified": m.verified,
            "times_ns": [float(t) for t in m.times_ns], "median_ns": m.median_ns,
            "ratio_to_reference": (m.median_ns / reference.median_ns
                                   if m.median_ns and reference and reference.median_ns
                                   else None),
            **{f"x_{k}": v for k, v in m.extra.items()}})
        try:
            b = bound(cand, getattr(be, "bound_target", be.target))
            rec["bound_ns"] = b.value_ns
            rec["bound_reason"] = b.justification.text
        except WorkbenchError as exc:
            rec["bound_ns"], rec["bound_reason"] = None, f"no bound: {exc}"
        records.append(rec)
    if store is not None:
        RecordStore.open(store).append(records)
    return records


def _record(kernel, be, reference, timestamp: str, **fields) -> dict:
    """What every record carries (kernel, sizes, backend, reference timing,
    versions, timestamp), with the measurement's own `fields`."""
    return {
        "timestamp": timestamp, "kernel": kernel.name,
        "sizes": kernel.spec(), "backend": be.name, "target": be.target, "device": be.device,
        "driver": be.driver,
        "reference": reference.name if reference else None,
        "reference_times_ns": [float(t) for t in reference.times_ns] if reference else [],
        "reference_median_ns": reference.median_ns if reference else None,
        "versions": {"workbench": __version__, "numpy": np.__version__,
                     "python": platform.python_version(), **be.versions()},
        **fields}


def measure_reference(kernel, backend="cpu", store: RecordStore | str | None = "default",
                      samples: int = MIN_SAMPLES, seed: int = 0) -> dict:
    """Time the reference library (numpy on the CPU, cuBLAS / CuPy on the GPU)
    alone for `kernel`'s sizes; one record of status "reference" (no trail),
    appended to `store` like any measurement."""
    be = get_backend(backend) if isinstance(backend, str) else backend
    _, ref = be.run(kernel, [], samples=max(MIN_SAMPLES, samples), timeout_s=10.0, seed=seed)
    rec = _record(kernel, be, ref, _dt.datetime.now(_dt.UTC).isoformat(), trail=[], digest=None,
                  status="reference" if ref else "no_device",
                  message="" if ref else "no device for this backend", verified=None,
                  times_ns=[], median_ns=None, ratio_to_reference=None)
    if store is not None:
        RecordStore.open(store).append([rec])
    return rec


def summary(rec: dict) -> dict:
    """The DESIGN contract's `run` output."""
    return {"status": rec["status"], "target": rec["target"], "median_ns": rec["median_ns"],
            "times_ns": rec["times_ns"], "message": rec["message"],
            "bound_ns": rec.get("bound_ns"), "reference": rec["reference"],
            "reference_median_ns": rec["reference_median_ns"],
            "ratio_to_reference": rec["ratio_to_reference"]}


__all__ = ["Measurement", "Reference", "evaluate", "get_backend", "max_error",
           "measure_reference", "summary"]
