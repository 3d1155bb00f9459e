"""The candidate explorer, driven headlessly: clicks go through the widget
objects, assertions read the session and the panels' data."""

from __future__ import annotations

import json
import random
import re
import threading

import numpy as np
import pytest

import workbench as wb
from workbench.descent import random_fixed
from workbench.model.justification import fmt_time
from workbench.runtime.records import RecordStore
from workbench.session import Session
from workbench.witness import find_witness

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")
from widgets.explorer import CandidateExplorer, Tab


@pytest.fixture(scope="module")
def kernel():
    return wb.kernels.matmul(m=16, n=16, k=8)


def test_click_forces_a_decision_and_every_panel_follows(kernel, tmp_path):
    e = CandidateExplorer(kernel, state_path=tmp_path / "state.json", store=None,
                          backend="cpu", lookahead="off")
    e.tabs.selected_index = Tab.PATH  # hidden panels are drawn when shown
    ch = e.choices._shown[1][0]
    row = e.choices.rows()[0]
    assert row["label"] == wb.choice_label(e.session.cand, ch.name, ch.objects)
    value = next(v["v"] for v in row["values"] if not v["disabled"])
    e.choices.click(0, value)
    cand = e.session.cand
    assert list(cand.trail) == [wb.Decision(ch.name, ch.objects, (value,))]
    assert len(e.path_box.children) == 2  # root and the decision, each with its bound
    e.tabs.selected_index = Tab.BOUND
    assert "bound" in e.bound_html.value.lower() and "bound" in e.status.value
    assert "1 decision ·" in e.status.value and e.session.target in e.status.value
    assert (tmp_path / "state.json").exists()  # saved after the decision
    e.undo_b.click()
    assert len(e.session.cand.trail) == 0 and not e.redo_b.disabled
    e.redo_b.click()
    assert len(e.session.cand.trail) == 1
    e.choices.view.event({"kind": "undo"})  # the keys u / Ctrl+Z in the page
    assert len(e.session.cand.trail) == 0
    e.choices.view.event({"kind": "redo"})
    assert len(e.session.cand.trail) == 1
    e.filter.value = "size"
    assert e.choices.rows() and all(r["raw"].startswith("size(") for r in e.choices.rows())
    e.force("dim_kind", ("d0",), "NOPE")  # a bad decision: a message, nothing lost
    assert "NOPE" in e.status.value and len(e.session.cand.trail) == 1
    # a stale click (a row of an earlier refresh) does nothing
    e.choices.view.event({"kind": "force", "key": "order|nope", "value": "BEFORE"})
    assert len(e.session.cand.trail) == 1
    # no bare object id anywhere a person reads the column
    assert not any(re.search(r"\bd\d+\b", r["label"] + r["group"]) for r in e.choices.rows())


def test_fixed_candidate_code_run_timings_and_sparsity(kernel, tmp_path):
    store = RecordStore(tmp_path / "runs.jsonl")
    fixed = random_fixed(wb.Candidate.root(kernel), random.Random(2))
    s = Session(wb.Candidate.root(kernel), store=store)
    s.new_branch("fixed", fixed)
    e = CandidateExplorer(s, backend="cpu")
    assert "__global__" in e.code_html.value and not e.run_b.disabled
    g = wb.generate(fixed)  # the launch in words (it showed as a Python dict)
    grid = " × ".join(f"{x:,}" for x in g.launch["grid"])
    assert f"launch: a grid of {grid} blocks of" in e.code_html.value
    assert "{'grid'" not in e.code_html.value
    rec = e.run_current()
    assert rec["status"] == "ok" and len(store.rows()) == 1
    figs = e.refresh_timings()
    scatter = figs[0].data[0]
    assert len(scatter.x) == 1 and scatter.y[0] * 1e3 == pytest.approx(rec["median_ns"])
    fig = e.refresh_sparsity()
    assert fig is not None and any((t.name or "").startswith("tiles") for t in fig.data)
    assert e.session.best_measured_ns() == rec["median_ns"]
    # the Timings tab was replaying the shipped H200 records of this kernel
    e.panels[Tab.TIMINGS].close()
    t = e.panels[Tab.TIMINGS].bounding
    assert t is None or (t.join(10) or not t.is_alive())


