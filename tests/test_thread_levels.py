"""The thread-levels propagator (workbench/space/thread_levels.py): its search
finds exactly the supports a brute force finds, and it removes no solution —
every fixed candidate reached without it replays with it to the same
domains, and with it domains are never larger than without it."""

from __future__ import annotations

import itertools
import random
from contextlib import contextmanager, nullcontext

import pytest
from helpers import stronger_along_random_paths, witnesses_replay
from hypothesis import given
from hypothesis import strategies as st

import workbench as wb
from workbench.kernels.linalg import SMALL_SIZES
from workbench.space.problem import Problem
from workbench.space.thread_levels import _MIRROR, EQ, GT, LT, _Search

VALUES = (1, 2, 4, 8, 16, 32)


def brute_supports(levels, most, rel, sizes, strips=None):
    """Supports by enumerating every labelling and every choice of one size
    per used level (independent of _Search's shortcuts); with strips, a
    choice counts only where every logical dimension keeps a tuple giving
    each of its dimensions the size of its level."""
    n = len(sizes)
    ok_rel = [[0] * n for _ in range(n)]
    ok_size = [0] * n
    found = False
    for lab in itertools.product(range(levels), repeat=n):
        if any(not rel[a][b] & (EQ if lab[a] == lab[b] else LT if lab[a] < lab[b] else GT)
               for a in range(n) for b in range(n) if a != b):
            continue
        used = sorted(set(lab))
        common = {lv: [k for k in range(len(VALUES))
                       if all(sizes[a] >> k & 1 for a in range(n) if lab[a] == lv)]
                  for lv in used}
        for pick in itertools.product(*(common[lv] for lv in used)):
            prod = 1
            for k in pick:
                prod *= VALUES[k]
            if prod > most:
                continue
            size_of = dict(zip(used, pick))
            if strips is not None and not strip_ok(strips, lab, size_of):
                continue
            found = True
            for a in range(n):
                ok_size[a] |= 1 << size_of[lab[a]]
                for b in range(n):
                    if a != b:
                        ok_rel[a][b] |= (EQ if lab[a] == lab[b] else
                                         LT if lab[a] < lab[b] else GT)
    return (ok_rel, ok_size) if found else (None, None)


def strip_ok(strips, lab, size_of) -> bool:
    links, tuples = strips
    for g, ts in enumerate(tuples):
        if not any(all(t[link[1]] == VALUES[size_of[lab[a]]]
                       for a, link in enumerate(links) if link is not None and link[0] == g)
                   for t in ts):
            return False
    return True


