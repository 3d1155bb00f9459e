"""Propagators over a decision vector (thesis §3.5.4–3.5.5).

Domains are ints: a bitset over the instance's values for enum and integer
choices, a (min, max) pair for counters. The decision vector is stored per
generic choice (one list per choice) so that a new candidate copies only the
lists propagation wrote to (copy-on-write, as in the thesis's §3.5.1).

Literals, the building blocks of clauses and trigger conditions, are tuples:

    (MASK, v, mask)                 domain(v) ⊆ mask
    (PAIR, v1, v2, t12, t21)        a binary relation given by support masks:
                                    value i of v1 is compatible with the values
                                    t12[i] of v2 (and t21 the other way)
    (NUM, lhs, op, rhs)             interval reasoning when a counter is
                                    involved; sides are ("c", int),
                                    ("i", v) integer choice, ("k", v) counter,
                                    ("s", frozenset) membership
"""

from __future__ import annotations

from collections import deque

import numpy as np

MASK, PAIR, NUM = 0, 1, 2
FALSE, TRUE, UNKNOWN = 0, 1, 2
INF = 1 << 62

DECISION = -1  # cause of a write: the decision itself
LOWERING = -2  # cause of a write: objects added by a trigger
EXTRA = -3  # cause of a write: an optional extra propagator at the root (e.g. the FCG)


class Store:
    """A mutable view of a decision vector during one propagation."""

    __slots__ = ("log", "owned", "pending", "problem", "sat", "tables", "universe", "vc", "vj")

    def __init__(self, problem, tables, sat: bytes | None = None):
        self.problem = problem
        self.tables = list(tables)
        # sat[i]: clause instance i has a literal that is surely true, so it
        # can never prune again below this candidate (domains only shrink);
        # the fixpoint skips it (79 % of clause runs on matmul 1024 were of
        # satisfied clauses). Marked when a run finds it, when a watched
        # literal becomes true (`_wake`, `decision_start`), and carried over
        # a lowering (`lowering.remap`). Kept packed in the candidate.
        self.sat = unpack_sat(sat, len(problem.instances))
        self.owned = [False] * len(self.tables)
        self.vc = problem.vc
        self.vj = problem.vj
        self.universe = problem.universe
        self.log: list = []
        self.pending: set = set()

    def get(self, v):
        return self.tables[self.vc[v]][self.vj[v]]

    def put(self, v, new, cause) -> None:
        c = self.vc[v]
        t = self.tables[c]
        if not self.owned[c]:
            t = self.tables[c] = t.copy()
            self.owned[c] = True
        j = self.vj[v]
        self.log.append((v, t[j], new, cause))
        t[j] = new

    def restrict(self, v, mask, cause) -> bool:
        d = self.get(v)
        nd = d & mask
        if nd == d:
            return False
        if nd == 0:
            raise self.problem.dead_end(cause, v)
        self.put(v, nd, cause)
        return True

    # interval of a numeric side
    def bounds(self, side):
        kind = side[0]
        if kind == "c":
            return side[1], side[1]
        if kind == "k":
            return self.get(side[1])
        d = self.get(side[1])
        u = self.universe[side[1]]
        return u[(d & -d).bit_length() - 1], u[d.bit_length() - 1]

    def tighten(self, side, lo, hi, cause) -> list:
        """Restrict a numeric side to [lo, hi]; returns the variables changed."""
        kind = side[0]
        v = side[1] if kind in ("i", "k") else None
        if kind == "c":
            if not lo <= side[1] <= hi:
                raise self.problem.dead_end(cause, None)
            return []
        if kind == "k":
            clo, chi = self.get(v)
            nlo, nhi = max(clo, lo), min(chi, hi)
            if nlo > nhi:
                raise self.problem.dead_end(cause, v)
            if (nlo, nhi) != (clo, chi):
                self.put(v, (nlo, nhi), cause)
                return [v]
            return []
        u = self.universe[v]
        mask = 0
        for i, x in enumerate(u):
            if lo <= x <= hi:
                mask |= 1 << i
        return [v] if self.restrict(v, mask, cause) else []