@pytest.mark.parametrize("mode", ["process", "background"])
def test_lookahead_labels_every_value_and_a_stale_one_draws_nothing(kernel, mode):
    # four listed choices: the waits below are for every listed value's bound
    # and proof, three times (12 choices cost 50-70 s a mode)
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead=mode, max_choices=4)
    try:
        assert e.wait_lookahead(240)
        rows = e.choices.rows()
        assert rows and e.choices.view.labelled
        assert all(" · " in v["text"] or v["disabled"] for r in rows for v in r["values"])
        assert any(v["text"].startswith("✓") for r in rows for v in r["values"])
        if mode == "process":  # the listed choices shared among the workers
            assert sum(p.alive for p in e.choices._procs) == e.choices.workers
        e.hint.value = True  # the ranking's note stays once the labels are in
        assert e.wait_lookahead(240) and "bound" in e.choices.view.note
        gen = e._gen
        e.filter.value = "size"  # a refresh: a newer generation
        assert e._gen == gen + 1
        drawn = e.choices.rows()
        ch = e.choices._shown[1][0]
        e.choices._on_results([("opts", gen, 0, ch.name, list(ch.objects),
                                [{"value": v, "bound_ns": 1.0, "status": "dead"}
                                 for v in ch.values])])
        assert e.choices.rows() == drawn  # a stale generation draws nothing
        # a click while the worker is busy is answered by the kernel alone
        e.choices.click(0, 0)
        assert len(e.session.cand.trail) == 1 and e.wait_lookahead(240)
        assert all(" · " in v["text"] or v["disabled"]
                   for r in e.choices.rows() for v in r["values"])
    finally:
        e.close()


def test_a_listed_value_that_lowers_finds_its_problem_built(kernel):
    """The worker says which listed values' children lower a communication;
    the kernel builds those extended problems in the background, so the
    click on such a value does not."""
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead="process")
    try:
        e.filter.value = "dim_map"
        assert e.wait_lookahead(240)
        cand = e.session.cand
        lowering = [(ch, o) for ch in e.choices._shown[1]
                    for o in e.choices._labels[(e.choices._seen_as(cand), ch.name,
                                                ch.objects)][1]
                    if o.lowering]
        assert lowering, "no listed value lowers anything"
        assert e.choices._ahead == {o.lowering for _, o in lowering}
        assert e.choices._prebuild.wait_idle(240) and e.choices._prebuild.error is None
        built = {id(p) for p in cand.problem.root_problem._extensions.values()}
        ch, o = lowering[0]
        e.force(ch.name, ch.objects, o.value)
        assert e.session.cand.problem.fired == o.lowering
        assert id(e.session.cand.problem) in built
    finally:
        e.close()


def test_domain_grids_follow_an_order_decision(kernel):
    from widgets.domains import kinds_grid, order_grid
    from widgets.explorer import Tab
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead="off")
    cand = e.session.cand
    ch = next(c for c in cand.choices() if c.name == "order" and "BEFORE" in c.values
              and "AFTER" in c.values)
    a, b = ch.objects
    e.force("order", (a, b), "BEFORE")
    g = order_grid(e.session.cand)
    i, j = g["names"].index(a), g["names"].index(b)
    assert g["values"] == list(e.session.cand.problem.space.choices["order"].values)
    assert g["z"][i][j] == g["values"].index("BEFORE") and g["text"][i][j] == "B"
    assert g["z"][j][i] == g["values"].index("AFTER") and g["text"][j][i] == "A"
    e.tabs.selected_index = Tab.DOMAINS  # the grids are drawn while the tab is on show
    fig = e.grid_fig.data[0]  # the figure on the page shows the same matrix
    assert list(fig.x) == g["labels"] and fig.z[i][j] == 0  # objects in words
    k = kinds_grid(e.session.cand)
    dims = {c.objects[0]: c.values for c in e.session.cand.choices(include_fixed=True)
            if c.name == "dim_kind"}
    for d, row in zip(k["dims"], k["z"]):
        assert [kind for kind, z in zip(k["kinds"], row) if z] == \
            [kind for kind in k["kinds"] if kind in dims[d]]


