"""From a fixed candidate to a control-flow tree (thesis §4.4.1–4.4.3).

`Implementation` annotates the kernel with the decisions of a fixed candidate:
classes of merged dimensions (one `Loop` each, with its kind and size), the
hardware thread and block dimension of each parallel loop, the memory space
and layout of temporary arrays, the cache directive of each access and the
variables that hold instruction results. `root` (a `Loop` of kind ROOT) is
the loop tree built by Algorithm 2 from the `order` choice, with a `Barrier`
wherever threads hand values through a temporary. The printers of
`printer.py` walk it: `Printer` (the reference C) and `CudaPrinter`.

Thread semantics are CUDA's (thesis §4.3.3): thread and block dimensions are
implicit; an instruction runs in every thread of the block, taking the
thread's index along the thread loops that enclose it and being replicated
along the others (each thread with its own registers); stores run only in
the threads that own them (`guard`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from ..errors import WorkbenchError
from ..kernels import require_loop_nest
from ..space.values import DimKind, MemSpace, Order, Padding, ThreadMapping, ensure_values

HW = ("x", "y", "z")


def hardware_groups(loops, mapping, size) -> list[list]:
    """Thread loops by hardware dimension, x first: the classes of
    `mapping(a, b) == MAPPED` (a `thread_mapping` value of two loops),
    innermost first (`OUT`: a encloses b), so that warps run along the
    innermost; of three, z the smaller (`size(loop)`: z holds at most 64
    threads). The code generator lays out every block this way, and the
    model reads a candidate's layout through it once its thread choices are
    settled (`model.memory.thread_layout`)."""
    groups: list[list] = []
    for lp in loops:  # classes of thread_mapping MAPPED
        for g in groups:
            if mapping(lp, g[0]) == ThreadMapping.MAPPED:
                g.append(lp)
                break
        else:
            groups.append([lp])

    def outer(g, h):
        return -1 if mapping(g[0], h[0]) == ThreadMapping.OUT else 1
    groups.sort(key=functools.cmp_to_key(outer))
    groups.reverse()  # innermost first: it takes x, so warps run along it
    if len(groups) > 3:
        raise WorkbenchError(f"{len(groups)} hardware thread dimensions needed")
    if len(groups) == 3 and size(groups[1][0]) < size(groups[2][0]):
        groups[1], groups[2] = groups[2], groups[1]  # z holds at most 64 threads
    return groups


def array_steps(inst, size) -> list[tuple]:
    """(dim, coefficient) of the linear address of an access to a kernel
    array (eq. 4.2): a dimension steps by its logical dimension's stride
    times the sizes (`size(dim)`) of the strip levels inside it."""
    out = []
    for d in inst.dims:
        inner = math.prod(size(e) for e in inst.dims
                          if e.logical is d.logical and e.level > d.level)
        out.append((d, inst.array.strides[d.logical.name] * inner))
    return out


def temp_pairs(array, kind, fused) -> list[tuple]:
    """The pairs a temporary is indexed by: those whose producer is not a
    BLOCK (one copy per block) and that are not `fused` (written and read
    in the same iteration), a pair stored as vectors innermost (gpu.space's
    `array_size`); `kind(dim)` a dimension's kind. The code generator lays
    temporaries out this way, and the model once those choices are settled
    (`model.memory.settled_costs`)."""
    pairs = [p for p in array.pairs if kind(p[0]) != DimKind.BLOCK and not fused(p)]
    pairs.sort(key=lambda p: p[0] is array.vector_src  # stable
               and kind(p[0]) == DimKind.VECTOR)
    return pairs


def temp_strides(pairs, size, padded: bool = False) -> tuple[list[int], int]:
    """The stride of each of `pairs` (`temp_pairs`: row-major) and the
    elements a temporary indexed by them holds; `size(dim)` a dimension's
    size. `padded` (gpu.space's `padding` = ROWS): each row of the outermost
    index is followed by min(4, R) unused elements, R the elements of a row,
    so a float4 row stays aligned; with fewer than two pairs, no rows."""
    strides, n = [], 1
    for p in reversed(pairs):
        strides.append(n)
        n *= size(p[0])
    strides.reverse()
    if padded and len(pairs) >= 2:
        strides[0] += min(4, strides[0])
        n = size(pairs[0][0]) * strides[0]
    return strides, n


def temp_steps(inst, pairs, size, padded: bool = False) -> list[tuple]:
    """(dim, coefficient) of an access to a temporary indexed by `pairs`
    (`temp_pairs`, laid out by `temp_strides`): the store steps along the
    producers, the load along the consumers."""
    side = 0 if inst.op == "store" else 1
    return [(p[side], c) for p, c in zip(pairs, temp_strides(pairs, size, padded)[0])]


@dataclass(eq=False)
class Loop:
    id: int
    dims: list  # merged dimensions; dims[0] is the representative
    kind: str  # LOOP | UNROLL | VECTOR | THREAD | BLOCK | ROOT
    size: int
    children: list = field(default_factory=list)
    parent: Loop | None = None
    hw: str | None = None  # x/y/z for THREAD and BLOCK loops

    @property
    def rep(self):
        return self.dims[0]


@dataclass(eq=False)
class Leaf:
    inst: object
    parent: Loop | None = None


@dataclass(eq=False)
class Barrier:
    """`__syncthreads()`: the threads of a block wait for each other, so that
    what one wrote to a temporary is read by another after it (`raw`), or
    overwritten in the next iteration only after every read (`war`)."""
    arrays: list
    kind: str  # raw | war
    parent: Loop | None = None


class Implementation:
    """A fixed candidate, annotated for code generation."""

    def __init__(self, cand):
        require_loop_nest(cand.kernel, "code generation")
        if not cand.is_fixed:
            raise WorkbenchError("code generation needs a fixed candidate "
                                 f"({cand.open_count()} choices are open)")
        ensure_values(cand.space)  # the value names read below are the space's
        self.cand = cand
        self.kernel = cand.kernel
        k = self.kernel
        self.size = {d.name: int(self._get("size", d)) for d in k.dims()}
        self.kind = {d.name: self._get("dim_kind", d) for d in k.dims()}
        self._merge_classes()
        self._build_tree()
        self._map_hardware()
        self.mem_space = {a.name: self._get("mem_space", a) for a in k.arrays()}
        self.cache = {i.name: self._get("cache", i) for i in k.instructions() if i.is_mem()}
        self._layouts()
        self._place_barriers()

    # ----------------------------------------------------------- decisions
    def _get(self, choice, *objs) -> str:
        """The value of a choice instance; the candidate reads mirrored
        (antisymmetric) choices through the space's own value inversion."""
        return self.cand.value(choice, tuple(o.name for o in objs))

    def order(self, x, y) -> str:
        return self._get("order", x, y)

    # -------------------------------------------------------------- loops
    def _merge_classes(self) -> None:
        dims = self.kernel.dims()
        parent = {d.name: d.name for d in dims}

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x
        for i, a in enumerate(dims):
            for b in dims[i + 1:]:
                if self.order(a, b) == Order.MERGED:
                    parent[find(b.name)] = find(a.name)
        groups: dict[str, list] = {}
        for d in dims:
            groups.setdefault(find(d.name), []).append(d)
        self.loops: list[Loop] = []
        self.loop_of: dict[str, Loop] = {}
        for members in groups.values():
            kinds = {self.kind[d.name] for d in members}
            sizes = {self.size[d.name] for d in members}
            if len(kinds) != 1 or len(sizes) != 1:
                raise WorkbenchError(f"merged dimensions {members} differ in kind or size")
            loop = Loop(len(self.loops), members, kinds.pop(), sizes.pop())
            self.loops.append(loop)
            for d in members:
                self.loop_of[d.name] = loop

    def _build_tree(self) -> None:
        """Algorithm 2: sort loops and instructions by ≺ (BEFORE or OUT), then
        nest each statement in the innermost open loop that contains it."""
        stmts = [lp.rep for lp in self.loops] + self.kernel.instructions()

        def cmp(a, b):
            if a is b:
                return 0
            return -1 if self.order(a, b) in (Order.BEFORE, Order.OUT) else 1
        stmts.sort(key=functools.cmp_to_key(cmp))
        self.root = Loop(-1, [], "ROOT", 1)
        self.leaf_of: dict[str, Leaf] = {}
        cur = self.root
        for s in stmts:
            while cur is not self.root and self.order(s, cur.rep) != Order.IN:
                cur = cur.parent
            if s.is_dim():
                node = self.loop_of[s.name]
                node.parent = cur
                cur.children.append(node)
                cur = node
            else:
                leaf = Leaf(s, cur)
                cur.children.append(leaf)
                self.leaf_of[s.name] = leaf
        for i in self.kernel.instructions():  # the tree agrees with the decisions
            inside = {lp.id for lp in self.ancestors(i)}
            for d in i.dims:
                if self.loop_of[d.name].id not in inside:
                    raise WorkbenchError(f"{i.name} is not nested in its dimension {d.name}")

    def ancestors(self, inst) -> list[Loop]:
        out, node = [], self.leaf_of[inst.name].parent
        while node is not None and node is not self.root:
            out.append(node)
            node = node.parent
        return out[::-1]

    def vector_size(self, inst) -> int:
        """The values one access of `inst` moves by its VECTOR loop (1: none;
        a statement is nested in at most one)."""
        return next((lp.size for lp in self.ancestors(inst) if lp.kind == DimKind.VECTOR), 1)

    def _map_hardware(self) -> None:
        k = self.kernel
        threads = [lp for lp in self.loops if lp.kind == DimKind.THREAD]
        groups = hardware_groups(threads, lambda a, b: self._thread_map(a.rep, b.rep),
                                 lambda lp: lp.size)
        self.block_dim = [1, 1, 1]
        for h, g in enumerate(groups):
            for lp in g:
                lp.hw = HW[h]
            self.block_dim[h] = g[0].size
        blocks = sorted((lp for lp in self.loops if lp.kind == DimKind.BLOCK),
                        key=lambda lp: -lp.size)
        if len(blocks) > 3:
            raise WorkbenchError(f"{len(blocks)} block dimensions needed")
        self.grid_dim = [1, 1, 1]
        for h, lp in enumerate(blocks):
            lp.hw = HW[h]
            self.grid_dim[h] = lp.size
        limit = k.target.max_grid_y_z
        if self.grid_dim[1] > limit or self.grid_dim[2] > limit:
            raise WorkbenchError(f"grid {self.grid_dim} exceeds the y/z limit {limit}")

    def _thread_map(self, a, b) -> str:
        return ThreadMapping.MAPPED.value if a is b else self._get("thread_mapping", a, b)

    # ------------------------------------------------------------ memory
    def _layouts(self) -> None:
        """Temporary arrays, row-major over the pairs whose producer and
        consumer do not share the loop (block pairs: one copy per block;
        fused pairs: written and read in the same iteration), a pair stored
        as vectors innermost (gpu.space's `array_size`)."""
        self.temp_index: dict[str, list] = {}
        self.temp_size: dict[str, int] = {}
        self.padded: dict[str, bool] = {}
        for a in self.kernel.arrays():
            if not a.temporary:
                continue
            pairs = temp_pairs(a, lambda d: self.kind[d.name],
                               lambda p: self.loop_of[p[0].name] is self.loop_of[p[1].name])
            self.temp_index[a.name] = pairs
            self.padded[a.name] = self._get("padding", a) == Padding.ROWS
            self.temp_size[a.name] = temp_strides(pairs, lambda d: self.size[d.name],
                                                  self.padded[a.name])[1]
        self.global_temps = [a for a in self.temp_size if self.mem_space[a] == MemSpace.GLOBAL]

    def coefficients(self, inst) -> list[tuple]:
        """(dim, coefficient) of the linear address of a memory access (eq. 4.2)."""
        a = inst.array
        if a.temporary:
            return temp_steps(inst, self.temp_index[a.name], lambda d: self.size[d.name],
                              self.padded[a.name])
        return array_steps(inst, lambda e: self.size[e.name])

    # ---------------------------------------------------------- threads
    def thread_loops(self, inst) -> dict:
        """{hardware dim: enclosing THREAD loop} of an instruction."""
        return {lp.hw: lp for lp in self.ancestors(inst) if lp.kind == DimKind.THREAD}

    def guard(self, inst) -> list[tuple[str, str, int]]:
        """(hw, op, n) conditions on the thread index under which `inst` runs:
        `<` where its thread loop is narrower than the block, `==` 0 for a
        store along a hardware dim none of its own dims maps to (its value is
        the same in every such thread: one write)."""
        conds = []
        loops = self.thread_loops(inst)
        own = {lp.hw for lp in loops.values() if any(d in inst.dims for d in lp.dims)}
        for h, n in zip(HW, self.block_dim):
            lp = loops.get(h)
            if inst.op == "store" and h not in own:
                if n > 1:
                    conds.append((h, "==", 0))
            elif lp is not None and lp.size < n:
                conds.append((h, "<", lp.size))
        return conds

    def _path(self, inst) -> list:
        return [self.root, *self.ancestors(inst), self.leaf_of[inst.name]]

    def _place_barriers(self) -> None:
        """A barrier between the store of a temporary and its load, in their
        innermost common loop just before the part holding the load; and, if
        that loop runs again, one at the end of its body before the store
        overwrites what was read. Barriers at the same place are one."""
        at: dict = {}  # (loop, index) -> Barrier
        for a in self.temp_size:
            st = [i for i in self.kernel.instructions() if i.array is not None
                  and i.array.name == a and i.op == "store"]
            lds = [i for i in self.kernel.instructions() if i.array is not None
                   and i.array.name == a and i.op == "load"]
            for s in st:
                for ld in lds:
                    ps, pl = self._path(s), self._path(ld)
                    n = 0
                    while ps[n + 1] is pl[n + 1]:
                        n += 1
                    lca = ps[n]
                    for key, kind in (((lca.id, lca.children.index(pl[n + 1])), "raw"),
                                      ((lca.id, len(lca.children)), "war")):
                        if kind == "war" and not any(x.kind in (DimKind.LOOP, DimKind.UNROLL)
                                                     for x in ps[:n + 1]):
                            continue
                        b = at.setdefault(key, Barrier([], kind, lca))
                        if a not in b.arrays:
                            b.arrays.append(a)
        nodes = {lp.id: lp for lp in [self.root, *self.loops]}
        for (lid, index), b in sorted(at.items(), key=lambda kv: -kv[0][1]):
            nodes[lid].children.insert(index, b)
        self.barriers = list(at.values())

    def barrier_count(self) -> int:
        """`__syncthreads()` a block executes: each barrier once per
        iteration of the sequential and unrolled loops around it."""
        total = 0
        for b in self.barriers:
            times, node = 1, b.parent
            while node is not None and node is not self.root:
                times *= node.size if node.kind in (DimKind.LOOP, DimKind.UNROLL) else 1
                node = node.parent
            total += times
        return total

    # --------------------------------------------------------- variables
    def var_owner(self, inst):
        """Instruction whose variable holds `inst`'s result: an initialisation
        writes the variable of the reduction it starts (thesis §4.4.3)."""
        for i in self.kernel.instructions():
            for o in i.operands:
                if o.kind == "reduce" and o.source == inst.name:
                    return i
        return inst

    def instance_dims(self, inst, kinds) -> list:
        """Dimensions along which `inst` has one variable per iteration."""
        owner = self.var_owner(inst)
        red = owner.reduction_dims()
        return [d for d in owner.dims if d not in red and self.kind[d.name] in kinds]

    def threads(self) -> int:
        return math.prod(self.block_dim)

    def blocks(self) -> int:
        return math.prod(self.grid_dim)