def unpack_sat(packed: bytes | None, n: int) -> bytearray:
    if packed is None:
        return bytearray(n)
    return bytearray(np.unpackbits(np.frombuffer(packed, np.uint8), count=n).tobytes())


def pack_sat(sat: bytearray) -> bytes:
    return np.packbits(np.frombuffer(sat, np.uint8)).tobytes()


def bits(d: int):
    while d:
        low = d & -d
        yield low.bit_length() - 1
        d ^= low


# ------------------------------------------------------------------ literals
def status(st: Store, lit) -> int:
    k = lit[0]
    if k == MASK:
        d = st.get(lit[1])
        m = lit[2]
        if d & m == 0:
            return FALSE
        return TRUE if d & ~m == 0 else UNKNOWN
    if k == PAIR:
        d1, d2 = st.get(lit[1]), st.get(lit[2])
        t12 = lit[3]
        all_true = all_false = True
        for i in bits(d1):
            s = t12[i]
            if d2 & ~s:
                all_true = False
            if d2 & s:
                all_false = False
            if not (all_true or all_false):
                return UNKNOWN
        return TRUE if all_true else FALSE
    return _num_status(st, lit)


def _num_status(st: Store, lit) -> int:
    _, lhs, op, rhs = lit
    a, b = st.bounds(lhs)
    if rhs[0] == "s":
        inside = any(a <= s <= b for s in rhs[1])
        fixed_in = a == b and a in rhs[1]
        eq = TRUE if fixed_in else (FALSE if not inside else UNKNOWN)
        return eq if op == "==" else (UNKNOWN if eq == UNKNOWN else 1 - eq)
    c, d = st.bounds(rhs)
    if op == "<=":
        return TRUE if b <= c else (FALSE if a > d else UNKNOWN)
    if op == "<":
        return TRUE if b < c else (FALSE if a >= d else UNKNOWN)
    eq = TRUE if a == b == c == d else (FALSE if b < c or d < a else UNKNOWN)
    return eq if op == "==" else (UNKNOWN if eq == UNKNOWN else 1 - eq)


def enforce(st: Store, lit, cause) -> list:
    k = lit[0]
    if k == MASK:
        return [lit[1]] if st.restrict(lit[1], lit[2], cause) else []
    if k == PAIR:
        return _enforce_pair(st, lit, cause)
    return _enforce_num(st, lit, cause)


def _enforce_pair(st: Store, lit, cause) -> list:
    """Arc consistency on a binary relation given by support masks."""
    v1, v2 = lit[1], lit[2]
    out = [v1] if st.restrict(v1, _projection(st, lit, v1), cause) else []
    if st.restrict(v2, _projection(st, lit, v2), cause):
        out.append(v2)
    return out


def _enforce_num(st: Store, lit, cause) -> list:
    """Interval reasoning on a numeric literal."""
    _, lhs, op, rhs = lit
    a, b = st.bounds(lhs)
    if rhs[0] == "s":
        return _enforce_membership(st, lhs, op, rhs[1], a, b, cause)
    c, d = st.bounds(rhs)
    if op == "<=":
        return st.tighten(lhs, -INF, d, cause) + st.tighten(rhs, a, INF, cause)
    if op == "<":
        return st.tighten(lhs, -INF, d - 1, cause) + st.tighten(rhs, a + 1, INF, cause)
    if op == "==":
        lo, hi = max(a, c), min(b, d)
        return st.tighten(lhs, lo, hi, cause) + st.tighten(rhs, lo, hi, cause)
    return _enforce_ne(st, lhs, rhs, a, b, c, d, cause)


def _enforce_membership(st: Store, lhs, op, members, a, b, cause) -> list:
    """lhs == / != a member of a set: tighten lhs to the members inside
    [a, b], or shave members off its bounds."""
    if op == "==":
        inside = [s for s in sorted(members) if a <= s <= b]
        if not inside:
            raise st.problem.dead_end(cause, lhs[1] if lhs[0] != "c" else None)
        return st.tighten(lhs, inside[0], inside[-1], cause)
    while a <= b and a in members:
        a += 1
    while b >= a and b in members:
        b -= 1
    return st.tighten(lhs, a, b, cause)


