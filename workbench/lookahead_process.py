"""The look-ahead in its own process: child bounds and proofs (witnesses) of
the values a person sees, computed beside the notebook kernel instead of in a
thread competing with it for the interpreter.

A job of kind "rank" ranks the candidate's choices instead
(`model.rank_choices`), and one of kind "halt" only stops the job under way.

The worker keeps its own `Session` per (kernel, space, target) and the
candidates of earlier jobs by trail prefix, so a click (one more decision)
or an undo (a known prefix) costs at most one replayed decision. A job is a
trail and the choices on show; every result streams back as soon as it is
known, and the next job — the next click — stops the current one between two
values (the same `stop()` the thread look-ahead used).

Nothing but plain data crosses the pipe: kernel specs, decisions as dicts,
options as dicts of named fields. The worker is spawned, never forked: a
Jupyter kernel's threads do not survive a fork.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import threading
from collections import OrderedDict

from .errors import WorkbenchError

_PREFIXES = 512  # candidates kept by trail prefix, per kernel


class _Kernel:
    """One kernel's session in the worker, and its candidates by trail."""

    def __init__(self, spec: dict, space: str, target: str | None):
        from . import kernels
        from .candidate import Candidate
        from .session import Session
        from .validate import space_name
        root = Candidate.root(kernels.from_spec(spec), space_name(space))
        self.session = Session(root, target, None, None)
        self.cands: OrderedDict = OrderedDict({(): root})

    def replay(self, trail: tuple):
        """The candidate after `trail`, from its longest known prefix."""
        k = len(trail)
        while trail[:k] not in self.cands:
            k -= 1
        cand = self.cands[trail[:k]]
        self.cands.move_to_end(trail[:k])
        for i in range(k, len(trail)):
            cand = cand.decide(trail[i])
            self.cands[trail[:i + 1]] = cand
        while len(self.cands) > _PREFIXES:
            self.cands.popitem(last=False)
        return cand


def _option_fields(o, best) -> dict:
    """An option as plain named fields, every field of `Option` but the
    witness (a candidate: it stays in the worker); the main side rebuilds
    `Option(**fields)`. `above_best` against the main side's best time."""
    f = {k.name: getattr(o, k.name) for k in dataclasses.fields(o) if k.name != "witness"}
    f["above_best"] = best is not None and o.bound_ns is not None and o.bound_ns >= best
    return f


def _candidate(kernels: dict, job: dict):
    """(the job's kernel in this worker, the candidate after its trail)."""
    from .candidate import Decision
    key = (json.dumps(job["kernel"], sort_keys=True), job["space"], job["target"])
    if key not in kernels:
        kernels[key] = _Kernel(job["kernel"], job["space"], job["target"])
    k = kernels[key]
    return k, k.replay(tuple(Decision.from_dict(d) for d in job["trail"]))


def _rank_job(kernels: dict, job: dict, send, stop) -> None:
    """The choices whose values alone move the bound, most discriminating
    first (`model.rank_choices`: seconds on the thesis's matmuls, which in a
    thread of the notebook kernel slowed every click meanwhile)."""
    from .model.lookahead import Stopped, rank_choices
    k, cand = _candidate(kernels, job)
    try:
        ranked = rank_choices(cand, k.session.target, parent=k.session.bound(cand), stop=stop)
    except Stopped:
        return
    except WorkbenchError:
        ranked = []
    send(("ranked", job["gen"], [(r.choice, tuple(r.objects)) for r in ranked
                                 if r.spread_ns > 0]))


