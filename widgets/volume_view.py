"""Sparsity regions of a volume program's output as a plotly heatmap over a
2-D slice, with the tile grid of chosen tile sizes overlaid. Views only: the
data come from `workbench.volume`.

Cost is bounded whatever the sizes: a slice larger than `MAX_CELLS` per
axis is drawn in blocks (each block shows its most special region: constant
over static over corner over edge over dense, so a thin edge never
disappears), and the tile grid is one scatter trace of None-separated
segments (a plotly shape per line made a FigureWidget of 130 lines take 9 s,
and 2,050 lines of 1-element tiles lock the kernel for minutes), drawn only
when it has at most `MAX_GRID_LINES` lines per axis. Regions one element
wide (a padded convolution's edges, its single-element corners) are a pixel
on a 256-wide slice: every region but dense is also outlined in its colour
(at most `MAX_OUTLINED` boxes each, a speck also marked), and a second panel
shows a `ZOOM` × `ZOOM` corner element by element."""

from __future__ import annotations

import numpy as np

LABELS = ["dense", "edge", "corner", "static", "constant"]  # region codes 0..4 (REGION_CODES)
LEGEND = ["dense", "edge", "corner", "static", "other constant-dependent"]
MEANING = ["only real data", "padding along one dimension", "padding along two or more",
           "only constants", "a scalar constant, not padding"]  # what each region reads
