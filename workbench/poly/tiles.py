"""Footprints and MARS of a candidate's tiles: for every flow dependence of
the kernel (producer → consumer), one tile of the consumer's iteration space
— tile sizes from the candidate's `size` decisions on the consumer's
outermost levels — its footprint on the producer's values, and the MARS
partition of that footprint among the consumer's other tiles. The values a
producer hands to a consumer are what a temporary holds when the
communication is lowered to memory, so the footprint is the shared memory
one tile needs when that temporary is `mem_space = SHARED`."""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..errors import WorkbenchError
from ..space.values import MemSpace
from ..volume.kernels import logical_tiles
from .deps import fix_sizes, from_kernel
from .mars import Mars, mars, tile_map

BYTES = 4  # float


@dataclass
class TileFootprint:
    dependence: str
    producer: str
    consumer: str
    tile: dict  # logical dim -> tile size (of the consumer)
    fixed: bool  # every tile size decided
    mars: Mars
    shared: list  # temporaries of this communication placed in SHARED

    @property
    def bytes(self) -> int:
        return self.mars.footprint_size * BYTES

    def to_dict(self) -> dict:
        return {"dependence": self.dependence, "producer": self.producer,
                "consumer": self.consumer, "tile": self.tile, "fixed": self.fixed,
                "footprint_elements": self.mars.footprint_size, "bytes": self.bytes,
                "mars_sizes": self.mars.sizes(), "consumer_tiles": len(self.mars.consumers),
                "shared_temporaries": self.shared}


def tile_footprints(cand) -> list[TileFootprint]:
    kernel = cand.problem.root_problem.kernel
    prog = from_kernel(kernel)
    insts = {i.name: i for i in kernel.instructions()}
    shared = _shared_temporaries(cand)
    out = []
    for dep in prog.dependences:
        if dep.kind != "flow" or dep.source == dep.target:
            continue
        cons = prog.statements[dep.target]
        tiles = logical_tiles(cand, insts[dep.target])
        sizes = [tiles.get(n, (1, True))[0] for n in cons.dims]
        domain = fix_sizes(cons.domain, prog.sizes)
        to_values = fix_sizes(dep.relation, prog.sizes).reverse()  # consumer -> producer
        normals = [tuple(int(a == b) for b in range(len(sizes))) for a in range(len(sizes))]
        m = mars(domain, [to_values], normals, sizes, _middle_tile(
            tile_map(domain, normals, sizes), to_values))
        out.append(TileFootprint(dep.name, dep.source, dep.target,
                                 {n: s for n, s in zip(cons.dims, sizes)},
                                 all(tiles.get(n, (1, True))[1] for n in cons.dims), m,
                                 shared.get((dep.source, dep.target), [])))
    return out


def _middle_tile(tm: isl.Map, to_values: isl.Map) -> tuple:
    """A tile that reads through the dependence, in the middle of those that
    do where that one does (an inner tile sees every neighbour), else the first."""
    reading = tm.intersect_domain(to_values.domain()).range()

    def point(s):
        p = s.sample_point()
        return tuple(p.get_coordinate_val(isl.dim_type.set, k).to_python()
                     for k in range(s.dim(isl.dim_type.set)))
    lo, hi = point(reading.lexmin()), point(reading.lexmax())
    mid = tuple((a + b) // 2 for a, b in zip(lo, hi))
    probe = isl.Set(f"{{ T[{', '.join(map(str, mid))}] }}")
    return mid if not reading.intersect(probe).is_empty() else lo


def _shared_temporaries(cand) -> dict:
    """(producer, consumer) -> temporaries of the candidate's lowered
    communications whose mem_space is decided SHARED."""
    out: dict = {}
    kernel = cand.kernel  # after lowerings: with their temporaries
    names = {i.name for i in cand.problem.root_problem.kernel.instructions()}
    for a in kernel.arrays():
        if not a.temporary:
            continue
        try:
            dom = cand.domain("mem_space", (a.name,))
        except WorkbenchError:  # an array the space does not list
            continue
        if dom == {MemSpace.SHARED}:
            out.setdefault(_endpoints(a.name, names), []).append(a.name)
    return out


def _endpoints(tmp: str, names: set) -> tuple:
    """tmp_<producer>_<consumer> names the communication it holds."""
    rest = tmp.removeprefix("tmp_")
    for k, ch in enumerate(rest):
        if ch == "_" and rest[:k] in names and rest[k + 1:] in names:
            return (rest[:k], rest[k + 1:])
    return (tmp, "")


__all__ = ["TileFootprint", "tile_footprints"]
