"""Carrying a candidate over a lowering (thesis §3.3.4): once triggers fire,
the problem is extended with the objects they add (`Problem.extended`) and
the decision vector moves over to it, carried domains as they were and new
variables from their initial domain.

A new variable starts from its *seed* rather than its raw initial domain:
what propagation leaves of it when the extended problem starts from the
root candidate's domains (a superset of every candidate's below that root).
Propagators are monotone, so the fixpoint of any candidate lies inside the
seed: starting there reaches the same fixpoint, without writing and waking
again, at every lowering, the hundreds of prunings that any candidate meets
(`is_iter_dim.same` of the new dimensions, orders a new load can never
take). Computed once per extended problem, it carries its log, so what a
lowering pruned still names its constraints."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DeadEnd
from .problem import Problem
from .propagators import MASK, TRUE, Store, fixpoint, lit_vars, status


def settle(problem: Problem, st: Store, start):
    """Fixpoint, running triggers and extending the problem as they fire."""
    fixpoint(st, start)
    history: list = []
    while st.pending:
        new = problem.extended(problem.fired | st.pending)
        history.append((problem, st.log))
        st, start = remap(problem, new, st)
        problem = new
        fixpoint(st, start)
    return problem, st, tuple(history)


def remap(old: Problem, new: Problem, st: Store):
    """Carry the domains of choices over to the extended problem; new
    variables start from their seed. Counters are derived values: they
    restart from their initial domain and are recomputed from their
    (possibly new) terms, so that the limits on them (shared memory, threads)
    also judge what the lowering added."""
    plan = transfer_plan(old, new)
    old_tables = st.tables
    tables = []
    for ci, init in enumerate(plan.init):
        w = plan.where[ci]
        if w is None:  # all fresh
            tables.append(list(init))
            continue
        oc, pos = w
        ot = old_tables[oc]
        tables.append([ot[k] if k >= 0 else x for k, x in zip(pos, init)])
    nst = Store(new, tables)
    nst.owned = [True] * len(tables)
    nst.log.extend(plan.log)
    sat = np.frombuffer(nst.sat, np.uint8)  # written in place: a fresh bytearray
    # a clause satisfied before is satisfied after: its literals read
    # carried domains (without this, every clause is found satisfied again
    # by a run after each lowering); one the seed satisfies is satisfied in
    # every candidate below it
    here, there = new.kept_instances(old)
    if len(here):
        sat[here] = np.frombuffer(st.sat, np.uint8)[there]
    if len(plan.sat):
        sat[plan.sat] = 1
    return nst, plan.start


@dataclass(frozen=True)
class TransferPlan:
    """What `remap` needs from the two problems alone, once per pair (a
    lowering is met again and again below the same candidates)."""

    where: list  # per choice: None (all fresh) or (old choice, old position or -1 per variable)
    init: list  # per choice: the initial table, fresh variables at their seed
    log: tuple  # the writes that took fresh variables from initial domain to seed
    sat: np.ndarray  # instances the seed satisfies
    start: list  # the instances to run first


def transfer_plan(old: Problem, new: Problem) -> TransferPlan:
    """Per choice, where each variable's domain comes from in `old` (-1:
    fresh), and the instances to run first: those that read a fresh variable
    and those the lowering created (a snippet condition that changed with
    the kernel), less those the seed satisfies, those that read only fresh
    variables (at a fixpoint on their seeds) and the clauses two of whose
    literals on fresh variables are still open on their seeds (they cannot
    prune before one closes, and their watch wakes them then)."""
    cache = new.__dict__.setdefault("_plan_from", {})
    got = cache.get(id(old))
    if got is not None:
        return got
    where, fresh, counters = [], set(), set()
    for ci, init in enumerate(new.init_tables):
        counter = new.choice_infos[ci].kind == "counter"
        pos, oc = [-1] * len(init), None
        for v in new.choice_vars[ci]:
            got = None if counter else old.index.get(new.keys[v])
            if got is None:
                fresh.add(v)
                if counter:
                    counters.add(v)
                continue
            ov = got[0]
            if oc is None:
                oc = old.vc[ov]
            assert old.vc[ov] == oc  # a choice's variables share one table
            pos[new.vj[v]] = old.vj[ov]
        where.append(None if oc is None else (oc, pos))
    start = {j for v in fresh for _, js in new.wake[v] for j in js}
    start = sorted(start.union(new.new_instances(old)))
    seed = _seed(new, fresh, start)
    insts = new.instances
    if seed is None:
        tables, log, seed_sat = new.init_tables, (), bytearray(len(insts))
    else:
        tables, log, seed_sat = seed
    # a counter restarts from its initial domain (see `remap`)
    tables = [list(t) for t in tables]
    for v in counters:
        tables[new.vc[v]][new.vj[v]] = new.init_tables[new.vc[v]][new.vj[v]]
    seeded = fresh - counters if seed is not None else set()
    log = tuple(e for e in log if e[0] in seeded)
    # the seed's propagation also pruned carried variables, which a
    # candidate's own domains need not show: a clause it satisfied is
    # satisfied below only by a literal on seeded variables (so it reads
    # one: it is in `start`)
    view = Store(new, tables)
    sat = [j for j in start if seed_sat[j]
           and any(seeded.issuperset(lit_vars(lit)) and status(view, lit) == TRUE
                   for lit in insts[j].lits)]
    done, keep = set(sat), []
    for j in start:
        # the seed's propagation left every instance it ran at a fixpoint:
        # one that reads only seeded variables reads the same domains here
        # (a trigger's firing is not in the domains: it runs)
        if j in done or (not insts[j].trigger and seeded.issuperset(insts[j].vars())):
            continue
        if new.guarded[j]:
            open_fresh = {lit[1] for lit in insts[j].lits if lit[0] == MASK and lit[1] in fresh
                          and tables[new.vc[lit[1]]][new.vj[lit[1]]] & lit[2]}
            if len(open_fresh) >= 2:
                continue
        keep.append(j)
    got = cache[id(old)] = TransferPlan(where, tables, log, np.array(sat, dtype=np.intp), keep)
    return got


def _seed(new: Problem, fresh: set, start: list) -> tuple | None:
    """(tables, log, sat) of a propagation of `new` from the root
    candidate's domains (initial ones where the root has no such variable,
    or is not built yet), fresh variables at their initial domain, running
    `start` and what it wakes; None when that dead-ends (then every
    candidate that lowers to `new` does, and finds out on its own)."""
    root = new.root_problem.__dict__.get("_root_candidate")
    tables = [list(t) for t in new.init_tables]
    if root is not None:
        rp, rt = root.problem, root._tables
        for v, key in enumerate(new.keys):
            if v in fresh:
                continue
            got = rp.index.get(key)
            if got is not None:
                rv, inv = got
                assert not inv  # a stored key is stored the same way in every problem
                tables[new.vc[v]][new.vj[v]] = rt[rp.vc[rv]][rp.vj[rv]]
    st = Store(new, tables)
    st.owned = [True] * len(tables)
    try:
        fixpoint(st, start)
    except DeadEnd:
        return None
    return st.tables, st.log, st.sat
