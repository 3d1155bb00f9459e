"""Affine-MARS (§3–4 of the Affine-MARS paper): the footprint of a tile on
a data space through affine dependences, the tiles whose footprints meet
it, and the partition of the footprint into maximal atomic irredundant sets.

A tile is T(t) = { x : s_j·t_j ≤ n_j·x < s_j·(t_j + 1) } for tiling normals
n_j and sizes s_j. The footprint B⟨T(t)⟩ is the union of the images of the
tile's points (inside the iteration domain) by every dependence. Every other
tile t' whose footprint meets it is a consumer; by Proposition 4.1 their
footprints are finitely many distinct translates, and the MARS are the
non-empty M_C = ∩_{w∈C} (Φ(w) ∩ F) \\ ∪_{w∉C} (Φ(w) ∩ F) — computed here by
refining F with each distinct consumer footprint. Sizes (parameters) are
fixed numbers, so every set is finite and the partition can be checked by
enumeration.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..errors import WorkbenchError


@dataclass
class Mars:
    tile: tuple
    footprint: isl.Set  # B⟨T(t)⟩ on the data space
    consumers: list  # (tile index, its footprint ∩ ours), distinct footprints only
    parts: list  # (isl.Set, frozenset of consumer numbers that read it)

    def sizes(self) -> list:
        return [_count(p) for p, _ in self.parts]

    @property
    def footprint_size(self) -> int:
        return _count(self.footprint)

    def to_dict(self) -> dict:
        return {"tile": list(self.tile), "footprint": str(self.footprint),
                "footprint_size": self.footprint_size,
                "consumer_tiles": [list(t) for t, _ in self.consumers],
                "mars": [{"set": str(p), "size": _count(p), "read_by": sorted(c)}
                         for p, c in self.parts]}


def _count(s: isl.Set) -> int:
    n = 0

    def add(_):
        nonlocal n
        n += 1
    s.foreach_point(add)
    return n


def tile_map(domain: isl.Set, normals: list, sizes: list) -> isl.Map:
    """x -> t: the tile (index vector) each point of `domain` lies in."""
    n = domain.dim(isl.dim_type.set)
    xs = [f"x{k}" for k in range(n)]
    ts = [f"t{j}" for j in range(len(normals))]
    cons = []
    for j, (nv, s) in enumerate(zip(normals, sizes)):
        if len(nv) != n or s < 1:
            raise WorkbenchError(f"tiling normal {nv} / size {s} does not fit a "
                                 f"{n}-dimensional domain")
        dot = _affine(nv, xs)
        cons.append(f"{s}*{ts[j]} <= {dot} < {s}*{ts[j]} + {s}")
    name = domain.get_tuple_name()
    m = isl.Map(f"{{ {name}[{', '.join(xs)}] -> T[{', '.join(ts)}] : {' and '.join(cons)} }}")
    return m.intersect_domain(domain)


def _affine(coefs, names) -> str:
    """Σ c·x in isl's syntax (signs written out)."""
    out = ""
    for c, x in zip(coefs, names):
        if c:
            out += (" - " if c < 0 else (" + " if out else "")) + f"{abs(c)}*{x}"
    return out.lstrip(" +") or "0"


def footprint(deps: list, tile_points: isl.Set) -> isl.Set:
    """Union of the images of `tile_points` by each dependence map."""
    out = None
    for d in deps:
        img = tile_points.apply(d)
        out = img if out is None else out.union(img)
    if out is None:
        raise WorkbenchError("no dependence: a footprint needs at least one")
    return out.coalesce()


def mars(domain: isl.Set, deps: list, normals: list, sizes: list, tile: tuple) -> Mars:
    """MARS of the footprint of tile `tile` on the data space that `deps`
    (iteration -> data, the same data space for all) lead to."""
    tm = tile_map(domain, normals, sizes)
    point = isl.Set(f"{{ T[{', '.join(str(v) for v in tile)}] }}")
    pts = tm.intersect_range(point).domain()
    if pts.is_empty():
        raise WorkbenchError(f"tile {tile} holds no point of the domain")
    mine = footprint(deps, pts)
    # consumer tiles: those some of whose points reach our footprint
    reach = None
    for d in deps:
        r = d.intersect_range(mine).reverse().apply_range(tm)  # data -> tile
        reach = r if reach is None else reach.union(r)
    tiles = []
    reach.range().foreach_point(lambda p: tiles.append(tuple(
        p.get_coordinate_val(isl.dim_type.set, k).to_python()
        for k in range(len(normals)))))
    distinct: list = []
    for t in sorted(tiles):
        if t == tuple(tile):
            continue
        tp = tm.intersect_range(isl.Set(f"{{ T[{', '.join(map(str, t))}] }}")).domain()
        shared = footprint(deps, tp).intersect(mine).coalesce()
        if shared.is_empty() or any(shared.is_equal(s) for _, s in distinct):
            continue
        distinct.append((t, shared))
    parts = [(mine, frozenset())]
    for k, (_, shared) in enumerate(distinct):
        nxt = []
        for p, readers in parts:
            inside, outside = p.intersect(shared).coalesce(), p.subtract(shared).coalesce()
            if not inside.is_empty():
                nxt.append((inside, readers | {k}))
            if not outside.is_empty():
                nxt.append((outside, readers))
        parts = nxt
    return Mars(tuple(tile), mine, distinct, parts)


__all__ = ["Mars", "footprint", "mars", "tile_map"]
