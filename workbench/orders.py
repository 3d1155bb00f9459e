"""Choice orders: which open choice a descent or a search node branches on
(thesis §6.3.3). One registry for the whole workbench.

Decisions commute, so the order only shapes the search tree, never the set
of implementations; specifying the most discriminating choices first lets
the bound and the statistics tell branches apart close to the root.

- `thesis`: the thesis's fixed order — layout, size, dim_kind,
  thread_mapping, mem_space, order, cache. Our space has no separate layout
  choice: the layout of a temporary is decided with `dim_map` (whether a
  point-to-point communication goes through memory), so dim_map takes
  layout's role, right before the memory space of what it creates; our
  `padding` of a shared tile (not in the thesis's space) follows its
  memory space.
- `reverse`: the same list backwards (the §6.3.3 experiment).
- `dynamic`: the look-ahead ranking of the bound (`model.rank_choices`, the
  model gradient of §7.2.2): the choice with the largest guaranteed raise of
  the bound, then the largest spread; the fixed order when no open choice
  moves the bound.
- `structural`: tile sizes, dimension kinds, then fusion (dim_map) and
  nesting (order) before thread mapping and memory — the workbench's default
  before the thesis's order became the only default; on our GPU space it
  meets far fewer dead ends (docs/results.md, space-stats).
- `outer`: the size and kind of the outermost strip level of every nest
  first, then the thesis's order (issue 19: the bound speaks earlier).
- `compute`: the thesis's order, and within each of its choice names the
  choices on the statements with the most points first (the multiply-add's
  dimensions before the loads'). Telamon's dimensions are shared by the
  instructions nested in them, so its thesis order decides the
  computation's loops at once; ours gives every statement its own
  dimensions, and the space's order would decide the first load's first.
- `random`: any open choice, at random — the order a person takes them in
  (the laws hold whatever the order; tests walk it).

A user order is any object with `label`, `next(cand, *, target, parent,
rng)` and `rollout` (the order descents below a search node take); register
it with `register_order` to name it in a search, a CLI flag or a worker task.
"""

from __future__ import annotations

import random
from typing import Callable, Protocol, runtime_checkable

from .candidate import Candidate, Choice, as_objects
from .errors import WorkbenchError
from .kernels import is_loop_nest

THESIS_ORDER = ("size", "dim_kind", "thread_mapping", "dim_map", "mem_space", "padding", "order",
                "cache")
REVERSE_ORDER = tuple(reversed(THESIS_ORDER))
STRUCTURAL_ORDER = ("size", "dim_kind", "dim_map", "order", "thread_mapping", "mem_space",
                    "padding", "cache")


@runtime_checkable
class ChoiceOrder(Protocol):
    label: str

    def next(self, cand: Candidate, *, target=None, parent=None,
             rng: random.Random | None = None) -> Choice | None: ...

    @property
    def rollout(self) -> ChoiceOrder: ...


def open_choice(cand: Candidate, name: str, objects) -> Choice:
    """The open choice instance `name(objects)`, values in the space's order."""
    objects = as_objects(objects)
    for ch in cand.choices():
        if ch.name == name and ch.objects == objects:
            return ch
    raise WorkbenchError(f"{name}({', '.join(objects)}) is not an open choice of this candidate")


class FixedOrder:
    """The first open choice by generic choice name (then in space order)."""

    def __init__(self, names, label: str | None = None):
        self.names = tuple(names)
        self.label = label or ",".join(self.names)
        self._rank = {name: i for i, name in enumerate(self.names)}

    def next(self, cand: Candidate, *, target=None, parent=None, rng=None) -> Choice | None:
        best, best_rank = None, None
        for ch in cand.choices():
            r = self._rank.get(ch.name, len(self._rank))
            if best_rank is None or r < best_rank:
                best, best_rank = ch, r
                if r == 0:
                    break
        return best

    @property
    def rollout(self) -> FixedOrder:  # the fixed order is cheap enough for descents
        return self

    def __repr__(self) -> str:
        return f"FixedOrder({self.label})"