def _run_job(kernels: dict, job: dict, send, stop) -> None:
    from .model.lookahead import Stopped
    kind = job.get("kind", "options")
    if kind == "halt":  # sent to stop the job under way; nothing to do
        return
    if kind == "rank":
        _rank_job(kernels, job, send, stop)
        return
    gen = job["gen"]
    k, cand = _candidate(kernels, job)
    send(("ready", gen, cand.digest()))
    best = job.get("best_ns")
    # first every child's bound (and what known witnesses prove), then a
    # witness of the candidate and of each value's child, time-boxed
    for phase, prove_s in enumerate((0.0, job.get("prove_s", 0.0))):
        if phase and prove_s <= 0:
            break
        if phase:
            # proofs wait until the person has read the bounds: a click in
            # that time finds the worker idle, not inside a witness search
            if stop(job.get("settle_s", 0.4)):
                return
            k.session.witness(cand, budget_s=job.get("witness_s", 30.0), stop=stop)
        for choice, objects in job["items"]:
            if stop():
                return
            objects = tuple(objects)
            try:
                opts = k.session.options(choice, objects, cand, prove_s=prove_s, stop=stop)
            except Stopped:
                return
            except WorkbenchError as exc:
                send(("fail", gen, choice, objects, str(exc)))
                continue
            send(("opts", gen, phase, choice, objects,
                  [_option_fields(o, best) for o in opts]))
        send(("phase", gen, phase))


def worker_main(conn) -> None:
    """The worker's loop: one job at a time; a newer message stops it."""
    try:  # background work: the kernel answering a click and the page come first
        os.nice(10)
    except (AttributeError, OSError):
        pass
    kernels: dict = {}
    stop = conn.poll  # a message waiting = a newer job (or the end); stop(t) waits t s
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        try:
            _run_job(kernels, msg, conn.send, stop)
        except (EOFError, OSError, BrokenPipeError):
            return
        except Exception as exc:  # a failed job is a message, never a dead worker
            try:
                conn.send(("error", msg.get("gen"), f"{type(exc).__name__}: {exc}"))
            except (OSError, BrokenPipeError):
                return


class LookaheadProcess:
    """The main side: `submit(job)` replaces the running job; a reader thread
    hands every batch of results waiting in the pipe to `on_results(msgs)`
    (one call per batch, so the page gets one update per batch), and
    `("gone", None, why)` once the pipe closes (the worker ended or died)."""

    def __init__(self, on_results):
        self._on_results = on_results
        self._proc = None
        self._conn = None
        self._reader: threading.Thread | None = None
        self._lock = threading.Lock()
        self.error: str | None = None  # why the worker could not start or died

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    def start(self) -> bool:
        with self._lock:
            if self.alive:
                return True
            try:
                ctx = multiprocessing.get_context("spawn")
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=worker_main, args=(child,), daemon=True,
                                   name="workbench-lookahead")
                proc.start()
                child.close()
            except (OSError, RuntimeError, ValueError) as exc:
                self.error = f"look-ahead process did not start: {exc}"
                return False
            self._proc, self._conn = proc, parent
            self._reader = threading.Thread(target=self._read, args=(parent,), daemon=True,
                                            name="workbench-lookahead-reader")
            self._reader.start()
            return True

    def submit(self, job: dict) -> bool:
        """Send `job` (it stops the running one); False if no worker."""
        if not self.start():
            return False
        try:
            self._conn.send(job)
            return True
        except (OSError, BrokenPipeError) as exc:
            self.error = f"look-ahead process gone: {exc}"
            return False

    def _read(self, conn) -> None:
        while True:
            try:
                msgs = [conn.recv()]
                while conn.poll():
                    msgs.append(conn.recv())
            except (EOFError, OSError):
                self.error = self.error or "look-ahead process ended"
                try:  # a job under way will never answer: said, so its owner can move on
                    self._on_results([("gone", None, self.error)])
                except Exception:  # noqa: BLE001 - as below
                    pass
                return
            try:
                self._on_results(msgs)
            except Exception as exc:  # a view's failure must not end the reader
                self.error = f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.send(None)
                except (OSError, BrokenPipeError):
                    pass
            if self._proc is not None:
                self._proc.join(2)
                if self._proc.is_alive():
                    self._proc.kill()
            self._proc = self._conn = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


__all__ = ["LookaheadProcess", "worker_main"]
