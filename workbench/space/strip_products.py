"""Strip products: the sizes of a logical dimension's strip levels, seen whole.

In the GPU space the strip levels of a logical dimension L multiply to its
size (`strip_mining_factor(L) == L.size`), and every dimension of one level
has that level's size (`size($dim) == size($rep)`). The counters over sizes
(`unroll_factor`, `own_unroll_factor`, `own_threads`, `threads_per_block`)
bound their products from the smallest size of each term, one term at a time,
so they miss what the product of the levels forces: with m = 64 strip-mined
as 64 = s0·s1·s2 and s2 a THREAD dimension of size 1, an instruction
unrolled along m0 and m1 unrolls at least 64 times, whatever s0 is. A person
who forced the kinds and sizes in their own order met that as a `size` choice
whose every value fails on `unroll_factor` (issue "never stuck": 5 of the 12
stuck states of a random-order descent sample).

Here each logical dimension keeps the tuples (s0, …, sK-1) its level
domains allow with product L.size; each mul counter over sizes takes, per
logical dimension, the smallest product its surely counted levels can have
over those tuples. A tuple that would push a counter past its maximum is
dropped, a term that may still count is kept out when counting it would, and
every level keeps only the sizes some tuple left uses. Both equalities are
constraints of the space, so nothing removed has an implementation: this is
a redundant propagator, and the laws compare propagation with and without it
(`Problem._globals`).

A counter over a quotient (`unroll_factor` over `IterationDims`: one
representative per class of merged dimensions) counts each class through its
representative, whose term stays open while the class may still take an
earlier member. So the counter alone read 4 where `init`, surely nested in
four surely UNROLL dimensions of sizes 16, 2, 16 and 2 that can never merge
with one another, unrolls 1,024 times (the stuck state of seed 16, issue
"never stuck"). Merged dimensions have one kind and one size (gpu.space), so
each class holding a surely iterated, surely unrolled dimension counts that
dimension's size whoever represents it: the *class terms* below count such
dimensions that surely lie in distinct classes (no two may merge).
"""

from __future__ import annotations

import math
import weakref
from functools import lru_cache

from .propagators import INF, bits

STRIP = 'strip_mining_factor($logical) == "$logical.size"'
TILE = "size($dim) == size($rep)"
MAPPED = "thread_mapping($a, $b) is not MAPPED || size($a) == size($b)"
# what merged dimensions share, so that a class counts the same through any member
MERGED_KIND = "order($a, $b) is not MERGED || dim_kind($a) == dim_kind($b)"
MERGED_SIZE = "order($a, $b) is not MERGED || size($a) == size($b)"


