"""The five thesis kernels at sizes small enough to run every fixed candidate
on the CPU, and a helper that draws random fixed candidates in worker
processes (descents are the slow part; compiling is batched)."""

from __future__ import annotations

import os
import random
from concurrent.futures import ProcessPoolExecutor

import workbench as wb
from workbench.kernels.linalg import SMALL_SIZES

SMALL = SMALL_SIZES


def build(name: str):
    return getattr(wb.kernels, name)(**SMALL[name])


BOUND_TARGETS = ("h200", "kepler_k4000", "cpu_reference")


def _draw(args):
    from workbench.codegen import generate
    from workbench.model.audit import descent_with_bounds
    from workbench.runtime import evaluate
    name, seeds = args
    root = wb.Candidate.root(build(name))
    out, fixed = [], []
    for seed in seeds:
        # the bound along the descent: (raw, shown) per step and target
        cand, path = descent_with_bounds(root, random.Random(seed), BOUND_TARGETS)
        g = generate(cand, f"k_{name}_{seed}")
        out.append((seed, cand.to_json(), g.c, g.cuda, g.launch, path))
        fixed.append(cand)
    # measured on the CPU backend here, where the candidates live: a replay
    # elsewhere would pay for every lowered problem again
    records = evaluate(fixed, "cpu", store=None)
    return list(zip(out, records))


_DRAWN: dict = {}


def _drawn(name: str, count: int, seed0: int) -> list:
    key = (name, count, seed0)
    if key not in _DRAWN:
        workers = max(1, min(os.cpu_count() or 1, 8))
        seeds = list(range(seed0, seed0 + count))
        chunks = [(name, seeds[i::workers]) for i in range(workers)]
        if workers == 1:
            got = _draw(chunks[0])
        else:
            with ProcessPoolExecutor(workers) as pool:
                got = [x for part in pool.map(_draw, chunks) for x in part]
        _DRAWN[key] = sorted(got, key=lambda x: x[0][0])
    return _DRAWN[key]


def fixed_candidates(name: str, count: int, seed0: int = 0) -> list:
    """(seed, candidate JSON, C source, CUDA source, launch, bounds along the
    descent per target) for `count` random fixed candidates, drawn by as many
    processes as there are CPUs; kept for the session (several test modules
    check the same candidates)."""
    return [c for c, _ in _drawn(name, count, seed0)]


def cpu_records(name: str, count: int, seed0: int = 0) -> list:
    """The CPU backend's record of each of those candidates, in seed order."""
    return [r for _, r in _drawn(name, count, seed0)]
