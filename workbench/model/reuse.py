"""Register reuse against parallelism: one joint term of the GPU bound.

The thesis's model bounds each resource with every count at its own minimum
over the open choices (§5.1.2, eq. 5.15), so two counts that one choice moves
in opposite directions are each taken at their best, as if both could be.
The sizes of an arithmetic instruction's dimensions are such a choice. The
sizes left to sequential dimensions (LOOP, UNROLL) make a thread's *box* of
points: a thread that computes a box of a matmul's m × n × k needs in its
registers every element of A and B the box touches, and only a load it runs
itself can put one there (a register is private to its thread, and this
space has no warp shuffle), at most four elements a load (float4), and one
unless the load may be vectorised (`_widest`). The sizes
left to THREAD and BLOCK dimensions make the threads. Few threads with large
boxes issue few loads, but a thread issues at most its `issue` rate per
cycle; many threads with small boxes issue many loads. Every implementation
takes one split, so the least over the splits the open sizes and kinds allow
of the larger of (a) the whole kernel's issue (the other statements at their
own minimum) over the GPU's issue rate and (b) one thread's issue over a
thread's rate is a lower bound; the usage terms alone give the best of both
at once. At the root of matmul 1024 on h200 it raises the bound from the
FMA issue alone (63,550 cycles) to 69,508: threads of 8 × 4 points with
(8 + 4) × 1,024 / 4 loads each. Thread 0 runs every instruction, so its
issue also holds the global loads and stores of the other statements along
their surely sequential own dimensions (`thread_zero_accesses`), and an
operand's load at least as often as its own sequential loops give it, when
that is more than its box needs (`thread_zero_count`).

Counted only where sound: an arithmetic instruction with no VECTOR
dimension (a thread runs each point once, one instruction a point), operands
whose values come straight from a load in the instruction's own dimensions —
a pair of the operand or, after a lowering, the load from the temporary — and
whose addresses are distinct for distinct points (a compiler may merge two
loads of one address); the sizes of one nest's levels of a logical dimension
multiply to its size. GPU targets only: the CPU reference runs a block's
threads as loops of one core, so a thread's issue does not bound it.
"""

from __future__ import annotations

import functools
import itertools
import math

from ..space.values import DimKind, DimMap
from .facts import ARITH, PARALLEL, SEQUENTIAL, VECTOR_MAX
from .facts import _nest_of as nest_of
from .justification import Justification, fmt_amount, fmt_count
from .memory import may_merge

SPLITS_MAX = 20_000  # size tuples × kind splits enumerated per instruction


def operand_reuse(model, issue: dict) -> Justification | None:
    """The term (a Reuse node at the GPU level, in ns) for the instruction
    where it is largest, or None. `issue`: {statement: instructions} of the
    GPU level's issue usage, every statement at its own minimum."""
    hw = model.hw
    r_gpu, r_thread = hw.rate("gpu", "issue"), hw.rate("thread", "issue")
    if hw.runs != "cuda" or not r_gpu or not r_thread:
        return None
    best = None
    for s in model.insts:
        if s.op in ARITH:
            got = _split_term(model, s, issue, r_gpu, r_thread)
            if got is not None and (best is None or got.value_ns > best.value_ns):
                best = got
    return best


def loaded_operands(kernel, s) -> dict:
    """{load: the dimensions of `s` along which its values differ} for the
    operands of `s` that a load in the dimensions of `s` provides at
    addresses distinct for distinct points."""
    out: dict = {}
    for o in s.operands:
        if o.kind != "inst":
            continue
        src = kernel.instruction(o.source)
        if src.op != "load":
            continue
        # a pair maps the load's point to the consumer's; after a lowering
        # the consumer reads the temporary in its own dimensions
        dims = [b for _, b in o.pairs] if o.pairs else list(src.dims)
        if not dims or not all(d in s.dims for d in dims):
            continue
        # a temporary holds one element per point
        if not src.array.temporary and not _distinct_addresses(src.array, dims):
            continue
        out.setdefault(src.name, set()).update(dims)
    return out


