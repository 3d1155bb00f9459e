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

from workbench.model.justification import fmt_time


def _references(df) -> dict:
    """Median reference time (ns) per reference name, over the records the
    Reference button writes (status `reference`: the library timed alone).
    The reference times an implementation's run carries are left out: they
    are taken inside whatever process ran it (a notebook's loaded kernel
    made numpy's multi-threaded BLAS 100 times slower than alone)."""
    if "reference_median_ns" not in df or "status" not in df:
        return {}
    ref = df[(df["status"] == "reference") & df["reference_median_ns"].notna()]
    return {str(name): float(g["reference_median_ns"].median())
            for name, g in ref.groupby("reference")}


def filter_records(df, backend: str | None, target: str | None):
    """(the records measured by `backend` whose bound used `target` — None:
    any —, how many others there are)."""
    if not len(df):
        return df, 0
    keep = np.ones(len(df), dtype=bool)
    if backend is not None and "backend" in df:
        keep &= (df["backend"] == backend).to_numpy()
    if target is not None and "target" in df:
        keep &= (df["target"] == target).to_numpy()
    return df[keep].reset_index(drop=True), int((~keep).sum())


def _message_figure(text: str, title: str, make):
    """A figure that says why it has nothing to draw."""
    fig = make(layout={"height": 200, "title": title, "xaxis": {"visible": False},
                       "yaxis": {"visible": False},
                       "margin": {"l": 50, "r": 10, "t": 40, "b": 20}})
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5,
                       showarrow=False, font={"size": 14, "color": "#888"})
    return fig


def timing_figures(df, widget: bool = True) -> list:
    """Three plotly figures (FigureWidgets when `widget`, each built whole
    then sent once) from a records DataFrame: the bound against measured
    scatter, the CDF of measured / bound and the best against evaluations,
    with the Reference button's times as lines; one figure saying so when
    only reference records are there; an empty list when nothing was
    measured."""
    import plotly.graph_objects as go
    figs = _timing_figures(df, go.Figure)
    return [go.FigureWidget(f) for f in figs] if widget else figs


def _timing_figures(df, make) -> list:
    if not len(df) or "median_ns" not in df or "bound_ns" not in df:
        return []
    ok = df[(df["status"] == "ok") & df["bound_ns"].notna() & df["median_ns"].notna()]
    refs = _references(df)
    if not len(ok) and not refs:
        return []
    x, y = ok["bound_ns"].to_numpy() / 1e3, ok["median_ns"].to_numpy() / 1e3
    if not len(ok):  # only reference records: the line alone, said in words
        scatter = _message_figure(
            "no implementation measured yet: "
            + ", ".join(f"{n} {ns / 1e3:,.4g} µs" for n, ns in refs.items()),
            "bound against measured", make)
        return [scatter]
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
                    mode="lines+markers", line={"shape": "hv"}, name="implementations")
    times = np.where(df["status"].to_numpy() == "ok",
                     df["median_ns"].astype(float).fillna(np.inf).to_numpy(), np.inf)
    best = np.minimum.accumulate(times[df["status"].to_numpy() != "reference"]) / 1e3
    best_fig = make(layout={"height": 260, "title": "best against evaluations",
                            "xaxis_title": "evaluation", "yaxis_title": "best (µs)",
                            "margin": {"l": 50, "r": 10, "t": 40, "b": 40}})
    best_fig.add_scatter(x=np.arange(1, len(best) + 1),
                         y=np.where(np.isinf(best), None, best), mode="lines+markers",
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
    """The explorer's Timings tab: `timing_figures` of the session's records
    measured by the explorer's backend on the session's target (the others
    are counted, not drawn), drawn when the tab is shown."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.status = w.HTML()
        self.widget = self.box = w.VBox([self.status])
        self.gpu_line, self.gpu_figures = "", []
        self.hidden = 0
        self.best_ns: float | None = None

    def refresh(self) -> None:
        pass

    def records(self):
        """(this backend's and target's records, how many others)."""
        s = self._ex.session
        return filter_records(s.records(), self._ex.backend, s.target)

    def show(self) -> list:
        import ipywidgets as w
        self.status.value = "<i>computing the timing figures …</i>"
        self.box.children = [self.status]
        s, backend = self._ex.session, self._ex.backend
        df, self.hidden = self.records()
        figs = timing_figures(df)
        ok = df[df["status"] == "ok"] if len(df) and "status" in df else df
        self.best_ns = (float(ok["median_ns"].min()) if len(ok) and "median_ns" in ok
                        and ok["median_ns"].notna().any() else None)
        where = f"{html.escape(backend)} on target {html.escape(str(s.target or 'any'))}"
        best = fmt_time(self.best_ns) if self.best_ns else "—"
        line = (f"records measured by <b>{where}</b>: {len(df)}, best measured <b>{best}</b>"
                + (f"; {self.hidden} record{'s' * (self.hidden != 1)} of other backends or "
                   "targets hidden" if self.hidden else ""))
        own = figs or [w.HTML(
            "<i>no measurement of this kernel yet on this backend: fix a candidate and "
            "Run, or Search</i>")]
        kernel = s.root.problem.root_problem.kernel
        self.gpu_line, self.gpu_figures = gpu_timing_figures(kernel)
        self.status.value = line
        self.box.children = (self.status, *own, w.HTML(f"<i>{html.escape(self.gpu_line)}</i>"),
                             *self.gpu_figures)
        return tuple(figs)  # this machine's figures; the GPU's are in gpu_figures


__all__ = ["TimingsPanel", "filter_records", "gpu_timing_figures", "timing_figures"]
