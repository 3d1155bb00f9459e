"""The evaluator: fixed candidates in, one `Record` each out.

A backend (`backend.Backend`) turns a batch of fixed candidates of one
kernel into `Measurement`s; `evaluate` adds what every record carries
(kernel, sizes, trail, bound and its top-level reason, reference timing and
the ratio to it, versions, timestamp) and appends them to the store. Every failure is a
status — compile_error, launch_error, wrong_result, timeout, crash, no_device —
never an exception that ends a notebook or a search.
"""

from __future__ import annotations

import datetime as _dt
import platform

import numpy as np

from .._version import __version__
from ..errors import WorkbenchError
from ..kernels import require_loop_nest
from ..model import bound
from .backend import (
    TOLERANCE,
    Backend,
    Measurement,
    Reference,
    backends,
    bound_target,
    get_backend,
    max_error,
    register_backend,
)
from .records import Record, RecordStore

MIN_SAMPLES = 10


def evaluate(cands, backend="cpu", store: RecordStore | str | None = "default",
             samples: int = MIN_SAMPLES, timeout_s: float = 10.0, seed: int = 0,
             prebuilt: list | None = None, run_limit_s: float | None = None,
             bounds: list | None = None) -> list[Record]:
    """Evaluate fixed candidates of one kernel on `backend` (a registered
    name or a Backend); returns the records, appended to `store` unless it
    is None. `prebuilt`: per candidate, what the backend's `prebuild` made
    of it elsewhere (or None), for a backend that takes it. A candidate
    whose bound is past `run_limit_s` (at most, and by default, the
    backend's `first_run_limit_s`) is a `timeout` without running: a GPU
    kernel cannot be interrupted, and the bound proves it would pass.
    `bounds`: per candidate, its Bound on the backend's `bound_target` when
    the caller already has it (or None), so that it is not taken twice."""
    cands = list(cands)
    if not cands:
        return []
    # a lowering gives a candidate its own copy of the kernel (with the new
    # temporaries); inputs and outputs are those of the root's kernel
    kernel = cands[0].problem.root_problem.kernel
    if any(c.problem.root_problem.kernel is not kernel for c in cands):
        raise WorkbenchError("evaluate() takes candidates of one kernel per call")
    require_loop_nest(kernel, "running an implementation (run, evaluate())")
    for i, c in enumerate(cands):  # a record is always of a fixed candidate
        if not c.is_fixed:
            raise WorkbenchError(f"evaluate() takes fixed candidates: candidate {i} has "
                                 f"{c.open_count()} open choices (finish it with a search, "
                                 "descent.random_fixed or decisions); nothing was recorded")
    be = get_backend(backend) if isinstance(backend, str) else backend
    samples = max(MIN_SAMPLES, samples)
    given = list(bounds) if bounds is not None else [None] * len(cands)
    if len(given) != len(cands):
        raise WorkbenchError(f"evaluate() got {len(given)} bounds for {len(cands)} candidates")
    bounds = []
    for cand, b in zip(cands, given):
        try:
            b = b if b is not None else bound(cand, bound_target(be))
            bounds.append((b.value_ns, b.justification.text))
        except WorkbenchError as exc:
            bounds.append((None, f"no bound: {exc}"))
    limits = [x for x in (run_limit_s, getattr(be, "first_run_limit_s", None)) if x is not None]
    limit_s = min(limits, default=None)
    not_run = {i for i, (b, _) in enumerate(bounds)
               if limit_s is not None and b is not None and b > limit_s * 1e9}
    run = [c for i, c in enumerate(cands) if i not in not_run]
    more = {}
    if prebuilt is not None:
        more["prebuilt"] = [p for i, p in enumerate(prebuilt) if i not in not_run]
    ran, reference = (be.run(kernel, run, samples=samples, timeout_s=timeout_s, seed=seed, **more)
                      if run else ([], None))
    ran = iter(ran)
    results = [Measurement("timeout", message=f"not run: its bound ({bounds[i][0] / 1e9:.3g} s)"
                           f" is past the {limit_s:g} s a run may take here")
               if i in not_run else next(ran) for i in range(len(cands))]
    now = _dt.datetime.now(_dt.timezone.utc).isoformat()  # one time for the batch
    records = []
    for cand, m, (bound_ns, bound_reason) in zip(cands, results, bounds, strict=True):
        records.append(_record(
            kernel, be, reference, now, trail=[d.to_dict() for d in cand.trail],
            digest=cand.digest(), status=m.status, message=m.message[-2000:],
            verified=m.verified, times_ns=[float(t) for t in m.times_ns],
            median_ns=m.median_ns,
            ratio_to_reference=(m.median_ns / reference.median_ns
                                if m.median_ns and reference and reference.median_ns else None),
            bound_ns=bound_ns, bound_reason=bound_reason, extra=dict(m.extra)))
    if store is not None:
        RecordStore.open(store).append(records)
    return records


def _record(kernel, be, reference, timestamp: str, **fields) -> Record:
    """What every record carries (kernel, sizes, backend, reference timing,
    versions, timestamp), with the measurement's own `fields`."""
    return Record(
        timestamp=timestamp, kernel=kernel.name, sizes=kernel.spec(), backend=be.name,
        target=be.target, device=be.device, driver=be.driver,
        reference=reference.name if reference else None,
        reference_times_ns=[float(t) for t in reference.times_ns] if reference else [],
        reference_median_ns=reference.median_ns if reference else None,
        versions={"workbench": __version__, "numpy": np.__version__,
                  "python": platform.python_version(), **be.versions()},
        **fields)


def measure_reference(kernel, backend="cpu", store: RecordStore | str | None = "default",
                      samples: int = MIN_SAMPLES, seed: int = 0) -> Record:
    """Time the reference library (numpy on the CPU, cuBLAS / CuPy on the GPU)
    alone for `kernel`'s sizes; one record of status "reference" (no trail),
    appended to `store` like any measurement."""
    be = get_backend(backend) if isinstance(backend, str) else backend
    _, ref = be.run(kernel, [], samples=max(MIN_SAMPLES, samples), timeout_s=10.0, seed=seed)
    now = _dt.datetime.now(_dt.timezone.utc).isoformat()
    rec = _record(kernel, be, ref, now, trail=[], digest=None,
                  status="reference" if ref else "no_device",
                  message="" if ref else "no device for this backend", verified=None,
                  times_ns=[], median_ns=None, ratio_to_reference=None)
    if store is not None:
        RecordStore.open(store).append([rec])
    return rec


def summary(rec: Record) -> dict:
    """The DESIGN contract's `run` output."""
    return {"status": rec["status"], "target": rec["target"], "median_ns": rec["median_ns"],
            "times_ns": rec["times_ns"], "message": rec["message"],
            "bound_ns": rec.get("bound_ns"), "reference": rec["reference"],
            "reference_median_ns": rec["reference_median_ns"],
            "ratio_to_reference": rec["ratio_to_reference"]}


__all__ = ["MIN_SAMPLES", "TOLERANCE", "Backend", "Measurement", "Reference", "backends",
           "evaluate", "get_backend", "max_error", "measure_reference", "register_backend",
           "summary"]
