"""From a fixed candidate to a control-flow tree (thesis §4.4.1–4.4.3).

`Implementation` annotates the kernel with the decisions of a fixed candidate:
classes of merged dimensions (one `Loop` each, with its kind and size), the
hardware thread and block dimension of each parallel loop, the memory space
and layout of temporary arrays, the cache directive of each access and the
variables that hold instruction results. `tree` is the loop tree built by
Algorithm 2 from the `order` choice. Printers (`cuda.py`, `c.py`) walk it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from ..errors import WorkbenchError

HW = ("x", "y", "z")


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


class Implementation:
    """A fixed candidate, annotated for code generation."""

    def __init__(self, cand):
        if not cand.is_fixed:
            raise WorkbenchError("code generation needs a fixed candidate "
                                 f"({cand.open_count()} choices are open)")
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
                if self.order(a, b) == "MERGED":
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
            return -1 if self.order(a, b) in ("BEFORE", "OUT") else 1
        stmts.sort(key=functools.cmp_to_key(cmp))
        self.root = Loop(-1, [], "ROOT", 1)
        self.leaf_of: dict[str, Leaf] = {}
        cur = self.root
        for s in stmts:
            while cur is not self.root and self.order(s, cur.rep) != "IN":
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

    def _map_hardware(self) -> None:
        k = self.kernel
        threads = [lp for lp in self.loops if lp.kind == "THREAD"]
        groups: list[list[Loop]] = []
        for lp in threads:  # classes of thread_mapping MAPPED
            for g in groups:
                if self._thread_map(lp.rep, g[0].rep) == "MAPPED":
                    g.append(lp)
                    break
            else:
                groups.append([lp])

        def outer(g, h):
            return -1 if self._thread_map(g[0].rep, h[0].rep) == "OUT" else 1
        groups.sort(key=functools.cmp_to_key(outer))
        groups.reverse()  # innermost first: it takes x, so warps run along it
        if len(groups) > 3:
            raise WorkbenchError(f"{len(groups)} hardware thread dimensions needed")
        if len(groups) == 3 and groups[1][0].size < groups[2][0].size:
            groups[1], groups[2] = groups[2], groups[1]  # z holds at most 64 threads
        self.block_dim = [1, 1, 1]
        for h, g in enumerate(groups):
            for lp in g:
                lp.hw = HW[h]
            self.block_dim[h] = g[0].size
        blocks = sorted((lp for lp in self.loops if lp.kind == "BLOCK"), key=lambda lp: -lp.size)
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
        return "MAPPED" if a is b else self._get("thread_mapping", a, b)

    # ------------------------------------------------------------ memory
    def _layouts(self) -> None:
        """Temporary arrays: indexed by their non-block pairs, row-major."""
        self.temp_index: dict[str, list] = {}
        self.temp_size: dict[str, int] = {}
        for a in self.kernel.arrays():
            if not a.temporary:
                continue
            pairs = [p for p in a.pairs if self.kind[p[0].name] != "BLOCK"]
            self.temp_index[a.name] = pairs
            self.temp_size[a.name] = math.prod(self.size[s.name] for s, _ in pairs)
        self.shared_floats = sum(self.temp_size[a] for a, m in self.mem_space.items()
                                 if m == "SHARED")
        self.global_temps = [a for a in self.temp_size if self.mem_space[a] == "GLOBAL"]

    def coefficients(self, inst) -> list[tuple]:
        """(dim, coefficient) of the linear address of a memory access (eq. 4.2)."""
        a = inst.array
        if a.temporary:
            pairs = self.temp_index[a.name]
            side = 0 if inst.op == "store" else 1
            out, stride = [], 1
            for p in reversed(pairs):
                out.append((p[side], stride))
                stride *= self.size[p[0].name]
            return out[::-1]
        out = []
        for d in inst.dims:
            inner = math.prod(self.size[e.name] for e in inst.dims
                              if e.logical is d.logical and e.level > d.level)
            out.append((d, a.strides[d.logical.name] * inner))
        return out

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
