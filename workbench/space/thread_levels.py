"""Thread levels: one propagator over the whole thread mapping (thesis §4.3.3).

`thread_mapping` orders the THREAD dimensions of a kernel totally, up to
MAPPED (the same hardware thread dimension), outer to inner. The clauses of
the GPU space see it one pair or one triple at a time, with the limits on
hardware dimensions and threads per block as counters over a quotient that
settles late, so a person who forces mappings in their own order reaches
states where every value of some choice fails without propagation noticing
(issue: "never stuck"; 19 of 20 random-order descents on matmul 64×64×32).

Here the mapping is seen whole. In any implementation, number the classes of
mapped thread dimensions outer to inner: each dimension surely THREAD gets a
level L(d) in [0, K), K the most hardware thread dimensions
(`num_thread_dims`), such that

- thread_mapping(a, b) is MAPPED when L(a) = L(b), OUT when L(a) < L(b),
  IN when L(a) > L(b);
- the dimensions of one level have one size (MAPPED ⇒ equal sizes);
- the product of the levels' sizes is at most the threads a block may hold
  (`threads_per_block`);
- order(a, b) is OUT only when L(a) < L(b) (nested thread dimensions take
  distinct hardware dimensions, outer first), MERGED only when L(a) = L(b).

- where the space states that the strip levels of a logical dimension
  multiply to its size and that the dimensions of one strip level share a
  size (`strip_products.StripLayout`), the sizes the levels take leave every
  logical dimension a strip tuple: two thread levels holding dimensions of
  one strip level have one size, and m = 64 = 8·8·1 cannot put 8 on one
  level and 4 on another level that strips m too.

The labellings prune the thread mapping, the order and the sizes of those
dimensions, and the kind THREAD of a dimension that no labelling can take in.
Seen apart, the thread levels and the strip products each found a labelling
or a tuple where together there was none: a person forcing mappings in their
own order was stuck at a choice whose values failed for reasons spread over
6–12 earlier decisions (issue "never stuck", explanations).

Dimensions that may still become THREAD are left out, so this is a
relaxation: a value that no labelling supports has no implementation, and
removing it is sound. Labellings are enumerated by a small backtracking
search (rarely more than a dozen dimensions and three levels); a run whose
search passes its node budget prunes only what it proved.
"""

from __future__ import annotations

from functools import lru_cache

from .propagators import bits
from .strip_products import StripLayout

EQ, LT, GT = 1, 2, 4  # L(a) = L(b), L(a) < L(b), L(a) > L(b)
_RELATION = {"MAPPED": EQ, "OUT": LT, "IN": GT}  # thread_mapping(a, b) (NOT_THREADS: 0)
_NESTING = {"OUT": LT, "IN": GT, "MERGED": EQ, "BEFORE": 7, "AFTER": 7}  # order(a, b)
_MIRROR = (0, 1, 4, 5, 2, 3, 6, 7)  # the relation of (b, a) from that of (a, b)
NODES = 20_000  # search nodes one run may spend


class _OutOfBudget(Exception):
    pass


