"""Auditing the bound along random descents: the bound of every candidate
on the way from the root to a fixed candidate, for several targets, with
each step's raw model value and the value shown (never below the parent's).
Used by the tests and by `benchmarks/bound_descents.py`."""

from __future__ import annotations

import random

from ..descent import descend
from .bound import bound


def descent_with_bounds(root, rng: random.Random, targets, attempts: int = 50):
    """(fixed candidate, {target: [(raw_ns, shown_ns) per step]}) of one
    random descent with backtracking (restarted after a dead end)."""
    for _ in range(attempts):
        d = descend(root, rng, backtrack=True, keep_path=True)
        if d.candidate is not None:
            break
    else:
        raise d.dead_end
    return d.candidate, bounds_along(d.path, targets)


def bounds_along(path, targets) -> dict:
    """{target: [(raw_ns, shown_ns) per candidate of `path`]}, each bound
    given its parent's (the shown value never drops)."""
    out = {}
    for t in targets:
        parent, steps = None, []
        for c in path:
            parent = bound(c, t, parent=parent)
            steps.append((parent.raw_ns, parent.value_ns))
        out[t] = steps
    return out


def dips(path: dict) -> tuple[int, int]:
    """(steps where the raw model fell below an ancestor's bound, steps)."""
    n = sum(r < v for seq in path.values() for r, v in seq)
    return n, sum(len(seq) for seq in path.values())


def roofline_ns(kernel, hw) -> float:
    """max(FMAs / peak FMA rate, touched bytes / peak bandwidth of the level
    compulsory traffic crosses), from the kernel's sizes alone: the check the
    model must pass without sharing its code."""
    fmas = 0
    for i in kernel.instructions():
        if i.op in ("fma", "mul", "add"):
            n = 1
            for ld in {d.logical for d in i.dims}:
                n *= ld.size
            fmas += n
    touched = 0
    for a in kernel.arrays():
        if a.temporary:
            continue
        elems = 0
        for i in kernel.instructions():
            if i.array is a:
                n = 1
                for ld in {d.logical for d in i.dims}:
                    n *= ld.size
                elems = max(elems, n)
        touched += 4 * elems
    g = hw.resources["gpu"]
    return max(fmas / g["fma"], touched / g[hw.compulsory_level]) / hw.clock_ghz