def _enforce_ne(st: Store, lhs, rhs, a, b, c, d, cause) -> list:
    """lhs != rhs: once one side is fixed, only the other's bounds can move
    (or, for an integer choice, the fixed value's bit)."""
    out = []
    if c == d:
        out += _exclude(st, lhs, a, b, c, cause)
    a, b = st.bounds(lhs)
    if a == b:
        out += _exclude(st, rhs, c, d, a, cause)
    return out


def _exclude(st: Store, side, lo, hi, x, cause) -> list:
    """Remove the value x from a numeric side with bounds [lo, hi]."""
    if side[0] == "i":
        u = st.universe[side[1]]
        if x in u and st.restrict(side[1], ~(1 << u.index(x)), cause):
            return [side[1]]
        return []
    return st.tighten(side, lo + (lo == x), hi - (hi == x), cause)


# ---------------------------------------------------------------- instances
class Clause:
    """One instance of a generic constraint: a disjunction of literals."""

    __slots__ = ("id", "lits", "objects", "origin")
    trigger = False

    def __init__(self, lits, origin, objects):
        self.lits = tuple(lits)
        self.origin = origin
        self.objects = objects

    def vars(self):
        for lit in self.lits:
            yield from lit_vars(lit)

    def run(self, st: Store):
        tables, vc, vj = st.tables, st.vc, st.vj
        first = None
        rest = None
        # mv: the variable of the first open MASK literal; held: an open
        # MASK literal on another variable too, so the clause cannot prune
        # (most runs: a transitivity clause woken by one false literal while
        # its other two are open); the scan goes on only to find a true literal
        mv, held = -1, False
        for lit in self.lits:
            if lit[0] == MASK:
                v = lit[1]
                d = tables[vc[v]][vj[v]]
                m = lit[2]
                if d & m == 0:
                    continue
                if d & ~m == 0:
                    st.sat[self.id] = 1
                    return ()
                if mv == -1:
                    mv = v
                elif v != mv:
                    held = True
                    continue
            else:
                s = status(st, lit)
                if s == FALSE:
                    continue
                if s == TRUE:
                    st.sat[self.id] = 1
                    return ()
            if first is None:
                first = lit
            elif rest is None:
                rest = [lit]
            else:
                rest.append(lit)
        if first is None:
            raise st.problem.dead_end(self.id, None)
        if held:
            return ()
        if rest is None:
            return enforce(st, first, self.id)
        return _enforce_union(st, first, rest, self.id)


def _enforce_union(st: Store, first, rest, cause) -> list:
    """Several open literals: when they all bear on one variable, that
    variable keeps the union of what they allow. A binary relation bears on
    both of its variables: it allows a value of one only if some value of
    the other supports it, so `order(y, d) is IN | MERGED || order(y, x) ==
    order(y, d)` keeps of order(y, d) IN, MERGED and the values order(y, x)
    may still take (eq. 4.4 pruned none before one side was fixed)."""
    for v in lit_vars(first):
        mask = 0
        for lit in (first, *rest):
            got = _projection(st, lit, v)
            if got is None:
                break
            mask |= got
        else:
            return [v] if st.restrict(v, mask, cause) else []
    return ()


def _projection(st: Store, lit, v):
    """The values of `v` under which `lit` may still hold (a mask), or None
    when it does not bear on `v` alone (another variable, or a numeric
    literal). For a relation: the values of one side that some value of the
    other side's domain supports (its tables are each other's transpose)."""
    if lit[0] == MASK:
        return lit[2] if lit[1] == v else None
    if lit[0] == PAIR:
        if lit[2] == v:  # values of v2 supported by some value of v1
            sup, table = st.get(lit[1]), lit[3]
        elif lit[1] == v:
            sup, table = st.get(lit[2]), lit[4]
        else:
            return None
        mask = 0
        for i in bits(sup):
            mask |= table[i]
        return mask
    return None