def test_domain_grids_send_only_what_changed(kernel):
    """After the first draw a click restyles only the fields that changed,
    and the figures on the page always equal the grids of the candidate."""
    from widgets.domains import grid_data, grid_figure, update_grids
    from widgets.explorer import Tab
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead="off")
    e.tabs.selected_index = Tab.DOMAINS
    rng = random.Random(2)
    for _ in range(6):
        cand = e.session.cand
        ch = rng.choice([c for c in cand.choices() if c.name in ("dim_kind", "order")])
        e.force(ch.name, ch.objects, rng.choice(ch.values))
        want = grid_data(e.session.cand)
        for k, name in enumerate(("order", "kinds")):
            got = e.grid_fig.data[k]
            # NaN: no cell (the diagonal, unrelated objects)
            np.testing.assert_array_equal(np.asarray(got.z, dtype=float), want[name]["z"])
            assert list(got.y or []) == list(want[name]["y"] or [])
    # a grid of many objects keeps each cell's values for hover only
    from widgets.domains import TEXT_CELLS_UP_TO
    n = len(want["order"]["x"] or [])
    assert e.grid_fig.data[0].texttemplate == ("%{text}" if n <= TEXT_CELLS_UP_TO else "")
    # the same candidate again: nothing to send
    cand = e.session.cand
    fig = grid_figure(5, cand)
    sent = []
    for trace in fig.data:
        trace.on_change(lambda *a: sent.append(a), "z", "text", "x", "y")
    update_grids(fig, cand, grid_data(cand))
    assert sent == []
    assert len(fig.data) == 2  # one figure for both grids: one plotly.js module in the page


def test_check_and_reference_land_in_the_store_and_the_timings(kernel, tmp_path):
    store = RecordStore(tmp_path / "runs.jsonl")
    s = Session(wb.Candidate.root(kernel), store=store)
    e = CandidateExplorer(s, backend="cpu", lookahead="off")
    assert e.check_current() is None and "fix every choice" in e.run_out.value
    s.new_branch("fixed", random_fixed(wb.Candidate.root(kernel), random.Random(5)))
    e.refresh()
    rec = e.check_current()
    assert rec["status"] == "ok" and rec["x_max_error"] < 1e-4 and "correct" in e.run_out.value
    ref = e.run_reference()
    assert ref["status"] == "reference" and ref["reference"] == "numpy"
    assert len(ref["reference_times_ns"]) >= 10 and "numpy" in e.run_out.value
    assert [r["status"] for r in store.rows()] == ["ok", "reference"]
    assert e.session.best_measured_ns() == rec["median_ns"]  # a reference is no implementation
    scatter, cdf, best = e.refresh_timings()
    line = ref["reference_median_ns"]  # the Reference button's record, not a Check's aside
    assert any(t.name == "numpy" and t.y[0] * 1e3 == pytest.approx(line) for t in scatter.data)
    assert len(cdf.data[0].x) == 1 and cdf.data[0].x[0] >= 1.0  # measured ≥ bound
    assert len(best.data[0].y) == 1  # one implementation; the reference is a line


def test_fusion_tab_shows_the_graph_why_and_footprints(kernel):
    from widgets.explorer import Tab
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead="off")
    e.tabs.selected_index = Tab.FUSION
    out, info = e.fusion_box.children
    fig = out.figure  # drawn by the page's plotly renderer (widgets.figures)
    assert out.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"]
    assert "cannot fuse" in info.value and "violates" in info.value
    assert "ld_a-&gt;mad" in info.value or "ld_a->mad" in info.value
    names = set(fig.data[-1].hovertext)
    assert any(n.startswith("mad.k") for n in names)


def test_explore_takes_a_kernel_or_a_candidate_and_the_fusion_tab_reads_the_engine(kernel):
    from widgets import explore
    from widgets.explorer import Tab
    from widgets.fusion_view import fusion_html
    from workbench.poly import fusion_report
    root = wb.Candidate.root(kernel)
    for what in (kernel, root):
        e = explore(what, store=None, backend="cpu", lookahead="off")
        assert isinstance(e, CandidateExplorer) and e.session.cand.digest() == root.digest()
    rep = fusion_report(root)  # what the Fusion tab renders, from plain Python
    assert rep.graph.edges and rep.colouring.levels and rep.footprints
    e.tabs.selected_index = Tab.FUSION
    assert e.fusion_box.children[1].value == fusion_html(rep)
    assert [e.tabs.get_title(t) for t in Tab] == [t.name.capitalize() for t in Tab]


