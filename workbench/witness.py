"""Witnesses: proof that a candidate leads somewhere (issue "never stuck").

A *witness* of a candidate C is a fixed candidate W below it: every domain of
W lies inside the same domain of C, so taking W's value for each open choice
of C replays to W without a dead end (W is a propagation fixpoint with every
clause satisfied). A value of an open choice is *proven* when a witness of
its child is known, *dead* when the child dead-ends or its subtree was
searched exhaustively, and *open* otherwise.

Witnesses are found by depth-first search with chronological backtracking
and restarts (a failure limit that doubles each restart, so an early wrong
value does not trap the search in a dead subtree); a run that finishes
within its limit without a witness has searched the whole subtree — the
proof that it holds no implementation.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from .candidate import Candidate, Decision
from .errors import DeadEnd
from .orders import choice_order
from .space.propagators import MASK

# what is known of a value's child (or of a candidate a drop leads to)
PROVEN, DEAD, OPEN = "proven", "dead", "open"


def extends(w: Candidate, c: Candidate) -> bool:
    """True when the fixed candidate `w` lies below `c` (each of w's domains
    inside c's). Counters are derived, so only choices are compared."""
    if not w.is_fixed:
        return False
    pc, pw = c.problem, w.problem
    if pc is pw:
        for ci, info in enumerate(pc.choice_infos):
            if info.kind == "counter":
                continue
            tc, tw = c._tables[ci], w._tables[ci]
            if tc is tw:
                continue
            for a, b in zip(tc, tw):
                if b & ~a:
                    return False
        return True
    for v, key in enumerate(pc.keys):
        if pc.choice_infos[pc.vc[v]].kind == "counter":
            continue
        got = pw.index.get(key)
        if got is None:
            return False
        if w._dom(got[0]) & ~c._dom(v):
            return False
    return True


def adopt(c: Candidate, w: Candidate, order="thesis") -> Candidate:
    """`c` with the decisions that lead to its witness `w` (in the choice
    order), so that the result keeps `c`'s trail and equals `w`."""
    if w.trail[:len(c.trail)] == c.trail:  # found from c itself: replay its own steps
        for d in w.trail[len(c.trail):]:
            c = c.decide(d)
        return c
    order = choice_order(order)
    while not c.is_fixed:
        ch = order.next(c)
        value = w.value(ch.name, ch.objects)
        c = c.decide(Decision(ch.name, ch.objects, (value,)))
    return c


@dataclass
class Search:
    """What one witness search ended with."""
    witness: Candidate | None
    exhausted: bool  # the whole subtree was searched: it holds no implementation
    nodes: int  # candidates visited
    seconds: float


def find_witness(c: Candidate, *, rng: random.Random | None = None, budget_s: float = 1.0,
                 order="thesis", first_limit: int = 32, stop=None) -> Search:
    """A witness of `c` within `budget_s` seconds (see the module docstring);
    `stop()`, asked at every node, gives up early (a newer click)."""
    rng = rng or random.Random(0)
    order = choice_order(order).rollout
    t0 = time.perf_counter()
    deadline = t0 + budget_s

    def give_up() -> bool:
        return time.perf_counter() > deadline or (stop is not None and stop())
    nodes, limit = 0, first_limit
    while True:
        got, complete, n = _dfs(c, rng, order, limit, give_up)
        nodes += n
        if got is not None or complete:
            return Search(got, got is None, nodes, time.perf_counter() - t0)
        if give_up():
            return Search(None, False, nodes, time.perf_counter() - t0)
        limit *= 2


def _dfs(c: Candidate, rng, order, limit: int, give_up):
    """(witness or None, searched completely, nodes); gives up after `limit`
    failed values or when `give_up()` says so (deadline, newer click)."""
    if c.is_fixed:
        return c, True, 1

    def todo(cand) -> list:
        return _shuffled(order.next(cand, rng=rng), rng, lowering_values(cand.problem))
    stack = [(c, todo(c))]
    fails = nodes = 0
    while stack:
        cand, values = stack[-1]
        if not values:
            stack.pop()
            continue
        name, objects, value = values.pop()
        try:
            kid = cand.apply(name, objects, value)
        except DeadEnd:
            fails += 1
            if fails > limit or give_up():
                return None, False, nodes
            continue
        nodes += 1
        if kid.is_fixed:
            return kid, True, nodes
        if give_up():
            return None, False, nodes
        stack.append((kid, todo(kid)))
    return None, True, nodes


def _shuffled(ch, rng, lowering: dict) -> list:
    """The values in random order, to be popped from the end: a value that
    fires a lowering is tried last (building a lowered problem costs
    seconds the first time; a witness without one is found sooner)."""
    vals = list(ch.values)
    rng.shuffle(vals)
    late = lowering.get((ch.name, ch.objects), ())
    vals.sort(key=lambda v: v not in late)
    return [(ch.name, ch.objects, v) for v in vals]


def lowering_values(problem) -> dict:
    """{(choice, objects): values that a trigger's condition names} — the
    decisions that can fire a lowering (thesis §3.3.4)."""
    got = problem.__dict__.get("_lowering_values")
    if got is None:
        got = {}
        for inst in problem.instances:
            if not getattr(inst, "trigger", False):
                continue
            for lit in inst.lits:
                if lit[0] == MASK:
                    u = problem.universe[lit[1]]
                    names = {str(u[i]) for i in range(len(u)) if lit[2] >> i & 1}
                    key = problem.keys[lit[1]]
                    got[key] = got.get(key, frozenset()) | names
        problem._lowering_values = got
    return got


__all__ = ["Search", "adopt", "extends", "find_witness"]
