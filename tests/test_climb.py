"""Climbing the bound (`workbench.search.climb`): each move stays below the
start and changes a decision; the climb never raises its bound, is exact on
replay, and a search that climbs its rollouts records climbed leaves whose
code matches numpy."""

from __future__ import annotations

import functools
import json
import random

import pytest
from gpu_cases import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench as wb
from workbench.descent import descend
from workbench.errors import WorkbenchError
from workbench.runtime.records import RecordStore
from workbench.search import Search, SearchOptions
from workbench.search.climb import climb, climb_move, keep_applicable


@functools.cache
def _kernel(m=16, n=16, k=8):
    return wb.kernels.matmul(m=m, n=n, k=k)


def _root(**sizes):
    return wb.Candidate.root(_kernel(**sizes))


def _bound_fn(target="h200"):
    return lambda c: wb.bound(c, target).value_ns


def _leaf(start, seed):
    return descend(start, random.Random(seed), backtrack=True).candidate


def test_a_live_trail_is_kept_whole():
    """The decisions of a fixed candidate all apply again: the same leaf."""
    root = _root()
    leaf = _leaf(root, 1)
    assert keep_applicable(root, leaf.trail).digest() == leaf.digest()


def test_a_misfit_is_let_go_and_the_rest_kept():
    """A decision that contradicts what was decided first is dropped; every
    other decision of the trail still holds in the result."""
    root = _root()
    leaf = _leaf(root, 2)
    first = next(d for d in leaf.trail if len(root.domain(d.choice, d.objects)) > 1
                 and (d.choice, d.objects) in root.problem.index)
    other = sorted(root.domain(first.choice, first.objects) - set(first.values))[0]
    try:
        changed = root.apply(first.choice, first.objects, other)
    except wb.DeadEnd:
        pytest.skip("that value dead-ends at the root")
    got = keep_applicable(changed, leaf.trail)
    assert got.value(first.choice, first.objects) == other
    kept = [d for d in leaf.trail if d != first and (d.choice, d.objects) in got.problem.index
            and got.domain(d.choice, d.objects) <= set(d.values)]
    assert len(kept) >= len(leaf.trail) // 2  # one misfit does not cost the trail


@given(st.integers(0, 10_000), st.integers(0, 3))
@settings(max_examples=examples(8), deadline=None)
def test_climb_laws(seed, forced):
    """From any start (the root, or a few decisions forced as a person
    would): every move ends at a fixed candidate below the start that
    differs from the leaf it left; the climb's bound never rises, is the
    bound of the candidate it returns, and the same seed climbs the same way."""
    rng = random.Random(seed)
    start = _root()
    for _ in range(forced):  # a person's decisions, in random order
        ch = rng.choice(start.choices())
        try:
            start = start.apply(ch.name, ch.objects, rng.choice(sorted(ch.values)))
        except wb.DeadEnd:
            continue
    leaf = descend(start, rng, backtrack=True).candidate
    if leaf is None:
        return
    m = climb_move(start, leaf, random.Random(seed))
    if m is not None:
        assert m.is_fixed and m.trail[:len(start.trail)] == start.trail
        assert m.digest() != leaf.digest()
    f = _bound_fn()
    c = climb(start, leaf, f, random.Random(seed), steps=6)
    assert c.candidate.is_fixed and c.candidate.trail[:len(start.trail)] == start.trail
    assert c.bound_ns <= c.start_ns == f(leaf)
    assert c.bound_ns == f(c.candidate)
    assert [b for _, b in c.improved] == sorted((b for _, b in c.improved), reverse=True)
    again = climb(start, leaf, f, random.Random(seed), steps=6)
    assert again.candidate.digest() == c.candidate.digest()
    # the climbed leaf replays from its trail to itself
    replayed = wb.Candidate.replay(_kernel(), [d.to_dict() for d in c.candidate.trail])
    assert replayed.digest() == c.candidate.digest()


def test_climb_refuses_a_leaf_from_elsewhere():
    root = _root()
    start = root.apply("dim_kind", ("d0",), "BLOCK")
    leaf = _leaf(root.apply("dim_kind", ("d0",), "LOOP"), 0)
    with pytest.raises(WorkbenchError, match="extend start"):
        climb(start, leaf, _bound_fn(), random.Random(0), steps=1)
    with pytest.raises(WorkbenchError, match="fixed"):
        climb(root, start, _bound_fn(), random.Random(0), steps=1)


def test_climb_lowers_the_bound_of_a_matmul_leaf():
    """Forty moves from a uniform leaf of matmul 64×64×32 find a leaf bounded
    lower (the seed's first leaf is bounded far from the best)."""
    root = _root(m=64, n=64, k=32)
    leaf = _leaf(root, 5)
    c = climb(root, leaf, _bound_fn(), random.Random(5), steps=40)
    assert c.improved and c.bound_ns < c.start_ns


def test_a_climbing_search_measures_climbed_leaves(tmp_path):
    """Each record of a search with `climb` names its climb; the measured
    leaf is the climbed one (its bound the climb's end), verified against
    numpy, below the forced decision, and never faster than its bound."""
    start = _root().apply("dim_kind", ("d0",), "BLOCK")
    store = RecordStore(tmp_path / "runs.jsonl")
    s = Search(start, "cpu", budget=3, workers=0, store=store, seed=4, climb=5)
    out = s.run()
    assert out["evaluations"] == 3 and out["climb"] == 5
    for r in store.rows():
        cl = r["search"]["climb"]
        assert cl["steps"] == 5 and cl["bound_ns"] <= cl["start_ns"]
        assert r["status"] == "ok" and r["verified"]
        assert r["trail"][0] == {"choice": "dim_kind", "objects": ["d0"], "value": "BLOCK"}
        assert r["bound_ns"] <= min(r["times_ns"])
        cand = wb.Candidate.replay(_kernel(), r["trail"])
        assert wb.bound(cand, s.target).value_ns == pytest.approx(cl["bound_ns"])


