"""Figures as the page draws them cheapest.

A plotly `FigureWidget` is an anywidget that sends its own copy of
plotly.js (a 5 MB module) to the page with every figure: about a second of
the page's time each on a 2-core machine, whatever the figure holds. A
figure that Python never updates in place goes out as an Output widget
holding the plotly mime bundle instead, which the jupyterlab-plotly
renderer draws (JupyterLab and Voilà load it once a page). Figures updated
in place (the Domains grids, the Search progress) stay FigureWidgets."""

from __future__ import annotations

import json
import math

from workbench.model.justification import fmt_si


def log_ticks(values) -> dict:
    """Tick values and full labels for a log axis over `values` (positive
    ones count): every digit within half a decade, 1, 2, 5 a decade up to
    2.5 decades, then every decade, then every other. Plotly's own labels
    its minor ticks with one digit ("5", "2" between "1k" and "10k", read
    as 5 µs), and its "complete" labels write every digit until they
    overlap ("0.91", "90100")."""
    vs = [float(v) for v in values if v is not None and math.isfinite(v) and v > 0]
    if not vs:
        return {}
    lo, hi = min(vs), max(vs)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    span = math.log10(hi / lo)
    mantissas = ((1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9) if span < 0.5 else
                 (1, 2, 5) if span <= 2.5 else (1,))
    step = 1 if span <= 7 else 2
    ticks = [m * 10.0 ** e for e in range(first, last + 1, step) for m in mantissas]
    ticks = [t for t in ticks if lo / 1.5 <= t <= hi * 1.5] or [10.0 ** round(math.log10(lo))]
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [fmt_si(t, sep="") for t in ticks]}


def fits_its_tab(figure, after_s: float = 1.0) -> None:
    """A FigureWidget follows its tab's width: responsive (plotly resizes it
    on a window resize; choices.js sends one when a tab is shown or narrowed)
    and, once the page has drawn it, laid out again at the width it measures
    then — a FigureWidget is drawn before it is in the page, at plotly's
    700 px, which hung 142 px out of a 1,280 px page's tab. (Figures drawn
    through `figure_output` follow their tab through JupyterLab's renderer.)"""
    import threading
    figure._config = {**figure._config, "responsive": True, "displaylogo": False}

    def measure():
        if figure.layout.autosize is None:
            figure.layout.autosize = True
    timer = threading.Timer(after_s, measure)
    timer.daemon = True
    timer.start()


def figure_output(fig):
    """An Output widget showing the plotly figure `fig` (kept as its
    `figure`), drawn by the page's plotly renderer."""
    import ipywidgets as w
    import plotly.io as pio
    out = w.Output()
    out.figure = fig
    spec = json.loads(pio.to_json(fig, validate=False))
    out.outputs = ({"output_type": "display_data", "metadata": {},
                    "data": {"application/vnd.plotly.v1+json": {
                        **spec, "config": {"displaylogo": False}},
                        "text/plain": f"<figure: {fig.layout.title.text or ''}>"}},)
    return out


__all__ = ["figure_output", "fits_its_tab", "log_ticks"]
