"""Shared test helpers: random descents and exhaustive enumeration."""

from __future__ import annotations

import random

import workbench as wb


def descend(cand, rng: random.Random, max_steps=10_000):
    """A random descent: pick a random open choice and a random value until
    fixed. Returns (final candidate, number of dead ends met)."""
    for _ in range(max_steps):
        if cand.is_fixed:
            return cand
        ch = rng.choice(cand.choices())
        cand = cand.apply(ch.name, ch.objects, rng.choice(ch.values))
    raise AssertionError("descent did not end")


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
