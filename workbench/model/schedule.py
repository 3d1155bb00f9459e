"""The optimistic model of partially specified basic-block schedules
(thesis §2.4): the chapter-2 bound, on the idealised in-order machine of
`kernels.basic_block` (one instruction issued per cycle; a cycle counts as
one nanosecond so that it reads like the GPU bounds).

The graph has an edge a → b of weight 1 when the domain surely orders a
before b (eq. 2.1–2.2) and of weight l(a) when b reads a (eq. 2.3). The
longest path plus the latency of its last instruction bounds every schedule
the domain licenses; on a fixed domain it is the execution time (eq. 2.4).
One more path is free: n instructions issue at n distinct cycles, so the last
issue is at n − 1 or later and the block ends at least min l later.
"""

from __future__ import annotations

import graphlib

from ..space.values import BASIC_BLOCK, BlockOrder, ensure_values
from .base import Bound, register_model
from .justification import Justification


def schedule_bound(cand):
    """Bound (in cycles = ns) of every schedule of a basic-block candidate."""
    ensure_values(cand.space, BASIC_BLOCK)
    block = cand.kernel
    insts = block.instructions()
    names = [i.name for i in insts]
    preds: dict[str, list] = {n: [] for n in names}
    for i in insts:
        for d in i.deps:
            preds[i.name].append((d, block.instruction(d).latency, "reads"))
    for a in names:
        for b in names:
            if a != b and cand.domain("order", (a, b)) == {BlockOrder.BEFORE}:
                preds[b].append((a, 1, "before"))
    start: dict[str, int] = {}
    why: dict[str, tuple] = {}
    for n in graphlib.TopologicalSorter({n: [p for p, _, _ in preds[n]] for n in names}
                                        ).static_order():
        start[n], why[n] = 0, None
        for p, w, kind in preds[n]:
            if start[p] + w > start[n]:
                start[n], why[n] = start[p] + w, (p, kind)
    end = {n: start[n] + block.instruction(n).latency for n in names}
    last = max(names, key=lambda n: (end[n], n))
    path, n = [], last
    while n is not None:
        path.append(n)
        n = why[n][0] if why[n] else None
    path.reverse()
    steps = [Justification("Dependency", float(end[p]),
                           f"{p} starts at cycle {start[p]}"
                           + (f" ({why[p][1]} {why[p][0]})" if why[p] else ""),
                           {"instruction": p, "start": start[p], "end": end[p]})
             for p in path]
    chain = Justification("Chain", float(end[last]),
                          f"longest path {' → '.join(path)} ends at cycle {end[last]}",
                          {"path": path}, steps)
    issue = len(names) - 1 + min(i.latency for i in insts)
    slots = Justification("Usage", float(issue),
                          f"{len(names)} instructions issue one per cycle: the last at cycle "
                          f"{len(names) - 1} or later, finishing ≥ {issue}",
                          {"instructions": len(names)})
    value = max(end[last], issue)
    top = chain if end[last] >= issue else slots
    just = Justification("Bound", float(value), f"{value} cycles: {top.text}", {},
                         [top, slots if top is chain else chain])
    for node in just.walk():  # they print as cycles, not ns
        node.fields["unit"] = "cycles"
    return Bound(float(value), float(value), just, "basic_block (cycles)", {}, frozenset())


def _model(cand, target=None, parent: Bound | None = None, override: dict | None = None
           ) -> Bound:
    """`schedule_bound` as a registered model: the machine is the idealised
    one (no override; a target is checked to exist, then not read: a
    misspelt name is an error, not an answer); never below the parent's."""
    if target is not None:
        from ..target import load_target
        load_target(target)
    b = schedule_bound(cand)
    if parent is not None and b.raw_ns < parent.value_ns:
        b.value_ns = parent.value_ns
    return b


register_model("basic_block", _model)

__all__ = ["schedule_bound"]
