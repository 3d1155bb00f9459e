"""The candidate explorer: one `display(explore(kernel))` away from a
kernel. Views only — every number comes from `workbench.session.Session`
and the engine; clicks call the session.

The explorer lays out a header (undo, redo, reset, branches), a status line,
the choices column (`choices.ChoicesPanel`: each remaining value with the
bound of its child, dead ends and values whose bound reaches the best
measured time marked, a click forces the decision) and one tab per panel,
addressed by `Tab`: bound and path (`path_view`), domains (`domains`), code
(`code_view`: the CUDA of a fixed candidate; Run measures it on the GPU when
there is one, else on the CPU, into the record store), timings
(`timings_view`), sparsity (`sparsity_view`), search (`search_view`: from
the current candidate; adopt its best as a branch), fusion
(`fusion_view`) and compare (`compare_view`: two branches' decisions, bounds,
times and code side by side). A panel has a `widget`, `refresh()` (every click, cheap)
and `show()` (while its tab is on show: figures cost the page).
"""

from __future__ import annotations

import enum
import html
import time

from workbench.candidate import Decision
from workbench.errors import DeadEnd, InvalidDecision, WorkbenchError
from workbench.model.justification import fmt_time
from workbench.names import plural
from workbench.prebuild import keep_out_of_gc
from workbench.recipes import plan_name, plans
from workbench.session import Session

from .choices import ChoicesPanel
from .choices_widget import SPIN_CSS
from .code_view import CodePanel, default_backend
from .compare_view import ComparePanel
from .domains import DomainsPanel
from .fusion_view import FusionPanel
from .path_view import BoundPanel, PathPanel
from .picker import TITLES
from .search_view import SearchPanel
from .sparsity_view import SparsityPanel
from .timings_view import TimingsPanel
from .why_view import WhyPanel

# moves on the bound after Finish reaches an implementation (when it adopted a
# witness: 1.4-3.1 s more on matmul 256 and 1024, 2026-11-28, its bound 1.1-4x lower)
FINISH_CLIMB = 16


class Tab(enum.IntEnum):
    """The explorer's tabs, in their order on the page; `explorer.tabs.
    selected_index = Tab.FUSION` shows one."""
    BOUND = 0
    PATH = 1
    DOMAINS = 2
    CODE = 3
    TIMINGS = 4
    SPARSITY = 5
    SEARCH = 6
    FUSION = 7
    COMPARE = 8

    @property
    def title(self) -> str:
        return self.name.capitalize()


_PANELS = {Tab.BOUND: BoundPanel, Tab.PATH: PathPanel, Tab.DOMAINS: DomainsPanel,
           Tab.CODE: CodePanel, Tab.TIMINGS: TimingsPanel, Tab.SPARSITY: SparsityPanel,
           Tab.SEARCH: SearchPanel, Tab.FUSION: FusionPanel, Tab.COMPARE: ComparePanel}


def _w():
    import ipywidgets
    return ipywidgets


