"""Redundant clauses of gpu.space remove no solution: each is implied by the
rest of the space and only says it sooner. Checked against the space without
it: every candidate met by random-order descents
there, replayed in the real space, has domains no larger (or is a dead end
seen sooner); every fixed candidate found there (witnesses from several
starts) replays in the real space to the same fixed domains; and a known
example is strictly smaller with the clause (it is not vacuous)."""

from __future__ import annotations

import random

import pytest
from helpers import pruned_more, replayed, stronger_along_random_paths, witnesses_replay

import workbench as wb
from workbench.kernels.linalg import SMALL_SIZES
from workbench.space.space import Space, load_space

# the first comment line of each redundant clause's block (up to a blank line),
# and decisions after which the clause prunes more on matmul 16×16×8 (None:
# none known at this size)
REDUNDANT = {
    "vector producer": ("// Implied by the requirements of dim_map's values", None),
    # the mad's m dim inside its k loop: its value cannot reach st_c through memory
    "last value through memory": ("// Through memory, the store runs in the producer's dims",
                                  [("order", ("d10", "d16"), "IN")]),
    # an UNROLL consumer of a reduction's initialisation (which never goes
    # through memory): the init's dim is UNROLL or VECTOR too
    "one class of kinds per pair": ("// Unless through memory, both ends of a pair",
                                    [("dim_kind", ("d10",), "UNROLL")]),
    # at the root already: an instruction's own dimensions are nested, and
    # thread_mapping(d0, d1) offered MAPPED, which only dead-ended
    "nested never mapped": ("// Nested dimensions are never MAPPED", []),
    # at the root: the ends of the reduction's initialisation (never through
    # memory) offered IN, OUT and MAPPED values that only dead-ended
    "pairs map alike": ("// Unless a pair goes through memory, its ends are MAPPED", []),
    # at the root: st_c offered IN ld_a's k loops, ld_a's m loop OUT of st_c's
    "pairs' orders": ("// What the clause above implies through the orders of a pair", []),
}


def without(text: str, head: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return "\n".join(lines[:start] + lines[end:])


@pytest.mark.parametrize("clause", sorted(REDUNDANT))
def test_redundant_clause_removes_no_solution(clause):
    kernel = wb.kernels.build_kernel("matmul", SMALL_SIZES["matmul"])
    text = load_space("gpu").text
    head, example = REDUNDANT[clause]
    weak = Space.from_text(without(text, head), f"gpu without {clause}")
    weak_root = wb.Candidate.root(kernel, weak)

    def replay(trail):
        return wb.Candidate.replay(kernel, trail)
    if example is not None:
        c = weak_root
        for name, objects, value in example:
            c = c.apply(name, objects, value)
        assert pruned_more(c, replayed(replay, c.trail)) > 0, \
            "the clause pruned nothing more: vacuous"
    starts, _ = stronger_along_random_paths(weak_root, replay, random.Random(3))
    # three seeds from the root, then along the random paths
    found = witnesses_replay([weak_root] * 3 + starts, replay)
    assert found >= 3


@pytest.mark.parametrize("name,sizes", [
    ("axpy", None), ("matmul", None),
    # what the picker opens on (axpy: 44 dead thread mappings before the
    # root's pair check, thread_levels.shave)
    ("axpy", "picker"),
    pytest.param("matmul", "picker", marks=pytest.mark.audit),
    pytest.param("strided_matmul", None, marks=pytest.mark.audit),
    pytest.param("batched_matmul", None, marks=pytest.mark.audit),
    pytest.param("reuse_matmul", None, marks=pytest.mark.audit)])
def test_root_offers_no_value_that_only_dead_ends(name, sizes):
    """Every value the root offers has a live child (the redundant clauses
    above are what removed the last of them: 12–94 per kernel before)."""
    if sizes == "picker":
        from widgets.picker import KERNELS
        sizes = {k: default for k, (default, _) in KERNELS[name].items()}
    root = wb.Candidate.root(wb.kernels.build_kernel(name, sizes or SMALL_SIZES[name]))
    dead = []
    for ch in root.choices():
        for v in ch.values:
            try:
                root.apply(ch.name, ch.objects, v)
            except wb.DeadEnd as e:
                dead.append(f"{ch.name}({', '.join(ch.objects)}) = {v}: {e}")
    assert not dead, f"{len(dead)} values only dead-end, e.g. {dead[:3]}"
