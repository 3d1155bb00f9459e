"""An independent checker of fixed assignments.

It evaluates the *parsed specification* directly on a full assignment: every
`require`, every `requires` of the value taken, counters recomputed from their
terms, quotient sets recomputed from their definition (first member of each
class), and triggers (their condition holds exactly when they fired). It does
not use the lowering, the literals or the propagators, so it can judge them.
"""

from __future__ import annotations

from ..errors import SpaceError
from . import ast
from .snippet import CMP_OPS
from .space import Space


class Checker:
    def __init__(self, space: Space, sets, assignment: dict, fired: frozenset = frozenset()):
        """`sets` are the KernelSets of the (lowered) kernel; `assignment` maps
        (choice, objects) to a value name (integers as str) for every visible
        enum/integer choice instance, in either orientation for mirrored ones."""
        self.space = space
        self.sets = sets
        self.a = assignment
        self.fired = fired
        self.violations: list[str] = []

    # ---------------------------------------------------------- bindings
    def members(self, setref: ast.SetRef, env):
        info = self.space.sets[setref.name]
        if info.quotient is not None:
            return self.quotient_members(info.quotient, env, setref.arg)
        return self.sets.members(setref.name, env, setref.arg)

    def bindings(self, foralls, env, ids, roots):
        if not foralls:
            yield env, ids
            return
        b = foralls[0]
        root = self.space.root(b.set.name)
        for i, o in self.members(b.set, env):
            if (root, i) in roots:
                continue
            yield from self.bindings(foralls[1:], {**env, b.var: o}, {**ids, b.var: i},
                                     roots | {(root, i)})

    # ------------------------------------------------------------ values
    def value(self, ref: ast.ChoiceRef, env, ids):
        info = self.space.choices[ref.name]
        objs = tuple(ids[a] for a in ref.args)
        if info.kind == "counter":
            return self.counter(info, objs, env, ids, ref)
        if info.hidden:
            raise SpaceError(f"checker: {ref.name} is internal")
        if (ref.name, objs) in self.a:
            v = self.a[(ref.name, objs)]
        else:
            v = self.a[(ref.name, objs[::-1])]
            if info.inverse is not None:
                v = info.values[info.inverse[info.values.index(v)]]
        return int(v) if info.kind == "integer" else v

    def counter(self, info, objs, env, ids, ref):
        g = next(c for c in self.space.counters if c.choice == info.name)
        cenv = dict(env)
        cids = dict(ids)
        for p, a, o in zip(g.params, ref.args, objs):
            cenv[p.var] = env[a]
            cids[p.var] = o
        total = 1 if g.op == "mul" else 0
        roots = {(self.space.root(p.set.name), cids[p.var]) for p in g.params}
        src = self.space.source_counters[info.name]  # quotient sets as written, not lowered
        for tenv, tids in self.bindings(src.foralls, cenv, cids, roots):
            if all(self.holds(c, tenv, tids) for c in src.conditions):
                x = int(self.operand(src.value, tenv, tids))
                total = total * x if g.op == "mul" else total + x
        return total

    def quotient_members(self, q: ast.QuotientDef, env, arg):
        if q.param is not None:
            env = {**env, q.param.var: env[arg]}
        ids = {k: _id(v) for k, v in env.items() if k != "fun"}
        out = []
        for i, o in self.sets.members(q.item.set.name, env):
            e2, i2 = {**env, q.item.var: o}, {**ids, q.item.var: i}
            if not all(self.holds(c, e2, i2) for c in q.conditions):
                continue
            rel = ast.ChoiceRef(q.relation, (q.item.var, "__rep"))
            if any(self.value(rel, {**e2, "__rep": ro}, {**i2, "__rep": ri}) == q.relation_value
                   for ri, ro in out):
                continue
            out.append((i, o))
        return out

    def operand(self, x, env, ids):
        """Value of a choice reference, an integer literal or a snippet."""
        if isinstance(x, ast.ChoiceRef):
            return self.value(x, env, ids)
        if isinstance(x, ast.Const):
            return x.value
        return x(env)

    def holds(self, cond, env, ids) -> bool:
        if isinstance(cond, ast.SnippetCond):
            return bool(cond.snippet(env)) != cond.negated
        if isinstance(cond, ast.IsCond):
            info = self.space.choices[cond.ref.name]
            allowed = set()
            for n in cond.values:
                allowed |= set(info.aliases.get(n, (n,)))
            return (self.value(cond.ref, env, ids) in allowed) != cond.negated
        lhs, rhs = self.operand(cond.lhs, env, ids), self.operand(cond.rhs, env, ids)
        for coll, other in ((rhs, lhs), (lhs, rhs)):
            if isinstance(coll, (list, tuple, set, frozenset, range)):
                inside = other in {int(c) for c in coll}
                return inside if cond.op == "==" else not inside
        return CMP_OPS[cond.op](lhs, rhs)

    # ------------------------------------------------------------- check
    def check(self) -> list[str]:
        sp = self.space.source
        for c in sp.constraints:
            self._forall(c.foralls, c.conditions, c.name, {}, {})
        for ch in sp.choices:
            for v in tuple(ch.values) + tuple(ch.aliases):
                for req in v.requires:
                    me = ast.IsCond(ast.ChoiceRef(ch.name, tuple(b.var for b in ch.params)),
                                    (v.name,), True)
                    self._forall(tuple(ch.params) + req.foralls, (me,) + req.conditions,
                                 req.name, {}, {})
        for t_index, t in enumerate(sp.triggers):
            for env, ids in self.bindings(t.foralls, {"fun": self.sets.kernel}, {}, frozenset()):
                key = (t_index, tuple(ids[b.var] for b in t.foralls))
                cond = all(self.holds(c, env, ids) for c in t.conditions)
                if cond != (key in self.fired):
                    self.violations.append(f"trigger {t.action} on {key[1]}: condition "
                                           f"{'holds' if cond else 'fails'} but it "
                                           f"{'did' if key in self.fired else 'did not'} fire")
        return self.violations

    def _forall(self, foralls, conds, name, env, ids):
        env = {"fun": self.sets.kernel, **env}
        for e, i in self.bindings(tuple(foralls), env, ids, frozenset()):
            if not any(self.holds(c, e, i) for c in conds):
                objs = ", ".join(f"${k}={v}" for k, v in i.items())
                self.violations.append(f"{name}: {' || '.join(map(str, conds))} fails for {objs}")


def _id(o):
    return o if isinstance(o, str) else o.name


def check_candidate(cand) -> list[str]:
    """Violations of a fixed candidate, according to the specification alone."""
    if not cand.is_fixed:
        raise SpaceError("check_candidate needs a fixed candidate")
    p = cand.problem
    return Checker(cand.space, p.sets, {k: v for k, v in cand.assignment().items()},
                   p.fired).check()