def _distinct_addresses(array, dims) -> bool:
    """Distinct points along `dims` (their logical dimensions) address
    distinct elements of `array`: every stride is nonzero and `_distinct`."""
    strides = array.strides
    return all(strides.get(d.logical.name) for d in dims) and _distinct(
        [(abs(strides[d.logical.name]), d.logical.size)
         for d in {d.logical: d for d in dims}.values()])


def _distinct(axes) -> bool:
    """Mixed radix: (stride, extent) axes give distinct addresses when each
    stride is at least the span of the smaller ones."""
    span = 0
    for stride, extent in sorted(axes):
        if stride <= span:
            return False
        span += stride * (extent - 1)
    return True


def _widest(f, load) -> int:
    """Values one instance of `load` (or store) may move: the neighbours its
    thread's code may hold in one place — the largest sizes of its
    dimensions that may be VECTOR, or UNROLL where the compiler may merge
    the unrolled accesses (`memory.may_merge`: never intrinsics) — at
    most VECTOR_MAX (float4),
    as `_Model.own_count` caps its merges."""
    width = 1
    for d in load.dims:
        kinds = f.kinds(d)
        if DimKind.VECTOR in kinds or DimKind.UNROLL in kinds and may_merge(f, load, d):
            width *= f.sizes(d)[-1]
            if width >= VECTOR_MAX:
                return VECTOR_MAX
    return width


def _splits(f, dims, src_dims: list, full: int | None) -> frozenset | None:
    """The (points of a thread, threads, points of each load's operand)
    that the open sizes and kinds of `dims` (one logical dimension's levels
    in `s`) allow; `full`: the size their product must have (all the levels
    of one nest), else None. None past SPLITS_MAX."""
    return _splits_of(tuple(f.sizes(d) for d in dims), tuple(f.kinds(d) for d in dims),
                      tuple(tuple(d in ds for d in dims) for ds in src_dims), full)


@functools.lru_cache(maxsize=4096)
def _splits_of(sizes: tuple, kinds: tuple, member: tuple, full: int | None) -> frozenset | None:
    """`_splits` on plain values (the same domains recur in every look-ahead)."""
    if math.prod(len(x) for x in sizes) << len(sizes) > SPLITS_MAX:
        return None
    out = set()
    for tup in itertools.product(*sizes):
        if full is not None and math.prod(tup) != full:
            continue
        for seq in itertools.product((True, False), repeat=len(tup)):
            if any(n > 1 and not (k & (SEQUENTIAL if q else PARALLEL))
                   for n, k, q in zip(tup, kinds, seq)):
                continue
            pts = math.prod(n for n, q in zip(tup, seq) if q)
            thr = math.prod(n for n, q in zip(tup, seq) if not q)
            per_src = tuple(math.prod(n for n, q, m in zip(tup, seq, ms) if q and m)
                            for ms in member)
            out.add((pts, thr, per_src))
    return frozenset(out)


