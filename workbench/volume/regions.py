"""Facts → sparsity regions (volume-model paper §5.2–5.3), hyperrectangular
partitions (Algorithm 1), MatchSlice (Algorithm 3) and tiling (§5.2,
Algorithm 2).

The fact applied is "is a compile-time constant". With M the program's
volume element map (output element → the live-in and constant elements it
depends on, its footprint) and dom the output's index domain:

- static (the paper's I_St, "constants c only"): elements whose footprint is
  non-empty and lies wholly in constants — scalars, padding values and
  shaped constants (weights baked into the kernel, Figure 1): they can be
  computed at compile time;
- constant-dependent (I_c, §5.2: the domain of M range-intersected with the
  scalar constant): elements whose footprint meets a scalar constant (a
  padding value, or a scalar operand), and the static elements. A shaped
  constant alone does not make an element constant-dependent: the paper's
  Figure 1 reads the constant weights everywhere and its I_c is still only
  the padding border;
- dense (I_D = dom \\ I_c, §5.3);
- sparse edges (I_Sp1) and sparse corners (I_Sp2): the non-static elements
  that depend on a padding value through exactly one padded dimension, or
  through two or more (a dependence on a padding constant is tagged with
  the padded dimension it came through, `ops.PAD_TAG`).

dense, static, sparse edges, sparse corners and the rest of I_c (non-static
elements reading a scalar constant, not through padding — the §5.4
pitfall) partition dom (`Regions.partition`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import islpy as isl

from ..errors import WorkbenchError
from .ops import PAD_TAG
from .program import Program


def _sets(uset) -> list:
    sl = uset.get_set_list()
    return [sl.get_at(k) for k in range(sl.n_set())]


def _tuples(uset) -> list:
    return [s.get_tuple_name() for s in _sets(uset)]


def count(s) -> int:
    """Number of elements of a parameter-free set (isl count_val, per disjoint piece)."""
    if s is None or s.is_empty():
        return 0
    if s.dim(isl.dim_type.param):
        raise WorkbenchError("count a set with parameters only after fixing them")
    return int(s.count_val().to_python())


@dataclass
class Regions:
    output: str
    domain: object  # isl Set: every element of the output
    dense: object
    constant_dependent: object
    static: object
    sparse_edges: object
    sparse_corners: object
    element_map: object
    by_dimension: dict  # padded dimension → elements depending on constants through it

    def sets(self) -> dict:
        return {"dense": self.dense, "constant_dependent": self.constant_dependent,
                "static": self.static, "sparse_edges": self.sparse_edges,
                "sparse_corners": self.sparse_corners}

    def partition(self) -> dict:
        """Disjoint regions covering the domain: the four named ones and
        `constant_other`, the constant-dependent elements in none of them."""
        rest = self.constant_dependent.subtract(self.static).subtract(self.sparse_edges)
        return {"dense": self.dense, "static": self.static, "sparse_edges": self.sparse_edges,
                "sparse_corners": self.sparse_corners,
                "constant_other": rest.subtract(self.sparse_corners).coalesce()}

    def counts(self) -> dict:
        return {k: count(v) for k, v in self.sets().items()}

    def to_dict(self) -> dict:
        return {"output": self.output,
                "regions": {k: str(v) for k, v in self.sets().items()},
                "counts": self.counts()}


def regions(program: Program, output: str | None = None) -> Regions:
    out = output or program.output
    m = program.element_map(out)
    dom = isl.Set(str(program.domain(out)))
    rng = m.range()
    scalars = [t for t in _tuples(rng) if program.constants.get(t) == []
               or any(t.startswith(c + PAD_TAG) for c in program.constants)]
    consts = [*scalars, *(t for t in _tuples(rng) if program.constants.get(t))]
    empty = dom.subtract(dom)

    def reach(names):
        got = empty
        for s in _sets(rng):
            if s.get_tuple_name() in names:
                part = m.intersect_range(isl.UnionSet(str(s))).domain()
                for piece in _sets(part):
                    got = got.union(piece)
        return got.coalesce()
    other = reach({t for t in _tuples(rng) if t not in consts})
    static = reach(set(consts)).subtract(other).coalesce()
    cdep = reach(set(scalars)).union(static).coalesce()
    by_dim: dict = {}
    for t in consts:
        if PAD_TAG in t:
            d = int(t.rsplit(PAD_TAG, 1)[1])
            by_dim[d] = by_dim.get(d, empty).union(reach({t})).coalesce()
    corners = empty
    for a, b in itertools.combinations(sorted(by_dim), 2):
        corners = corners.union(by_dim[a].intersect(by_dim[b]))
    corners = corners.subtract(static).coalesce()
    padded = empty
    for s in by_dim.values():
        padded = padded.union(s)
    edges = padded.subtract(static).subtract(corners).coalesce()
    dense = dom.subtract(cdep).coalesce()
    return Regions(out, dom, dense, cdep, static, edges, corners, m, by_dim)


# ------------------------------------------------------------- partitions
def is_hyperrectangle(bset) -> bool:
    """Equal to its box hull (Def. 4.5)."""
    box = box_hull(bset)
    return box is not None and box.is_equal(isl.Set(str(bset)))


def box_hull(bset):
    """The smallest hyperrectangle holding a bounded parameter-free set."""
    s = isl.Set(str(bset))
    if s.is_empty():
        return None
    n = s.dim(isl.dim_type.set)
    lo = [s.dim_min_val(k).to_python() for k in range(n)]
    hi = [s.dim_max_val(k).to_python() for k in range(n)]
    name = s.get_tuple_name()
    iv = [f"i{k}" for k in range(n)]
    cond = " and ".join(f"{a} <= {v} <= {b}" for v, a, b in zip(iv, lo, hi))
    return isl.Set(f"{{ {name}[{', '.join(iv)}] : {cond} }}")


def hyperrectangles(s) -> list:
    """Disjoint hyperrectangles covering `s` (the input of Algorithm 1):
    the disjoint pieces isl gives, each split along the first dimension whose
    slices differ until every piece is a box."""
    s = isl.Set(str(s))
    out = []
    for piece in s.make_disjoint().get_basic_sets():
        out.extend(_split_to_boxes(isl.Set(str(piece))))
    return out


def _split_to_boxes(s) -> list:
    if s.is_empty():
        return []
    if is_hyperrectangle(s):
        return [box_hull(s)]
    n = s.dim(isl.dim_type.set)
    name = s.get_tuple_name()
    iv = [f"i{k}" for k in range(n)]
    for k in range(n):
        lo, hi = s.dim_min_val(k).to_python(), s.dim_max_val(k).to_python()
        if lo == hi:
            continue
        # one slab per value of dimension k would be exact; take runs of equal slices
        pieces, start, prev = [], lo, None
        for v in range(lo, hi + 2):
            cur = None if v > hi else _slice_at(s, k, v)
            if prev is not None and (cur is None or not cur.is_equal(prev)):
                pieces.append(s.intersect(isl.Set(
                    f"{{ {name}[{', '.join(iv)}] : {start} <= {iv[k]} <= {v - 1} }}")))
                start = v
            elif prev is None:
                start = v
            prev = cur
        if len(pieces) > 1:
            return [b for p in pieces for b in _split_to_boxes(p)]
    raise WorkbenchError(f"cannot split {s} into hyperrectangles")


def _slice_at(s, k: int, v: int):
    n = s.dim(isl.dim_type.set)
    fixed = s.fix_val(isl.dim_type.set, k, isl.Val(v))
    return fixed.project_out(isl.dim_type.set, k, 1) if n else fixed


@dataclass(frozen=True)
class Slice:
    offsets: tuple
    strides: tuple
    sizes: tuple

    def to_dict(self) -> dict:
        return {"offsets": list(self.offsets), "strides": list(self.strides),
                "sizes": list(self.sizes)}


def match_slice(s) -> Slice:
    """Algorithm 3: offset, stride and size per dimension of a set that is a
    slice (Def. 4.9), the offsets as affine expressions of the parameters
    (e.g. tile indices); a clear error when it is not one."""
    s = isl.Set(str(s)) if not isinstance(s, isl.Set) else s
    if s.is_empty():
        raise WorkbenchError("an empty set is not a slice")
    n = s.dim(isl.dim_type.set)
    offs, strides, sizes = [], [], []
    for k in range(n):
        lo = s.dim_min(k)
        hi = s.dim_max(k)
        if lo.n_piece() != 1 or hi.n_piece() != 1:
            raise WorkbenchError(f"dimension {k} of {s} has no single offset: not a slice")
        lo_aff, hi_aff = lo.get_pieces()[0][1], hi.get_pieces()[0][1]
        span = hi_aff.sub(lo_aff)
        if not span.is_cst():
            raise WorkbenchError(f"dimension {k} of {s}: its extent depends on parameters")
        stride = s.get_stride(k).to_python() if hasattr(s, "get_stride") else 1
        stride = max(1, int(stride))
        ext = span.get_constant_val().to_python()
        offs.append(str(lo_aff).split("->", 1)[-1].strip(" {}[]()"))
        strides.append(stride)
        sizes.append(ext // stride + 1)
    got = Slice(tuple(offs), tuple(strides), tuple(sizes))
    if not _slice_set(s, got).is_equal(s):
        raise WorkbenchError(f"{s} is not a slice (offset/stride/size leave other elements)")
    return got


def _slice_set(s, sl: Slice):
    n = s.dim(isl.dim_type.set)
    sp = s.get_space()
    params = [sp.get_dim_name(isl.dim_type.param, k) for k in range(sp.dim(isl.dim_type.param))]
    iv = [f"i{k}" for k in range(n)]
    conds = []
    for k, (o, st, z) in enumerate(zip(sl.offsets, sl.strides, sl.sizes)):
        expr = o.split("->", 1)[1].strip(" {}[]()") if "->" in o else o
        conds.append(f"exists (t{k} : {iv[k]} = {expr} + {st}*t{k} and 0 <= t{k} < {z})")
    head = f"[{', '.join(params)}] -> " if params else ""
    return isl.Set(f"{head}{{ {s.get_tuple_name()}[{', '.join(iv)}] : "
                   f"{' and '.join(f'({c})' for c in conds)} }}")


# ------------------------------------------------------------------ tiling
@dataclass
class Tiling:
    sizes: dict  # output dimension → tile size
    params: list  # parameter names of the tile indices
    tiles: object  # parameter domain of all tiles
    dense_tiles: object  # tiles entirely dense
    constant_tiles: object  # tiles touching a constant-dependent element

    def to_dict(self) -> dict:
        return {"sizes": self.sizes, "params": self.params, "tiles": str(self.tiles),
                "dense_tiles": str(self.dense_tiles), "constant_tiles": str(self.constant_tiles)}


def tile(reg: Regions, sizes: dict, names: dict | None = None) -> Tiling:
    """Tile output dimensions (dimension → size; the rest untiled) with the
    tile indices as parameters Q_d, and classify tiles (Algorithm 2's
    parameter domains): dense, or touching a constant."""
    dom = reg.domain
    n = dom.dim(isl.dim_type.set)
    name = dom.get_tuple_name()
    for d, t in sizes.items():
        if not 0 <= d < n:
            raise WorkbenchError(f"tile dimension {d}: the output has dimensions 0–{n - 1}")
        if t < 1:
            raise WorkbenchError(f"tile size of dimension {d} must be at least 1, got {t}")
    names = names or {}
    params = [names.get(d, f"Q{d}") for d in sorted(sizes)]
    iv = [f"i{k}" for k in range(n)]
    conds = [f"{sizes[d]}*{p} <= {iv[d]} < {sizes[d]}*{p} + {sizes[d]}"
             for d, p in zip(sorted(sizes), params)]
    tile_set = isl.Set(f"[{', '.join(params)}] -> {{ {name}[{', '.join(iv)}] : "
                       f"{' and '.join(conds)} }}")

    def params_of(s):
        return tile_set.intersect(isl.Set(str(s)).align_params(tile_set.get_space())).params()
    tiles = params_of(dom).coalesce()
    touching = params_of(reg.constant_dependent).coalesce()
    dense = tiles.subtract(touching).coalesce()
    return Tiling(dict(sizes), params, tiles, dense, touching)


__all__ = ["REGION_CODES", "Regions", "Slice", "Tiling", "box_hull", "count", "hyperrectangles",
           "is_hyperrectangle", "match_slice", "regions", "slice_grid", "tile"]


REGION_CODES = {"dense": 0, "sparse_edges": 1, "sparse_corners": 2, "static": 3,
                "constant_dependent": 4}


def slice_grid(reg: Regions, fixed: dict, dims: tuple = (-2, -1)):
    """A 2-D slice of the output (the other dimensions fixed by `fixed`) as a
    numpy array of region codes (REGION_CODES; constant-dependent elements in
    no finer region keep code 4), filled box by box."""
    import numpy as np
    n = reg.domain.dim(isl.dim_type.set)
    a, b = (d % n for d in dims)
    if a == b or set(fixed) | {a, b} != set(range(n)):
        raise WorkbenchError(f"fix every dimension but the two shown: dims {dims}, fixed "
                             f"{sorted(fixed)} for a rank-{n} output")
    size = [reg.domain.dim_max_val(d).to_python() + 1 for d in (a, b)]
    grid = np.full(size, -1, dtype=int)
    name = reg.domain.get_tuple_name()
    iv = [f"i{k}" for k in range(n)]
    cut = isl.Set(f"{{ {name}[{', '.join(iv)}] : "
                  + " and ".join(f"{iv[d]} = {v}" for d, v in fixed.items()) + " }")
    order = ["dense", "constant_dependent", "static", "sparse_edges", "sparse_corners"]
    for key in order:  # finer regions paint over constant_dependent
        s = getattr(reg, key).intersect(cut)
        for box in hyperrectangles(s):
            lo = [box.dim_min_val(d).to_python() for d in (a, b)]
            hi = [box.dim_max_val(d).to_python() for d in (a, b)]
            grid[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1] = REGION_CODES[key]
    return grid