def _a_dead_value(c, rng):
    """(choice, value) of a value of `c` whose child dead-ends, choices in a
    random order (but the lowering ones, slow to try), or None."""
    choices = c.choices()
    for ch in rng.sample(choices, len(choices)):
        if ch.name == "dim_map":
            continue
        for v in ch.values:
            try:
                c.apply(ch.name, ch.objects, v)
            except wb.DeadEnd:
                return ch, v
    return None


def test_proven_values_finish_and_explained_dead_ends(kernel):
    """Every listed choice shows its witness's value as proven (green, ✓);
    Finish adopts the witness; a value that dead-ends is explained, and
    dropping a culprit re-applies every other decision."""
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead="sync")
    rows = e.choices.rows()
    assert rows
    for r in rows:
        assert any(v["text"].startswith("✓") for v in r["values"]), r["label"]
    rng = random.Random(5)
    found = None
    while found is None:  # random-order clicks on values with a witness (green)
        # until some value dead-ends, which a careless click then takes (the
        # root offers none since the pair clauses: one is searched for)
        c = e.session.cand
        assert not c.is_fixed, "no value dead-ended along the whole descent"
        found = _a_dead_value(c, rng) if len(c.trail) >= 3 else None
        if found is None:
            ch = rng.choice(c.choices())
            v = rng.choice(ch.values)
            child = c.apply(ch.name, ch.objects, v)
            if find_witness(child, rng=rng, budget_s=10).witness is not None:
                e.session.apply(ch.name, ch.objects, v)
    ch, v = found
    n = len(e.session.cand.trail)
    e.force(ch.name, ch.objects, v)
    assert len(e.session.cand.trail) == n  # nothing changed
    assert e.why.children and "dead end" in e.why.children[0].value
    assert [w.culprit for w in e.ways_out] == list(e.explanation.culprits)  # sync: done
    if any(w.status != "open" for w in e.ways_out):  # the legend speaks of the value tried
        assert "with the decision tried" in e.why.children[2].value
    drops = e.why.children[1].children
    if drops:
        drops[0].click()
        assert len(e.session.cand.trail) == n - 1
    said = []  # the status line during Finish (4–7 s on the thesis's matmuls): each phase
    e.status.observe(lambda ch: said.append(ch["new"]), names="value")
    e.finish_b.click()
    assert e.session.cand.is_fixed and e.finish_b.disabled
    assert any("finishing … following the least child bound" in x for x in said)
    assert any("moves on the bound" in x for x in said)
    assert "finishing" not in e.status.value  # the last word is the fixed candidate's


def test_a_stuck_choice_is_explained_in_a_thread_a_click_stops(tmp_path):
    """The explanation of a stuck choice runs beside the kernel: show_stuck
    returns at once with a placeholder, the explanation and its drop
    buttons follow; a click while it runs stops it, and nothing about the
    candidate left behind is drawn."""
    import time

    from test_witness import STUCK_ORDER
    kernel = wb.kernels.build_kernel("matmul", {"m": 64, "n": 64, "k": 32})
    c = wb.Candidate.root(kernel)
    for name, objs, value in STUCK_ORDER:
        c = c.apply(name, objs, value)
    e = CandidateExplorer(c, store=None, backend="cpu", lookahead="off")
    ch = next(ch for ch in e.session.cand.choices()
              if (ch.name, ch.objects) == ("order", ("d3", "d10")))
    t0 = time.perf_counter()
    e.show_stuck(ch)
    assert time.perf_counter() - t0 < 5.0  # the kernel is free at once
    assert "finding the earlier decisions" in e.why.children[0].value
    assert e.wait_explained(240)
    assert "leave no value" in e.why.children[0].value
    assert len(e.why.children[1].children) == len(e.explanation.culprits) == 5
    # then each drop button says where it leads: the rest may hold another conflict
    assert [w.culprit for w in e.ways_out] == list(e.explanation.culprits)
    for b, way in zip(e.why.children[1].children, e.ways_out):
        assert b.button_style == {"proven": "success", "dead": "danger", "open": ""}[way.status]
        assert b.tooltip.endswith(way.why)
    assert any(w.status == "dead" and "no longer replay" in w.why for w in e.ways_out)
    assert "leads to an implementation" in e.why.children[2].value
    drawn = e.explanation

    e.show_stuck(ch)
    e.filter.value = "order"  # the choices column alone: the explanation goes on
    assert e.wait_explained(240) and e.explanation is not drawn
    assert "leave no value" in e.why.children[0].value
    drawn = e.explanation

    e.show_stuck(ch)
    e.do(e.session.undo)  # a click: a newer generation, another candidate
    t0 = time.perf_counter()
    assert e.wait_explained(240)
    assert time.perf_counter() - t0 < 10  # stopped at its next check, not run to its end
    assert e.why.children == () and e.explanation is drawn  # nothing stale drawn