COLORS = ["#2ca02c", "#ff7f0e", "#d62728", "#7f7f7f", "#9467bd"]
ZOOM = 24  # elements per side of the zoomed corner
MAX_OUTLINED = 400  # boxes outlined per region; more are drawn by the heatmap alone
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
                   max_lines: int = MAX_GRID_LINES, dim_names: dict | None = None,
                   zoom: int = ZOOM):
    """A plotly Figure of the region codes of a 2-D slice (`slice_grid`):
    on the left the whole slice as a heatmap (its frame a shape, the tile
    grid of `tile_sizes` ({dimension: size}) one trace, each region other
    than dense outlined in its colour so that one element wide edges and
    single corners show at any scale); on the right, where the slice is
    larger than 2 × `zoom` elements and holds more than one region, its
    `zoom` × `zoom` corner around the rarest region, element by element.
    `dim_names` ({dimension: name}) names the axes ("output row")."""
    import plotly.graph_objects as go

    from workbench.volume.regions import slice_grid
    full = slice_grid(reg, fixed, dims)
    n = len(fixed) + 2
    a, b = (d % n for d in dims)
    grid, f = downsample(full, max_cells)
    rows, cols = full.shape
    here = np.bincount(full[full >= 0].ravel(), minlength=len(LABELS))
    # one flat band per region code
    scale = [x for k, c in enumerate(COLORS)
             for x in ([k / len(COLORS), c], [(k + 1) / len(COLORS), c])]
    names = dim_names or {}

    def axis_title(d, what):
        return (f"{names[d]} ({reg.output} dim {d})" if d in names
                else f"{reg.output} dim {d} ({what})")
    window = _zoom_window(full, here, zoom) if zoom else None
    if window:
        from plotly.subplots import make_subplots
        r0, r1, c0, c1 = window
        fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.12,
                            subplot_titles=[
                                f"whole slice, {rows}×{cols}" + (f" in {f}×{f} blocks"
                                                                  if f > 1 else "")
                                + " (dotted: zoomed)",
                                f"zoom: rows {r0}–{r1 - 1}, columns {c0}–{c1 - 1}"])
        for ann in fig.layout.annotations:
            ann.font.size = 13
    else:
        fig = go.Figure()
    codes = " · ".join(f"{k} {lab}" for k, lab in enumerate(LABELS))
    hover = (f"row %{{y}}, column %{{x}}: region %{{z}}<br>({codes})" if f == 1 else
             f"block of {f}×{f} at row ≈%{{y}}, column ≈%{{x}}: region %{{z}} (the most "
             f"special in it)<br>({codes})")
    fig.add_trace(go.Heatmap(
        z=grid.astype(np.int8), zmin=-0.5, zmax=len(COLORS) - 0.5, colorscale=scale,
        x0=(f - 1) / 2, dx=f, y0=(f - 1) / 2, dy=f, showscale=False,
        hovertemplate=hover + "<extra></extra>", name="regions"))
    notes = [] if f == 1 else [f"drawn in blocks of {f}×{f} (each shows its most special "
                               "region)"]
    ta, tb = (tile_sizes or {}).get(a), (tile_sizes or {}).get(b)
    tiles_name = "tiles" + (f" {ta}×{tb}" if ta and tb else "")
    grid_line = {"width": 0.8, "color": "black"}
    if tile_sizes:
        xs, ys, too_fine = grid_lines((rows, cols), ta, tb, max_lines)
        notes += too_fine
        if xs:
            fig.add_scatter(x=xs, y=ys, mode="lines", name=tiles_name, hoverinfo="skip",
                            line=grid_line, showlegend=True, legendrank=900)
    # regions outlined: a one element wide edge is a pixel on a 256-wide slice
    outline = max(rows, cols) > 2 * zoom if zoom else max(rows, cols) > 64
    if outline:
        _outline_regions(fig, full, here)
    fig.add_shape(type="rect", x0=-0.5, x1=cols - 0.5, y0=-0.5, y1=rows - 0.5,
                  line={"width": 1, "color": "black"})  # the slice's extent
    # outlines straddle the frame: a margin keeps their outer half in the plot
    pad = max(rows, cols) / 60 if outline else 0
    axes = {"xaxis": {"range": [-0.5 - pad, cols - 0.5 + pad], "constrain": "domain",
                      "title": axis_title(b, "columns"), "showgrid": False, "zeroline": False},
            "yaxis": {"range": [rows - 0.5 + pad, -0.5 - pad], "scaleanchor": "x",
                      "constrain": "domain",
                      "title": axis_title(a, "rows"), "showgrid": False, "zeroline": False}}
    if window:
        fig.add_shape(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r0 - 0.5, y1=r1 - 0.5,
                      line={"width": 1.5, "color": "black", "dash": "dot"}, row=1, col=1)
        part = full[r0:r1, c0:c1]
        text = np.array(LEGEND + ["none"])[part].tolist()
        fig.add_trace(go.Heatmap(
            z=part.astype(np.int8), zmin=-0.5, zmax=len(COLORS) - 0.5, colorscale=scale,
            x0=c0, dx=1, y0=r0, dy=1, xgap=1, ygap=1, showscale=False, text=text,
            hovertemplate="row %{y}, column %{x}: %{text}<extra></extra>", name="zoom"),
            row=1, col=2)
        xs, ys = _window_lines(r0, r1, c0, c1, ta, tb)
        if xs:
            fig.add_scatter(x=xs, y=ys, mode="lines", line={**grid_line, "width": 1.5},
                            hoverinfo="skip", showlegend=False, name=tiles_name,
                            row=1, col=2)
        axes.update({"xaxis2": {"range": [c0 - 0.5, c1 - 0.5], "constrain": "domain",
                                "showgrid": False, "zeroline": False,
                                "title": axis_title(b, "columns")},
                     "yaxis2": {"range": [r1 - 0.5, r0 - 0.5], "scaleanchor": "x2",
                                "constrain": "domain", "showgrid": False, "zeroline": False}})
    # the legend: the regions of this slice, with what each means and its count here
    for code in range(len(LABELS)):
        if here[code]:
            fig.add_scatter(x=[None], y=[None], mode="markers", legendgroup=LABELS[code],
                            marker={"symbol": "square", "size": 12, "color": COLORS[code]},
                            name=f"{LEGEND[code]} ({here[code]:,}): {MEANING[code]}",
                            legendrank=code)
    counts = reg.counts()
    other = (counts["constant_dependent"] - counts["static"] - counts["sparse_edges"]
             - counts["sparse_corners"])
    where = ", ".join(":" if d in (a, b) else str(fixed[d]) for d in range(n))
    head = title or (f"{reg.output}[{where}]: one 2-D slice<br><sup>whole {reg.output}: "
                     f"dense {counts['dense']:,} · edges {counts['sparse_edges']:,} · "
                     f"corners {counts['sparse_corners']:,} · static {counts['static']:,}"
                     + (f" · other constant-dependent {other:,}" if other else "")
                     + "</sup>")
    if notes:
        head += "<br><sup>" + "; ".join(notes) + "</sup>"
    fig.update_layout(
        title={"text": head, "y": 0.97, "yanchor": "top"}, height=560,
        margin={"l": 60, "r": 20, "t": 90, "b": 20}, plot_bgcolor="white",
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                "x": 0, "itemclick": False, "itemdoubleclick": False,
                "title": {"text": "region (elements here): reads"}},
        **axes)
    fig.update_layout(margin_b=20 + 24 * (1 + int((here > 0).sum() > 2)) + 40)
    return fig


