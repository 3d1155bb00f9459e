"""The fusion conflict graph (pluto-lp-dfp §3.3, Algorithm 5) and its
convex colouring (§3.4, Algorithm 6).

A vertex is one dimension of one statement. An edge between S^i and T^j says
that dimension i of S and dimension j of T cannot be fused *and* permuted to
the outermost level: the pairwise Pluto constraints — for every dependence
between S and T (and within each), φ_T(y) − φ_S(x) ≥ 0 over the dependence
polyhedron, with φ_S = c_S^i·x_i + c_S^0, c_S^i ≥ 1, every other coefficient
of S (and of T) zero — have no rational solution. The universally quantified
constraint becomes linear through the affine form of Farkas' lemma (one
multiplier per constraint of each basic map), and feasibility is decided by
SciPy's HiGHS LP solver. A self edge (permute-preventing) is the same test
on a statement's own dependences.

Colouring gives one colour per loop level, outermost first: SCCs of the
dependence graph in topological order, each statement of an SCC taking a
dimension with no edge to what the level already holds in its fused group;
when an SCC cannot be coloured the program is cut (distributed) before it,
the dependences the cut satisfies are dropped and the graph rebuilt.
Dependences satisfied by a level are dropped before the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import islpy as isl
import numpy as np

from ..errors import WorkbenchError
from .deps import PolyProgram, from_kernel

_T = isl.dim_type


# ------------------------------------------------------------------ the LP
def _coords(bm: isl.BasicMap) -> list:
    return ([(_T.param, k) for k in range(bm.dim(_T.param))]
            + [(_T.in_, k) for k in range(bm.dim(_T.in_))]
            + [(_T.out, k) for k in range(bm.dim(_T.out))]
            + [(_T.div, k) for k in range(bm.dim(_T.div))])


def fusable(deps: list, dims: dict) -> bool:
    """Is there φ_S = c_S·x_{dims[S]} + c_S^0 (c_S ≥ 1; every statement in
    `dims`, every other coefficient zero) with φ_target − φ_source ≥ 0 on
    every dependence of `deps`? (the relaxed, rational problem)"""
    from scipy.optimize import linprog
    stmts = sorted(dims)
    var = {}  # ("c", S) / ("s", S) -> column
    for s in stmts:
        var[("c", s)] = len(var)
        var[("s", s)] = len(var)
    rows, rhs, bounds = [], [], []
    n_coef = len(var)
    lam_cols = 0
    blocks = []
    for dep in deps:
        if dep.source not in dims or dep.target not in dims:
            continue
        for bm in dep.relation.get_basic_maps():
            cons = bm.get_constraints()
            blocks.append((dep, bm, cons, n_coef + lam_cols))
            lam_cols += len(cons) + 1  # + λ0 for the constant
    if not blocks:
        return True
    ncols = n_coef + lam_cols
    for dep, bm, cons, base in blocks:
        ds, dt = dims[dep.source], dims[dep.target]
        for t, k in _coords(bm) + [("const", 0)]:
            row = np.zeros(ncols)
            # coefficient of this coordinate in f = φ_target(y) − φ_source(x)
            if t == _T.in_ and k == ds:
                row[var[("c", dep.source)]] -= 1
            if t == _T.out and k == dt:
                row[var[("c", dep.target)]] += 1
            if t == "const":
                row[var[("s", dep.target)]] += 1
                row[var[("s", dep.source)]] -= 1
                row[base + len(cons)] -= 1  # λ0
            for r, c in enumerate(cons):
                a = (c.get_constant_val() if t == "const"
                     else c.get_coefficient_val(t, k)).to_python()
                row[base + r] -= float(a)
            rows.append(row)
            rhs.append(0.0)
    for _s in stmts:
        bounds += [(1, None), (None, None)]
    for _dep, _bm, cons, _base in blocks:
        bounds += [(None, None) if c.is_equality() else (0, None) for c in cons] + [(0, None)]
    res = linprog(np.zeros(ncols), A_eq=np.array(rows), b_eq=np.array(rhs), bounds=bounds,
                  method="highs")
    if res.status not in (0, 2):
        raise WorkbenchError(f"LP solver: {res.message}")
    return res.status == 0


# ------------------------------------------------------------------ the graph
@dataclass
class FCG:
    vertices: list  # (statement, dim index)
    edges: dict = field(default_factory=dict)  # frozenset{u, v} (or {v}) -> reason
    dims: dict = field(default_factory=dict)  # statement -> dim names

    def conflict(self, u, v) -> bool:
        return frozenset((u, v)) in self.edges

    def permute_preventing(self, v) -> bool:
        return frozenset((v,)) in self.edges

    def why(self, u, v) -> str:
        """Why S^i and T^j cannot be fused (the dependences that forbid it)."""
        if u[0] == v[0]:
            return "two dimensions of one statement are never fused"
        return self.edges.get(frozenset((u, v)), "")

    def name(self, v) -> str:
        return f"{v[0]}.{self.dims[v[0]][v[1]]}"

    def to_dict(self) -> dict:
        return {"vertices": [self.name(v) for v in self.vertices],
                "edges": [{"between": sorted(self.name(v) for v in e), "why": r}
                          for e, r in self.edges.items()]}


def build_fcg(prog: PolyProgram, deps: list | None = None) -> FCG:
    """Algorithm 5 on `deps` (default: every non-input dependence)."""
    deps = [d for d in (prog.dependences if deps is None else deps) if d.kind != "input"]
    g = FCG([(s, k) for s, st in prog.statements.items() for k in range(st.depth)],
            dims={s: st.dims for s, st in prog.statements.items()})
    for s, st in prog.statements.items():
        own = [d for d in deps if d.source == s and d.target == s]
        for k in range(st.depth):
            if own and not fusable(own, {s: k}):
                g.edges[frozenset(((s, k),))] = _reason(own, {s: k})
    names = list(prog.statements)
    for a_i, a in enumerate(names):
        for b in names[a_i + 1:]:
            pair = prog.between(a, b, deps)
            if not any({d.source, d.target} == {a, b} for d in pair):
                continue  # not connected in the dependence graph
            for i in range(prog.statements[a].depth):
                for j in range(prog.statements[b].depth):
                    if not fusable(pair, {a: i, b: j}):
                        g.edges[frozenset(((a, i), (b, j)))] = _reason(pair, {a: i, b: j})
    return g


def _reason(deps, dims) -> str:
    alone = [str(d) for d in deps if not fusable([d], dims)]
    return ("violates " + ", ".join(alone)) if alone else \
        "violates " + " and ".join(str(d) for d in deps) + " together"


# ------------------------------------------------------------------ colouring
def sccs(prog: PolyProgram, deps: list) -> list:
    """Strongly connected components of the dependence graph, in a
    topological order (ties by textual order)."""
    names = list(prog.statements)
    succ = {s: set() for s in names}
    for d in deps:
        if d.kind != "input" and d.source != d.target:
            succ[d.source].add(d.target)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v], key=names.index):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp, key=names.index))
    for v in names:
        if v not in index:
            visit(v)
    comps.reverse()  # Tarjan emits sinks first
    # stable topological order: repeatedly the first component (textual
    # order) whose predecessors are all placed
    comp_of = {s: k for k, c in enumerate(comps) for s in c}
    preds = {k: {comp_of[d.source] for d in deps if d.kind != "input"
                 and comp_of.get(d.target) == k and comp_of[d.source] != k}
             for k in range(len(comps))}
    order, placed = [], set()
    while len(order) < len(comps):
        k = min((k for k in range(len(comps)) if k not in placed and preds[k] <= placed),
                key=lambda k: names.index(comps[k][0]))
        order.append(comps[k])
        placed.add(k)
    return order


@dataclass
class Colouring:
    levels: list  # per level: {statement: dim index or None (not in this level)}
    groups: list  # per level: list of lists of statements fused at that level
    cuts: list  # (level, statements before the cut, statements after)
    dims: dict

    def permutation(self, s: str) -> list:
        """Dimension names of statement s, outermost first."""
        return [self.dims[s][lv[s]] for lv in self.levels if lv.get(s) is not None]

    def fused(self, level: int) -> list:
        return [[f"{s}.{self.dims[s][self.levels[level][s]]}" for s in g
                 if self.levels[level].get(s) is not None] for g in self.groups[level]]

    def to_dict(self) -> dict:
        return {"levels": [{s: (self.dims[s][d] if d is not None else None)
                            for s, d in lv.items()} for lv in self.levels],
                "fused": [self.fused(k) for k in range(len(self.levels))],
                "permutations": {s: self.permutation(s) for s in self.dims},
                "cuts": [{"level": lv, "before": a, "after": b} for lv, a, b in self.cuts]}


def colour(prog: PolyProgram, max_colours: int | None = None) -> Colouring:
    """Algorithm 6: one colour (loop level) at a time, SCC by SCC."""
    deps = [d for d in prog.dependences if d.kind != "input"]
    depth = {s: st.depth for s, st in prog.statements.items()}
    max_colours = max_colours or max(depth.values(), default=0)
    used = {s: set() for s in prog.statements}
    comps = sccs(prog, deps)
    groups = [[s for c in comps for s in c]]  # fused groups, split by cuts
    levels, level_groups, cuts = [], [], []
    for level in range(max_colours):
        fcg = build_fcg(prog, deps)
        chosen: dict = {}
        new_groups = []
        for group in groups:
            gcomps = [c for c in comps if c[0] in group]
            current: list = []  # statements of this group coloured so far at this level
            for i, comp in enumerate(gcomps):
                pick = _colour_scc(comp, current, chosen, fcg, used, depth)
                if pick is None and current:
                    # cut before this SCC: everything before it runs first
                    before = [s for c in gcomps[:i] for s in c]
                    cuts.append((level, before, [s for c in gcomps[i:] for s in c]))
                    deps = [d for d in deps if not (d.source in before
                                                    and d.target not in before)]
                    new_groups.append(current)
                    current = []
                    fcg = build_fcg(prog, deps)
                    pick = _colour_scc(comp, current, chosen, fcg, used, depth)
                if pick is not None:
                    chosen.update(pick)
                    current += comp
                else:
                    for s in comp:
                        chosen[s] = None  # no dimension of s at this level
                    current += comp
            new_groups.append(current)
        groups = [g for g in new_groups if g]
        for s, k in chosen.items():
            if k is not None:
                used[s].add(k)
        levels.append({s: chosen.get(s) for s in prog.statements})
        level_groups.append([list(g) for g in groups])
        deps = _unsatisfied(deps, chosen, groups)
        if all(len(used[s]) == depth[s] for s in prog.statements):
            break
    return Colouring(levels, level_groups, cuts, {s: st.dims for s, st in
                                                   prog.statements.items()})


def _colour_scc(comp, current, chosen, fcg, used, depth):
    """A dimension per statement of `comp`, none conflicting with the
    vertices already of this colour in the group (`current`), nor with each
    other; lowest dimensions first. None if impossible."""
    taken = [(s, chosen[s]) for s in current if chosen.get(s) is not None]
    done = [s for s in comp if len(used[s]) == depth[s]]  # no dimension left to place
    comp = [s for s in comp if s not in done]

    def rec(k, picked):
        if k == len(comp):
            return {**{s: None for s in done}, **picked}
        s = comp[k]
        for d in range(depth[s]):
            v = (s, d)
            if d in used[s] or fcg.permute_preventing(v):
                continue
            if any(fcg.conflict(v, u) for u in taken + list(picked.items())):
                continue
            picked[s] = d
            out = rec(k + 1, picked)
            if out is not None:
                return out
            del picked[s]
        return None
    return rec(0, {})


def _unsatisfied(deps, chosen, groups) -> list:
    """Dependences still to respect below this level: within a fused group,
    the instances where the level's dimensions are equal (or, without a shift,
    not yet ordered); a dependence between two groups was satisfied by the cut."""
    group_of = {s: k for k, g in enumerate(groups) for s in g}
    out = []
    for d in deps:
        if group_of.get(d.source) != group_of.get(d.target):
            continue
        i, j = chosen.get(d.source), chosen.get(d.target)
        if i is None or j is None:
            out.append(d)
            continue
        rel = d.relation
        c = isl.Constraint.inequality_alloc(rel.get_space())  # y_j - x_i <= 0
        c = c.set_coefficient_val(_T.out, j, -1).set_coefficient_val(_T.in_, i, 1)
        rel = rel.add_constraint(c)
        if not rel.is_empty():
            out.append(type(d)(d.source, d.target, rel, d.kind, d.name))
    return out


@lru_cache(maxsize=32)
def kernel_fcg(kernel) -> tuple[PolyProgram, FCG]:
    """The kernel's polyhedral program and its fusion conflict graph, built
    once per kernel (the FCG propagator and the explorer share it)."""
    prog = from_kernel(kernel)
    return prog, build_fcg(prog)


@lru_cache(maxsize=32)
def kernel_colouring(kernel) -> Colouring:
    """`colour` of the kernel's program, once per kernel."""
    return colour(kernel_fcg(kernel)[0])


__all__ = ["FCG", "Colouring", "build_fcg", "colour", "fusable", "kernel_colouring",
           "kernel_fcg", "sccs"]
