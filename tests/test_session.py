"""The explorer's state: undo/redo/jump/branches, bad decisions change
nothing, look-ahead options, save/load round trip with autosave."""

from __future__ import annotations

import json

import pytest

import workbench as wb
from workbench.runtime.records import RecordStore
from workbench.session import Session


@pytest.fixture(scope="module")
def root():
    return wb.Candidate.root(wb.kernels.matmul(m=16, n=16, k=8))


def test_undo_redo_jump_and_branches(root, tmp_path):
    s = Session(root, path=tmp_path / "state.json", store=None)
    c1 = s.apply("dim_kind", ("d0",), "BLOCK")
    s.apply("size", ("d1",), "2")
    assert len(s.cand.trail) == 2
    assert s.undo() is c1 and s.redo().trail[-1].choice == "size"
    s.jump(1)
    assert s.cand is c1
    s.apply("dim_kind", ("d2",), "THREAD")  # a new decision drops what was undone
    assert [d.choice for d in s.cand.trail] == ["dim_kind", "dim_kind"]
    with pytest.raises(wb.InvalidDecision):
        s.apply("dim_kind", ("d0",), "NOPE")
    assert len(s.cand.trail) == 2  # unchanged
    s.new_branch("alt")
    s.undo()
    assert s.current == 1 and len(s.cand.trail) == 1
    assert len(s.branches[0].cand.trail) == 2  # the other branch is untouched
    with pytest.raises(wb.WorkbenchError, match="already named"):
        s.new_branch("alt")


def test_a_candidates_session_starts_after_its_decisions(root, tmp_path):
    """A session opened on a candidate with decisions (`explore(cand)`)
    holds them as its first steps: step i has i decisions, so undo, jump,
    drop and saving see the same path a session that took them does."""
    c = root.apply("dim_kind", ("d0",), "BLOCK").apply("size", ("d1",), "2")
    s = Session(c, path=tmp_path / "state.json", store=None)
    assert s.cand is c and s.root is root and s.branch.pos == 2
    assert [len(h.trail) for h in s.branch.history] == [0, 1, 2]
    assert s.undo().digest() == root.apply("dim_kind", ("d0",), "BLOCK").digest()
    s.redo()
    assert s.drop(1).trail == c.trail[1:]
    assert Session.load(tmp_path / "state.json", store=None).cand.digest() == s.cand.digest()


def test_path_bounds_never_drop_and_options_carry_child_bounds(root):
    s = Session(root, target="h200", store=None)
    s.apply("dim_kind", ("d0",), "BLOCK")
    s.apply("size", ("d1",), "2")
    bounds = [b for _, _, b in s.path_bounds()]
    assert len(bounds) == 3 and all(b > 0 for b in bounds)
    ch = next(c for c in s.cand.choices() if c.name == "dim_kind")
    opts = s.options(ch.name, ch.objects)
    assert [o.value for o in opts] == sorted(ch.values)
    for o in opts:
        if o.bound_ns is not None:
            assert o.bound_ns >= s.bound().value_ns
            child = s.cand.apply(ch.name, ch.objects, o.value)
            assert o.bound_ns == max(wb.bound(child, "h200").value_ns, s.bound().value_ns)


def test_best_measured_marks_options(root, tmp_path):
    store = RecordStore(tmp_path / "runs.jsonl")
    store.append([{"sizes": root.kernel.spec(), "status": "ok", "median_ns": 1e-3,
                   "target": "h200", "backend": "cuda"},
                  # a CPU time is no best beside an h200 bound
                  {"sizes": root.kernel.spec(), "status": "ok", "median_ns": 1e-4,
                   "target": "cpu_reference", "backend": "cpu"}])
    s = Session(root, target="h200", store=store)
    assert s.best_measured_ns() == 1e-3 and s.best_measured_ns(backend="cpu") is None
    assert s.best_measured_ns(target="cpu_reference") == 1e-4
    ch = s.cand.choices()[0]
    assert all(o.above_best for o in s.options(ch.name, ch.objects) if o.bound_ns is not None)


def test_autosave_and_load_round_trip(root, tmp_path):
    path = tmp_path / "state.json"
    s = Session(root, path=path, store=None)
    s.apply("dim_kind", ("d0",), "BLOCK")
    s.new_branch("b")
    s.apply("size", ("d1",), "2")
    s.undo()
    saved = json.loads(path.read_text())  # written after every change
    assert saved["current"] == 1 and saved["branches"][1]["pos"] == 1
    t = Session.load(path, store=None)
    assert [b.name for b in t.branches] == ["main", "b"]
    assert t.cand.digest() == s.cand.digest()
    assert t.redo().digest() == s.redo().digest()
    path.write_text("{}")
    with pytest.raises(wb.WorkbenchError, match="not a workbench.explorer/1"):
        Session.load(path)
