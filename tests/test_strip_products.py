"""The strip-products propagator (workbench/space/strip_products.py): hand
computed products, stuck states of random-order descents that it turns
into earlier dead ends, and the law that it removes no solution, against
the thread levels alone where it prunes (test_thread_levels has the same
law for every global propagator against none, at the test sizes)."""

from __future__ import annotations

import random

import pytest
from helpers import stronger_along_random_paths, witnesses_replay
from test_thread_levels import without_globals

import workbench as wb
from workbench.space.problem import Problem
from workbench.space.strip_products import StripProducts, _least, _tuples, _within
from workbench.space.thread_levels import ThreadLevels

MATMUL = {"m": 64, "n": 64, "k": 32}


def test_tuples_and_products_by_hand():
    # m = 64 in three levels, the innermost a thread dimension of size 1
    ts = _tuples(64, ((2, 4, 8, 16, 32, 64), (1, 2, 4, 8, 16, 32), (1,)))
    assert set(ts) == {(2, 32, 1), (4, 16, 1), (8, 8, 1), (16, 4, 1), (32, 2, 1), (64, 1, 1)}
    # unrolled along m0 and m1: at least 64 whatever the sizes
    assert _least(ts, (1, 1, 0)) == 64
    # along m1 alone at most 4: m0 takes the rest
    assert set(_within(ts, (0, 1, 0), 4)) == {(16, 4, 1), (32, 2, 1), (64, 1, 1)}
    assert _least(ts, (0, 2, 0)) == 1
    assert _tuples(64, ((2, 4), (1, 2))) == ()


# Met by a random-order descent on matmul 64×64×32 (bench_stuck.py, seed 1):
# after these, ld_a is unrolled along m0 and m1 (every a_m dimension's kind
# is forced), a_m2 is a thread dimension of size 1, so ld_a unrolls at least
# 64 times along m — over the target's limit whatever m0's size. With the
# per-term counters alone the next `size(d26) = 1` left every value of
# size(d25) dead; with the strip products, size(d26) is 4 already.
STUCK = [("order", ("ld_b", "d13"), "IN"), ("thread_mapping", ("d2", "d13"), "OUT"),
         ("order", ("d11", "d27"), "IN"), ("thread_mapping", ("d9", "d20"), "IN"),
         ("dim_map", ("d3", "d16"), "REGISTERS"), ("order", ("d2", "d5"), "BEFORE"),
         ("order", ("d10", "d24"), "AFTER")]


def test_an_unroll_limit_over_a_strip_product_prunes_the_sizes():
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    with without_globals() as prune:
        c = wb.Candidate.root(kernel, prune=prune)
        for name, objs, value in STUCK:
            c = c.apply(name, objs, value)
        c = c.apply("size", ("d26",), "1")
        values = c.domain("size", ("d25",))
        assert len(values) > 1
        for value in values:
            with pytest.raises(wb.DeadEnd, match="unroll_factor"):
                c.apply("size", ("d25",), value)
    c = wb.Candidate.root(kernel)
    for name, objs, value in STUCK:
        c = c.apply(name, objs, value)
    assert c.domain("size", ("d26",)) == {"4"}


def test_mapped_levels_of_one_logical_dimension_share_a_size():
    """n = 64 with n0 = 32 leaves n1·n2 = 2: n1 and n2 mapped to one
    hardware dimension would need n1 = n2 (b_n1 = d8, i_n2 = d29)."""
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    with without_globals() as prune:
        c = wb.Candidate.root(kernel, prune=prune).apply("size", ("d27",), "32")
        assert "MAPPED" in c.domain("thread_mapping", ("d8", "d29"))
    c = wb.Candidate.root(kernel).apply("size", ("d27",), "32")
    assert "MAPPED" not in c.domain("thread_mapping", ("d8", "d29"))


def root_with(kernel, *builders):
    """A root (and the problems it extends to) with only these global
    propagators; a distinct `prune` keeps it out of the kernel's root cache."""
    Problem._globals = builders
    try:
        return wb.Candidate.root(kernel, prune=lambda k: ())
    finally:
        Problem._globals = True


