"""The candidate explorer, driven headlessly: clicks go through the widget
objects, assertions read the session and the panels' data."""

from __future__ import annotations

import random

import pytest

import workbench as wb
from workbench.descent import random_fixed
from workbench.runtime.records import RecordStore
from workbench.session import Session

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")
from widgets.explorer import CandidateExplorer


@pytest.fixture(scope="module")
def kernel():
    return wb.kernels.matmul(m=16, n=16, k=8)


def test_click_forces_a_decision_and_every_panel_follows(kernel, tmp_path):
    e = CandidateExplorer(kernel, state_path=tmp_path / "state.json", store=None,
                          backend="cpu")
    before = e.bound_html.value
    row = e.choices_box.children[0]
    name = row.children[0].value
    btn = next(b for b in row.children[1:] if not b.disabled)
    btn.click()
    cand = e.session.cand
    assert len(cand.trail) == 1 and cand.trail[0].values[0] == btn.description.split(" ·")[0]
    assert cand.trail[0].choice in name
    assert len(e.path_box.children) == 2  # root and the decision, each with its bound
    assert e.bound_html.value != before or "bound" in e.status.value
    assert (tmp_path / "state.json").exists()  # saved after the decision
    e.undo_b.click()
    assert len(e.session.cand.trail) == 0 and not e.redo_b.disabled
    e.redo_b.click()
    assert len(e.session.cand.trail) == 1
    e.filter.value = "mem_space"
    assert all("mem_space" in r.children[0].value for r in e.choices_box.children
               if hasattr(r, "children"))
    e.force("dim_kind", ("d0",), "NOPE")  # a bad decision: a message, nothing lost
    assert "NOPE" in e.status.value and len(e.session.cand.trail) == 1


def test_fixed_candidate_code_run_timings_and_sparsity(kernel, tmp_path):
    store = RecordStore(tmp_path / "runs.jsonl")
    fixed = random_fixed(wb.Candidate.root(kernel), random.Random(2))
    s = Session(wb.Candidate.root(kernel), store=store)
    s.new_branch("fixed", fixed)
    e = CandidateExplorer(s, backend="cpu")
    assert "__global__" in e.code_html.value and not e.run_b.disabled
    rec = e.run_current()
    assert rec["status"] == "ok" and len(store.rows()) == 1
    figs = e.refresh_timings()
    scatter = figs[0].data[0]
    assert len(scatter.x) == 1 and scatter.y[0] * 1e3 == pytest.approx(rec["median_ns"])
    fig = e.refresh_sparsity()
    assert fig is not None and len(fig.layout.shapes) > 0  # the tiles of the size decisions
    assert e.session.best_measured_ns() == rec["median_ns"]
