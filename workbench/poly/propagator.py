"""The fusion conflict graph as an optional extra propagator of the GPU
decision space: `order(a, b) = MERGED` fuses dimension a of its instructions
with dimension b of theirs, so it is removed where the FCG has an edge
between the two (statement, logical dimension) vertices.

Sound by construction only where a merge cannot be harmless: dimensions
that may have size 1 are skipped (two one-iteration loops merge whatever the
dependences say). Use: `Candidate.root(kernel, prune=fcg_prune)`; each
removal shows in `pruned()` with the dependence that forbids it."""

from __future__ import annotations

from ..kernels import require_loop_nest
from ..space.values import Order
from .fcg import kernel_fcg


def fcg_prune(kernel) -> list:
    """[("order", (a, b), ("MERGED",), reason)] for every pair of dimensions
    the fusion conflict graph proves unfusable."""
    require_loop_nest(kernel, "the fusion conflict graph (--fcg)")
    prog, g = kernel_fcg(kernel)
    insts = [i for i in kernel.instructions() if i.name in prog.statements]
    owners = {}
    for inst in insts:
        for d in inst.dims:
            owners.setdefault(d.name, []).append(inst)
    dims = [d for d in kernel.dims() if d.name in owners]
    out = []
    for ka, a in enumerate(dims):
        if 1 in a.possible_sizes():
            continue
        for b in dims[ka + 1:]:
            if 1 in b.possible_sizes():
                continue
            why = _conflict(g, prog, owners[a.name], a, owners[b.name], b)
            if why:
                out.append(("order", (a.name, b.name), (Order.MERGED.value,), why))
    return out


def _conflict(g, prog, sa, a, sb, b) -> str:
    for s in sa:
        for t in sb:
            if s is t:
                continue
            i = prog.statements[s.name].dims.index(a.logical.name)
            j = prog.statements[t.name].dims.index(b.logical.name)
            if g.conflict((s.name, i), (t.name, j)):
                return (f"fusion conflict graph: {s.name}.{a.logical.name} and "
                        f"{t.name}.{b.logical.name} cannot be fused "
                        f"({g.why((s.name, i), (t.name, j))})")
    return ""


__all__ = ["fcg_prune"]
