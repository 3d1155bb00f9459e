"""Waits that the cache-hint intrinsics pin in order (fixed CUDA candidates).

The CUDA printer loads global memory with `__ldg`/`__ldca`/`__ldcg`/`__ldcv`
and stores it with `__stcg`/`__stwt` (`codegen.printer.prints_intrinsic`):
inline assembly nvcc keeps in program order. A warp
issues in order, so a store waits for the load whose value it writes, and
the loads after it issue only then: unrolled `load → store` pairs (a
communication through a global temporary, copy after copy) run one after
the other, one load latency each, where the rest of the model lets unrolled
copies overlap. Walking the implementation's tree in the printer's order,
one thread that runs every statement (thread 0: guards only drop work)
waits once at each pinned store whose value comes from a pinned load issued
since its previous wait, for that load's least latency (the model's
`latency`: `__ldca` and `__ldg` may hit L1; the others reach L2 at least).
A barrier forgets the loads before it (they may complete while the block
waits), and so would any other wait: this counts only what surely waits.
On the H200's 649 records the walk stays below every time and explains
most of the searches' slow kernels (`benchmarks/bench_pinned_pairs.py`,
docs/results.md)."""

from __future__ import annotations

from ..codegen.printer import prints_intrinsic
from ..codegen.tree import Barrier, Leaf
from ..space.values import DimKind


def pinned_waits(impl, latency) -> tuple[int, float, list]:
    """(waits, their cycles, the (load, store) pairs that wait) of one
    thread; `latency(inst)`: a load's least latency in cycles."""
    pairs: set = set()

    def leaf(inst, st: dict) -> tuple[int, float, dict]:
        if inst.op == "load" and prints_intrinsic(impl, inst):
            return 0, 0.0, {**st, inst.name: latency(inst)}
        if inst.op == "store" and prints_intrinsic(impl, inst):
            hit = [(st[o.source], o.source) for o in inst.operands
                   if o.kind == "inst" and o.source in st]
            if hit:
                lat, src = max(hit)
                pairs.add((src, inst.name))
                return 1, lat, {}
        return 0, 0.0, st

    def body(node, st: dict) -> tuple[int, float, dict]:
        w, c = 0, 0.0
        for child in node.children:
            if isinstance(child, Barrier):
                st = {}
                continue
            dw, dc, st = leaf(child.inst, st) if isinstance(child, Leaf) else loop(child, st)
            w, c = w + dw, c + dc
        return w, c, st

    def loop(lp, st: dict) -> tuple[int, float, dict]:
        if lp.kind not in (DimKind.LOOP, DimKind.UNROLL) or lp.size <= 1:
            return body(lp, st)  # one per thread (a vector access is one instruction)
        w, c = 0, 0.0
        for k in range(lp.size):
            dw, dc, after = body(lp, st)
            w, c = w + dw, c + dc
            if after == st:  # the same state in and out: every later iteration repeats it
                rest = lp.size - k - 1
                return w + rest * dw, c + rest * dc, after
            st = after
        return w, c, st

    waits, cycles, _ = body(impl.root, {})
    return waits, cycles, sorted(pairs)
