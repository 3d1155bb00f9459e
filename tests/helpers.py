"""Shared test helpers: fixed candidates in a person's order, exhaustive enumeration."""

from __future__ import annotations

import random

import workbench as wb
from workbench.descent import descend


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