class CandidateExplorer:
    def __init__(self, kernel_or_session, target: str | None = None, state_path=None,
                 store="default", max_choices: int = 12, backend: str | None = None,
                 lookahead: str = "process"):
        """`kernel_or_session`: a kernel (its root candidate), a candidate or
        a `Session`. `lookahead`: "process" fills each value's child bound and
        proof in a worker process after the click has updated every other
        panel (a click stays fast on big kernels), "background" in a thread of
        this interpreter, "sync" before returning, "off" never."""
        import workbench as wb
        if isinstance(kernel_or_session, Session):
            self.session = kernel_or_session
        else:
            root = kernel_or_session if isinstance(kernel_or_session, wb.Candidate) \
                else wb.Candidate.root(kernel_or_session)
            self.session = Session(root, target, state_path, store)
        self.last_click_ms = 0.0
        self._t_click: float | None = None
        # an interactive kernel keeps its problems: out of the collector's walks
        self._freeze = lookahead == "process"
        if self._freeze:
            keep_out_of_gc()
        self.backend = backend or default_backend()
        if self.session.target is None:  # one target per view: the measuring backend's
            self.session.set_target(backend_target(self.backend))
        self.message = ""
        self.last_refresh_ms = 0.0
        self._was_fixed = False
        self._build(max_choices, lookahead)
        self.refresh()

    # ------------------------------------------------------------- layout
    def _build(self, max_choices: int, lookahead: str) -> None:
        w = _w()
        self.title = w.HTML()
        self.status = w.HTML()
        self.undo_b = w.Button(description="Undo", icon="undo")
        self.redo_b = w.Button(description="Redo", icon="repeat")
        self.reset_b = w.Button(description="Reset")
        self.branch_b = w.Button(description="Branch", icon="code-fork")
        self.finish_b = w.Button(description="Finish from here", icon="flag-checkered",
                                 tooltip="take, at each remaining choice, the value of "
                                         "least child bound (a witness where none is live), "
                                         f"then {FINISH_CLIMB} moves on the bound (search.climb)")
        self.finish_b.on_click(lambda _: self.finish())
        # manual forcing of a whole recipe (workbench.recipes): the structure a
        # person tuning this kernel by hand would choose, each decision a step
        self._plans = plans(self.session.root.kernel)
        self.recipe_dd = w.Dropdown(
            description="recipe", layout=w.Layout(width="460px"),
            options=[("—", None)] + [(plan_name(r, o), k) for k, (r, o) in
                                     enumerate(self._plans)],
            tooltip="decisions an expert forces by hand; a search or Finish does the rest")
        self.recipe_b = w.Button(description="Force recipe", icon="magic",
                                 tooltip="force the recipe's decisions here (undo takes "
                                         "them back one by one)")
        self.recipe_b.on_click(lambda _: self.force_recipe())
        self.recipe_box = w.HBox([self.recipe_dd, self.recipe_b],
                                 layout=w.Layout(display="" if self._plans else "none"))
        self.why_panel = WhyPanel(self)  # a stuck choice's explanation, with its drop buttons
        self.branches = w.Dropdown(description="branch", layout=w.Layout(width="220px"))
        self.undo_b.on_click(lambda _: self.do(self.session.undo))
        self.redo_b.on_click(lambda _: self.do(self.session.redo))
        self.reset_b.on_click(lambda _: self.do(self.session.reset))
        self.branch_b.on_click(lambda _: self.do(self.session.new_branch))
        self._listing_branches = False
        self.branches.observe(self._on_branch, names="value")
        self.target_dd = w.Dropdown(description="bound on", options=model_targets(),
                                    value=self.session.target, layout=w.Layout(width="240px"),
                                    tooltip="the hardware table of the bound, the buttons, Run "
                                            "and the Timings tab")
        self.target_dd.observe(self._on_target, names="value")
        self.choices = ChoicesPanel(self, max_choices, lookahead, self._relist)
        self.panels = {tab: make(self) for tab, make in _PANELS.items()}
        self.tabs = w.Tab(children=[self.panels[tab].widget for tab in Tab])
        for tab in Tab:
            self.tabs.set_title(tab, tab.title)
        self.tabs.observe(lambda _: self._show_selected(), names="selected_index")
        self.widget = w.VBox([
            w.HTML(_STYLE), self.title,
            w.HBox([self.undo_b, self.redo_b, self.reset_b, self.branch_b, self.finish_b,
                    self.branches, self.target_dd, self.recipe_box],
                   layout=w.Layout(flex_flow="row wrap")),
            self.status, self.why_panel.box, w.HBox([self.choices.widget,
                                 w.Box([self.tabs], layout=w.Layout(width="54%"))])])
        self.widget.add_class("wb-explorer")

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)

    # the panels' widgets and the look-ahead, by their names before the split
    filter = property(lambda self: self.choices.filter)
    hint = property(lambda self: self.choices.hint)
    _gen = property(lambda self: self.choices.gen)
    wait_lookahead = property(lambda self: self.choices.wait_lookahead)
    last_lookahead_ms = property(lambda self: self.choices.last_lookahead_ms)
    bound_html = property(lambda self: self.panels[Tab.BOUND].html)
    path_box = property(lambda self: self.panels[Tab.PATH].box)
    domains_html = property(lambda self: self.panels[Tab.DOMAINS].html)
    grid_fig = property(lambda self: self.panels[Tab.DOMAINS].figure)  # order: trace 0, kinds: 1
    code_html = property(lambda self: self.panels[Tab.CODE].code_html)
    run_b = property(lambda self: self.panels[Tab.CODE].run_b)
    run_out = property(lambda self: self.panels[Tab.CODE].run_out)
    fusion_box = property(lambda self: self.panels[Tab.FUSION].box)
    why = property(lambda self: self.why_panel.box)
    explanation = property(lambda self: self.why_panel.explanation)
    ways_out = property(lambda self: self.why_panel.ways_out)

    def run_current(self) -> dict | None:
        """Run: measure the fixed candidate (every sample into the store)."""
        return self.panels[Tab.CODE].run_current()

    def check_current(self) -> dict | None:
        """Check: the result against numpy (the fewest samples a record takes)."""
        return self.panels[Tab.CODE].check_current()

    def run_reference(self) -> dict:
        """Reference: cuBLAS / numpy alone for the kernel's sizes, into the store."""
        return self.panels[Tab.CODE].run_reference()

    def start_search(self):
        return self.panels[Tab.SEARCH].start()

    def adopt_search(self) -> None:
        self.panels[Tab.SEARCH].adopt()

    def draw(self, tab: Tab):
        """Refresh and draw one panel, shown or not; what its show() returns."""
        self.panels[tab].refresh()
        return self.panels[tab].show()

    def refresh_timings(self):
        return self.draw(Tab.TIMINGS)

    def refresh_sparsity(self):
        return self.draw(Tab.SPARSITY)

    def refresh_fusion(self):
        return self.draw(Tab.FUSION)

    # ------------------------------------------------------------- actions
    def do(self, fn, *args):
        """Call `fn(*args)` on behalf of a click: a refused decision becomes
        the status line's message; every panel follows."""
        self._t_click = time.perf_counter()
        self.choices.gen += 1  # a running look-ahead is stale: stop competing with this click
        error = None
        problem = self.session.cand.problem
        try:
            fn(*args)
            self.message = ""
            if self._freeze and self.session.cand.problem is not problem:  # a new extended one
                keep_out_of_gc()
        except (InvalidDecision, DeadEnd, WorkbenchError) as exc:
            self.message = f"<span style='color:#b00'>{html.escape(str(exc))}</span>"
            error = exc
        self.refresh()
        return error

    def force_recipe(self, index: int | None = None):
        """What Force recipe does: the chosen plan of `recipes.plans` forced
        here (`Session.force_recipe`); a decision the candidate refuses is
        the status line's message, and nothing changes."""
        index = self.recipe_dd.value if index is None else index
        if index is None:
            self.message = "<span style='color:#b00'>pick a recipe first</span>"
            self.refresh()
            return None
        recipe, options = self._plans[index]
        # tens of decisions and their lowerings: up to seconds, said at once
        # and counted as they are taken (the status line's class kept: a page
        # reads the line by it)
        name = html.escape(plan_name(recipe, options))

        def said(k: int = 0) -> None:
            self.status.value = (f"<span class='wb-status'><i>forcing {name} … "
                                 f"{plural(k, 'decision')} taken</i></span>")
        said()
        return self.do(lambda: self.session.force_recipe(recipe, on_step=said, **options))

    def finish(self):
        """What Finish from here does (`Session.finish`), each phase said on
        the status line as it starts: 4–7 s on matmul 256 and 1024 went by
        with the line unchanged."""
        def said(what: str) -> None:
            self.status.value = f"<span class='wb-status'><i>finishing … {what}</i></span>"
        return self.do(self.session.finish, 30.0, 3, FINISH_CLIMB, said)

    def force(self, choice: str, objects, value) -> None:
        """What a click on a value does; a value that dead-ends is explained."""
        if isinstance(self.do(self.session.apply, choice, tuple(objects), value), DeadEnd):
            self.show_stuck(decision=Decision(choice, tuple(objects), (str(value),)))

    def show_stuck(self, ch=None, decision=None, gen: int | None = None) -> None:
        """Explain a stuck choice or a dead end (`WhyPanel.show`)."""
        self.why_panel.show(ch, decision, gen)

    def wait_explained(self, timeout: float | None = None) -> bool:
        return self.why_panel.wait(timeout)

    def _on_target(self, change) -> None:
        if change["new"] != self.session.target:
            self.do(self.session.set_target, change["new"])

    def close(self) -> None:
        """Stop the look-ahead worker process (it also ends with the kernel)
        and the Timings tab's replaying of GPU records."""
        self.choices.close()
        self.panels[Tab.TIMINGS].close()

    def _on_branch(self, change) -> None:
        if self._listing_branches:  # the menu's own update, not a person's pick
            return
        if change["new"] is not None and change["new"] != self.session.current:
            self.do(self.session.switch, change["new"])

    # ------------------------------------------------------------- refresh
    def refresh(self) -> None:
        """The header, the choices and the panel on show from the session
        (hidden panels follow when shown). The status line is written last
        (it tells how long the click took in the kernel), and the look-ahead
        of the listed values starts only after everything has been sent."""
        t0 = time.perf_counter()
        t_click, self._t_click = self._t_click or t0, None
        s, cand = self.session, self.session.cand
        s.bound()  # in the time the status line reports (it reads the cached one)
        kernel = cand.problem.root_problem.kernel
        menu = TITLES.get(kernel.spec().get("builder"), kernel.name)  # as the picker says it
        shown = html.escape(menu) + ("" if menu.startswith(kernel.name) else
                                     " <span style='font-weight:normal;color:#888'>"
                                     f"({html.escape(kernel.name)})</span>")
        title = (f"<h3 style='margin:4px 0'>{shown} "
                 f"<span style='font-weight:normal'>{html.escape(_sizes(kernel.spec()))}"
                 f"</span></h3>")
        if self.title.value != title:
            self.title.value = title
        self.undo_b.disabled = s.branch.pos == 0
        self.redo_b.disabled = s.branch.pos + 1 >= len(s.branch.history)
        opts = [(br.name, k) for k, br in enumerate(s.branches)]
        # new options reset the menu to the first branch, which read as a pick
        # and switched to it: Branch and Adopt landed on main, not on theirs
        self._listing_branches = True
        try:
            if list(self.branches.options) != opts:
                self.branches.options = opts
            self.branches.value = s.current
        finally:
            self._listing_branches = False
        if self.target_dd.value != s.target:
            self.target_dd.value = s.target
        self.why_panel.clear()  # an explanation under way is about the candidate before
        self.finish_b.disabled = self.recipe_b.disabled = cand.is_fixed
        if cand.is_fixed and not self._was_fixed:  # what comes next: its code, Run
            self.tabs.selected_index = Tab.CODE
        self._was_fixed = cand.is_fixed
        gen, _, pending = self.choices.refresh(cand)
        self._show_selected()
        now = time.perf_counter()
        self.last_refresh_ms = (now - t0) * 1e3
        self.last_click_ms = (now - t_click) * 1e3  # the decision itself and the refresh
        self.show_status()
        self.choices.start_lookahead(gen, cand, pending)

    def show_status(self) -> None:
        """The status line: the bound, the choices left, the decisions, the
        best time measured. Also after a search's evaluations, which land in
        the store while no click refreshes (the line read 64.38 ms while the
        search had measured 2.21 ms)."""
        s, cand = self.session, self.session.cand
        b = s.bound()
        best = s.best_measured_ns(backend=self.backend)
        state = "fixed" if cand.is_fixed else plural(cand.open_count(), "open choice")
        best_text = (f"{fmt_time(best, 4)} on {html.escape(self.backend)}" if best else "—")
        self.status.value = (f"<span class='wb-status'><b>bound {fmt_time(b.value_ns, 4)}</b> on "
                             f"{html.escape(str(s.target))} · {state} · "
                             f"{plural(len(cand.trail), 'decision')} · best measured "
                             f"{best_text} {self.message} "
                             f"<span style='color:#888;font-size:85%'>"
                             f"({self.last_click_ms:.0f} ms in the kernel)</span></span>")

    def _relist(self) -> None:
        """The filter or the ranking changed: the choices column alone."""
        self.choices.start_lookahead(*self.choices.refresh(self.session.cand))

    def _show_selected(self) -> None:
        """Refresh and draw the panel on show; hidden panels wait until shown."""
        if self.tabs.selected_index is not None:
            panel = self.panels[Tab(self.tabs.selected_index)]
            panel.refresh()
            panel.show()


