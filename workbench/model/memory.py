"""Ad hoc lower bounds for memory accesses (thesis §5.3.2): latency, sectors
and wavefronts per warp access, and the compulsory bytes of a kernel.

With open choices each number is the minimum over what remains (a warp may
still broadcast one address: one sector, one wavefront). Once the thread
mapping of an access is fixed, the lanes of every warp of a block are laid
out as the generated code lays them (x fastest, guards included) and the
minimum over warps is taken; addresses are only known up to a base offset,
so global sectors count a cover by 32-byte windows of any alignment, which
no aligned layout can beat. An access needs less than a fixed candidate:
once the block's layout (`thread_layout`) and what the access's own
addresses and width depend on are settled, every implementation below
lays its warps out alike (`settled_costs`), whatever stays open.
"""

from __future__ import annotations

import math

import numpy as np

from ..codegen.printer import PINNED_STORES, prints_intrinsic
from ..codegen.tree import HW, array_steps, hardware_groups, temp_pairs, temp_steps
from ..errors import WorkbenchError
from ..space.values import Cache, DimKind, MemSpace, Order, Padding
from .facts import VECTOR_MAX, merges_along
from .hardware import Hardware

_OFFSETS_MAX = 1 << 16  # unrolled copies of one access enumerated by merge_widths
_WIDTHS = tuple(1 << i for i in range(VECTOR_MAX.bit_length()))  # 1, 2, 4: scalar to float4


def load_latency(facts, hw: Hardware, inst) -> float:
    """Minimal latency of a load over its remaining memory space and cache."""
    lat = hw.latency
    a = inst.array
    spaces = facts.dom("mem_space", a) if a is not None else {MemSpace.GLOBAL}
    best = math.inf
    if MemSpace.SHARED in spaces:
        best = lat["load_shared"]
    if MemSpace.GLOBAL in spaces:
        for c in facts.dom("cache", inst):
            best = min(best, lat[_cache_level(hw, c)])
    return best


def _cache_level(hw: Hardware, cache) -> str:
    """The latency a global load with this directive gets on `hw`: compute
    capability 3.0 (Kepler GK10x, the thesis's K4000) caches global loads in
    L2 only and has no read-only data cache (`__ldg` needs 3.5), so every
    global load there is an L2 access (CUDA C Programming Guide, cc 3.x
    global memory)."""
    if cache == Cache.L1:
        return "load_l1" if hw.global_l1 else "load_l2"
    if cache == Cache.READ_ONLY:
        return "load_readonly" if hw.readonly_path else "load_l2"
    return "load_l2"


def bypasses_l1(facts, inst, hw: Hardware | None = None) -> bool:
    """Every remaining implementation sends this access to L2 (stores always
    write through to L2; loads whose cache directive skips L1, and every
    global load on a target without L1 caching of globals)."""
    a = inst.array
    if a is not None and MemSpace.SHARED in facts.dom("mem_space", a):
        return False
    if inst.op == "store":
        return True
    if hw is not None:
        return all(_cache_level(hw, c) == "load_l2" for c in facts.dom("cache", inst))
    return not (facts.dom("cache", inst) & {Cache.L1, Cache.READ_ONLY})


def asm_access(facts, inst) -> bool:
    """Every remaining implementation prints `inst` as an inline-assembly
    intrinsic (`codegen.printer.prints_intrinsic`): a load of
    global memory (`__ldg`, `__ldca`, `__ldcg`: `asm volatile` in CUDA 13's
    sm_32_intrinsics.hpp; `__ldcv`: `asm` with a memory clobber), or a store
    to it whose every remaining cache directive has one. nvcc runs such an
    access where it is written: it neither sinks it under a guard nor
    merges unrolled copies of it into wider accesses (only a VECTOR
    dimension, printed as one float2/float4 intrinsic, widens it)."""
    a = inst.array
    if not inst.is_mem() or a is None or MemSpace.SHARED in facts.dom("mem_space", a):
        return False
    return inst.op == "load" or facts.dom("cache", inst) <= PINNED_STORES


def may_merge(facts, inst, d) -> bool:
    """The compiler may merge unrolled copies of `inst` along `d`
    (`facts.merges_along`), unless it is an intrinsic (`asm_access`)."""
    return merges_along(inst, d) and not asm_access(facts, inst)