def test_climb_option_is_checked():
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(WorkbenchError, match="climb must be"):
            SearchOptions(climb=bad)


def test_finish_from_here_climbs_below_the_persons_decisions(tmp_path, monkeypatch):
    """`Session.finish(climb=…)`: the implementation a person following the
    least child bound reaches (a random witness's bound was 5–9,000× the
    start's on matmul 256), then climbed — the person's decisions stay, and
    the bound is at most the descent's; where that descent meets a choice
    with no live value, the witness instead."""
    import random

    from workbench.descent import least_bound_fixed
    from workbench.witness import adopt
    s = wb.Session(_root(m=64, n=64, k=32), target="h200", store=None)
    s.apply("dim_kind", ("d0",), "BLOCK")
    here = s.cand
    twin = random.Random()
    twin.setstate(s._rng.getstate())  # the draws finish makes, made beside it
    greedy = least_bound_fixed(here, twin, lambda c: s.bound(c).value_ns)
    fixed = s.finish(budget_s=10.0, climb=8)
    assert fixed.is_fixed and fixed.trail[:len(here.trail)] == here.trail
    assert s.bound().value_ns <= s.bound(greedy).value_ns
    assert s.witness(here, budget_s=0) is not None  # it proves the values it took
    s.undo()
    assert s.cand.digest() != fixed.digest()
    # the fallback: the witness adopted
    monkeypatch.setattr("workbench.descent.least_bound_fixed", lambda *a, **k: None)
    s = wb.Session(_root(m=64, n=64, k=32), target="h200", store=None)
    s.apply("dim_kind", ("d0",), "BLOCK")
    w = s.witness(budget_s=10.0)
    assert s.finish(budget_s=10.0).digest() == adopt(here, w).digest()


def test_cli_climb_contract(tmp_path, capsys):
    """`python -m workbench climb`: a descent then moves on the bound below
    the --trail candidate; the trail file it writes replays to the digest
    it prints, keeps the start's decisions and is bounded as it says."""
    from workbench.cli import main
    start = _root().apply("dim_kind", ("d0",), "BLOCK")
    (tmp_path / "start.json").write_text(start.to_json())
    out = tmp_path / "best.json"
    args = ["climb", "--kernel", "matmul", "--sizes", "m=16,n=16,k=8", "--trail",
            str(tmp_path / "start.json"), "--moves", "6", "--seed", "2", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["steps"] == 6 and got["bound_ns"] <= got["start_ns"] and got["target"] == "h200"
    cand = wb.Candidate.from_json(out.read_text())
    assert cand.is_fixed and cand.digest() == got["digest"]
    assert cand.trail[0] == start.trail[0]
    assert wb.bound(cand, "h200").value_ns == pytest.approx(got["bound_ns"])
    assert main([*args, "--moves", "-1", "--json"]) == 2
    assert "--moves: must be at least 0, got -1" in capsys.readouterr().out


def test_a_search_climbs_from_its_fastest_implementation(tmp_path):
    """With `climb_from_best`, rollouts start their climb from the fastest
    implementation measured so far, carried into the node's subtree: the
    records say so, stay below the start, and are verified."""
    start = _root().apply("dim_kind", ("d0",), "BLOCK")
    store = RecordStore(tmp_path / "runs.jsonl")
    s = Search(start, "cpu", budget=5, workers=0, store=store, seed=6, climb=3,
               climb_from_best=1.0)
    out = s.run()
    assert out["evaluations"] == 5 and out["climb_from_best"] == 1.0
    rows = store.rows()
    origins = [r["search"]["climb"]["from"] for r in rows]
    assert origins[0] == "descent" and "measured" in origins[1:]
    for r in rows:
        assert r["status"] == "ok" and r["verified"]
        assert r["trail"][0] == {"choice": "dim_kind", "objects": ["d0"], "value": "BLOCK"}


def test_a_measured_implementation_is_carried_below_another_node():
    """The worker's start from a measured implementation: its decisions that
    conflict with the node's are let go, the climb stays below the node."""
    from workbench.search.simulate import Task, _climb_on
    root = _root()
    other = _leaf(root.apply("dim_kind", ("d0",), "LOOP"), 3)
    start = root.apply("dim_kind", ("d0",), "BLOCK")
    task = Task(_kernel().spec(), "gpu", [d.to_dict() for d in start.trail], climb=2,
                climb_from={"trail": [d.to_dict() for d in other.trail],
                            "digest": other.digest()})
    got = _climb_on(start, task, _bound_fn(), random.Random(0), "thesis")
    assert got is not None and got.candidate.is_fixed
    assert got.candidate.value("dim_kind", ("d0",)) == "BLOCK"
    assert got.candidate.digest() != other.digest()
    for bad in (-0.1, 1.5, True):
        with pytest.raises(WorkbenchError, match="climb_from_best"):
            SearchOptions(climb_from_best=bad)
