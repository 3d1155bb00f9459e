"""Printers of a control-flow tree (thesis §4.4.4): CUDA C and reference C.

Both walk the same `Implementation.tree` with the same variables and
addresses. CUDA erases parallel loops (BLOCK → blockIdx, THREAD → threadIdx,
with a guard on each instruction and `__syncthreads()` after each thread
loop), prints unrolled loops once per iteration with literal indices, and
vectorised accesses as float2/float4 instructions with their cache directive.
The C dialect keeps every loop as a sequential `for` (a thread loop runs its
threads one after the other) and indexes variables by thread loops too, so
that values handed from one thread loop to another stay per thread.
"""

from __future__ import annotations

import math

from .tree import Implementation, Leaf

_LOAD = {"L1": "__ldca", "L2": "__ldcg", "READ_ONLY": "__ldg", "NONE": "__ldcv"}
_STORE = {"L2": "__stcg", "NONE": "__stwt"}
_VEC = {2: ("float2", "make_float2", "xy"), 4: ("float4", "make_float4", "xyzw")}


def _float(x: float) -> str:
    return f"{float(x)!r}f"


class Printer:
    dialect = "c"
    instance_kinds = ("UNROLL", "VECTOR", "THREAD")

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
            parts.append(e if coef == 1 else f"{coef} * {e}")
        return " + ".join(parts) if parts else "0"

    def var_ref(self, owner: str, index_of) -> str:
        dims, _ = self.vars[owner]
        terms, stride = [], 1
        for d in reversed(dims):
            terms.append((index_of(d), stride))
            stride *= self.impl.size[d.name]
        parts = [e if c == 1 else f"{c} * {e}" for e, c in reversed(terms)]
        return f"v_{owner}[{' + '.join(parts) if parts else '0'}]"

    def result(self, inst, env) -> str:
        owner = self.impl.var_owner(inst)
        return self.var_ref(owner.name, lambda d: self.idx(d, env))

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

    # -------------------------------------------------------------- walk
    def walk(self, node, env, in_thread=False) -> None:
        for child in node.children:
            if isinstance(child, Leaf):
                self.instruction(child.inst, env, in_thread)
            else:
                self.loop(child, env, in_thread)

    def loop(self, lp, env, in_thread) -> None:
        v = f"i{lp.id}"
        outer_block = lp.kind == "BLOCK" and lp.parent is self.impl.root
        if outer_block:
            # blocks are independent: with OpenMP they run on every core,
            # each with its own variables and temporaries (declared inside)
            self.line("#pragma omp parallel for schedule(static)")
        self.line(f"for (int {v} = 0; {v} < {lp.size}; ++{v}) {{  // {lp.kind} "
                  f"{', '.join(f'{d.name}:{d.label}' for d in lp.dims)}")
        self.depth += 1
        if outer_block:
            self.declare()
        self.walk(lp, {**env, lp.id: v}, in_thread or lp.kind == "THREAD")
        if outer_block:
            self.release()
        self.depth -= 1
        self.line("}")

    def declare(self) -> None:
        for owner, (_, n) in self.vars.items():
            self.line(f"float* v_{owner} = (float*)calloc({max(n, 1)}, sizeof(float));")
        for a, n in self.impl.temp_size.items():
            self.line(f"float* {a} = (float*)calloc({max(n, 1)}, sizeof(float));")

    def release(self) -> None:
        for owner in self.vars:
            self.line(f"free(v_{owner});")
        for a in self.impl.temp_size:
            self.line(f"free({a});")

    def instruction(self, inst, env, in_thread) -> None:
        self.line(self.statement(inst, env) + f"  // {inst.name}")

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
        blocked = any(lp.kind == "BLOCK" for lp in self.impl.root.children
                      if not isinstance(lp, Leaf))
        if not blocked:
            self.declare()
        self.walk(self.impl.root, {})
        if not blocked:
            self.release()
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