def test_no_solution_lost_where_it_prunes():
    """The law of test_thread_levels, on the size where the strip products
    do prune (matmul 64×64×32) and against the thread levels alone, so that
    what is compared is this propagator: along random-order descents it
    prunes more at least once, never leaves a larger domain, and every
    implementation found without it replays with it to the same digest."""
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    weak_root = root_with(kernel, ThreadLevels.build)
    weak = weak_root.problem
    assert [type(weak.instances[i]) for i in weak.lazy] == [ThreadLevels]
    strong = wb.Candidate.root(kernel).problem
    assert StripProducts in [type(strong.instances[i]) for i in strong.lazy]

    def replay(trail):
        return wb.Candidate.replay(kernel, trail)
    starts, more = stronger_along_random_paths(weak_root, replay, random.Random(1), descents=6,
                                               at=(3, 6, 9, 12, 20))
    assert more > 0  # the comparison is not vacuous (184 domains smaller when written)
    assert witnesses_replay([weak_root, *starts], replay) >= 4  # 8 when written


class _Alone(ThreadLevels):
    """The thread levels without the strip tuples (the peer of the laws)."""

    __slots__ = ()
    joint = False


def alone_root(kernel):
    """A root whose thread levels do not read the strip tuples (the strip
    products still run)."""
    return root_with(kernel, _Alone.build, StripProducts.build)


# Met by a random-order descent with one-step look-ahead on matmul 64×64×32
# (bench_stuck.py --seed 6, descent 47). The thread levels then hold the n1
# dimensions b_n1 (d8), s_n1 (d22) and c_n1 (d14) at three different
# hardware levels, so all three levels have n1's size; a_k0 (d3) is 8 and
# must lie on one of the two inner levels, which a_k1 = b_k1 (d4, d6) of
# size 4 cannot then share. Seen apart, the thread levels found a labelling
# and the strip products a tuple; the person could still map d4 to d6 and
# was then stuck at thread_mapping(d3, d6), every value failing for reasons
# spread over six earlier decisions.
STUCK_JOINT = [
    ("thread_mapping", ("d22", "d28"), "OUT"), ("thread_mapping", ("d12", "d22"), "NOT_THREADS"),
    ("thread_mapping", ("d0", "d10"), "OUT"), ("thread_mapping", ("d3", "d11"), "IN"),
    ("order", ("init", "d20"), "IN"), ("order", ("d23", "d28"), "AFTER"),
    ("order", ("ld_b", "d27"), "AFTER"), ("order", ("d2", "d24"), "BEFORE"),
    ("order", ("d8", "d29"), "AFTER"), ("order", ("d9", "d18"), "OUT"),
    ("thread_mapping", ("d18", "d21"), "OUT"), ("thread_mapping", ("d24", "d28"), "OUT"),
    ("thread_mapping", ("d5", "d22"), "NOT_THREADS"), ("size", ("d3",), "8"),
    ("order", ("d10", "d13"), "OUT"), ("order", ("d0", "d4"), "OUT")]


def test_thread_levels_read_the_strip_tuples():
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    c = alone_root(kernel)
    for name, objs, value in STUCK_JOINT:
        c = c.apply(name, objs, value)
    assert "MAPPED" in c.domain("thread_mapping", ("d4", "d6"))
    stuck = c.apply("thread_mapping", ("d4", "d6"), "MAPPED")
    values = stuck.domain("thread_mapping", ("d3", "d6"))
    assert values
    for value in values:  # the stuck state the person met
        with pytest.raises(wb.DeadEnd):
            stuck.apply("thread_mapping", ("d3", "d6"), value)
    c = wb.Candidate.root(kernel)
    for name, objs, value in STUCK_JOINT:
        c = c.apply(name, objs, value)
    assert "MAPPED" not in c.domain("thread_mapping", ("d4", "d6"))


def test_joint_thread_levels_lose_no_solution():
    """The law once more, the joint thread levels against the thread levels
    and the strip products apart: domains never larger, smaller at least
    once, and every implementation found without the strip tuples replays
    with them to the same digest."""
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    weak_root = alone_root(kernel)
    weak = weak_root.problem
    assert [type(weak.instances[i]) for i in weak.lazy] == [_Alone, StripProducts]

    def replay(trail):
        return wb.Candidate.replay(kernel, trail)
    starts, more = stronger_along_random_paths(weak_root, replay, random.Random(3), descents=6,
                                               at=(3, 6, 9, 12, 20))
    assert more > 0
    assert witnesses_replay([weak_root, *starts], replay) >= 4


