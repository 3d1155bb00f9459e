"""The five thesis kernels at sizes small enough to run every fixed candidate
on the CPU, and a helper that draws random fixed candidates in worker
processes (descents are the slow part; compiling is batched)."""

from __future__ import annotations

import os
import random
from concurrent.futures import ProcessPoolExecutor

import workbench as wb

SMALL = {
    "axpy": {"n": 256},
    "matmul": {"m": 16, "n": 16, "k": 8},
    "strided_matmul": {"m": 16, "n": 16, "k": 8, "stride": 4},
    "batched_matmul": {"b": 4, "m": 8, "n": 8, "k": 4},
    "reuse_matmul": {"b": 4, "m": 8, "n": 8, "k": 4},
}


def build(name: str):
    return getattr(wb.kernels, name)(**SMALL[name])


def _draw(args):
    from workbench.codegen import generate
    from workbench.descent import random_fixed
    name, seeds = args
    root = wb.Candidate.root(build(name))
    out = []
    for seed in seeds:
        cand = random_fixed(root, random.Random(seed))
        g = generate(cand, f"k_{name}_{seed}")
        out.append((seed, cand.to_json(), g.c, g.cuda, g.launch))
    return out


def fixed_candidates(name: str, count: int, seed0: int = 0) -> list:
    """(seed, candidate JSON, C source, CUDA source, launch) for `count` random
    fixed candidates, drawn by as many processes as there are CPUs."""
    workers = max(1, min(os.cpu_count() or 1, 8))
    seeds = list(range(seed0, seed0 + count))
    chunks = [(name, seeds[i::workers]) for i in range(workers)]
    if workers == 1:
        return _draw(chunks[0])
    with ProcessPoolExecutor(workers) as pool:
        return sorted((x for part in pool.map(_draw, chunks) for x in part), key=lambda x: x[0])
