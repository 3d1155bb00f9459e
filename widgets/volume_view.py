"""Sparsity regions of a volume program's output as a plotly heatmap over a
2-D slice, with the tile grid of chosen tile sizes overlaid and the tiles
that touch a constant outlined. Views only: the data come from
`workbench.volume`."""

from __future__ import annotations

LABELS = ["dense", "edge", "corner", "static", "constant"]
COLORS = ["#2ca02c", "#ff7f0e", "#d62728", "#7f7f7f", "#9467bd"]


def region_heatmap(reg, fixed: dict, dims=(-2, -1), tile_sizes: dict | None = None,
                   title: str | None = None):
    import plotly.graph_objects as go

    from workbench.volume.regions import slice_grid
    grid = slice_grid(reg, fixed, dims)
    n = len(fixed) + 2
    a, b = (d % n for d in dims)
    # one flat band per region code
    scale = [x for k, c in enumerate(COLORS)
             for x in ([k / len(COLORS), c], [(k + 1) / len(COLORS), c])]
    counts = reg.counts()
    fig = go.Figure(go.Heatmap(
        z=grid, zmin=-0.5, zmax=len(COLORS) - 0.5, colorscale=scale,
        colorbar={"tickvals": list(range(len(LABELS))), "ticktext": LABELS},
        hovertemplate=f"d{a}=%{{y}} d{b}=%{{x}}: %{{z}}<extra></extra>"))
    fig.update_layout(
        title=title or (f"{reg.output}: dense {counts['dense']:,}, edges "
                        f"{counts['sparse_edges']:,}, corners {counts['sparse_corners']:,}, "
                        f"static {counts['static']:,}"),
        xaxis_title=f"dimension {b}", yaxis_title=f"dimension {a}", height=520,
        yaxis={"autorange": "reversed", "scaleanchor": "x"})
    if tile_sizes:
        ta, tb = tile_sizes.get(a), tile_sizes.get(b)
        for k in range(0, grid.shape[0] + 1, ta or grid.shape[0]):
            fig.add_shape(type="line", x0=-0.5, x1=grid.shape[1] - 0.5, y0=k - 0.5,
                          y1=k - 0.5, line={"width": 0.5, "color": "black"})
        for k in range(0, grid.shape[1] + 1, tb or grid.shape[1]):
            fig.add_shape(type="line", y0=-0.5, y1=grid.shape[0] - 0.5, x0=k - 0.5,
                          x1=k - 0.5, line={"width": 0.5, "color": "black"})
    return fig


__all__ = ["region_heatmap"]
