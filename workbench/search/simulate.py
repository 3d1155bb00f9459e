"""The unit of work a search hands to a worker (thesis §6.1.2): replay a
node's trail, take a Monte-Carlo descent to a fixed candidate
(`workbench.descent`, children weighted by eq. 6.2 once something was
measured), measure it.

Work travels as plain data (kernel spec, trail, numbers) so that a
`dask.distributed` worker in another process can run it; each process keeps
one root candidate per kernel, so replays share its propagation caches.
"""

from __future__ import annotations

import json
import math
import os
import random
import socket
import time

from ..candidate import Candidate
from ..descent import descend
from ..errors import WorkbenchError
from ..orders import choice_order

_ROOTS: dict = {}
_BACKENDS: dict = {}


def _key(spec: dict, space: str) -> str:
    return json.dumps(spec, sort_keys=True) + "|" + space


def register_root(cand: Candidate) -> tuple[dict, str]:
    """Make this process replay trails of `cand`'s kernel on `cand`'s root (so
    candidates the search returns share the caller's kernel)."""
    kernel = cand.problem.root_problem.kernel
    spec, space = kernel.spec(), cand.space.name.removesuffix(".space")
    _ROOTS.setdefault(_key(spec, space), Candidate.root(kernel, space))
    return spec, space


def root_for(spec: dict, space: str) -> Candidate:
    key = _key(spec, space)
    root = _ROOTS.get(key)
    if root is None:
        from .. import kernels
        root = _ROOTS[key] = Candidate.root(kernels.from_spec(spec), space)
    return root


def backend_for(name: str, options: dict):
    from ..runtime.evaluator import get_backend
    key = (name, json.dumps(options, sort_keys=True))
    if key not in _BACKENDS:
        _BACKENDS[key] = get_backend(name, **options)
    return _BACKENDS[key]


def bound_target(backend) -> object:
    return getattr(backend, "bound_target", backend.target)


def _replayed(task: dict) -> tuple:
    """The task's candidate (its trail replayed on this process's root) and
    its backend."""
    root = root_for(task["kernel"], task["space"])
    cand = Candidate.replay(root.kernel, task["trail"], task["space"])
    return cand, backend_for(task["backend"], task.get("backend_options", {}))


def _measure(cand: Candidate, backend, task: dict) -> tuple[dict, float]:
    """The record of one fixed candidate and the seconds it took."""
    from ..runtime.evaluator import evaluate
    t0 = time.perf_counter()
    rec = evaluate([cand], backend, store=None, samples=task.get("samples", 10),
                   timeout_s=task.get("timeout_s", 10.0), seed=task.get("data_seed", 0))[0]
    return rec, time.perf_counter() - t0


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def simulate(task: dict) -> dict:
    """Replay `task["trail"]`, descend (up to `attempts` times) and, unless
    `task["evaluate"]` is false, measure the fixed candidate on the task's
    backend. Never raises for a failed kernel: that is the record's status."""
    from ..model import bound
    t0 = time.perf_counter()
    start, backend = _replayed(task)
    target = bound_target(backend)
    order = choice_order(task.get("order")).rollout
    rng = random.Random(task["seed"])
    best = task.get("best_ns", math.inf)
    best = math.inf if best is None else best

    def bound_fn(c):
        return bound(c, target).value_ns
    fixed, cause, depth, dead = None, None, 0, 0
    for _ in range(task.get("attempts", 4)):
        d = descend(start, rng, order=order, backtrack=True, bound_fn=bound_fn, best_ns=best,
                    start_bound=task.get("start_bound_ns", 0.0))
        fixed, cause, depth, dead = d.candidate, d.cause, d.depth, dead + d.retries
        if fixed is not None:
            break
    out = {"cause": cause, "depth": depth, "dead_ends": dead, "record": None, "trail": None,
           "worker": _worker(), "rollout_s": time.perf_counter() - t0, "eval_s": 0.0}
    if fixed is None:
        return out
    out["trail"] = [d.to_dict() for d in fixed.trail]
    if task.get("evaluate", True):
        out["record"], out["eval_s"] = _measure(fixed, backend, task)
    return out


def evaluate_trail(task: dict) -> dict:
    """Replay a fixed trail and measure it (a worker's evaluation alone)."""
    cand, backend = _replayed(task)
    if not cand.is_fixed:
        raise WorkbenchError("evaluate_trail needs the trail of a fixed candidate")
    rec, seconds = _measure(cand, backend, task)
    return {"record": rec, "eval_s": seconds, "worker": _worker()}


__all__ = ["backend_for", "evaluate_trail", "register_root", "root_for", "simulate"]
