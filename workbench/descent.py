"""Random descents through a decision space (thesis §4.5.2 and §6.2.2).

A descent fixes open choices one at a time, in a fixed choice order (the
thesis's search specifies choices in an order fixed upfront, most important
first), taking a random value each time, until the candidate is fixed or
propagation runs into a dead end. The Knuth estimate of the number of fixed
candidates is the product of the branching factors met on the way.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from .candidate import Candidate
from .errors import DeadEnd

# Most structural decisions first (tile sizes, then how each loop is
# implemented, then fusion and nesting); later choices are then mostly forced.
CHOICE_ORDER = ("size", "dim_kind", "dim_map", "order", "thread_mapping", "mem_space", "cache")


def next_choice(cand: Candidate, order=CHOICE_ORDER):
    """The first open choice instance in `order` (then in space order)."""
    best, best_rank = None, None
    rank = {name: i for i, name in enumerate(order)}
    for ch in cand.choices():
        r = rank.get(ch.name, len(rank))
        if best_rank is None or r < best_rank:
            best, best_rank = ch, r
            if r == 0:
                break
    return best


@dataclass
class Descent:
    candidate: Candidate | None  # the fixed candidate, None after a dead end
    depth: int  # decisions taken
    log10_estimate: float  # log10 of the product of branching factors (Knuth)
    dead_end: DeadEnd | None = None
    retries: int = 0  # values that ran into a dead end and were tried again
    path: tuple = ()  # with keep_path: the candidates from the root down


def descend(root: Candidate, rng: random.Random, backtrack: bool = False,
            order=CHOICE_ORDER, keep_path: bool = False) -> Descent:
    """One random descent. With `backtrack`, a value that runs into a dead end
    is removed and another value of the same choice is tried (a test that
    needs fixed candidates); without, the descent stops there (the thesis's
    dead-end probability)."""
    cand, depth, log10, retries = root, 0, 0.0, 0
    path = [root]
    while not cand.is_fixed:
        ch = next_choice(cand, order)
        values = list(ch.values)
        log10 += math.log10(len(values))
        while True:
            v = values.pop(rng.randrange(len(values)))
            try:
                cand = cand.apply(ch.name, ch.objects, v)
                break
            except DeadEnd as e:
                if not backtrack or not values:
                    return Descent(None, depth, log10, e, retries,
                                   tuple(path) if keep_path else ())
                retries += 1
        depth += 1
        if keep_path:
            path.append(cand)
    return Descent(cand, depth, log10, None, retries, tuple(path) if keep_path else ())


def random_fixed(root: Candidate, rng: random.Random, attempts: int = 50) -> Candidate:
    """A random fixed candidate (descents with backtracking, restarted on failure)."""
    last = None
    for _ in range(attempts):
        d = descend(root, rng, backtrack=True)
        if d.candidate is not None:
            return d.candidate
        last = d.dead_end
    raise last


def space_stats(root: Candidate, descents: int, seed: int) -> dict:
    """Dead-end probability, mean depth and a Knuth estimate of the number of
    fixed candidates (thesis Tables 4.3 and 6.1) from random descents."""
    rng = random.Random(seed)
    dead = 0
    depths: list[int] = []
    estimates: list[float] = []
    for _ in range(descents):
        d = descend(root, rng)
        if d.candidate is None:
            dead += 1
            estimates.append(-math.inf)  # a dead end contributes 0 leaves
        else:
            depths.append(d.depth)
            estimates.append(d.log10_estimate)
    finite = [e for e in estimates if e != -math.inf]
    if finite:  # log10 of the mean of 10^e, computed stably
        top = max(finite)
        log10_size = top + math.log10(sum(10 ** (e - top) for e in finite) / len(estimates))
    else:
        log10_size = None
    mean_depth = sum(depths) / len(depths) if depths else 0.0
    return {"descents": descents, "dead_ends": dead,
            "dead_end_probability": dead / descents if descents else 0.0,
            "mean_depth": mean_depth, "log10_space_size": log10_size}
