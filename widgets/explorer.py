"""The candidate explorer: one `display(CandidateExplorer(kernel))` away from
a kernel. Views only — every number comes from `workbench.session.Session`
and the engine; clicks call the session.

Panels: choices (each remaining value with the bound of its child, dead ends
and values whose bound reaches the best measured time marked, a click forces
the decision), bound (value, one sentence, the justification tree), path
(each decision with the bound after it; jump back to any step), domains
(remaining values per generic choice, what the last decision pruned and by
which constraint), code (CUDA of a fixed candidate; Run measures it on the
GPU when there is one, else on the CPU, into the record store), timings
(bound against measured, the CDF of measured/bound, best against
evaluations), sparsity (regions of the output with the tiles the size
decisions imply) and search (from the current candidate; adopt its best as
a branch).
"""

from __future__ import annotations

import html
import threading
import time

from workbench.errors import DeadEnd, InvalidDecision, WorkbenchError
from workbench.model.justification import fmt_time
from workbench.model.lookahead import Stopped
from workbench.session import Session

from .choices import ValueRow, label_buttons
from .domains import grid_figures, update_grids


def _w():
    import ipywidgets
    return ipywidgets


class CandidateExplorer:
    def __init__(self, kernel_or_session, target: str | None = None, state_path=None,
                 store="default", max_choices: int = 12, backend: str | None = None,
                 lookahead: str = "background"):
        """`lookahead`: "background" fills each value's child bound after the
        click has updated every other panel (a click stays fast on big
        kernels), "sync" before returning, "off" never."""
        import workbench as wb
        if isinstance(kernel_or_session, Session):
            self.session = kernel_or_session
        else:
            root = kernel_or_session if isinstance(kernel_or_session, wb.Candidate) \
                else wb.Candidate.root(kernel_or_session)
            self.session = Session(root, target, state_path, store)
        self.max_choices = max_choices
        if lookahead not in ("background", "sync", "off"):
            raise WorkbenchError(f"lookahead must be background, sync or off, not {lookahead!r}")
        self.lookahead = lookahead
        self._gen = 0  # bumped by every refresh: a stale look-ahead stops
        self._worker: threading.Thread | None = None
        self.last_lookahead_ms = 0.0
        self.last_click_ms = 0.0
        self._t_click: float | None = None
        self.backend = backend or _default_backend()
        self.message = ""
        self.last_refresh_ms = 0.0
        self._build()
        self.refresh()

    # ------------------------------------------------------------- layout
    def _build(self) -> None:
        w = _w()
        self.title = w.HTML()
        self.status = w.HTML()
        self.undo_b = w.Button(description="Undo", icon="undo")
        self.redo_b = w.Button(description="Redo", icon="repeat")
        self.reset_b = w.Button(description="Reset")
        self.branch_b = w.Button(description="Branch", icon="code-fork")
        self.branches = w.Dropdown(description="branch", layout=w.Layout(width="220px"))
        self.undo_b.on_click(lambda _: self._do(self.session.undo))
        self.redo_b.on_click(lambda _: self._do(self.session.redo))
        self.reset_b.on_click(lambda _: self._do(self.session.reset))
        self.branch_b.on_click(lambda _: self._do(self.session.new_branch))
        self.branches.observe(self._on_branch, names="value")
        self.filter = w.Text(placeholder="filter: choice or object", layout=w.Layout(width="260px"))
        self.filter.observe(lambda _: self._start_lookahead(*self._refresh_choices()),
                            names="value")
        self.hint = w.Checkbox(description="most discriminating first", value=False)
        self.hint.observe(lambda _: self._start_lookahead(*self._refresh_choices()),
                          names="value")
        self.choices_box = w.VBox()
        self.choices_box.add_class("wb-choices")  # for the browser test
        self._rows: list = []
        self._more = w.HTML()
        self._path_rows: list = []
        self.bound_html = w.HTML()
        self.path_box = w.VBox()
        self.domains_html = w.HTML()
        self.order_fig, self.kinds_fig = grid_figures()
        self.code_html = w.HTML()
        self.run_b = w.Button(description="Run", icon="play",
                              tooltip="measure on the GPU if there is one, else the CPU")
        self.check_b = w.Button(description="Check", icon="check",
                                tooltip="run once and compare the result with numpy")
        self.ref_b = w.Button(description="Reference", icon="book",
                              tooltip="time cuBLAS (GPU) or numpy (CPU) for the same sizes")
        self.run_b.on_click(lambda _: self.run_current())
        self.check_b.on_click(lambda _: self.check_current())
        self.ref_b.on_click(lambda _: self.run_reference())
        self.run_out = w.HTML()
        self.timings_box = w.VBox()
        self.sparsity_box = w.VBox()
        self.search_budget = w.BoundedIntText(value=20, min=1, max=10000, description="budget")
        self.search_b = w.Button(description="Search", icon="search")
        self.adopt_b = w.Button(description="Adopt best as branch", disabled=True)
        self.search_b.on_click(lambda _: self.start_search())
        self.adopt_b.on_click(lambda _: self.adopt_search())
        self.search_box = w.VBox([w.HBox([self.search_budget, self.search_b, self.adopt_b])])
        self.fusion_box = w.VBox()
        self._fcg = None  # (graph, colouring) of the kernel, built on first show
        self.tabs = w.Tab(children=[
            self.bound_html, self.path_box,
            w.VBox([self.domains_html, w.HBox([self.order_fig, self.kinds_fig])]),
            w.VBox([w.HBox([self.run_b, self.check_b, self.ref_b]), self.run_out,
                    self.code_html]),
            self.timings_box, self.sparsity_box, self.search_box, self.fusion_box])
        for k, t in enumerate(("Bound", "Path", "Domains", "Code", "Timings", "Sparsity",
                               "Search", "Fusion")):
            self.tabs.set_title(k, t)
        self.tabs.observe(lambda _: self._refresh_lazy(), names="selected_index")
        left = w.VBox([w.HBox([self.filter, self.hint]), self.choices_box],
                      layout=w.Layout(width="46%"))
        self.widget = w.VBox([
            self.title, w.HBox([self.undo_b, self.redo_b, self.reset_b, self.branch_b,
                                self.branches]),
            self.status, w.HBox([left, w.Box([self.tabs], layout=w.Layout(width="54%"))])])
        self.widget.add_class("wb-explorer")
        self.search = None

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)

    # ------------------------------------------------------------- actions
    def _do(self, fn, *args) -> None:
        self._t_click = time.perf_counter()
        self._gen += 1  # a running look-ahead is stale now: stop competing with this click
        try:
            fn(*args)
            self.message = ""
        except (InvalidDecision, DeadEnd, WorkbenchError) as exc:
            self.message = f"<span style='color:#b00'>{html.escape(str(exc))}</span>"
        self.refresh()

    def force(self, choice: str, objects, value) -> None:
        """What a click on a value does."""
        self._do(self.session.apply, choice, tuple(objects), value)

    def _on_branch(self, change) -> None:
        if change["new"] is not None and change["new"] != self.session.current:
            self._do(self.session.switch, change["new"])

    def _evaluate(self, samples: int) -> dict | None:
        from workbench.runtime import evaluate
        cand = self.session.cand
        if not cand.is_fixed:
            self.run_out.value = "fix every choice first"
            return None
        return evaluate([cand], self.backend, store=self.session.store, samples=samples)[0]

    def run_current(self) -> dict | None:
        """Run: measure the fixed candidate (every sample into the store)."""
        from workbench.runtime import summary
        rec = self._evaluate(samples=20)
        if rec is None:
            return None
        s = summary(rec)
        ref = (f", {html.escape(s['reference'])} {fmt_time(s['reference_median_ns'])}"
               if s.get("reference_median_ns") else "")
        self.run_out.value = (f"<b>{s['status']}</b> on {self.backend}: median "
                              f"{fmt_time(s['median_ns']) if s['median_ns'] else '—'} "
                              f"(bound {fmt_time(s['bound_ns'])}{ref}) "
                              f"{html.escape(s['message'][:200])}")
        self.refresh()
        return rec

    def check_current(self) -> dict | None:
        """Check: the result against numpy (the fewest samples a record takes)."""
        rec = self._evaluate(samples=1)
        if rec is None:
            return None
        if rec["status"] == "ok":
            self.run_out.value = (f"<b style='color:#080'>correct</b> on {self.backend}: "
                                  f"normwise relative error {rec.get('x_max_error', 0):.3g} "
                                  f"against numpy")
        else:
            self.run_out.value = (f"<b style='color:#b00'>{rec['status']}</b> on "
                                  f"{self.backend}: {html.escape(rec['message'][:300])}")
        self.refresh()
        return rec

    def run_reference(self) -> dict:
        """Reference: cuBLAS / numpy alone for the kernel's sizes, into the store."""
        from workbench.runtime import measure_reference
        rec = measure_reference(self.session.root.problem.root_problem.kernel, self.backend,
                                store=self.session.store)
        self.run_out.value = (f"<b>{html.escape(str(rec['reference']))}</b> on {self.backend}: "
                              f"median {fmt_time(rec['reference_median_ns'])}"
                              if rec["status"] == "reference" else
                              f"<b>{rec['status']}</b>: {html.escape(rec['message'])}")
        self.refresh()
        return rec

    def start_search(self):
        from workbench.search import Search

        from .search_view import SearchProgress
        self.search = Search(self.session.cand, self.backend, budget=self.search_budget.value,
                             workers=0, store=self.session.store)
        view = SearchProgress(self.search.budget, "search").attach(self.search)
        self.search.callbacks.append(lambda ev: setattr(self.adopt_b, "disabled", False))
        self.search_box.children = [self.search_box.children[0], view.widget()]
        return self.search.run_in_background()

    def adopt_search(self) -> None:
        if self.search is None or self.search.best_candidate() is None:
            return
        self._do(self.session.new_branch, f"search {len(self.session.branches)}",
                 self.search.best_candidate())

    # ------------------------------------------------------------- refresh
    def refresh(self) -> None:
        """Every panel from the session. The status line is written last (it
        tells how long the click took in the kernel), and the look-ahead of
        the listed values starts only after every panel has been sent."""
        t0 = time.perf_counter()
        t_click, self._t_click = self._t_click or t0, None
        s, cand = self.session, self.session.cand
        b = s.bound()
        best = s.best_measured_ns()
        state = "fixed" if cand.is_fixed else f"{cand.open_count()} open choices"
        self.title.value = (f"<h3 style='margin:4px 0'>{html.escape(cand.kernel.name)} "
                            f"{html.escape(str(cand.problem.root_problem.kernel.spec()))}</h3>")
        self.undo_b.disabled = s.branch.pos == 0
        self.redo_b.disabled = s.branch.pos + 1 >= len(s.branch.history)
        opts = [(br.name, k) for k, br in enumerate(s.branches)]
        if list(self.branches.options) != opts:
            self.branches.options = opts
        self.branches.value = s.current
        gen, _, pending = self._refresh_choices()
        self._refresh_bound(b)
        self._refresh_path()
        self._refresh_domains()
        self._refresh_code()
        self._refresh_lazy()
        now = time.perf_counter()
        self.last_refresh_ms = (now - t0) * 1e3
        self.last_click_ms = (now - t_click) * 1e3  # the decision itself and the refresh
        self.status.value = (f"<b>bound {fmt_time(b.value_ns)}</b> · {state} · "
                             f"{len(cand.trail)} decisions · best measured "
                             f"{fmt_time(best) if best else '—'} {self.message} "
                             f"<span style='color:#888;font-size:85%'>"
                             f"({self.last_click_ms:.0f} ms in the kernel)</span>")
        self._start_lookahead(gen, cand, pending)

    def _listed(self, chs: list) -> list:
        """The open choices `chs` on show: filtered, ranked when asked, cut."""
        cand = self.session.cand
        f = self.filter.value.strip().lower()
        if f:
            chs = [c for c in chs if f in c.name.lower() or any(f in o.lower() for o in c.objects)]
        if self.hint.value and chs:
            from workbench.model.lookahead import rank_choices
            try:
                rank = {(r.choice, r.objects): k for k, r in
                        enumerate(rank_choices(cand, self.session.target,
                                               parent=self.session.bound()))}
            except WorkbenchError:
                rank = {}
            chs.sort(key=lambda c: rank.get((c.name, c.objects), len(rank)))
        return chs[:self.max_choices]

    def _refresh_choices(self) -> tuple:
        """Rows for the listed choices, labelled from the look-ahead cache;
        (generation, candidate, rows still to label) for `_start_lookahead`.
        Rows and buttons are kept and re-labelled, never rebuilt: creating
        widgets costs the browser far more than changing their text."""
        self._gen += 1
        gen, cand = self._gen, self.session.cand
        open_choices = cand.choices()
        listed = self._listed(open_choices)
        while len(self._rows) < len(listed):
            self._rows.append(ValueRow(self.force))
        pending = []
        for row, ch in zip(self._rows, listed):
            opts = self.session.cached_options(ch.name, ch.objects, cand)
            row.show(ch, opts)
            if opts is None:
                pending.append((ch, row.buttons_for(ch)))
        for row in self._rows[len(listed):]:
            row.hide()
        more = len(open_choices) - len(listed)
        self._more.value = f"<i>{more} more open choices (filter to see them)</i>" \
            if more > 0 else ""
        children = (*[r.box for r in self._rows], self._more)
        if self.choices_box.children != children:
            self.choices_box.children = children
        return gen, cand, pending

    def _start_lookahead(self, gen: int, cand, pending: list) -> None:
        if not pending or self.lookahead == "off":
            return
        if self.lookahead == "sync":
            self._fill(gen, cand, pending)
        else:
            self._worker = threading.Thread(target=self._fill, args=(gen, cand, pending),
                                            daemon=True, name="explorer-lookahead")
            self._worker.start()

    def _fill(self, gen: int, cand, pending: list) -> None:
        """Each listed value's child bound; stops as soon as a newer refresh
        (another click) has made this candidate stale."""
        t0 = time.perf_counter()
        for ch, buttons in pending:
            if gen != self._gen:
                return
            try:
                label_buttons(buttons, self.session.options(ch.name, ch.objects, cand,
                                                     stop=lambda: gen != self._gen))
            except Stopped:
                return
            except WorkbenchError as exc:
                for b in buttons.values():
                    b.tooltip = f"no look-ahead: {exc}"
        self.last_lookahead_ms = (time.perf_counter() - t0) * 1e3

    def wait_lookahead(self, timeout: float | None = None) -> None:
        """Block until the background look-ahead of the last refresh is done."""
        if self._worker is not None:
            self._worker.join(timeout)

    def _refresh_bound(self, b) -> None:
        self.bound_html.value = (f"<p><b>{fmt_time(b.value_ns)}</b> on {html.escape(b.target)}: "
                                 f"{html.escape(b.justification.text)}</p>"
                                 + b.justification.to_html())

    def _refresh_path(self) -> None:
        w = _w()
        steps = self.session.path_bounds()
        while len(self._path_rows) < len(steps):
            k = len(self._path_rows)
            btn = w.Button(description=f"{k}", layout=w.Layout(width="48px"),
                           tooltip=f"back to the candidate after step {k}")
            btn.on_click(lambda _, k=k: self._do(self.session.jump, k))
            self._path_rows.append(w.HBox([btn, w.HTML()]))
        prev = None
        for (step, d, ns), row in zip(steps, self._path_rows):
            what = "root" if d is None else \
                f"{d.choice}({', '.join(d.objects)}) = {'|'.join(d.values)}"
            raised = "" if prev is None or ns <= prev else \
                f" <span style='color:#b00'>+{fmt_time(ns - prev)}</span>"
            text = f"{html.escape(what)} → {fmt_time(ns)}{raised}"
            btn, label = row.children
            if label.value != text:
                label.value = text
            style = "info" if step == self.session.branch.pos else ""
            if btn.button_style != style:
                btn.button_style = style
            prev = ns
        children = tuple(self._path_rows[:len(steps)])
        if self.path_box.children != children:
            self.path_box.children = children

    def _refresh_domains(self) -> None:
        cand = self.session.cand
        per: dict = {}
        for ch in cand.choices(include_fixed=True):
            n_open, n_all, vals = per.get(ch.name, (0, 0, 0))
            per[ch.name] = (n_open + (len(ch.values) > 1), n_all + 1, vals + len(ch.values))
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{o}</td><td>{a}</td><td>{v}</td></tr>"
                       for k, (o, a, v) in sorted(per.items()))
        pruned = "".join(f"<li>{html.escape(str(p))}</li>" for p in cand.pruned()[:40])
        self.domains_html.value = (
            "<table><tr><th>choice</th><th>open</th><th>instances</th><th>values left</th></tr>"
            f"{rows}</table><p><b>last decision pruned</b></p><ul>{pruned or '<li>—</li>'}</ul>"
            "<p style='font-size:85%'>order grid: B before, A after, I in (row nested in "
            "column), O out, M merged; grey cells are still open. Kinds: dark decided, "
            "light possible, white pruned.</p>")
        if self.tabs.selected_index == 2:  # redrawing hidden figures costs the page
            update_grids(self.order_fig, self.kinds_fig, cand)

    def _refresh_code(self) -> None:
        cand = self.session.cand
        self.run_b.disabled = self.check_b.disabled = not cand.is_fixed
        if not cand.is_fixed:
            self.code_html.value = "<i>the CUDA appears once every choice is fixed</i>"
            return
        from workbench.codegen import generate
        g = generate(cand)
        self.code_html.value = (f"<div style='font-size:11px;max-height:420px;overflow:auto'>"
                                f"{_highlight(g.cuda)}</div><p>launch {g.launch}</p>")

    def _refresh_lazy(self) -> None:
        tab = self.tabs.selected_index
        if tab == 2:
            update_grids(self.order_fig, self.kinds_fig, self.session.cand)
        elif tab == 4:
            self.refresh_timings()
        elif tab == 5:
            self.refresh_sparsity()
        elif tab == 7:
            self.refresh_fusion()

    def refresh_timings(self):
        from .timings_view import timing_figures
        figs = timing_figures(self.session.records())
        self.timings_box.children = figs or [_w().HTML(
            "<i>no measurement of this kernel yet: fix a candidate and Run, or Search</i>")]
        return self.timings_box.children

    def refresh_fusion(self):
        """The kernel's fusion conflict graph with its colouring, why each
        fusion is impossible, and the footprint (bytes, MARS) of one tile of
        every consumer under the current size decisions."""
        import plotly.graph_objects as go

        from workbench.poly import from_kernel
        from workbench.poly.fcg import build_fcg, colour
        from workbench.poly.tiles import tile_footprints

        from .poly_view import fcg_figure
        kernel = self.session.root.problem.root_problem.kernel
        try:
            if self._fcg is None:
                prog = from_kernel(kernel)
                self._fcg = (build_fcg(prog), colour(prog))
            g, c = self._fcg
            fps = tile_footprints(self.session.cand)
        except WorkbenchError as exc:
            self.fusion_box.children = [_w().HTML(f"<i>{html.escape(str(exc))}</i>")]
            return None
        edges = "".join(f"<tr><td>{html.escape(' ✗ '.join(sorted(g.name(v) for v in e)))}"
                        f"</td><td>{html.escape(r)}</td></tr>" for e, r in g.edges.items())
        perms = ", ".join(f"{s}: ({', '.join(c.permutation(s))})" for s in g.dims)
        rows = "".join(
            f"<tr><td>{html.escape(f.dependence)}</td><td>{f.tile}</td>"
            f"<td>{f.mars.footprint_size:,}</td><td>{f.bytes:,} B</td>"
            f"<td>{len(f.mars.parts)}</td><td>{', '.join(f.shared) or '—'}</td></tr>"
            for f in fps)
        info = _w().HTML(
            f"<p><b>colouring</b> (outermost first): {html.escape(perms)}; "
            f"{len(c.cuts)} cut(s)</p><table><tr><th>cannot fuse</th><th>why</th></tr>"
            f"{edges}</table><p><b>one tile's footprint</b> (tiles from the size "
            f"decisions{'' if all(f.fixed for f in fps) else '; open sizes: smallest tile'})"
            f"</p><table><tr><th>dependence</th><th>tile</th><th>elements</th><th>bytes</th>"
            f"<th>MARS</th><th>in SHARED</th></tr>{rows}</table>")
        fig = go.FigureWidget(fcg_figure(g, c))
        self.fusion_box.children = [fig, info]
        return fig

    def refresh_sparsity(self):
        import islpy as isl

        from workbench.volume import Program, regions
        from workbench.volume.kernels import tile_sizes, volume_spec

        from .volume_view import region_heatmap
        cand = self.session.cand
        try:
            reg = regions(Program.from_spec(volume_spec(cand.problem.root_problem.kernel)))
        except WorkbenchError as exc:
            self.sparsity_box.children = [_w().HTML(f"<i>{html.escape(str(exc))}</i>")]
            return None
        sizes, fixed = tile_sizes(cand)
        n = len(reg.domain.get_var_names(isl.dim_type.set))
        if n < 2:
            self.sparsity_box.children = [_w().HTML(f"regions: {reg.counts()}")]
            return None
        fig = region_heatmap(reg, {d: 0 for d in range(n - 2)}, (-2, -1), sizes,
                             title=f"{reg.output}: tiles {sizes}"
                                   f"{'' if fixed else ' (smallest still possible)'}")
        import plotly.graph_objects as go
        self.sparsity_box.children = [go.FigureWidget(fig)]
        return fig


def _highlight(code: str) -> str:
    """CUDA as coloured HTML (Pygments, which IPython brings); plain without it."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import CudaLexer
    except ImportError:
        return f"<pre>{html.escape(code)}</pre>"
    return highlight(code, CudaLexer(), HtmlFormatter(noclasses=True, nowrap=False))


def _default_backend() -> str:
    from workbench.runtime.cuda import CudaBackend
    try:
        return "cuda" if CudaBackend().device != "none" else "cpu"
    except Exception:  # noqa: BLE001 - no CuPy, a broken driver: the CPU measures
        return "cpu"


__all__ = ["CandidateExplorer"]
