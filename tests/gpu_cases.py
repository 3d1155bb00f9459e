"""The five thesis kernels at sizes small enough to run every fixed candidate
on the CPU, and a helper that draws random fixed candidates in worker
processes (descents are the slow part; compiling is batched).

How many: `n_drawn()` per kernel — a few in `make test`, 200 with `--audit`.
The trails drawn are kept on disk (tests/.drawn/, keyed by the space file,
the kernel and the seed) so a second run replays them instead of
descending again; a trail the current engine no longer accepts is drawn
afresh."""

from __future__ import annotations

import hashlib
import json
import os
import random
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import workbench as wb
from workbench.kernels.linalg import SMALL_SIZES

SMALL = SMALL_SIZES
AUDIT = False  # set by conftest from --audit
QUICK_N, AUDIT_N = 8, 200
CACHE = Path(__file__).parent / ".drawn"


def n_drawn() -> int:
    """Random fixed candidates per kernel in this tier."""
    return AUDIT_N if AUDIT else QUICK_N


def examples(n: int) -> int:
    """Hypothesis examples for a law: n in make test, ten times n in make audit."""
    return 10 * n if AUDIT else n


def build(name: str):
    """The kernel (one object per process: its root and lowerings are shared
    by every test that builds it)."""
    return wb.kernels.build_kernel(name, SMALL[name])


BOUND_TARGETS = ("h200", "kepler_k4000", "cpu_reference")


def _cache_file(name: str) -> Path:
    import workbench.space
    space = Path(workbench.space.__file__).parent / "spaces" / "gpu.space"
    key = json.dumps([build(name).spec(), space.read_text()], sort_keys=True)
    return CACHE / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def _replayed(root, trail):
    """[root, …, fixed] along a cached trail, or None if the engine refuses it."""
    path = [root]
    try:
        for d in trail:
            values = [d["value"]] if "value" in d else d["values"]
            path.append(path[-1].restrict(d["choice"], tuple(d["objects"]), values))
    except wb.WorkbenchError:
        return None
    return path if path[-1].is_fixed else None


def _draw(args):
    from workbench.codegen import generate
    from workbench.model.audit import bounds_along, descent_with_bounds
    from workbench.runtime import evaluate
    name, seeds, cached = args
    root = wb.Candidate.root(build(name))
    out, fixed = [], []
    for seed in seeds:
        # the bound along the descent: (raw, shown) per step and target
        path = _replayed(root, cached[str(seed)]) if str(seed) in cached else None
        if path is None:
            cand, bounds = descent_with_bounds(root, random.Random(seed), BOUND_TARGETS)
        else:
            cand, bounds = path[-1], bounds_along(path, BOUND_TARGETS)
        g = generate(cand, f"k_{name}_{seed}")
        out.append((seed, cand.to_json(), g.c, g.cuda, g.launch, bounds))
        fixed.append(cand)
    # measured on the CPU backend here, where the candidates live: a replay
    # elsewhere would pay for every lowered problem again
    records = evaluate(fixed, "cpu", store=None)
    return list(zip(out, records))


_DRAWN: dict = {}


def _drawn(name: str, count: int, seed0: int) -> list:
    key = (name, count, seed0)
    if key not in _DRAWN:
        file = _cache_file(name)
        try:
            cached = json.loads(file.read_text())
        except (OSError, ValueError):
            cached = {}
        workers = max(1, min(os.cpu_count() or 1, 8, count))
        if not AUDIT and os.environ.get("PYTEST_XDIST_WORKER"):
            # the xdist workers already fill the cores, and a process of its
            # own builds every problem again: test_drawn.py alone took 182 s
            # of CPU with 2 processes against 136 s in its own (same wall
            # time with the other core busy); the audit's 200 per kernel
            # keep the processes (its draw is that worker's critical path)
            workers = 1
        seeds = list(range(seed0, seed0 + count))
        chunks = [(name, seeds[i::workers], cached) for i in range(workers)]
        if workers == 1:
            got = _draw(chunks[0])
        else:
            with ProcessPoolExecutor(workers) as pool:
                got = [x for part in pool.map(_draw, chunks) for x in part]
        _DRAWN[key] = sorted(got, key=lambda x: x[0][0])
        for (seed, cand_json, *_), _rec in got:
            cached[str(seed)] = json.loads(cand_json)["trail"]
        CACHE.mkdir(exist_ok=True)
        file.write_text(json.dumps(cached))
    return _DRAWN[key]


def fixed_candidates(name: str, count: int, seed0: int = 0) -> list:
    """(seed, candidate JSON, C source, CUDA source, launch, bounds along the
    descent per target) for `count` random fixed candidates, drawn by as many
    processes as there are CPUs (by the xdist worker itself in `make test`);
    kept for the session (several test modules
    check the same candidates)."""
    return [c for c, _ in _drawn(name, count, seed0)]


def cpu_records(name: str, count: int, seed0: int = 0) -> list:
    """The CPU backend's record of each of those candidates, in seed order."""
    return [r for _, r in _drawn(name, count, seed0)]
