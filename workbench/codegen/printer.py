"""Printers of a control-flow tree (thesis §4.4.4): CUDA C and reference C.

Both walk the same `Implementation.tree` with the same variables, addresses
and barriers, and follow CUDA's semantics. CUDA erases parallel loops
(BLOCK → blockIdx, THREAD → threadIdx, with the implementation's guard on an
instruction where it must not run in every thread), prints unrolled loops
once per iteration with literal indices, vectorised accesses as float2/float4
instructions with their cache directive, and `__syncthreads()` at each
barrier. The C dialect runs the blocks as loops (OpenMP across them) and
emulates the threads of a block the way CPU implementations of CUDA and
OpenCL do: the code between two barriers is one *region*, wrapped in a loop
over the block's threads, and every variable has one copy per thread. So the
CPU check of a candidate is a check of its CUDA's meaning.
"""

from __future__ import annotations

import math
import re
from typing import ClassVar

from ..space.values import Cache, DimKind, MemSpace
from .tree import HW, Barrier, Implementation, Leaf

_LOAD = {Cache.L1: "__ldca", Cache.L2: "__ldcg", Cache.READ_ONLY: "__ldg", Cache.NONE: "__ldcv"}
_STORE = {Cache.L2: "__stcg", Cache.NONE: "__stwt"}
_VEC = {2: ("float2", "make_float2", "xy"), 4: ("float4", "make_float4", "xyzw")}
STATIC_SHARED_BYTES = 48 * 1024  # above it CUDA needs dynamic shared memory
# the store directives with an intrinsic: any other store is a plain C store
PINNED_STORES = frozenset(_STORE)


def is_global(impl: Implementation, inst) -> bool:
    """Whether `inst` accesses global memory (a temporary may live in shared)."""
    return not (inst.array.temporary and impl.mem_space[inst.array.name] == MemSpace.SHARED)


def prints_intrinsic(impl: Implementation, inst) -> bool:
    """Whether the printer writes the access `inst` as a cache-hint
    intrinsic: every load of global memory, and a store to it whose cache
    directive has one. In CUDA 13's sm_32_intrinsics.hpp they are inline
    assembly nvcc keeps in program order and runs where they are written
    (`__ldg`, `__ldca`, `__ldcg`: `asm volatile`; `__ldcv` and the stores:
    `asm` with a "memory" clobber; model/pinned.py, `memory.asm_access`)."""
    return is_global(impl, inst) and (inst.op == "load" or impl.cache[inst.name] in _STORE)


def _float(x: float) -> str:
    return f"{float(x)!r}f"


INT_MAX = 2**31 - 1
_INT = re.compile(r"-?\d+L?")  # an integer literal of an index expression


def _sum(parts) -> str:
    """`a + b + …` of index terms with the literal ones added up and a zero
    left out: `16 * i3 + 0 + 4` prints `16 * i3 + 4`, nothing `0`."""
    const, wide, rest = 0, False, []
    for p in parts:
        if _INT.fullmatch(p):
            const += int(p.rstrip("L"))
            wide = wide or p.endswith("L")
        else:
            rest.append(p)
    if const or not rest:
        rest.append(f"{const}{'L' if wide and const else ''}")
    return " + ".join(rest)


def needs_64bit(impl: Implementation) -> bool:
    """Whether an index of the generated code can pass 2^31 - 1: an array's
    length, an access's largest address, a loop's size, a variable's copies
    for every thread, a global temporary for every block. Then loop counters
    are `long` and every address term is computed in 64 bits."""
    k = impl.kernel
    worst = [a.length for a in k.arrays() if not a.temporary]
    worst += list(impl.size.values())
    for i in k.instructions():
        if i.array is not None:
            worst.append(sum(abs(c) * (impl.size[d.name] - 1)
                             for d, c in impl.coefficients(i)))
    worst += [_aligned(n) * impl.blocks() * impl.threads() for n in impl.temp_size.values()]
    lengths = [math.prod(impl.size[d.name] for d in impl.instance_dims(i, Printer.instance_kinds))
               for i in k.instructions() if i.op != "store"]
    worst.append(impl.threads() * max(lengths, default=1) * impl.blocks())
    return max(worst, default=0) > INT_MAX


