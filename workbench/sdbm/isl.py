"""Between SDBMs and isl basic sets.

`from_isl` recognises what an SDBM can say: inequalities over one variable
(any coefficient, tightened to an integer bound) or over two with opposite
coefficients, equalities as two inequalities, and congruences that isl
writes as x = m·e + c with an existential e used nowhere else. Anything else
gets a `NotSDBM` naming the constraint.
"""

from __future__ import annotations

import math

import islpy as isl

from .system import SDBM, NotSDBM, contradiction


def to_isl(s: SDBM):
    return isl.BasicSet(s.to_isl_string())


def _crt(a: tuple, b: tuple) -> tuple | None:
    """x ≡ r1 (m1) ∧ x ≡ r2 (m2) as one congruence, None when incompatible."""
    (m1, r1), (m2, r2) = a, b
    g = math.gcd(m1, m2)
    if (r2 - r1) % g:
        return None
    lcm = m1 // g * m2
    # r = r1 + m1 * t with m1 t ≡ r2 − r1 (mod m2)
    t = ((r2 - r1) // g * pow(m1 // g, -1, m2 // g)) % (m2 // g) if m2 // g > 1 else 0
    return lcm, (r1 + m1 * t) % lcm


def _one_basic_set(bset):
    """The isl basic set an SDBM can come from (parsed, unwrapped from a
    one-part set), or NotSDBM."""
    if isinstance(bset, str):
        bset = isl.BasicSet(bset)
    if isinstance(bset, isl.Set):
        parts = bset.get_basic_sets()
        if len(parts) != 1:
            raise NotSDBM(f"a union of {len(parts)} basic sets is not one SDBM")
        bset = parts[0]
    if bset.dim(isl.dim_type.param):
        raise NotSDBM("parameters: fix them first (an SDBM has variables only)")
    return bset


class _Reader:
    """Collects the bounds and congruences of an SDBM, one isl constraint at
    a time."""

    def __init__(self, names: tuple):
        self.idx = {v: k for k, v in enumerate(names)}
        self.n = len(names)
        self.bounds: dict = {}
        self.cong: list = [(1, 0)] * self.n
        self.empty = False

    def bound(self, i, j, c) -> None:
        self.bounds[(i, j)] = min(c, self.bounds.get((i, j), c))

    def congruence(self, c, coef: dict, const, dv: list, used: list, uses: list) -> None:
        """x = m·e + c with an existential e used only here."""
        if not (c.is_equality() and len(used) == 1 and uses[used[0]] == 1
                and len(coef) == 1 and abs(next(iter(coef.values()))) == 1):
            raise NotSDBM(f"not an SDBM constraint: {c}")
        (v, a), = coef.items()
        m = abs(dv[used[0]])
        # a·v + m·e + const = 0  ⇒  v ≡ −const·a (mod m)
        got = _crt(self.cong[self.idx[v]], (m, (-const * a) % m))
        if got is None:
            self.empty = True
        else:
            self.cong[self.idx[v]] = got

    def inequality(self, c, f: dict, k0) -> None:
        """Σ f_v v + k0 ≥ 0."""
        idx, n = self.idx, self.n
        if len(f) == 1:
            (v, a), = f.items()
            if a > 0:  # v ≥ ⌈−k0/a⌉  ⇔  −v ≤ ⌊k0/a⌋
                self.bound(n, idx[v], k0 // a)
            else:  # v ≤ ⌊k0/−a⌋
                self.bound(idx[v], n, k0 // -a)
        elif len(f) == 2 and sum(f.values()) == 0:
            (v1, a1), (v2, _) = sorted(f.items(), key=lambda kv: -kv[1])
            # a1 (v1 − v2) + k0 ≥ 0  ⇔  v2 − v1 ≤ ⌊k0/a1⌋
            self.bound(idx[v2], idx[v1], k0 // a1)
        elif not f:
            if k0 < 0:
                self.empty = True
        else:
            raise NotSDBM(f"not a difference bound: {c}")


def from_isl(bset) -> SDBM:
    bset = _one_basic_set(bset)
    names = tuple(bset.get_dim_name(isl.dim_type.set, k) or f"x{k}"
                  for k in range(bset.dim(isl.dim_type.set)))
    n = len(names)
    ndiv = bset.dim(isl.dim_type.div)
    cons = list(bset.get_constraints())
    divs = [[c.get_coefficient_val(isl.dim_type.div, k).to_python() for k in range(ndiv)]
            for c in cons]
    uses = [sum(1 for d in divs if d[k]) for k in range(ndiv)]
    r = _Reader(names)
    for c, dv in zip(cons, divs):
        coef = {k: v.to_python() for k, v in c.get_coefficients_by_name().items() if k != 1}
        coef = {k: v for k, v in coef.items() if v}
        const = c.get_constant_val().to_python()
        used = [k for k, v in enumerate(dv) if v]
        if used:
            r.congruence(c, coef, const, dv, used, uses)
        elif c.is_equality():  # as two inequalities
            r.inequality(c, coef, const)
            r.inequality(c, {k: -v for k, v in coef.items()}, -const)
        else:
            r.inequality(c, coef, const)
    if r.empty:
        if n == 0:
            raise NotSDBM("an empty set without variables")
        r.bounds.update(contradiction(n))
    return SDBM(names, r.bounds, tuple(r.cong))


__all__ = ["from_isl", "to_isl"]
