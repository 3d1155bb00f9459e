"""Laws of candidates, checked by hypothesis over random decision sequences:
domains only shrink, decisions commute, replay is exact, and every fixed
candidate satisfies the specification (independent checker)."""

from __future__ import annotations

import itertools
import random

import pytest
from gpu_cases import examples
from helpers import all_domains, all_fixed, random_order_fixed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toy_kernel import toy

import workbench as wb
from workbench.space.checker import Checker, check_candidate
from workbench.space.problem import KernelSets

LOOPS = wb.load_space("tests/spaces/loops.space")
SETTINGS = settings(max_examples=examples(60), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def roots():
    return [
        wb.Candidate.root(wb.kernels.random_basic_block(8, 0.25, seed=3)),
        wb.Candidate.root(toy(max_threads=4, max_unroll=4, min_total=5), LOOPS),
        wb.Candidate.root(toy(3, 1, 2, max_threads=8, max_unroll=6), LOOPS),
    ]


ROOTS = roots()


def random_path(data, root, max_len=30):
    """Decisions of a random descent drawn by hypothesis (may stop early)."""
    cand, path = root, [root]
    for _ in range(data.draw(st.integers(0, max_len))):
        if cand.is_fixed:
            break
        chs = cand.choices()
        ch = chs[data.draw(st.integers(0, len(chs) - 1))]
        v = ch.values[data.draw(st.integers(0, len(ch.values) - 1))]
        try:
            cand = cand.apply(ch.name, ch.objects, v)
        except wb.DeadEnd:
            break
        path.append(cand)
    return path


@pytest.mark.parametrize("root", ROOTS, ids=["basic_block", "toy", "toy3"])
@SETTINGS
@given(data=st.data())
def test_domains_only_shrink(root, data):
    path = random_path(data, root)
    for a, b in itertools.pairwise(path):
        da, db = all_domains(a), all_domains(b)
        for key, dom in da.items():
            assert db[key] <= dom, key
        for key, _dom in db.items():  # choices added by a lowering are new objects
            assert key in da or key[1] not in (k[1] for k in da)
        assert all(k in db for k in da)


@pytest.mark.parametrize("root", ROOTS, ids=["basic_block", "toy", "toy3"])
@SETTINGS
@given(data=st.data())
def test_decisions_commute(root, data):
    path = random_path(data, root)
    final = path[-1]
    trail = list(final.trail)
    perm = data.draw(st.permutations(trail))
    # A decision on an object that a lowering creates waits until it exists.
    other = root.decide_each(perm)[1][-1]
    assert other.digest() == final.digest()
    assert all_domains(other) == all_domains(final)
    # taken together (one fixpoint): the same domains
    together = root.decide_all(perm)
    assert together.digest() == final.digest() and set(together.trail) == set(trail)


@pytest.mark.parametrize("root", ROOTS, ids=["basic_block", "toy", "toy3"])
@SETTINGS
@given(data=st.data())
def test_replay_is_exact(root, data):
    final = random_path(data, root)[-1]
    again = wb.Candidate.replay(root.kernel, final.trail, root.space)
    assert again.digest() == final.digest()
    assert all_domains(again) == all_domains(final)
    if root.space.name == "basic_block.space":
        back = wb.Candidate.from_json(final.to_json())
        assert back.digest() == final.digest() and back.trail == final.trail


@pytest.mark.parametrize("root", ROOTS, ids=["basic_block", "toy", "toy3"])
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_fixed_candidates_satisfy_the_specification(root, seed):
    rng = random.Random(seed)
    try:
        final = random_order_fixed(root, rng)
    except wb.DeadEnd:
        return  # dead ends are allowed in the toy space; the basic block test forbids them
    assert check_candidate(final) == []


def test_basic_block_fixed_candidates_are_valid_schedules():
    """Independent of the space: the order of a fixed candidate is a total
    order that respects every dependence."""
    k = wb.kernels.random_basic_block(10, 0.3, seed=11)
    root = wb.Candidate.root(k)
    rng = random.Random(5)
    for _ in range(50):
        final = random_order_fixed(root, rng)
        order = k.schedule(final)
        pos = {n: i for i, n in enumerate(order)}
        for inst in k.instructions():
            for d in inst.deps:
                assert pos[d] < pos[inst.name]


def test_basic_block_random_descents_never_dead_end():
    """Thesis claim (§2.3.1): the propagators are strong enough that random
    descents never backtrack. 1000 descents on a 12-instruction block."""
    k = wb.kernels.random_basic_block(12, 0.25, seed=7)
    root = wb.Candidate.root(k)
    rng = random.Random(0)
    for _ in range(1000):
        random_order_fixed(root, rng)  # raises DeadEnd on failure


# ------------------------------------------------------------ brute force
def _visible_instances(space, sets):
    """(choice, objects, universe) of every visible enum/integer instance,
    enumerated without the engine's instantiation."""
    chk = Checker(space, sets, {})
    out = []
    for info in space.visible_choices():
        seen = set()
        for env, ids in chk.bindings(info.params, {"fun": sets.kernel}, {}, frozenset()):
            objs = tuple(ids[b.var] for b in info.params)
            if info.mirrored and objs[::-1] in seen:
                continue
            seen.add(objs)
            if info.kind == "enum":
                uni = info.values
            else:
                raw = info.universe(env)
                uni = tuple(str(x) for x in sorted({int(x) for x in raw}))
            out.append((info.name, objs, uni))
    return out


def brute_force(space, base_kernel):
    """All solutions by enumeration: assignments of every visible choice
    instance that the checker accepts, following triggers."""
    solutions = set()

    def kernel_for(fired):
        k = base_kernel.copy()
        sets = KernelSets(space, base_kernel)
        for index, objs in sorted(fired):
            g = space.triggers[index]
            env = {"fun": k}
            for b, i in zip(g.foralls, objs):
                env[b.var] = sets.objects[(space.root(b.set.name), i)]
            g.action(env)
        return k

    def rec(fired, fixed):
        kernel = kernel_for(fired)
        sets = KernelSets(space, kernel)
        inst = [x for x in _visible_instances(space, sets) if (x[0], x[1]) not in fixed]
        for combo in itertools.product(*(u for _, _, u in inst)):
            a = dict(fixed)
            a.update({(n, o): v for (n, o, _), v in zip(inst, combo)})
            chk = Checker(space, sets, a, fired)
            triggered = set()
            for t_index, t in enumerate(space.source.triggers):
                for env, ids in chk.bindings(t.foralls, {"fun": kernel}, {}, frozenset()):
                    if all(chk.holds(c, env, ids) for c in t.conditions):
                        triggered.add((t_index, tuple(ids[b.var] for b in t.foralls)))
            if not fired <= triggered:
                continue
            if triggered != fired:
                rec(frozenset(triggered), a)
                continue
            if not chk.check():
                solutions.add(frozenset(a.items()))

    rec(frozenset(), {})
    return solutions


@pytest.mark.parametrize("kernel", [
    toy(max_threads=4, max_unroll=4, min_total=5),
    toy(2, 1, 1, max_threads=2, max_unroll=2, min_total=3),
], ids=["toy", "tight"])
def test_engine_finds_exactly_the_brute_force_solutions(kernel):
    """Soundness and completeness on a space with every construct: the fixed
    candidates reachable by exhaustive search are exactly the assignments an
    enumeration accepts."""
    root = wb.Candidate.root(kernel, LOOPS)
    engine = {frozenset(c.assignment().items()) for c in all_fixed(root)}
    brute = brute_force(LOOPS, kernel)
    assert brute, "the test kernel should admit implementations"
    assert engine == brute


def test_brute_force_basic_block_matches_permutations():
    """On a basic block, implementations are the topological orders."""
    k = wb.kernels.random_basic_block(6, 0.3, seed=2)
    root = wb.Candidate.root(k)
    fixed = {tuple(k.schedule(c)) for c in all_fixed(root)}
    names = [i.name for i in k.instructions()]
    topo = set()
    for perm in itertools.permutations(names):
        pos = {n: i for i, n in enumerate(perm)}
        if all(pos[d] < pos[i.name] for i in k.instructions() for d in i.deps):
            topo.add(perm)
    assert fixed == topo