class CudaPrinter(Printer):
    dialect = "cuda"
    instance_kinds = ("UNROLL", "VECTOR")

    def params(self) -> list[str]:
        out = super().params()
        if self.impl.global_temps:
            out.append("float* __restrict__ scratch")
        return out

    def loop(self, lp, env, in_thread) -> None:
        if lp.kind == "LOOP":
            # a LOOP stays a loop: the bound's per-iteration chains rely on it
            self.line("#pragma unroll 1")
            return super().loop(lp, env, in_thread)
        if lp.kind == "UNROLL":
            for u in range(lp.size):
                self.walk(lp, {**env, lp.id: str(u)}, in_thread)
            return
        if lp.kind == "VECTOR":
            for child in lp.children:
                self.vector(child.inst, lp, env)
            return
        hw = f"{'threadIdx' if lp.kind == 'THREAD' else 'blockIdx'}.{lp.hw}"
        self.walk(lp, {**env, lp.id: hw}, in_thread or lp.kind == "THREAD")
        if lp.kind == "THREAD":
            self.line("__syncthreads();")

    def guard(self, inst) -> str:
        conds = []
        by_hw = {lp.hw: lp for lp in self.impl.ancestors(inst) if lp.kind == "THREAD"}
        output = inst.op == "store" and not inst.array.temporary
        for h, n in zip("xyz", self.impl.block_dim):
            lp = by_hw.get(h)
            if lp is not None and lp.size < n:
                conds.append(f"threadIdx.{h} < {lp.size}")
            elif lp is None and output and n > 1:
                conds.append(f"threadIdx.{h} == 0")  # one write per element
        return f"if ({' && '.join(conds)}) " if conds else ""

    def instruction(self, inst, env, in_thread) -> None:
        self.line(self.guard(inst) + self.statement(inst, env) + f"  // {inst.name}")
        if inst.is_mem() and inst.array.temporary and not in_thread:
            self.line("__syncthreads();")  # redundant threads share the slot

    def _global(self, inst) -> bool:
        return not (inst.array.temporary and self.impl.mem_space[inst.array.name] == "SHARED")

    def load(self, inst, addr) -> str:
        if not self._global(inst):
            return addr
        return f"{_LOAD[self.impl.cache[inst.name]]}(&{addr})"

    def store(self, inst, addr, value) -> str:
        if not self._global(inst) or self.impl.cache[inst.name] not in _STORE:
            return f"{addr} = {value};"
        return f"{_STORE[self.impl.cache[inst.name]]}(&{addr}, {value});"

    def vector(self, inst, lp, env) -> None:
        ty, make, fields = _VEC[lp.size]
        lanes = [{**env, lp.id: str(u)} for u in range(lp.size)]
        base = self.address(inst, {**env, lp.id: "0"})
        cache = self.impl.cache[inst.name]
        g = self.guard(inst)
        if inst.op == "load":
            fn = _LOAD[cache]
            self.line(f"{g}{{ {ty} t_ = {fn}(({ty} const*)&{base});  // {inst.name}")
            for f, e in zip(fields, lanes):
                self.line(f"  {self.result(inst, e)} = t_.{f};")
            self.line("}")
        else:
            vals = ", ".join(self.operand(inst, inst.operands[0], e) for e in lanes)
            fn = _STORE.get(cache)
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
        offset = 0
        if impl.global_temps:
            self.line("const long block_ = (blockIdx.z * (long)gridDim.y + blockIdx.y) "
                      "* gridDim.x + blockIdx.x;")
        for a, n in impl.temp_size.items():
            if impl.mem_space[a] == "SHARED":
                self.line(f"__shared__ float {a}[{max(n, 1)}];")
            else:
                self.line(f"float* {a} = scratch + {offset} * {impl.blocks()}L "
                          f"+ block_ * {max(n, 1)};")
                offset += max(n, 1)
        self.walk(impl.root, {})
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"


def launch_config(impl: Implementation) -> dict:
    """What the host needs to launch the CUDA kernel."""
    scratch = sum(max(impl.temp_size[a], 1) for a in impl.global_temps) * impl.blocks()
    return {"grid": list(impl.grid_dim), "block": list(impl.block_dim),
            "shared_bytes": 4 * impl.shared_floats, "scratch_floats": scratch}
