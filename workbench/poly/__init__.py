"""Polyhedral decision aids: instance-wise dependences of a kernel (islpy),
the fusion conflict graph of pluto-lp-dfp with its convex colouring, and the
Affine-MARS partition of tile footprints."""

from .deps import Dependence, PolyProgram, Statement, from_kernel, input_dependences
from .fcg import FCG, Colouring, build_fcg, colour, kernel_colouring, kernel_fcg
from .fusion import FusionReport, fusion_report
from .mars import Mars, mars
from .propagator import fcg_prune
from .tiles import TileFootprint, tile_footprints

__all__ = ["FCG", "Colouring", "Dependence", "FusionReport", "Mars", "PolyProgram", "Statement",
           "TileFootprint", "build_fcg", "colour", "fcg_prune", "from_kernel", "fusion_report",
           "input_dependences", "kernel_colouring", "kernel_fcg", "mars", "tile_footprints"]
