"""Measured timings against the bound: the scatter with the y = x line, the
CDF of measured / bound (thesis Fig. 5.1) and the best time against
evaluations, each with the reference library's time (cuBLAS / numpy) as a
line. Used by the explorer's Timings tab and the bound-accuracy notebook.
GPU campaigns' records (data/gpu/<device>/, `workbench.campaign.data`)
are drawn beside this machine's own when there are any, and their absence
is said in so many words. They are drawn against the bound today's model
gives their trails (`campaign.bounds_now`, cached per engine; bounded in a
process of their own, `campaign.bound_apart`), the bound
recorded with the run beside it where the two differ: a model fixed after a
GPU run is checked against that run's times. Their scatter tells random
draws, searches and recipes forced by hand apart (`campaign.report.origin`),
and the library's median time on the GPU is a line across it."""

from __future__ import annotations

import html
import json
import threading

import numpy as np

from workbench.model.justification import fmt_time

from .figures import figure_output, log_ticks


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


def timing_figures(df, widget: bool = True, refs: dict | None = None) -> list:
    """Three plotly figures (FigureWidgets when `widget`, each built whole
    then sent once) from a records DataFrame: the bound against measured
    scatter, the CDF of measured / bound and the best against evaluations,
    with the Reference button's times (or `refs`) as lines; one figure saying so when
    only reference records are there; an empty list when nothing was
    measured."""
    import plotly.graph_objects as go
    figs = _timing_figures(df, go.Figure, refs)
    return [go.FigureWidget(f) for f in figs] if widget else figs


def _timing_figures(df, make, refs: dict | None = None) -> list:
    """`refs`: name -> reference time (ns) drawn as lines (default: the
    Reference button's records, `_references`). A column `origin` (GPU
    records: `campaign.report.origin`) splits the scatter by it."""
    if not len(df) or "median_ns" not in df or "bound_ns" not in df:
        return []
    ok = df[(df["status"] == "ok") & df["bound_ns"].notna() & df["median_ns"].notna()]
    refs = _references(df) if refs is None else refs
    if not len(ok) and not refs:
        return []
    x, y = ok["bound_ns"].to_numpy() / 1e3, ok["median_ns"].to_numpy() / 1e3
    if not len(ok):  # only reference records: the line alone, said in words
        scatter = _message_figure(
            "no implementation measured yet: "
            + ", ".join(f"{n} {ns / 1e3:,.4g} µs" for n, ns in refs.items()),
            "bound against measured", make)
        return [scatter]
    # log-log: bounds and times of one kernel's implementations span decades
    scatter = make(layout={"height": 330, "margin": {"l": 50, "r": 10, "t": 40, "b": 40},
                           "title": "bound against measured", "xaxis_title": "bound (µs)",
                           "yaxis_title": "measured (µs)", "xaxis_type": "log",
                           "yaxis_type": "log"})
    digests = ok["digest"].astype(str).str[:10].to_numpy() if "digest" in ok else None
    if "origin" in ok:  # GPU records: random draws, searches and recipes apart
        from workbench.campaign.report import ORIGINS
        kinds = ok["origin"].to_numpy()
        for k, name in ORIGINS.items():
            sel = kinds == k
            if sel.any():
                scatter.add_scatter(x=x[sel], y=y[sel], mode="markers", name=name,
                                    text=None if digests is None else digests[sel])
    else:
        scatter.add_scatter(x=x, y=y, mode="markers", name="implementations", text=digests)
    ends = [x.min(), x.max(), y.min(), y.max()]
    if "bound_recorded_ns" in ok:  # GPU records bounded again: where the model moved
        was = ok["bound_recorded_ns"].to_numpy(dtype=float) / 1e3
        moved = np.isfinite(was) & ~np.isclose(was, x, rtol=0.01)
        if moved.any():
            scatter.add_scatter(x=was[moved], y=y[moved], mode="markers",
                                name="bound recorded with the run",
                                marker={"symbol": "circle-open", "color": "#999"})
            ends += [was[moved].min(), was[moved].max()]
    ends = [float(e) for e in ends if e > 0]
    lo, hi = (min(ends), max(ends)) if ends else (1e-3, 1.0)
    scatter.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="y = x",
                        line={"dash": "dot"})
    # the references as traces named in the legend: on log axes an
    # `add_hline` annotation is placed at 10^y and stretches the axis to 10^10
    for name, ns in refs.items():
        scatter.add_scatter(x=[lo, hi], y=[ns / 1e3] * 2, mode="lines", name=name,
                            line={"dash": "dash", "color": "#444"})
    scatter.update_xaxes(log_ticks([lo, hi]))
    scatter.update_yaxes(log_ticks([lo, hi, *(ns / 1e3 for ns in refs.values())]))
    ratio = np.sort(y / x) if len(ok) else np.array([])
    cdf = make(layout={"height": 260, "title": "CDF of measured / bound",
                       "xaxis_type": "log", "xaxis_title": "measured / bound",
                       "yaxis_title": "share ≤ x", "yaxis_range": [0, 1.02],
                       "margin": {"l": 50, "r": 10, "t": 40, "b": 40}})
    cdf.add_scatter(x=ratio, y=np.arange(1, len(ratio) + 1) / max(len(ratio), 1),
                    mode="lines+markers", line={"shape": "hv"}, name="implementations")
    cdf.update_xaxes(log_ticks(ratio))
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
        best_fig.add_hline(y=ns / 1e3, line_dash="dash", annotation_text=name)
    return [scatter, cdf, best_fig]