class ThreadLevels:
    """A propagator instance over every dimension of a problem."""

    __slots__ = ("dims", "id", "kind", "layout", "levels_var", "link", "objects", "origin",
                 "pair", "rel_of", "size", "size_bit", "thread", "threads_var", "values")
    # pair[(i, j)], i < j: [(variable, stored as (j, i))] of thread_mapping
    # and order on the two dimensions; rel_of[v]: the relation each value of
    # v allows, in stored orientation (0: none, NOT_THREADS); link[i]: the
    # (logical group, strip level) of dims[i] in `layout`, or None
    joint = True  # read the strip tuples (False: the thread levels alone, for the laws)
    trigger = False
    lazy = True  # run once the clauses are at their fixpoint (propagators.fixpoint)

    @classmethod
    def build(cls, problem) -> ThreadLevels | None:
        """The instance for `problem`, or None when its space has no thread
        mapping of this shape."""
        need = ("thread_mapping", "dim_kind", "size", "num_thread_dims", "threads_per_block")
        if not all(n in problem.space.choices for n in need):
            return None
        return cls(problem)

    def __init__(self, problem):
        index, universe = problem.index, problem.universe
        self.origin = ("thread levels: thread dimensions take at most num_thread_dims hardware "
                       "dimensions, nested outer first, mapped ones of one size, and at most "
                       "threads_per_block threads")
        self.layout = StripLayout(problem) if self.joint and StripLayout.applies(problem) else None
        if self.layout is not None:
            self.origin += ", the strip sizes of each logical dimension multiplying to its size"
        self.objects = ()
        self.levels_var = index[("num_thread_dims", ())][0]
        self.threads_var = index[("threads_per_block", ())][0]
        self.dims, self.kind, self.thread, self.size, self.size_bit = [], [], [], [], []
        values = sorted({x for (name, _), u in zip(problem.keys, universe) if name == "size"
                         for x in u})
        self.values = tuple(values)  # size values; bit k of a size mask is values[k]
        at = {x: k for k, x in enumerate(values)}
        for v, (name, objs) in enumerate(problem.keys):
            if name != "dim_kind" or "THREAD" not in universe[v]:
                continue
            got = index.get(("size", objs))
            if got is None:
                continue
            self.dims.append(objs[0])
            self.kind.append(v)
            self.thread.append(1 << universe[v].index("THREAD"))
            self.size.append(got[0])
            self.size_bit.append(tuple(1 << at[x] for x in universe[got[0]]))
        where = self.layout.where if self.layout is not None else {}
        self.link = [where.get(v) for v in self.size]
        pos = {d: i for i, d in enumerate(self.dims)}
        self.pair, self.rel_of = {}, {}
        for v, (name, objs) in enumerate(problem.keys):
            table = {"thread_mapping": _RELATION, "order": _NESTING}.get(name)
            if table is None or objs[0] not in pos or objs[1] not in pos:
                continue
            i, j = pos[objs[0]], pos[objs[1]]
            if i != j:
                self.pair.setdefault((min(i, j), max(i, j)), []).append((v, i > j))
                self.rel_of[v] = tuple(table.get(str(x), 0) for x in universe[v])

    def vars(self):
        yield self.levels_var
        yield self.threads_var
        yield from self.kind
        yield from self.size
        for vs in self.pair.values():
            for v, _ in vs:
                yield v

    # ------------------------------------------------------------------ run
    def _relation(self, get, i: int, j: int) -> int:
        """The relations of L(dims[i]) to L(dims[j]) the domains allow."""
        r = 7
        for v, flipped in self.pair.get((min(i, j), max(i, j)), ()):
            m, table = 0, self.rel_of[v]
            for k in bits(get(v)):
                m |= table[k]
            r &= _MIRROR[m] if flipped != (i > j) else m
        return r

    def _sizes(self, get, i: int) -> int:
        m, sb = 0, self.size_bit[i]
        for k in bits(get(self.size[i])):
            m |= sb[k]
        return m

    def _matrix(self, get, dims) -> list:
        """The relations of every pair of `dims`, as rows."""
        rel = [[7] * len(dims) for _ in dims]
        for a in range(len(dims)):
            for b in range(a + 1, len(dims)):
                r = self._relation(get, dims[a], dims[b])
                rel[a][b], rel[b][a] = r, _MIRROR[r]
        return rel

    def _problem(self, get, dims, rel, tuples):
        """(relations, sizes, strips) of a labelling problem, hashable: the
        runs of one descent meet the same problems again and again
        (`_supports`). `rel` holds the relations of `dims`; `tuples` is one
        run's memo: each logical dimension's strip tuples (by group), their
        projections (`("projected", group, levels)`) and the dimensions' size
        masks (`"sizes"`), which the root's pair check asks for per pair."""
        sizes = tuples.get("sizes")
        if sizes is None:
            sizes = tuples["sizes"] = {}
        for i in dims:
            if i not in sizes:
                sizes[i] = self._sizes(get, i)
        return (tuple(map(tuple, rel)), tuple(sizes[i] for i in dims),
                self._strips(get, dims, tuples))

    def _strips(self, get, dims, tuples_of: dict):
        """(links, tuples): links[a] = (k, position) when dims[a] strips the
        k-th logical dimension met, tuples[k] = that dimension's strip tuples
        under the current domains, projected on the levels `dims` hold; None
        when no two of `dims` could be tied by a logical dimension."""
        if self.layout is None:
            return None
        groups: dict = {}  # group -> sorted levels held
        for i in dims:
            if self.link[i] is not None:
                g, lv = self.link[i]
                groups.setdefault(g, set()).add(lv)
        if not groups:
            return None
        order = sorted(groups)
        held = {g: sorted(groups[g]) for g in order}
        for g in order:
            if g not in tuples_of:
                tuples_of[g] = self.layout.tuples(get, g)
        tuples = []
        for g in order:
            key = ("projected", g, tuple(held[g]))
            got = tuples_of.get(key)
            if got is None:
                got = tuples_of[key] = tuple(sorted({tuple(t[lv] for lv in held[g])
                                                     for t in tuples_of[g]}))
            tuples.append(got)
        tuples = tuple(tuples)
        k_of = {g: k for k, g in enumerate(order)}
        links = tuple(None if self.link[i] is None else
                      (k_of[self.link[i][0]], held[self.link[i][0]].index(self.link[i][1]))
                      for i in dims)
        return links, tuples

    def run(self, st):
        get = st.get
        threads, maybe = self._kinds(get)
        if not threads:  # (pairs of dimensions not yet THREAD: `shave`, at the root)
            return []
        levels, most = get(self.levels_var)[1], get(self.threads_var)[1]
        matrix, tuples_of = self._matrix(get, threads), {}
        changed = self._settled(st, threads, matrix, tuples_of, levels, most)
        # a dimension that may still become THREAD: can a labelling take it in?
        # (the relations among `threads` once, again only if this run pruned)
        if maybe and changed:
            matrix, tuples_of = self._matrix(get, threads), {}
        for i in maybe:
            ext = self._extend(get, matrix, threads, [i])
            if _feasible(levels, most, self.values,
                         *self._problem(get, threads + [i], ext, tuples_of)) is False:
                changed += self._restrict(st, self.kind[i], ~self.thread[i])
        return changed

    def _kinds(self, get) -> tuple[list, list]:
        """(the dimensions surely THREAD, those that may still be)."""
        threads, maybe = [], []
        for i, v in enumerate(self.kind):
            d = get(v)
            if d == self.thread[i]:
                threads.append(i)
            elif d & self.thread[i]:
                maybe.append(i)
        return threads, maybe

    def shave(self, st) -> list:
        """The pair check, run on the root only (`shave`)."""
        get = st.get
        threads, maybe = self._kinds(get)
        levels, most = get(self.levels_var)[1], get(self.threads_var)[1]
        return self._pairs(st, threads, maybe, self._matrix(get, threads), {}, levels, most)

    def _extend(self, get, matrix, threads, extra) -> list:
        """The relation rows of `threads` + `extra`, from those of `threads`."""
        rel = [row + [self._relation(get, t, i) for i in extra] for row, t in zip(matrix, threads)]
        for a, i in enumerate(extra):
            rel.append([_MIRROR[rel[b][len(threads) + a]] for b in range(len(threads))]
                       + [7 if i == j else self._relation(get, i, j) for j in extra])
        return rel

    def _pairs(self, st, threads, maybe, matrix, tuples_of, levels, most) -> list:
        """The mapping of two dimensions, one of them or both still maybe
        THREAD: each relation it allows (MAPPED, OUT, IN: both THREAD) must
        have a labelling that takes both in with it, or its values go."""
        get, changed = st.get, []
        for x, i in enumerate(maybe):
            for j in threads + maybe[x + 1:]:
                tm = [(v, f) for v, f in self.pair.get((min(i, j), max(i, j)), ())
                      if 0 in self.rel_of[v]]  # thread_mapping (NOT_THREADS), not order
                if not tm:
                    continue
                r = self._relation(get, i, j)
                extra = [i] if j in threads else [i, j]
                dims = threads + extra
                a, b = dims.index(i), dims.index(j)
                ext = self._extend(get, matrix, threads, extra)
                drop = 0
                for k in bits(r):
                    ext[a][b], ext[b][a] = 1 << k, _MIRROR[1 << k]
                    if _feasible(levels, most, self.values,
                                 *self._problem(get, dims, ext, tuples_of)) is False:
                        drop |= 1 << k
                if drop:
                    for v, flipped in tm:
                        bad = _MIRROR[drop] if flipped != (i > j) else drop
                        mask = sum(1 << k for k, rr in enumerate(self.rel_of[v])
                                   if not rr & bad)
                        changed += self._restrict(st, v, mask)
        return changed

    def _settled(self, st, threads, matrix, tuples_of, levels, most) -> list:
        """Prune the relations and sizes of the surely THREAD dimensions."""
        get = st.get
        rel, sizes, strips = self._problem(get, threads, matrix, tuples_of)
        got = _supports(levels, most, self.values, rel, sizes, strips)
        if got is None:  # out of budget: nothing proven
            return []
        ok_rel, ok_size = got
        if ok_rel is None:
            raise st.problem.dead_end(self.id, None)
        changed = []
        for a, i in enumerate(threads):
            for b in range(a + 1, len(threads)):
                if ok_rel[a][b] != rel[a][b]:
                    for v, flipped in self.pair[(i, threads[b])]:
                        keep = _MIRROR[ok_rel[a][b]] if flipped else ok_rel[a][b]
                        mask = sum(1 << k for k, r in enumerate(self.rel_of[v])
                                   if r == 0 or r & keep)
                        changed += self._restrict(st, v, mask)
            if ok_size[a] != sizes[a]:
                mask = sum(1 << k for k, b in enumerate(self.size_bit[i]) if b & ok_size[a])
                changed += self._restrict(st, self.size[i], mask)
        return changed

    def _restrict(self, st, v: int, mask: int) -> list:
        return [v] if st.restrict(v, mask, self.id) else []


