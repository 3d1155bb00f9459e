"""Strided difference bound matrices (the SDBM seed, §2–3).

An SDBM over integer variables x_0 … x_{n-1} is a conjunction of difference
bounds x_i − x_j ≤ c, variable bounds x_i ≤ c and −x_j ≤ c, and one
congruence x_i ≡ r_i (mod m_i) per variable. It is *harmonic* (HSDBM) when the
sorted divisors each divide the next.

Internally the variable bounds are differences with an extra variable z, the
constant 0 (index n): x_i − z ≤ c. Satisfiability follows the seed:

1. remainders are substituted away (y_i = x_i − r_i, so every congruence has
   remainder 0) and z gets divisor L = lcm of all divisors; by the shifting
   lemma (Lemma 5) fixing z = 0 loses nothing;
2. the potential graph is path-closed (Floyd–Warshall); a negative cycle
   means no solution;
3. HSDBM: path closure and GCD tightening (x_i − x_j can only be a multiple of
   gcd(m_i, m_j)) repeated to a fixpoint decide satisfiability (Corollary 4);
4. general SDBM (NP-hard in general, Theorem A.1), the seed's SolveSDBM:
   take an integral solution x* of the inequalities alone and the box of
   radius (n+1)·L around it (if the SDBM has a solution, it has one there:
   Lemmas 8–9, the subdeterminants of a DBM being at most 1); then lower the
   upper bounds U_i ≤ U_j + c_ij, each rounded down to a multiple of m_i, until
   a fixpoint (the greatest solution in the box) or a bound crossing its lower
   bound (no solution). A worklist re-reads only the edges out of a lowered
   bound, so the work is linear in L times the edges (pseudo-linear in L).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import reduce

from ..errors import WorkbenchError

INF = math.inf


class NotSDBM(WorkbenchError):
    """A set that SDBM constraints cannot express (the answer says why)."""


def contradiction(n: int) -> dict:
    """Bounds no point satisfies (x_0 ≤ −1 and −x_0 ≤ 0): how an SDBM over n ≥ 1
    variables says it is empty."""
    if n == 0:
        raise WorkbenchError("a contradiction needs at least one variable")
    return {(0, n): -1, (n, 0): 0}


def lcm(*xs: int) -> int:
    return reduce(lambda a, b: a * b // math.gcd(a, b), (x for x in xs if x), 1)


def floor_to(x, m: int):
    """The largest multiple of m that is ≤ x (x may be ±inf)."""
    if x in (INF, -INF):
        return x
    return (x // m) * m


@dataclass(frozen=True)
class SDBM:
    names: tuple
    bounds: dict = field(default_factory=dict)  # (i, j) → c: x_i − x_j ≤ c; index n is 0
    congruences: tuple = ()  # per variable (m, r): x_i ≡ r (mod m), m ≥ 1

    def __post_init__(self):
        n = len(self.names)
        if len(set(self.names)) != n:
            raise WorkbenchError(f"SDBM variables must be distinct: {self.names}")
        cong = tuple(self.congruences) or ((1, 0),) * n
        if len(cong) != n:
            raise WorkbenchError(f"{len(cong)} congruences for {n} variables")
        fixed = []
        for name, (m, r) in zip(self.names, cong):
            if not isinstance(m, int) or m < 1:
                raise WorkbenchError(f"congruence divisor of {name} must be a positive "
                                     f"integer, got {m!r}")
            fixed.append((m, r % m))
        object.__setattr__(self, "congruences", tuple(fixed))
        clean = {}
        for (i, j), c in dict(self.bounds).items():
            if not (0 <= i <= n and 0 <= j <= n) or i == j:
                raise WorkbenchError(f"bad SDBM constraint index ({i}, {j}) for {n} variables")
            if not isinstance(c, int):
                raise WorkbenchError(f"SDBM bounds are integers, got {c!r}")
            clean[(i, j)] = min(c, clean.get((i, j), c))
        object.__setattr__(self, "bounds", clean)

    # ------------------------------------------------------------ building
    @classmethod
    def build(cls, names, constraints=(), congruences=None) -> SDBM:
        """`constraints`: (a, b, c) meaning a − b ≤ c, with a or b None for 0;
        `congruences`: {name: (m, r)}."""
        names = tuple(names)
        idx = {v: k for k, v in enumerate(names)}
        n = len(names)
        bounds: dict = {}
        for a, b, c in constraints:
            try:
                i = n if a is None else idx[a]
                j = n if b is None else idx[b]
            except KeyError as exc:
                raise WorkbenchError(f"unknown SDBM variable {exc.args[0]!r}") from None
            if i == j:
                if c < 0:  # x − x ≤ c < 0: no solution
                    bounds.update(contradiction(n))
                continue
            bounds[(i, j)] = min(c, bounds.get((i, j), c))
        cong = tuple((congruences or {}).get(v, (1, 0)) for v in names)
        return cls(names, bounds, cong)

    def tightened(self, bounds: dict | None = None, congruences: tuple | None = None) -> SDBM:
        """This system with more bounds (the tighter of two wins) and, if
        given, other congruences."""
        b = dict(self.bounds)
        for k, c in (bounds or {}).items():
            b[k] = min(c, b.get(k, c))
        return SDBM(self.names, b, self.congruences if congruences is None else congruences)

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def modulus(self) -> int:
        """L: the lcm of the congruence divisors."""
        return lcm(*(m for m, _ in self.congruences))

    def is_harmonic(self) -> bool:
        ms = sorted(m for m, _ in self.congruences)
        return all(b % a == 0 for a, b in itertools.pairwise(ms))

    def __str__(self) -> str:
        return self.to_isl_string()

    def to_isl_string(self) -> str:
        n, names = self.n, self.names
        parts = []
        for (i, j), c in sorted(self.bounds.items()):
            a = "0" if i == n else names[i]
            b = "" if j == n else f" - {names[j]}"
            lhs = (f"-{names[j]}" if i == n else f"{a}{b}") if not (i == n and j == n) else "0"
            parts.append(f"{lhs} <= {c}")
        for v, (m, r) in zip(names, self.congruences):
            if m > 1:
                parts.append(f"({v} - {r}) mod {m} = 0" if r else f"{v} mod {m} = 0")
        body = " and ".join(parts)
        return f"{{ [{', '.join(names)}]{' : ' + body if body else ''} }}"

    # ------------------------------------------------------- satisfiability
    def _simple(self):
        """Weights of the simple VBF system: D[i][j] bounds y_i − y_j, y = x − r;
        divisors with z's = L last."""
        n = self.n
        r = [rr for _, rr in self.congruences] + [0]
        ms = [m for m, _ in self.congruences] + [self.modulus]
        D = [[INF] * (n + 1) for _ in range(n + 1)]
        for k in range(n + 1):
            D[k][k] = 0
        for (i, j), c in self.bounds.items():
            D[i][j] = min(D[i][j], c - r[i] + r[j])
        return D, ms, r

    @staticmethod
    def _close(D) -> bool:
        """Floyd–Warshall in place; False on a negative cycle."""
        size = len(D)
        for k in range(size):
            Dk = D[k]
            for i in range(size):
                dik = D[i][k]
                if dik == INF:
                    continue
                Di = D[i]
                for j in range(size):
                    Di[j] = min(Di[j], dik + Dk[j])
        return all(D[k][k] >= 0 for k in range(size))

    def closed(self):
        """(D, ms, r) path-closed and, for an HSDBM, GCD-tight; None if empty."""
        D, ms, r = self._simple()
        if not self._close(D):
            return None
        if self.is_harmonic():
            while True:
                changed = False
                size = len(D)
                for i in range(size):
                    for j in range(size):
                        if i != j and D[i][j] != INF:
                            g = math.gcd(ms[i], ms[j])
                            t = floor_to(D[i][j], g)
                            if t != D[i][j]:
                                D[i][j], changed = t, True
                if not changed:
                    break
                if not self._close(D):
                    return None
        return D, ms, r

    def is_empty_hsdbm(self) -> bool:
        """Path closure + GCD tightening (complete for harmonic systems only)."""
        if not self.is_harmonic():
            raise WorkbenchError("path closure and GCD tightening decide harmonic SDBMs only")
        return self.closed() is None

    def solution(self) -> dict | None:
        """The greatest solution inside the small-model box, or None when the
        system has no integer solution (any SDBM, harmonic or not)."""
        D, ms, r = self._simple()
        if not self._close(D):
            return None
        n = self.n
        # an integral solution of the inequalities alone (shortest-path
        # potentials of the closed graph), shifted so that z = 0; by the
        # seed's Lemmas 8-9 (all DBM subdeterminants are at most 1), if the
        # SDBM has a solution it has one within (n+1)·L of it in every variable
        pot = [min([0] + [D[i][j] for j in range(n + 1) if j != i and D[i][j] != INF])
               for i in range(n + 1)]
        pot = [p - pot[n] for p in pot]
        radius = (n + 1) * ms[n]
        U = [floor_to(min(D[i][n], pot[i] + radius), ms[i]) for i in range(n)] + [0]
        lower = [max(-D[n][i], pot[i] - radius) for i in range(n)] + [0]
        if any(u < lo for u, lo in zip(U, lower)):
            return None
        succ = {j: [i for i in range(n) if i != j and D[i][j] != INF] for j in range(n + 1)}
        work = list(range(n + 1))
        queued = set(work)
        while work:
            j = work.pop()
            queued.discard(j)
            for i in succ[j]:
                t = floor_to(U[j] + D[i][j], ms[i])
                if t < U[i]:
                    if t < lower[i]:
                        return None
                    U[i] = t
                    if i not in queued:
                        work.append(i)
                        queued.add(i)
        return {self.names[i]: U[i] + r[i] for i in range(n)}

    def is_empty(self) -> bool:
        n = self.n
        if all(i == n or j == n for i, j in self.bounds):
            # variable bounds only (a box meeting strides): each variable alone
            for k, (m, r) in enumerate(self.congruences):
                hi, lo = self.bounds.get((k, n)), self.bounds.get((n, k))
                if hi is not None and lo is not None and floor_to(hi - r, m) + r < -lo:
                    return True
            return False
        if self.is_harmonic():
            return self.closed() is None
        return self.solution() is None

    def contains(self, point: dict) -> bool:
        x = [point[v] for v in self.names] + [0]
        if any((x[i] - r) % m for i, (m, r) in enumerate(self.congruences)):
            return False
        return all(x[i] - x[j] <= c for (i, j), c in self.bounds.items())


__all__ = ["INF", "SDBM", "NotSDBM", "contradiction", "floor_to", "lcm"]
