"""The Fusion tab of the explorer: what `workbench.poly.fusion_report` says
of the candidate, rendered — the kernel's fusion conflict graph with its
colouring, why each fusion is impossible, and the footprint (bytes, MARS) of
one tile of every consumer under the current size decisions."""

from __future__ import annotations

import html

from workbench.errors import WorkbenchError

from .figures import figure_output


class FusionPanel:
    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.widget = self.box = w.VBox()
        self._key = self._graph = self._text = None  # the kernel whose graph is on show

    def refresh(self) -> None:
        pass

    def show(self):
        """The graph's figure (None where the kernel has no polyhedral
        program: a message instead); the page shows it as a `figure_output`."""
        import ipywidgets as w

        from workbench.poly import fusion_report

        from .poly_view import fcg_figure
        cand = self._ex.session.cand
        kernel = cand.problem.root_problem.kernel
        key = (kernel.name, str(kernel.spec()))
        if key != self._key:
            self.box.children = [w.HTML("<i>computing the fusion conflict graph and the "
                                        "tile footprints …</i>")]
        try:
            rep = fusion_report(cand)
        except WorkbenchError as exc:
            self.box.children = [w.HTML(f"<i>{html.escape(str(exc))}</i>")]
            self._key = self._graph = None
            return None
        text = fusion_html(rep)
        if key == self._key:  # the kernel's graph on show stands; the footprints follow
            if self._text.value != text:
                self._text.value = text
            return self._graph.figure
        # the graph is the kernel's: a decision leaves it (a new widget, drawn
        # again by the page, took 1.2 s a click in Chromium)
        self._graph = figure_output(fcg_figure(rep.graph, rep.colouring))
        self._text = w.HTML(text)
        self.box.children = [self._graph, self._text]
        self._key = key
        return self._graph.figure


def fusion_html(rep) -> str:
    """The colouring's loop orders, the conflicts with their reasons, and a
    table of tile footprints."""
    g, c, fps = rep.graph, rep.colouring, rep.footprints
    edges = "".join(f"<tr><td>{html.escape(' ✗ '.join(sorted(g.name(v) for v in e)))}"
                    f"</td><td>{html.escape(r)}</td></tr>" for e, r in g.edges.items())
    perms = ", ".join(f"{s}: ({', '.join(c.permutation(s))})" for s in g.dims)
    rows = "".join(
        f"<tr><td>{html.escape(f.dependence)}</td><td>{f.tile}</td>"
        f"<td>{f.mars.footprint_size:,}</td><td>{f.bytes:,} B</td>"
        f"<td>{len(f.mars.parts)}</td><td>{', '.join(f.shared) or '—'}</td></tr>"
        for f in fps)
    return (f"<p><b>colouring</b> (outermost first): {html.escape(perms)}; "
            f"{len(c.cuts)} cut(s)</p><table><tr><th>cannot fuse</th><th>why</th></tr>"
            f"{edges}</table><p><b>one tile's footprint</b> (tiles from the size "
            f"decisions{'' if rep.sizes_fixed else '; open sizes: smallest tile'})"
            f"</p><table><tr><th>dependence</th><th>tile</th><th>elements</th><th>bytes</th>"
            f"<th>MARS</th><th>in SHARED</th></tr>{rows}</table>")


__all__ = ["FusionPanel", "fusion_html"]
