"""Instantiation of a decision space for one kernel (thesis Definition 3.6).

A `Problem` holds everything that depends on the kernel but not on the
decisions: the objects of every set, one variable per choice instance, and the
propagator instances with the variables they watch. Candidates of the same
kernel share one Problem; a trigger that adds objects gives a new Problem for
the extended kernel (cached, so replays and siblings reuse it). An extended
problem numbers the root's variables as the root does and takes the root's
choice-only clauses (~90 % of the instances) as they are: a lowering builds
only the clauses that name its new objects and those that read the kernel
through snippets (`_make_instances`).

The cache keeps an extended problem while a candidate holds it, plus those
used last up to `KEEP_INSTANCES` propagator instances in the process (~350
bytes each; an extended problem counts those it holds alone and a tenth of
those it shares): a problem of matmul 64×64×32 is ~2.5·10^5 instances, and a
cache that kept every lowering a search or a random descent met grew a test
worker past 14 GB.
"""

from __future__ import annotations

import gc
import threading
import weakref
from bisect import bisect_left
from collections import OrderedDict
from contextlib import contextmanager
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

import numpy as np

from ..errors import DeadEnd, SpaceError
from . import ast
from .propagators import (
    DECISION,
    EXTRA,
    INF,
    LOWERING,
    MASK,
    NUM,
    PAIR,
    Clause,
    Counter,
    Trigger,
    lit_vars,
)
from .snippet import CMP_OPS
from .space import ExistsCond, Space
from .strip_products import StripProducts
from .thread_levels import ThreadLevels

# Global propagators: `build(problem)` returns an instance (with `lazy =
# True`, see propagators.fixpoint) or None when the problem's space has no
# place for it.
GLOBALS = [ThreadLevels.build, StripProducts.build]

# support tables of binary relations by (choices, operator, views, universes)
_PAIR_TABLES: dict = {}

_SWAP = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def object_id(obj: Any) -> str:
    if isinstance(obj, str):
        return obj
    name = getattr(obj, "name", None)
    if not isinstance(name, str):
        raise SpaceError(f"kernel object {obj!r} has no string 'name'; give the set an id_getter")
    return name


class KernelSets:
    """The objects of every set of a space, evaluated on one kernel."""

    def __init__(self, space: Space, kernel):
        self.space = space
        self.kernel = kernel
        self.plain: dict[str, list] = {}  # set -> [(id, obj)]
        self.param: dict[tuple[str, str], list] = {}  # (set, param id) -> [(id, obj)]
        self.pos: dict[tuple[str, str], int] = {}  # (set, id) -> position
        self.objects: dict[tuple[str, str], Any] = {}  # (root, id) -> obj
        done: set[str] = set()
        order = [s for s in space.sets.values() if s.quotient is None]
        while order:  # supersets and parameter sets first
            progress = False
            for s in list(order):
                deps = {s.superset} | ({s.param.set.name} if s.param else set())
                if deps - {None} <= done:
                    self._eval(s)
                    done.add(s.name)
                    order.remove(s)
                    progress = True
            if not progress:
                raise SpaceError("sets depend on each other in a cycle: "
                                 + ", ".join(s.name for s in order))
        self._check_disjoint()

    def _ids(self, s, objs, env):
        getter = s.entries.get("id_getter")
        out, seen = [], set()
        for o in objs:
            i = str(getter({**env, "item": o, "obj": o})) if getter else object_id(o)
            if i in seen:
                raise SpaceError(f"set {s.name}: two objects share the id {i!r}")
            seen.add(i)
            out.append((i, o))
        return out

    def _members(self, s, env) -> list:
        it, fs = s.entries.get("iterator"), s.entries.get("from_superset")
        if it is not None:
            objs = list(it(env))
        else:
            objs = [o for _, o in self.members(s.superset, env)]
        if fs is not None:
            objs = [o for o in objs if fs({**env, "item": o})]
        members = self._ids(s, objs, env)
        if s.superset is not None:
            sup = {i for i, _ in self.members(s.superset, env)}
            for i, _ in members:
                if i not in sup:
                    raise SpaceError(f"kernel: {i} is in {s.name} but not in its superset "
                                     f"{s.superset}")
        root = self.space.root(s.name)
        for i, o in members:
            self.objects.setdefault((root, i), o)
        return members

    def members(self, name: str, env, arg: str | None = None) -> list:
        """Members of a set; for a parametric set, `arg` names the variable of
        `env` holding its parameter (default: the set's own parameter name)."""
        s = self.space.sets[name]
        if s.param is None:
            return self.plain[name]
        return self.param.get((name, object_id(env[arg or s.param.var])), [])

    def _eval(self, s) -> None:
        base = {"fun": self.kernel}
        if s.param is None:
            self.plain[s.name] = m = self._members(s, base)
            for k, (i, _) in enumerate(m):
                self.pos[(s.name, i)] = k
            return
        for pid, pobj in self.members(s.param.set.name, base):
            env = {**base, s.param.var: pobj}
            m = self._members(s, env)
            self.param[(s.name, pid)] = m
            for k, (i, _) in enumerate(m):
                self.pos.setdefault((s.name, i), k)

    def _check_disjoint(self) -> None:
        def all_ids(name):
            s = self.space.sets[name]
            if s.param is None:
                return {i for i, _ in self.plain[name]}
            return {i for (n, _), m in self.param.items() if n == name for i, _ in m}
        for s in self.space.sets.values():
            for d in s.disjoint:
                common = all_ids(s.name) & all_ids(d)
                if common:
                    raise SpaceError(f"kernel: sets {s.name} and {d} are declared disjoint "
                                     f"but share {sorted(common)}")


