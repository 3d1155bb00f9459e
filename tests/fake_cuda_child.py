"""A stand-in for the CUDA backend's measuring process (`runtime.cuda`), for
testing the parent's deadlines without a GPU: a generated kernel whose code
says HANG never ends its first run, DIE kills the process, FAIL is a launch
error, REFDIE kills it while it times the reference; the others take 1 µs."""

from __future__ import annotations

import os
import time

from workbench.runtime.backend import Measurement, Reference
from workbench.runtime.cuda import serve


def main(conn) -> None:
    serve(conn, _job)


def _job(job, send) -> None:
    _, gens, *_, pre = job  # pre: name -> a prebuilt cubin (CudaBackend.prebuild)
    for i, g in enumerate(gens):
        send(("start", i))
        if isinstance(g, str):  # not generated: as run_generated says it
            send(("result", i, Measurement("compile_error", message=g)))
            continue
        if "HANG" in g.cuda:
            time.sleep(3600)
        if g.cuda == "DIE":
            os._exit(3)
        if "FAIL" in g.cuda:  # an illegal address: the context is broken after it
            send(("result", i, Measurement("launch_error", message="illegal address")))
            continue
        send(("result", i, Measurement("ok", [1000.0], verified=True,
                                       extra={"pid": os.getpid(), "prebuilt": g.name in pre})))
    if any(not isinstance(g, str) and g.cuda == "REFDIE" for g in gens):
        os._exit(4)  # dies timing the reference, after every candidate's result
    send(("end", Reference("fake", [500.0])))