def test_force_recipe_takes_a_whole_plan_and_undo_walks_it_back(kernel, tmp_path):
    """Manual forcing of a recipe: the menu lists the plans that fit the
    kernel (`recipes.plans`); Force recipe takes each of its decisions as a
    step, so the candidate is the recipe's own and undo walks back one at a
    time; a plan an earlier decision rules out is a message and changes
    nothing; a kernel without recipes shows no menu."""
    from workbench.recipes import forced_candidate, plan_name
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead="off")
    labels = [label for label, _ in e.recipe_dd.options]
    assert labels[0] == "—" and "register_tiled_matmul(tm=2, tn=2, threads=4)" not in labels
    assert e.force_recipe() is None and "pick a recipe" in e.status.value
    # of the matmul plans, the 16×16×8 test matmul fits 2×2 tiles on 8×8 threads only,
    # the staged tiles padded or the padding left open
    assert labels[1:] == ["register_tiled_matmul(tm=2, tn=2, threads=8, padded=True)",
                          "register_tiled_matmul(tm=2, tn=2, threads=8)"]
    root = e.session.cand
    e.session.apply("dim_kind", (kernel.dims_by_label()["c_m1"],), "LOOP")
    n = len(e.session.cand.trail)
    for k, (recipe, options) in enumerate(e._plans):  # each refused: THREAD is gone
        assert isinstance(e.force_recipe(k), wb.WorkbenchError)
        assert len(e.session.cand.trail) == n and plan_name(recipe, options) in e.status.value
    e.undo_b.click()
    seen: list = []  # the status line while the recipe is being forced, as the page gets it
    e.status.observe(lambda ch: seen.append(ch["new"]), names="value")
    e.recipe_dd.value = 0
    e.recipe_b.click()
    assert "forcing register_tiled_matmul(" in seen[0] and "0 decisions taken" in seen[0]
    recipe, options = e._plans[0]
    want = forced_candidate(root, recipe, **options)
    counts = [int(m.group(1)) for v in seen for m in [re.search(r"(\d+) decisions? taken", v)]
              if m]
    assert counts == list(range(len(want.trail) - len(root.trail) + 1))  # one line a decision
    assert e.session.cand.digest() == want.digest() and e.recipe_b.disabled == want.is_fixed
    hist = e.session.branch.history
    assert all(len(c.trail) == i for i, c in enumerate(hist))
    e.undo_b.click()
    assert len(e.session.cand.trail) == len(want.trail) - 1
    none = CandidateExplorer(wb.kernels.batched_matmul(4, 8, 8, 4), store=None, backend="cpu",
                             lookahead="off")
    assert none.recipe_box.layout.display == "none"


