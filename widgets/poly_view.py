"""Figures of the polyhedral aids: the fusion conflict graph as a plotly
network (a row per statement, a node per dimension, edges for conflicts,
bent where a straight one would cross a node, a ring for a permute-preventing
self edge, node colour = the loop level the colouring gave it, a dashed line
per cut) and a tile's footprint on a 1-D or 2-D data space, an element a
square coloured and numbered by its MARS. Views only: the data come from `workbench.poly`."""

from __future__ import annotations

import islpy as isl

# loop levels, outermost first: dark enough for white letters (red, green, blue
# first: the notebooks' prose names them)
PALETTE = ["#c62828", "#2e7d32", "#1565c0", "#e65100", "#6a1b9a", "#5d4037"]
NODE_R = 0.35  # how near (in row heights) an edge may pass another node


def level_colour(k: int) -> str:
    """A distinct colour per index, however many: plotly's Dark24, then hues
    spread by the golden angle."""
    from plotly.colors import qualitative
    if k < len(qualitative.Dark24):
        return qualitative.Dark24[k]
    import colorsys
    r, g, b = colorsys.hls_to_rgb((k * 0.618034) % 1.0, 0.42, 0.75)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def _arc(p0, p1, others, aspect: float):
    """Points of an edge from p0 to p1: straight where no other node is
    near the segment, else a quadratic Bézier bent sideways just enough to
    miss them (distances measured with x stretched by `aspect`, the width
    of a column in row heights)."""
    import numpy as np
    a, b = np.array(p0, float), np.array(p1, float)
    t = np.linspace(0, 1, 41)[:, None]
    scale = np.array([aspect, 1.0])
    obs = np.array(others, float).reshape(-1, 2) * scale
    d = (b - a) * scale
    normal = np.array([-d[1], d[0]]) / (np.hypot(*d) or 1.0) / scale
    for bend in (0, 0.35, -0.35, 0.7, -0.7, 1.05, -1.05, 1.4, -1.4):
        ctrl = (a + b) / 2 + bend * normal
        pts = (1 - t) ** 2 * a + 2 * (1 - t) * t * ctrl + t ** 2 * b
        if not len(obs) or np.min(np.hypot(*((pts * scale)[:, None, :] - obs[None])
                                           .transpose(2, 0, 1))) > NODE_R:
            break
    return pts.tolist()


