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

# log axes label their 2s and 5s in full: by default plotly writes a tick
# "2" or "5" between "1k" and "10k", read as 2 or 5 µs
LOG_LABELS = {"xaxis_minorloglabels": "complete", "yaxis_minorloglabels": "complete"}


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


__all__ = ["LOG_LABELS", "figure_output"]
