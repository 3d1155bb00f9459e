"""Measured timings against the bound: the scatter with the y = x line, the
CDF of measured / bound (thesis Fig. 5.1) and the best time against
evaluations, each with the reference library's time (cuBLAS / numpy) as a
line. Used by the explorer's Timings tab and the bound-accuracy notebook.
GPU campaigns' records (data/gpu/<device>/, `workbench.campaign.data`)
are drawn beside this machine's own when there are any, and their absence
is said in so many words."""

from __future__ import annotations

import html

import numpy as np


def _references(df) -> dict:
    """Median reference time (ns) per reference name, over every record
    that carries one (implementation runs and Reference-only records)."""
    if "reference_median_ns" not in df:
        return {}
    ref = df[df["reference_median_ns"].notna()]
    return {str(name): float(g["reference_median_ns"].median())
            for name, g in ref.groupby("reference")}


def timing_figures(df, widget: bool = True) -> list:
    """Three plotly figures (FigureWidgets when `widget`) from a records
    DataFrame; an empty list when nothing was measured."""
    import plotly.graph_objects as go
    make = go.FigureWidget if widget else go.Figure
    if not len(df) or "median_ns" not in df or "bound_ns" not in df:
        return []
    ok = df[(df["status"] == "ok") & df["bound_ns"].notna() & df["median_ns"].notna()]
    refs = _references(df)
    if not len(ok) and not refs:
        return []
    x, y = ok["bound_ns"].to_numpy() / 1e3, ok["median_ns"].to_numpy() / 1e3
    scatter = make(layout={"height": 330, "margin": {"l": 50, "r": 10, "t": 40, "b": 40},
                           "title": "bound against measured", "xaxis_title": "bound (µs)",
                           "yaxis_title": "measured (µs)"})
    scatter.add_scatter(x=x, y=y, mode="markers", name="implementations",
                        text=ok["digest"].astype(str).str[:10] if "digest" in ok else None)
    top = float(max(x.max(), y.max())) if len(ok) else 1.0
    scatter.add_scatter(x=[0, top], y=[0, top], mode="lines", name="y = x",
                        line={"dash": "dot"})
    ratio = np.sort(y / x) if len(ok) else np.array([])
    cdf = make(layout={"height": 260, "title": "CDF of measured / bound",
                       "xaxis_type": "log", "xaxis_title": "measured / bound",
                       "margin": {"l": 50, "r": 10, "t": 40, "b": 40}})
    cdf.add_scatter(x=ratio, y=np.arange(1, len(ratio) + 1) / max(len(ratio), 1),
                    mode="lines", line={"shape": "hv"}, name="implementations")
    times = np.where(df["status"].to_numpy() == "ok",
                     df["median_ns"].astype(float).fillna(np.inf).to_numpy(), np.inf)
    best = np.minimum.accumulate(times[df["status"].to_numpy() != "reference"]) / 1e3
    best_fig = make(layout={"height": 260, "title": "best against evaluations",
                            "xaxis_title": "evaluation", "yaxis_title": "best (µs)",
                            "margin": {"l": 50, "r": 10, "t": 40, "b": 40}})
    best_fig.add_scatter(y=np.where(np.isinf(best), None, best), mode="lines",
                         line={"shape": "hv"}, name="best so far")
    for name, ns in refs.items():
        for f in (scatter, best_fig):
            f.add_hline(y=ns / 1e3, line_dash="dash", annotation_text=name)
    return [scatter, cdf, best_fig]



def gpu_timing_figures(kernel=None, widget: bool = True) -> tuple[str, list]:
    """(a sentence on the GPU data, figures per campaign folder) for the
    records of `kernel` (its name and spec; None: every kernel) under
    data/gpu/; no figures and the sentence saying so when there is none."""
    from workbench.campaign.data import gpu_records, status_line
    line = status_line()
    df = gpu_records(kernel.name if kernel is not None else None,
                     kernel.spec() if kernel is not None else None)
    if not len(df):
        if "no GPU data" not in line and kernel is not None:
            line += f"; none of {kernel.name} at these sizes"
        return line, []
    figs = []
    for folder, part in df.groupby("gpu_dir"):
        for f in timing_figures(part.reset_index(drop=True), widget):
            f.layout.title.text = f"GPU {folder}: {f.layout.title.text}"
            figs.append(f)
    return line, figs


class TimingsPanel:
    """The explorer's Timings tab: `timing_figures` of the session's records,
    drawn when the tab is shown."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.widget = self.box = w.VBox()
        self.gpu_line, self.gpu_figures = "", []

    def refresh(self) -> None:
        pass

    def show(self) -> list:
        import ipywidgets as w
        figs = timing_figures(self._ex.session.records())
        own = figs or [w.HTML(
            "<i>no measurement of this kernel yet: fix a candidate and Run, or Search</i>")]
        kernel = self._ex.session.root.problem.root_problem.kernel
        self.gpu_line, self.gpu_figures = gpu_timing_figures(kernel)
        self.box.children = (*own, w.HTML(f"<i>{html.escape(self.gpu_line)}</i>"),
                             *self.gpu_figures)
        return tuple(own)  # this machine's figures; the GPU's are in gpu_figures


__all__ = ["TimingsPanel", "gpu_timing_figures", "timing_figures"]