class Problem:
    """The CSP <d_K, C_K> of a kernel, plus its propagator instances."""

    # False: build instances and find new ones by the plain generic loops (the
    # reference the fast paths are tested against; see tests/test_extension.py)
    _fast = True
    # False: leave out the global propagators (GLOBALS), or a tuple of the
    # builders to keep; the laws compare propagation with and without them
    # (a problem's extensions inherit its setting)
    _globals: bool | tuple = True

    def __init__(self, space: Space, kernel, fired: frozenset = frozenset(), parent=None,
                 fast: bool | None = None):
        self._fast = type(self)._fast if fast is None else fast
        if self._fast:
            with no_gc():
                self._build(space, kernel, fired, parent)
        else:
            self._build(space, kernel, fired, parent)

    def _build(self, space, kernel, fired, parent) -> None:
        self.space = space
        self.kernel = kernel
        self.fired = fired
        # reasons of an extra propagator's removals, by (choice, objects)
        self.extra_reason: dict = dict(parent.extra_reason) if parent else {}
        self.root_problem = parent.root_problem if parent else self
        self._globals = parent._globals if parent else type(self)._globals
        if parent is None:
            # fired set -> extended problem, while something holds it
            self._extensions: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
            # extensions under construction (fired set -> Event): a click
            # waits for the one a background thread is building
            # (workbench.prebuild) instead of building it a second time
            self._building: dict[frozenset, threading.Event] = {}
            self._ext_lock = threading.Lock()
            # literal numbering (`_instance_sigs`) shared by the root's
            # problems: one thread at a time, or two literals could get one number
            self._sig_lock = threading.RLock()
        self.sets = KernelSets(space, kernel)
        self.choice_infos = list(space.choices.values())
        self.keys: list[tuple[str, tuple[str, ...]]] = []  # var -> (choice, objects)
        self.vc: list[int] = []
        self.vj: list[int] = []
        self.universe: list = []  # var -> tuple of values (enum names or ints)
        self.index: dict[tuple[str, tuple], tuple[int, bool]] = {}
        self.choice_vars: list[list[int]] = [[] for _ in self.choice_infos]
        self.init_tables: list[list] = [[] for _ in self.choice_infos]
        self.instances: list = []
        self._make_vars()
        self._masks: dict = {}  # (condition, mirrored) -> its value mask
        self._make_instances()
        self.lazy: list[int] = []  # global propagators: run by fixpoint once the queue is empty
        for build in (GLOBALS if self._globals is True else self._globals or ()):
            inst = build(self)  # may read literals of the space (the class terms)
            if inst is not None:
                self._add(inst)
                self.lazy.append(inst.id)
        del self._masks
        # wake[v]: (mask, instances) groups. A clause only needs to run when
        # one of its literals became false, so a MASK literal wakes its clause
        # only once the domain of v misses the mask; -1: wake on any change.
        # A clause prunes only when its non-false MASK literals are all on
        # one variable (else two open literals on different variables keep
        # it satisfiable whatever happens elsewhere): `guarded[j]` (MASK
        # literals on two variables or more) lets a change of a variable it
        # reads through another literal skip it until then (a MASK literal
        # becoming false wakes it through its own watch).
        self.guarded = bytearray(len(self.instances))
        if self._fast:
            self._make_wake_fast()
        else:
            self._make_wake()
        del self._static

    def _make_wake(self) -> None:
        watches: list[list[tuple[int, int]]] = [[] for _ in self.keys]
        static = self._static
        for inst in self.instances:
            j = inst.id
            if j in static or getattr(inst, "lazy", False):
                continue
            masks: dict[int, int] = {}
            if isinstance(inst, Clause):
                for lit in inst.lits:
                    if lit[0] == MASK:
                        v = lit[1]
                        # two literals on v: wake on any change
                        masks[v] = -1 if v in masks else lit[2]
                if len(masks) >= 2:
                    self.guarded[j] = 1
            for v in set(inst.vars()):
                watches[v].append((j, masks.get(v, -1)))
        # watches grouped by mask: a change of v tests each distinct mask
        # once instead of each watching clause (order variables are watched
        # by hundreds of transitivity clauses but only a few masks)
        self.wake: list[tuple] = []
        for ws in watches:
            groups: dict[int, list] = {}
            for j, m in ws:
                groups.setdefault(m, []).append(j)
            self.wake.append(tuple((m, tuple(js)) for m, js in groups.items()))

    def _make_wake_fast(self) -> None:
        """`_make_wake` without the per-watch tuples: each instance appends
        its id straight to the (variable, mask) group it wakes, groups kept in
        the order of their first instance as there. The root keeps its groups
        as they stand after the instances it shares (`_shared_wake`); an
        extended problem that shares them starts from those."""
        root = self.root_problem
        base = root._shared_wake() if root is not self and self.shared_len else ()
        start = self.shared_len if base else 0
        self.guarded[:start] = root.guarded[:start]
        groups: list[dict[int, list]] = [{m: list(js) for m, js in g} for g in base]
        groups += [{} for _ in range(len(self.keys) - len(base))]
        static = self._static
        guarded = self.guarded
        insts = self.instances
        for j in range(start, len(insts)):
            inst = insts[j]
            if j in static or getattr(inst, "lazy", False):
                continue
            if isinstance(inst, Clause):
                masks: dict[int, int] = {}
                other = None
                for lit in inst.lits:
                    if lit[0] == MASK:
                        v = lit[1]
                        masks[v] = -1 if v in masks else lit[2]
                    elif other is None:
                        other = list(lit_vars(lit))
                    else:
                        other.extend(lit_vars(lit))
                if len(masks) >= 2:
                    guarded[j] = 1
                for v, m in masks.items():
                    g = groups[v]
                    js = g.get(m)
                    if js is None:
                        g[m] = [j]
                    else:
                        js.append(j)
                if other is None:
                    continue
                vs = set(other).difference(masks)
            else:
                vs = set(inst.vars())
            for v in vs:
                g = groups[v]
                js = g.get(-1)
                if js is None:
                    g[-1] = [j]
                else:
                    js.append(j)
        self.wake: list[tuple] = [tuple((m, tuple(js)) for m, js in g.items()) for g in groups]

    def _shared_wake(self) -> list:
        """The root's wake groups of the instances it shares (`shared_len`):
        the prefix of each group below it (ids ascend in a group, and groups
        come in the order of their first id), built once."""
        got = self.__dict__.get("_shared_groups")
        if got is None:
            n = self.shared_len
            got = self._shared_groups = [
                tuple((m, js[:bisect_left(js, n)]) for m, js in groups if js[0] < n)
                for groups in self.wake]
        return got

    def _root_members_kept(self) -> bool:
        """Whether every set holds the root kernel's objects in the root's
        order (a lowering only adds objects), so the root's bindings are the
        same here and its choice-only clauses hold unchanged."""
        root = self.root_problem
        known = root.sets.objects
        for name, members in self.sets.plain.items():
            r = self.space.root(name)
            mine = [i for i, _ in members if (r, i) in known]
            if mine != [i for i, _ in root.sets.plain.get(name, ())]:
                return False
        return True

    def _fresh_ids(self) -> set | None:
        """The ids of the objects the root kernel lacks, when ids alone tell
        them from the root's (no root object of another set shares one)."""
        known = self.root_problem.sets.objects
        fresh = {i for key, i in self.sets.objects if (key, i) not in known}
        return fresh if fresh.isdisjoint(i for _, i in known) else None

    def _new_objects(self, g, fresh: set | None):
        """A test of the objects of a binding of `g`: whether it names an
        object the root kernel lacks (`fresh`: `_fresh_ids()`)."""
        if fresh is not None:
            return fresh.intersection
        known = self.root_problem.sets.objects
        sets = [self.space.root(b.set.name) for b in g.foralls]
        return lambda t: not all((r, i) in known for r, i in zip(sets, t))

    # ------------------------------------------------------------ bindings
    def bindings(self, foralls, precedes=(), env=None, ids=None):
        """Yield (env, ids) for every combination of distinct objects."""
        env = {"fun": self.kernel} if env is None else env
        ids = {} if ids is None else ids
        yield from self._bind(list(foralls), dict(precedes), env, ids, {})

    def _bind(self, foralls, precedes, env, ids, roots, early=None, depth=0):
        # early[depth]: snippet conditions to test once this variable is
        # bound; one that holds skips the bindings below (`_generic_clauses`)
        if not foralls:
            yield env, ids
            return
        b, rest = foralls[0], foralls[1:]
        root = self.space.root(b.set.name)
        taken = {i for (r, i) in roots.values() if r == root}
        members = self.sets.members(b.set.name, env, b.set.arg)
        limit = None
        if b.var in precedes and precedes[b.var] in ids:
            limit = self.sets.pos[(b.set.name, ids[precedes[b.var]])]
        checks = early[depth] if early else ()
        for k, (i, o) in enumerate(members):
            if i in taken:
                continue
            if limit is not None and k >= limit:
                break
            env2 = {**env, b.var: o}
            if checks and any(bool(c.snippet(env2)) != c.negated for c in checks):
                continue
            ids2 = {**ids, b.var: i}
            roots2 = {**roots, b.var: (root, i)}
            yield from self._bind(rest, precedes, env2, ids2, roots2, early, depth + 1)

    # ----------------------------------------------------------- variables
    def _make_vars(self) -> None:
        found: list = []  # per stored variable: (choice, objects, universe, initial domain)
        at: dict = {}  # (choice name, objects) -> its position in found
        views: list = []  # mirrored views: (name, objects, the stored objects)
        for ci, c in enumerate(self.choice_infos):
            for env, ids in self.bindings(c.params, {a: b for a, b in c.precedes}):
                objs = tuple(ids[b.var] for b in c.params)
                if c.mirrored and (c.name, (objs[1], objs[0])) in at:
                    views.append((c.name, objs, (objs[1], objs[0])))
                    continue
                at[(c.name, objs)] = len(found)
                if c.kind == "enum":
                    found.append((ci, objs, c.values, (1 << len(c.values)) - 1))
                elif c.kind == "integer":
                    u = self._universe(c, env, objs)
                    found.append((ci, objs, u, (1 << len(u)) - 1))
                else:
                    found.append((ci, objs, (), (-INF, INF)))
        order: list | range = range(len(found))
        # An extended problem numbers the root's variables first, as the root
        # does, so that the root's choice-only clauses, which name variables
        # by number, serve it unchanged (`_make_instances`); the others follow
        # in the order found. Both builds (fast and generic) number so.
        self.root_vars = 0
        root = self.root_problem
        if root is not self:
            pos = [at.get(k) for k in root.keys]
            if None not in pos and all(found[k][2] == u for k, u in zip(pos, root.universe)):
                taken = set(pos)
                order = pos + [k for k in range(len(found)) if k not in taken]
                self.root_vars = len(pos)
        for k in order:
            ci, objs, u, init = found[k]
            table = self.init_tables[ci]
            v = len(self.keys)
            self.keys.append((self.choice_infos[ci].name, objs))
            self.vc.append(ci)
            self.choice_vars[ci].append(v)
            self.vj.append(len(table))
            self.index[self.keys[-1]] = (v, False)
            self.universe.append(u)
            table.append(init)
        for name, objs, stored in views:
            self.index[(name, objs)] = (self.index[(name, stored)][0], True)

    def _universe(self, c, env, objs) -> tuple:
        raw = c.universe(env)
        try:
            vals = sorted({int(x) for x in raw})
        except TypeError:
            vals = [int(raw)]
        if not vals:
            raise SpaceError(f"choice {c.name}{objs}: {c.universe} gives no possible value")
        return tuple(vals)

    def lookup(self, ref: ast.ChoiceRef, ids: dict) -> tuple[int, bool]:
        objs = tuple(ids[a] for a in ref.args)
        got = self.index.get((ref.name, objs))
        if got is None:
            raise SpaceError(f"{ref.name}{objs} is not an instance of choice {ref.name} "
                             "(objects must be distinct members of its sets)")
        return got

    # ----------------------------------------------------------- instances
    def _make_instances(self) -> None:
        """Propagator instances, laid out as: the choice-only clauses (see
        `_choice_plan`) whose objects are all the root kernel's, then those
        naming an object a lowering created, then the other constraints'
        clauses, the counters and the triggers. An extended problem whose
        root variables and sets are the root's (`root_vars`,
        `_root_members_kept`) takes the first part from the root as it is,
        the same instances under the same numbers (`shared_len`), so a
        lowering builds only what names its new objects and what reads the
        kernel through snippets (~30k of ~250k instances on matmul)."""
        self._static: set[int] = set()
        constraints = [(g, f"{g.origin}: {g}") for g in self.space.constraints]
        plans = [self._choice_plan(g) for g, _ in constraints]
        self._choice_only_instances([(g, label, plan) for (g, label), plan
                                     in zip(constraints, plans) if plan is not None])
        for (g, label), plan in zip(constraints, plans):
            if plan is None:
                self._add_all(self._generic_clauses(g, label))
        self.counter_ids: list[int] = []  # the Counter instances (global propagators read them)
        # per Counter instance: its counter statement and each term's object
        # ids (the class counters read the quotient a term iterates over)
        self.counter_sources: list[tuple] = []
        for g in self.space.counters:
            for env, ids in self.bindings(g.params):
                objs = tuple(ids[b.var] for b in g.params)
                var = self.index[(g.choice, objs)][0]
                terms, term_ids = [], []
                for tenv, tids in self.bindings(g.foralls, (), env, ids):
                    term_ids.append(tids)
                    delta = -1
                    if g.delta is not None:
                        allp = tuple(g.params) + tuple(g.foralls)
                        delta = self.index[(g.delta, tuple(tids[b.var] for b in allp))][0]
                    side = self._side(g.value, tenv, tids)
                    lo = (side[1] if side[0] == "c" else
                          0 if side[0] == "k" else min(self.universe[side[1]]))
                    if lo < (1 if g.op == "mul" else 0):
                        raise SpaceError(f"counter {g.choice}{objs}: term value {lo} must be "
                                         f"{'>= 1 in a product' if g.op == 'mul' else '>= 0'}")
                    terms.append((delta, side))
                info = self.space.choices[g.choice]
                self.counter_ids.append(len(self.instances))
                self.counter_sources.append((g, term_ids))
                self._add(Counter(var, g.op, terms, info.half, f"counter {g.choice}", objs))
        for g in self.space.triggers:
            for env, ids in self.bindings(g.foralls):
                objs = tuple(ids[b.var] for b in g.foralls)
                lits = []
                for cond in g.conditions:
                    got = self._literals(cond, env, ids, conjunction=True)
                    if got is False:
                        break
                    lits += got
                else:
                    self._add(Trigger(lits, (g.index, objs), f"trigger {g.action}", objs))

    def _choice_only_instances(self, choice_only) -> None:
        """The first two parts of `_make_instances`' layout; `shared_len`."""
        root = self.root_problem
        self.shared_len = 0
        if root is self:
            for g, label, plan in choice_only:
                self._add_all(self._plan_clauses(g, label, plan))
            self.shared_len = len(self.instances)
            self._shared_static = frozenset(self._static)
            return
        fresh = self._fresh_ids()
        if self._fast and root._fast and self.root_vars and self._root_members_kept():
            self.shared_len = root.shared_len
            self.instances.extend(root.instances[:root.shared_len])
            self._static.update(root._shared_static)
            for g, label, plan in choice_only:
                if fresh is not None:  # only the bindings that name a new object
                    ts = self._id_bindings(g.foralls, g.precedes, fresh)
                    self._add_all(self._choice_clauses(g, plan, label, ts))
                else:
                    self._add_all(self._plan_clauses(g, label, plan,
                                                     self._new_objects(g, fresh)))
            return
        new = []  # both parts built here, in the same layout
        for g, label, plan in choice_only:
            got, is_new = self._plan_clauses(g, label, plan), self._new_objects(g, fresh)
            self._add_all([c for c in got if not is_new(c.objects)])
            new.append([c for c in got if is_new(c.objects)])
        for clauses in new:
            self._add_all(clauses)

    # Constraints whose conditions all name choices (`is` conditions and
    # comparisons of two non-counter choices: the transitivity clauses, most
    # of the instances) over sets without parameters read nothing of the
    # kernel but its objects: their bindings are enumerated as tuples of ids
    # and each literal is computed once per condition and objects (the same
    # literal, as the generic loop would build it, serves every clause that
    # reads it).
    def _choice_plan(self, g):
        """Per condition (kind, condition, objects getter, memo), or None
        when `g` needs the generic loop."""
        pos = {b.var: k for k, b in enumerate(g.foralls)}
        if not g.conditions:
            return None
        for b in g.foralls:
            s = self.space.sets.get(b.set.name)
            if s is None or s.param is not None or b.set.name not in self.sets.plain:
                return None
        plan = []
        for cond in g.conditions:
            if isinstance(cond, ast.IsCond):
                refs = (cond.ref,)
            elif (isinstance(cond, ast.CmpCond) and isinstance(cond.lhs, ast.ChoiceRef)
                  and isinstance(cond.rhs, ast.ChoiceRef)
                  and self.space.choices[cond.lhs.name].kind != "counter"
                  and self.space.choices[cond.rhs.name].kind != "counter"):
                refs = (cond.lhs, cond.rhs)
            else:
                return None
            getters = []
            for ref in refs:
                if any(a not in pos for a in ref.args):
                    return None
                ps = [pos[a] for a in ref.args]
                getters.append(itemgetter(*ps) if len(ps) >= 2 else
                               (lambda t, p=ps[0]: (t[p],)) if ps else (lambda t: ()))
            plan.append((cond, getters, {}))
        return plan

    def _id_bindings(self, foralls, precedes, fresh=None) -> list[tuple]:
        """The ids of `bindings(foralls, precedes)` (sets without parameters),
        in the same order; with `fresh` (a set of ids), only those naming
        one of them (the last variable of a binding that names none so far
        takes only fresh ids)."""
        precedes = dict(precedes)
        out: list[tuple] = [()]
        bound: dict[str, int] = {}
        roots: list[str] = []
        last = len(foralls) - 1
        for k, b in enumerate(foralls):
            root = self.space.root(b.set.name)
            same = [q for q, r in enumerate(roots) if r == root]
            ids = [i for i, _ in self.sets.plain[b.set.name]]
            before = bound.get(precedes.get(b.var)) if b.var in precedes else None
            pos = self.sets.pos
            nxt = []
            for t in out:
                mine = ids
                if before is not None:
                    mine = ids[:pos[(b.set.name, t[before])]]
                if k == last and fresh is not None and fresh.isdisjoint(t):
                    mine = [i for i in mine if i in fresh]
                if same:
                    taken = {t[q] for q in same}
                    nxt += [t + (i,) for i in mine if i not in taken]
                else:
                    nxt += [t + (i,) for i in mine]
            out = nxt
            bound[b.var] = k
            roots.append(root)
        return out

    def _plan_clauses(self, g, label, plan, keep=None) -> list:
        """The clauses of a choice-only constraint `g` (of the bindings
        `keep(objects)` accepts), by `_choice_clauses` or, in the generic
        build, by the generic loop."""
        if not self._fast:
            got = self._generic_clauses(g, label)
            return got if keep is None else [c for c in got if keep(c.objects)]
        ts = self._id_bindings(g.foralls, g.precedes)
        if keep is not None:
            ts = [t for t in ts if keep(t)]
        return self._choice_clauses(g, plan, label, ts)

    def _generic_clauses(self, g, label) -> list:
        """The clauses of constraint `g` by the generic loop. The fast build
        tests the snippets `g` starts with as soon as their variables are
        bound, in their order, and skips every binding below one that holds
        (its clause is always true): `"!$i.has_dim($d)" || ...` over
        instructions and two dimensions then costs a pass over (i, d) and the
        dimensions of i, not every triple."""
        early = self._early_snippets(g) if self._fast else None
        if early:
            binds = self._bind(list(g.foralls), dict(g.precedes), {"fun": self.kernel}, {}, {},
                               early)
            conds = g.conditions[sum(map(len, early)):]
        else:
            binds, conds = self.bindings(g.foralls, g.precedes), g.conditions
        out = []
        for env, ids in binds:
            lits = []
            for cond in conds:
                got = self._literals(cond, env, ids)
                if got is True:
                    break
                lits += got
            else:
                objs = tuple(ids[b.var] for b in g.foralls)
                out.append(Clause(lits, label, objs))
        return out

    @staticmethod
    def _early_snippets(g) -> list | None:
        """Per variable of `g.foralls`, the snippet conditions `g` starts
        with that can be tested once it is bound (each after those before
        it), or None when there are none."""
        level = {b.var: k for k, b in enumerate(g.foralls)}
        early: list[list] = [[] for _ in g.foralls]
        at = 0
        for cond in g.conditions:
            if not isinstance(cond, ast.SnippetCond):
                break
            names = [n for n in cond.snippet.variables if n != "fun"]
            if any(n not in level for n in names):
                break
            at = max([at] + [level[n] for n in names])
            early[at].append(cond)
        return early if any(early) else None

    def _add_all(self, clauses) -> None:
        """Number and keep `clauses`; a clause of one MASK literal is static
        (it prunes once, at the root's or a lowering's first fixpoint)."""
        insts = self.instances
        n0 = len(insts)
        for k, inst in enumerate(clauses, n0):
            inst.id = k
        insts += clauses
        self._static.update(inst.id for inst in clauses
                            if len(inst.lits) == 1 and inst.lits[0][0] == MASK)

    def _choice_clauses(self, g, plan, label, ts) -> list:
        names = [b.var for b in g.foralls]
        index_get = self.index.get
        cols = []
        for cond, getters, memo in plan:
            if len(getters) == 1:  # an `is` condition: literal by objects
                objs = list(map(getters[0], ts))
                col = list(map(memo.get, objs))
                for k, lit in enumerate(col):
                    if lit is None:
                        o = objs[k]
                        lit = memo.get(o)
                        if lit is None:
                            got = index_get((cond.ref.name, o))
                            if got is None:
                                self.lookup(cond.ref, dict(zip(names, ts[k])))
                            lit = memo[o] = self._is_literal(cond, got)
                        col[k] = lit
            else:  # two choices compared: support tables by orientation and universes
                col = []
                universe = self.universe
                lname, rname = cond.lhs.name, cond.rhs.name
                g1, g2 = getters
                for t in ts:
                    r1 = index_get((lname, g1(t)))
                    r2 = index_get((rname, g2(t)))
                    if r1 is None or r2 is None or r1[0] == r2[0]:
                        col.append(self._compare(cond, None, dict(zip(names, t))))
                        continue
                    v1, v2 = r1[0], r2[0]
                    key = (r1[1], r2[1], universe[v1], universe[v2])
                    tables = memo.get(key)
                    if tables is None:
                        lit = self._compare(cond, None, dict(zip(names, t)))
                        memo[key] = lit[3:]
                        col.append(lit)
                    else:
                        col.append((PAIR, v1, v2) + tables)
            cols.append(col)
        return [Clause(lits, label, t) for t, lits in zip(ts, zip(*cols))]

    def _is_literal(self, cond, got):
        """The MASK literal of an `is` condition on the variable `got`
        (number, inverse), its mask memoised per condition."""
        v, inv = got
        key = (id(cond), inv)
        mask = self._masks.get(key)
        if mask is None or mask[0] is not cond:
            c = self.space.choices[cond.ref.name]
            m = c.value_mask(cond.values)
            if cond.negated:
                m = ((1 << len(c.values)) - 1) & ~m
            if inv:
                m = permute(m, c.inverse)
            mask = self._masks[key] = (cond, m)
        return (MASK, v, mask[1])

    def _add(self, inst) -> None:
        inst.id = len(self.instances)
        self.instances.append(inst)

    def _side(self, x, env, ids):
        if isinstance(x, ast.ChoiceRef):
            v, _ = self.lookup(x, ids)
            kind = self.space.choices[x.name].kind
            return ("k", v) if kind == "counter" else ("i", v)
        if isinstance(x, ast.Const):
            return ("c", x.value)
        val = x(env)
        if isinstance(val, bool):
            raise SpaceError(f"snippet {x} gives a boolean where a number is expected")
        if isinstance(val, (list, tuple, set, frozenset, range)):
            return ("s", frozenset(int(a) for a in val))
        return ("c", int(val))

    def _literals(self, cond, env, ids, conjunction=False):
        """Literals of one condition: a list, or True/False when the condition
        is constant for this kernel (True short-circuits a clause, False a
        conjunction)."""
        if isinstance(cond, ast.SnippetCond):
            val = bool(cond.snippet(env)) != cond.negated
            if conjunction:
                return [] if val else False
            return True if val else []
        if isinstance(cond, ExistsCond):
            out = []
            for e2, i2 in self.bindings((cond.binding,), {cond.binding.var: cond.before}, env, ids):
                out += self._literals(cond.cond, e2, i2)
            return out
        if isinstance(cond, ast.IsCond):
            return [self._is_literal(cond, self.lookup(cond.ref, ids))]
        return [self._compare(cond, env, ids)]

    def _compare(self, cond: ast.CmpCond, env, ids):
        lhs, op, rhs = cond.lhs, cond.op, cond.rhs
        if not isinstance(lhs, ast.ChoiceRef):
            lhs, rhs, op = rhs, lhs, _SWAP[op]
        lc = self.space.choices[lhs.name]
        if isinstance(rhs, ast.ChoiceRef):
            rc = self.space.choices[rhs.name]
            if lc.kind != "counter" and rc.kind != "counter":
                return self._pair(lc, self.lookup(lhs, ids), op, rc, self.lookup(rhs, ids))
        ls, rs = self._side(lhs, env, ids), self._side(rhs, env, ids)
        if ls[0] == "i" and rs[0] in ("c", "s"):
            u = self.universe[ls[1]]
            if rs[0] == "s":
                if op not in ("==", "!="):
                    raise SpaceError(f"{cond}: a set of values compares only with == or !=")
                keep = [(x in rs[1]) == (op == "==") for x in u]
            else:
                keep = [CMP_OPS[op](x, rs[1]) for x in u]
            return (MASK, ls[1], sum(1 << i for i, k in enumerate(keep) if k))
        if rs[0] == "s" and op not in ("==", "!="):
            raise SpaceError(f"{cond}: a set of values compares only with == or !=")
        if op in (">", ">="):  # only <, <=, ==, != reach the propagators
            ls, rs, op = rs, ls, _SWAP[op]
        return (NUM, ls, op, rs)

    def _pair(self, lc, lref, op, rc, rref):
        (v1, inv1), (v2, inv2) = lref, rref

        def view(c, inv, i):
            return c.inverse[i] if inv else i

        def value(c, v, i):
            return c.values[i] if c.kind == "enum" else self.universe[v][i]
        f = CMP_OPS[op]
        n1, n2 = len(self.universe[v1]), len(self.universe[v2])
        key = (id(lc), id(rc), op, inv1, inv2, self.universe[v1], self.universe[v2])
        if v1 != v2:  # the support tables depend on the values only: shared
            memo = _PAIR_TABLES.get(key)
            if memo is not None and memo[0] is lc and memo[1] is rc:
                return (PAIR, v1, v2) + memo[2:]
        if v1 == v2:
            mask = 0
            for i in range(n1):
                if f(value(lc, v1, view(lc, inv1, i)), value(rc, v2, view(rc, inv2, i))):
                    mask |= 1 << i
            return (MASK, v1, mask)
        t12 = [0] * n1
        t21 = [0] * n2
        for i in range(n1):
            a = value(lc, v1, view(lc, inv1, i))
            for j in range(n2):
                if f(a, value(rc, v2, view(rc, inv2, j))):
                    t12[i] |= 1 << j
                    t21[j] |= 1 << i
        _PAIR_TABLES[key] = (lc, rc, tuple(t12), tuple(t21))
        return (PAIR, v1, v2, tuple(t12), tuple(t21))

    # ------------------------------------------------------------ messages
    def describe(self, v: int) -> str:
        name, objs = self.keys[v]
        return f"{name}({', '.join(objs)})"

    def dead_end(self, cause: int, v: int | None) -> DeadEnd:
        choice = self.describe(v) if v is not None else None
        if cause == DECISION:
            e = DeadEnd("decision", (), choice)
        elif cause == LOWERING:
            e = DeadEnd("lowering", (), choice)
        elif cause == EXTRA:
            e = DeadEnd(self.cause_text(cause, v), (), choice)
        else:
            inst = self.instances[cause]
            e = DeadEnd(inst.origin, inst.objects, choice)
        e.problem = self  # names its objects, those a lowering just created too
        return e

    def cause_text(self, cause: int, v: int | None = None) -> str:
        """What wrote a domain; for an extra propagator, its reason for
        variable `v` where it gave one."""
        if cause == DECISION:
            return "decision"
        if cause == LOWERING:
            return "lowering"
        if cause == EXTRA:
            return self.extra_reason.get(self.keys[v] if v is not None else None,
                                         "extra propagator")
        inst = self.instances[cause]
        if not inst.objects:  # a global propagator: its reason says what it covers
            return str(inst.origin)
        return f"{inst.origin} on ({', '.join(inst.objects)})"

    def instance_keys(self) -> list:
        """What identifies each propagator instance across extended problems:
        origin, objects and literals (variables named by choice and objects)."""
        got = getattr(self, "_instance_keys", None)
        if got is None:
            if self._fast:  # each distinct literal named once
                memo: dict = {}
                get, name = memo.get, self._lit_key

                def key(lit):
                    k = get(lit)
                    if k is None:
                        k = memo[lit] = name(lit)
                    return k
                got = [(inst.origin, inst.objects, tuple(map(key, getattr(inst, "lits", ()))))
                       for inst in self.instances]
            else:
                got = [(inst.origin, inst.objects,
                        tuple(self._lit_key(lit) for lit in getattr(inst, "lits", ())))
                       for inst in self.instances]
            self._instance_keys = got
        return got

    def _instance_sigs(self, start: int = 0) -> list:
        """`instance_keys` of the instances from `start` on, flattened, each
        literal's key replaced by a number that is the same in every problem
        of one root (cheaper to build, hash and compare): (origin, objects,
        number, number, ...)."""
        cache = self.__dict__.setdefault("_sigs", {})
        got = cache.get(start)
        if got is None:
            ids = self.root_problem.__dict__.setdefault("_lit_ids", {})
            insts = self.instances[start:]
            lits = [getattr(inst, "lits", ()) for inst in insts]
            memo: dict = {}
            for lit in set(chain.from_iterable(lits)):
                lk = self._lit_key(lit)
                k = ids.get(lk)
                if k is None:
                    k = ids[lk] = len(ids)
                memo[lit] = k
            num = memo.__getitem__
            origins = [inst.origin for inst in insts]
            objects = [inst.objects for inst in insts]
            # (origin, objects, literal numbers...) built a run of instances
            # with as many literals at a time, column by column
            got = []
            k = 0
            for _, run in groupby(map(len, lits)):
                n = len(list(run))
                cols = [map(num, col) for col in zip(*lits[k:k + n])]
                got += zip(origins[k:k + n], objects[k:k + n], *cols)
                k += n
            cache[start] = got
        return got

    def new_instances(self, old: Problem) -> list[int]:
        """Instances of this (extended) problem that `old` does not have."""
        return self._against(old)[0]

    def kept_instances(self, old: Problem) -> tuple:
        """(ids here, ids in `old`) of the instances both problems have, as
        two arrays: a clause satisfied in `old` on carried domains is
        satisfied here too (`lowering.remap`)."""
        return self._against(old)[1]

    def _against(self, old: Problem) -> tuple:
        # keyed weakly by `old` itself: an id could be reused once it is gone
        cache = self.__dict__.setdefault("_new_since", weakref.WeakKeyDictionary())
        got = cache.get(old)
        if got is not None:
            return got
        with self.root_problem._sig_lock:
            got = cache.get(old)
            if got is not None:  # another thread just computed it
                return got
            if self._fast and old._fast and old.root_problem is self.root_problem:
                # the instances both share with the root are the same under
                # the same numbers; the rest are matched by signature
                # numbers, sorted (a pair met for the first time, a lowering
                # in a new order, cost 0.2-0.5 s of dictionary lookups before)
                p = self.shared_len if self.shared_len == old.shared_len else 0
                with no_gc():
                    tail = _match(self._sig_numbers(p), *old._sig_sorted(p))
                at = np.concatenate([np.arange(p, dtype=np.int64),
                                     np.where(tail >= 0, tail + p, -1)])
            else:
                where = old.__dict__.get("_key_index")
                if where is None:
                    keys = old.instance_keys()
                    where = old._key_index = dict(zip(keys, range(len(keys))))
                at = np.array([-1 if k is None else k
                               for k in map(where.get, self.instance_keys())], dtype=np.int64)
            carries = np.frombuffer(self._carries_sat(), np.uint8).astype(bool)
            here = np.flatnonzero((at >= 0) & carries)
            got = (np.flatnonzero(at < 0).tolist(), (here, at[here]))
            cache[old] = got
        return got

    def _sig_numbers(self, start: int = 0) -> np.ndarray:
        """Per instance from `start` on, a number for its signature
        (`_instance_sigs`), the same in every problem of one root (call
        under the root's `_sig_lock`)."""
        cache = self.__dict__.setdefault("_signum", {})
        got = cache.get(start)
        if got is None:
            ids = self.root_problem.__dict__.setdefault("_sig_ids", {})
            put = ids.setdefault
            got = cache[start] = np.fromiter(
                (put(s, len(ids)) for s in self._instance_sigs(start)), dtype=np.int64,
                count=len(self.instances) - start)
        return got

    def _sig_sorted(self, start: int = 0) -> tuple:
        """(signature numbers from `start` on, sorted; the position of each
        after `start`), for `_match`."""
        cache = self.__dict__.setdefault("_sigsort", {})
        got = cache.get(start)
        if got is None:
            nums = self._sig_numbers(start)
            where = np.argsort(nums, kind="stable")
            got = cache[start] = (nums[where], where)
        return got

    def _carries_sat(self) -> bytearray:
        """Per instance: a clause whose satisfaction carries over a lowering,
        all its literals on carried domains (none on a counter: counters
        restart after a lowering). The shared choice-only clauses all do."""
        got = self.__dict__.get("_carries")
        if got is None:
            p = self.shared_len
            got = self._carries = bytearray(b"\x01" * p) + bytearray(
                isinstance(inst, Clause) and all(lit[0] != NUM for lit in inst.lits)
                for inst in self.instances[p:])
        return got

    def _lit_key(self, lit):
        if lit[0] == MASK:
            return (MASK, self.keys[lit[1]], lit[2])
        if lit[0] == PAIR:
            return (PAIR, self.keys[lit[1]], self.keys[lit[2]], lit[3])
        return (NUM, lit[2]) + tuple(s if s[0] in ("c", "s") else (s[0], self.keys[s[1]])
                                     for s in (lit[1], lit[3]))

    # ----------------------------------------------------------- lowering
    def extended(self, fired: frozenset) -> Problem:
        """The problem of the kernel after the given triggers ran (cached;
        safe to call from several threads: one builds, the others wait)."""
        root = self.root_problem
        got = root._extensions.get(fired)
        if got is not None:
            _RECENT.keep(got)
            return got
        kernel = root.kernel.copy()
        for index, objs in sorted(fired):
            g = self.space.triggers[index]
            env = {"fun": kernel}
            for b, i in zip(g.foralls, objs):
                env[b.var] = root_obj(self, b, i)
            g.action(env)
        # triggers the kernel says would now change nothing count as
        # fired (a lowering moves a whole communication, so its other
        # pairs' triggers are no-ops): one problem serves every order and
        # subset in which they fire, instead of one per fired set
        done = getattr(kernel, "trigger_done", None)
        full = fired
        if done is not None:
            full = fired | frozenset(t.key for t in root.triggers()
                                     if t.key not in fired and done(t.key[1]))
        while True:
            with root._ext_lock:
                got = root._extensions.get(full)
                if got is not None:
                    root._extensions[fired] = got
                    _RECENT.keep(got)
                    return got
                busy = root._building.get(full)
                if busy is None:
                    busy = root._building[full] = threading.Event()
                    break
            busy.wait()  # another thread is building it: take its result
        try:
            got = Problem(self.space, kernel, full, root)
            with root._ext_lock:
                root._extensions[full] = root._extensions[fired] = got
            _RECENT.keep(got)
        finally:
            with root._ext_lock:
                del root._building[full]
            busy.set()
        return got

    def triggers(self) -> list:
        """The trigger instances (lowerings), in instance order."""
        got = self.__dict__.get("_triggers")
        if got is None:
            got = self._triggers = [t for t in self.instances if getattr(t, "trigger", False)]
        return got

    def has_extension(self, fired: frozenset) -> bool:
        """Whether `extended(fired)` is built and still cached (no kernel copy)."""
        return fired in self.root_problem._extensions


