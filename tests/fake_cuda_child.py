"""A stand-in for the CUDA backend's measuring process (`runtime.cuda`), for
testing the parent's deadlines without a GPU: a generated kernel whose code
says HANG never ends its first run, one that says DIE kills the process,
the others take 1 µs."""

from __future__ import annotations

import os
import time

from workbench.runtime.backend import Measurement, Reference
from workbench.runtime.cuda import serve


def main(conn) -> None:
    serve(conn, _job)


def _job(job, send) -> None:
    _, _, gens, *_ = job
    for i, g in enumerate(gens):
        send(("start", i))
        if isinstance(g, str):  # not generated: as run_generated says it
            send(("result", i, Measurement("compile_error", message=g)))
            continue
        if "HANG" in g.cuda:
            time.sleep(3600)
        if "DIE" in g.cuda:
            os._exit(3)
        send(("result", i, Measurement("ok", [1000.0], verified=True,
                                       extra={"pid": os.getpid()})))
    send(("end", Reference("fake", [500.0])))