class Counter:
    """Keeps a counter's [min, max] equal to the sum/product of its terms and
    prunes the terms that would push it out of its domain (thesis §3.5.2)."""

    __slots__ = ("half", "id", "objects", "op", "origin", "terms", "var")
    trigger = False

    def __init__(self, var, op, terms, half, origin, objects):
        self.var = var
        self.op = op
        self.terms = terms  # list of (delta var or -1, value side)
        self.half = half
        self.origin = origin
        self.objects = objects

    def vars(self):
        yield self.var
        for delta, side in self.terms:
            if delta >= 0:
                yield delta
            if side[0] in ("i", "k"):
                yield side[1]

    def run(self, st: Store):
        mul = self.op == "mul"
        changed = []
        while True:
            lo, hi, state = self._sum_bounds(st, mul)
            clo, chi = st.get(self.var)
            nlo, nhi = max(clo, lo), min(chi, hi)
            if nlo > nhi:
                raise st.problem.dead_end(self.id, self.var)
            if (nlo, nhi) != (clo, chi):
                st.put(self.var, (nlo, nhi), self.id)
                changed.append(self.var)
            if not self._prune_terms(st, mul, lo, hi, nlo, nhi, state, changed):
                return changed

    def _sum_bounds(self, st: Store, mul: bool):
        """[lo, hi] of the sum/product of the terms, and each term's
        (delta domain, vmin, vmax)."""
        lo = hi = 1 if mul else 0
        state = []
        for delta, side in self.terms:
            dd = 2 if delta < 0 else st.get(delta)  # bit0: FALSE, bit1: TRUE
            vmin, vmax = st.bounds(side)
            state.append((dd, vmin, vmax))
            if dd == 2:
                lo = lo * vmin if mul else lo + vmin
            if dd & 2 and not self.half:
                hi = hi * vmax if mul else hi + vmax
        if self.half:
            hi = INF
        return lo, hi, state

    def _prune_terms(self, st: Store, mul: bool, lo, hi, nlo, nhi, state, changed) -> bool:
        """Fix the deltas and tighten the values of the terms that would push
        the counter out of [nlo, nhi]; True when something changed."""
        progress = False
        for (delta, side), (dd, vmin, vmax) in zip(self.terms, state):
            if not dd & 2:
                continue
            if dd == 2:
                olo = lo // vmin if mul else lo - vmin
            else:
                olo = lo
            ohi = INF if self.half else (hi // vmax if mul else hi - vmax)
            if dd == 3:
                if (olo * vmin if mul else olo + vmin) > nhi:
                    st.restrict(delta, 1, self.id)
                    changed.append(delta)
                    progress = True
                    continue
                if not self.half and ohi < nlo:
                    st.restrict(delta, 2, self.id)
                    changed.append(delta)
                    progress = True
                else:
                    continue
            if side[0] in ("i", "k") and vmin != vmax:
                if mul:
                    vlo = -(-nlo // ohi) if not self.half and ohi > 0 else -INF
                    vhi = nhi // olo if olo > 0 else INF
                else:
                    vlo, vhi = (nlo - ohi if not self.half else -INF), nhi - olo
                got = st.tighten(side, vlo, vhi, self.id)
                if got:
                    changed += got
                    progress = True
        return progress


class Trigger:
    """A lowering (thesis §3.3.4): fires once all its conditions hold."""

    __slots__ = ("id", "key", "lits", "objects", "origin")
    trigger = True

    def __init__(self, lits, key, origin, objects):
        self.lits = tuple(lits)
        self.key = key
        self.origin = origin
        self.objects = objects

    def vars(self):
        for lit in self.lits:
            yield from lit_vars(lit)

    def run(self, st: Store):
        if self.key in st.problem.fired:
            return ()
        for lit in self.lits:
            if status(st, lit) != TRUE:
                return ()
        st.pending.add(self.key)
        return ()


def lit_vars(lit):
    if lit[0] == MASK:
        yield lit[1]
    elif lit[0] == PAIR:
        yield lit[1]
        yield lit[2]
    else:
        for side in (lit[1], lit[3]):
            if side[0] in ("i", "k"):
                yield side[1]


HELD, SATISFIED = 1, 2


def _screen(lits, tables, vc, vj) -> int:
    """Whether a guarded clause needs a run: SATISFIED when one of its MASK
    literals is surely true (it can never prune again), HELD when two MASK
    literals on different variables are still open (it cannot prune now, see
    Problem.guarded), else 0."""
    one, held = -1, False
    for lit in lits:
        if lit[0] != MASK:
            continue
        v = lit[1]
        d = tables[vc[v]][vj[v]]
        m = lit[2]
        if d & m:
            if d & ~m == 0:
                return SATISFIED
            if one == -1:
                one = v
            elif one != v:
                held = True
    return HELD if held else 0


def fixpoint(st: Store, start) -> None:
    """Run propagators until none prunes (thesis Algorithm 1). `start` lists
    the instances to run first; each change schedules the instances that watch
    the changed variable (a clause only when one of its literals is false;
    when one became true the clause is marked satisfied instead, for this
    candidate and every one below it). Global propagators (`problem.lazy`,
    e.g. `thread_levels`) watch nothing: they run once the queue is empty and
    something changed since their last run, which costs one run per fixpoint
    instead of one per change."""
    problem = st.problem
    insts = problem.instances
    inq = bytearray(st.sat)  # a satisfied clause is never queued
    queue = deque()
    # a clause with two open MASK literals on different variables cannot
    # prune now, and its watch wakes it once one of them is false (after a
    # lowering, most of the tens of thousands of instances that read a fresh
    # variable are such clauses)
    _queue_screened(st, start, -1, inq, queue.append)
    lazy = problem.lazy
    seen = -1  # len(st.log) when the global propagators last ran
    while True:
        _drain(st, queue, inq)
        if not lazy or len(st.log) == seen:
            return
        seen = len(st.log)
        for i in lazy:
            for v in insts[i].run(st):
                _wake(st, v, i, inq, queue.append)


def decision_start(st: Store, v: int) -> list:
    """The instances to run after a decision wrote variable `v` (the parent
    was at a fixpoint): those watching `v` on any change, and the clauses
    whose literal on `v` the decision made false; the clauses whose literal
    on `v` it made true are marked satisfied instead of run."""
    d = st.get(v)
    sat = st.sat
    out: list = []
    for m, js in st.problem.wake[v]:
        if m == -1 or d & m == 0:
            out += js
        elif d & ~m == 0:
            for j in js:
                sat[j] = 1
    return out


def _drain(st: Store, queue: deque, inq: bytearray) -> None:
    """Run the queued instances, and those their changes wake, until none is left."""
    insts = st.problem.instances
    sat = st.sat
    pop, push = queue.popleft, queue.append
    while queue:
        i = pop()
        if sat[i]:  # marked satisfied by a watch after it was queued
            continue
        inq[i] = 0
        changed = insts[i].run(st)
        inq[i] = sat[i]
        for v in changed:
            _wake(st, v, i, inq, push)


def _wake(st: Store, v: int, i: int, inq: bytearray, push) -> None:
    """Queue what a change of `v` by instance `i` wakes: a clause watching a
    MASK literal on `v` once that literal is false; every other watcher on
    any change, less the guarded clauses that still cannot prune."""
    sat = st.sat
    d = st.get(v)
    for m, js in st.problem.wake[v]:
        if m != -1:
            if d & m == 0:
                for j in js:
                    if not inq[j] and j != i:
                        inq[j] = 1
                        push(j)
            elif d & ~m == 0:
                # the literal became true: every clause holding it is
                # satisfied for good; marking them now costs a store each,
                # where finding it out later costs a run
                for j in js:
                    sat[j] = inq[j] = 1
            continue
        _queue_screened(st, js, i, inq, push)


def _queue_screened(st: Store, js, i: int, inq: bytearray, push) -> None:
    """Queue the instances `js` not queued yet (nor `i`, the one running),
    less the guarded clauses that cannot prune now (`_screen`: held open, or
    satisfied, which are marked so)."""
    problem = st.problem
    insts, guarded = problem.instances, problem.guarded
    tables, vc, vj = st.tables, st.vc, st.vj
    sat = st.sat
    for j in js:
        if inq[j] or j == i:
            continue
        if guarded[j]:
            s = _screen(insts[j].lits, tables, vc, vj)
            if s:
                if s == SATISFIED:
                    sat[j] = inq[j] = 1
                continue
        inq[j] = 1
        push(j)
