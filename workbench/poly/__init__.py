"""Polyhedral decision aids: instance-wise dependences of a kernel (islpy),
the fusion conflict graph of pluto-lp-dfp with its convex colouring, and the
Affine-MARS partition of tile footprints."""

from .deps import Dependence, PolyProgram, Statement, from_kernel, input_dependences
from .fusion import FusionReport, fusion_report
from .propagator import fcg_prune

__all__ = ["Dependence", "FusionReport", "PolyProgram", "Statement", "fcg_prune", "from_kernel",
           "fusion_report", "input_dependences"]