def test_a_list_whose_values_all_read_one_bound_says_why():
    """A first visit on the CPU table: every button of the root read the
    same bound (0 of matmul 256's 1,013 choices move it there, 290 on
    h200's) and nothing said why. The list says so, and where to look;
    where the values differ it says nothing of the kind."""
    e = CandidateExplorer(wb.kernels.matmul(m=64, n=64, k=32), store=None, backend="cpu",
                          lookahead="sync")
    try:
        for target in (e.session.target, "h200"):
            e.do(e.session.set_target, target)
            cand, listed = e.choices._shown
            bounds = {round(o.bound_ns, 3) for ch in listed
                      for o in e.session.options(ch.name, ch.objects, cand)
                      if o.bound_ns is not None}
            said = "every value listed gives the same child bound" in e.choices.view.note
            assert said == (len(bounds) == 1), (target, len(bounds))
            if said:  # the bound named; a GPU table offered only on a CPU one
                assert fmt_time(next(iter(bounds)), 4) in e.choices.view.note
                assert ("pick a GPU table" in e.choices.view.note) == target.startswith("cpu")
            if target == "h200":
                assert len(bounds) > 1 and not said  # the GPU table tells them apart
            e.choices.hint.value = True  # ranking asked for: the ranking's own note instead
            assert "every value listed" not in e.choices.view.note
            e.choices.hint.value = False
    finally:
        e.close()


def test_the_line_under_a_filtered_list_says_what_it_leaves_out():
    """With a filter, the line under the list said '664 more open choices
    (filter to see them)' — and under 'no open choice matches' too."""
    e = CandidateExplorer(wb.kernels.matmul(m=64, n=64, k=32), store=None, backend="cpu",
                          lookahead="off", max_choices=4)
    try:
        n = len(e.session.cand.choices())
        assert e.choices.view.more == f"{n - 4} more open choices (filter to see them)"
        e.filter.value = "zzz"
        assert "matches the filter" in e.choices.view.note
        assert e.choices.view.more == f"{n} open choices do not match it"
        e.filter.value = "cache"
        k = sum(c.name == "cache" for c in e.session.cand.choices())
        assert 0 < k <= 4 and e.choices.view.more == f"{n - k} open choices do not match it"
        e.filter.value = "dim_kind"
        k = sum(c.name == "dim_kind" for c in e.session.cand.choices())
        assert e.choices.view.more == (f"{k - 4} more match the filter (narrow it to see them); "
                                       f"{n - k} open choices do not match it")
    finally:
        e.close()


_APART_ONLY_PROPAGATED = [  # matmul 64×64×32 on cpu_reference: no value moves the bound
    # alone (rank_choices finds nothing), two of the first twelve dim_kind choices' labels
    # differ (found again by a random-order descent, seed 8, once a temporary's accesses
    # stopped counting on CPU tables: the state before read alike there)
    ("order", ("d2", "d3"), "OUT"), ("thread_mapping", ("d27", "d29"), "OUT"),
    ("order", ("init", "d22"), "BEFORE"), ("thread_mapping", ("d4", "d26"), "NOT_THREADS"),
    ("order", ("ld_b", "d3"), "BEFORE"), ("order", ("d3", "d9"), "AFTER"),
    ("order", ("d10", "d25"), "OUT"), ("size", ("d5",), "8"), ("order", ("d17", "d26"), "IN"),
    ("order", ("d10", "d29"), "OUT"), ("thread_mapping", ("d1", "d6"), "MAPPED"),
    ("thread_mapping", ("d21", "d29"), "IN")]


@pytest.mark.parametrize("target, trail, only", [("h200", [], ""),
                                                 ("cpu_reference", _APART_ONLY_PROPAGATED,
                                                  "dim_kind")])
def test_the_ranked_list_follows_its_labels(target, trail, only):
    """"most discriminating first" ranked by each value's bound alone while
    the labels show bounds after propagation: in a browser it listed 'size …
    36.64 | 35.11 µs' above 'dim kind … 35.11 | 128.6 µs', and said that no
    choice moves the bound above a choice labelled 87.54 | 256.7 µs. Once
    the labels are in they decide the order."""
    from workbench.model.lookahead import rank_choices
    e = CandidateExplorer(wb.kernels.matmul(m=64, n=64, k=32), store=None, backend="cpu",
                          lookahead="sync")
    try:
        e.do(e.session.set_target, target)
        for name, objects, value in trail:
            e.force(name, objects, value)
        cand = e.session.cand
        moved = [r for r in rank_choices(cand, target) if r.spread_ns > 0]
        e.filter.value = only  # ld_b's and mad's kinds, whose labels differ there
        e.choices.hint.value = True
        assert e.wait_lookahead(240)
        cand, listed = e.choices._shown
        spreads = []
        for ch in listed:
            opts = e.session.options(ch.name, ch.objects, cand)
            b = [o.bound_ns for o in opts if o.bound_ns is not None]
            spreads.append((min(b), max(b)) if len(b) > 1 and max(b) > min(b) else None)
        k = sum(x is not None for x in spreads)
        assert k and all(x is not None for x in spreads[:k])  # every one apart comes first
        assert spreads[:k] == sorted(spreads[:k], key=lambda x: (-x[0], x[0] - x[1]))
        # the note counts what the labels show (it said that no choice moves the bound
        # where none moves it by its value alone, above labels that differ)
        assert f"{k} listed choice{'s' if k > 1 else ''} whose labels differ first" in \
            e.choices.view.note
        assert bool(moved) == (target == "h200")
    finally:
        e.close()


