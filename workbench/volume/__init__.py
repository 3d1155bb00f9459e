"""The volume model (Friebel et al., IMPACT 2023) with islpy: volumes,
operations and their element maps, programs by lenient composition,
sparsity regions, hyperrectangular partitions, slices and tiles."""

from .fastpath import touching_tiles
from .kernels import conv_spec, tile_sizes, volume_spec
from .program import Program
from .regions import Regions, Tiling, count, hyperrectangles, match_slice, regions, tile

__all__ = ["Program", "Regions", "Tiling", "conv_spec", "count", "hyperrectangles",
           "match_slice", "regions", "tile", "tile_sizes", "touching_tiles", "volume_spec"]