def surely_shared(facts, inst) -> bool:
    a = inst.array
    return a is not None and facts.dom("mem_space", a) == {MemSpace.SHARED}


def element_bytes(inst, hw: Hardware) -> int:
    """Bytes an element costs in DRAM/L2: a whole sector when every stride
    puts consecutive elements in different sectors."""
    strides = [abs(s) for s in inst.array.strides.values() if s]
    if strides and min(strides) * 4 >= hw.sector_bytes:
        return hw.sector_bytes
    return 4


def compulsory_bytes(kernel, hw: Hardware) -> dict:
    """Bytes that must cross the level below the caches: every element of an
    input that some load reads and of an output that some store writes, once.
    Per array, the largest access (loads of one array read the same data)."""
    out: dict = {}
    for i in kernel.instructions():
        a = i.array
        if a is None or a.temporary:
            continue
        elems = i.points()
        out[a.name] = max(out.get(a.name, 0), elems * element_bytes(i, hw))
    return out


def merge_widths(impl, inst) -> list[int]:
    """The widths (values one lane's access moves at once) the compiler may
    give an access of `inst` in a fixed implementation: multiples of its
    VECTOR size v up to VECTOR_MAX (float4) that fit in a run of
    consecutive addresses among the lane's unrolled copies (PTX
    `ld.shared.v4` from four scalar reads of a temporary, for instance).
    The copies' offsets are enumerated over every UNROLL and VECTOR
    dimension (an unroll holds at most a few hundred copies), so a run made
    by two dimensions together (steps 3 and 4: offsets 3 and 4) counts too;
    a negative step mirrors the set, which keeps its runs. LOOP dimensions
    are printed `#pragma unroll 1`: no merge crosses them."""
    vec = impl.vector_size(inst)
    if prints_intrinsic(impl, inst):
        return [vec]  # an intrinsic (`asm_access`): nvcc does not merge its copies
    return _widths(vec, [(impl.size[d.name], c) for d, c in impl.coefficients(inst)
                         if impl.kind[d.name] in (DimKind.UNROLL, DimKind.VECTOR)])


def _widths(vec: int, unrolled) -> list[int]:
    """`merge_widths` from the access's VECTOR size and the (size, step) of
    its UNROLL and VECTOR dimensions."""
    offsets = np.zeros(1, dtype=np.int64)
    for size, c in unrolled:
        if c and size > 1:
            if offsets.size * size > _OFFSETS_MAX:  # cannot happen within the unroll limit
                return [w for w in _WIDTHS if w >= vec and w % vec == 0]
            offsets = np.unique((offsets[:, None] + abs(c) * np.arange(size)).ravel())
    run = longest = 1
    for a, b in zip(offsets[:-1], offsets[1:]):
        run = run + 1 if b == a + 1 else 1
        longest = max(longest, run)
    return [w for w in _WIDTHS if vec <= w <= longest and w % vec == 0] or [vec]


def warp_access(impl, inst, hw: Hardware, width: int | None = None) -> tuple[float, float]:
    """(sectors, wavefronts) of the warp accesses of `inst` in a fixed
    implementation, each lane moving `width` consecutive elements (its
    VECTOR size if None): the minimum over the warps of a block."""
    coef = {d.name: c for d, c in impl.coefficients(inst)}
    steps = {h: sum(coef.get(d.name, 0) for d in lp.dims)
             for h, lp in impl.thread_loops(inst).items()}
    shared = inst.array.temporary and impl.mem_space[inst.array.name] == MemSpace.SHARED
    return warp_cost(impl.block_dim, steps, impl.guard(inst), width or impl.vector_size(inst),
                     shared, hw)