class OuterStripFirst(FixedOrder):
    """The `size` and `dim_kind` of the outermost strip level of every nest
    (the dimension labelled `<nest>_<logical>0`) first, sizes before kinds,
    then the thesis's order: the decisions that fix how much parallelism and
    replication there is come before those that refine them, so the bound
    (which counts both) can tell children apart near the root (issue 19)."""

    FIRST = ("size", "dim_kind")

    def __init__(self, fallback=THESIS_ORDER, label: str = "outer"):
        super().__init__(fallback, label)

    def next(self, cand: Candidate, *, target=None, parent=None, rng=None) -> Choice | None:
        if not is_loop_nest(cand.kernel):  # a basic block has no strips: the fixed order
            return super().next(cand, target=target, parent=parent, rng=rng)
        labels = cand.kernel._cache.get("order_outer_labels")
        if labels is None:
            labels = {d.name: d.label for d in cand.kernel.dims()}
            cand.kernel._cache["order_outer_labels"] = labels
        best, best_rank = None, None
        for ch in cand.choices():
            r = self._rank.get(ch.name, len(self._rank))
            if ch.name in self.FIRST and len(ch.objects) == 1 and \
                    _outer(labels.get(ch.objects[0], "")):
                r = self.FIRST.index(ch.name) - len(self.FIRST)
            if best_rank is None or r < best_rank:
                best, best_rank = ch, r
                if r == -len(self.FIRST):
                    break
        return best

    def __repr__(self) -> str:
        return "OuterStripFirst()"


class ComputeFirst(FixedOrder):
    """The thesis's order by choice name; within a name, the choice whose
    objects belong to the statement with the most points first (an
    instruction's points: the product of the sizes of the logical
    dimensions it iterates on; a dimension's: its instructions'), then the
    space's order. The size and kind of the heaviest statement's loops are
    what the bound reads most (its issue, its chains, its parallelism), so
    deciding them first lets the bound cut near the root as Telamon's does
    (thesis Table 6.3; issue 19)."""

    def __init__(self, names=THESIS_ORDER, label: str = "compute"):
        super().__init__(names, label)

    def next(self, cand: Candidate, *, target=None, parent=None, rng=None) -> Choice | None:
        if not is_loop_nest(cand.kernel):  # a basic block's statements have no points
            return super().next(cand, target=target, parent=parent, rng=rng)
        points = _points(cand.kernel)
        best, best_key = None, None
        for ch in cand.choices():
            key = (self._rank.get(ch.name, len(self._rank)),
                   -max((points.get(o, 0) for o in ch.objects), default=0))
            if best_key is None or key < best_key:
                best, best_key = ch, key
        return best

    def __repr__(self) -> str:
        return "ComputeFirst()"


def _points(kernel) -> dict:
    """Object name -> the points of its statement (cached per kernel: a
    lowering makes a new kernel with new statements)."""
    points = kernel._cache.get("order_points")
    if points is None:
        points = {}
        for inst in kernel.instructions():
            n = points[inst.name] = inst.points()
            for d in inst.dims:
                points[d.name] = max(points.get(d.name, 0), n)
        kernel._cache["order_points"] = points
    return points


def _outer(label: str) -> bool:
    """A dimension label `<nest>_<logical><level>` at level 0."""
    tail = label.rsplit("_", 1)[-1]
    return len(tail) >= 2 and tail.endswith("0") and not tail[-2].isdigit()


class RandomOrder:
    """Any open choice, uniformly (a person's order). Takes the descent's rng
    so that a seeded descent stays reproducible."""

    label = "random"

    def next(self, cand: Candidate, *, target=None, parent=None, rng=None) -> Choice | None:
        open_ = cand.choices()
        return (rng or random).choice(open_) if open_ else None

    @property
    def rollout(self) -> RandomOrder:
        return self

    def __repr__(self) -> str:
        return "RandomOrder()"


