"""Live view of a search: a progress bar with a status line (each
evaluation's outcome, timeouts and failures counted), best time against
evaluations with every measured time and its bound, and a Stop button.
Views only: the numbers are the events `workbench.search.Search` reports to
its callbacks.

The bar is an ipywidgets IntProgress, not tqdm: `tqdm.auto` updated from a
search's thread never renders in JupyterLab."""

from __future__ import annotations

import html
import threading

from workbench.model.justification import fmt_time
from workbench.names import plural

from .figures import fits_its_tab, log_ticks

# why a rollout reached no implementation (`Search.failures`), in words
_FAILED = {"constraints": "ran into a dead end", "model": "found only values bounded past "
           "the best", "error": "failed with an error"}

# the Search tab's climb (`SearchOptions.climb`): on the CPU backend, searches
# of matmul 128x128x64 that climbed 30 moves a rollout found a faster best than
# plain TAG given the same wall time on 4 seeds of 6, and measured faster
# implementations at the median on 6 of 6 (benchmarks/bench_climb.py)
SEARCH_CLIMB = 16


class SearchProgress:
    """Subscribe with `Search(..., callbacks=[view.update])` or `view.attach(search)`;
    `finish(summary)` when the search has returned."""

    def __init__(self, budget: int | None = None, title: str = "search"):
        import ipywidgets as w
        import plotly.graph_objects as go
        self.title = title
        self.figure = go.FigureWidget(layout={
            "title": title, "xaxis_title": "evaluations", "yaxis_title": "time (µs)",
            "yaxis_type": "log", "height": 360,
            "margin": {"l": 60, "r": 20, "t": 40, "b": 40}})
        fits_its_tab(self.figure)
        with self.figure.batch_update():
            self.figure.add_scatter(name="measured", mode="markers", x=[], y=[],
                                    marker={"size": 5, "color": "#888"})
            self.figure.add_scatter(name="bound", mode="markers", x=[], y=[],
                                    marker={"size": 9, "symbol": "line-ew-open",
                                            "line": {"width": 2}, "color": "#1f77b4"})
            self.figure.add_scatter(name="best", mode="lines", x=[], y=[],
                                    line={"shape": "hv", "color": "#d62728", "width": 2})
            self._say_empty("no evaluation yet")
        self.bar = w.IntProgress(value=0, min=0, max=budget or 1, description=title[:30],
                                 bar_style="info", layout=w.Layout(width="50%"),
                                 style={"description_width": "initial"})  # "matmul 3…" cut
        self.text = w.HTML("starting …")
        self.stop_b = w.Button(description="Stop", button_style="warning", icon="stop")
        self.stop_b.on_click(lambda _: self.stop())
        self.events: list = []
        self.counts: dict = {}
        self.search = None
        self.budget = budget
        self.state = "running"
        self._box = None

    # ---------------------------------------------------------------- figure
    def _say_empty(self, why: str) -> None:
        """A figure without a point says why in its middle (empty axes say nothing)."""
        self.figure.layout.annotations = [{
            "text": why, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5,
            "showarrow": False, "font": {"size": 14, "color": "#888"}}]

    def attach(self, search) -> SearchProgress:
        self.search = search
        search.callbacks.append(self.update)
        if hasattr(search, "on_finish"):  # finished / stopped when run() returns
            search.on_finish.append(self.finish)
        return self

    def update(self, ev: dict) -> None:
        self.events.append(ev)
        if self.state == "stopping" and self.search is not None:
            self.search.stop()  # a Stop before run() began (run() clears the flag)
        status = ev.get("status") or "?"
        self.counts[status] = self.counts.get(status, 0) + 1
        measured, bound, best = self.figure.data
        n = ev["n"]
        with self.figure.batch_update():
            if ev.get("median_ns"):
                measured.x = (*measured.x, n)
                measured.y = (*measured.y, ev["median_ns"] / 1e3)
            if ev.get("bound_ns"):
                bound.x = (*bound.x, n)
                bound.y = (*bound.y, ev["bound_ns"] / 1e3)
            if ev.get("best_ns"):
                best.x = (*best.x, n)
                best.y = (*best.y, ev["best_ns"] / 1e3)
            self.figure.layout.yaxis.update(log_ticks((*measured.y, *bound.y, *best.y)))
            # evaluations are whole: plotly ticked 1.5, 2.5 … on a few
            self.figure.layout.xaxis.dtick = 1 if n <= 10 else None
            if any(e.get("median_ns") for e in self.events):
                self.figure.layout.annotations = []
            else:
                self._say_empty(f"no time measured yet: {self._counts_text()}")
        self.bar.value = min(n, self.bar.max)
        if self.budget is None:
            self.bar.max = max(self.bar.max, n + 1)
        if self.state == "running":
            self.text.value = self._line(ev)

    def _counts_text(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items(),
                                                       key=lambda kv: kv[0] != "ok"))

    def _line(self, ev: dict) -> str:
        status = ev.get("status") or "?"
        what = (f"{fmt_time(ev['median_ns'])}" if ev.get("median_ns") else
                f"<b style='color:#b00'>{html.escape(status)}</b>")
        best = fmt_time(ev["best_ns"]) if ev.get("best_ns") else "—"
        of = f"/{self.budget}" if self.budget else ""
        return (f"evaluation {ev['n']}{of}: {what} · best {best} · "
                f"{html.escape(self._counts_text())}")

    # ---------------------------------------------------------------- states
    def stop(self) -> None:
        """Ask the attached search to stop after the evaluation in flight;
        says so at once."""
        if self.search is None or self.state != "running":
            return
        self.state = "stopping"
        self.search.stop()
        self.stop_b.disabled = True  # greyed: a disabled orange button still reads as live
        self.stop_b.button_style = ""
        self.stop_b.description = "stopping…"
        self.bar.bar_style = "warning"
        self.text.value = ("<b>stopping…</b> after the evaluation in flight "
                           f"({len(self.events)} done)")

    def finish(self, summary: dict | None = None, error: str | None = None) -> None:
        """The search returned (or raised `error`): its final state."""
        stopped = (summary or {}).get("stopped") or ""
        user = self.state == "stopping" or stopped == "stopped by the user"
        self.state = "stopped" if user else "finished"
        self.stop_b.disabled = True
        self.stop_b.button_style = ""
        self.stop_b.description = "Stop"
        n = (summary or {}).get("evaluations", len(self.events))
        best = (summary or {}).get("best_ns")
        fails = (summary or {}).get("descent_failures") or {}
        extra = [f"{plural(v, 'descent')} {_FAILED.get(k, f'stopped: {k}')}"
                 for k, v in fails.items() if v]
        words = (f"<b>{self.state}</b>: {plural(n, 'evaluation')}, best "
                 f"{fmt_time(best) if best else '— (nothing measured)'}")
        if self.counts:
            words += f" · {html.escape(self._counts_text())}"
        if stopped and not user:
            words += f" · ended by {html.escape(stopped)}"
        if extra:
            words += f" · {html.escape(', '.join(extra))}"
        if error:
            words += f" · <b style='color:#b00'>error</b>: {html.escape(error[:300])}"
        self.bar.bar_style = "danger" if error else "warning" if user else "success"
        self.text.value = words
        if not self.events:
            with self.figure.batch_update():
                self._say_empty(f"{self.state}: no evaluation"
                                + (f" ({', '.join(extra)})" if extra else ""))

    def widget(self):
        """The bar, status line and Stop button above the figure."""
        import ipywidgets as w
        if self._box is None:
            self._box = w.VBox([w.HBox([self.bar, self.stop_b]), self.text, self.figure])
        return self._box


