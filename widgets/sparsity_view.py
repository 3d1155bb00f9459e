"""The Sparsity tab of the explorer: the regions of the kernel's output
(`workbench.volume.regions`) as a heatmap over its two innermost
dimensions, with the tiles the candidate's size decisions imply. A
"computing …" line is on show while the regions and the figure are built;
the figure, its widget included, is kept while the tile sizes stay the
same: most decisions leave them as they are."""

from __future__ import annotations

import html
import time

from workbench.errors import WorkbenchError

from .figures import figure_output


class SparsityPanel:
    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.status = w.HTML()
        self.widget = self.box = w.VBox([self.status])
        self._key = None
        self._fig = None
        self.last_show_s = 0.0

    def refresh(self) -> None:
        pass

    def show(self):
        """The heatmap figure (None where the kernel has no volume model or
        a rank-1 output: a message instead)."""
        import islpy as isl

        from workbench.volume import Program, regions
        from workbench.volume.kernels import tile_sizes, volume_spec

        from .volume_view import region_heatmap
        cand = self._ex.session.cand
        kernel = cand.problem.root_problem.kernel
        sizes, fixed = tile_sizes(cand)
        key = (kernel.name, str(kernel.spec()), tuple(sorted(sizes.items())), fixed)
        if key == self._key:
            # the same tiles: the figure on show stands (a new widget, drawn
            # again by the page, took 1.2 s a click in Chromium)
            return self._fig
        t0 = time.perf_counter()
        self.status.value = (f"<i>computing the regions of {html.escape(kernel.name)} and "
                             "the heatmap …</i>")
        self.box.children = [self.status]
        try:
            reg = regions(Program.from_spec(volume_spec(kernel)))
        except WorkbenchError as exc:
            self.status.value = f"<i>{html.escape(str(exc))}</i>"
            self._key, self._fig = key, None
            return None
        n = len(reg.domain.get_var_names(isl.dim_type.set))
        if n < 2:
            self.status.value = f"regions: {html.escape(str(reg.counts()))}"
            self._key, self._fig = key, None
            return None
        fig = region_heatmap(reg, {d: 0 for d in range(n - 2)}, (-2, -1), sizes,
                             title=f"{reg.output}: tiles {sizes}"
                                   f"{'' if fixed else ' (smallest still possible)'}")
        widget = figure_output(fig)
        self.last_show_s = time.perf_counter() - t0
        self.status.value = (f"<span style='color:#888;font-size:85%'>drawn in "
                             f"{self.last_show_s:.1f} s</span>")
        self.box.children = [self.status, widget]
        self._key, self._fig = key, fig
        return fig


__all__ = ["SparsityPanel"]