@st.composite
def problems(draw):
    n = draw(st.integers(1, 5))
    rel = [[7] * n for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            r = draw(st.integers(1, 7))
            rel[a][b], rel[b][a] = r, _MIRROR[r]
    sizes = [draw(st.integers(1, (1 << len(VALUES)) - 1)) for _ in range(n)]
    return draw(st.integers(1, 3)), draw(st.sampled_from([4, 32, 1024])), rel, sizes


@given(problems())
def test_search_supports_equal_brute_force(p):
    levels, most, rel, sizes = p
    want = brute_supports(levels, most, rel, sizes)
    got = _Search(levels, most, VALUES, [r[:] for r in rel], sizes[:]).supports()
    assert got == want


@st.composite
def strips(draw, n):
    """(links, tuples) as ThreadLevels._strips makes them: one or two
    logical dimensions, each with the tuples of the strip levels the
    dimensions hold (sizes from VALUES), each dimension linked or not."""
    groups = draw(st.integers(1, 2))
    width = [draw(st.integers(1, 2)) for _ in range(groups)]
    tuples = tuple(tuple(sorted(set(draw(st.lists(
        st.tuples(*[st.sampled_from(VALUES)] * w), min_size=0, max_size=6)))))
        for w in width)
    links = tuple(draw(st.one_of(st.none(), st.integers(0, groups - 1).flatmap(
        lambda g: st.tuples(st.just(g), st.integers(0, width[g] - 1))))) for _ in range(n))
    return links, tuples


@given(problems(), st.data())
def test_search_with_strips_supports_equal_brute_force(p, data):
    """The joint search (thread levels and strip tuples) against the
    enumeration of every labelling and every size per level."""
    levels, most, rel, sizes = p
    got_strips = data.draw(strips(len(sizes)))
    want = brute_supports(levels, most, rel, sizes, got_strips)
    got = _Search(levels, most, VALUES, [r[:] for r in rel], sizes[:], got_strips).supports()
    assert got == want


@contextmanager
def without_globals():
    """Roots (and the problems they extend to) built without the global
    propagators; a distinct `prune` keeps them out of the kernel's root cache."""
    Problem._globals = False
    try:
        yield lambda kernel: ()
    finally:
        Problem._globals = True


@pytest.mark.parametrize("name", ["matmul", "axpy"])
def test_no_solution_lost_and_domains_only_smaller(name):
    """Random-order descents without the propagator: each candidate met,
    replayed with it, has domains no larger; every fixed candidate reached
    replays with it to the same digest (it removes no solution)."""
    kernel = wb.kernels.build_kernel(name, SMALL_SIZES[name])
    with without_globals() as prune:
        plain_root = wb.Candidate.root(kernel, prune=prune)
    assert not plain_root.problem.lazy
    assert wb.Candidate.root(kernel).problem.lazy
    def replay(trail):
        return wb.Candidate.replay(kernel, trail)
    starts, _ = stronger_along_random_paths(plain_root, replay, random.Random(5))
    # 10 s a start: each finds its witness in well under a second alone, but
    # in the suite one start of axpy's once searched the whole default 60 s
    found = witnesses_replay([plain_root, *starts], replay, budget_s=10)
    assert found >= 2


# A stuck state met by a random-order descent on matmul 16×16×8 with the
# clauses alone (2026-11-24): after these decisions every value of
# order(d0, d9) dead-ended, and the explorer could only show a row of red
# buttons.
STUCK = [("size", ("d4",), "4"), ("order", ("d4", "d5"), "BEFORE"),
         ("thread_mapping", ("d4", "d10"), "IN"), ("thread_mapping", ("d2", "d22"), "IN"),
         ("size", ("d14",), "8"), ("thread_mapping", ("d0", "d8"), "IN"),
         ("order", ("d2", "d9"), "OUT")]


def test_a_stuck_state_of_the_clauses_is_a_dead_end_sooner():
    """The stuck state above was a dead end only for the thread levels, while
    its decisions were taken. Since a relation bears on both of its variables
    in a clause's union (eq. 4.4 prunes order(y, d) once x is surely in d),
    the clauses alone see it too, at the same decision as the thread levels:
    the sixth, thread_mapping(d0, d8) = IN, which a look-ahead shows red."""
    kernel = wb.kernels.build_kernel("matmul", SMALL_SIZES["matmul"])
    for alone in (True, False):
        with without_globals() if alone else nullcontext() as prune:
            c = wb.Candidate.root(kernel, prune=prune) if alone else wb.Candidate.root(kernel)
            for name, objs, value in STUCK[:5]:
                c = c.apply(name, objs, value)
            with pytest.raises(wb.DeadEnd):
                c.apply(*STUCK[5])


def test_joint_search_past_its_budget_falls_back(monkeypatch):
    """A joint search that runs out of nodes answers as the thread levels
    alone would, never with nothing (reading the strips must not prune less:
    a fuzzing review found axpy n=256 states where it had)."""
    from workbench.space import thread_levels as tl
    rel = ((7, 2), (4, 7))  # d0 outside d1
    sizes = (0b11, 0b110)
    strips = (((0, 0), (0, 1)), (((1, 2), (2, 2), (2, 4)),))
    plain = tl._supports(2, 1024, VALUES, rel, sizes)
    assert plain is not None

    def out_of_budget(self, lab, inter):
        raise tl._OutOfBudget
    monkeypatch.setattr(tl._Search, "_sizes_of", out_of_budget)
    tl._supports.cache_clear()
    tl._feasible.cache_clear()
    try:
        assert tl._supports(2, 1024, VALUES, rel, sizes, strips) == plain
        assert tl._feasible(2, 1024, VALUES, rel, sizes, strips) is True
    finally:
        tl._supports.cache_clear()
        tl._feasible.cache_clear()


def test_the_roots_pair_check_removes_only_dead_ends(monkeypatch):
    """At the picker's default axpy size (n = 2^20) the root offered 44
    thread mappings of two strips of n in distinct hardware dimensions,
    each a dead end at once: together they hold at most 1,024 · 4 of its
    points (`thread_levels.shave`). Without the pair check they are back,
    each a dead end; no other value goes; and random-order descents of the
    unshaved root replay on the shaved one with domains no larger, their
    implementations to the same digests."""
    import workbench.candidate as candidate
    kernel = wb.kernels.axpy(2 ** 20)
    shaved = wb.Candidate.root(kernel)
    with monkeypatch.context() as m:
        m.setattr(candidate, "shave", lambda problem, st: [])
        plain = wb.Candidate.root(kernel, prune=lambda kernel: ())  # out of the root cache
    kept = {(ch.name, ch.objects): set(ch.values) for ch in shaved.choices(include_fixed=True)}
    gone = []
    for ch in plain.choices():
        assert kept[(ch.name, ch.objects)] <= set(ch.values)
        gone += [(ch, v) for v in ch.values if v not in kept[(ch.name, ch.objects)]]
    assert len(gone) == 44 and {ch.name for ch, _ in gone} == {"thread_mapping"}
    for ch, v in gone:
        with pytest.raises(wb.DeadEnd):
            plain.apply(ch.name, ch.objects, v)

    def replay(trail):
        return wb.Candidate.replay(kernel, trail)
    starts, _ = stronger_along_random_paths(plain, replay, random.Random(2))
    assert witnesses_replay([plain, *starts], replay, budget_s=10) >= 2