def _run(search, view: SearchProgress, done=None) -> threading.Thread:
    """Run `search` in a thread; when it returns (or raises) the view shows
    its final state and `done(summary)` is called."""
    def body():
        summary = None
        try:
            summary = search.run()  # the view's finish() is one of its on_finish
            if view.state in ("running", "stopping"):
                view.finish(summary)
        except Exception as exc:  # noqa: BLE001 - said in the view, not lost in a thread
            view.finish(None, f"{type(exc).__name__}: {exc}")
        if done is not None:
            done(summary)
    t = threading.Thread(target=body, name=f"search-{search.search_id}", daemon=True)
    t.start()
    return t


def run_live(search, title: str | None = None):
    """Display the live view and run `search` in the background; returns
    (view, thread). The records land in the store as they come."""
    from IPython.display import display
    view = SearchProgress(search.budget, title or f"search {search.search_id}").attach(search)
    display(view.widget())
    return view, _run(search, view)


class SearchPanel:
    """The explorer's Search tab: a budget and a per-run time limit, Search
    (from the current candidate, in the background, its progress shown live),
    Stop, and Adopt (the best candidate found becomes a new branch)."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.search = None
        self.view: SearchProgress | None = None
        self.thread: threading.Thread | None = None
        self.budget = w.BoundedIntText(value=20, min=1, max=10000, description="budget",
                                       layout=w.Layout(width="160px"))
        self.timeout = w.BoundedFloatText(value=5.0, min=0.1, max=600, description="timeout s",
                                          tooltip="a first run longer than this is a timeout",
                                          layout=w.Layout(width="160px"))
        self.samples = w.BoundedIntText(value=5, min=1, max=100, description="samples",
                                        layout=w.Layout(width="140px"))
        self.climb = w.BoundedIntText(value=SEARCH_CLIMB, min=0, max=1000, description="climb",
                                      tooltip="moves on the bound that polish each rollout's "
                                              "implementation before it is measured "
                                              "(search.climb; 0: measured as the rollout ends)",
                                      layout=w.Layout(width="140px"))
        self.beat = w.Checkbox(value=False, description="only what can beat the best measured",
                               indent=False, layout=w.Layout(width="290px"),
                               tooltip="cut every candidate whose bound reaches the best "
                                       "time measured on this backend and target (another "
                                       "branch's, a recipe's) before measuring anything")
        self.search_b = w.Button(description="Search", icon="search")
        self.adopt_b = w.Button(description="Adopt best as branch",
                                layout=w.Layout(width="auto"))  # not clipped at 1,500 px
        self.search_b.on_click(lambda _: self.start())
        self.adopt_b.on_click(lambda _: self.adopt())
        self.message = w.HTML()
        self.controls = w.HBox([self.budget, self.timeout, self.samples, self.climb, self.beat,
                                self.search_b, self.adopt_b],
                               layout=w.Layout(flex_flow="row wrap"))
        self.widget = self.box = w.VBox([self.controls, self.message])

    def refresh(self) -> None:
        pass

    def show(self):
        """The live figure of the last search (None before one)."""
        return self.view.figure if self.view is not None else None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self):
        """Search from the current candidate in the background; returns the thread."""
        from workbench.search import Search
        if self.running:
            self.message.value = "a search is running: Stop it first"
            return self.thread
        session = self._ex.session
        self.search_b.disabled = True
        self.message.value = "<i>computing the search's root bound and starting …</i>"
        beat = (session.best_measured_ns(self._ex.backend, session.target)
                if self.beat.value else None)
        try:
            self.search = Search(session.cand, self._ex.backend, budget=self.budget.value,
                                 workers=0, store=session.store, timeout_s=self.timeout.value,
                                 samples=self.samples.value, beat_ns=beat,
                                 climb=self.climb.value)
        except Exception as exc:  # noqa: BLE001 - said on the tab
            self.search_b.disabled = False
            self.message.value = f"<b style='color:#b00'>cannot search</b>: {html.escape(str(exc))}"
            return None
        self.view = SearchProgress(self.search.budget, "search").attach(self.search)
        seen = [None]

        def new_best(ev: dict) -> None:  # the status line's best measured follows
            if ev.get("best_ns") and ev["best_ns"] != seen[0]:
                seen[0] = ev["best_ns"]
                self._ex.show_status()
        self.search.callbacks.append(new_best)
        self.message.value = (f"cut at the best measured, {fmt_time(beat)}: every candidate "
                              "measured has a bound below it" if beat else
                              "nothing measured yet on this backend and target: nothing to "
                              "beat, every candidate can be measured" if self.beat.value
                              else "")
        self.box.children = [self.controls, self.message, self.view.widget()]
        self.thread = _run(self.search, self.view, lambda _: self._ended())
        return self.thread

    def _ended(self) -> None:
        self.search_b.disabled = False
        self._ex.show_status()  # its best measured, without waiting for a click

    def stop(self) -> None:
        if self.view is not None:
            self.view.stop()

    def adopt(self):
        """The best implementation found becomes a new branch (and the
        current one); says why not when there is none. Returns the branch."""
        from workbench.errors import WorkbenchError
        if self.search is None:
            self.message.value = "nothing to adopt: no search yet (Search first)"
            return None
        best = self.search.best_candidate()
        if best is None:
            n = self.search.evaluations
            counts = self.view._counts_text() if self.view is not None else ""
            self.message.value = (
                "nothing to adopt: no evaluation measured a time yet"
                f" ({plural(n, 'evaluation')}{': ' + html.escape(counts) if counts else ''})")
            return None
        session = self._ex.session
        names = {b.name for b in session.branches}
        name, k = f"search {self.search.search_id[-8:]}", 2
        while name in names:
            name, k = f"search {self.search.search_id[-8:]} ({k})", k + 1
        try:
            branch = session.new_branch(name, best)
        except WorkbenchError as exc:
            self.message.value = f"<b style='color:#b00'>cannot adopt</b>: {html.escape(str(exc))}"
            return None
        self._ex.refresh()
        self.message.value = (f"adopted the best ({fmt_time(self.search.best_ns)}) as branch "
                              f"<b>{html.escape(name)}</b>, now the current one")
        return branch


__all__ = ["SearchPanel", "SearchProgress", "run_live"]