def thread_layout(facts, kernel) -> tuple | None:
    """(block_dim, {dimension name: hardware dim}) that every implementation
    below the candidate has, laid out as the code generator lays it
    (`codegen.tree.hardware_groups`); None while a choice it depends on is
    open: a dimension that may or may not be a THREAD, a THREAD's size, or
    the `thread_mapping` of two THREADs. The code groups its loops (classes
    of merged dimensions) by MAPPED; merged THREADs are MAPPED (gpu.space),
    so grouping the dimensions themselves gives the same hardware dims
    whichever merges follow. Lowerings add instructions, never dimensions:
    no later decision adds a thread."""
    threads = []
    for d in kernel.dims():
        kinds = facts.kinds(d)
        if DimKind.THREAD in kinds:
            if kinds != {DimKind.THREAD} or len(facts.sizes(d)) != 1:
                return None
            threads.append(d)
    rel = {}
    for i, a in enumerate(threads):
        for b in threads[i + 1:]:
            for x, y in ((a, b), (b, a)):
                dom = facts.dom("thread_mapping", x, y)
                if len(dom) != 1:
                    return None
                rel[(x.name, y.name)] = next(iter(dom))
    try:
        groups = hardware_groups(threads, lambda x, y: rel[(x.name, y.name)],
                                 lambda d: facts.sizes(d)[0])
    except WorkbenchError:  # more than three hardware dims: no implementation
        return None
    block_dim = [facts.sizes(g[0])[0] for g in groups] + [1] * (3 - len(groups))
    return block_dim, {d.name: HW[h] for h, g in enumerate(groups) for d in g}


def settled_costs(facts, layout, inst, hw: Hardware) -> list[tuple] | None:
    """[(width, sectors, wavefronts)] of an access before the candidate is
    fixed, one per width the compiler may give it (`merge_widths`), once
    everything its warps depend on is settled, so that every implementation
    below runs them alike; None before. That is: the block's `layout`
    (`thread_layout`); the sizes of its own dimensions and which of them
    are UNROLL or VECTOR; for a temporary, its memory space and the layout
    the code gives it (`codegen.tree.temp_pairs`: which pairs are BLOCK or
    fused, the VECTOR pair innermost) — while its `padding` is open, the
    costs of both layouts, the least of which the bound takes —; for a
    store, its cache directive
    (an intrinsic or a plain store the compiler may widen). A load runs in
    every thread; a store only along the hardware dims its own THREADs take
    (`codegen.tree.guard`: MAPPED THREADs have equal sizes, so no narrower
    guard)."""
    a = inst.array
    if layout is None or a is None or not inst.is_mem():
        return None
    block_dim, hw_of = layout
    own = _own_widths(facts, inst)
    spaces = facts.dom("mem_space", a) if a.temporary else {MemSpace.GLOBAL}
    if own is None or len(spaces) != 1:
        return None
    vec, unrolled_dims = own
    shared = MemSpace.SHARED in spaces
    if a.temporary:  # each padding left: every implementation below has one of them
        layouts = [_temp_steps(facts, inst, p == Padding.ROWS)
                   for p in sorted(facts.dom("padding", a))]
    else:
        layouts = [array_steps(inst, lambda e: facts.sizes(e)[0])]
    intrinsic = False if shared else True if inst.op == "load" else \
        _settled_intrinsic(facts.dom("cache", inst))
    if None in layouts or intrinsic is None:
        return None
    guards = []
    if inst.op == "store":
        taken = {hw_of[d.name] for d in inst.dims if d.name in hw_of}
        guards = [(h, "==", 0) for h, n in zip(HW, block_dim) if h not in taken and n > 1]
    out = []
    for steps in layouts:
        by_hw: dict = {}
        for d, c in steps:
            h = hw_of.get(d.name)
            if h is not None:
                by_hw[h] = by_hw.get(h, 0) + c
        step_of = {d.name: c for d, c in steps}
        widths = [vec] if intrinsic else _widths(
            vec, [(facts.sizes(d)[0], step_of.get(d.name, 0)) for d in unrolled_dims])
        out += [(w, *warp_cost(block_dim, by_hw, guards, w, shared, hw)) for w in widths]
    return out


def _own_widths(facts, inst) -> tuple | None:
    """(its VECTOR size, its UNROLL and VECTOR dims) once the sizes of the
    access's dimensions and which of them are UNROLL or VECTOR are settled
    (and no other statement's VECTOR loop may enclose it); None before."""
    vec, unrolled = 1, []
    for d in inst.dims:
        kinds = facts.kinds(d)
        seq = kinds & {DimKind.UNROLL, DimKind.VECTOR}
        if len(facts.sizes(d)) != 1 or seq and seq != kinds or \
                DimKind.VECTOR in kinds and kinds != {DimKind.VECTOR}:
            return None
        if kinds == {DimKind.VECTOR}:
            vec = facts.sizes(d)[0]
        if seq:
            unrolled.append(d)
    for e in inst.kernel.dims():
        if e not in inst.dims and DimKind.VECTOR in facts.kinds(e) \
                and Order.OUT in facts.order(e, inst):
            return None
    return vec, unrolled


