"""The fast build of a problem (choice-only clauses by ids, an extended
problem's taken from the root's, snippets tested as soon as their variables
are bound, wake lists without per-watch tuples, new instances by numbered
signatures, the garbage collector paused) against the plain generic loops
(`Problem._fast = False`):
same variables, instances, wake lists; same candidates along random trails
that reach lowerings, and the same behaviour for the decisions after."""

from __future__ import annotations

import random
from contextlib import contextmanager

import pytest

import workbench as wb
from workbench.space import lowering
from workbench.space.problem import Problem, _weight
from workbench.space.propagators import NUM

KERNELS = {
    "matmul": lambda: wb.kernels.matmul(m=64, n=64, k=32),
    "strided_matmul": lambda: wb.kernels.strided_matmul(m=64, n=64, k=32),
}


@contextmanager
def from_scratch():
    """Problems built (and new instances found) by the generic loops."""
    Problem._fast = False
    try:
        yield
    finally:
        Problem._fast = True


def state(p: Problem) -> dict:
    """Everything propagation reads of a problem."""
    insts = [(type(i).__name__, {k: getattr(i, k) for k in i.__slots__}) for i in p.instances]
    return dict(keys=p.keys, vc=p.vc, vj=p.vj, universe=p.universe, index=p.index,
                choice_vars=p.choice_vars, init_tables=p.init_tables, instances=insts,
                guarded=bytes(p.guarded), wake=p.wake, fired=p.fired)


def lowering_trail(root, rng: random.Random, lowerings: int = 2) -> list:
    """Decisions of a random descent that sends pairs through memory (a
    dim_map to MEMORY, 40 % of the steps where one is open) until the
    candidate moved to an extended problem `lowerings` times, or is fixed."""
    c, trail, moved = root, [], 0
    for _ in range(2000):  # a stuck candidate (every value dead) would loop forever
        if c.is_fixed or moved >= lowerings:
            break
        choices = c.choices()
        mem = [ch for ch in choices if ch.name == "dim_map" and "MEMORY" in ch.values]
        if mem and rng.random() < 0.4:
            ch, v = rng.choice(mem), "MEMORY"
        else:
            ch = rng.choice(choices)
            v = rng.choice(ch.values)
        try:
            kid = c.apply(ch.name, ch.objects, v)
        except wb.DeadEnd:
            continue
        moved += kid.problem is not c.problem
        trail.append(wb.Decision(ch.name, ch.objects, (v,)))
        c = kid
    return trail


def follow(c, rng: random.Random, n: int = 20) -> list:
    """What the next `n` random decisions give: the digest, fixed or not, or
    the dead end's text."""
    out = []
    for _ in range(n):
        if c.is_fixed:
            break
        ch = rng.choice(c.choices())
        v = rng.choice(ch.values)
        try:
            c = c.apply(ch.name, ch.objects, v)
            out.append((ch.name, ch.objects, v, c.digest(), c.is_fixed))
        except wb.DeadEnd as e:
            out.append((ch.name, ch.objects, v, "dead end", str(e)))
    return out


def test_root_problem_same_as_from_scratch():
    k = KERNELS["matmul"]()
    space = wb.Candidate.root(k).space
    fast = Problem(space, k)
    with from_scratch():
        slow = Problem(space, k)
    assert state(fast) == state(slow)
    assert fast.instance_keys() == slow.instance_keys()


@pytest.mark.parametrize("name", sorted(KERNELS))
# seed 0 in make test; every seed in make audit (each pair costs ~30 s)
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.audit),
                                  pytest.param(2, marks=pytest.mark.audit)])
