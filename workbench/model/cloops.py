"""The loops the CPU reference executor runs (`codegen.printer.Printer`),
counted on a fixed candidate for the loop-control term of the bound (thesis
eqs. 5.5, 5.16) on a CPU target: the C prints every sequential dimension as
a loop, wraps every region between barriers in loops over the threads of the
block, and runs the blocks as loops (the outermost one under OpenMP)."""

from __future__ import annotations

from ..codegen.tree import Barrier, Leaf, Loop
from ..space.values import DimKind


class _Walk:
    def __init__(self, impl, level: int, least: int):
        self.impl, self.level, self.least = impl, level, least
        self.out: dict = {}
        self.synced: set = set()  # loops that hold a barrier
        for b in impl.barriers:
            node = b.parent
            while node is not None:
                self.synced.add(node.id)
                node = node.parent

    def add(self, label, entries, trip, back=True) -> None:
        if trip >= self.least:
            it, tk = self.out.get(label, (0.0, 0.0))
            self.out[label] = (it + entries * trip, tk + (entries * (trip - 1) if back else 0))

    def inner(self, lp, e) -> None:
        """A loop inside a region: once per thread (a THREAD loop is the
        running thread's index, no C loop)."""
        if lp.kind != DimKind.THREAD:
            self.add(lp.rep.label, e, lp.size)
            e *= lp.size
        for ch in lp.children:
            if isinstance(ch, Loop):
                self.inner(ch, e)

    def flush(self, region: list, e) -> None:
        """One region, `e` times: loops over t_z, t_y, t_x around it."""
        if not region:
            return
        for h, n in reversed(list(zip("xyz", self.impl.block_dim))):
            if n > 1:
                self.add(f"threads t_{h}", e, n)
            e *= n
        for node in region:
            if isinstance(node, Loop):
                self.inner(node, e)
        region.clear()

    def outer(self, lp, e) -> None:
        """A loop that holds a barrier, or a block loop: once per block."""
        if lp.kind != DimKind.BLOCK:
            self.add(lp.rep.label, e, lp.size)
            e *= lp.size
        elif self.level >= 2:  # the OpenMP loop's iterations are split: no back-edge
            self.add(lp.rep.label, e, lp.size, back=lp.parent is not self.impl.root)
            e *= lp.size
        region: list = []
        self.sequence(lp, e, region)
        self.flush(region, e)

    def sequence(self, node, e, region: list) -> None:
        for ch in node.children:
            if isinstance(ch, Barrier):
                self.flush(region, e)
            elif isinstance(ch, Leaf) or (ch.id not in self.synced
                                          and ch.kind != DimKind.BLOCK):
                region.append(ch)
            elif ch.kind == DimKind.THREAD:
                self.sequence(ch, e, region)
            else:
                self.flush(region, e)
                self.outer(ch, e)


def c_loops(impl, level: int, least: int) -> dict:
    """{loop label: (iterations, taken back-edges)} of the reference C of
    `impl` per block (level 1) or in all (level 2), counting only loops of at
    least `least` iterations (the compiler may unroll shorter ones)."""
    w = _Walk(impl, level, least)
    region: list = []
    w.sequence(impl.root, 1, region)
    w.flush(region, 1)
    return w.out
