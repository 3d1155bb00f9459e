"""Decisions a performance engineer forces by hand: named recipes that a
person (a test, a notebook, the README) applies to a root and lets a search
or a descent complete.

`register_tiled_matmul` is the structure of the fast matmul kernels (the
thesis's Table 6.2 winners, cuBLAS's SGEMM): a 2-D grid of BM×BN block tiles,
a 2-D thread block whose threads each keep a TM×TN tile of accumulators in
registers across the whole reduction, k strip-mined by BK with the BK×BM
tile of A and the BK×BN tile of B staged once per k iteration through shared
memory by every thread of the block, A read as float4 where its layout allows.
"""

from __future__ import annotations

from .errors import InvalidDecision, WorkbenchError
from .space.values import Cache, DimKind, DimMap, MemSpace, Order, Padding, ThreadMapping


def register_tiled_matmul(kernel, *, tm: int = 4, tn: int = 4, threads: int = 16,
                          vector: bool = True, padded: bool | None = None) -> list[tuple]:
    """(choice, objects, value) decisions of the register-tiled matmul on a
    `matmul`-built kernel: a threads × threads block whose threads each keep
    tm × tn accumulators (block tiles of threads·tm × threads·tn), the
    reduction strip-mined by `threads` (a staged tile's k strip is spread
    over the threads along x, its m or n strip along y). What the recipe
    leaves open a completion decides. `padded`: the staged tiles' rows
    padded or not (`lowered_decisions`: decided on the tiles the lowering
    makes; None leaves it to the completion)."""
    del padded  # a decision on the lowered tiles
    if kernel.spec().get("builder") not in ("matmul", "strided_matmul"):
        raise WorkbenchError(f"register_tiled_matmul needs a matmul kernel, got {kernel.name}")
    lab = kernel.dims_by_label()
    m, n, k = (kernel.spec()[x] for x in "mnk")
    bk = threads_m = threads_n = threads
    for what, size, tile in (("m", m, threads_m * tm), ("n", n, threads_n * tn), ("k", k, bk)):
        if size % tile:
            raise WorkbenchError(f"{what} = {size} is not a multiple of the tile {tile}")
    out = []

    def dec(choice, objs, value):
        out.append((choice, tuple(lab[o] for o in objs), str(value)))

    # sizes: level 1 over threads, level 2 in registers; k1 over the threads along x
    dec("size", ("c_m1",), threads_m)
    dec("size", ("c_m2",), tm)
    dec("size", ("c_n1",), threads_n)
    dec("size", ("c_n2",), tn)
    dec("size", ("c_k1",), bk)
    loop, block, thread, unroll = DimKind.LOOP, DimKind.BLOCK, DimKind.THREAD, DimKind.UNROLL
    vec = DimKind.VECTOR if vector and tm in (2, 4) else unroll
    kinds = {
        "c_m0": block, "c_n0": block, "c_m1": thread, "c_n1": thread,
        "c_m2": unroll, "c_n2": unroll, "c_k0": loop, "c_k1": unroll,
        "i_m1": thread, "i_n1": thread, "i_m2": unroll, "i_n2": unroll,
        "s_m1": thread, "s_n1": thread, "s_m2": vec, "s_n2": unroll,
        # the staged tiles: A by (m1 on y, k1 on x, m2 as a vector), B by
        # (n1 on y, k1 on x, n2 unrolled): coalesced along x
        "a_m1": thread, "a_k1": thread, "a_m2": vec,
        "b_n1": thread, "b_k1": thread, "b_n2": unroll,
    }
    for d, v in kinds.items():
        dec("dim_kind", (d,), v)
    # block and k loops fused across the nests
    for a, b in (("c_m0", "a_m0"), ("c_m0", "i_m0"), ("c_m0", "s_m0"),
                 ("c_n0", "b_n0"), ("c_n0", "i_n0"), ("c_n0", "s_n0"),
                 ("c_k0", "a_k0"), ("c_k0", "b_k0")):
        dec("order", (a, b), Order.MERGED)
    # threads: y holds the m1 strips (and n1 of B's copy), x the n1 and k1 ones
    for a, b in (("c_m1", "i_m1"), ("c_m1", "s_m1"), ("c_m1", "a_m1"), ("c_m1", "b_n1"),
                 ("c_n1", "i_n1"), ("c_n1", "s_n1"), ("c_n1", "a_k1"), ("c_n1", "b_k1")):
        dec("thread_mapping", (a, b), ThreadMapping.MAPPED)
    # inputs through the read-only path, the output past L1
    for inst, v in (("ld_a", Cache.READ_ONLY), ("ld_b", Cache.READ_ONLY), ("st_c", Cache.L2)):
        out.append(("cache", (inst,), v.value))
    # nesting, outer to inner
    for a, b in (("c_m0", "c_n0"), ("c_m1", "c_n1"), ("c_k0", "c_m1"), ("c_n1", "c_k1"),
                 ("c_k1", "c_m2"), ("c_m2", "c_n2"),
                 ("i_m1", "i_n1"), ("i_n1", "i_m2"), ("i_m2", "i_n2"),
                 ("s_m1", "s_n1"), ("s_n1", "s_n2"), ("s_n2", "s_m2"),
                 ("a_m1", "a_k1"), ("a_k1", "a_m2"), ("b_n1", "b_k1"), ("b_k1", "b_n2")):
        dec("order", (a, b), Order.OUT)
    # phases: initialise, then per k iteration copy A, copy B, compute; store
    for a, b in (("i_m1", "c_k0"), ("a_m1", "b_n1"), ("b_n1", "c_m1"), ("c_k0", "s_m1")):
        dec("order", (a, b), Order.BEFORE)
    # the accumulators: in the same thread, and in registers along the unrolled strips
    via_threads, via_regs = DimMap.THREADS, DimMap.REGISTERS
    for a, b, v in (("i_m1", "c_m1", via_threads), ("i_n1", "c_n1", via_threads),
                    ("i_m2", "c_m2", via_regs), ("i_n2", "c_n2", via_regs),
                    ("c_m1", "s_m1", via_threads), ("c_n1", "s_n1", via_threads),
                    ("c_m2", "s_m2", via_regs), ("c_n2", "s_n2", via_regs),
                    ("a_m1", "c_m1", DimMap.MEMORY), ("b_n1", "c_n1", DimMap.MEMORY)):
        dec("dim_map", (a, b), v)
    return out


