"""Live view of a search: best time against evaluations, every measured time
and its bound, a tqdm bar, and a Stop button. Views only: the numbers are
the events `workbench.search.Search` reports to its callbacks."""

from __future__ import annotations


class SearchProgress:
    """Subscribe with `Search(..., callbacks=[view.update])` or `view.attach(search)`."""

    def __init__(self, budget: int | None = None, title: str = "search"):
        import plotly.graph_objects as go
        from tqdm.auto import tqdm
        self.figure = go.FigureWidget(layout={
            "title": title, "xaxis_title": "evaluations", "yaxis_title": "time (µs)",
            "yaxis_type": "log", "height": 360, "margin": {"l": 60, "r": 20, "t": 40, "b": 40}})
        self.figure.add_scatter(name="measured", mode="markers", x=[], y=[],
                                marker={"size": 5, "color": "#888"})
        self.figure.add_scatter(name="bound", mode="markers", x=[], y=[],
                                marker={"size": 4, "symbol": "line-ew-open", "color": "#1f77b4"})
        self.figure.add_scatter(name="best", mode="lines", x=[], y=[],
                                line={"shape": "hv", "color": "#d62728", "width": 2})
        self.bar = tqdm(total=budget, unit="eval", desc=title)
        self.events: list = []
        self.search = None

    def attach(self, search) -> SearchProgress:
        self.search = search
        search.callbacks.append(self.update)
        return self

    def update(self, ev: dict) -> None:
        self.events.append(ev)
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
        self.bar.update(1)
        if ev.get("best_ns"):
            self.bar.set_postfix(best=f"{ev['best_ns'] / 1e3:,.1f}us", refresh=False)

    def widget(self):
        """The figure with a Stop button (stops the attached search)."""
        import ipywidgets as w
        stop = w.Button(description="Stop", button_style="warning")
        stop.on_click(lambda _: self.search.stop() if self.search else None)
        return w.VBox([self.figure, stop])


def run_live(search, title: str | None = None):
    """Display the live view and run `search` in the background; returns
    (view, thread). The records land in the store as they come."""
    from IPython.display import display
    view = SearchProgress(search.budget, title or f"search {search.search_id}").attach(search)
    display(view.widget())
    return view, search.run_in_background()



class SearchPanel:
    """The explorer's Search tab: a budget, Search (from the current
    candidate, in the background, its progress shown live) and Adopt (the
    best candidate found becomes a new branch)."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.search = None
        self.budget = w.BoundedIntText(value=20, min=1, max=10000, description="budget")
        self.search_b = w.Button(description="Search", icon="search")
        self.adopt_b = w.Button(description="Adopt best as branch", disabled=True)
        self.search_b.on_click(lambda _: self.start())
        self.adopt_b.on_click(lambda _: self.adopt())
        self.widget = self.box = w.VBox([w.HBox([self.budget, self.search_b, self.adopt_b])])

    def refresh(self) -> None:
        pass

    def show(self) -> None:
        pass

    def start(self):
        from workbench.search import Search
        session = self._ex.session
        self.search = Search(session.cand, self._ex.backend, budget=self.budget.value,
                             workers=0, store=session.store)
        view = SearchProgress(self.search.budget, "search").attach(self.search)
        self.search.callbacks.append(lambda ev: setattr(self.adopt_b, "disabled", False))
        self.box.children = [self.box.children[0], view.widget()]
        return self.search.run_in_background()

    def adopt(self) -> None:
        if self.search is None or self.search.best_candidate() is None:
            return
        session = self._ex.session
        self._ex.do(session.new_branch, f"search {len(session.branches)}",
                    self.search.best_candidate())


__all__ = ["SearchPanel", "SearchProgress", "run_live"]