@lru_cache(maxsize=4096)
def _supports(levels, most, values, rel, sizes, strips=None):
    """_Search.supports as tuples; None when the search ran out of budget.
    A joint search (strips) past its budget falls back to the thread levels
    alone, so reading the strips never prunes less than not reading them."""
    try:
        ok_rel, ok_size = _Search(levels, most, values, [list(r) for r in rel],
                                  list(sizes), strips).supports()
    except _OutOfBudget:
        return None if strips is None else _supports(levels, most, values, rel, sizes)
    return (None, None) if ok_rel is None else (tuple(map(tuple, ok_rel)), tuple(ok_size))


@lru_cache(maxsize=4096)
def _feasible(levels, most, values, rel, sizes, strips=None):
    """Whether a labelling exists; None when the search ran out of budget
    (a joint one falling back to the thread levels alone, as `_supports`)."""
    try:
        search = _Search(levels, most, values, [list(r) for r in rel], list(sizes), strips)
        return search.solve() is not None
    except _OutOfBudget:
        return None if strips is None else _feasible(levels, most, values, rel, sizes)


class _Search:
    """Labellings of n thread dimensions with levels in [0, levels)."""

    def __init__(self, levels, most, values, rel, sizes, strips=None):
        self.n, self.levels, self.most, self.values = len(sizes), levels, most, values
        self.rel, self.sizes = rel, sizes
        self.nodes = 0
        # strips (see ThreadLevels._strips): per logical dimension, its
        # tuples and the (dimension, position) pairs that read them
        self.strips = None
        if strips is not None:
            links, tuples = strips
            members = [[] for _ in tuples]
            for a, link in enumerate(links):
                if link is not None:
                    members[link[0]].append((a, link[1]))
            self.strips = list(zip(members, tuples))
            self.bit = {x: k for k, x in enumerate(values)}
            self.seen: dict = {}  # (labelling, level masks) -> _sizes_of
        # most constrained first: the dimensions with the fewest relations left open
        self.order = sorted(range(self.n), key=lambda a: sum(r == 7 for r in rel[a]))

    def _min(self, m: int) -> int:
        return self.values[(m & -m).bit_length() - 1]

    def _sizes_of(self, lab, inter) -> list:
        """The sizes the used levels can take together (a tuple per level, 0
        for an empty one): one value from each level's mask, product within
        `most`, and every logical dimension left a strip tuple that gives
        each of its dimensions its level's size."""
        key = (tuple(lab), tuple(inter))
        got = self.seen.get(key)
        if got is not None:
            return got
        # sizes ascending (values are sorted), so a level stops at its first
        # size that pushes the product past `most`; each pick checked against
        # the strips is a node
        per = [[self.values[k] for k in bits(m)] if m else [0] for m in inter]
        got, pick, most, strips = [], [0] * len(per), self.most, self.strips

        def go(lv: int, prod: int) -> None:
            if lv == len(per):
                self.nodes += 1
                if self.nodes > NODES:
                    raise _OutOfBudget
                if all(any(all(t[p] == pick[lab[a]] for a, p in members) for t in tuples)
                       for members, tuples in strips):
                    got.append(tuple(pick))
                return
            for x in per[lv]:
                if x and prod * x > most:
                    break
                pick[lv] = x
                go(lv + 1, prod * (x or 1))

        go(0, 1)
        self.seen[key] = got
        return got

    def solve(self):
        """One labelling as (levels, per-level size masks, the sizes the
        levels take together or None without strips), or None."""
        n, levels, rel, sizes, order = self.n, self.levels, self.rel, self.sizes, self.order
        lab = [-1] * n
        inter = [0] * levels  # per level: the sizes its members share (0: empty level)

        def product():
            p = 1
            for m in inter:
                if m:
                    p *= self._min(m)
            return p

        found = []

        def go(k):
            if k == n:
                if self.strips is None:
                    return True
                found[:] = self._sizes_of(lab, inter)
                return bool(found)
            self.nodes += 1
            if self.nodes > NODES:
                raise _OutOfBudget
            a = order[k]
            ra = rel[a]
            for lv in range(levels):
                ok = True
                for b in order[:k]:
                    lb = lab[b]
                    r = EQ if lv == lb else (LT if lv < lb else GT)
                    if not ra[b] & r:
                        ok = False
                        break
                if not ok:
                    continue
                old = inter[lv]
                m = (old & sizes[a]) if old else sizes[a]
                if not m:
                    continue
                inter[lv] = m
                if product() <= self.most:
                    lab[a] = lv
                    if go(k + 1):
                        return True
                    lab[a] = -1
                inter[lv] = old
            return False

        return (lab, inter, found if self.strips is not None else None) if go(0) else None

    def supports(self):
        """(relations, sizes) some labelling supports, per pair and per
        dimension; (None, None) when no labelling exists."""
        n, rel, sizes = self.n, self.rel, self.sizes
        ok_rel = [[0] * n for _ in range(n)]
        ok_size = [0] * n
        sol = self.solve()
        if sol is None:
            return None, None
        self._mark(sol, ok_rel, ok_size)
        # each value no labelling found so far supports: search with it forced
        for a in range(n):
            for b in range(a + 1, n):
                keep = rel[a][b]
                for r in bits(keep & ~ok_rel[a][b]):
                    rel[a][b], rel[b][a] = 1 << r, _MIRROR[1 << r]
                    got = self.solve()
                    rel[a][b], rel[b][a] = keep, _MIRROR[keep]
                    if got is not None:
                        self._mark(got, ok_rel, ok_size)
        for a in range(n):
            keep = sizes[a]
            for k in bits(keep & ~ok_size[a]):
                sizes[a] = 1 << k
                got = self.solve()
                sizes[a] = keep
                if got is not None:
                    self._mark(got, ok_rel, ok_size)
        return ok_rel, ok_size

    def _mark(self, sol, ok_rel, ok_size) -> None:
        """Add what labelling `sol` supports: the relation of every pair, and
        each size a level may take with the others at their smallest (with
        strips: the sizes the levels take together)."""
        lab, inter, together = sol
        n = self.n
        for a in range(n):
            for b in range(n):
                if a != b:
                    la, lb = lab[a], lab[b]
                    ok_rel[a][b] |= EQ if la == lb else (LT if la < lb else GT)
        if together is not None:
            for pick in together:
                for a in range(n):
                    ok_size[a] |= 1 << self.bit[pick[lab[a]]]
            return
        smallest = [self._min(m) if m else 1 for m in inter]
        for lv, m in enumerate(inter):
            if not m:
                continue
            rest = 1
            for other, x in enumerate(smallest):
                if other != lv:
                    rest *= x
            fit = sum(1 << k for k in bits(m) if self.values[k] * rest <= self.most)
            for a in range(n):
                if lab[a] == lv:
                    ok_size[a] |= fit


def shave(problem, st) -> list:
    """Prune, on a root at its fixpoint, the mappings of pairs of dimensions
    that may still be THREAD: a relation (MAPPED, OUT or IN: both THREAD)
    that no labelling takes both dimensions in with goes. On axpy n = 2^20 the
    clauses and `run` left 44 such values at the root, each a dead end at
    once: two strips of n in distinct hardware dimensions hold at most
    1,024 · 4 of its 2^20 points. Sound as `run` is; root only, since it tests
    every pair (+25 to +112 ms on matmul's roots, benchmarks/bench_root.py,
    where a decision's whole propagation takes a few ms). Returns the
    variables it wrote."""
    for j in problem.lazy:
        inst = problem.instances[j]
        if isinstance(inst, ThreadLevels):
            return inst.shave(st)
    return []