def _settled_intrinsic(caches) -> bool | None:
    """A global store is an intrinsic when every cache directive left has
    one, a plain store when none has; None while both remain."""
    if caches <= PINNED_STORES:
        return True
    return None if caches & PINNED_STORES else False


def _temp_steps(facts, inst, padded: bool) -> list[tuple] | None:
    """`codegen.tree`'s coefficients of a temporary's access from the open
    candidate (`temp_pairs`, `temp_steps`) with its rows `padded` or not,
    or None while its layout is open otherwise: which producers are
    BLOCKs, which pairs are fused, whether the vector pair is a VECTOR, the
    producers' sizes."""
    a = inst.array
    for p in a.pairs:
        kinds = facts.kinds(p[0])
        if DimKind.BLOCK in kinds and kinds != {DimKind.BLOCK} or len(facts.sizes(p[0])) != 1:
            return None
        if facts.may_merge(p[0], p[1]) and not facts.surely_merged(p[0], p[1]):
            return None
        if p[0] is a.vector_src and DimKind.VECTOR in kinds and kinds != {DimKind.VECTOR}:
            return None
    def kind(d):  # the one kind left, or None: then not BLOCK, nor the vector pair's VECTOR
        kinds = facts.kinds(d)
        return next(iter(kinds)) if len(kinds) == 1 else None
    pairs = temp_pairs(a, kind, lambda p: facts.surely_merged(p[0], p[1]))
    return temp_steps(inst, pairs, lambda d: facts.sizes(d)[0], padded)


def warp_cost(block_dim, steps: dict, guards, vec: int, shared: bool,
              hw: Hardware) -> tuple[float, float]:
    """(sectors, wavefronts), the least over the warps of a block of
    `block_dim` threads (x fastest), of an access whose address steps by
    `steps[h]` elements along hardware dim h, run by the threads `guards`
    allow ((h, "<" or "==", n) each), each lane moving `vec` consecutive
    elements, to shared memory (banks) or global (sectors)."""
    bx, by, bz = block_dim
    threads = bx * by * bz
    t = np.arange(threads)
    tid = {"x": t % bx, "y": (t // bx) % by, "z": t // (bx * by)}
    addr = np.zeros(threads, dtype=np.int64)
    active = np.ones(threads, dtype=bool)
    for h, step in steps.items():
        addr += tid[h] * step
    for h, op, n in guards:  # the threads that run it
        active &= (tid[h] < n) if op == "<" else (tid[h] == n)
    patterns = set()
    for w0 in range(0, threads, hw.warp_size):
        a = addr[w0:w0 + hw.warp_size][active[w0:w0 + hw.warp_size]]
        if a.size == 0:
            continue
        a = np.unique((a[:, None] + np.arange(vec)[None, :]).ravel())
        # the base address is unknown: banks and sector covers depend only on
        # the pattern relative to the first element (up to the bank count)
        base = int(a[0]) - int(a[0]) % hw.banks if shared else int(a[0])
        patterns.add(tuple((a - base).tolist()))
    if not patterns:
        return 1.0, 1.0
    best_sectors = best_waves = math.inf
    for pat in patterns:
        if shared:
            banks: dict = {}
            for x in pat:
                banks[x % hw.banks] = banks.get(x % hw.banks, 0) + 1
            waves = max(max(banks.values()), math.ceil(len(pat) * 4 / hw.wavefront_bytes))
            best_waves, best_sectors = min(best_waves, waves), 0
            continue
        cover, start = 0, None
        for b in pat:  # sorted: fewest windows of sector_bytes covering them
            if start is None or 4 * b + 4 > start + hw.sector_bytes:
                cover, start = cover + 1, 4 * b
        best_sectors = min(best_sectors, cover)
        best_waves = min(best_waves, math.ceil(cover * hw.sector_bytes / hw.wavefront_bytes))
    return float(best_sectors), float(max(best_waves, 1))
