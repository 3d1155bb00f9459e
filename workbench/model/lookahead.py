"""Look-ahead: the bound of each child of an open choice, and a ranking of
open choices by how much they can raise the bound (the model gradient of
thesis §7.2.2), so that the most discriminating decision can go first.

`lookahead` applies each remaining value with full propagation (the child a
person would get). `rank_choices` is cheaper: for every choice instance the
model read, it evaluates the model with that one domain restricted to each
value and *no* propagation. That is still a lower bound for every
implementation taking the value (the model only reads domains, and the
restricted domains contain them all), so `guaranteed` — the smallest raise
over the values — is a raise every child is certain to get, and `spread` the
difference between the best and the worst value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..candidate import as_objects
from ..errors import DeadEnd, InvalidDecision
from .bound import Bound, bound


@dataclass(frozen=True)
class Child:
    value: str
    bound: Bound | None  # None: the value leads to a dead end
    error: str = ""
    # the child itself, only when asked for (`keep=True`): candidates are
    # large, a cache of look-aheads must not hold them
    cand: object = field(default=None, compare=False, repr=False)
    # the child's fired triggers when its decision lowered something (its
    # problem is an extended one the parent's is not): what to build ahead
    lowering: frozenset = field(default=frozenset(), compare=False)

    @property
    def value_ns(self) -> float:
        return self.bound.value_ns if self.bound is not None else float("inf")


class Stopped(Exception):
    """A look-ahead given up because its `stop()` said so (a newer request)."""


def lookahead(cand, choice: str, objects, target=None, parent: Bound | None = None,
              stop=None, keep: bool = False) -> list[Child]:
    """Bound of the candidate after each remaining value of one choice;
    `stop()`, asked before each value, abandons it (raises Stopped);
    `keep`: each Child holds its candidate too."""
    parent = parent or bound(cand, target)
    out = []
    objects = as_objects(objects)
    for value in sorted(cand.domain(choice, objects)):
        if stop is not None and stop():
            raise Stopped(f"look-ahead of {choice}{objects} stopped")
        try:
            child = cand.apply(choice, objects, value)
        except DeadEnd as exc:
            out.append(Child(value, None, str(exc)))
            continue
        lowered = child.problem.fired if child.problem is not cand.problem else frozenset()
        out.append(Child(value, bound(child, target, parent=parent), cand=child if keep else None,
                         lowering=lowered))
    return out


@dataclass(frozen=True)
class Ranked:
    choice: str
    objects: tuple
    guaranteed_ns: float  # min over values of the raise of the bound
    spread_ns: float  # max - min over values of the (unpropagated) bound
    per_value: dict  # value -> bound in ns (unpropagated)


def rank_choices(cand, target=None, limit: int | None = None, parent: Bound | None = None,
                 stop=None) -> list[Ranked]:
    """Open choice instances the bound depends on, most discriminating first
    (largest guaranteed raise, then largest spread). `stop()`, asked before
    each choice, abandons the ranking (raises Stopped): it bounds every value
    of every choice the bound reads, seconds on the thesis's matmuls."""
    base = parent or bound(cand, target)
    p = cand.problem
    out = []
    for v in sorted(base.reads):
        if stop is not None and stop():
            raise Stopped("ranking stopped")
        info = p.choice_infos[p.vc[v]]
        if info.kind == "counter" or info.hidden:
            continue
        dom = cand._dom(v)
        if not dom & (dom - 1):
            continue
        name, objs = p.keys[v]
        per = {}
        for bit in range(dom.bit_length()):
            if not dom >> bit & 1:
                continue
            label = cand._names(v, 1 << bit)[0]
            try:
                b = bound(cand, target, override={v: 1 << bit})
            except (InvalidDecision, ValueError, KeyError):
                continue
            per[label] = max(b.raw_ns, base.value_ns)
        if not per:
            continue
        lo, hi = min(per.values()), max(per.values())
        out.append(Ranked(name, objs, lo - base.value_ns, hi - lo, per))
    out.sort(key=lambda r: (-r.guaranteed_ns, -r.spread_ns, r.choice, r.objects))
    return out[:limit] if limit else out


__all__ = ["Child", "Ranked", "lookahead", "rank_choices"]
