"""The volume model (Friebel et al., IMPACT 2023) with islpy: volumes,
operations and their element maps, programs by lenient composition,
sparsity regions, hyperrectangular partitions, slices and tiles."""

from .program import Program
from .regions import Regions, Tiling, count, hyperrectangles, match_slice, regions, tile

__all__ = ["Program", "Regions", "Tiling", "count", "hyperrectangles", "match_slice",
           "regions", "tile"]