# A state a fuzzing review met on axpy n=256 (random-order descent, seed 9):
# the joint search ran past its node budget, and before the fallback the
# thread levels then pruned nothing, leaving eight domains larger than the
# thread levels alone left them (thread_mapping(d9, d10): IN, MAPPED, OUT
# against IN).
PAST_BUDGET = [
    ("dim_kind", ("d4",), "THREAD"), ("thread_mapping", ("d6", "d9"), "NOT_THREADS"),
    ("order", ("d2", "d6"), "BEFORE"), ("size", ("d2",), "1"),
    ("thread_mapping", ("d7", "d9"), "OUT"), ("order", ("d3", "d9"), "BEFORE"),
    ("order", ("d0", "d7"), "BEFORE"), ("cache", ("ld_x",), "NONE"),
    ("thread_mapping", ("d1", "d10"), "IN"), ("thread_mapping", ("d0", "d4"), "IN")]


def test_joint_levels_past_their_budget_prune_no_less():
    kernel = wb.kernels.build_kernel("axpy", {"n": 256})
    weak, strong = alone_root(kernel), wb.Candidate.root(kernel)
    for name, objs, value in PAST_BUDGET:
        weak, strong = weak.apply(name, objs, value), strong.apply(name, objs, value)
    assert strong.domain("thread_mapping", ("d9", "d10")) == {"IN"}
    for ch in weak.choices():
        if ch.name in ("thread_mapping", "order", "size", "dim_kind"):
            assert strong.domain(ch.name, ch.objects) <= weak.domain(ch.name, ch.objects)


class _NoClasses(StripProducts):
    """The strip products counting a quotient's classes only through their
    representatives (the peer of the class-term laws)."""

    __slots__ = ()
    class_terms = False


# init's own m0, m1 and n1 (d24, d25, d28) unrolled with sizes 16, 2 and 16
# reach the target's limit of 512 by themselves; ld_a's k0 (d3) is a k
# dimension, so it never merges with them: init surely nested in it and it
# surely unrolled make a class of its own, counted whoever represents it.
# The counter alone read init's unroll factor from its representatives,
# none of them sure (each could still merge with an earlier dimension).
UNROLLED_512 = [("dim_kind", ("d24",), "UNROLL"), ("size", ("d24",), "16"),
                ("dim_kind", ("d25",), "UNROLL"), ("size", ("d25",), "2"),
                ("dim_kind", ("d28",), "UNROLL"), ("size", ("d28",), "16"),
                ("order", ("d3", "init"), "OUT")]


def test_a_class_counts_whoever_represents_it():
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    peer = root_with(kernel, ThreadLevels.build, _NoClasses.build)
    strong = wb.Candidate.root(kernel)
    assert "MERGED" not in strong.domain("order", ("d3", "d25"))
    for name, objs, value in UNROLLED_512:
        peer, strong = peer.apply(name, objs, value), strong.apply(name, objs, value)
    # d3 unrolled must be of size 1; of size 2 it cannot be unrolled
    assert strong.apply("dim_kind", ("d3",), "UNROLL").domain("size", ("d3",)) == {"1"}
    assert "UNROLL" not in strong.apply("size", ("d3",), "2").domain("dim_kind", ("d3",))
    # the peer takes both and reads an unroll factor of 2 at least (it is 1,024)
    both = peer.apply("dim_kind", ("d3",), "UNROLL").apply("size", ("d3",), "2")
    assert both.counter("unroll_factor", ("init",))[0] < 512


# The stuck state of bench_stuck.py --seed 16 (look-ahead only, matmul
# 64×64×32), reduced by its explanation to these ten decisions: init is then
# nested in four unrolled classes (1,024 instances) but the counter read 4,
# and the person was stuck at dim_kind(d0), both values failing on it. With
# the class terms the tenth decision is the dead end, a red button.
STUCK_CLASSES = [
    ("thread_mapping", ("d12", "d15"), "IN"), ("size", ("d6",), "16"),
    ("order", ("d9", "d27"), "IN"), ("thread_mapping", ("d1", "d27"), "OUT"),
    ("order", ("d10", "d28"), "AFTER"), ("dim_kind", ("d3",), "UNROLL"),
    ("thread_mapping", ("d5", "d23"), "MAPPED"), ("order", ("d3", "d25"), "OUT"),
    ("order", ("st_ld_b_mad", "d0"), "IN"), ("thread_mapping", ("d20", "d21"), "IN")]


