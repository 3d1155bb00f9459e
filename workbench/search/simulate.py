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
from dataclasses import dataclass, field

from ..candidate import Candidate, Decision
from ..descent import descend
from ..errors import WorkbenchError
from ..orders import choice_order
from ..runtime.backend import bound_target
from ..runtime.records import Record
from .climb import climb, keep_applicable

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
    """This process's backend of `name` and `options`, made once: a backend
    reads its bound's table at each use (`CpuBackend.target`), so one made
    under another WORKBENCH_DATA, or before a calibration, bounds with the
    table that applies now."""
    from ..runtime.evaluator import get_backend
    key = (name, json.dumps(options, sort_keys=True))
    if key not in _BACKENDS:
        _BACKENDS[key] = get_backend(name, **options)
    return _BACKENDS[key]


@dataclass(frozen=True)
class Task:
    """What a search hands to a worker: plain data, so it pickles to another
    process. The start candidate is `trail` replayed on the kernel `kernel`
    (a spec) in `space`."""
    kernel: dict
    space: str
    trail: list  # Decision.to_dict() of each decision
    backend: str = "cpu"
    backend_options: dict = field(default_factory=dict)
    order: str | list = "thesis"  # orders.order_spec of the descent's order
    seed: int = 0  # of the descent
    best_ns: float | None = None  # T of eq. 6.2; None before the first measurement
    start_bound_ns: float = 0.0
    attempts: int = 4  # descents tried before giving up
    evaluate: bool = True  # False: the caller measures (a GPU, one run at a time)
    samples: int = 10
    timeout_s: float = 10.0
    data_seed: int = 0  # of the kernel's inputs
    climb: int = 0  # moves of `search.climb` on the bound before the leaf is measured
    climb_from: dict | None = None  # {"trail", "digest"} of a measured implementation:
    # the climb starts from it carried below `trail` instead of a new descent's end


@dataclass(frozen=True)
class Outcome:
    """What a worker sends back. `trail` is None when every descent was cut
    (`cause`: "constraints" or "model"); `record` None when not measured."""
    cause: str | None = None
    depth: int = 0
    dead_ends: int = 0
    trail: list | None = None
    record: Record | None = None
    built: dict | None = None  # unmeasured: the backend's `prebuild` of the candidate
    worker: str = ""
    rollout_s: float = 0.0
    eval_s: float = 0.0
    climb: dict | None = None  # `Climb.to_dict()` when the leaf was climbed


def hopeless(bound_ns: float, best_ns: float, timeout_s: float | None) -> bool:
    """Whether measuring a fixed candidate cannot help a search: its bound
    is at or past the best time found, or past the time limit (its first run
    would be a `timeout`, which gives the search no time)."""
    return bound_ns >= best_ns or (timeout_s is not None and bound_ns > timeout_s * 1e9)


def _replayed(task: Task) -> tuple:
    """The task's candidate (its trail replayed on this process's root) and
    its backend."""
    root = root_for(task.kernel, task.space)
    cand = Candidate.replay(root.kernel, task.trail, task.space)
    return cand, backend_for(task.backend, task.backend_options)


def _measure(cand: Candidate, backend, task: Task) -> tuple[Record, float]:
    """The record of one fixed candidate and the seconds it took."""
    from ..runtime.evaluator import evaluate
    t0 = time.perf_counter()
    rec = evaluate([cand], backend, store=None, samples=task.samples,
                   timeout_s=task.timeout_s, seed=task.data_seed)[0]
    return rec, time.perf_counter() - t0


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _climb_on(start: Candidate, task: Task, bound_fn, rng, order):
    """The climb from `task.climb_from`, a measured implementation carried
    below `start` (its decisions that still apply there kept, the rest
    descended); None when none is reached, or when the climb ends at that
    implementation itself (measuring it again would tell nothing new)."""
    try:
        taken = set(start.trail)
        seed = keep_applicable(start, [d for d in map(Decision.from_dict,
                                                      task.climb_from["trail"])
                                       if d not in taken])
        leaf = seed if seed.is_fixed else descend(seed, rng, order=order,
                                                  backtrack=True).candidate
    except (WorkbenchError, KeyError, TypeError):
        return None
    if leaf is None:
        return None
    got = climb(start, leaf, bound_fn, rng, steps=task.climb, order=order)
    return None if got.candidate.digest() == task.climb_from.get("digest") else got


def simulate(task: Task) -> Outcome:
    """Replay the task's trail, descend (up to `attempts` times) and, unless
    `task.evaluate` is false, measure the fixed candidate on the task's
    backend. Never raises for a failed kernel: that is the record's status."""
    from ..model import bound
    t0 = time.perf_counter()
    start, backend = _replayed(task)
    target = bound_target(backend)
    order = choice_order(task.order).rollout
    rng = random.Random(task.seed)
    best = math.inf if task.best_ns is None else task.best_ns

    def bound_fn(c):
        return bound(c, target).value_ns
    fixed, cause, depth, dead = None, None, 0, 0
    climbed = origin = None
    if task.climb > 0 and task.climb_from is not None:
        climbed = _climb_on(start, task, bound_fn, rng, order)
        if climbed is not None:  # else: a new descent, below
            origin, fixed = "measured", climbed.candidate
            depth = len(fixed.trail) - len(start.trail)
    for _ in range(0 if fixed is not None else task.attempts):
        d = descend(start, rng, order=order, backtrack=True, bound_fn=bound_fn, best_ns=best,
                    start_bound=task.start_bound_ns)
        fixed, cause, depth, dead = d.candidate, d.cause, d.depth, dead + d.retries
        if fixed is not None:
            break
    if climbed is not None:
        end_ns = climbed.bound_ns
    elif fixed is not None and task.climb > 0:
        climbed = climb(start, fixed, bound_fn, rng, steps=task.climb, order=order)
        origin = "descent"
        fixed, end_ns = climbed.candidate, climbed.bound_ns
    else:  # a weighted descent (a best is known) has bounded its end already
        end_ns = None if fixed is None else (d.bound_ns if math.isfinite(best)
                                             else bound_fn(fixed))
    if fixed is not None and hopeless(end_ns, best, task.timeout_s):
        fixed, cause = None, "model"
    if fixed is None:
        return Outcome(cause, depth, dead, worker=_worker(), rollout_s=time.perf_counter() - t0)
    rollout_s = time.perf_counter() - t0
    rec, eval_s = _measure(fixed, backend, task) if task.evaluate else (None, 0.0)
    # measured elsewhere (a GPU, one at a time): compiled here, in parallel
    built = None if task.evaluate or not hasattr(backend, "prebuild") else backend.prebuild(fixed)
    return Outcome(None, depth, dead, [d.to_dict() for d in fixed.trail], rec, built, _worker(),
                   rollout_s, eval_s,
                   None if climbed is None else {**climbed.to_dict(), "from": origin})


def evaluate_trail(task: Task) -> Outcome:
    """Replay a fixed trail and measure it (a worker's evaluation alone)."""
    cand, backend = _replayed(task)
    if not cand.is_fixed:
        raise WorkbenchError("evaluate_trail needs the trail of a fixed candidate")
    rec, seconds = _measure(cand, backend, task)
    return Outcome(trail=task.trail, record=rec, worker=_worker(), eval_s=seconds)


__all__ = ["Outcome", "Task", "backend_for", "evaluate_trail", "hopeless", "register_root",
           "root_for", "simulate"]