def vector_axpy(kernel, *, threads: int | None = 256, vector: int = 4) -> list[tuple]:
    """(choice, objects, value) decisions of the streaming axpy on an
    `axpy`-built kernel: every statement's outer strip a BLOCK, its middle
    one a THREAD of `threads` (None: the size left to a search), its inner
    one `vector` wide — a float4 access for the loads and the store, an
    unrolled fma — and the three nests fused, the values kept in registers.
    Cache directives and the order of the two loads are left open."""
    if kernel.spec().get("builder") != "axpy":
        raise WorkbenchError(f"vector_axpy needs an axpy kernel, got {kernel.name}")
    n = kernel.spec()["n"]
    if n % (vector * (threads or 1)):
        raise WorkbenchError(f"n = {n} is not a multiple of {vector} × {threads} threads")
    lab = kernel.dims_by_label()
    out = []

    def dec(choice, objs, value):
        out.append((choice, tuple(lab[o] for o in objs), str(value)))

    for s in "xyfz":  # the x and y loads, the fma, the z store
        if threads is not None:
            dec("size", (f"{s}_n1",), threads)
        dec("size", (f"{s}_n2",), vector)
        dec("dim_kind", (f"{s}_n0",), DimKind.BLOCK)
        dec("dim_kind", (f"{s}_n1",), DimKind.THREAD)
        # an fma has no vector form: unrolled over the loaded float4's lanes
        dec("dim_kind", (f"{s}_n2",), DimKind.UNROLL if s == "f" else DimKind.VECTOR)
    for a, b in (("x", "f"), ("y", "f"), ("f", "z")):
        dec("dim_map", (f"{a}_n0", f"{b}_n0"), DimMap.MERGED)
        dec("dim_map", (f"{a}_n1", f"{b}_n1"), DimMap.MERGED)
        dec("dim_map", (f"{a}_n2", f"{b}_n2"), DimMap.REGISTERS)
    return out


def lowered_decisions(kernel, *, padded: bool | None = None) -> list[tuple]:
    """Decisions on the objects a recipe's lowerings add (call on the kernel
    of the candidate after the lowering): the staged tiles in shared memory
    — with `padded` True, each row of their outermost index padded
    (gpu.space's `padding`: B's tile, stored along k, is otherwise written
    16-way bank-conflicted), False not, None left open —, each tile of A
    read from it once per register row, A's before B's."""
    lab = kernel.dims_by_label()
    shared = MemSpace.SHARED.value
    temps = [a for a in kernel.arrays() if a.temporary]
    out = [("mem_space", (a.name,), shared) for a in temps]
    if padded is not None:
        pad = (Padding.ROWS if padded else Padding.NONE).value
        out += [("padding", (a.name,), pad) for a in temps if a.paddable]
    names = {i.name for i in kernel.instructions()}
    if {"ld_ld_a_mad", "ld_ld_b_mad"} <= names:
        out += [("order", ("ld_ld_a_mad", lab["c_n2"]), Order.BEFORE.value),
                ("order", ("ld_ld_a_mad", "ld_ld_b_mad"), Order.BEFORE.value)]
    return out


RECIPES = {"register_tiled_matmul": register_tiled_matmul, "vector_axpy": vector_axpy}