def fcg_figure(g, colouring=None, title: str = "fusion conflict graph"):
    """The fusion conflict graph: a row per statement, a node per dimension
    (its colour the loop level `colouring` gave it), a grey edge per pair
    that cannot be fused, bent around the nodes it would cross, a red ring
    for a permute-preventing self edge, a dashed line per cut."""
    import plotly.graph_objects as go
    stmts = list(g.dims)
    width = max((len(d) for d in g.dims.values()), default=1)
    pos = {(s, k): (k, -r) for r, s in enumerate(stmts) for k in range(len(g.dims[s]))}
    aspect = 2.0  # a column is two to four rows wide on the page: bend for the narrowest
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
            others = [p for v, p in pos.items() if v not in vs]
            pts = _arc(pos[vs[0]], pos[vs[1]], others, aspect)
            ex += [p[0] for p in pts] + [None]
            ey += [p[1] for p in pts] + [None]
            mx.append(pts[len(pts) // 2][0])
            my.append(pts[len(pts) // 2][1])
            why.append(f"{g.name(vs[0])} ✗ {g.name(vs[1])}: {reason}")
    fig.add_scatter(x=ex, y=ey, mode="lines", line={"color": "#777", "width": 1.5},
                    name="cannot fuse (hover its ✕ for why)", hoverinfo="skip")
    fig.add_scatter(x=mx, y=my, mode="markers", marker={"size": 7, "color": "#555",
                                                        "symbol": "x"},
                    text=why, hovertemplate="%{text}<extra></extra>", showlegend=False)
    selfs = [v for e in g.edges for v in e if len(e) == 1]
    if selfs:
        fig.add_scatter(x=[pos[v][0] for v in selfs], y=[pos[v][1] for v in selfs],
                        mode="markers", marker={"size": 38, "color": "rgba(0,0,0,0)",
                                                "line": {"color": "#b00", "width": 3}},
                        name="permute-preventing", text=[g.why(v, v) or g.edges[frozenset((v,))]
                                                         for v in selfs],
                        hovertemplate="%{text}<extra></extra>")
    # the nodes, a trace per loop level: the legend says what each colour is
    n_levels = len(colouring.levels) if colouring is not None else 0
    groups = [(lv, [v for v in pos if level.get(v) == lv]) for lv in range(n_levels)]
    groups.append((None, [v for v in pos if v not in level]))
    for lv, vs in groups:
        if not vs:
            continue
        if lv is None:
            name = "no level" if colouring is not None else "dimension"
        else:
            name = f"loop level {lv}" + (" (outermost)" if lv == 0 else
                                         " (innermost)" if lv == n_levels - 1 else "")
        colour = "#e0e0e0" if lv is None else PALETTE[lv % len(PALETTE)]
        fig.add_scatter(
            x=[pos[v][0] for v in vs], y=[pos[v][1] for v in vs], mode="markers+text",
            text=[g.dims[v[0]][v[1]] for v in vs], textposition="middle center",
            textfont={"color": "black" if lv is None else "white", "size": 14,
                      "family": "Arial Black, Arial, sans-serif"},
            marker={"size": 30, "color": colour, "line": {"color": "white", "width": 1.5}},
            hovertext=[f"{g.name(v)}: level {lv}" if lv is not None else g.name(v)
                       for v in vs],
            hoverinfo="text", name=name)
    for lv, before, _after in (colouring.cuts if colouring is not None else ()):
        rows = sorted(stmts.index(s) for s in before)
        if rows == list(range(len(rows))) and 0 < len(rows) < len(stmts):
            y = -(len(rows) - 0.5)
            fig.add_shape(type="line", x0=-0.4, x1=width - 0.6, y0=y, y1=y,
                          line={"color": "#1565c0", "width": 1.5, "dash": "dash"})
            fig.add_annotation(x=width - 0.6, y=y, xanchor="right", yanchor="bottom",
                               text=f"cut at level {lv}: not fused across", showarrow=False,
                               font={"size": 11, "color": "#1565c0"}, bgcolor="white")
    fig.update_layout(title=title, height=140 + 75 * len(stmts), showlegend=True,
                      plot_bgcolor="white",
                      legend={"orientation": "h", "yref": "container", "y": 0,
                              "yanchor": "bottom", "x": 0},
                      xaxis={"visible": False, "range": [-0.5, width - 0.5]},
                      yaxis={"tickvals": [-r for r in range(len(stmts))], "ticktext": stmts,
                             "zeroline": False, "showgrid": False,
                             "range": [-len(stmts) + 0.5, 0.5], "title": "statement"},
                      margin={"l": 80, "r": 10, "t": 40, "b": 60})
    return fig


def mars_figure(m, title: str | None = None):
    """The footprint of `m.tile` on a 1-D or 2-D data space: an element a
    square, coloured and numbered by its MARS."""
    import plotly.graph_objects as go
    n = m.footprint.dim(isl.dim_type.set)
    if n not in (1, 2):
        raise ValueError(f"a {n}-D data space has no 2-D picture; slice it first")
    array = m.footprint.get_tuple_name() or "data"
    fig = go.Figure()
    h = 0.45  # half a square
    lo = [None, None]
    hi = [None, None]
    for k, (part, readers) in enumerate(m.parts):
        pts = _points(part, n)
        xs = [p[-1] for p in pts]
        ys = [p[0] for p in pts] if n == 2 else [0] * len(pts)
        for i, vals in enumerate((xs, ys)):
            if vals:
                lo[i] = min(vals + ([lo[i]] if lo[i] is not None else []))
                hi[i] = max(vals + ([hi[i]] if hi[i] is not None else []))
        sx, sy = [], []
        for x, y in zip(xs, ys):
            sx += [x - h, x + h, x + h, x - h, x - h, None]
            sy += [y - h, y - h, y + h, y + h, y - h, None]
        colour = level_colour(k)
        label = (f"MARS {k}: {len(pts)} element{'s' * (len(pts) != 1)}, read by "
                 f"{len(readers)} other tile{'s' * (len(readers) != 1)}")
        fig.add_scatter(x=sx, y=sy, mode="lines", fill="toself", fillcolor=colour,
                        line={"color": colour, "width": 0.5}, name=label, legendgroup=str(k),
                        hoverinfo="skip", showlegend=False)
        fig.add_scatter(x=[None], y=[None], mode="markers", name=label, legendgroup=str(k),
                        marker={"symbol": "square", "size": 12, "color": colour})
        fig.add_scatter(x=xs, y=ys, mode="text", text=[str(k)] * len(xs),
                        textfont={"color": "white", "size": 11}, legendgroup=str(k),
                        showlegend=False, hovertemplate=f"{label}<br>{array}"
                        + ("[%{y}, %{x}]" if n == 2 else "[%{x}]") + "<extra></extra>")
    xr = [lo[0] - 0.7, hi[0] + 0.7] if lo[0] is not None else None
    yr = [lo[1] - 0.7, hi[1] + 0.7] if lo[1] is not None else [-1, 1]
    fig.update_layout(
        title=title or f"footprint of tile {m.tile}: {m.footprint_size} elements in "
                       f"{len(m.parts)} MARS",
        height=max(420 if n == 2 else 220, 90 + 22 * len(m.parts)), plot_bgcolor="white",
        xaxis={"title": f"{array} index {n - 1}", "range": xr, "constrain": "domain",
               "dtick": 1 if xr and xr[1] - xr[0] <= 24 else None, "showgrid": False,
               "zeroline": False},
        yaxis=({"title": f"{array} index 0", "range": yr, "scaleanchor": "x",
                "constrain": "domain", "dtick": 1 if yr[1] - yr[0] <= 24 else None,
                "showgrid": False, "zeroline": False}
               if n == 2 else {"visible": False, "range": yr, "scaleanchor": "x",
                               "constrain": "domain"}),
        legend={"title": {"text": "MARS (its number in each square)"}, "tracegroupgap": 0},
        margin={"l": 50, "r": 10, "t": 40, "b": 40})
    return fig


def _points(s, n: int) -> list:
    out: list = []
    s.foreach_point(lambda p: out.append([p.get_coordinate_val(
        isl.dim_type.set, d).to_python() for d in range(n)]))
    return out


__all__ = ["PALETTE", "fcg_figure", "level_colour", "mars_figure"]
