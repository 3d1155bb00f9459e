"""Emptiness of tile domains with the SDBM domain as the fast path and isl
as the fallback (issue 7 item 4).

A region's pieces are converted to SDBMs once (`from_isl`; a piece that is
not an SDBM stays with isl); a tile is a box, so intersecting it with a
piece only tightens variable bounds, and the check is an SDBM emptiness
check — path closure and GCD tightening for the harmonic systems regions
and tiles give.
"""

from __future__ import annotations

import itertools

import islpy as isl

from ..sdbm import SDBM, NotSDBM, from_isl


def pieces(s) -> list:
    """(isl basic set, SDBM or None) for each piece of a set."""
    out = []
    for b in isl.Set(str(s)).get_basic_sets():
        try:
            out.append((b, from_isl(b)))
        except NotSDBM:
            out.append((b, None))
    return out


def boxed(s: SDBM, lo, hi) -> SDBM:
    """`s` within the box lo ≤ x ≤ hi."""
    n = s.n
    return s.tightened({key: c for k, (a, z) in enumerate(zip(lo, hi))
                        for key, c in (((k, n), z), ((n, k), -a))})


def isl_box(name: str, lo, hi):
    iv = [f"i{k}" for k in range(len(lo))]
    cond = " and ".join(f"{a} <= {v} <= {z}" for v, a, z in zip(iv, lo, hi))
    return isl.BasicSet(f"{{ {name}[{', '.join(iv)}] : {cond} }}")


def tile_boxes(shape, sizes: dict):
    """(tile index, lo, hi) of every tile of `shape` (untiled dims whole)."""
    ranges = [range((s + sizes[d] - 1) // sizes[d]) if d in sizes else range(1)
              for d, s in enumerate(shape)]
    for q in itertools.product(*ranges):
        lo = [q[d] * sizes[d] if d in sizes else 0 for d in range(len(shape))]
        hi = [min(shape[d], lo[d] + sizes[d]) - 1 if d in sizes else shape[d] - 1
              for d in range(len(shape))]
        yield q, lo, hi


def touching_tiles(region, shape, sizes: dict, method: str = "sdbm") -> set:
    """Tile indices whose box meets `region` (e.g. the constant-dependent set)."""
    ps = pieces(region)
    name = isl.Set(str(region)).get_tuple_name()
    out = set()
    for q, lo, hi in tile_boxes(shape, sizes):
        for b, s in ps:
            if method == "sdbm" and s is not None:
                hit = not boxed(s, lo, hi).is_empty()
            else:
                hit = not b.intersect(isl_box(name, lo, hi)).is_empty()
            if hit:
                out.add(q)
                break
    return out


__all__ = ["boxed", "isl_box", "pieces", "tile_boxes", "touching_tiles"]