def _aligned(n: int) -> int:
    """Floats a temporary takes, rounded up so the next one stays 16-byte aligned."""
    return -(-max(n, 1) // 4) * 4


class Printer:
    """The reference C (a CUDA emulation); `CudaPrinter` the CUDA."""
    dialect = "c"
    instance_kinds = (DimKind.UNROLL, DimKind.VECTOR)
    tid: ClassVar[dict] = {"x": "t_x", "y": "t_y", "z": "t_z"}

    def __init__(self, impl: Implementation, name: str):
        self.impl = impl
        self.k = impl.kernel
        self.name = name
        self.lines: list[str] = []
        self.depth = 1
        self.vars: dict[str, tuple[list, int]] = {}  # owner -> (instance dims, length)
        for i in self.k.instructions():
            if i.op == "store":
                continue
            owner = impl.var_owner(i)
            dims = impl.instance_dims(i, self.instance_kinds)
            self.vars[owner.name] = (dims, math.prod(impl.size[d.name] for d in dims))
        self.synced = self._synced()
        self.wide = needs_64bit(impl)
        self.itype = "long" if self.wide else "int"

    def _synced(self) -> set:
        """Ids of the loops that hold a barrier."""
        out = set()
        for b in self.impl.barriers:
            node = b.parent
            while node is not None:
                out.add(node.id)
                node = node.parent
        return out

    # --------------------------------------------------------------- text
    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def params(self) -> list[str]:
        out = []
        for a in self.k.arrays():
            if not a.temporary:
                const = "const " if a.role == "input" else ""
                out.append(f"{const}float* __restrict__ {a.name}")
        out += [f"float {s}" for s in self.k.scalars]
        return out

    # -------------------------------------------------------- expressions
    def idx(self, d, env) -> str:
        return env[self.impl.loop_of[d.name].id]

    def linear(self, terms, env) -> str:
        parts = []
        for d, coef in terms:
            if coef == 0:
                continue
            e = self.idx(d, env)
            parts.append(self.term(e, coef))
        return _sum(parts)

    def term(self, e: str, coef: int) -> str:
        """coef * e, in 64 bits where an index can pass 2^31 - 1; a literal
        index (an unrolled or vector lane) is folded: `16 * 2` prints `32`."""
        if _INT.fullmatch(e):
            return f"{coef * int(e.rstrip('L'))}{'L' if self.wide else ''}"
        if not self.wide:
            return e if coef == 1 else f"{coef} * {e}"
        return f"(long){e}" if coef == 1 else f"{coef}L * {e}"

    def var_base(self, owner: str) -> str:
        """Offset of the running thread's copy of a variable."""
        n = max(self.vars[owner][1], 1)
        return self.term("t_", n)

    def var_ref(self, owner: str, index_of) -> str:
        dims, _ = self.vars[owner]
        terms, stride = [], 1
        for d in reversed(dims):
            terms.append((index_of(d), stride))
            stride *= self.impl.size[d.name]
        parts = [self.term(e, c) for e, c in reversed(terms)]
        base = self.var_base(owner)
        parts = ([base] if base else []) + parts
        return f"v_{owner}[{_sum(parts)}]"

    def result(self, inst, env) -> str:
        owner = self.impl.var_owner(inst)
        # an initialisation reaches the reduction's dims through its pairs
        pairs = {d: s for o in owner.operands if o.kind == "reduce" and o.source == inst.name
                 for s, d in o.pairs}
        return self.var_ref(owner.name, lambda d: self.idx(pairs.get(d, d), env))

    def operand(self, inst, o, env) -> str:
        if o.kind == "param":
            return o.source
        if o.kind == "const":
            return _float(o.value)
        if o.kind == "reduce":
            return self.result(inst, env)
        p = self.k.instruction(o.source)
        pairs = dict(o.pairs)

        def index_of(s):
            if s in inst.dims:
                return self.idx(s, env)
            if s in pairs:
                return self.idx(pairs[s], env)
            raise AssertionError(f"{inst.name} reads {p.name} along {s.name}, "
                                 "neither shared nor paired")
        return self.var_ref(self.impl.var_owner(p).name, index_of)

    def address(self, inst, env) -> str:
        return f"{inst.array.name}[{self.linear(self.impl.coefficients(inst), env)}]"

    def guard(self, inst) -> str:
        conds = [f"{self.tid[h]} {op} {n}" for h, op, n in self.impl.guard(inst)]
        return f"if ({' && '.join(conds)}) " if conds else ""

    # -------------------------------------------------------------- walk
    def walk(self, node, env) -> None:
        for child in node.children:
            if isinstance(child, Barrier):
                self.barrier(child)
            elif isinstance(child, Leaf):
                self.instruction(child.inst, env)
            else:
                self.loop(child, env)

    def header(self, lp, v) -> None:
        self.line(f"for ({self.itype} {v} = 0; {v} < {lp.size}; ++{v}) {{  // {lp.kind} "
                  f"{', '.join(f'{d.name}:{d.label}' for d in lp.dims)}")

    def loop(self, lp, env) -> None:
        """A loop inside a region (no barrier in it): the running thread's
        index for a thread loop, a sequential loop otherwise."""
        if lp.kind == DimKind.THREAD:
            return self.walk(lp, {**env, lp.id: self.tid[lp.hw]})
        v = f"i{lp.id}"
        self.header(lp, v)
        self.depth += 1
        self.walk(lp, {**env, lp.id: v})
        self.depth -= 1
        self.line("}")

    def barrier(self, b) -> None:
        raise AssertionError("a region holds no barrier")

    def sequence(self, node, env, region: list) -> None:
        """The children of `node` outside any region: runs of barrier-free
        statements become regions; loops that hold a barrier run the same in
        every thread, so they stay around the regions of their body."""
        for child in node.children:
            if isinstance(child, Barrier):
                self.flush(region)
            elif isinstance(child, Leaf) or (child.id not in self.synced
                                             and child.kind != DimKind.BLOCK):
                region.append((child, env))
            elif child.kind == DimKind.THREAD:
                self.sequence(child, {**env, child.id: self.tid[child.hw]}, region)
            else:
                self.flush(region)
                self.outer_loop(child, env)

    def outer_loop(self, lp, env) -> None:
        v = f"i{lp.id}"
        outer_block = lp.kind == DimKind.BLOCK and lp.parent is self.impl.root
        if outer_block:
            # blocks are independent: with OpenMP they run on every core,
            # each with its own variables and temporaries (declared inside)
            self.line("#pragma omp parallel for schedule(static)")
        self.header(lp, v)
        self.depth += 1
        if outer_block:
            self.declare()
        region: list = []
        self.sequence(lp, {**env, lp.id: v}, region)
        self.flush(region)
        if outer_block:
            self.release()
        self.depth -= 1
        self.line("}")

    def flush(self, region: list) -> None:
        """One region: every thread of the block runs it in turn."""
        if not region:
            return
        opened = 0
        for h, n in reversed(list(zip(HW, self.impl.block_dim))):
            self.line(f"for (int t_{h} = 0; t_{h} < {n}; ++t_{h}) {{" if n > 1
                      else f"{{ const int t_{h} = 0; (void)t_{h};")
            self.depth += 1
            opened += 1
        bx, by, _ = self.impl.block_dim
        self.line(f"const int t_ = (t_z * {by} + t_y) * {bx} + t_x; (void)t_;")
        for child, e in region:
            if isinstance(child, Leaf):
                self.instruction(child.inst, e)
            else:
                self.loop(child, e)
        for _ in range(opened):
            self.depth -= 1
            self.line("}")
        region.clear()

    def declare(self) -> None:
        t = self.impl.threads()
        for owner, (_, n) in self.vars.items():
            self.line(f"float* v_{owner} = (float*)calloc({t * max(n, 1)}, sizeof(float));")
        for a, n in self.impl.temp_size.items():
            self.line(f"float* {a} = (float*)calloc({_aligned(n)}, sizeof(float));")

    def release(self) -> None:
        for owner in self.vars:
            self.line(f"free(v_{owner});")
        for a in self.impl.temp_size:
            self.line(f"free({a});")

    def instruction(self, inst, env) -> None:
        self.line(self.guard(inst) + self.statement(inst, env) + f"  // {inst.name}")

    def statement(self, inst, env) -> str:
        if inst.op == "load":
            return f"{self.result(inst, env)} = {self.load(inst, self.address(inst, env))};"
        if inst.op == "store":
            return self.store(inst, self.address(inst, env),
                              self.operand(inst, inst.operands[0], env))
        ops = [self.operand(inst, o, env) for o in inst.operands if o.kind != "pairs"]
        expr = {"fma": lambda a, b, c: f"fmaf({a}, {b}, {c})",
                "mul": lambda a, b: f"{a} * {b}", "add": lambda a, b: f"{a} + {b}",
                "mov": lambda a: a}[inst.op](*ops)
        return f"{self.result(inst, env)} = {expr};"

    def load(self, inst, addr) -> str:
        return addr

    def store(self, inst, addr, value) -> str:
        return f"{addr} = {value};"

    # -------------------------------------------------------------- text
    def source(self) -> str:
        head = f"void {self.name}({', '.join(self.params())})"
        self.lines = [head + " {"]
        # with block loops, storage is per block (declared inside the
        # outermost one); without, once for the whole kernel
        blocked = any(lp.kind == DimKind.BLOCK for lp in self.impl.root.children
                      if not isinstance(lp, (Leaf, Barrier)))
        if not blocked:
            self.declare()
        region: list = []
        self.sequence(self.impl.root, {}, region)
        self.flush(region)
        if not blocked:
            self.release()
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


class CudaPrinter(Printer):
    dialect = "cuda"
    tid: ClassVar[dict] = {"x": "threadIdx.x", "y": "threadIdx.y", "z": "threadIdx.z"}

    def term(self, e: str, coef: int) -> str:
        """coef * e, in 64 bits where an index can pass 2^31 - 1; a literal
        index (an unrolled or vector lane) is folded: `16 * 2` prints `32`."""
        if _INT.fullmatch(e):
            return f"{coef * int(e.rstrip('L'))}{'L' if self.wide else ''}"
        if not self.wide:
            return e if coef == 1 else f"{coef} * {e}"
        return f"(long){e}" if coef == 1 else f"{coef}L * {e}"

    def var_base(self, owner: str) -> str:
        return ""  # registers are per thread

    def params(self) -> list[str]:
        out = super().params()
        if self.impl.global_temps:
            out.append("float* __restrict__ scratch")
        return out

    def loop(self, lp, env) -> None:
        if lp.kind == DimKind.LOOP:
            # a LOOP stays a loop: the bound's per-iteration chains rely on it
            self.line("#pragma unroll 1")
            return super().loop(lp, env)
        if lp.kind == DimKind.UNROLL:
            for u in range(lp.size):
                self.walk(lp, {**env, lp.id: str(u)})
            return
        if lp.kind == DimKind.VECTOR:
            for child in lp.children:
                self.vector(child.inst, lp, env)
            return
        hw = f"{'threadIdx' if lp.kind == 'THREAD' else 'blockIdx'}.{lp.hw}"
        self.walk(lp, {**env, lp.id: hw})

    def barrier(self, b) -> None:
        self.line(f"__syncthreads();  // {b.kind}: {', '.join(b.arrays)}")

    def _global(self, inst) -> bool:
        return is_global(self.impl, inst)

    def load(self, inst, addr) -> str:
        if not self._global(inst):
            return addr
        return f"{_LOAD[self.impl.cache[inst.name]]}(&{addr})"

    def store(self, inst, addr, value) -> str:
        if not prints_intrinsic(self.impl, inst):
            return f"{addr} = {value};"
        return f"{_STORE[self.impl.cache[inst.name]]}(&{addr}, {value});"

    def vector(self, inst, lp, env) -> None:
        ty, make, fields = _VEC[lp.size]
        lanes = [{**env, lp.id: str(u)} for u in range(lp.size)]
        base = self.address(inst, {**env, lp.id: "0"})
        cache = self.impl.cache[inst.name]
        g = self.guard(inst)
        glob = self._global(inst)
        if inst.op == "load":
            src = f"{_LOAD[cache]}(({ty} const*)&{base})" if glob \
                else f"*({ty} const*)&{base}"
            self.line(f"{g}{{ {ty} t_ = {src};  // {inst.name}")
            for f, e in zip(fields, lanes):
                self.line(f"  {self.result(inst, e)} = t_.{f};")
            self.line("}")
        else:
            vals = ", ".join(self.operand(inst, inst.operands[0], e) for e in lanes)
            fn = _STORE.get(cache) if glob else None
            ptr = f"({ty}*)&{base}"
            stmt = f"{fn}({ptr}, {make}({vals}));" if fn else f"*{ptr} = {make}({vals});"
            self.line(f"{g}{stmt}  // {inst.name}")

    def source(self) -> str:
        impl = self.impl
        bounds = f"__launch_bounds__({impl.threads()}) "
        head = f'extern "C" __global__ void {bounds}{self.name}({", ".join(self.params())}) {{'
        self.lines = [head]
        for owner, (_, n) in self.vars.items():
            self.line(f"float v_{owner}[{max(n, 1)}];")
        if impl.global_temps:
            self.line("const long block_ = (blockIdx.z * (long)gridDim.y + blockIdx.y) "
                      "* gridDim.x + blockIdx.x;")
        shared = [a for a in impl.temp_size if impl.mem_space[a] == MemSpace.SHARED]
        dynamic = dynamic_shared_bytes(impl) > 0
        if dynamic:  # above the static limit: one dynamic buffer, opted in at launch
            self.line("extern __shared__ __align__(16) float smem_[];")
        offset = 0
        for a in shared:
            n = _aligned(impl.temp_size[a])
            if dynamic:
                self.line(f"float* {a} = {_sum(['smem_', str(offset)])};")
            else:
                self.line(f"__shared__ __align__(16) float {a}[{n}];")
            offset += n
        offset = 0
        for a in impl.global_temps:
            n = _aligned(impl.temp_size[a])
            self.line(f"float* {a} = "
                      f"{_sum(['scratch', f'{offset * impl.blocks()}L', f'block_ * {n}'])};")
            offset += n
        self.walk(impl.root, {})
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


def shared_floats(impl: Implementation) -> int:
    return sum(_aligned(impl.temp_size[a]) for a in impl.temp_size
               if impl.mem_space[a] == MemSpace.SHARED)


def dynamic_shared_bytes(impl: Implementation) -> int:
    """Shared memory to request at launch: all of it once above the static limit."""
    b = 4 * shared_floats(impl)
    return b if b > STATIC_SHARED_BYTES else 0


def launch_config(impl: Implementation) -> dict:
    """What the host needs to launch the CUDA kernel."""
    scratch = sum(_aligned(impl.temp_size[a]) for a in impl.global_temps) * impl.blocks()
    return {"grid": list(impl.grid_dim), "block": list(impl.block_dim),
            "shared_bytes": 4 * shared_floats(impl),
            "dynamic_shared_bytes": dynamic_shared_bytes(impl), "scratch_floats": scratch}
