"""The GPU linear-algebra decision space on the thesis kernels (gpu.space)."""

from __future__ import annotations

import math
import random

import pytest
from gpu_cases import SMALL, build, examples
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench as wb
from workbench.descent import descend, space_stats
from workbench.target import available_targets, load_target


@pytest.fixture(scope="module")
def matmul():
    return wb.Candidate.root(wb.kernels.matmul(m=256, n=256, k=32))


def dim(kernel, label):
    return next(d.name for d in kernel.dims() if d.label == label)


def test_public_contract(matmul):
    c = matmul
    names = {ch.name for ch in c.choices()}
    # mem_space opens only for temporary arrays (inputs are GLOBAL)
    assert {"dim_kind", "size", "order", "thread_mapping", "dim_map", "cache"} <= names
    ch = c.choices()[0]
    assert isinstance(ch.objects, tuple) and isinstance(ch.values, tuple)
    assert c.domain("dim_kind", ("d0",)) == {"LOOP", "BLOCK", "THREAD", "UNROLL"}
    c2 = c.apply("dim_kind", ("d0",), "THREAD")
    assert c.domain("dim_kind", ("d0",)) != c2.domain("dim_kind", ("d0",))
    assert c2.trail[-1].choice == "dim_kind" and not c2.is_fixed
    again = wb.Candidate.from_json(c2.to_json())
    assert again.digest() == c2.digest()
    with pytest.raises(wb.InvalidDecision):
        c.apply("dim_kind", ("d0",), "VECTOR")  # m0 is not the innermost strip
    with pytest.raises(wb.InvalidDecision):
        c.apply("no_such_choice", ("d0",), "LOOP")


def test_dependencies_and_pairs_at_root(matmul):
    k = matmul.kernel
    assert matmul.domain("order", ("ld_a", "mad")) == {"BEFORE"}
    assert matmul.domain("order", ("init", dim(k, "c_k0"))) == {"BEFORE"}
    assert matmul.domain("order", (dim(k, "c_k0"), "st_c")) == {"BEFORE"}
    assert matmul.domain("order", (dim(k, "a_m0"), dim(k, "c_m0"))) == {"BEFORE", "MERGED"}
    # an instruction is in its own dims; two own dims never fuse
    assert matmul.domain("order", ("mad", dim(k, "c_k1"))) == {"IN"}
    assert "MERGED" not in matmul.domain("order", (dim(k, "c_m0"), dim(k, "c_m1")))
    # reductions are neither parallel nor vectorised
    assert matmul.domain("dim_kind", (dim(k, "c_k1"),)) == {"LOOP", "UNROLL"}


def test_strip_mining_sizes_multiply_to_the_logical_size(matmul):
    k = matmul.kernel
    c = matmul.apply("size", (dim(k, "a_m1"),), "8").apply("size", (dim(k, "a_m2"),), "4")
    assert c.domain("size", (dim(k, "a_m0"),)) == {"8"}
    assert c.domain("size", (dim(k, "s_m1"),)) == {"8"}  # every nest tiles alike


def test_thread_limit_from_target(matmul):
    k = matmul.kernel
    c = matmul
    for label, size in (("c_m1", "32"), ("c_n1", "32")):
        c = c.apply("size", (dim(k, label),), size).apply("dim_kind", (dim(k, label),), "THREAD")
    # 32 x 32 = 1024 threads: a third thread dimension must have size 1
    _lo, hi = c.counter("threads_per_block")
    assert hi <= load_target("h200").max_threads_per_block
    # propagation keeps the counter's upper bound within the target; whether a
    # third class of 4 threads exists is only known once the quotient is (the
    # fixed candidates of test_drawn check the launch against the limit)


def test_lowering_adds_a_temporary_array(matmul):
    k = matmul.kernel
    a, cm = dim(k, "a_m0"), dim(k, "c_m0")
    c = matmul.apply("dim_map", (a, cm), "MEMORY")
    names = {i.name for i in c.kernel.instructions()}
    assert {"st_ld_a_mad", "ld_ld_a_mad"} <= names
    assert len(k.instructions()) == 5  # the root kernel is untouched
    # the whole communication goes through memory
    assert c.domain("dim_map", (dim(k, "a_k1"), dim(k, "c_k1"))) == {"MEMORY"}
    assert c.domain("mem_space", ("tmp_ld_a_mad",)) == {"GLOBAL", "SHARED"}
    assert c.domain("order", ("st_ld_a_mad", "ld_ld_a_mad")) == {"BEFORE"}
    shared = c.apply("mem_space", ("tmp_ld_a_mad",), "SHARED")
    assert shared.counter("shared_memory")[0] >= 1
    assert shared.domain("cache", ("ld_ld_a_mad",)) == {"NONE"}