@pytest.mark.parametrize("mode", ["process", "background"])
def test_the_ranking_runs_beside_the_clicks(mode):
    """With "most discriminating first" ticked, every click waited for the
    ranking (it bounds every value of every choice the bound reads: 3.4 s
    at the root of matmul 64×64×32 on h200). It runs beside the clicks now
    (in a process of its own with the "process" look-ahead, in a thread
    otherwise): the list shows grouped with a note meanwhile, and ranked
    once it is done; a click on another candidate stops the old ranking;
    going back to a ranked candidate lists it ranked at once."""
    from workbench.model.lookahead import rank_choices
    kernel = wb.kernels.matmul(m=64, n=64, k=32)
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead=mode, max_choices=4)
    threads = lambda: {t for t in threading.enumerate()  # noqa: E731
                       if t.name == "explorer-ranking"}
    before = threads()
    try:
        e.target_dd.value = "h200"  # the CPU table ranks nothing at the root
        assert e.wait_lookahead(240)
        root = e.session.cand
        e.hint.value = True
        assert "ranking the choices" in e.choices.view.note  # the refresh did not wait
        e.hint.value = False  # unticked and ticked again while it runs: ranked anew
        assert e.choices._ranking is None and "ranking" not in e.choices.view.note
        e.hint.value = True
        assert e.wait_lookahead(240)
        assert "most discriminating first" in e.choices.view.note
        top = [(r.choice, r.objects) for r in rank_choices(root, "h200") if r.spread_ns > 0]
        n = min(4, len(top))  # the ranked first, the others grouped after them
        assert n and [(c.name, c.objects) for c in e.choices._shown[1]][:n] == top[:n]
        e.choices.click(0, 0)  # its ranking starts; undo before it is done
        child = e.session.cand
        # meanwhile the root's order (the rows moved three times a click: grouped,
        # ranked, then by the labels), said so
        assert "meanwhile in the order of the candidate before" in e.choices.view.note
        kept = {(c.name, c.objects) for c in child.choices()}
        first = [k for k in top if k in kept][:2]
        assert [(c.name, c.objects) for c in e.choices._shown[1]][:len(first)] == first or \
            e.choices._label_spread(child, e.choices._shown[1][0]) is not None
        e.do(e.session.undo)
        assert e.session.cand is root or e.session.cand.digest() == root.digest()
        assert "most discriminating first" in e.choices.view.note  # kept: at once
        assert e.wait_lookahead(240)
        assert e.choices._seen_as(child) not in e.choices._rankings  # stopped, not kept
        if mode == "process":  # ranked in the process, never in a thread here
            assert e.choices._ranker.alive and not threads() - before
    finally:
        e.close()


def test_a_ranking_process_that_dies_is_replaced_by_a_thread():
    """The ranking's process killed while it ranks (out of memory, say): the
    ranking is not lost waiting for an answer that never comes — a thread
    ranks instead, and the list is ranked."""
    e = CandidateExplorer(wb.kernels.matmul(m=64, n=64, k=32), store=None, backend="cpu",
                          lookahead="process", max_choices=4)
    try:
        e.target_dd.value = "h200"
        assert e.wait_lookahead(240)
        e.hint.value = True
        assert "ranking the choices" in e.choices.view.note
        e.choices._ranker._proc.kill()
        assert e.wait_lookahead(240)
        assert e.choices._seen_as(e.session.cand) in e.choices._rankings
        assert "ranking the choices" not in e.choices.view.note
        assert "gone" in e.choices._ranker.error or "ended" in e.choices._ranker.error
    finally:
        e.close()