def stuck_here_dead_end_there(peer_build, trail, choice, *, match=None, stuck_match=None):
    """With the peer propagator, `trail` leaves every value of `choice` a
    dead end (the stuck state a person met); with the engine's own, the
    last decision of `trail` already is one (a red button)."""
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    peer = root_with(kernel, ThreadLevels.build, peer_build)
    for name, objs, value in trail:
        peer = peer.apply(name, objs, value)
    values = peer.domain(*choice)
    for value in values:
        with pytest.raises(wb.DeadEnd, match=stuck_match):
            peer.apply(*choice, value)
    strong = wb.Candidate.root(kernel)
    for name, objs, value in trail[:-1]:
        strong = strong.apply(name, objs, value)
    with pytest.raises(wb.DeadEnd, match=match):
        strong.apply(*trail[-1])
    return values


def no_solution_lost(peer_build, prefix, seed: int, at: int) -> None:
    """The law once more, against the peer propagator, from the state
    `prefix` leads to (random paths from the root seldom meet the states
    where the difference prunes): domains never larger, smaller at least
    once, and every implementation found with the peer replays with the
    engine's own to the same digest."""
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    weak_root = root_with(kernel, ThreadLevels.build, peer_build)
    for name, objs, value in prefix:
        weak_root = weak_root.apply(name, objs, value)

    def replay(trail):
        return wb.Candidate.replay(kernel, trail)
    starts, more = stronger_along_random_paths(weak_root, replay, random.Random(seed),
                                               descents=6, at=(at,))
    assert more > 0
    assert witnesses_replay([weak_root, *starts], replay) >= 3


def test_the_seed_16_stuck_state_is_a_dead_end():
    stuck_here_dead_end_there(_NoClasses.build, STUCK_CLASSES, ("dim_kind", ("d0",)),
                              stuck_match="unroll_factor")


def test_class_terms_lose_no_solution():
    no_solution_lost(_NoClasses.build, UNROLLED_512, seed=1, at=12)


class _Unlinked(StripProducts):
    """The strip products seeing each mapped pair of levels of two logical
    dimensions apart (the peer of the linked-tuples laws)."""

    __slots__ = ()
    linked = False


# The stuck state of bench_stuck.py --seed 4 (look-ahead only, matmul
# 64×64×32), reduced by its explanation to these eight decisions: m2 = n2
# (d2, d23) and m1 = n0 (d19, d27) are surely mapped. Seen one pair at a
# time, each n level could still find an m tuple, but in the descent's
# state (m0 at least 4) no m tuple agreed with some n tuples on both pairs
# at once (n = (16, 1, 4) needs m1 = 16 and m2 = 4, so m0 = 1); the person
# was left with size(d28) (n1) all of whose values failed, on five
# different grounds. Linked, the eighth decision is the dead end.
STUCK_LINKED = [
    ("order", ("d16", "d17"), "OUT"), ("order", ("d4", "d25"), "OUT"),
    ("thread_mapping", ("d13", "d26"), "NOT_THREADS"), ("thread_mapping", ("d2", "d23"), "MAPPED"),
    ("order", ("d8", "d28"), "AFTER"), ("thread_mapping", ("d19", "d27"), "MAPPED"),
    ("thread_mapping", ("d4", "d23"), "IN"), ("dim_map", ("d5", "d16"), "REGISTERS")]


def test_mapped_levels_of_two_logical_dimensions_agree_at_once():
    values = stuck_here_dead_end_there(_Unlinked.build, STUCK_LINKED, ("size", ("d28",)),
                                       match="strip products")
    assert "1" in values


def test_linked_tuples_by_hand():
    """m2 = n2 and m1 = n0 mapped, m0 = 4: m1·m2 = 16, so n0·n2 = 16 and
    n1 = 64 / 16 = 4; each pair apart leaves n1 every size."""
    kernel = wb.kernels.build_kernel("matmul", MATMUL)
    linked, apart = wb.Candidate.root(kernel), root_with(kernel, ThreadLevels.build,
                                                          _Unlinked.build)
    for name, objs, value in [("thread_mapping", ("d2", "d23"), "MAPPED"),
                              ("thread_mapping", ("d19", "d27"), "MAPPED"),
                              ("size", ("d24",), "4")]:
        linked, apart = linked.apply(name, objs, value), apart.apply(name, objs, value)
    assert linked.domain("size", ("d28",)) == {"4"}
    assert apart.domain("size", ("d28",)) == {"1", "2", "4", "8", "16"}


def test_linked_tuples_lose_no_solution():
    no_solution_lost(_Unlinked.build, STUCK_LINKED[:6], seed=4, at=10)