def _sizes(spec: dict) -> str:
    """A kernel spec's sizes as a person writes them: m=1024 · n=1024 · k=1024."""
    return " · ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}"
                      for k, v in spec.items() if k != "builder")


def backend_target(backend: str) -> str | None:
    """The hardware table the measuring backend's records use."""
    from workbench.runtime import get_backend
    try:
        return get_backend(backend).target
    except Exception:  # noqa: BLE001 - an unusable backend: the default target
        return None


def model_targets() -> list:
    """(label, name) of every target with a bound model."""
    from workbench.model.hardware import hardware
    from workbench.target import available_targets
    out = []
    for name in available_targets():
        try:
            hardware(name)
        except WorkbenchError:
            continue
        out.append((name, name))
    return out


# the tab bar wraps instead of cutting titles ("Domai", "Sparsit")
_STYLE = """<style>
.wb-explorer .lm-TabBar-content, .wb-explorer .p-TabBar-content { flex-wrap: wrap; }
.wb-explorer .lm-TabBar-tab, .wb-explorer .p-TabBar-tab { min-width: 0 !important;
  flex: 0 0 auto !important; max-width: none !important; }
.wb-explorer .lm-TabBar-tabLabel { overflow: visible; text-overflow: clip; }
/* the Domains grids lie over a note that shows until plotly has drawn them
   (the first time, a second or more) */
.wb-explorer .wb-grids { display: grid !important; }
.wb-explorer .wb-grids > * { grid-area: 1 / 1; }
.wb-explorer .wb-grids .wb-grids-note { align-self: start; padding: 8px; color: #666; }
.wb-explorer .wb-grids .js-plotly-plot { background: white; position: relative; z-index: 1; }
/* a figure takes its tab's width, never more: plotly draws one at 700 px where
   it cannot measure its place, and one drawn wide kept a narrowed tab wide */
.wb-explorer .jupyter-widget-TabPanel, .wb-explorer .widget-tab-contents,
.wb-explorer .widget-tab-contents *:has(> .js-plotly-plot),
.wb-explorer .widget-output, .wb-explorer .jp-OutputArea-child,
.wb-explorer .jp-OutputArea-output { min-width: 0; max-width: 100%; }
.wb-explorer .js-plotly-plot { max-width: 100%; overflow: hidden; }
.wb-explorer .jupyter-widget-TabPanel { width: 100%; }
""" + SPIN_CSS + "</style>"



def explore(kernel_or_candidate, **options) -> CandidateExplorer:
    """The explorer on a kernel (from its root candidate), a candidate or a
    `Session`; `options` as `CandidateExplorer` takes them (target,
    state_path, store, max_choices, backend, lookahead). Display the result
    (the last expression of a cell) to see it."""
    return CandidateExplorer(kernel_or_candidate, **options)


__all__ = ["CandidateExplorer", "Tab", "explore"]
