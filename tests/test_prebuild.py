"""Extended problems built ahead by a background thread
(`workbench.prebuild`): a decision that lowers finds its problem built, and
candidates reached with prebuilt problems, or while a build is under way in
another thread, are the candidates reached without (same digests, open
choices, prunings, and the same future)."""

from __future__ import annotations

import random

import pytest
from test_extension import follow, lowering_trail

import workbench as wb
from workbench.prebuild import LoweringPrebuilder
from workbench.space.propagators import MASK, Store


def kernel():
    return wb.kernels.matmul(m=64, n=64, k=32)


def test_announced_lowerings_cover_every_lowering():
    """A lowering a decision causes was announced by `lowerings_ahead`: its
    trigger was open in the parent (domains only shrink)."""
    rng = random.Random(3)
    root = wb.Candidate.root(kernel())
    seen = 0
    for _ in range(4):
        c = root
        for _ in range(30):  # far enough for several lowerings, not to the end
            if c.is_fixed:
                break
            ahead = c.lowerings_ahead()
            assert all(len(f - c.problem.fired) == 1 and f > c.problem.fired for f in ahead)
            ch = rng.choice(c.choices())
            v = "MEMORY" if "MEMORY" in ch.values and rng.random() < 0.5 else rng.choice(ch.values)
            try:
                kid = c.apply(ch.name, ch.objects, v)
            except wb.DeadEnd:
                continue
            if kid.problem is not c.problem:
                seen += 1
                assert any(f <= kid.problem.fired for f in ahead)
            c = kid
    assert seen, "no descent lowered anything"


def test_closed_trigger_not_announced():
    """A trigger whose conditions became false is no longer announced."""
    root = wb.Candidate.root(kernel())
    p = root.problem
    st = Store(p, root._tables)
    t = next(t for t in p.triggers() if t.key not in p.fired)
    lit = next(lit for lit in t.lits if lit[0] == MASK)  # a MASK literal: domain ⊆ mask
    v, mask = lit[1], lit[2]
    name, objs = p.keys[v]
    outside = [x for i, x in enumerate(p.universe[v]) if not mask >> i & 1
               and st.get(v) >> i & 1]
    if p.index[(name, objs)][1]:
        pytest.skip("mirrored variable")
    for x in outside:
        try:
            c = root.apply(name, objs, str(x))
        except wb.DeadEnd:
            continue
        assert p.fired | {t.key} not in c.lowerings_ahead()
        return
    pytest.skip("no value outside the trigger's condition survives")


def test_lowering_decision_finds_its_problem_built():
    import gc
    root = wb.Candidate.root(kernel())
    pb = LoweringPrebuilder(freeze=True)
    try:
        pb.offer(root)
        assert pb.wait_idle(120)
        assert pb.error is None and pb.built >= 1
        assert gc.get_freeze_count() > 0  # the built problems are out of the collector's walks
        built = {id(x) for x in root.problem.root_problem._extensions.values()}
        ch = next(c for c in root.choices() if c.name == "dim_map" and "MEMORY" in c.values)
        kid = root.apply(ch.name, ch.objects, "MEMORY")
        assert kid.problem is not root.problem and id(kid.problem) in built
    finally:
        pb.close()
        gc.unfreeze()


def test_prebuilt_candidates_equal_built_on_demand():
    """Every other decision waits for the thread's builds; the others race
    them (the decision waits for, or builds, what the thread has under way)."""
    trail = lowering_trail(wb.Candidate.root(kernel()), random.Random(5), lowerings=2)
    plain = wb.Candidate.root(kernel())
    ahead = wb.Candidate.root(kernel())
    assert ahead.problem is not plain.problem
    pb = LoweringPrebuilder()
    try:
        for k, d in enumerate(trail):
            pb.offer(ahead)
            if k % 2:
                assert pb.wait_idle(120)
            plain = plain.decide(d)
            ahead = ahead.decide(d)
            assert ahead.digest() == plain.digest()
            assert ahead.problem.fired == plain.problem.fired
        assert ahead.problem is not ahead.problem.root_problem, "the trail reached no lowering"
        assert pb.error is None and pb.built >= 2
        assert ahead.choices() == plain.choices()
        assert ahead.pruned() == plain.pruned()
        assert follow(ahead, random.Random(5)) == follow(plain, random.Random(5))
    finally:
        pb.close()