def test_dead_end_names_the_constraint():
    root = wb.Candidate.root(build("matmul"))
    rng = random.Random(0)
    for _ in range(50):
        d = descend(root, rng)
        if d.dead_end is not None:
            text = str(d.dead_end)
            assert "gpu.space:" in text or "quotient" in text or "counter" in text
            return
    pytest.skip("no dead end in 50 descents")


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_kernel_builds_and_descends(name):
    root = wb.Candidate.root(build(name))
    assert root.open_count() > 10
    stats = space_stats(root, 2, 1)
    assert stats["descents"] == 2 and 0 <= stats["dead_end_probability"] <= 1


def test_builders_reject_bad_sizes():
    with pytest.raises(wb.WorkbenchError, match="size m"):
        wb.kernels.matmul(m=0, n=4, k=4)
    with pytest.raises(wb.WorkbenchError, match="size n"):
        wb.kernels.axpy(n=2.5)
    k = wb.kernels.axpy(n=3)  # an odd size leaves only "no strip-mining"
    assert [d.possible_sizes() for d in k.dims()[:3]] == [(3,), (1,), (1,)]


def test_targets_are_documented_data():
    assert {"h200", "kepler_k4000"} <= set(available_targets())
    for name in available_targets():
        t = load_target(name)
        assert set(t.limits) <= set(t.sources)
    with pytest.raises(wb.WorkbenchError, match="no target"):
        load_target("no_such_gpu")


def test_level_sizes_divide():
    ld = wb.kernels.matmul(m=256, n=256, k=32).logical_dims()[0]
    for s1 in ld.level_sizes(1):
        for s2 in ld.level_sizes(2):
            assert 256 % (s1 * s2) == 0 and 256 // (s1 * s2) in ld.level_sizes(0)
    assert math.prod((max(ld.level_sizes(1)), max(ld.level_sizes(2)))) == 128


AXPY = wb.Candidate.root(build("axpy"))
_CHOICES = AXPY.choices()


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, len(_CHOICES) - 1), st.integers(0, len(_CHOICES) - 1),
       st.integers(0, 3), st.integers(0, 3))
def test_decisions_commute_and_domains_shrink(i, j, vi, vj):
    a, b = _CHOICES[i], _CHOICES[j]
    if a.name == b.name and a.objects == b.objects:
        return
    da = (a.name, a.objects, a.values[vi % len(a.values)])
    db = (b.name, b.objects, b.values[vj % len(b.values)])
    try:
        ab = AXPY.apply(*da).apply(*db)
        ba = AXPY.apply(*db).apply(*da)
    except (wb.DeadEnd, wb.InvalidDecision):
        return
    assert ab.digest() == ba.digest()
    for ch in ab.choices(include_fixed=True):
        if (ch.name, ch.objects) in AXPY.problem.index:  # lowering may add choices
            assert set(ab.domain(ch.name, ch.objects)) <= set(AXPY.domain(ch.name, ch.objects))


def test_value_names_the_engine_reads_are_the_spaces(tmp_path):
    import re

    from workbench.space import DimKind, MemSpace, check_values, load_space
    from workbench.space.values import BASIC_BLOCK

    check_values(load_space("gpu"))
    check_values(load_space("basic_block"), BASIC_BLOCK)
    assert DimKind.UNROLL == "UNROLL" and str(MemSpace.SHARED) == "SHARED"
    assert {"UNROLL"} == {DimKind.UNROLL} and f"{DimKind.LOOP}" == "LOOP"
    renamed = tmp_path / "gpu_renamed.space"
    renamed.write_text(re.sub(r"\bSHARED\b", "SHMEM", load_space("gpu").text))
    space = load_space(str(renamed))  # compiles: only the engine's Python misses the name
    with pytest.raises(wb.SpaceError, match=r"choice 'mem_space' has no value SHARED"):
        check_values(space)
    with pytest.raises(wb.SpaceError, match="SHARED"):  # the model checks its space
        wb.bound(wb.Candidate.root(build("axpy"), space=space))


def _outcome(take):
    try:
        return take().digest()
    except wb.DeadEnd:
        return "dead end"
    except wb.NeverAppears:  # on objects no decision of the subset creates
        return "never appear"
    except wb.InvalidDecision:  # a value pruned by another decision
        return "dead end"


@pytest.mark.law
def test_decisions_taken_together_equal_one_by_one():
    """`decide_all` (one fixpoint for several decisions, what explanations
    check subsets with) ends where taking them one by one does — same
    domains, or both a dead end — on random subsets of random-order trails
    of matmul that lower communications."""
    root = wb.Candidate.root(build("matmul"))
    rng = random.Random(5)
    seen = set()
    for _ in range(examples(3)):
        cand = root
        while not cand.is_fixed:  # a person's order, stopping at a dead end
            ch = rng.choice(cand.choices())
            try:
                cand = cand.apply(ch.name, ch.objects, rng.choice(ch.values))
            except wb.DeadEnd:
                break
        trail = list(cand.trail)
        for _ in range(6):
            sub = [d for d in trail if rng.random() < 0.6]
            seq = _outcome(lambda sub=sub: root.decide_each(sub)[1][-1])
            assert _outcome(lambda sub=sub: root.decide_all(sub)) == seq
            seen.add(seq if seq in ("dead end", "never appear") else "live")
    assert "live" in seen