def _split_term(model, s, issue: dict, r_gpu: float, r_thread: float) -> Justification | None:
    f, hw = model.f, model.hw
    if any(DimKind.VECTOR in f.kinds(d) for d in s.dims):
        return None
    srcs = loaded_operands(model.k, s)
    if not srcs:
        return None
    # a communication that may still go through memory may end up read from
    # a temporary in the dimensions of `s`, whose loads may be vectorised
    lowerable = {o.source for o in s.operands if o.kind == "inst" and any(
        DimMap.MEMORY in f.dom("dim_map", a, b) for a, b in o.pairs)}
    names, src_dims = list(srcs), list(srcs.values())
    widths = [VECTOR_MAX if n in lowerable else _widest(f, model.k.instruction(n))
              for n in names]
    per_logical: list = []
    for ld in dict.fromkeys(d.logical for d in s.dims):
        dims = [d for d in s.dims if d.logical is ld]
        nest = [e for e in nest_of(dims[0]) if e.logical is ld]
        got = _splits(f, dims, src_dims, ld.size if set(nest) == set(dims) else None)
        if not got:
            return None
        per_logical.append(got)
    if math.prod(len(x) for x in per_logical) > SPLITS_MAX:
        return None
    other = sum(v for k, v in issue.items() if k != s.name and k not in srcs)
    beside = thread_zero_accesses(model, skip={s.name, *srcs})
    # thread 0 issues an operand's load at least for its own box as well
    own = [thread_zero_count(model, model.k.instruction(n)) for n in names]
    best = None
    for combo in itertools.product(*per_logical):
        pts = math.prod(c[0] for c in combo)
        thr = math.prod(c[1] for c in combo)
        loads = [math.prod(c[2][j] for c in combo) / widths[j] for j in range(len(names))]
        per_thread = pts + sum(max(x, o) for x, o in zip(loads, own)) + beside
        total = (other + max(issue.get(s.name, 0.0), thr * pts)
                 + sum(max(issue.get(n, 0.0), thr * x) for n, x in zip(names, loads)))
        cycles = max(total / r_gpu, per_thread / r_thread)
        if best is None or cycles < best[0]:
            best = (cycles, pts, thr, loads, total, per_thread)
    cycles, pts, thr, loads, total, per_thread = best
    ops = ", ".join(f"{n} {fmt_count(x)} ({w} values a load)" if x >= o
                    else f"{n} {fmt_count(o)} (its own loops in thread 0)"
                    for n, x, w, o in zip(names, loads, widths, own))
    text = (f"{s.name} against its threads at the GPU level: at best {thr:,} threads of "
            f"{pts:,} points, each loading its own operands ({ops})"
            + (f", thread 0 also {fmt_count(beside)} accesses along other statements' own "
               "loops" if beside else "")
            + f" — {fmt_amount(total, 'instructions')} in all at "
            f"{fmt_count(r_gpu)} per cycle, {fmt_count(per_thread)} in one thread at "
            f"{fmt_count(r_thread)} per "
            "cycle; "
            "larger boxes would cost a thread more, smaller ones more loads")
    return Justification("Reuse", hw.ns(cycles), text,
                         {"level": "gpu", "resource": "issue", "statement": s.name,
                          "threads": thr, "points_per_thread": pts,
                          "loads_per_thread": dict(zip(names, loads)),
                          "own_loads_thread_zero": dict(zip(names, own)),
                          "accesses_beside": beside,
                          "instructions": total, "cycles": cycles})


def thread_zero_accesses(model, skip=()) -> float:
    """Global loads and stores that thread 0 of block 0 surely issues (the
    sum of `thread_zero_count`), statements in `skip` left out."""
    return sum(thread_zero_count(model, t) for t in model.insts if t.name not in skip)


def thread_zero_count(model, t) -> float:
    """Instances of the global access `t` that thread 0 of block 0 surely
    issues; 0 for any other statement. Thread 0 runs every instruction (a
    guard keeps `tid < n` or `tid == 0`, codegen.tree.guard), once for each
    point of its surely sequential own dimensions, whatever the rest
    becomes: at least the product of their least sizes, over the widest
    access when its instances may be merged (`_widest`). Only accesses to
    the kernel's own arrays at distinct addresses count: one to a temporary
    in registers is no instruction, and a compiler may merge two accesses
    to one address. (Foreign loops do not count: an invariant load may be
    hoisted out of them.)"""
    if not t.is_mem() or t.array is None or t.array.temporary:
        return 0.0
    f = model.f
    seq = [d for d in t.dims if f.kinds(d) and f.kinds(d) <= {DimKind.LOOP, DimKind.UNROLL}]
    if not seq or not _distinct_addresses(t.array, t.dims):
        return 0.0
    return max(1.0, f.size_min(seq) / _widest(f, t))


__all__ = ["loaded_operands", "operand_reuse", "thread_zero_accesses", "thread_zero_count"]