def gpu_timing_figures(kernel=None, widget: bool = True, *, bounds: str = "now",
                       stop=None) -> tuple[str, list]:
    """(a sentence on the GPU data, figures per campaign folder) for the
    records of `kernel` (its name and spec; None: every kernel) under
    data/gpu/; no figures and the sentence saying so when there is none.
    `bounds`: "now" draws them against today's model (replayed, cached:
    about half a second a record the first time), "cached" against today's
    where the cache has it and the recorded bound elsewhere (said in the
    sentence), "recorded" against the bounds recorded with the runs;
    `stop()` ends the replaying early ("now")."""
    import pandas as pd

    from workbench.campaign.bounds import bounds_now
    from workbench.campaign.data import gpu_rows, status_line
    from workbench.campaign.report import origin
    if bounds not in ("now", "cached", "recorded"):
        raise ValueError(f"bounds: 'now', 'cached' or 'recorded', not {bounds!r}")
    line = status_line()
    rows = gpu_rows(kernel.name if kernel is not None else None,
                    kernel.spec() if kernel is not None else None)
    if not rows:
        if "no GPU data" not in line and kernel is not None:
            line += f"; none of {kernel.name} at these sizes"
        return line, []
    figs, said = [], []
    for folder in dict.fromkeys(r["gpu_dir"] for r in rows):
        # in the order they were measured (a folder's record files are read one
        # after another: the expert's first would have led "best against evaluations")
        part = sorted((r for r in rows if r["gpu_dir"] == folder),
                      key=lambda r: str(r.get("timestamp") or ""))
        if bounds != "recorded":
            now = {_row_key(r): r for r in bounds_now(part, compute=bounds == "now",
                                                      stop=stop)}
            part = [_with_bound_now(now.get(_row_key(r), r)) for r in part]
            said.append(_bounds_said(folder, part))
        df = pd.DataFrame([{**r, "origin": origin(r)} for r in part])
        for f in timing_figures(df, widget, refs=_gpu_references(part)):
            f.layout.title.text = f"GPU {folder}: {f.layout.title.text}"
            figs.append(f)
    return "; ".join([line, *said]), figs


def _gpu_references(part: list) -> dict:
    """The reference line of a GPU folder's records of one kernel and size:
    the median of the library's timings every run carries (taken by the
    campaign beside each run, on the GPU: `campaign.report.references`),
    named with their count; none where the records hold several kernels."""
    from workbench.campaign.report import references
    got = references(part)
    if len(got) != 1:
        return {}
    ref = next(iter(got.values()))
    name = next((r["reference"] for r in part if r.get("reference")), "reference")
    return {f"{name}, median of {ref['records']}": ref["median_ns"]}


def _row_key(r: dict) -> tuple:
    return r.get("gpu_dir"), r.get("digest"), r.get("timestamp")


def _with_bound_now(r: dict) -> dict:
    """A measured record drawn against today's bound, its own kept beside."""
    if "bound_now_ns" not in r:
        return r
    return {**r, "bound_ns": r["bound_now_ns"], "bound_recorded_ns": r["bound_ns"]}


def _bounds_said(folder: str, part: list) -> str:
    """Which bounds a folder's figures use, in words."""
    from workbench.campaign.bounds import measured as measured_rows
    measured = measured_rows(part)  # the records `bounds_now` bounds again
    now = sum(1 for r in measured if "bound_recorded_ns" in r)
    failed = sum(1 for r in measured if "bound_now_error" in r)
    moved = sum(1 for r in measured if "bound_recorded_ns" in r
                and abs(r["bound_ns"] - r["bound_recorded_ns"]) > 0.01 * r["bound_recorded_ns"])
    text = f"{folder}: bounds of today's model for {now} of {len(measured)} records"
    if moved:
        text += f" ({moved} moved by more than 1 % since the run: open circles)"
    if failed:
        text += f", {failed} no longer replayable (their recorded bound drawn)"
    rest = len(measured) - now - failed
    if rest:
        text += f", the bound recorded with the run for {rest} (today's being computed)"
    return text


