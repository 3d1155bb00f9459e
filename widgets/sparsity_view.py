"""The Sparsity tab of the explorer: the regions of the kernel's output
(`workbench.volume.regions`) as a heatmap over its two innermost
dimensions, with the tiles the candidate's size decisions imply."""

from __future__ import annotations

import html

from workbench.errors import WorkbenchError


class SparsityPanel:
    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.widget = self.box = w.VBox()

    def refresh(self) -> None:
        pass

    def show(self):
        """The heatmap figure (None where the kernel has no volume model or
        a rank-1 output: a message instead)."""
        import ipywidgets as w
        import islpy as isl
        import plotly.graph_objects as go

        from workbench.volume import Program, regions
        from workbench.volume.kernels import tile_sizes, volume_spec

        from .volume_view import region_heatmap
        cand = self._ex.session.cand
        try:
            reg = regions(Program.from_spec(volume_spec(cand.problem.root_problem.kernel)))
        except WorkbenchError as exc:
            self.box.children = [w.HTML(f"<i>{html.escape(str(exc))}</i>")]
            return None
        sizes, fixed = tile_sizes(cand)
        n = len(reg.domain.get_var_names(isl.dim_type.set))
        if n < 2:
            self.box.children = [w.HTML(f"regions: {reg.counts()}")]
            return None
        fig = region_heatmap(reg, {d: 0 for d in range(n - 2)}, (-2, -1), sizes,
                             title=f"{reg.output}: tiles {sizes}"
                                   f"{'' if fixed else ' (smallest still possible)'}")
        self.box.children = [go.FigureWidget(fig)]
        return fig


__all__ = ["SparsityPanel"]
