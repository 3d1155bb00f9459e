"""Never stuck, always explained: witnesses prove values (proven ⇔ some
implementation lies below, checked against exhaustive enumeration), a
person who follows proven values reaches a fixed candidate, explanations
reproduce their dead end and every culprit is needed, and the fixpoint's
wake-up shortcuts (grouped masks, satisfied clauses, guards) reach exactly
the fixpoint of a naive sweep over every propagator."""

from __future__ import annotations

import random

import pytest
from gpu_cases import examples
from helpers import all_fixed, dead_end_decisions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import LOOPS, random_path
from toy_kernel import toy

import workbench as wb
from workbench.explain import explain, explain_trail
from workbench.session import DEAD, OPEN, PROVEN, Session
from workbench.space.propagators import DECISION, Store
from workbench.witness import adopt, extends, find_witness

SETTINGS = settings(max_examples=examples(25), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
TOY = wb.Candidate.root(toy(max_threads=4, max_unroll=4, min_total=5), LOOPS)


@pytest.fixture(scope="module")
def matmul():
    return wb.Candidate.root(wb.kernels.build_kernel("matmul", {"m": 16, "n": 16, "k": 8}))


@pytest.mark.law
@SETTINGS
@given(st.data())
def test_proven_iff_an_implementation_lies_below(data):
    """On the toy space (small enough to enumerate): a proven value's
    witness is a fixed candidate below its child; a dead value's child has
    no fixed candidate at all; with time enough nothing stays open."""
    cand = random_path(data, TOY, 6)[-1]
    if cand.is_fixed:
        return
    s = Session(cand, store=None)  # the toy kernel has no bound: prove() alone
    s.witness(budget_s=30)
    ch = cand.choices()[data.draw(st.integers(0, len(cand.choices()) - 1))]
    for value in ch.values:
        status, witness = s.prove(ch.name, ch.objects, value, budget_s=30)
        try:
            child = cand.apply(ch.name, ch.objects, value)
        except wb.DeadEnd:
            assert status == DEAD
            continue
        below = all_fixed(child)
        assert status != OPEN
        assert (status == PROVEN) == bool(below)
        if status == PROVEN:
            assert extends(witness, child)
            assert adopt(child, witness).digest() == witness.digest()


def test_witness_adopt_and_finish_keep_every_decision(matmul):
    c = matmul.apply("dim_kind", "d0", "BLOCK")
    got = find_witness(c, rng=random.Random(1), budget_s=60)
    assert got.witness is not None and got.witness.is_fixed and extends(got.witness, c)
    assert not extends(got.witness, matmul.apply("dim_kind", "d0", "LOOP"))
    s = Session(matmul, store=None)
    s.apply("dim_kind", "d0", "BLOCK")
    fixed = s.finish(budget_s=60)
    assert fixed.is_fixed and fixed.trail[:1] == c.trail
    assert s.undo().trail == fixed.trail[:-1]  # each adopted decision is a step


def test_following_proven_values_in_random_order_never_gets_stuck(matmul):
    rng = random.Random(3)
    s = Session(matmul, store=None)
    while not s.cand.is_fixed:
        w = s.witness(budget_s=60)
        assert w is not None and extends(w, s.cand)
        ch = rng.choice(s.cand.choices())
        opts = s.options(ch.name, ch.objects, prove_s=0.02)
        proven = [o for o in opts if o.status == PROVEN]
        assert proven, f"stuck at {ch}"  # the witness's own value is always proven
        s.apply(ch.name, ch.objects, rng.choice(proven).value)
    # the decisions replay to the same fixed candidate
    again = wb.Candidate.replay(matmul.kernel, s.cand.trail)
    assert again.digest() == s.cand.digest()


def _fails(root, decisions, target) -> bool:
    c = root
    for d in decisions:
        if (d.choice, d.objects) not in c.problem.index:
            return False
        try:
            c = c.decide(d)
        except (wb.DeadEnd, wb.InvalidDecision):
            return True
    try:
        c.decide(target)
    except (wb.DeadEnd, wb.InvalidDecision):
        return True
    return False


def test_explanations_reproduce_and_every_culprit_is_needed(matmul):
    for cand, d in dead_end_decisions(matmul, 4, seed=5):
        ex = explain(cand, decision=d)
        assert ex.verified and set(ex.culprits) <= set(cand.trail)
        # checked again here, independently of explain's own check
        assert _fails(matmul, ex.culprits, d)
        for k in range(len(ex.culprits)):
            assert not _fails(matmul, ex.culprits[:k] + ex.culprits[k + 1:], d)
        assert ex.reasons and "decision" in ex.target and ex.text


def test_progression_depends_on_the_order_and_both_are_irreducible():
    """Progression keeps the latest decisions it can: with two conflicts,
    {a..f} and {g, h}, the trail order finds the six and its reverse the two
    (why `explain` tries the reverse when it finds more than five)."""
    from workbench.explain import _progression
    conflicts = [set("abcdef"), set("gh")]

    def run(trail):
        prefixes = [set(trail[:j]) for j in range(len(trail) + 1)]

        def fails(pre, j, must):
            return any(c <= pre[j] | set(must) for c in conflicts)
        return set(_progression(trail, prefixes, fails))
    assert run(list("abcdefgh")) == set("abcdef")
    assert run(list("hgfedcba")) == set("gh")


def test_explain_trail_and_session_drop(matmul):
    cand, d = dead_end_decisions(matmul, 1, seed=8)[0]
    ex = explain_trail(matmul.kernel, [*cand.trail, d])
    assert ex.verified
    s = Session(matmul, store=None)
    for dd in cand.trail:
        s.apply(dd.choice, dd.objects, dd.values[0])
    if ex.culprits:
        step = list(cand.trail).index(ex.culprits[0]) + 1
        s.drop(step)
        assert len(s.cand.trail) == len(cand.trail) - 1
        assert ex.culprits[0] not in s.cand.trail
    with pytest.raises(wb.WorkbenchError, match="no decision"):
        s.drop(10_000)
    with pytest.raises(wb.WorkbenchError, match="does not dead-end"):
        explain(matmul, decision=wb.Decision("dim_kind", ("d0",), ("LOOP",)))


def _naive(cand, ch, value):
    d = wb.Decision(ch.name, ch.objects, (value,))
    v, mask = d.check(cand)
    st_ = Store(cand.problem, cand._tables)
    st_.put(v, cand._dom(v) & mask, DECISION)
    changed = True
    while changed:
        changed = False
        for inst in cand.problem.instances:
            if inst.run(st_):
                changed = True
    return st_


@pytest.mark.law
@pytest.mark.parametrize("name", ["matmul", "axpy"])
def test_watched_fixpoint_equals_a_naive_sweep(name):
    """Stronger or faster propagation removes no solution and misses no
    pruning: after each random decision the domains equal those of sweeping
    every propagator until none prunes; after a decision that fires a
    lowering, no propagator of the extended problem prunes any more."""
    root = wb.Candidate.root(wb.kernels.build_kernel(name, wb.kernels.linalg.SMALL_SIZES[name]))
    rng = random.Random(11)
    compared = lowered = 0
    for _ in range(examples(1)):
        c = root
        while not c.is_fixed:
            ch = rng.choice(c.choices())
            v = rng.choice(ch.values)
            try:
                c2 = c.apply(ch.name, ch.objects, v)
            except wb.DeadEnd:
                with pytest.raises(wb.DeadEnd):
                    st_ = _naive(c, ch, v)
                    if st_.pending:  # a lowering would have run: not comparable
                        raise wb.DeadEnd("lowering", ()) from None
                break
            if c2.problem is c.problem:
                st_ = _naive(c, ch, v)
                assert [list(t) for t in st_.tables] == [list(t) for t in c2._tables]
                compared += 1
            else:  # a lowering: the extended problem's propagation started
                # from only some instances (lowering.transfer_plan); every
                # propagator of it must find c2 already at its fixpoint
                st_ = Store(c2.problem, c2._tables)
                for inst in c2.problem.instances:
                    assert not inst.run(st_), inst.origin
                assert not st_.pending and not st_.log
                lowered += 1
            c = c2
    assert compared > 0
    if name == "matmul":
        assert lowered > 0


# A stuck state of bench_stuck.py --seed 3 (look-ahead only, matmul
# 64×64×32), reduced by its explanation to these five decisions: every value
# of order(d3, d10) dead-ends, each on its own ground.
STUCK_ORDER = [
    ("dim_kind", ("d13",), "THREAD"), ("thread_mapping", ("d1", "d6"), "OUT"),
    ("order", ("ld_ld_b_mad", "d0"), "IN"), ("thread_mapping", ("d20", "d24"), "OUT"),
    ("order", ("st_c", "d11"), "IN")]


def _stuck() -> tuple:
    """(kernel, the candidate of STUCK_ORDER): its order(d3, d10) has no live value."""
    kernel = wb.kernels.build_kernel("matmul", {"m": 64, "n": 64, "k": 32})
    c = wb.Candidate.root(kernel)
    for name, objs, value in STUCK_ORDER:
        c = c.apply(name, objs, value)
    return kernel, c


def _value_fails(kernel, decisions, choice, value) -> bool:
    c = wb.Candidate.root(kernel)
    for d in decisions:
        if (d.choice, d.objects) not in c.problem.index:
            return False  # a lowering left out of this subset creates its objects
        c = c.decide(d)
    if value not in c.domain(*choice):
        return True
    try:
        c.apply(*choice, value)
    except wb.DeadEnd:
        return True
    return False


def test_a_stuck_choice_is_explained_value_by_value():
    """Each value of a choice left without one gets the few culprits that
    alone rule it out: checked here independently (they reproduce that
    value's failure, and dropping any one of them does not), and together
    they are the explanation's culprits."""
    kernel, c = _stuck()
    choice = ("order", ("d3", "d10"))
    ex = explain(c, choice=choice)
    assert ex.verified and len(ex.culprits) == 5
    assert [v for v, _ in ex.by_value] == sorted(c.domain(*choice))
    union = set()
    for value, sub in ex.by_value:
        assert set(sub) <= set(ex.culprits)
        assert _value_fails(kernel, sub, choice, value)
        for k in range(len(sub)):
            assert not _value_fails(kernel, sub[:k] + sub[k + 1:], choice, value)
        union |= set(sub)
    assert union == set(ex.culprits)
    # AFTER, which the kernel alone ruled out (an order it implied through
    # eq. 4.4's relation), is pruned at the root since the relation bears on
    # both of its variables (propagators._enforce_union)
    assert "AFTER" not in wb.Candidate.root(kernel).domain(*choice)
    assert sorted(len(sub) for _, sub in ex.by_value) == [2, 4, 4]
    assert "(by decisions 2, 3)" in ex.text and "(by the kernel alone)" not in ex.text
    assert ex.text.startswith("(1) `") and ex.to_dict()["by_value"][0]["value"] == "BEFORE"


def test_the_smallest_explanation_is_a_minimum(matmul):
    """`smallest_explanation` tries every subset by size, so what it returns
    reproduces the dead end, is no larger than `explain`'s culprits, and no
    smaller subset of the trail does; None when none of `at_most` does (the
    stuck state above needs all five of its decisions)."""
    from workbench.explain import smallest_explanation
    kernel, c = _stuck()
    choice = ("order", ("d3", "d10"))
    best = smallest_explanation(c, choice=choice)
    assert best is not None and set(best) <= set(c.trail)
    assert all(_value_fails(kernel, best, choice, v) for v in c.domain(*choice))
    assert len(best) == len(explain(c, choice=choice).culprits) == 5
    assert smallest_explanation(c, choice=choice, at_most=4) is None
    for cand, d in dead_end_decisions(matmul, 3, seed=5):
        best = smallest_explanation(cand, decision=d, at_most=3)
        ex = explain(cand, decision=d)
        if best is None:  # nothing of three decisions or fewer causes it
            assert len(ex.culprits) > 3
            continue
        assert _fails(matmul, best, d) and len(best) <= len(ex.culprits)
        assert not any(_fails(matmul, best[:k] + best[k + 1:], d) for k in range(len(best)))
    with pytest.raises(wb.WorkbenchError, match="either decision= or choice="):
        smallest_explanation(c)


def test_ways_out_say_where_dropping_each_culprit_leads():
    """The rest of a trail may hold another conflict, so each culprit's drop
    is searched for a witness (`ways_out`), on the candidate `Session.drop`
    gives: a proven drop's witness lies below it (and below the decision
    explained, when the target is one); a dead one no longer replays, the
    decision tried still fails there, or its subtree was searched
    exhaustively. The session learns the witnesses its explainer found."""
    from workbench.witness import DEAD, OPEN, PROVEN
    kernel, c = _stuck()
    root = wb.Candidate.root(wb.kernels.build_kernel("matmul", {"m": 16, "n": 16, "k": 8}))
    cd, d = dead_end_decisions(root, 1, seed=5)[0]
    seen = set()
    for cand, choice, decision in ((c, ("order", ("d3", "d10")), None), (cd, None, d)):
        s = Session(cand, store=None)
        _, explain_, ways = s.explainer(choice=choice, decision=decision)
        ex = explain_()
        assert ex.decision == decision
        outs = ways(ex, budget_s=30)  # settled even on a loaded machine
        assert [w.culprit for w in outs] == list(ex.culprits)
        for w in outs:
            seen.add(w.status)
            assert w.to_dict()["status"] == w.status
            step = list(cand.trail).index(w.culprit) + 1
            t = Session(cand, store=None)
            if "no longer replay" in w.why:
                with pytest.raises(wb.WorkbenchError, match="no longer replay"):
                    t.drop(step)
                continue
            dropped = t.drop(step)
            if "the decision tried still fails" in w.why:
                with pytest.raises((wb.DeadEnd, wb.InvalidDecision)):
                    dropped.decide(decision)
            elif w.status == PROVEN:
                below = dropped if decision is None else dropped.decide(decision)
                assert extends(w.witness, below)
                assert s.witness(dropped, budget_s=0) is not None  # known, no search
            else:
                assert w.status in (DEAD, OPEN)
    assert {PROVEN, DEAD} <= seen  # some drops lead somewhere, some do not


def test_a_dead_end_in_a_lowering_names_the_objects_it_created():
    """Decisions taken together may fire a lowering and dead-end in the
    extended problem, on objects the candidate they started from does not
    have: the dead end carries its problem, which names them."""
    from workbench.explain import _constraint
    root = wb.Candidate.root(wb.kernels.matmul(m=16, n=16, k=8))
    lower = wb.Decision("dim_map", ("d0", "d10"), ("MEMORY",))
    assert ("order", ("ld_ld_a_mad", "d5")) not in root.problem.index  # made by the lowering
    with pytest.raises(wb.DeadEnd) as got:
        root.decide_all([lower, wb.Decision("order", ("ld_ld_a_mad", "d5"), ("BEFORE",))])
    e = got.value
    assert e.problem is not root.problem and e.problem.fired
    text = _constraint(e, root)
    assert "load of ld_a for mad" in text and "ld_ld_a_mad" not in text


def test_dead_ends_and_never_appears_cross_processes():
    """Both pickle (a worker process may send them), a dead end without the
    problem it happened in."""
    import pickle
    e = wb.DeadEnd("require (gpu.space:1)", ("d0",), "order(d0, d1)")
    e.problem = object()
    got = pickle.loads(pickle.dumps(e))
    assert str(got) == str(e) and got.objects == ("d0",) and got.problem is None
    n = wb.NeverAppears([wb.Decision("size", ("d9",), ("4",))])
    got = pickle.loads(pickle.dumps(n))
    assert str(got) == str(n) and got.decisions == n.decisions
