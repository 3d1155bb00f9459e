"""The public candidate contract (docs/api.md) and its error behaviour."""

from __future__ import annotations

import json

import pytest
from toy_kernel import toy

import workbench as wb

LOOPS = wb.load_space("tests/spaces/loops.space")


@pytest.fixture
def block():
    return wb.kernels.basic_block([("a", 2, ()), ("b", 3, ("a",)), ("c", 1, ()),
                                   ("d", 1, ("b", "c"))])


def test_root_choices_domain_and_apply(block):
    c = wb.Candidate.root(block)
    assert c is wb.Candidate.root(block)  # the propagated root is computed once per kernel
    chs = c.choices()
    assert all(isinstance(ch.objects, tuple) and all(isinstance(o, str) for o in ch.objects)
               for ch in chs)
    assert all(isinstance(v, str) for ch in chs for v in ch.values)
    assert c.domain("order", ("a", "b")) == frozenset({"BEFORE"})
    assert c.domain("order", ("b", "a")) == frozenset({"AFTER"})  # the mirrored view
    c2 = c.apply("order", ("a", "c"), "BEFORE")
    assert c.domain("order", ("a", "c")) == {"BEFORE", "AFTER"}  # unchanged
    assert c2.domain("order", ("c", "a")) == {"AFTER"}
    assert c2.trail == (wb.Decision("order", ("a", "c"), ("BEFORE",)),)
    assert not c2.is_fixed and c.trail == ()


def test_unchanged_choice_tables_are_shared(block):
    c = wb.Candidate.root(toy(), LOOPS)
    c2 = c.apply("in_memory", ("v0",), "FALSE")
    kind = c.space.choices["kind"].index
    assert c2._tables[kind] is c._tables[kind]


@pytest.mark.parametrize("args, fragment", [
    (("nope", ("a", "b"), "BEFORE"), "unknown choice 'nope'"),
    (("order", ("a", "a"), "BEFORE"), "no instance on objects"),
    (("order", ("a", "zz"), "BEFORE"), "no instance on objects"),
    (("order", ("a", "c"), "SIDEWAYS"), "not a value of order"),
    (("order", ("a", "b"), "AFTER"), "outside its domain"),
])
def test_invalid_decisions_leave_the_candidate_unchanged(block, args, fragment):
    c = wb.Candidate.root(block)
    before = c.digest()
    with pytest.raises(wb.InvalidDecision, match=fragment):
        c.apply(*args)
    assert c.digest() == before


def test_counters_and_hidden_choices_cannot_be_decided():
    c = wb.Candidate.root(toy(), LOOPS)
    with pytest.raises(wb.InvalidDecision, match="counter"):
        c.apply("threads", (), "4")
    with pytest.raises(wb.InvalidDecision, match="unknown choice"):
        c.apply("is_thread_group", ("d0",), "TRUE")
    lo, hi = c.counter("threads")
    assert 1 <= lo <= hi <= 8
    assert c.counter("unrolled", ("mul",))[1] is None  # half counter


def test_dead_end_names_the_constraint_and_objects():
    # threads() <= 4: fusing nothing and putting d0 (size 4) and d1 (size 4)
    # on threads gives 16 threads.
    c = wb.Candidate.root(toy(max_threads=8), LOOPS)
    c = c.apply("size", ("d0",), "4")
    before = c.digest()
    with pytest.raises(wb.InvalidDecision):
        c.apply("kind", ("d1",), "THREAD")  # d1 is not parallel: pruned at the root
    c = c.apply("kind", ("d0",), "THREAD")
    assert c.counter("threads")[0] == 4
    with pytest.raises(wb.InvalidDecision, match="outside its domain"):
        c.apply("size", ("d0",), "1")
    assert c.digest() != before


def test_dead_end_is_raised_and_candidate_unchanged():
    """Three pairwise-different choices over two values: the pair
    propagators cannot see it at the root, the first decision dead-ends."""
    sp = wb.Space.from_text("""
set Insts:
  iterator = "$fun.instructions()"
end
choice enum x($a in Insts):
  value A:
  value B:
end
choice enum y($a in Insts):
  value A:
  value B:
end
choice enum z($a in Insts):
  value A:
  value B:
end
require forall $a in Insts: x($a) != y($a)
require forall $a in Insts: y($a) != z($a)
require forall $a in Insts: x($a) != z($a)
""", "de.space")
    k = wb.kernels.basic_block([("i", 1, ())])
    c = wb.Candidate.root(k, sp)
    before = c.digest()
    with pytest.raises(wb.DeadEnd) as e:
        c.apply("x", ("i",), "A")
    assert e.value.objects == ("i",)
    assert "!=" in e.value.constraint and "de.space" in e.value.constraint
    assert e.value.decision == wb.Decision("x", ("i",), ("A",))
    assert c.digest() == before and c.domain("x", ("i",)) == {"A", "B"}


