"""Sparsity regions of a volume program's output as a plotly heatmap over a
2-D slice, with the tile grid of chosen tile sizes overlaid. Views only: the
data come from `workbench.volume`.

Cost is bounded whatever the sizes: a slice larger than `MAX_CELLS` per
axis is drawn in blocks (each block shows its most special region: constant
over static over corner over edge over dense, so a thin edge never
disappears), and the tile grid is one scatter trace of None-separated
segments (a plotly shape per line made a FigureWidget of 130 lines take 9 s,
and 2,050 lines of 1-element tiles lock the kernel for minutes), drawn only
when it has at most `MAX_GRID_LINES` lines per axis."""

from __future__ import annotations

import numpy as np

LABELS = ["dense", "edge", "corner", "static", "constant"]
COLORS = ["#2ca02c", "#ff7f0e", "#d62728", "#7f7f7f", "#9467bd"]
MAX_CELLS = 256  # heatmap cells per axis; larger slices are drawn in blocks
MAX_GRID_LINES = 64  # tile grid lines per axis; finer grids are said, not drawn


def downsample(grid, max_cells: int = MAX_CELLS):
    """(`grid` in blocks of f × f, f): each block holds the highest region
    code in it (the most special region wins); f = 1 when small enough."""
    grid = np.asarray(grid)
    f = max(1, -(-max(grid.shape) // max_cells))
    if f == 1:
        return grid, 1
    rows, cols = (-(-s // f) * f for s in grid.shape)
    padded = np.full((rows, cols), grid.min(), dtype=grid.dtype)
    padded[:grid.shape[0], :grid.shape[1]] = grid
    return padded.reshape(rows // f, f, cols // f, f).max(axis=(1, 3)), f


def grid_lines(shape, ta: int | None, tb: int | None,
               max_lines: int = MAX_GRID_LINES) -> tuple[list, list, list]:
    """(x, y, notes): the tile grid of a rows × cols slice as None-separated
    segments in element coordinates (cell k spans k - 0.5 .. k + 0.5), and a
    sentence per axis whose tiles are too fine to draw."""
    rows, cols = shape
    xs: list = []
    ys: list = []
    notes = []
    for axis, t, n in (("rows", ta, rows), ("columns", tb, cols)):
        if not t or t >= n:
            continue  # one tile spans the axis: the frame is its grid
        if n // t + 1 > max_lines:
            notes.append(f"{axis}: tiles of {t} — too fine to draw ({n // t:,} tiles)")
            continue
        for k in range(t, n, t):
            if axis == "rows":
                xs += [-0.5, cols - 0.5, None]
                ys += [k - 0.5, k - 0.5, None]
            else:
                xs += [k - 0.5, k - 0.5, None]
                ys += [-0.5, rows - 0.5, None]
    return xs, ys, notes


def region_heatmap(reg, fixed: dict, dims=(-2, -1), tile_sizes: dict | None = None,
                   title: str | None = None, max_cells: int = MAX_CELLS,
                   max_lines: int = MAX_GRID_LINES):
    """A plotly Figure: the region codes of the slice (`slice_grid`) as a
    heatmap, the frame of the slice as a shape and the tile grid of
    `tile_sizes` ({dimension: size}) as one trace."""
    import plotly.graph_objects as go

    from workbench.volume.regions import slice_grid
    full = slice_grid(reg, fixed, dims)
    n = len(fixed) + 2
    a, b = (d % n for d in dims)
    grid, f = downsample(full, max_cells)
    # one flat band per region code
    scale = [x for k, c in enumerate(COLORS)
             for x in ([k / len(COLORS), c], [(k + 1) / len(COLORS), c])]
    counts = reg.counts()
    rows, cols = full.shape
    hover = (f"d{a}=%{{y}} d{b}=%{{x}}: %{{z}}" if f == 1 else
             f"block of {f}×{f} at d{a}≈%{{y}} d{b}≈%{{x}}: %{{z}} (most special region)")
    fig = go.Figure(go.Heatmap(
        z=grid.astype(np.int8), zmin=-0.5, zmax=len(COLORS) - 0.5, colorscale=scale,
        x0=(f - 1) / 2, dx=f, y0=(f - 1) / 2, dy=f,
        colorbar={"tickvals": list(range(len(LABELS))), "ticktext": LABELS},
        hovertemplate=hover + "<extra></extra>", name="regions"))
    notes = [] if f == 1 else [f"drawn in blocks of {f}×{f} (each shows its most special "
                               "region)"]
    if tile_sizes:
        xs, ys, too_fine = grid_lines((rows, cols), tile_sizes.get(a), tile_sizes.get(b),
                                      max_lines)
        notes += too_fine
        if xs:
            fig.add_scatter(x=xs, y=ys, mode="lines", name="tiles", hoverinfo="skip",
                            line={"width": 0.7, "color": "black"}, showlegend=False)
    fig.add_shape(type="rect", x0=-0.5, x1=cols - 0.5, y0=-0.5, y1=rows - 0.5,
                  line={"width": 1, "color": "black"})  # the slice's extent
    head = title or (f"{reg.output}: dense {counts['dense']:,}, edges "
                     f"{counts['sparse_edges']:,}, corners {counts['sparse_corners']:,}, "
                     f"static {counts['static']:,}")
    if notes:
        head += "<br><sup>" + "; ".join(notes) + "</sup>"
    fig.update_layout(
        title=head, xaxis_title=f"dimension {b}", yaxis_title=f"dimension {a}", height=520,
        xaxis={"range": [-0.5, cols - 0.5]},
        yaxis={"autorange": "reversed", "scaleanchor": "x"})
    return fig


__all__ = ["MAX_CELLS", "MAX_GRID_LINES", "downsample", "grid_lines", "region_heatmap"]
