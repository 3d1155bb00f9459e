"""What fusing a candidate's loops comes to, in one call: the kernel's fusion
conflict graph with its convex colouring (why each fusion is impossible, the
loop order the colouring gives) and the footprint of one tile of every
consumer under the candidate's size decisions. The explorer's Fusion tab
renders `fusion_report(cand)`; plain Python reads the same object."""

from __future__ import annotations

from dataclasses import dataclass

from .fcg import FCG, Colouring, kernel_colouring, kernel_fcg
from .tiles import TileFootprint, tile_footprints


@dataclass(frozen=True)
class FusionReport:
    graph: FCG
    colouring: Colouring
    footprints: tuple[TileFootprint, ...]

    @property
    def sizes_fixed(self) -> bool:
        """Every tile size of every footprint decided (else: smallest tiles)."""
        return all(f.fixed for f in self.footprints)


def fusion_report(cand) -> FusionReport:
    """The FCG and colouring of the candidate's kernel (cached per kernel)
    and its tiles' footprints. Raises WorkbenchError where the kernel has no
    polyhedral program."""
    kernel = cand.problem.root_problem.kernel
    _, graph = kernel_fcg(kernel)
    return FusionReport(graph, kernel_colouring(kernel), tuple(tile_footprints(cand)))


__all__ = ["FusionReport", "fusion_report"]
