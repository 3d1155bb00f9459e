"""What the model reads from a candidate: domains of the GPU space's choices,
decoded once per (variable, mask) and kept per problem.

`Facts` also answers the questions the thesis's model asks of open choices
(§5.1.2–5.1.3): the dimensions that *may* map to a parallelism level, the
minimal size and a common multiple of the sizes of a set of dimensions, and
whether a statement is *surely* nested in a dimension. `override` replaces a
variable's domain without propagation: the model's answer on the restricted
domains is still a lower bound for every implementation that takes the
restricted value, which is what the choice ranking relies on.
"""

from __future__ import annotations

import math
import weakref

from ..errors import WorkbenchError
from ..space.values import DimKind, Order, ensure_values

SEQUENTIAL = frozenset({DimKind.LOOP, DimKind.UNROLL, DimKind.VECTOR})  # parallelism level 0
PARALLEL = frozenset({DimKind.THREAD, DimKind.BLOCK})  # levels 1 and 2
ARITH = ("fma", "mul", "add")  # arithmetic instruction ops
VECTOR_MAX = 4  # float4: the widest access (limits.vector_widths)
UP_TO = {0: SEQUENTIAL, 1: SEQUENTIAL | {DimKind.THREAD},
         2: SEQUENTIAL | {DimKind.THREAD, DimKind.BLOCK}}

_DECODED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Facts:
    def __init__(self, cand, override: dict | None = None):
        if getattr(cand.kernel, "space", None) != "gpu":
            raise WorkbenchError("the lower-bound model needs a kernel of the GPU space "
                                 f"(got {type(cand.kernel).__name__})")
        ensure_values(cand.space)  # the value names below are the space's (once per space)
        self.cand = cand
        self.kernel = cand.kernel
        self.problem = cand.problem
        self.override = override or {}
        self._decoded = _DECODED.setdefault(self.problem, {})
        self._memo: dict = {}
        self.reads: set[int] = set()  # variables the model looked at

    # ------------------------------------------------------------ domains
    def dom(self, choice: str, *objs) -> frozenset:
        """Remaining values (strings) of a choice instance."""
        # memoised by the objects as given (kernel objects hash by identity):
        # the model asks hundreds of thousands of times per look-ahead
        got = self._memo.get((choice, objs))
        if got is not None:
            return got
        got = self._memo[(choice, objs)] = self._dom(choice, objs)
        return got

    def _dom(self, choice: str, objs: tuple) -> frozenset:
        key = (choice, tuple(o if isinstance(o, str) else o.name for o in objs))
        got = self._memo.get(key)
        if got is not None:
            return got
        v, inv = self.problem.index[key]
        self.reads.add(v)
        mask = self.override.get(v)
        if mask is None:
            mask = self.cand._dom(v)
        dk = (v, mask, inv)
        names = self._decoded.get(dk)
        if names is None:
            names = frozenset(self.cand._names(v, mask, inv))
            self._decoded[dk] = names
        self._memo[key] = names
        return names

    def counter(self, name: str, *objs) -> tuple:
        v, _ = self.problem.index[(name, tuple(o.name for o in objs))]
        return self.cand._dom(v)

    def kinds(self, d) -> frozenset:
        return self.dom("dim_kind", d)

    def sizes(self, d) -> tuple[int, ...]:
        key = ("#sizes", d.name)
        got = self._memo.get(key)
        if got is None:
            got = tuple(sorted(int(x) for x in self.dom("size", d)))
            self._memo[key] = got
        return got

    def order(self, a, b) -> frozenset:
        return self.dom("order", a, b)

    def surely_outside(self, d, s) -> bool:
        """`s` is nested in dimension `d` in every implementation."""
        return d is not s and self.order(d, s) == {Order.OUT}

    def may_merge(self, a, b) -> bool:
        return a is not b and a.same_tile(b) and Order.MERGED in self.order(a, b)

    def surely_merged(self, a, b) -> bool:
        return a is b or (a.same_tile(b) and self.order(a, b) == {Order.MERGED})

    # -------------------------------------------------------------- sizes
    def size_min(self, dims) -> int:
        """A lower bound on the product of the sizes of `dims` (eq. 5.15's
        size_min): dimensions of one nest that strip-mine the same logical
        dimension multiply to at least size / (max of the levels left out)."""
        total = 1
        for group in _by_nest(dims):
            ld = group[0].logical
            prod_min = math.prod(self.sizes(d)[0] for d in group)
            nest = _nest_of(group[0])
            left = [e for e in nest if e.logical is ld and e not in group]
            by_rest = ld.size // math.prod(self.sizes(e)[-1] for e in left) if left else ld.size
            total *= max(prod_min, by_rest)
        return total

    def size_lcm(self, dims) -> int:
        """A common multiple of every product the sizes of `dims` can take."""
        total = 1
        for group in _by_nest(dims):
            m = math.prod(math.lcm(*self.sizes(d)) for d in group)
            total *= math.gcd(m, group[0].logical.size)  # partial products divide the size
        return total


def _nest_of(d) -> list:
    """The dimensions of `d`'s loop nest (dims are created nest by nest and
    labelled `<nest>_<logical><level>`)."""
    cache = d.kernel._cache.setdefault("model_nests", {})
    prefix = d.label.rsplit("_", 1)[0]
    if prefix not in cache:
        cache[prefix] = [e for e in d.kernel.dims() if e.label.rsplit("_", 1)[0] == prefix]
    return cache[prefix]


def _by_nest(dims):
    groups: dict = {}
    for d in dims:
        groups.setdefault((d.label.rsplit("_", 1)[0], d.logical.name), []).append(d)
    return list(groups.values())


def representatives(facts: Facts, dims, related, at_most: bool) -> list:
    """One dimension per class (thesis eqs. 5.13–5.14). `related(a, b)`
    returns the set of values the class relation may take; with `at_most`, a
    dimension is dropped when it *may* be in the class of an earlier kept one
    (at most one per class), otherwise only when it surely is (at least one)."""
    kept: list = []
    for d in dims:
        if not any(related(d, k, at_most) for k in kept):
            kept.append(d)
    return kept


def merges_along(s, d) -> bool:
    """The compiler may merge unrolled copies of access `s` along `d` into
    wider accesses: a temporary's (its layout is the compiler's to see, and
    with choices open any of its pairs may end up innermost,
    `codegen.tree._layouts`) or an array's whose logical dimension has a
    stride under VECTOR_MAX elements (unit stride, or a stride of 2 or 3
    that other unrolled copies may fill to a contiguous run). Loose on
    purpose (an outer strip level of a unit-stride dimension steps by its
    inner sizes, yet counts): a fixed candidate's memory costs take the
    exact runs (`memory.merge_widths`)."""
    if not s.is_mem() or d not in s.dims:
        return False
    if s.array.temporary:
        return True
    step = s.stride(d)
    return step is not None and 0 < abs(step) < VECTOR_MAX
