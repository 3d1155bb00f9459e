"""Shared test helpers: fixed candidates in a person's order, exhaustive
enumeration, and the checks that stronger propagation removes no solution."""

from __future__ import annotations

import random

import workbench as wb
from workbench.descent import descend
from workbench.witness import find_witness


def all_domains(c) -> dict:
    """Every visible domain, keyed by the choice instance."""
    return {(ch.name, ch.objects): frozenset(ch.values) for ch in c.choices(include_fixed=True)}


def stronger_along_random_paths(weak_root, replay, rng: random.Random, *, descents: int = 4,
                                at=(5, 12)) -> tuple[list, int]:
    """Random-order descents under the weaker propagation: every candidate
    met, replayed with the stronger one (`replay(trail)`), has domains no
    larger, or is a dead end it saw sooner. Returns the candidates met at the
    depths `at` (where to look for implementations found without it) and how
    often the stronger one pruned more (domains strictly smaller, dead ends)."""
    starts, more = [], 0
    strong_root = replayed(replay, weak_root.trail)
    for _ in range(descents):
        c, strong = weak_root, strong_root
        while not c.is_fixed:
            if len(c.trail) in at:
                starts.append(c)
            ch = rng.choice(c.choices())
            try:
                c = c.apply(ch.name, ch.objects, rng.choice(ch.values))
            except wb.DeadEnd:
                break
            # the replay of c's trail, one decision on from the last one
            # (`Candidate.replay` restricts decision by decision: the same
            # candidate as replaying the whole trail, in linear time)
            strong = _restrict_last(strong, c.trail[-1])
            more += pruned_more(c, strong)
    return starts, more


def _restrict_last(strong, d):
    if strong is None:  # a dead end stays one on every longer trail
        return None
    try:
        return strong.restrict(d.choice, d.objects, d.values)
    except wb.DeadEnd:
        return None
    except wb.InvalidDecision:
        if (d.choice, d.objects) not in strong.problem.index:
            raise
        return None  # the stronger one pruned the value taken: a dead end it saw sooner


def replayed(replay, trail):
    """`replay(trail)`, or None where the trail dead-ends."""
    try:
        return replay(trail)
    except wb.DeadEnd:
        return None


def pruned_more(c, strong) -> int:
    """`c` (weaker propagation) beside `strong`, its trail under the
    stronger one (None: a dead end there): its domains are no larger; how
    many are strictly smaller (1 for a dead end it saw sooner)."""
    if strong is None:
        return 1
    weak = all_domains(c)
    more = 0
    for key, values in all_domains(strong).items():
        assert values <= weak.get(key, values), key
        more += values < weak.get(key, values)
    return more


def witnesses_replay(starts, replay, *, budget_s: float = 60) -> int:
    """Implementations found from `starts` under the weaker propagation each
    replay with the stronger one (`replay(trail)`; a DeadEnd there is a
    solution lost) to the same digest; returns how many were found (a start
    on a random path may hold none). A search stops at its first witness,
    so the budget only matters on a loaded machine (20 s missed one of the
    three root witnesses of test_redundant_clauses at a load of 4 on 2 cores;
    the whole test takes 17 s idle)."""
    found = 0
    for seed, start in enumerate(starts):
        w = find_witness(start, rng=random.Random(seed), budget_s=budget_s).witness
        if w is not None:
            found += 1
            assert replay(w.trail).digest() == w.digest()
    return found


def random_order_fixed(cand, rng: random.Random):
    """A fixed candidate by the descent of `workbench.descent` in a person's
    order (random open choice, random value); raises the DeadEnd it meets."""
    d = descend(cand, rng, order="random")
    if d.candidate is None:
        raise d.dead_end
    return d.candidate


def all_fixed(cand):
    """Every fixed candidate below `cand` (exhaustive depth-first search)."""
    out = []
    stack = [cand]
    while stack:
        c = stack.pop()
        if c.is_fixed:
            out.append(c)
            continue
        ch = c.choices()[0]
        for v in ch.values:
            try:
                stack.append(c.apply(ch.name, ch.objects, v))
            except wb.DeadEnd:
                pass
    return out


def dead_end_decisions(root, n: int, seed: int) -> list:
    """(candidate, decision) pairs where a random-order descent (random
    values, as a careless person clicks) took a decision that dead-ends."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        c = root
        while not c.is_fixed:
            ch = rng.choice(c.choices())
            v = rng.choice(ch.values)
            try:
                c = c.apply(ch.name, ch.objects, v)
            except wb.DeadEnd:
                out.append((c, wb.Decision(ch.name, ch.objects, (v,))))
                break
    return out
