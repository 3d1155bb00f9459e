"""Domain table: every choice instance with its remaining values, the values
the last decision pruned struck through, and the constraint that pruned them."""

from __future__ import annotations

import functools
import html

import numpy as np

from workbench.names import choice_label, object_label

from .figures import fits_its_tab


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
    th = "<th style='text-align:left'>"  # JupyterLab centres headers over left cells
    return (f"<table><thead><tr>{th}choice</th>{th}objects</th>{th}domain</th>"
            f"{th}pruned by (last decision)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def show_domains(cand, include_fixed: bool = True):
    """An ipywidgets HTML view of `domain_table_html`."""
    import ipywidgets

    return ipywidgets.HTML(domain_table_html(cand, include_fixed))


def _enum(cand, choice: str):
    """The space's declaration of an enum choice (values, mirror)."""
    return cand.problem.space.choices[choice]


def order_grid(cand) -> dict:
    """The `order` choice as a statements × statements matrix (instructions
    and dimensions): z is the index of the value in `values` (the choice's
    values, as the space declares them) where it is fixed, -1 where several
    remain, None on the diagonal and between unrelated objects; text lists
    the remaining values by their initials. The matrix is filled both ways:
    order(b, a) is order(a, b) through the mirror the space declares
    (`antisymmetric:`)."""
    info = _enum(cand, "order")
    values = info.values
    inverse = info.inverse or tuple(range(len(values)))
    mirror = {v: values[inverse[k]] for k, v in enumerate(values)}
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
                zr.append(values.index(vals[0]) if len(vals) == 1 else -1)
                tr.append("".join(v[0] for v in values if v in vals))
        z.append(zr)
        text.append(tr)
    return {"names": names, "labels": [object_label(cand, n) for n in names], "z": z,
            "text": text, "values": list(values)}


def kinds_grid(cand) -> dict:
    """dims × kinds: 2 where the kind is decided, 1 where still possible,
    0 where pruned."""
    kinds = _enum(cand, "dim_kind").values
    dims, z = [], []
    for ch in cand.choices(include_fixed=True):
        if ch.name != "dim_kind":
            continue
        dims.append(ch.objects[0])
        z.append([(2 if len(ch.values) == 1 else 1) if k in ch.values else 0 for k in kinds])
    return {"dims": dims, "labels": [object_label(cand, d) for d in dims],
            "kinds": list(kinds), "z": z}


def order_legend(cand) -> str:
    """'B before, A after, …': the initials the order grid writes."""
    return ", ".join(f"{v[0]} {v.lower()}" for v in _enum(cand, "order").values)


_PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#b279a2", "#9d755d", "#eeca3b"]


def _empty(fig, why: str, axis: str = "") -> None:
    """A grid with nothing to draw says why (empty axes say nothing); `axis`:
    the subplot's axis suffix ("" or "2")."""
    fig.add_annotation(text=why, xref=f"x{axis} domain", yref=f"y{axis} domain", x=0.5, y=0.5,
                       showarrow=False, font={"size": 14, "color": "#888"})


def grid_figure(n_order: int = 5, cand=None, widget: bool = True):
    """The order and kinds grids as one figure, two heatmaps side by side
    (a FigureWidget when `widget`): each FigureWidget brings its own copy of
    plotly.js to the page (a 5 MB module; two figures: 8.2 s to the first
    drawing on matmul 1024, one: 7.2 s). Its data is set at construction (one
    message to the page, drawn while the tab is on show — a figure built in a
    hidden tab and updated later showed empty axes); `n_order`: how many
    values the `order` choice has; `cand` None: placeholders for
    `update_grids`. Trace 0 is the order grid, trace 1 the kinds."""
    # pandas first, here too: plotly reads `pandas.Series` from sys.modules, and
    # while the warm-up thread imports pandas that module is half made; an
    # import statement waits for it to finish
    import pandas  # noqa: F401
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    colors = ["#bbbbbb", *(_PALETTE[k % len(_PALETTE)] for k in range(n_order))]
    # -1 (open) grey, then one colour per fixed value
    n = len(colors)
    scale = [[edge / n, c] for k, c in enumerate(colors) for edge in (k, k + 1)]
    og = order_grid(cand) if cand is not None else {"z": [], "text": [], "names": [],
                                                    "labels": []}
    kg = kinds_grid(cand) if cand is not None else {"z": [], "kinds": [], "dims": [],
                                                    "labels": []}
    side = max(len(og["names"]), len(kg["dims"]), 1)
    height = min(700, max(300, 90 + 28 * side))
    fig = make_subplots(rows=1, cols=2, column_widths=[0.7, 0.3], horizontal_spacing=0.14,
                        subplot_titles=("order (row vs column)", "dimension kinds"),
                        figure=go.Figure(layout={"height": height,
                                                 "margin": {"l": 60, "r": 10, "t": 40,
                                                            "b": 60}}))
    fig.add_heatmap(z=np.array(og["z"] or [[None]], dtype=float), text=og["text"] or [[""]],
                    x=og["labels"] or None, y=og["labels"] or None,
                    zmin=-1.5, zmax=n_order - 0.5, colorscale=scale, showscale=False,
                    xgap=1, ygap=1, texttemplate=_texttemplate(len(og["names"])),
                    hovertemplate="%{y} vs %{x}: %{text}<extra></extra>", row=1, col=1)
    fig.add_heatmap(z=np.array(kg["z"] or [[0]], dtype=float), x=kg["kinds"] or None,
                    y=kg["labels"] or None,
                    zmin=0, zmax=2, showscale=False, xgap=1, ygap=1,
                    colorscale=[[0, "#ffffff"], [0.5, "#9ecae1"], [1, "#08519c"]],
                    hovertemplate="%{y}: %{x}<extra></extra>", row=1, col=2)
    fig.update_yaxes(autorange="reversed")
    if cand is not None and not og["names"]:
        _empty(fig, "no order choice: the kernel has one statement")
    if cand is not None and not kg["dims"]:
        _empty(fig, "no dimension", "2")
    return go.FigureWidget(fig) if widget else fig


# Above this many objects the order grid's remaining values are shown on
# hover only: a 29 × 29 grid (matmul) has 841 text labels for the page to lay
# out at every restyle, too small to read at that size anyway.
TEXT_CELLS_UP_TO = 16


def _texttemplate(n: int) -> str:
    return "%{text}" if n <= TEXT_CELLS_UP_TO else ""


def grid_data(cand) -> dict:
    """The trace data of the order and kinds figures, by figure. The cells
    go as float arrays (NaN where the order grid has no cell): plotly checks
    a nested list element by element and sends it as text, an array in one
    piece as binary."""
    og, kg = order_grid(cand), kinds_grid(cand)
    return {"order": {"z": np.array(og["z"] or [[None]], dtype=float),
                      "text": og["text"] or [[""]],
                      "x": og["labels"] or None, "y": og["labels"] or None,
                      "texttemplate": _texttemplate(len(og["names"]))},
            "kinds": {"z": np.array(kg["z"] or [[0]], dtype=float), "x": kg["kinds"] or None,
                      "y": kg["labels"] or None}}


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a == b


def update_grids(fig, cand, sent: dict | None = None) -> dict:
    """Replace the data of a figure from `grid_figure` (in one batch);
    `sent`: what the last call returned — only what differs from it goes to
    the page (a heatmap restyled with unchanged data is redrawn all the
    same: ~100 ms of the page's time per grid on a 2-core machine).
    Returns what the figure now shows."""
    now = grid_data(cand)
    sent = sent or {}
    changes = []
    for k, name in enumerate(("order", "kinds")):
        before = sent.get(name, {})
        changed = {f: v for f, v in now[name].items() if not _same(before.get(f), v)}
        if changed:
            changes.append((k, changed))
    if changes:
        with fig.batch_update():
            for k, changed in changes:
                fig.data[k].update(**changed)
    return now


@functools.cache  # once per process
def _warm_plotly() -> None:
    """Build a throwaway grid figure in a background thread, once per
    process: plotly imports FigureWidget's renderers and the figure's
    validators on first use, 2.7 s of the kernel's time that the first
    showing of the Domains tab paid (matmul 1024); the explorer's kernel is
    idle while a person reads the root, its look-ahead runs in a worker
    process."""
    import threading

    def warm():
        # pandas first: plotly reads `pandas.Series` from sys.modules, and a
        # pandas the kernel's thread is still importing has none yet (the
        # warm-up died on that race); importing it waits for that import
        import pandas  # noqa: F401
        import plotly.graph_objects as go
        go.FigureWidget  # noqa: B018 -- the import is the point: its renderers, 2.5 s
        grid_figure(widget=False)  # the validators of a subplot grid of heatmaps
    threading.Thread(target=warm, daemon=True, name="plotly-warm-up").start()


class DomainsPanel:
    """The Domains tab: per generic choice how many instances are open and
    how many values are left, what the last decision pruned, and the order
    and kind grids (drawn only while the tab is on show)."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex  # the explorer: its session's current candidate is shown
        self.html = w.HTML()
        self.status = w.HTML()
        self.figure = None  # the grids (grid_figure), built the first time the tab shows
        self._drawn_for = None  # the kernel the figures were built for
        self._sent: dict = {}  # what the figures show (update_grids)
        # the grids lie over this note (explorer CSS): it shows until plotly
        # has drawn them, which the first time takes a second or more
        self.grids_note = w.HTML("<span class='wb-spin'></span> drawing the order and kind "
                                 "grids …")
        self.grids_note.add_class("wb-grids-note")
        self.grids = w.Box()
        self.grids.add_class("wb-grids")
        _warm_plotly()
        self.widget = w.VBox([self.html, self.status, self.grids])

    def refresh(self) -> None:
        cand = self._ex.session.cand
        per: dict = {}
        ordered: set = set()  # the order grid's objects
        for ch in cand.choices(include_fixed=True):
            if ch.name == "order":
                ordered.update(ch.objects)
            n_open, n_all, vals = per.get(ch.name, (0, 0, 0))
            per[ch.name] = (n_open + (len(ch.values) > 1), n_all + 1, vals + len(ch.values))
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{o}</td><td>{a}</td><td>{v}</td></tr>"
                       for k, (o, a, v) in sorted(per.items()))
        pruned = "".join(
            f"<li title='{html.escape(str(p))}'>"
            f"{html.escape(choice_label(cand, p.choice, p.objects))}: removed "
            f"{html.escape(', '.join(p.removed))} → "
            f"{html.escape(', '.join(p.remaining))}</li>" for p in cand.pruned(limit=40))
        n_order = len(ordered)
        hover = (f" (their remaining values in each cell up to {TEXT_CELLS_UP_TO} objects; "
                 f"{n_order} here: hover a cell)" if n_order > TEXT_CELLS_UP_TO else "")
        what = "last decision pruned" if cand.trail else "propagation pruned at the root"
        self.html.value = (
            "<table><tr><th>choice</th><th>open</th><th>instances</th><th>values left</th></tr>"
            f"{rows}</table><p><b>{what}</b></p><ul>{pruned or '<li>—</li>'}</ul>"
            f"<p style='font-size:85%'>order grid (row against column): "
            f"{html.escape(order_legend(cand))}; grey cells are still open"
            f"{hover}. Kinds: dark decided, light possible, white pruned.</p>")

    def show(self):
        """Draw the grids of the current candidate: a new figure, its data
        given at construction, the first time (and after a kernel change);
        then the same figure's data replaced in one batch — a new
        FigureWidget per click costs the page seconds. The explorer calls
        `show` only while the tab is on show. Returns the figure."""
        cand = self._ex.session.cand
        key = id(cand.problem.root_problem)
        if self.figure is None or self._drawn_for != key:
            self.status.value = "<i>computing the order and kind grids …</i>"
            self.figure = grid_figure(len(_enum(cand, "order").values), cand)
            fits_its_tab(self.figure)
            self._drawn_for = key
            self.grids.children = [self.grids_note, self.figure]
            self.status.value = ""
            self._sent = grid_data(cand)  # what the construction sent
        else:
            self._sent = update_grids(self.figure, cand, self._sent)
        return self.figure