def test_counter_prunes_its_terms():
    sp = wb.Space.from_text("""
set Insts:
  iterator = "$fun.instructions()"
end
choice integer n($a in Insts):
  "[1, 2, 3]"
end
choice counter total():
  forall $a in Insts:
    sum n($a)
end
require total() <= 4
""", "ce.space")
    k = wb.kernels.basic_block([("i", 1, ()), ("j", 1, ())])
    c = wb.Candidate.root(k, sp)
    assert c.domain("n", ("i",)) == {"1", "2", "3"}
    assert c.counter("total") == (2, 4)  # [2, 6] from the terms, capped by the require
    c2 = c.apply("n", ("i",), 3)  # integers may be given as int
    assert c2.domain("n", ("j",)) == {"1"}
    assert c2.counter("total") == (4, 4)
    assert any("counter total" in p.by for p in c2.pruned())


def test_json_round_trip_and_tampering(block):
    c = wb.Candidate.root(block).apply("order", ("a", "c"), "BEFORE")
    text = c.to_json()
    back = wb.Candidate.from_json(text)
    assert back.digest() == c.digest() and back.trail == c.trail
    data = json.loads(text)
    data["digest"] = "0" * 64
    with pytest.raises(wb.InvalidDecision, match="different domains"):
        wb.Candidate.from_json(json.dumps(data))
    with pytest.raises(wb.InvalidDecision, match="not a"):
        wb.Candidate.from_json("{}")
    with pytest.raises(wb.InvalidDecision, match="not a candidate JSON"):
        wb.Candidate.from_json("{oops")


def test_lowering_adds_objects_and_choices():
    c = wb.Candidate.root(toy(), LOOPS)
    assert ("cache", ("reload_v0",)) not in c.problem.index
    c2 = c.apply("in_memory", ("v0",), "TRUE")
    assert c2.domain("cache", ("reload_v0",)) == {"L1", "L2", "NONE"}
    assert ("cache", ("reload_v0",)) not in c.problem.index  # the parent is untouched
    assert c2.problem is c.apply("in_memory", ("v0",), "TRUE").problem  # lowered kernel cached


def test_problem_caches_hold_what_is_used_and_no_more(monkeypatch):
    """Extended problems stay cached while a candidate holds them, plus the
    last used up to a budget of instances; a kernel keeps its last few roots
    (a new `prune` function per call made one root problem each, and the
    caches grew a test worker past 14 GB). A candidate whose root left the
    cache still finds it."""
    import gc

    from workbench.candidate import _ROOTS_KEPT
    from workbench.space import problem as problem_mod

    monkeypatch.setattr(problem_mod, "_RECENT", problem_mod._RecentProblems(0))
    kernel = toy()
    c = wb.Candidate.root(kernel, LOOPS)
    fired = c.apply("in_memory", ("v0",), "TRUE").problem.fired
    root = c.problem.root_problem
    gc.collect()
    # budget 0 holds only the last used: it is still there
    assert root.has_extension(fired)
    c2 = c.apply("in_memory", ("v0",), "TRUE")
    problem_mod._RECENT.clear()
    gc.collect()
    assert root.has_extension(fired)  # c2 holds it
    del c2
    gc.collect()
    assert not root.has_extension(fired)  # nobody does: it went
    assert c.apply("in_memory", ("v0",), "TRUE").domain("cache", ("reload_v0",)) == \
        {"L1", "L2", "NONE"}  # and comes back on demand

    kid = c.apply("in_memory", ("v0",), "TRUE")
    for _ in range(_ROOTS_KEPT + 2):  # a new function each time: a new root each
        wb.Candidate.root(kernel, LOOPS, prune=lambda k: [])
    assert len(kernel._candidate_roots) == _ROOTS_KEPT
    assert kid.root_candidate() is c  # gone from the kernel's cache, still its root
    assert wb.Candidate.root(kernel, LOOPS) is not c  # built again once it left


def test_restrict_to_an_alias():
    c = wb.Candidate.root(toy(), LOOPS)
    c2 = c.restrict("kind", ("d0",), "UNROLLED_OR_THREAD")
    assert c2.domain("kind", ("d0",)) == {"UNROLL", "THREAD"}


def test_one_object_as_a_string():
    """apply/domain/restrict take a single object as a plain string: "d0" is
    the object d0, not ('d', '0')."""
    root = wb.Candidate.root(wb.kernels.axpy(1024))
    a = root.apply("dim_kind", "d0", "BLOCK")
    b = root.apply("dim_kind", ("d0",), "BLOCK")
    assert a.digest() == b.digest() and a.domain("dim_kind", "d0") == {"BLOCK"}
    with pytest.raises(wb.InvalidDecision, match=r"no instance on objects \(.d99.,\)"):
        root.apply("dim_kind", "d99", "BLOCK")
