"""The search tree of TAG-MCTS (thesis §6.1): nodes are candidates, an
expanded node branches on one open choice (one child per remaining value),
and every node keeps the statistics its tree policy reads.

Cuts are recorded with their cause:
- `constraints`: applying the value ran propagation into a dead end;
- `model`: the child's lower bound is at or above the best measured time,
  so nothing below it can improve on the best (checked again whenever the
  best improves);
- `backtrack`: everything below the node was cut or evaluated already.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..candidate import Candidate, Choice
from ..descent import model_weights, weighted_pick
from ..errors import DeadEnd, WorkbenchError

CAUSES = ("constraints", "model", "backtrack")


@dataclass(eq=False)
class Node:
    cand: Candidate
    bound_ns: float
    parent: Node | None = None
    value: str | None = None  # the parent's choice value leading here
    choice: Choice | None = None  # what this node branches on, once expanded
    children: list | None = None
    visits: int = 0
    top: list = field(default_factory=list)  # K best (time, child index or -1) below
    reward: float = 0.0  # UCT: sum of rewards
    cut: str | None = None
    evaluated: bool = False  # a fixed node that was measured

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def decisions(self) -> list:
        """(choice, objects, value) from the search root down to this node."""
        out, n = [], self
        while n.parent is not None:
            out.append((n.parent.choice.name, n.parent.choice.objects, n.value))
            n = n.parent
        return out[::-1]

    def path(self) -> list:
        out, n = [], self
        while n is not None:
            out.append(n)
            n = n.parent
        return out[::-1]


class TAG:
    """Threshold Ascent on Graph (eq. 6.1): each node keeps its K best times;
    s_i counts those reached through child i, n_i its visits, and the child
    maximising (s_i + α + √(2 s_i α + α²)) / n_i goes next, α = ln(2nk/δ)."""

    name = "tag"

    def __init__(self, top_k: int = 10, delta: float = 1.0):
        if top_k < 1 or delta <= 0:
            raise WorkbenchError("TAG needs top_k ≥ 1 and delta > 0")
        self.top_k, self.delta = top_k, delta

    def select(self, node: Node, live: list, best_ns: float, rng: random.Random) -> Node:
        fresh = [c for c in live if c.visits == 0]
        if fresh:  # no statistics yet: the model decides (eq. 6.2)
            got = weighted_pick(fresh, model_weights([c.bound_ns for c in fresh], best_ns), rng)
            return got if got is not None else rng.choice(fresh)
        index = {id(c): i for i, c in enumerate(node.children)}
        s = {i: 0 for i in range(len(node.children))}
        for _, i in node.top:
            if i >= 0:
                s[i] += 1
        n = max(sum(s.values()), 1)
        alpha = math.log(2 * n * len(node.children) / self.delta)

        def score(c):
            si = s[index[id(c)]]
            return (si + alpha + math.sqrt(2 * si * alpha + alpha * alpha)) / c.visits
        top = max(score(c) for c in live)
        return rng.choice([c for c in live if score(c) == top])

    def update(self, path: list, time_ns: float, best_ns: float) -> None:
        for k, node in enumerate(path):
            nxt = path[k + 1] if k + 1 < len(path) else None
            # -1: measured at this node itself (a fixed leaf)
            idx = -1 if nxt is None else next(i for i, c in enumerate(node.children)
                                              if c is nxt)
            bisect.insort(node.top, (time_ns, idx))
            del node.top[self.top_k:]


class UCT:
    """UCB1 over children with reward best/t (1 for a time equal to the best)."""

    name = "uct"

    def __init__(self, c: float = math.sqrt(2)):
        self.c = c

    def select(self, node: Node, live: list, best_ns: float, rng: random.Random) -> Node:
        fresh = [c for c in live if c.visits == 0]
        if fresh:
            got = weighted_pick(fresh, model_weights([c.bound_ns for c in fresh], best_ns), rng)
            return got if got is not None else rng.choice(fresh)
        total = sum(c.visits for c in live)

        def score(ch):
            return ch.reward / ch.visits + self.c * math.sqrt(math.log(total) / ch.visits)
        top = max(score(c) for c in live)
        return rng.choice([c for c in live if score(c) == top])

    def update(self, path: list, time_ns: float, best_ns: float) -> None:
        r = min(best_ns / time_ns, 1.0) if time_ns > 0 else 0.0
        for node in path:
            node.reward += r


@runtime_checkable
class TreePolicy(Protocol):
    """How a search walks its tree: `select` one of a node's live children
    (not cut), `update` the statistics of a path after a measurement."""
    name: str

    def select(self, node: Node, live: list, best_ns: float, rng: random.Random) -> Node: ...

    def update(self, path: list, time_ns: float, best_ns: float) -> None: ...


_POLICIES: dict = {"tag": TAG, "uct": UCT}


def register_policy(name: str, factory) -> None:
    """Name a tree policy (a factory of objects following `TreePolicy`)."""
    if not isinstance(name, str) or not name:
        raise WorkbenchError(f"a tree policy needs a non-empty name, got {name!r}")
    _POLICIES[name] = factory


def tree_policy(spec=None) -> TreePolicy:
    """A registered name (default "tag") or a policy object (returned as is)."""
    if spec is None:
        spec = "tag"
    if isinstance(spec, str):
        if spec not in _POLICIES:
            raise WorkbenchError(f"unknown tree policy {spec!r}: use one of {', '.join(_POLICIES)}")
        return _POLICIES[spec]()
    if isinstance(spec, TreePolicy):
        return spec
    raise WorkbenchError(f"unknown tree policy {spec!r}: use one of {', '.join(_POLICIES)} or an "
                         "object with name, select() and update()")


def children(cand: Candidate, choice: Choice) -> tuple[list, int]:
    """[(value, child)] for every remaining value of `choice` whose decision
    propagates, and how many ran into a dead end."""
    kids, dead = [], 0
    for value in choice.values:
        try:
            kids.append((value, cand.apply(choice.name, choice.objects, value)))
        except DeadEnd:
            dead += 1
    return kids, dead


def expand(node: Node, choice: Choice, bound_fn, cuts: dict) -> None:
    """One child per remaining value; dead ends are cut (constraints)."""
    node.choice = choice
    kids, dead = children(node.cand, choice)
    cuts["constraints"] += dead
    node.children = [Node(child, max(bound_fn(child), node.bound_ns), node, value)
                     for value, child in kids]
    if not node.children:
        node.cut = "backtrack"
        cuts["backtrack"] += 1


__all__ = ["CAUSES", "TAG", "UCT", "Node", "TreePolicy", "children", "expand", "model_weights",
           "register_policy", "tree_policy", "weighted_pick"]
