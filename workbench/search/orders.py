"""Choice orders: which open choice a search node branches on (thesis §6.3.3).

Decisions commute, so the order only shapes the search tree, never the set
of implementations; specifying the most discriminating choices first lets
the bound and the statistics tell branches apart close to the root.

- `thesis`: the thesis's fixed order — layout, size, dim_kind,
  thread_mapping, mem_space, order, cache. Our space has no separate layout
  choice: the layout of a temporary is decided with `dim_map` (whether a
  point-to-point communication goes through memory), so dim_map takes
  layout's role, right before the memory space of what it creates.
- `reverse`: the same list backwards (the §6.3.3 experiment).
- `dynamic`: the look-ahead ranking of the bound (`model.rank_choices`, the
  model gradient of §7.2.2): the choice with the largest guaranteed raise of
  the bound, then the largest spread; the fixed order when no open choice
  moves the bound.
"""

from __future__ import annotations

from ..candidate import Candidate, Choice
from ..descent import next_choice
from ..errors import WorkbenchError

THESIS_ORDER = ("size", "dim_kind", "thread_mapping", "dim_map", "mem_space", "order", "cache")
REVERSE_ORDER = tuple(reversed(THESIS_ORDER))


def open_choice(cand: Candidate, name: str, objects) -> Choice:
    """The open choice instance `name(objects)`, values in the space's order."""
    objects = tuple(objects)
    for ch in cand.choices():
        if ch.name == name and ch.objects == objects:
            return ch
    raise WorkbenchError(f"{name}({', '.join(objects)}) is not an open choice of this candidate")


class FixedOrder:
    """The first open choice by generic choice name (then in space order)."""

    def __init__(self, names, label: str | None = None):
        self.names = tuple(names)
        self.label = label or ",".join(self.names)

    def next(self, cand: Candidate, target=None, parent=None) -> Choice | None:
        return next_choice(cand, self.names)

    # a rollout takes this order too (the fixed order is cheap)
    @property
    def rollout(self) -> FixedOrder:
        return self

    def __repr__(self) -> str:
        return f"FixedOrder({self.label})"


class DynamicOrder:
    """The choice the bound is most sensitive to (look-ahead ranking).

    Ranking costs one model run per remaining value of every choice the
    bound reads (about a second at the root of matmul 1024), so it orders
    the tree's expansions only; Monte-Carlo descents use `fallback`."""

    label = "dynamic"

    def __init__(self, fallback: FixedOrder | None = None):
        self.fallback = fallback or FixedOrder(THESIS_ORDER, "thesis")

    def next(self, cand: Candidate, target=None, parent=None) -> Choice | None:
        from ..model.lookahead import rank_choices
        try:
            ranked = rank_choices(cand, target, limit=1, parent=parent)
        except WorkbenchError:  # a space the GPU model does not read
            ranked = []
        if ranked and (ranked[0].guaranteed_ns > 0 or ranked[0].spread_ns > 0):
            return open_choice(cand, ranked[0].choice, ranked[0].objects)
        return self.fallback.next(cand)

    @property
    def rollout(self) -> FixedOrder:
        return self.fallback

    def __repr__(self) -> str:
        return "DynamicOrder()"


def choice_order(spec) -> FixedOrder | DynamicOrder:
    """`"thesis"`, `"reverse"`, `"dynamic"`, a list of choice names, or an order object."""
    if isinstance(spec, (FixedOrder, DynamicOrder)):
        return spec
    if spec in (None, "thesis"):
        return FixedOrder(THESIS_ORDER, "thesis")
    if spec == "reverse":
        return FixedOrder(REVERSE_ORDER, "reverse")
    if spec == "dynamic":
        return DynamicOrder()
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(s, str) for s in spec):
        return FixedOrder(spec)
    raise WorkbenchError(f"unknown choice order {spec!r}: use thesis, reverse, dynamic or a "
                         "list of choice names")


__all__ = ["REVERSE_ORDER", "THESIS_ORDER", "DynamicOrder", "FixedOrder", "choice_order",
           "open_choice"]