class TimingsPanel:
    """The explorer's Timings tab: `timing_figures` of the session's records
    measured by the explorer's backend on the session's target (the others
    are counted, not drawn), drawn when the tab is shown; then the GPU
    campaigns' records of the kernel against today's bounds. Bounding them
    again takes seconds the first time, so the tab draws what the cache
    holds at once and a thread redraws the GPU part when a process of its
    own has bounded the rest (in the caller with the "sync" look-ahead,
    never with "off")."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.status = w.HTML()
        self.widget = self.box = w.VBox([self.status])
        self.gpu_line, self.gpu_figures = "", []
        self.hidden = 0
        self.best_ns: float | None = None
        self._gen = 0  # a newer show() makes a running GPU redraw stale
        self._lock = threading.Lock()
        self.bounding: threading.Thread | None = None  # the GPU redraw, while it runs
        self._closed = False
        self._drawn: tuple | None = None  # the `_version` on show
        self._figs: tuple = ()

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        """Stop a running GPU redraw (its process is killed)."""
        self._closed = True

    def records(self):
        """(this backend's and target's records, how many others)."""
        s = self._ex.session
        return filter_records(s.records(), self._ex.backend, s.target)

    def _version(self, mode: str) -> tuple:
        """What the tab draws from: the kernel and its sizes, the target, the
        backend, this store's records and the GPU folders'. A decision moves
        none of them, so a click with the tab on show redraws nothing."""
        from workbench.campaign.data import gpu_version
        s = self._ex.session
        kernel = s.root.problem.root_problem.kernel
        return (kernel.name, json.dumps(kernel.spec(), sort_keys=True, default=str), s.target,
                self._ex.backend, s.records_version(), gpu_version(), mode)

    def show(self) -> tuple:
        # the explorer's look-ahead mode says whether threads may draw here
        mode = getattr(getattr(self._ex, "choices", None), "lookahead", "off")
        version = self._version(mode)
        if version == self._drawn:  # the same records: the figures on show stand
            return self._figs
        import ipywidgets as w
        self.status.value = "<i>computing the timing figures …</i>"
        self.box.children = [self.status]
        s, backend = self._ex.session, self._ex.backend
        df, self.hidden = self.records()
        figs = timing_figures(df, widget=False)
        ok = df[df["status"] == "ok"] if len(df) and "status" in df else df
        self.best_ns = (float(ok["median_ns"].min()) if len(ok) and "median_ns" in ok
                        and ok["median_ns"].notna().any() else None)
        where = f"{html.escape(backend)} on target {html.escape(str(s.target or 'any'))}"
        best = fmt_time(self.best_ns) if self.best_ns else "—"
        line = (f"records measured by <b>{where}</b>: {len(df)}, best measured <b>{best}</b>"
                + (f"; {self.hidden} record{'s' * (self.hidden != 1)} of other backends or "
                   "targets hidden" if self.hidden else ""))
        own = [figure_output(f) for f in figs] or [w.HTML(
            "<i>no measurement of this kernel yet on this backend: fix a candidate and "
            "Run, or Search</i>")]
        kernel = s.root.problem.root_problem.kernel
        with self._lock:
            self._gen += 1
            gen = self._gen
            self.gpu_line, self.gpu_figures = gpu_timing_figures(
                kernel, widget=False, bounds="now" if mode == "sync" else "cached")
            self.status.value = line
            self._own = (self.status, *own)
            self._draw_gpu()
        # a redraw under way for records drawn before is stale: its process is
        # killed, and one for these starts now
        if mode not in ("sync", "off") and "being computed" in self.gpu_line:
            self.bounding = threading.Thread(target=self._bound_again, args=(kernel, gen),
                                             name="timings-bounds", daemon=True)
            self.bounding.start()
        self._drawn, self._figs = version, tuple(figs)
        return self._figs  # this machine's figures; the GPU's are in gpu_figures

    def _draw_gpu(self) -> None:
        import ipywidgets as w
        self.box.children = (*self._own, w.HTML(f"<i>{html.escape(self.gpu_line)}</i>"),
                             *(figure_output(f) for f in self.gpu_figures))

    def _bound_again(self, kernel, gen: int) -> None:
        """Bound the GPU records again (filling the cache) in a process of
        their own, then redraw their figures unless a newer show() came
        meanwhile. In this thread they took about 2 minutes of the kernel's
        interpreter, and a click meanwhile 125 ms instead of 40."""
        from workbench.campaign.bounds import Apart, bound_apart
        from workbench.campaign.data import gpu_rows

        def stale() -> bool:
            return self._closed or gen != self._gen
        try:
            try:
                if bound_apart(gpu_rows(kernel.name, kernel.spec()), stop=stale) is None:
                    return  # stopped: a newer show() or the explorer closed
                got = gpu_timing_figures(kernel, widget=False, bounds="cached")
            except Apart as why:  # replayed here instead, as before, and said
                line, figs = gpu_timing_figures(kernel, widget=False, bounds="now", stop=stale)
                got = (f"{line} ({why})", figs)
        except Exception as exc:  # noqa: BLE001 - said on the tab, not lost in a thread
            got = (f"{self.gpu_line}; bounding again failed: {type(exc).__name__}: {exc}",
                   self.gpu_figures)
        with self._lock:
            if gen == self._gen:
                self.gpu_line, self.gpu_figures = got
                self._draw_gpu()


__all__ = ["TimingsPanel", "filter_records", "gpu_timing_figures", "timing_figures"]
