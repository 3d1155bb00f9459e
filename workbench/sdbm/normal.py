"""Normal forms and the operations of abstract interpretation on SDBMs (the
SDBM seed, §4–5), all answered by satisfiability checks of `system.py`.

Normal form of a non-empty SDBM (depends on its solution set only):
- every difference bound x_i − x_j ≤ c (the constant 0 included) that holds,
  at its tightest: c = max(x_i − x_j) over the solutions, found by binary
  search between a witness's value and the path-closed bound (path closure and
  GCD tightening alone do not reach it, even for harmonic systems);
- per variable the sparsest congruence that holds, x_i ≡ r (mod G) with G the
  gcd of the differences of its values (a multiple of the given divisor; the
  largest candidate g for which no solution has x_i in another class mod g),
  or (0, v) when the bounds pin x_i to the single value v.

Equality compares normal forms; inclusion is A ∩ B = A; the join takes the
looser of each pair of normal bounds (none when either has none) and, per
variable, gcd(G_a, G_b, r_a − r_b): the smallest SDBM holding both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import WorkbenchError
from .isl import _crt
from .system import INF, SDBM, contradiction


@dataclass(frozen=True)
class Normal:
    names: tuple
    bounds: tuple  # sorted ((i, j), c), every finite tightest bound
    congruences: tuple  # per variable (G, r); (0, v): the single value v

    def sdbm(self) -> SDBM:
        cong = tuple((1, 0) if g == 0 else (g, r) for g, r in self.congruences)
        return SDBM(self.names, dict(self.bounds), cong)


EMPTY = "empty"


def _close_x(s: SDBM):
    """Path-closed (GCD-tight when harmonic) bounds over x (not y)."""
    got = s.closed()
    if got is None:
        return None
    D, _, r = got
    n = s.n
    return [[D[i][j] + r[i] - r[j] if D[i][j] != INF else INF for j in range(n + 1)]
            for i in range(n + 1)]


def tightest(s: SDBM, i: int, j: int, upper: int, witness: dict) -> int:
    """max(x_i − x_j) over the solutions, knowing it lies in [witness, upper]."""
    val = [witness[v] for v in s.names] + [0]
    lo, hi = val[i] - val[j], upper
    while lo < hi:  # invariant: lo attainable, nothing above hi
        mid = (lo + hi + 1) // 2
        if s.tightened({(j, i): -mid}).solution() is not None:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _holds(s: SDBM, k: int, g: int, v0: int) -> bool:
    """Every solution has x_k ≡ v0 (mod g)."""
    m, r = s.congruences[k]
    for rho in range(g):
        if rho == v0 % g:
            continue
        both = _crt((m, r), (g, rho))
        if both is None:
            continue
        cong = list(s.congruences)
        cong[k] = both
        if s.tightened(congruences=tuple(cong)).solution() is not None:
            return False
    return True


def normal(s: SDBM):
    """The normal form, or EMPTY."""
    w = s.solution()
    if w is None:
        return EMPTY
    n = s.n
    D = _close_x(s)
    if D is None:  # cannot happen when a solution exists
        raise WorkbenchError("internal: closure found no solution where one exists")
    bounds = {}
    for i in range(n + 1):
        for j in range(n + 1):
            if i != j and D[i][j] != INF:
                bounds[(i, j)] = tightest(s, i, j, D[i][j], w)
    t = s.tightened(bounds)
    L = s.modulus
    cong = []
    for k, v in enumerate(s.names):
        hi, lo = bounds.get((k, n)), bounds.get((n, k))
        lo = None if lo is None else -lo
        if hi is not None and lo is not None and hi == lo:
            cong.append((0, hi))
            continue
        m = s.congruences[k][0]
        if hi is not None and lo is not None:
            cands = range((hi - lo) // m * m, m - 1, -m)
        else:  # unbounded: the values repeat with a period dividing L
            cands = sorted((d for d in range(m, L + 1, m) if L % d == 0), reverse=True)
        g = next(g for g in cands if g == m or _holds(t, k, g, w[v]))
        cong.append((g, w[v] % g))
    return Normal(s.names, tuple(sorted(bounds.items())), tuple(cong))


def equal(a: SDBM, b: SDBM) -> bool:
    if a.names != b.names:
        raise WorkbenchError(f"SDBMs over different variables: {a.names} vs {b.names}")
    return normal(a) == normal(b)


def intersect(a: SDBM, b: SDBM) -> SDBM:
    if a.names != b.names:
        raise WorkbenchError(f"SDBMs over different variables: {a.names} vs {b.names}")
    cong, empty = [], False
    for ca, cb in zip(a.congruences, b.congruences):
        got = _crt(ca, cb)
        empty |= got is None
        cong.append(got or (1, 0))
    out = a.tightened(b.bounds, tuple(cong))
    # incompatible congruences: no solution, said with contradictory bounds
    return out.tightened(contradiction(a.n)) if empty else out


def includes(a: SDBM, b: SDBM) -> bool:
    """b ⊆ a."""
    return equal(intersect(a, b), b)


def join(a: SDBM, b: SDBM) -> SDBM:
    """The smallest SDBM containing both."""
    na, nb = normal(a), normal(b)
    if na == EMPTY:
        return b if nb == EMPTY else nb.sdbm()
    if nb == EMPTY:
        return na.sdbm()
    ba, bb = dict(na.bounds), dict(nb.bounds)
    bounds = {k: max(c, bb[k]) for k, c in ba.items() if k in bb}
    cong = []
    for (ga, ra), (gb, rb) in zip(na.congruences, nb.congruences):
        g = math.gcd(math.gcd(ga, gb), abs(ra - rb))
        cong.append((1, 0) if g == 0 else (g, ra % g))
    return SDBM(a.names, bounds, tuple(cong))


__all__ = ["EMPTY", "Normal", "equal", "includes", "intersect", "join", "normal", "tightest"]
