"""Exhaustive branch and bound for small spaces (thesis §2.4): depth-first,
children in increasing order of their bound, a subtree cut as soon as its
bound reaches the best cost found. Since the bound is a lower bound of
every leaf below, the result is a proven optimum.

`brute_force_schedule` enumerates every valid schedule of a basic block
directly (no candidates, no bound) to check it.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

from ..candidate import Candidate
from ..orders import choice_order
from .tree import CAUSES, children


@dataclass
class BranchAndBound:
    best: Candidate | None
    best_cost: float
    nodes: int  # candidates visited
    leaves: int  # fixed candidates costed
    cuts: dict = field(default_factory=dict)  # cause → count
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        return {"best_cost": self.best_cost, "nodes": self.nodes, "leaves": self.leaves,
                "cuts": dict(self.cuts), "elapsed_s": self.elapsed_s,
                "best_trail": [d.to_dict() for d in self.best.trail] if self.best else None}


def branch_and_bound(root: Candidate, cost_fn, bound_fn=None, order="thesis",
                     incumbent: float = math.inf) -> BranchAndBound:
    """The fixed candidate of least `cost_fn` below `root`. `bound_fn`
    (default `wb.bound(c).value_ns`) must never exceed the cost of a leaf
    below its argument."""
    if bound_fn is None:
        from ..model import bound

        def bound_fn(c):
            return bound(c).value_ns
    order = choice_order(order).rollout
    t0 = time.perf_counter()
    res = BranchAndBound(None, incumbent, 0, 0, {c: 0 for c in CAUSES})

    def visit(cand: Candidate, b: float) -> None:
        res.nodes += 1
        if cand.is_fixed:
            res.leaves += 1
            cost = cost_fn(cand)
            if cost < res.best_cost:
                res.best, res.best_cost = cand, cost
            return
        got, dead = children(cand, order.next(cand))
        res.cuts["constraints"] += dead
        kids = sorted(((max(bound_fn(kid), b), v, kid) for v, kid in got),
                      key=lambda x: (x[0], x[1]))
        for kb, _, kid in kids:
            if kb >= res.best_cost:  # so are the rest: they are sorted
                res.cuts["model"] += 1
                continue
            visit(kid, kb)

    b0 = bound_fn(root)
    if b0 < res.best_cost:
        visit(root, b0)
    else:
        res.cuts["model"] += 1
    res.elapsed_s = time.perf_counter() - t0
    return res


def schedule_cost(cand: Candidate) -> float:
    """Execution time of a fixed basic-block candidate (eq. 2.4)."""
    block = cand.kernel
    return float(block.execution_time(block.schedule(cand)))


def brute_force_schedule(block) -> tuple[int, tuple, int]:
    """(best time, a best schedule, number of valid schedules) by trying
    every permutation that respects the dependencies."""
    names = [i.name for i in block.instructions()]
    best, arg, count = math.inf, None, 0
    for perm in itertools.permutations(names):
        pos = {n: k for k, n in enumerate(perm)}
        if any(pos[d] > pos[i.name] for i in block.instructions() for d in i.deps):
            continue
        count += 1
        t = block.execution_time(perm)
        if t < best:
            best, arg = t, perm
    return best, arg, count


__all__ = ["BranchAndBound", "branch_and_bound", "brute_force_schedule", "schedule_cost"]