class _RecentProblems:
    """The extended problems used last, held up to a number of propagator
    instances in all (the one used last always)."""

    def __init__(self, budget: int):
        self.budget = budget
        self._held: OrderedDict = OrderedDict()  # id -> problem (held: the id stays its own)
        self._size = 0
        self._lock = threading.Lock()

    def keep(self, problem: Problem) -> None:
        with self._lock:
            if id(problem) in self._held:
                self._held.move_to_end(id(problem))
                return
            self._held[id(problem)] = problem
            self._size += _weight(problem)
            while self._size > self.budget and len(self._held) > 1:
                self._size -= _weight(self._held.popitem(last=False)[1])

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._size = 0


def _weight(problem: Problem) -> int:
    """What a problem costs the cache, in instances: those it holds alone,
    plus a tenth of those it shares with its root (its list and watches of
    them; measured on matmul 1024: 19-40 MB an extended problem, 84 MB the
    root of 230k instances)."""
    if problem.root_problem is problem or not problem.shared_len:
        return len(problem.instances)
    return len(problem.instances) - problem.shared_len + len(problem.instances) // 10


KEEP_INSTANCES = 4_000_000
_RECENT = _RecentProblems(KEEP_INSTANCES)


@contextmanager
def no_gc():
    """Pause the cyclic garbage collector: building a problem allocates
    millions of tuples that all stay alive, and each collection they trigger
    walks every object of the process (a third of the build's time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _match(nums: np.ndarray, sorted_nums: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Per number of `nums`, the instance in the other problem with that
    signature number (the last, when several, as a dict built over them
    keeps), or -1."""
    if not len(sorted_nums):
        return np.full(len(nums), -1, dtype=np.int64)
    k = np.maximum(np.searchsorted(sorted_nums, nums, side="right") - 1, 0)
    return np.where(sorted_nums[k] == nums, where[k], -1)


def root_obj(problem: Problem, b: ast.Binding, i: str):
    key = (problem.space.root(b.set.name), i)
    try:
        return problem.sets.objects[key]
    except KeyError:
        raise SpaceError(f"trigger refers to unknown object {i}") from None


def permute(mask: int, perm) -> int:
    """Map a value bitset through a permutation of value indices (mirrored views)."""
    out = 0
    for i, j in enumerate(perm):
        if mask >> i & 1:
            out |= 1 << j
    return out

