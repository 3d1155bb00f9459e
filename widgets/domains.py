"""Domain table: every choice instance with its remaining values, the values
the last decision pruned struck through, and the constraint that pruned them."""

from __future__ import annotations

import html


def domain_table_html(cand, include_fixed: bool = True) -> str:
    pruned = {}
    for p in cand.pruned():
        pruned.setdefault((p.choice, p.objects), []).append(p)
    rows = []
    for ch in cand.choices(include_fixed=include_fixed):
        cut = pruned.get((ch.name, ch.objects), [])
        removed = [v for p in cut for v in p.removed]
        vals = " ".join(f"<b>{html.escape(v)}</b>" if len(ch.values) == 1 else html.escape(v)
                        for v in ch.values)
        if removed:
            vals += " " + " ".join(f"<s style='color:#b00'>{html.escape(v)}</s>" for v in removed)
        why = "<br>".join(html.escape(p.by) for p in cut)
        rows.append(f"<tr><td>{html.escape(ch.name)}</td><td>{html.escape(', '.join(ch.objects))}"
                    f"</td><td>{vals}</td><td style='font-size:85%'>{why}</td></tr>")
    return ("<table><thead><tr><th>choice</th><th>objects</th><th>domain</th>"
            "<th>pruned by (last decision)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def show_domains(cand, include_fixed: bool = True):
    """An ipywidgets HTML view of `domain_table_html`."""
    import ipywidgets

    return ipywidgets.HTML(domain_table_html(cand, include_fixed))


ORDER_VALUES = ("BEFORE", "AFTER", "IN", "OUT", "MERGED")
KINDS = ("LOOP", "BLOCK", "THREAD", "UNROLL", "VECTOR")
_ABBREV = {"BEFORE": "B", "AFTER": "A", "IN": "I", "OUT": "O", "MERGED": "M"}


def order_grid(cand) -> dict:
    """The `order` choice as a statements × statements matrix (instructions
    and dimensions): z is the index of the value in ORDER_VALUES where it is
    fixed, -1 where several remain, None on the diagonal and between
    unrelated objects; text lists the remaining values (B A I O M). The
    matrix is filled both ways — order(b, a) is the mirror of order(a, b)."""
    mirror = {"BEFORE": "AFTER", "AFTER": "BEFORE", "IN": "OUT", "OUT": "IN",
              "MERGED": "MERGED"}
    cells = {}
    names: list = []
    for ch in cand.choices(include_fixed=True):
        if ch.name != "order":
            continue
        a, b = ch.objects
        for n in (a, b):
            if n not in names:
                names.append(n)
        cells[(a, b)] = ch.values
        cells[(b, a)] = tuple(mirror[v] for v in ch.values)
    # instructions first, then dimensions in their numbering
    names.sort(key=lambda n: (n[0] == "d" and n[1:].isdigit(),
                              int(n[1:]) if n[0] == "d" and n[1:].isdigit() else 0, n))
    z, text = [], []
    for r in names:
        zr, tr = [], []
        for c in names:
            vals = cells.get((r, c))
            if vals is None:
                zr.append(None)
                tr.append("")
            else:
                zr.append(ORDER_VALUES.index(vals[0]) if len(vals) == 1 else -1)
                tr.append("".join(_ABBREV[v] for v in ORDER_VALUES if v in vals))
        z.append(zr)
        text.append(tr)
    return {"names": names, "z": z, "text": text}


def kinds_grid(cand) -> dict:
    """dims × kinds: 2 where the kind is decided, 1 where still possible,
    0 where pruned."""
    dims, z = [], []
    for ch in cand.choices(include_fixed=True):
        if ch.name != "dim_kind":
            continue
        dims.append(ch.objects[0])
        z.append([(2 if len(ch.values) == 1 else 1) if k in ch.values else 0 for k in KINDS])
    return {"dims": dims, "kinds": list(KINDS), "z": z}


def grid_figures():
    """Two empty plotly FigureWidgets for `update_grids` (built once; a click
    only replaces their data, which is cheaper than new figures)."""
    import plotly.graph_objects as go
    colors = ["#bbbbbb", "#4c78a8", "#f58518", "#54a24b", "#e45756", "#b279a2"]
    # -1 (open) grey, then one colour per fixed value
    scale = [[edge / 6, c] for k, c in enumerate(colors) for edge in (k, k + 1)]
    order = go.FigureWidget(layout={"height": 420, "title": "order (row vs column)",
                                    "margin": {"l": 60, "r": 10, "t": 40, "b": 60},
                                    "yaxis": {"autorange": "reversed"}})
    order.add_heatmap(z=[[None]], zmin=-1.5, zmax=4.5, colorscale=scale, showscale=False,
                      texttemplate="%{text}", hovertemplate="%{y} vs %{x}: %{text}<extra></extra>")
    kinds = go.FigureWidget(layout={"height": 420, "title": "dimension kinds",
                                    "margin": {"l": 60, "r": 10, "t": 40, "b": 40},
                                    "yaxis": {"autorange": "reversed"}})
    kinds.add_heatmap(z=[[0]], zmin=0, zmax=2, showscale=False,
                      colorscale=[[0, "#ffffff"], [0.5, "#9ecae1"], [1, "#08519c"]],
                      hovertemplate="%{y}: %{x}<extra></extra>")
    return order, kinds


def update_grids(order_fig, kinds_fig, cand) -> None:
    og, kg = order_grid(cand), kinds_grid(cand)
    with order_fig.batch_update():
        order_fig.data[0].update(z=og["z"] or [[None]], text=og["text"] or [[""]],
                                 x=og["names"], y=og["names"])
    with kinds_fig.batch_update():
        kinds_fig.data[0].update(z=kg["z"] or [[0]], x=kg["kinds"], y=kg["dims"])
