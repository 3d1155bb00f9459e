"""Figures of the polyhedral aids: the fusion conflict graph as a plotly
network (a row per statement, a node per dimension, edges for conflicts,
a ring for a permute-preventing self edge, node colour = the loop level the
colouring gave it) and a tile's footprint on a 1-D or 2-D data space
coloured by MARS. Views only: the data come from `workbench.poly`."""

from __future__ import annotations

import islpy as isl

PALETTE = ["#d62728", "#2ca02c", "#1f77b4", "#ff7f0e", "#9467bd", "#8c564b"]


def fcg_figure(g, colouring=None, title: str = "fusion conflict graph"):
    import plotly.graph_objects as go
    stmts = list(g.dims)
    pos = {(s, k): (k, -r) for r, s in enumerate(stmts) for k in range(len(g.dims[s]))}
    level = {}
    if colouring is not None:
        for lv, chosen in enumerate(colouring.levels):
            for s, k in chosen.items():
                if k is not None:
                    level[(s, k)] = lv
    fig = go.Figure()
    ex, ey, mx, my, why = [], [], [], [], []
    for e, reason in g.edges.items():
        vs = sorted(e)
        if len(vs) == 2:
            (x0, y0), (x1, y1) = pos[vs[0]], pos[vs[1]]
            ex += [x0, x1, None]
            ey += [y0, y1, None]
            mx.append((x0 + x1) / 2)
            my.append((y0 + y1) / 2)
            why.append(f"{g.name(vs[0])} ✗ {g.name(vs[1])}: {reason}")
    fig.add_scatter(x=ex, y=ey, mode="lines", line={"color": "#555", "width": 2},
                    name="cannot fuse", hoverinfo="skip")
    fig.add_scatter(x=mx, y=my, mode="markers", marker={"size": 8, "color": "#555",
                                                        "symbol": "x"},
                    text=why, hovertemplate="%{text}<extra></extra>", showlegend=False)
    selfs = [v for e in g.edges for v in e if len(e) == 1]
    if selfs:
        fig.add_scatter(x=[pos[v][0] for v in selfs], y=[pos[v][1] for v in selfs],
                        mode="markers", marker={"size": 34, "color": "rgba(0,0,0,0)",
                                                "line": {"color": "#b00", "width": 3}},
                        name="permute-preventing", text=[g.why(v, v) or g.edges[frozenset((v,))]
                                                         for v in selfs],
                        hovertemplate="%{text}<extra></extra>")
    vs = list(pos)
    fig.add_scatter(
        x=[pos[v][0] for v in vs], y=[pos[v][1] for v in vs], mode="markers+text",
        text=[g.dims[v[0]][v[1]] for v in vs], textposition="middle center",
        marker={"size": 26, "color": [PALETTE[level[v] % len(PALETTE)] if v in level
                                      else "#ddd" for v in vs]},
        hovertext=[f"{g.name(v)}: level {level[v]}" if v in level else g.name(v) for v in vs],
        hoverinfo="text", name="dimension (colour: level)")
    fig.update_layout(title=title, height=120 + 70 * len(stmts), showlegend=True,
                      xaxis={"visible": False},
                      yaxis={"tickvals": [-r for r in range(len(stmts))], "ticktext": stmts,
                             "zeroline": False, "showgrid": False},
                      margin={"l": 60, "r": 10, "t": 40, "b": 10})
    return fig


def mars_figure(m, title: str | None = None):
    """The footprint of `m.tile` on a 1-D or 2-D data space, one colour per MARS."""
    import plotly.graph_objects as go
    n = m.footprint.dim(isl.dim_type.set)
    if n not in (1, 2):
        raise ValueError(f"a {n}-D data space has no 2-D picture; slice it first")
    fig = go.Figure()
    for k, (part, readers) in enumerate(m.parts):
        pts = _points(part, n)
        xs = [p[-1] for p in pts]
        ys = [p[0] for p in pts] if n == 2 else [0] * len(pts)
        fig.add_scatter(x=xs, y=ys, mode="markers", marker={
            "size": 11, "symbol": "square", "color": PALETTE[k % len(PALETTE)]},
            name=f"MARS {k}: {len(pts)} elements, read by {len(readers)} other tile(s)")
    fig.update_layout(title=title or f"footprint of tile {m.tile}: "
                      f"{m.footprint_size} elements in {len(m.parts)} MARS",
                      height=380, yaxis={"scaleanchor": "x"} if n == 2 else {"visible": False},
                      margin={"l": 40, "r": 10, "t": 40, "b": 30})
    return fig


def _points(s, n: int) -> list:
    out: list = []
    s.foreach_point(lambda p: out.append([p.get_coordinate_val(
        isl.dim_type.set, d).to_python() for d in range(n)]))
    return out


__all__ = ["fcg_figure", "mars_figure"]