def _outline_regions(fig, full, here) -> None:
    """Every region but dense outlined in its colour (one trace per region,
    None-separated boxes), a speck (a box under 2 % of the slice's side)
    also marked; a region of more than `MAX_OUTLINED` boxes is left to the
    heatmap: large enough to see."""
    rows, cols = full.shape
    for code in range(1, len(LABELS)):
        if not here[code]:
            continue
        boxes = _boxes(full == code, MAX_OUTLINED)
        if boxes is None:
            continue
        xs, ys, dots_x, dots_y = [], [], [], []
        for br0, br1, bc0, bc1 in boxes:
            xs += [bc0 - 0.5, bc1 + 0.5, bc1 + 0.5, bc0 - 0.5, bc0 - 0.5, None]
            ys += [br0 - 0.5, br0 - 0.5, br1 + 0.5, br1 + 0.5, br0 - 0.5, None]
            if max(br1 - br0, bc1 - bc0) + 1 <= max(rows, cols) / 50:
                dots_x.append((bc0 + bc1) / 2)
                dots_y.append((br0 + br1) / 2)
        fig.add_scatter(x=xs, y=ys, mode="lines", line={"width": 4, "color": COLORS[code]},
                        hoverinfo="skip", showlegend=False, legendgroup=LABELS[code],
                        name=f"{LABELS[code]} outline")
        if dots_x:
            fig.add_scatter(x=dots_x, y=dots_y, mode="markers", cliponaxis=False,
                            marker={"symbol": "square", "size": 10, "color": COLORS[code],
                                    "line": {"width": 1, "color": "black"}},
                            hovertemplate=f"{LABELS[code]} at row %{{y}}, column %{{x}}"
                                          "<extra></extra>",
                            showlegend=False, legendgroup=LABELS[code], name=LABELS[code])


def _zoom_window(full, here, zoom: int):
    """(r0, r1, c0, c1): a `zoom` × `zoom` window around the first element
    of the slice's rarest region, or None where the slice is small enough
    to see every element or holds a single region."""
    rows, cols = full.shape
    if max(rows, cols) <= 2 * zoom or (here > 0).sum() < 2:
        return None
    rare = min((c for c in range(len(here)) if here[c]), key=lambda c: here[c])
    r, c = (int(v) for v in np.argwhere(full == rare)[0])

    def span(k, size):
        lo = min(max(0, k - zoom // 2), max(0, size - zoom))
        return lo, min(size, lo + zoom)
    return (*span(r, rows), *span(c, cols))


def _boxes(mask, cap: int):
    """Disjoint rectangles (r0, r1, c0, c1), inclusive, covering the True
    cells of `mask`: runs of a row stacked while the next row has the same
    run; None when there would be more than `cap` runs to stack."""
    m = np.asarray(mask, dtype=np.int8)
    d = np.diff(m, axis=1, prepend=0, append=0)
    if int((d == 1).sum()) > 50 * cap:  # runs to stack: bounded work
        return None
    out, open_ = [], {}
    for r in range(m.shape[0] + 1):
        runs = set()
        if r < m.shape[0] and m[r].any():
            starts, ends = np.flatnonzero(d[r] == 1), np.flatnonzero(d[r] == -1) - 1
            runs = set(zip(starts.tolist(), ends.tolist()))
        for run in list(open_):
            if run not in runs:
                out.append((open_.pop(run), r - 1, *run))
                if len(out) > cap:
                    return None
        for run in runs:
            open_.setdefault(run, r)
    return out


def _window_lines(lo_r, hi_r, lo_c, hi_c, ta, tb):
    """The tile grid's lines inside rows lo_r..hi_r - 1, columns lo_c..hi_c - 1."""
    xs: list = []
    ys: list = []
    for t, lo, hi, horizontal in ((ta, lo_r, hi_r, True), (tb, lo_c, hi_c, False)):
        if not t or t < 2:
            continue  # tiles of one element: the gaps between elements are their grid
        for k in range(-(-max(lo, 1) // t) * t, hi, t):
            if horizontal:
                xs += [lo_c - 0.5, hi_c - 0.5, None]
                ys += [k - 0.5, k - 0.5, None]
            else:
                xs += [k - 0.5, k - 0.5, None]
                ys += [lo_r - 0.5, hi_r - 0.5, None]
    return xs, ys


__all__ = ["MAX_CELLS", "MAX_GRID_LINES", "downsample", "grid_lines", "region_heatmap"]