# the variants a person tuning a kernel by hand tries first, by kernel builder:
# 64×64 and 32×32 block tiles (a 256×256 matmul has 16 of the former for 132
# SMs) with 4×4 or 2×2 accumulators a thread; float4 streams of 256 or 1,024
# threads a block, or the block's size left to a search
_TILED = "register_tiled_matmul"
PLANS = {
    "axpy": [("vector_axpy", {"threads": 256}), ("vector_axpy", {"threads": 1024}),
             ("vector_axpy", {"threads": None})],
    # each first with the staged tiles' rows padded — B's tile is then
    # stored 4-way, not 16-way, bank-conflicted and A's read without
    # conflict (the nvidia_h200 bound of matmul 1024's 4×4 plan: 46.3 → 37.5
    # µs; benchmarks/bench_padding.py) —, then with the padding left to the
    # search below the plan
    "matmul": [(_TILED, {"tm": t, "tn": t, "threads": n, **pad})
               for pad in ({"padded": True}, {})
               for t, n in ((4, 16), (2, 16), (4, 8), (2, 8), (4, 32))],
    # A's stride allows no float4
    "strided_matmul": [(_TILED, {"tm": t, "tn": t, "threads": n, "vector": False, **pad})
                       for pad in ({"padded": True}, {}) for t, n in ((4, 16), (2, 8))],
}


def plan_name(recipe: str, options: dict) -> str:
    """`register_tiled_matmul(tm=4, tn=4, threads=16)`."""
    return f"{recipe}({', '.join(f'{k}={v}' for k, v in options.items())})"


def plans(kernel) -> list[tuple[str, dict]]:
    """The `PLANS` of the kernel's builder whose recipe fits its sizes (the
    space may still refuse a decision: `forced_candidate` says which)."""
    out = []
    for recipe, options in PLANS.get(kernel.spec().get("builder"), ()):
        try:
            RECIPES[recipe](kernel, **options)
        except WorkbenchError:
            continue
        out.append((recipe, options))
    return out


def _steps(cand, decisions, name: str | None = None, on_step=None) -> list[tuple]:
    """(Decision, the candidate after it) for each (choice, objects, value)
    of `decisions` in turn, those propagation has already settled left out.
    A refused one raises as `cand.decide` does, or, with a plan's `name`,
    WorkbenchError naming the plan and the decision as the explorer names it.
    `on_step(k)` is told each time k decisions have been taken."""
    from .candidate import Decision
    from .names import decision_label
    out = []
    for choice, objs, value in decisions:
        if cand.domain(choice, objs) == {value}:
            continue
        d = Decision(choice, tuple(objs), (str(value),))
        try:
            nxt = cand.decide(d)
        except WorkbenchError as exc:
            if name is None:
                raise
            left = "" if isinstance(exc, InvalidDecision) else " (a dead end)"
            raise WorkbenchError(f"{name}: `{decision_label(cand, d)}` is refused{left}: "
                                 f"{exc}") from None
        cand = nxt
        out.append((d, cand))
        if on_step is not None:
            on_step(len(out))
    return out


def recipe_steps(cand, recipe: str, *, on_step=None, **options) -> list[tuple]:
    """(Decision, the candidate after it) for each decision that forces the
    named recipe on `cand`, in order — its own, then those on what its
    lowerings add — those propagation has already settled left out. Raises
    WorkbenchError naming the recipe and the decision that does not apply;
    `cand` is unchanged (candidates are immutable). `on_step(k)`: told each
    time k decisions have been taken (a recipe takes seconds on large
    kernels)."""
    if recipe not in RECIPES:
        raise WorkbenchError(f"unknown recipe {recipe!r}: use one of {', '.join(RECIPES)}")
    name = plan_name(recipe, options)
    steps = _steps(cand, RECIPES[recipe](cand.kernel, **options), name, on_step)
    after = steps[-1][1] if steps else cand
    done = len(steps)
    lowered = lowered_decisions(after.kernel, padded=options.get("padded"))
    return steps + _steps(after, lowered, name,
                          None if on_step is None else (lambda k: on_step(done + k)))


def forced_candidate(root, recipe: str, **options):
    """`root` with the named recipe (`RECIPES`, keyword `options`) forced,
    then the decisions on what its lowerings added (`lowered_decisions`):
    the candidate a person who knows the recipe starts a search from.
    Raises WorkbenchError naming the recipe, or the decision, that does not
    apply."""
    steps = recipe_steps(root, recipe, **options)
    return steps[-1][1] if steps else root


def apply_recipe(cand, decisions):
    """`cand` with each decision applied in turn; a decision whose value is
    already the only one left is skipped (propagation settled it)."""
    steps = _steps(cand, decisions)
    return steps[-1][1] if steps else cand


__all__ = ["PLANS", "RECIPES", "apply_recipe", "forced_candidate", "lowered_decisions",
           "plan_name", "plans", "recipe_steps", "register_tiled_matmul", "vector_axpy"]