class DynamicOrder:
    """The choice the bound is most sensitive to (look-ahead ranking).

    Ranking costs one model run per remaining value of every choice the
    bound reads (about a second at the root of matmul 1024), so by default
    it orders the tree's expansions only and descents use `fallback`.
    `levels`: the ranking orders the first `levels` decisions of a trail,
    descents included (Table 6.3 in this order ranks its first 10 levels:
    2–3 s a node of matmul 1024), and `fallback` every one after."""

    label = "dynamic"

    def __init__(self, fallback: FixedOrder | None = None, *, levels: int = 0):
        if not isinstance(levels, int) or levels < 0:
            raise WorkbenchError(f"levels must be a whole number ≥ 0, got {levels!r}")
        self.fallback = fallback or FixedOrder(THESIS_ORDER, "thesis")
        self.levels = levels

    def next(self, cand: Candidate, *, target=None, parent=None, rng=None) -> Choice | None:
        from .model.lookahead import rank_choices  # the model is heavy; orders are not
        if self.levels and len(cand.trail) >= self.levels:
            return self.fallback.next(cand)
        try:
            ranked = rank_choices(cand, target, limit=1, parent=parent)
        except WorkbenchError:  # a space the GPU model does not read
            ranked = []
        if ranked and (ranked[0].guaranteed_ns > 0 or ranked[0].spread_ns > 0):
            return open_choice(cand, ranked[0].choice, ranked[0].objects)
        return self.fallback.next(cand)

    @property
    def rollout(self) -> ChoiceOrder:
        return self if self.levels else self.fallback

    def __repr__(self) -> str:
        return f"DynamicOrder(levels={self.levels})" if self.levels else "DynamicOrder()"


_ORDERS: dict[str, Callable[[], ChoiceOrder]] = {
    "thesis": lambda: FixedOrder(THESIS_ORDER, "thesis"),
    "reverse": lambda: FixedOrder(REVERSE_ORDER, "reverse"),
    "structural": lambda: FixedOrder(STRUCTURAL_ORDER, "structural"),
    "outer": OuterStripFirst,
    "compute": ComputeFirst,
    "dynamic": DynamicOrder,
    "random": RandomOrder,
}


def register_order(name: str, factory: Callable[[], ChoiceOrder]) -> None:
    """Name a choice order (a factory of objects following `ChoiceOrder`)."""
    if not isinstance(name, str) or not name:
        raise WorkbenchError(f"a choice order needs a non-empty name, got {name!r}")
    _ORDERS[name] = factory


def order_names() -> tuple[str, ...]:
    return tuple(_ORDERS)


def choice_order(spec=None) -> ChoiceOrder:
    """A registered name (default "thesis"), a list of choice names, or an
    order object (returned as is)."""
    if spec is None:
        spec = "thesis"
    if isinstance(spec, str):
        if spec not in _ORDERS:
            raise WorkbenchError(f"unknown choice order {spec!r}: use one of "
                                 f"{', '.join(_ORDERS)} or a list of choice names")
        return _ORDERS[spec]()
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(s, str) for s in spec):
        return FixedOrder(spec)
    if isinstance(spec, ChoiceOrder):
        return spec
    raise WorkbenchError(f"unknown choice order {spec!r}: use one of {', '.join(_ORDERS)}, "
                         "a list of choice names or an object with next() and rollout")


def descent_order(spec=None, *, levels: int = 10) -> ChoiceOrder:
    """The order descents that measure `spec` follow (space statistics,
    Table 6.3): `dynamic` ranks their first `levels` decisions — its
    default rollout is the fixed order, and ranking every node of a descent
    costs minutes —, any other order is its own."""
    order = choice_order(spec)
    if isinstance(order, DynamicOrder) and not order.levels:
        return DynamicOrder(order.fallback, levels=levels)
    return order


def order_spec(order: ChoiceOrder):
    """What names `order` in plain data (a worker task, a record): its
    registered label, else its list of choice names."""
    if getattr(order, "label", None) in _ORDERS:
        return order.label
    names = getattr(order, "names", None)
    if names is None:
        raise WorkbenchError(f"choice order {order!r} has no registered name: register_order it "
                             "to use it in a search's workers")
    return list(names)


__all__ = ["REVERSE_ORDER", "STRUCTURAL_ORDER", "THESIS_ORDER", "ChoiceOrder", "ComputeFirst",
           "DynamicOrder", "FixedOrder", "OuterStripFirst", "RandomOrder", "choice_order",
           "descent_order",
           "open_choice", "order_names", "order_spec", "register_order"]