def test_lowered_candidate_same_as_from_scratch(name, seed):
    root = wb.Candidate.root(KERNELS[name]())
    trail = lowering_trail(root, random.Random(seed))
    fast = wb.Candidate.replay(root.kernel, trail)
    assert fast.problem is not fast.problem.root_problem, "the trail reached no lowering"
    with from_scratch():
        slow = wb.Candidate.replay(KERNELS[name](), trail)
        assert slow.problem._fast is False
        assert slow.problem.fired == fast.problem.fired
        assert fast.digest() == slow.digest()
        assert fast.choices() == slow.choices()
        assert fast.is_fixed == slow.is_fixed
        assert fast.pruned() == slow.pruned()
        assert follow(slow, random.Random(seed + 100)) == follow(fast, random.Random(seed + 100))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_extended_problem_same_as_from_scratch(name):
    """The extended problem, instance by instance, and the instances a
    lowering adds (what `lowering.remap` starts propagation with)."""
    root = wb.Candidate.root(KERNELS[name]())
    c = wb.Candidate.replay(root.kernel, lowering_trail(root, random.Random(7), lowerings=1))
    new = c.problem
    assert new is not new.root_problem
    scratch = Problem(new.space, new.kernel, new.fired, new.root_problem, fast=False)
    assert len(new.instances) == len(scratch.instances)
    assert new.instance_keys() == scratch.instance_keys()
    assert state(new) == state(scratch)
    old = new.root_problem
    # the fast build takes the root's choice-only clauses as they are (the
    # same objects under the same numbers); the generic one builds them anew
    # in the same layout
    assert new.shared_len == old.shared_len > len(new.instances) // 2
    assert all(new.instances[j] is old.instances[j] for j in range(0, new.shared_len, 97))
    assert scratch.shared_len == 0
    # the cache weighs it by what it holds alone (and a tenth of the rest)
    own = len(new.instances) - new.shared_len
    assert _weight(new) == own + len(new.instances) // 10 < len(new.instances) // 2
    assert _weight(old) == len(old.instances) and _weight(scratch) == len(scratch.instances)
    slow_new = scratch.new_instances(old)  # by readable keys (not fast)
    assert new.new_instances(old) == slow_new
    assert slow_new  # a lowering adds instances
    # the clauses whose satisfaction a lowering carries over: the same
    # clause on both sides, never one on a counter
    here, there = new.kept_instances(old)
    s_here, s_there = scratch.kept_instances(old)
    assert here.tolist() == s_here.tolist() and there.tolist() == s_there.tolist()
    assert len(here) > len(new.instances) // 2
    new_keys, old_keys = new.instance_keys(), old.instance_keys()
    assert all(new_keys[i] == old_keys[j] for i, j in zip(here, there))
    assert not set(here.tolist()) & set(slow_new)
    assert all(lit[0] != NUM for i in here for lit in new.instances[i].lits)


def test_an_extension_that_cannot_share_is_built_whole_the_same(monkeypatch):
    """Where a lowering changed the root's objects or universes (checked by
    `_root_members_kept` and the variables' numbering), the fast build
    builds the root's choice-only clauses anew, in the same layout: the
    same problem as the one that shares them."""
    root = wb.Candidate.root(KERNELS["matmul"]())
    c = wb.Candidate.replay(root.kernel, lowering_trail(root, random.Random(7), lowerings=1))
    shared = c.problem
    assert shared.shared_len
    monkeypatch.setattr(Problem, "_root_members_kept", lambda self: False)
    whole = Problem(shared.space, shared.kernel, shared.fired, shared.root_problem)
    assert whole.shared_len == 0 and whole._fast
    assert state(whole) == state(shared)
    assert whole.new_instances(shared.root_problem) == shared.new_instances(shared.root_problem)


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.audit),
                                  pytest.param(2, marks=pytest.mark.audit)])
def test_seeds_change_no_candidate(name, seed, monkeypatch):
    """A lowering's new variables start from their seed (the extended
    problem propagated from the root's domains): the same candidates as
    starting them from their initial domains, along trails that lower
    twice, and the same behaviour after (a fresh kernel: no problem or plan
    is shared between the two)."""
    root = wb.Candidate.root(KERNELS[name]())
    trail = lowering_trail(root, random.Random(seed))
    seeded = wb.Candidate.replay(root.kernel, trail)
    plans = [p for p in seeded.problem.__dict__.get("_plan_from", {}).values()]
    assert plans and all(len(p.log) for p in plans), "no lowering met, or its seed pruned nothing"
    monkeypatch.setattr(lowering, "_seed", lambda *a: None)
    plain = wb.Candidate.replay(KERNELS[name](), trail)
    assert plain.problem.fired == seeded.problem.fired
    assert plain.digest() == seeded.digest()
    assert plain.choices() == seeded.choices()
    assert follow(plain, random.Random(seed + 100)) == follow(seeded, random.Random(seed + 100))
