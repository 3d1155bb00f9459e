"""Statements and instance-wise dependences as islpy sets and maps.

A `PolyProgram` is what the fusion conflict graph and Affine-MARS work on:
statements with their iteration domains (parametric, e.g. `[N] -> { S1[i, j]
: 0 <= i, j < N }`), and dependences `S1[x] -> S2[y]` between instances.
`from_kernel` derives one from a workbench kernel at the level of *logical*
dimensions (the strip-mined levels of one logical dimension are one loop
of the original program): point-to-point operands give flow dependences on
the paired dimensions, the last iteration along the producer's other
dimensions; a reduction depends on itself one step back along the reduced
dimensions and on its initialiser at the first step; memory orderings
(`after`) relate every instance pair. Sizes become parameters, so a
dependence on "the last iteration" is a parametric one that no constant shift
absorbs, as in Pluto.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from ..errors import WorkbenchError


@dataclass(frozen=True)
class Statement:
    name: str
    dims: tuple  # iterator names, outermost first
    domain: isl.Set

    @property
    def depth(self) -> int:
        return len(self.dims)


@dataclass(frozen=True)
class Dependence:
    source: str
    target: str
    relation: isl.Map  # source instance -> target instance
    kind: str = "flow"  # flow | reduction | order | input
    name: str = ""

    def __str__(self) -> str:
        return self.name or f"{self.kind} {self.source} -> {self.target}"


@dataclass
class PolyProgram:
    statements: dict  # name -> Statement, in program (textual) order
    dependences: list = field(default_factory=list)
    params: tuple = ()
    sizes: dict = field(default_factory=dict)  # parameter -> value (kernels: the sizes)

    @classmethod
    def from_isl(cls, domains: dict, dependences: dict, kinds: dict | None = None,
                 ) -> PolyProgram:
        """`domains`: statement -> isl set text; `dependences`: name -> isl map
        text `S1[..] -> S2[..]` (restricted to the domains)."""
        stmts = {}
        params: list = []
        for name, text in domains.items():
            try:
                s = isl.Set(text)
            except isl.Error as exc:
                raise WorkbenchError(f"domain of {name}: {exc}") from None
            if s.get_tuple_name() != name:
                raise WorkbenchError(f"domain of {name} names the tuple "
                                     f"{s.get_tuple_name()!r}")
            dims = tuple(s.get_dim_name(isl.dim_type.set, k) or f"i{k}"
                         for k in range(s.dim(isl.dim_type.set)))
            stmts[name] = Statement(name, dims, s)
            params += [p for p in s.get_var_names(isl.dim_type.param) if p not in params]
        prog = cls(stmts, [], tuple(params))
        for dname, text in dependences.items():
            try:
                m = isl.Map(text)
            except isl.Error as exc:
                raise WorkbenchError(f"dependence {dname}: {exc}") from None
            src, dst = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)
            if src not in stmts or dst not in stmts:
                raise WorkbenchError(f"dependence {dname} relates {src} and {dst}; "
                                     f"statements are {', '.join(stmts)}")
            prog.add(Dependence(src, dst, m, (kinds or {}).get(dname, "flow"), dname))
        return prog

    def add(self, dep: Dependence) -> None:
        src, dst = self.statements[dep.source], self.statements[dep.target]
        rel = dep.relation.align_params(src.domain.get_space()) \
            .align_params(dst.domain.get_space())
        space = rel.get_space()  # the domains with the parameters in one order
        rel = rel.intersect_domain(src.domain.align_params(space)) \
            .intersect_range(dst.domain.align_params(space))
        if not rel.is_empty():
            self.dependences.append(Dependence(dep.source, dep.target, rel, dep.kind, dep.name))

    def between(self, a: str, b: str, deps: list | None = None) -> list:
        """Dependences (of `deps`, default all) with both ends in {a, b}
        (eq. 10 of pluto-lp-dfp)."""
        return [d for d in (self.dependences if deps is None else deps)
                if {d.source, d.target} <= {a, b}]


# ------------------------------------------------------------------ kernels
def from_kernel(kernel) -> PolyProgram:
    """The logical-dimension program of a workbench kernel (see the module
    docstring). Statement dims are the logical dimensions of each
    instruction, in the order of its first iteration dimension of each."""
    insts = list(kernel.instructions())
    logical_of: dict = {}
    for inst in insts:
        seen = []
        for d in inst.dims:
            if d.logical.name not in seen:
                seen.append(d.logical.name)
        logical_of[inst.name] = seen
    sizes = {ld.name: ld.size for ld in kernel.logical_dims()}
    params = sorted({f"N_{n}" for names in logical_of.values() for n in names})

    def dom(inst):
        names = logical_of[inst.name]
        cons = " and ".join(f"0 <= {n} < N_{n}" for n in names) or "true"
        return (f"[{', '.join(params)}] -> {{ {inst.name}[{', '.join(names)}] : {cons} "
                + "".join(f" and N_{n} >= 2" for n in names) + " }")

    prog = PolyProgram.from_isl({i.name: dom(i) for i in insts}, {})
    prog.sizes = {f"N_{n}": s for n, s in sizes.items()}  # the kernel's parameter values
    by_name = {i.name: i for i in insts}
    for inst in insts:
        for op in inst.operands:
            if op.kind == "inst" and op.source in by_name:  # lowered or not: same values
                _p2p(prog, by_name[op.source], inst, op, logical_of, params, f"{op.source}->"
                     f"{inst.name}")
            elif op.kind == "reduce":
                red = sorted({d.logical.name for d in op.dims})
                _reduction(prog, inst, by_name.get(op.source), red, logical_of, params)
        for before in inst.after:
            if before in by_name:
                prog.add(Dependence(before, inst.name, _all_pairs(
                    by_name[before], inst, logical_of, params), "order",
                    f"{before}=>{inst.name}"))
    return prog


def _tuple(inst, logical_of, prime="") -> str:
    return f"{inst.name}[{', '.join(n + prime for n in logical_of[inst.name])}]"


def _all_pairs(src, dst, logical_of, params) -> isl.Map:
    return isl.Map(f"[{', '.join(params)}] -> {{ {_tuple(src, logical_of, 's')} -> "
                   f"{_tuple(dst, logical_of, 't')} }}")


def _p2p(prog, src, dst, op, logical_of, params, name) -> None:
    """Consumer instance reads the producer instance equal on shared and
    paired logical dimensions, at the last iteration of its other ones."""
    paired = {}
    for a, b in op.pairs:
        paired[a.logical.name] = b.logical.name
    shared = {d.logical.name for d in src.dims if d in dst.dims}
    cons = []
    for n in logical_of[src.name]:
        if n in shared:
            cons.append(f"{n}s = {n}t")
        elif n in paired:
            cons.append(f"{n}s = {paired[n]}t")
        else:
            cons.append(f"{n}s = N_{n} - 1")
    text = (f"[{', '.join(params)}] -> {{ {_tuple(src, logical_of, 's')} -> "
            f"{_tuple(dst, logical_of, 't')} : {' and '.join(cons) or 'true'} }}")
    prog.add(Dependence(src.name, dst.name, isl.Map(text), "flow", name))


def _reduction(prog, inst, init, reduced, logical_of, params) -> None:
    names = logical_of[inst.name]
    # one step back along the innermost reduced dimension that moves, the
    # others held (a lexicographic predecessor over the reduced dims)
    cons = []
    for k, r in enumerate(reduced):
        eq = [f"{n}s = {n}t" for n in names if n not in reduced[k:]]
        tail = [f"{q}s = N_{q} - 1 and {q}t = 0" for q in reduced[k + 1:]]
        cons.append("(" + " and ".join([*eq, f"{r}s = {r}t - 1", *tail]) + ")")
    text = (f"[{', '.join(params)}] -> {{ {_tuple(inst, logical_of, 's')} -> "
            f"{_tuple(inst, logical_of, 't')} : {' or '.join(cons)} }}")
    prog.add(Dependence(inst.name, inst.name, isl.Map(text), "reduction",
                        f"{inst.name} reduction"))
    if init is not None:
        shared = {d.logical.name for d in init.dims if d in inst.dims}
        shared |= {a.logical.name for o in inst.operands if o.kind == "reduce"
                   for a, _ in o.pairs}  # an initialisation nest of its own
        c = [f"{n}s = {n}t" for n in logical_of[init.name] if n in shared]
        c += [f"{r}t = 0" for r in reduced]
        text = (f"[{', '.join(params)}] -> {{ {_tuple(init, logical_of, 's')} -> "
                f"{_tuple(inst, logical_of, 't')} : {' and '.join(c)} }}")
        prog.add(Dependence(init.name, inst.name, isl.Map(text), "flow",
                            f"{init.name}->{inst.name}"))


def fix_sizes(obj, sizes: dict):
    """`obj` (isl set or map) with its size parameters set to `sizes` and
    then dropped."""
    for name, v in sizes.items():
        k = obj.find_dim_by_name(isl.dim_type.param, name)
        if k >= 0:
            obj = obj.fix_val(isl.dim_type.param, k, v)
    return obj.project_out(isl.dim_type.param, 0, obj.dim(isl.dim_type.param))


def input_dependences(kernel) -> list:
    """Pairs of load instances reading the same element of an input array
    (read-after-read: no ordering, but shared data for footprints), at the
    kernel's sizes (the strides are those of these sizes)."""
    prog = from_kernel(kernel)
    loads = [i for i in kernel.instructions() if i.op == "load" and i.array is not None]
    out = []
    for a in loads:
        for b in loads:
            if a.array is not b.array or a.name > b.name:
                continue
            acc = [fix_sizes(_access(x, prog), prog.sizes) for x in (a, b)]
            rel = acc[0].apply_range(acc[1].reverse())
            if a is b:
                rel = rel.subtract(isl.Map.identity(rel.get_space()))
            if not rel.is_empty():
                out.append(Dependence(a.name, b.name, rel, "input",
                                      f"{a.name}~{b.name} ({a.array.name})"))
    return out


def _access(inst, prog) -> isl.Map:
    st = prog.statements[inst.name]
    terms = [f"{inst.array.strides.get(n, 0)}*{n}" for n in st.dims]
    params = ", ".join(prog.params)
    return isl.Map(f"[{params}] -> {{ {inst.name}[{', '.join(st.dims)}] -> "
                   f"{inst.array.name}[{' + '.join(terms) or '0'}] }}") \
        .intersect_domain(st.domain)


__all__ = ["Dependence", "PolyProgram", "Statement", "fix_sizes", "from_kernel",
           "input_dependences"]