class StripProducts:
    """A propagator instance over every size of a problem."""

    __slots__ = ("classes", "counters", "groups", "id", "mapped", "objects", "origin",
                 "universes")
    trigger = False
    lazy = True  # run once the clauses are at their fixpoint (propagators.fixpoint)
    class_terms = True  # count quotient counters by class (off: the peer of the laws)
    linked = True  # every link of two logical dimensions at once (off: one at a time)

    @classmethod
    def build(cls, problem) -> StripProducts | None:
        """The instance for `problem`, or None when its space does not state
        both equalities this propagator relies on."""
        return cls(problem) if StripLayout.applies(problem) else None

    def __init__(self, problem):
        self.origin = ("strip products: the strip sizes of a logical dimension multiply to its "
                       "size, so unrolled or thread levels of it take what the others leave")
        self.objects = ()
        index = problem.index
        layout = StripLayout(problem)
        self.groups, self.universes = layout.groups, layout.universes
        where = layout.where
        # counters[c] = (counter variable, [(delta or -1, group, level)]): the
        # mul counters whose every term is a size this propagator knows
        self.counters: list = []
        # classes[c]: the class terms of counter c (ClassTerms), or None
        self.classes: list = []
        for i, (g, term_ids) in zip(problem.counter_ids, problem.counter_sources):
            inst = problem.instances[i]
            if inst.op != "mul":
                continue
            if not all(side[0] == "i" and side[1] in where for _, side in inst.terms):
                continue
            terms = [(delta, *where[side[1]]) for delta, side in inst.terms]
            if terms:
                self.counters.append((inst.var, terms))
                self.classes.append(ClassTerms.build(problem, g, term_ids)
                                    if self.class_terms else None)
        # mapped[p] = (thread_mapping variable, its MAPPED bit, (group, level)
        # of each side): mapped dimensions have one size (gpu.space:273), so
        # two levels of one logical dimension, or of two, must agree
        self.mapped: list = []
        for v, (name, objs) in enumerate(problem.keys if MAPPED in _texts(problem.space) else ()):
            if name != "thread_mapping" or "MAPPED" not in problem.universe[v]:
                continue
            a, b = (index.get(("size", (o,)), (None,))[0] for o in objs)
            if a in where and b in where:
                bit = 1 << problem.universe[v].index("MAPPED")
                self.mapped.append((v, bit, where[a], where[b]))

    def vars(self):
        for _, levels in self.groups:
            for vs in levels:
                yield from vs
        for v, _, _, _ in self.mapped:
            yield v
        for var, terms in self.counters:
            yield var
            for delta, _, _ in terms:
                if delta >= 0:
                    yield delta
        for c in self.classes:
            if c is not None:
                yield from c.vars()

    def run(self, st):
        doms = self._domains(st.get)
        tuples = [_tuples(n, dom) for (n, _), dom in zip(self.groups, doms)]
        for g, ts in enumerate(tuples):
            if not ts:
                raise st.problem.dead_end(self.id, self.groups[g][1][0][0])
        maybe, links = self._mapped_sure(st, tuples)
        changed: list = []
        for (var, terms), classes in zip(self.counters, self.classes):
            self._counter(st, var, terms, classes, tuples, changed)
        self._linked(st, tuples, links)  # the counters may have dropped tuples
        keep = [[{t[level] for t in ts} for level in range(len(dom))]
                for ts, dom in zip(tuples, doms)]
        self._mapped_maybe(st, maybe, tuples, links, keep, changed)
        for g, (_, levels) in enumerate(self.groups):
            for level, vs in enumerate(levels):
                if len(keep[g][level]) == len(doms[g][level]):
                    continue
                u = self.universes[g][level]
                mask = sum(1 << k for k, x in enumerate(u) if x in keep[g][level])
                for v in vs:
                    if st.restrict(v, mask, self.id):
                        changed.append(v)
        return changed

    def _domains(self, get) -> list:
        return [_group_domain(levels, us, get) for (_, levels), us in
                zip(self.groups, self.universes)]

    def _mapped_sure(self, st, tuples) -> tuple[list, dict]:
        """Levels of surely mapped dimensions take one size; returns the
        pairs that may still be MAPPED and the links: per pair of logical
        dimensions (ga < gb), the level pairs surely of one size and a
        mapping variable behind them."""
        maybe, links = [], {}
        get = st.get
        for p in self.mapped:
            v, bit, (ga, la), (gb, lb) = p
            d = get(v)
            if d != bit:
                if d & bit:
                    maybe.append(p)
                continue
            if ga == gb:
                tuples[ga] = tuple(t for t in tuples[ga] if t[la] == t[lb])
                if not tuples[ga]:
                    raise st.problem.dead_end(self.id, v)
            else:
                key, eq = ((ga, gb), (la, lb)) if ga < gb else ((gb, ga), (lb, la))
                links.setdefault(key, ([], v))[0].append(eq)
        self._linked(st, tuples, links)
        return maybe, links

    def _linked(self, st, tuples, links) -> None:
        """Two logical dimensions linked by mapped levels take tuples that
        agree on every link at once: with m2 = n2 and m1 = n0 surely mapped,
        an n tuple needs one m tuple matching both (each link seen apart let
        size(n1) = 1 through where m's tuples could not follow, a stuck
        state of bench_stuck.py --seed 4). Repeated until no tuple goes, as
        a logical dimension may be linked to several."""
        items = list(links.items())
        if not self.linked:  # the peer: each level pair apart
            items = [(k, ([eq], v)) for k, (eqs, v) in items for eq in eqs]
        again = bool(items)
        while again:
            again = False
            for (ga, gb), (eqs, v) in items:
                for g, h, side in ((ga, gb, 0), (gb, ga, 1)):
                    kept = _matching(tuples[g], tuples[h], eqs, side)
                    if len(kept) != len(tuples[g]):
                        if not kept:
                            raise st.problem.dead_end(self.id, v)
                        tuples[g], again = kept, True

    def _counter(self, st, var, terms, classes, tuples, changed) -> None:
        """One mul counter: its least product over the tuples against its
        maximum; drops the tuples and keeps out the terms that would exceed it.
        Over a quotient (`classes`, ClassTerms), the product also counts every
        class term surely apart from the others taken, and a class literal
        that would push it past its maximum goes too."""
        get = st.get
        most = get(var)[1]
        if most >= INF:
            return
        if classes is None:
            taken, opened = [], []  # opened: (term, the restriction that keeps it out)
            for k, (delta, _, _) in enumerate(terms):
                dd = 2 if delta < 0 else get(delta)  # bit0: FALSE, bit1: TRUE
                if dd == 2:
                    taken.append(k)
                elif dd & 2:
                    opened.append((k, (delta, 1)))
        else:
            taken, maybe, near = classes.split(get, terms, tuples)
            opened = [(k, (terms[k][0], 1)) for k in maybe if k not in taken] + near
        if not taken and not opened:
            return
        sure = _multiplicities(terms, taken, tuples)
        least = {g: _least(tuples[g], m) for g, m in sure.items()}
        lo = math.prod(least.values())
        if lo > most:
            raise st.problem.dead_end(self.id, var)
        for g, m in sure.items():
            tuples[g] = _within(tuples[g], m, most // (lo // least[g]))
        # an open term or class literal: what the product would be if it held,
        # over the terms taken that surely stay apart from it
        for k, restrict in opened:
            apart = taken if classes is None else classes.apart_from(get, k, taken)
            if len(apart) == len(taken):  # the usual case: k adds one level to `lo`
                _, g, level = terms[k]
                m = list(sure.get(g, (0,) * len(tuples[g][0])))
                m[level] += 1
                more = lo // least.get(g, 1) * _least(tuples[g], tuple(m))
            else:
                m = _multiplicities(terms, apart + [k], tuples)
                more = math.prod(_least(tuples[g], x) for g, x in m.items())
            if more > most and st.restrict(*restrict, self.id):
                changed.append(restrict[0])

    def _mapped_maybe(self, st, maybe, tuples, links, keep, changed) -> None:
        """MAPPED is out where no tuple gives both levels one size (with the
        links already sure between their logical dimensions)."""
        same: dict = {}  # per pair of levels: some tuple (pair) gives both one size
        for v, bit, (ga, la), (gb, lb) in maybe:
            if ga == gb:
                ok = same.get((ga, la, lb))
                if ok is None:
                    ok = same[ga, la, lb] = any(t[la] == t[lb] for t in tuples[ga])
            elif self.linked and (key := (min(ga, gb), max(ga, gb))) in links:
                eq = (la, lb) if ga < gb else (lb, la)
                ok = same.get((key, eq))
                if ok is None:  # many pairs of dimensions share their levels
                    eqs = [*links[key][0], eq]
                    ok = same[key, eq] = bool(_matching(tuples[key[0]], tuples[key[1]], eqs, 0))
            else:
                ok = not keep[ga][la].isdisjoint(keep[gb][lb])
            if not ok and st.restrict(v, ~bit, self.id):
                changed.append(v)


class ClassTerms:
    """The terms of a mul counter over a quotient whose relation is
    `order is MERGED`, whose term conditions read only the member's kind and
    whose value is the member's size: per term, the literals that make its
    dimension surely counted by its class (member condition and term
    conditions), and the `order` variable between two terms' dimensions."""

    __slots__ = ("items", "lits", "rel")

    @classmethod
    def build(cls, problem, g, term_ids) -> ClassTerms | None:
        from .ast import ChoiceRef, IsCond
        from .space import rename
        space = problem.space
        texts = _texts(space)
        if g.op != "mul" or g.delta is None or not {MERGED_KIND, MERGED_SIZE} <= texts:
            return None
        quotients = {s.quotient.choice: s.quotient for s in space.sets.values()
                     if s.quotient is not None}
        member = [c for c in g.conditions if isinstance(c, IsCond) and c.ref.name in quotients]
        if len(member) != 1 or member[0].values != ("TRUE",) or member[0].negated:
            return None
        q = quotients[member[0].ref.name]
        if (q.relation, q.relation_value) != ("order", "MERGED"):
            return None
        item = member[0].ref.args[-1]
        names = {q.item.var: item}
        if q.param is not None:
            names[q.param.var] = member[0].ref.args[0]
        conds = [rename(c, names) for c in q.conditions]
        conds += [c for c in g.conditions if c is not member[0]]
        if not all(isinstance(c, IsCond) for c in conds):
            return None
        if not all(c.ref.name in ("dim_kind", "order") for c in conds):
            return None
        # the kind read is the member's own, so merged members agree on it
        if any(c.ref.name == "dim_kind" and c.ref.args != (item,) for c in conds):
            return None
        if not (isinstance(g.value, ChoiceRef) and g.value.name == "size"
                and g.value.args == (item,)):
            return None
        self = cls()
        self.items = [tids[item] for tids in term_ids]
        self.lits = [tuple((lit[1], lit[2]) for c in conds
                           for lit in problem._literals(c, None, tids)) for tids in term_ids]
        self.rel = {}
        for a in range(len(self.items)):
            for b in range(a + 1, len(self.items)):
                got = problem.index.get(("order", (self.items[a], self.items[b])))
                if got is not None:
                    v = got[0]
                    self.rel[a, b] = self.rel[b, a] = (v, 1 << problem.universe[v].index("MERGED"))
        return self

    def __eq__(self, other) -> bool:  # two builds of one problem are equal (test_extension)
        return isinstance(other, ClassTerms) and (self.items, self.lits, self.rel) == (
            other.items, other.lits, other.rel)

    __hash__ = None

    def vars(self):
        for lits in self.lits:
            for v, _ in lits:
                yield v
        for v, _ in self.rel.values():
            yield v

    def split(self, get, terms, tuples) -> tuple:
        """(terms taken: surely counted, pairwise surely in distinct classes;
        open terms; [(term, (variable, mask))] for each term that one open
        class literal keeps from being surely counted by its class)."""
        sure, cls, maybe, near = [], [], [], []
        lits = self.lits
        for k, (delta, _, _) in enumerate(terms):
            dd = get(delta)  # bit0: FALSE, bit1: TRUE
            if dd == 2:
                sure.append(k)
                continue
            if dd == 3:
                maybe.append(k)
            opened = None  # the one literal not surely true; False: more, or one surely false
            for v, m in lits[k]:
                d = get(v)
                if d & ~m:
                    opened = (v, ~m) if opened is None and d & m else False
                    if opened is False:
                        break
            if opened is None:
                cls.append(k)
            elif opened:
                near.append((k, opened))
        taken = list(sure)  # distinct representatives: distinct classes
        # the larger sizes first, so that the product taken grows fastest
        for k in sorted(cls, key=lambda k: -_level_least(tuples, terms[k])):
            if k not in taken and self.apart(get, k, taken):
                taken.append(k)
        return taken, maybe, near

    def apart(self, get, k, ks) -> bool:
        """Whether term k's dimension surely merges with none of terms ks'."""
        for j in ks:
            v, bit = self.rel.get((k, j), (None, 0))
            if v is None or get(v) & bit:
                return False
        return True

    def apart_from(self, get, k, taken) -> list:
        """The terms taken that surely stay apart from term k (k itself left
        out: it is counted once)."""
        return [j for j in taken if j != k and self.apart(get, k, [j])]


def _matching(ts: tuple, others: tuple, eqs, side: int) -> tuple:
    """The tuples of `ts` some tuple of `others` agrees with on every level
    pair of `eqs` (side 0: a pair's first level is in `ts`)."""
    have = {tuple(t[e[1 - side]] for e in eqs) for t in others}
    return tuple(t for t in ts if tuple(t[e[side]] for e in eqs) in have)


def _multiplicities(terms, ks, tuples) -> dict:
    """Per group, how many times each strip level is counted by terms ks."""
    m: dict = {}
    for k in ks:
        _, g, level = terms[k]
        m.setdefault(g, [0] * len(tuples[g][0]))[level] += 1
    return {g: tuple(x) for g, x in m.items()}


def _level_least(tuples, term) -> int:
    _, g, level = term
    return min(t[level] for t in tuples[g])


class StripLayout:
    """Where each size variable sits: groups[g] = (logical size, [[size
    variables of strip level l] for l]), where[size variable] = (g, l), and
    universes[g][l] the size values of level l. Shared by the strip products
    and the thread levels (which read the tuples of the logical dimensions
    their thread dimensions strip)."""

    __slots__ = ("groups", "universes", "where")

    @staticmethod
    def applies(problem) -> bool:
        """Whether the space states both equalities the layout stands for."""
        texts = _texts(problem.space)
        return (STRIP in texts and TILE in texts and "size" in problem.space.choices
                and hasattr(problem.kernel, "logical_dims"))

    def __init__(self, problem):
        index = problem.index
        self.groups: list = []
        where: dict[int, tuple[int, int]] = {}  # size variable -> (group, level)
        by_logical = {}  # by the object, as tile equality compares them (not by name)
        for d in problem.kernel.dims():
            got = index.get(("size", (d.name,)))
            if got is None:
                continue
            g = by_logical.get(d.logical)
            if g is None:
                g = by_logical[d.logical] = len(self.groups)
                self.groups.append((d.logical.size, [[] for _ in range(d.logical.levels)]))
            self.groups[g][1][d.level].append(got[0])
            where[got[0]] = (g, d.level)
        # a logical dimension with a level of no size variable is left out
        # (its product says nothing about the levels we see)
        full = [g for g, (_, levels) in enumerate(self.groups) if all(levels)]
        renum = {g: i for i, g in enumerate(full)}
        self.groups = [self.groups[g] for g in full]
        self.where = {v: (renum[g], lv) for v, (g, lv) in where.items() if g in renum}
        # the dimensions of one level share their sizes' universe (TileRep),
        # so a level's domain is the AND of their masks
        self.universes = []
        for _, levels in self.groups:
            us = tuple(problem.universe[vs[0]] for vs in levels)
            if any(problem.universe[v] != u for vs, u in zip(levels, us) for v in vs):
                raise AssertionError("strip products: one level, two size universes")
            self.universes.append(us)

    def __eq__(self, other) -> bool:  # two builds of one problem are equal (test_extension)
        return isinstance(other, StripLayout) and (self.groups, self.universes, self.where) == (
            other.groups, other.universes, other.where)

    __hash__ = None

    def tuples(self, get, g: int) -> tuple:
        """The size tuples of group g its level domains allow."""
        levels = self.groups[g][1]
        return _tuples(self.groups[g][0], _group_domain(levels, self.universes[g], get))


def _group_domain(levels, universes, get) -> tuple:
    """Per level of one group: the sizes every variable of the level allows."""
    masks = []
    for vs in levels:
        m = -1
        for v in vs:
            m &= get(v)
        masks.append(m)
    return _values(universes, tuple(masks))


_TEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _texts(space) -> frozenset:
    """The constraints of a space as written (a lowering builds a problem
    of the same space again: read them once)."""
    got = _TEXTS.get(space)
    if got is None:
        got = _TEXTS[space] = frozenset(str(g) for g in space.constraints)
    return got


@lru_cache(maxsize=8192)
def _values(universes: tuple, masks: tuple) -> tuple:
    """Per level, the sizes of `universes[l]` that `masks[l]` keeps."""
    return tuple(tuple(u[k] for k in bits(m & ((1 << len(u)) - 1)))
                 for u, m in zip(universes, masks))


@lru_cache(maxsize=8192)
def _tuples(n: int, dom: tuple) -> tuple:
    """The size tuples, one value per level from `dom`, whose product is n."""
    out = []

    def go(level, rest, acc):
        if level == len(dom) - 1:
            if rest in dom[level]:
                out.append((*acc, rest))
            return
        for x in dom[level]:
            if rest % x == 0:
                go(level + 1, rest // x, (*acc, x))

    if dom:
        go(0, n, ())
    return tuple(out)


@lru_cache(maxsize=16384)
def _least(ts: tuple, m: tuple) -> int:
    """The smallest product of the levels counted `m` times over `ts`."""
    return min(_product(t, m) for t in ts)


@lru_cache(maxsize=16384)
def _within(ts: tuple, m: tuple, budget: int) -> tuple:
    return tuple(t for t in ts if _product(t, m) <= budget)


def _product(t: tuple, m: tuple) -> int:
    p = 1
    for x, k in zip(t, m):
        if k:
            p *= x ** k
    return p