def test_a_lookahead_process_that_dies_is_made_up_for():
    """The look-ahead's worker killed with a job under way: the labels it
    owed are computed in a thread (the spinner stayed for good), and the
    next click starts a new worker."""
    e = CandidateExplorer(wb.kernels.matmul(m=64, n=64, k=32), store=None, backend="cpu",
                          lookahead="process", max_choices=6)
    try:
        assert e.wait_lookahead(240)
        e.choices.click(0, 0)
        e.choices._procs[0]._proc.kill()  # the click's job just sent
        assert e.wait_lookahead(240)
        cand, listed = e.choices._shown
        final = e.choices._final()
        assert all(e.choices._label(cand, c)[0] >= final for c in listed)
        assert all(v["style"] != "pending" for r in e.choices.view.rows for v in r["values"])
        e.choices.click(0, 0)
        assert e.wait_lookahead(240) and e.choices._procs[0].alive
    finally:
        e.close()


def test_switching_the_target_relabels_every_value(kernel):
    """The labels were kept by candidate alone: after "bound on" moved from
    the CPU table to h200, the status line read 78.79 ns and every button
    still the CPU's 14.51 µs."""
    from workbench.model.justification import fmt_time
    e = CandidateExplorer(kernel, store=None, backend="cpu", lookahead="sync")
    try:
        for target in ("h200", "kepler_k4000", "h200"):
            e.target_dd.value = target  # as the menu does
            assert e.session.target == target
            cand, listed = e.choices._shown
            row = e.choices.view.rows[0]
            want = {o.value: o.bound_ns for o in e.session.options(listed[0].name,
                                                                   listed[0].objects, cand)}
            for v in row["values"]:
                if want.get(v["v"]) is not None:
                    assert fmt_time(want[v["v"]], 4) in v["text"], (target, v)
    finally:
        e.close()


def test_the_picker_opens_a_saved_state_that_no_longer_matches(tmp_path, monkeypatch):
    """A saved explorer state whose decisions replay to other domains (the
    propagation grew stronger since: the root's pair check changed axpy's
    roots) opens with its decisions, and the picker says so; one that no
    longer replays is moved aside, never deleted, and the kernel opens at
    its root. Before, the kernel could not be opened at all."""
    from widgets.picker import KernelPicker, state_path
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    kernel = wb.kernels.axpy(1024)
    path = state_path(kernel)
    s = wb.Session(wb.Candidate.root(kernel), path=path, store=None)
    ch = s.cand.choices()[0]
    s.apply(ch.name, ch.objects, ch.values[-1])
    saved = json.loads(path.read_text())
    saved["branches"][0]["digest"] = "0" * 64
    path.write_text(json.dumps(saved))
    with pytest.raises(wb.WorkbenchError, match="other domains"):
        wb.Session.load(path, store=None)  # strict by default
    p = KernelPicker("axpy", {"n": 1024}, store=None, lookahead="off", backend="cpu")
    e = p.open()
    assert e is not None and len(e.session.cand.trail) == 1
    assert "replay to other domains" in p.note.value
    saved["branches"][0]["trail"][0]["choice"] = "no_such_choice"
    path.write_text(json.dumps(saved))
    e = p.open()
    aside = path.with_name(path.name + ".unreadable")
    assert json.loads(aside.read_text()) == saved  # kept as it was
    assert e is not None and not e.session.cand.trail and "kept as" in p.note.value
    assert str(aside.name) in p.note.value
    # where it cannot be moved aside, it stays as it is and nothing writes over it
    aside.replace(path)
    monkeypatch.setattr(type(path), "replace", lambda self, to: (_ for _ in ()).throw(
        PermissionError(13, "Permission denied")))
    e = p.open()
    assert json.loads(path.read_text()) == saved and e.session.path is None
    assert "nor moved aside" in p.note.value and "saves nothing" in p.note.value
    e.session.apply(*next((c.name, c.objects, c.values[0]) for c in e.session.cand.choices()))
    assert json.loads(path.read_text()) == saved
